//! Unit tests of the helpers and of the exports called from Rust.

use std::ffi::CStr;
use std::ptr;

use replystream::{BreakMode, ConfigOverrides, HumanDelay, ReasoningMode};

use super::*;

fn new_engine(channel: &str, opts: Option<&replystream_options>) -> *mut replystream_engine {
    let mut out = ptr::null_mut();
    let opts = opts.map_or(ptr::null(), |o| o as *const _);
    // SAFETY: valid pointers and lengths.
    let code = unsafe {
        replystream_engine_new(channel.as_ptr().cast(), channel.len(), opts, 7, &mut out)
    };
    assert_eq!(code, REPLYSTREAM_OK);
    assert!(!out.is_null());
    out
}

fn view(s: replystream_str) -> String {
    // SAFETY: views from the library point to `len` readable bytes.
    let bytes = unsafe { std::slice::from_raw_parts(s.ptr.cast::<u8>(), s.len) };
    // SAFETY: and to a NUL right after them.
    assert_eq!(unsafe { *s.ptr.add(s.len) }, 0);
    String::from_utf8(bytes.to_vec()).unwrap()
}

#[test]
fn every_code_has_a_distinct_static_message() {
    let mut seen = std::collections::HashSet::new();
    for (i, code) in ALL_RESULTS.into_iter().enumerate() {
        assert_eq!(code as u32, i as u32, "codes are dense and in order");
        // SAFETY: the library returns static C strings.
        let msg = unsafe { CStr::from_ptr(replystream_result_str(code as u32)) };
        assert!(!msg.is_empty());
        assert!(seen.insert(msg.to_owned()), "duplicate message {msg:?}");
    }
    for unknown in [13, 999, u32::MAX] {
        // SAFETY: as above.
        let msg = unsafe { CStr::from_ptr(replystream_result_str(unknown)) };
        assert_eq!(msg, c"unknown result code");
    }
}

#[test]
fn str_arg_rules() {
    // SAFETY: each pointer is valid for its length (or NULL).
    unsafe {
        assert_eq!(str_arg(ptr::null(), 0, "t"), Ok(None));
        assert_eq!(
            str_arg(ptr::null(), 3, "t").unwrap_err().0,
            REPLYSTREAM_NULL_POINTER
        );
        let bad = [b'a', 0xff, b'b'];
        let err = str_arg(bad.as_ptr().cast(), 3, "t").unwrap_err();
        assert_eq!(err.0, REPLYSTREAM_INVALID_UTF8);
        assert!(err.1.contains("offset 1"), "{}", err.1);
        let ok = "héllo";
        assert_eq!(str_arg(ok.as_ptr().cast(), ok.len(), "t"), Ok(Some(ok)));
        let big = str_arg(ok.as_ptr().cast(), usize::MAX, "t").unwrap_err();
        assert_eq!(big.0, REPLYSTREAM_INVALID_ARGUMENT);
    }
}

#[test]
fn options_map_to_overrides() {
    let zero = replystream_options_default();
    assert_eq!(overrides_from(&zero).unwrap(), ConfigOverrides::default());

    let opts = replystream_options {
        text_limit: 500,
        chunk_min: 10,
        chunk_max: 20,
        coalesce_idle_ms: REPLYSTREAM_NONE,
        delivery_timeout_ms: 3000,
        human_delay: replystream_human_delay::REPLYSTREAM_HUMAN_DELAY_CUSTOM as u32,
        human_delay_min_ms: 5,
        human_delay_max_ms: 9,
        break_mode: replystream_break_mode::REPLYSTREAM_BREAK_MESSAGE_END as u32,
        reasoning: replystream_reasoning::REPLYSTREAM_REASONING_STREAM as u32,
        block_streaming: replystream_toggle::REPLYSTREAM_TOGGLE_OFF as u32,
    };
    let o = overrides_from(&opts).unwrap();
    assert_eq!(o.text_limit, Some(500));
    assert_eq!((o.chunk_min, o.chunk_max), (Some(10), Some(20)));
    assert_eq!(o.coalesce_idle_ms, Some(0));
    assert_eq!(o.delivery_timeout_ms, Some(3000));
    assert_eq!(
        o.human_delay,
        Some(HumanDelay::Custom {
            min_ms: 5,
            max_ms: 9
        })
    );
    assert_eq!(o.break_mode, Some(BreakMode::MessageEnd));
    assert_eq!(o.reasoning, Some(ReasoningMode::Stream));
    assert_eq!(o.block_streaming, Some(false));

    for bad in [
        replystream_options {
            human_delay: 4,
            ..zero
        },
        replystream_options {
            break_mode: 3,
            ..zero
        },
        replystream_options {
            reasoning: 77,
            ..zero
        },
        replystream_options {
            block_streaming: u32::MAX,
            ..zero
        },
    ] {
        assert!(overrides_from(&bad).is_err());
    }
}

#[test]
fn new_rejects_bad_arguments() {
    let mut out = ptr::null_mut();
    // SAFETY: every pointer is NULL or valid for its length.
    unsafe {
        assert_eq!(
            replystream_engine_new(ptr::null(), 0, ptr::null(), 0, ptr::null_mut()),
            REPLYSTREAM_NULL_POINTER
        );
        assert_eq!(
            replystream_engine_new(ptr::null(), 4, ptr::null(), 0, &mut out),
            REPLYSTREAM_NULL_POINTER
        );
        assert!(out.is_null());
        let name = "myspace";
        assert_eq!(
            replystream_engine_new(name.as_ptr().cast(), name.len(), ptr::null(), 0, &mut out),
            REPLYSTREAM_UNKNOWN_CHANNEL
        );
        let mut detail = replystream_str::EMPTY;
        assert_eq!(replystream_new_error(&mut detail), REPLYSTREAM_OK);
        assert!(view(detail).contains("myspace"));

        let bad = [0xc3u8];
        assert_eq!(
            replystream_engine_new(bad.as_ptr().cast(), 1, ptr::null(), 0, &mut out),
            REPLYSTREAM_INVALID_UTF8
        );
        let opts = replystream_options {
            text_limit: 3,
            ..replystream_options::default()
        };
        assert_eq!(
            replystream_engine_new(ptr::null(), 0, &opts, 0, &mut out),
            REPLYSTREAM_INVALID_CONFIG
        );
        assert!(view(detail_of_new()).contains("limit"));
        let opts = replystream_options {
            reasoning: 9,
            ..replystream_options::default()
        };
        assert_eq!(
            replystream_engine_new(ptr::null(), 0, &opts, 0, &mut out),
            REPLYSTREAM_INVALID_CONFIG
        );
        assert!(out.is_null());
        // NULL channel means generic.
        assert_eq!(
            replystream_engine_new(ptr::null(), 0, ptr::null(), 0, &mut out),
            REPLYSTREAM_OK
        );
        assert!(view(detail_of_new()).is_empty());
        replystream_engine_free(out);
        replystream_engine_free(ptr::null_mut());
    }
}

fn detail_of_new() -> replystream_str {
    let mut detail = replystream_str::EMPTY;
    // SAFETY: `detail` is writable.
    assert_eq!(
        unsafe { replystream_new_error(&mut detail) },
        REPLYSTREAM_OK
    );
    detail
}

#[test]
fn a_panic_poisons_the_handle() {
    let engine = new_engine("discord", None);
    // SAFETY: `engine` is live and used by this thread only.
    unsafe {
        let prev = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        let code = with_engine(engine, |_| panic!("boom"));
        std::panic::set_hook(prev);
        assert_eq!(code, REPLYSTREAM_PANIC);
        assert_eq!(
            replystream_engine_push_text_delta(engine, c"hi".as_ptr(), 2, 0),
            REPLYSTREAM_POISONED
        );
        let mut action = replystream_action::NONE;
        assert_eq!(
            replystream_engine_poll_action(engine, &mut action),
            REPLYSTREAM_POISONED
        );
        assert_eq!(replystream_engine_next_deadline(engine), REPLYSTREAM_NONE);
        let mut detail = replystream_str::EMPTY;
        assert_eq!(
            replystream_engine_last_error(engine, &mut detail),
            REPLYSTREAM_OK
        );
        assert_eq!(view(detail), "panic: boom");
        replystream_engine_free(engine);
    }
}

#[test]
fn null_engine_everywhere() {
    let null = ptr::null_mut();
    let mut action = replystream_action::NONE;
    let mut s = replystream_str::EMPTY;
    // SAFETY: NULL handles are allowed.
    unsafe {
        assert_eq!(
            replystream_engine_push_message_start(null, 0),
            REPLYSTREAM_NULL_POINTER
        );
        assert_eq!(
            replystream_engine_push_text_delta(null, c"x".as_ptr(), 1, 0),
            REPLYSTREAM_NULL_POINTER
        );
        assert_eq!(
            replystream_engine_poll_action(null, &mut action),
            REPLYSTREAM_NULL_POINTER
        );
        assert_eq!(
            replystream_action_media(null, 0, &mut s),
            REPLYSTREAM_NULL_POINTER
        );
        assert_eq!(
            replystream_engine_last_error(null, &mut s),
            REPLYSTREAM_NULL_POINTER
        );
        assert_eq!(replystream_engine_next_deadline(null), REPLYSTREAM_NONE);
        assert!(!replystream_engine_is_done(null));
        assert_eq!(
            replystream_engine_set_seq(null, 1),
            REPLYSTREAM_NULL_POINTER
        );
    }
}

/// Drives a whole turn: text, finish, ack every send, fire timers, until IDLE.
#[test]
fn full_turn_from_rust() {
    let engine = new_engine("telegram", None);
    let text = "Hello there. This is a short reply.\n\nWith a second paragraph.";
    let mut now = 0u64;
    let mut sent = String::new();
    let mut idle = false;
    // SAFETY: `engine` is live; all pointers are valid for their lengths.
    unsafe {
        assert_eq!(
            replystream_engine_push_message_start(engine, now),
            REPLYSTREAM_OK
        );
        for piece in text.as_bytes().chunks(7) {
            now += 10;
            let code =
                replystream_engine_push_text_delta(engine, piece.as_ptr().cast(), piece.len(), now);
            // Chunks of 7 bytes are ASCII here, so every piece is valid UTF-8.
            assert_eq!(code, REPLYSTREAM_OK);
        }
        assert_eq!(
            replystream_engine_push_text_end(engine, ptr::null(), 0, now),
            REPLYSTREAM_OK
        );
        assert_eq!(
            replystream_engine_push_message_end(engine, ptr::null(), 0, now),
            REPLYSTREAM_OK
        );
        assert_eq!(replystream_engine_push_finish(engine, now), REPLYSTREAM_OK);
        for _ in 0..1000 {
            let mut action = replystream_action::NONE;
            let code = replystream_engine_poll_action(engine, &mut action);
            if code == REPLYSTREAM_DONE {
                if idle {
                    break;
                }
                let deadline = replystream_engine_next_deadline(engine);
                assert_ne!(deadline, REPLYSTREAM_NONE, "stuck before idle");
                now = now.max(deadline);
                assert_eq!(replystream_engine_push_timer(engine, now), REPLYSTREAM_OK);
                continue;
            }
            assert_eq!(code, REPLYSTREAM_OK);
            match action.kind {
                replystream_action_kind::REPLYSTREAM_ACTION_SEND => {
                    sent.push_str(&view(action.text));
                    sent.push('\n');
                    now += 5;
                    assert_eq!(
                        replystream_engine_push_delivered(
                            engine,
                            action.send_id,
                            c"m1".as_ptr(),
                            2,
                            now
                        ),
                        REPLYSTREAM_OK
                    );
                }
                replystream_action_kind::REPLYSTREAM_ACTION_IDLE => idle = true,
                _ => {}
            }
        }
        assert!(idle);
        assert!(replystream_engine_is_done(engine));
        assert!(sent.contains("Hello there."), "{sent}");
        assert!(sent.contains("second paragraph"), "{sent}");
        // Model events after the end are refused; an unknown ack too.
        assert_eq!(
            replystream_engine_push_text_delta(engine, c"late".as_ptr(), 4, now),
            REPLYSTREAM_TURN_ENDED
        );
        assert_eq!(
            replystream_engine_push_delivered(engine, 999, ptr::null(), 0, now),
            REPLYSTREAM_UNKNOWN_SEND
        );
        let mut detail = replystream_str::EMPTY;
        replystream_engine_last_error(engine, &mut detail);
        assert!(view(detail).contains("999"), "{}", view(detail));
        replystream_engine_free(engine);
    }
}
