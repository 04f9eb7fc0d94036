//! Unit tests of the helpers and of the exports called from Rust. The C tests
//! (`tests/c/*.c`) drive the same exports from C under sanitizers.

use std::ffi::CStr;
use std::ptr;

use replystream::{
    BreakMode, BreakPreference, ChunkMode, ConfigOverrides, Engine, HumanDelay, LengthMetric,
    PreviewMode, PreviewTransport, ReasoningMode,
};

use super::*;
use crate::args::{Utf8Carry, str_arg, streamed};
use crate::handle::{read_engine, with_engine};
use crate::options::overrides_of;
use crate::result::ALL_RESULTS;
use crate::result::replystream_result::*;

fn new_options() -> *mut replystream_options {
    let mut out = ptr::null_mut();
    // SAFETY: `out` is writable.
    assert_eq!(unsafe { replystream_options_new(&mut out) }, REPLYSTREAM_OK);
    out
}

fn new_engine(channel: &str, opts: *const replystream_options) -> *mut replystream_engine {
    let mut out = ptr::null_mut();
    // SAFETY: valid pointers and lengths.
    let code = unsafe {
        replystream_engine_new(channel.as_ptr().cast(), channel.len(), opts, 7, &mut out)
    };
    assert_eq!(code, REPLYSTREAM_OK, "{}", view(detail_of_new()));
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

fn detail_of_new() -> replystream_str {
    let mut detail = replystream_str::EMPTY;
    // SAFETY: `detail` is writable.
    assert_eq!(
        unsafe { replystream_new_error(&mut detail) },
        REPLYSTREAM_OK
    );
    detail
}

fn last_error(engine: *const replystream_engine) -> String {
    let mut detail = replystream_str::EMPTY;
    // SAFETY: `engine` is live; `detail` is writable.
    assert_eq!(
        unsafe { replystream_engine_last_error(engine, &mut detail) },
        REPLYSTREAM_OK
    );
    view(detail)
}

/// Runs `f` with panic messages silenced (the panics are expected), one test at a time so
/// that the process-wide hook is restored to what it was.
fn quietly<T>(f: impl FnOnce() -> T) -> T {
    static HOOK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _guard = HOOK.lock().unwrap_or_else(|e| e.into_inner());
    let prev = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let out = f();
    std::panic::set_hook(prev);
    out
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
        let error = !matches!(code, REPLYSTREAM_OK | REPLYSTREAM_DONE);
        assert_eq!(replystream_result_is_error(code as u32), error, "{code:?}");
    }
    for unknown in [13, 999, u32::MAX] {
        // SAFETY: as above.
        let msg = unsafe { CStr::from_ptr(replystream_result_str(unknown)) };
        assert_eq!(msg, c"unknown result code");
        assert!(replystream_result_is_error(unknown));
    }
}

#[test]
fn str_arg_rules() {
    // SAFETY: each pointer is valid for its length (or NULL).
    unsafe {
        assert_eq!(str_arg(ptr::null(), 0, "t"), Ok(None));
        assert_eq!(
            str_arg(ptr::null(), 3, "t").unwrap_err().code,
            REPLYSTREAM_NULL_POINTER
        );
        let bad = [b'a', 0xff, b'b'];
        let err = str_arg(bad.as_ptr().cast(), 3, "t").unwrap_err();
        assert_eq!(err.code, REPLYSTREAM_INVALID_UTF8);
        assert!(err.detail.contains("offset 1"), "{}", err.detail);
        let ok = "héllo";
        assert_eq!(str_arg(ok.as_ptr().cast(), ok.len(), "t"), Ok(Some(ok)));
        let big = str_arg(ok.as_ptr().cast(), usize::MAX, "t").unwrap_err();
        assert_eq!(big.code, REPLYSTREAM_INVALID_ARGUMENT);
    }
}

/// Feeds `pieces` through the carry logic; returns the text taken from each piece (or the
/// error's detail) and the carry left at the end.
fn stream(pieces: &[&[u8]]) -> (Vec<Result<String, String>>, Vec<u8>) {
    let mut carry = Utf8Carry::default();
    let mut scratch = Vec::new();
    let mut out = Vec::new();
    for piece in pieces {
        match streamed(carry, piece, &mut scratch, "text_delta") {
            Ok(s) => {
                out.push(Ok(s.text.to_owned()));
                carry = s.carry;
            }
            Err(e) => {
                assert_eq!(e.error.code, REPLYSTREAM_INVALID_UTF8);
                out.push(Err(e.error.detail));
                if e.drop_carry {
                    carry = Utf8Carry::default();
                }
            }
        }
    }
    (out, carry.as_bytes().to_vec())
}

#[test]
fn a_character_split_across_deltas_waits_for_its_end() {
    let e_acute = "é".as_bytes(); // c3 a9
    let (out, carry) = stream(&[b"caf\xc3", b"\xa9!"]);
    assert_eq!(out, [Ok("caf".into()), Ok("é!".into())]);
    assert!(carry.is_empty());
    assert_eq!(e_acute, b"\xc3\xa9");
    // A 4-byte emoji cut after every byte.
    let emoji = "🦀".as_bytes();
    let (out, carry) = stream(&[&emoji[..1], &emoji[1..2], &emoji[2..3], &emoji[3..]]);
    assert_eq!(
        out,
        [Ok("".into()), Ok("".into()), Ok("".into()), Ok("🦀".into())]
    );
    assert!(carry.is_empty());
    // An incomplete sequence at the end is kept.
    let (_, carry) = stream(&[b"ab\xe2\x82"]);
    assert_eq!(carry, b"\xe2\x82");
}

#[test]
fn invalid_bytes_stay_an_error() {
    // Invalid in the middle: refused, the carry untouched.
    let (out, carry) = stream(&[b"x\xc3", b"\xa9\xffy"]);
    assert_eq!(out[0], Ok("x".into()));
    assert!(out[1].as_ref().unwrap_err().contains("offset 1"), "{out:?}");
    assert_eq!(
        carry, b"\xc3",
        "the valid carry is kept for a corrected retry"
    );
    // A carry the next delta does not continue: refused and dropped.
    let (out, carry) = stream(&[b"x\xc3", b"A", b"A"]);
    assert!(out[1].as_ref().unwrap_err().contains("does not continue"));
    assert_eq!(out[2], Ok("A".into()));
    assert!(carry.is_empty());
    // Never valid bytes and surrogates.
    let (out, _) = stream(&[b"\xff", b"\xed\xa0\x80", b"\xc0\xaf"]);
    assert!(out.iter().all(Result::is_err), "{out:?}");
}

#[test]
fn every_setter_reaches_its_knob() {
    let o = new_options();
    let s = |text: &str| (text.as_ptr().cast(), text.len());
    // SAFETY: `o` is live; every text pointer is valid for its length.
    unsafe {
        assert_eq!(*overrides_of(&*o), ConfigOverrides::default());
        let ok = |code| assert_eq!(code, REPLYSTREAM_OK);
        ok(replystream_options_set_text_limit(o, 500));
        ok(replystream_options_set_metric(
            o,
            replystream_metric::REPLYSTREAM_METRIC_GRAPHEMES as u32,
        ));
        ok(replystream_options_set_preview_limit(o, 300));
        ok(replystream_options_set_max_lines(o, 0));
        ok(replystream_options_set_chunk_min(o, 10));
        ok(replystream_options_set_chunk_max(o, 20));
        ok(replystream_options_set_break_preference(
            o,
            replystream_break_preference::REPLYSTREAM_BREAK_SENTENCE as u32,
        ));
        ok(replystream_options_set_chunk_mode(
            o,
            replystream_chunk_mode::REPLYSTREAM_CHUNK_NEWLINE as u32,
        ));
        ok(replystream_options_set_break_mode(
            o,
            replystream_break_mode::REPLYSTREAM_BREAK_MESSAGE_END as u32,
        ));
        ok(replystream_options_set_block_streaming(o, false));
        ok(replystream_options_set_coalesce_min(o, 0));
        ok(replystream_options_set_coalesce_max(o, 900));
        ok(replystream_options_set_coalesce_idle_ms(o, 0));
        ok(replystream_options_set_human_delay(
            o,
            replystream_human_delay::REPLYSTREAM_HUMAN_DELAY_CUSTOM as u32,
            5,
            9,
        ));
        ok(replystream_options_set_delivery_timeout_ms(o, 3000));
        let (p, n) = s("[{model}]");
        ok(replystream_options_set_response_prefix(o, p, n));
        ok(replystream_options_set_prefix_every_message(o, true));
        let (p, n) = s("acme/large-1");
        ok(replystream_options_set_model(o, p, n));
        let (p, n) = s("acme");
        ok(replystream_options_set_provider(o, p, n));
        let (p, n) = s("high");
        ok(replystream_options_set_thinking_level(o, p, n));
        let (p, n) = s("Ada");
        ok(replystream_options_set_identity_name(o, p, n));
        ok(replystream_options_set_reasoning(
            o,
            replystream_reasoning::REPLYSTREAM_REASONING_STREAM as u32,
        ));
        ok(replystream_options_set_require_final_tag(o, true));
        ok(replystream_options_set_silent_token(o, ptr::null(), 0));
        let (p, n) = s("PING_OK");
        ok(replystream_options_set_heartbeat_token(o, p, n));
        ok(replystream_options_set_preview(
            o,
            replystream_preview_mode::REPLYSTREAM_PREVIEW_BLOCK as u32,
        ));
        ok(replystream_options_set_preview_throttle_ms(o, 700));
        let (p, n) = s("▌");
        ok(replystream_options_set_preview_cursor(o, p, n));
        ok(replystream_options_set_preview_min_initial_units(o, 12));
        ok(replystream_options_set_preview_block_min(o, 40));
        ok(replystream_options_set_preview_block_max(o, 90));
        ok(replystream_options_set_preview_transport(
            o,
            replystream_preview_transport::REPLYSTREAM_PREVIEW_TRANSPORT_DRAFT as u32,
        ));
        ok(replystream_options_set_preview_expandable_quote(o, true));
        let (p, n) = s("/srv/media/");
        ok(replystream_options_add_media_root(o, p, n));
        let (p, n) = s("C:/Bot Media");
        ok(replystream_options_add_media_root(o, p, n));
        ok(replystream_options_set_media_allow_http(o, false));

        let want = ConfigOverrides {
            text_limit: Some(500),
            metric: Some(LengthMetric::Graphemes),
            preview_limit: Some(300),
            max_lines: Some(None),
            chunk_min: Some(10),
            chunk_max: Some(20),
            break_preference: Some(BreakPreference::Sentence),
            chunk_mode: Some(ChunkMode::Newline),
            break_mode: Some(BreakMode::MessageEnd),
            block_streaming: Some(false),
            coalesce_min: Some(None),
            coalesce_max: Some(Some(900)),
            coalesce_idle_ms: Some(0),
            human_delay: Some(HumanDelay::Custom {
                min_ms: 5,
                max_ms: 9,
            }),
            delivery_timeout_ms: Some(3000),
            response_prefix: Some(Some("[{model}]".into())),
            prefix_every_message: Some(true),
            model: Some(Some("acme/large-1".into())),
            provider: Some(Some("acme".into())),
            thinking_level: Some(Some("high".into())),
            identity_name: Some(Some("Ada".into())),
            reasoning: Some(ReasoningMode::Stream),
            require_final_tag: Some(true),
            silent_token: Some(None),
            heartbeat_token: Some(Some("PING_OK".into())),
            preview: Some(PreviewMode::Block),
            preview_throttle_ms: Some(700),
            preview_cursor: Some(Some("▌".into())),
            preview_min_initial_units: Some(12),
            preview_block_min: Some(40),
            preview_block_max: Some(90),
            preview_transport: Some(PreviewTransport::Draft),
            preview_expandable_quote: Some(true),
            media_roots: Some(vec!["/srv/media/".into(), "C:/Bot Media".into()]),
            media_allow_http: Some(false),
            // Not settable through the C ABI yet.
            format: None,
            table_mode: None,
            allow_mass_mentions: None,
            caption_limit: None,
        };
        assert_eq!(*overrides_of(&*o), want);
        // The options make a working engine, which took every value.
        let engine = new_engine("discord", o);
        let config = (*engine).engine.config();
        assert_eq!(config.text_limit, 500);
        assert_eq!(config.max_lines, None, "0 removed Discord's line cap");
        assert_eq!(config.silent_token, None);
        assert_eq!(config.heartbeat_token.as_deref(), Some("PING_OK"));
        assert_eq!(config.preview, PreviewMode::Block);
        assert_eq!(config.preview_transport, PreviewTransport::Draft);
        assert!(config.preview_expandable_quote);
        assert_eq!(config.media.roots, ["/srv/media", "C:\\Bot Media"]);
        assert!(!config.media.allow_http);
        replystream_engine_free(engine);
        replystream_options_free(o);
    }
}

#[test]
fn setters_refuse_unknown_numbers_and_bad_text() {
    let o = new_options();
    let detail = |o| {
        let mut s = replystream_str::EMPTY;
        // SAFETY: `o` is live, `s` writable.
        assert_eq!(
            unsafe { replystream_options_last_error(o, &mut s) },
            REPLYSTREAM_OK
        );
        view(s)
    };
    // SAFETY: `o` is live; pointers valid for their lengths (or NULL).
    unsafe {
        let refused = |code, name: &str| {
            assert_eq!(code, REPLYSTREAM_INVALID_CONFIG, "{name}");
            assert!(detail(o).starts_with(name), "{}", detail(o));
        };
        refused(replystream_options_set_metric(o, 4), "metric");
        refused(
            replystream_options_set_break_preference(o, 3),
            "break_preference",
        );
        refused(replystream_options_set_chunk_mode(o, 2), "chunk_mode");
        refused(replystream_options_set_break_mode(o, 99), "break_mode");
        refused(replystream_options_set_reasoning(o, u32::MAX), "reasoning");
        refused(replystream_options_set_preview(o, 3), "preview");
        refused(
            replystream_options_set_human_delay(o, 3, 0, 0),
            "human_delay",
        );
        let bad = [0xffu8];
        assert_eq!(
            replystream_options_set_model(o, bad.as_ptr().cast(), 1),
            REPLYSTREAM_INVALID_UTF8
        );
        assert!(detail(o).contains("model"));
        assert_eq!(
            replystream_options_set_silent_token(o, ptr::null(), 2),
            REPLYSTREAM_NULL_POINTER
        );
        assert_eq!(replystream_options_set_text_limit(o, 100), REPLYSTREAM_OK);
        assert_eq!(detail(o), "", "a successful setter clears the detail");
        assert_eq!(
            replystream_options_set_text_limit(ptr::null_mut(), 100),
            REPLYSTREAM_NULL_POINTER
        );
        // Nothing refused was stored.
        assert_eq!(
            *overrides_of(&*o),
            ConfigOverrides {
                text_limit: Some(100),
                ..ConfigOverrides::default()
            }
        );
        replystream_options_free(o);
        replystream_options_free(ptr::null_mut());
        assert_eq!(
            replystream_options_new(ptr::null_mut()),
            REPLYSTREAM_NULL_POINTER
        );
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
        assert!(view(detail_of_new()).contains("myspace"));
        let bad = [0xc3u8];
        assert_eq!(
            replystream_engine_new(bad.as_ptr().cast(), 1, ptr::null(), 0, &mut out),
            REPLYSTREAM_INVALID_UTF8
        );
        assert_eq!(
            replystream_engine_new(name.as_ptr().cast(), usize::MAX, ptr::null(), 0, &mut out),
            REPLYSTREAM_INVALID_ARGUMENT
        );
        let o = new_options();
        replystream_options_set_text_limit(o, 3);
        assert_eq!(
            replystream_engine_new(ptr::null(), 0, o, 0, &mut out),
            REPLYSTREAM_INVALID_CONFIG
        );
        assert!(view(detail_of_new()).contains("text_limit"));
        assert!(out.is_null());
        replystream_options_free(o);
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

#[test]
fn a_panic_poisons_the_handle() {
    let engine = new_engine("discord", ptr::null());
    // SAFETY: `engine` is live and used by this thread only.
    unsafe {
        // A read-only call that panics reports it and leaves the handle usable.
        let (read, code) = quietly(|| {
            (
                read_engine(engine, |_| panic!("read boom")),
                with_engine(engine, |_| panic!("boom")),
            )
        });
        assert_eq!(read, REPLYSTREAM_PANIC);
        assert_eq!(code, REPLYSTREAM_PANIC);
        assert_eq!(
            replystream_engine_push_text_delta(engine, c"hi".as_ptr(), 2, 0),
            REPLYSTREAM_POISONED
        );
        let mut action: *const replystream_action = ptr::null();
        assert_eq!(
            replystream_engine_poll_action(engine, &mut action),
            REPLYSTREAM_POISONED
        );
        let mut deadline = 0;
        assert!(!replystream_engine_next_deadline(engine, &mut deadline));
        assert_eq!(deadline, REPLYSTREAM_NONE);
        assert!(!replystream_engine_is_done(engine));
        let mut stats = replystream_stats::default();
        assert_eq!(
            replystream_engine_stats(engine, &mut stats, size_of::<replystream_stats>()),
            REPLYSTREAM_POISONED
        );
        let mut outcome: *mut replystream_outcome = ptr::dangling_mut();
        assert_eq!(
            replystream_engine_outcome(engine, &mut outcome),
            REPLYSTREAM_POISONED
        );
        assert!(outcome.is_null());
        assert_eq!(last_error(engine), "panic: boom");
        replystream_engine_free(engine);
    }
}

#[test]
fn const_getters_are_safe_to_share() {
    fn sync<T: Sync>() {}
    // The getters on a `const` handle read the engine through `&Engine` only; documenting
    // them as callable from several threads at once needs `Engine: Sync`.
    sync::<Engine>();
    sync::<replystream::Config>();
}

#[test]
fn stats_write_only_the_callers_size() {
    let engine = new_engine("generic", ptr::null());
    // SAFETY: `engine` is live; `buf` has room for the sizes given.
    unsafe {
        assert_eq!(
            replystream_engine_push_delivered(engine, 5, ptr::null(), 0, 0),
            REPLYSTREAM_UNKNOWN_SEND
        );
        let mut buf = [0xaau8; 64];
        assert_eq!(
            replystream_engine_stats(engine, buf.as_mut_ptr().cast(), 40),
            REPLYSTREAM_OK
        );
        assert_eq!(u64::from_ne_bytes(buf[32..40].try_into().unwrap()), 1); // unknown_acks
        assert!(
            buf[40..].iter().all(|&b| b == 0xaa),
            "nothing past 40 bytes"
        );
        replystream_engine_free(engine);
    }
}

/// Drives a whole turn: text, finish, ack every send, fire timers, until IDLE.
#[test]
fn full_turn_from_rust() {
    let engine = new_engine("telegram", ptr::null());
    let text = "Hello there. This is a short reply.\n\nWith a second paragraph, café.";
    let mut now = 0u64;
    let mut sent = String::new();
    let mut idle = false;
    // SAFETY: `engine` is live; all pointers are valid for their lengths.
    unsafe {
        assert_eq!(
            replystream_engine_push_message_start(engine, now),
            REPLYSTREAM_OK
        );
        // Pieces of 5 bytes cut "é" in two: the first half waits for the second.
        for piece in text.as_bytes().chunks(5) {
            now += 10;
            let code =
                replystream_engine_push_text_delta(engine, piece.as_ptr().cast(), piece.len(), now);
            assert_eq!(code, REPLYSTREAM_OK, "{}", last_error(engine));
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
            let mut action: *const replystream_action = ptr::null();
            let code = replystream_engine_poll_action(engine, &mut action);
            let action = &*action;
            if code == REPLYSTREAM_DONE {
                assert_eq!(
                    action.kind,
                    replystream_action_kind::REPLYSTREAM_ACTION_NONE
                );
                if idle {
                    break;
                }
                let mut deadline = 0;
                assert!(
                    replystream_engine_next_deadline(engine, &mut deadline),
                    "stuck before idle"
                );
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
        assert!(sent.contains("second paragraph, café."), "{sent}");
        // Model events after the end are refused; an unknown ack too.
        assert_eq!(
            replystream_engine_push_text_delta(engine, c"late".as_ptr(), 4, now),
            REPLYSTREAM_TURN_ENDED
        );
        assert_eq!(
            replystream_engine_push_delivered(engine, 999, ptr::null(), 0, now),
            REPLYSTREAM_UNKNOWN_SEND
        );
        assert!(last_error(engine).contains("999"));
        replystream_engine_free(engine);
    }
}

#[test]
fn split_and_chunk_results_are_views() {
    let o = new_options();
    let text = "First paragraph here.\n\nSecond paragraph, a bit longer than the first.\n\n\
                ```\ncode line one\ncode line two\n```\n";
    // SAFETY: every pointer is valid for its length; results are freed once.
    unsafe {
        replystream_options_set_text_limit(o, 30);
        replystream_options_set_chunk_min(o, 10);
        replystream_options_set_chunk_max(o, 30);
        for chunk in [false, true] {
            let mut out = ptr::null_mut();
            let f = if chunk {
                replystream_chunk
            } else {
                replystream_split
            };
            let code = f(
                ptr::null(),
                0,
                o,
                text.as_ptr().cast(),
                text.len(),
                &mut out,
            );
            assert_eq!(code, REPLYSTREAM_OK, "{}", view(detail_of_new()));
            let n = replystream_blocks_count(out);
            assert!(n >= 3, "{n}");
            let mut rebuilt = String::new();
            for i in 0..n {
                let b = &*replystream_blocks_get(out, i);
                assert!(view(b.text).chars().count() <= 30);
                rebuilt.push_str(&text[b.source_start..b.source_end]);
                rebuilt.push_str(&view(b.sep));
            }
            assert_eq!(rebuilt.trim_end(), text.trim_end());
            assert!(replystream_blocks_get(out, n).is_null());
            assert_eq!((*out).block_texts().count(), n);
            replystream_blocks_free(out);
        }
        let mut out = ptr::null_mut();
        replystream_options_set_text_limit(o, 3);
        assert_eq!(
            replystream_split(ptr::null(), 0, o, c"x".as_ptr(), 1, &mut out),
            REPLYSTREAM_INVALID_CONFIG
        );
        assert!(out.is_null());
        assert_eq!(replystream_blocks_count(ptr::null()), 0);
        assert!(replystream_blocks_get(ptr::null(), 0).is_null());
        replystream_blocks_free(ptr::null_mut());
        replystream_options_free(o);
    }
}

#[test]
fn constructors_report_panics_and_poisoned_options() {
    let o = new_options();
    let (code, setter) = quietly(|| {
        (
            crate::handle::constructor(|| panic!("new boom")),
            // SAFETY: `o` is live and used by this thread only.
            unsafe { crate::options::update(o, |_| panic!("setter boom")) },
        )
    });
    assert_eq!(code, REPLYSTREAM_PANIC);
    assert_eq!(view(detail_of_new()), "panic: new boom");
    assert_eq!(setter, REPLYSTREAM_PANIC);
    let mut out = ptr::null_mut();
    let mut detail = replystream_str::EMPTY;
    // SAFETY: `o` is live; every pointer is valid.
    unsafe {
        assert_eq!(
            replystream_options_set_text_limit(o, 100),
            REPLYSTREAM_POISONED
        );
        assert_eq!(
            replystream_options_last_error(o, &mut detail),
            REPLYSTREAM_OK
        );
        assert_eq!(view(detail), "panic: setter boom");
        // Poisoned options make no engine and no text result.
        assert_eq!(
            replystream_engine_new(ptr::null(), 0, o, 0, &mut out),
            REPLYSTREAM_POISONED
        );
        assert!(out.is_null());
        assert!(view(detail_of_new()).contains("poisoned"));
        let mut blocks = ptr::null_mut();
        assert_eq!(
            replystream_split(ptr::null(), 0, o, c"x".as_ptr(), 1, &mut blocks),
            REPLYSTREAM_POISONED
        );
        replystream_options_free(o);
    }
}
