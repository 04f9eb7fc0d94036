//! The numbered defects of issue 16 through the C ABI, called from Rust exactly as a C host
//! calls it (options handle, `replystream_engine_new`, pushes, the poll loop acking every
//! send; `replystream_split` for the splitter), judged with the tests' independent renderer:
//! the cases and expectations are the workspace's `tests/common/defects.rs`, shared with the
//! Rust API's and the CLI's tests. Ignored where today's code still shows the defect.
#![allow(unsafe_code)]

#[path = "../../tests/common/render_judge.rs"]
#[allow(dead_code)]
mod render_judge;

#[path = "../../tests/common/defects.rs"]
mod defects;

use std::ffi::c_char;

use defects::{Defect, Via, check, defect};
use replystream_ffi::replystream_action_kind::*;
use replystream_ffi::replystream_lane::*;
use replystream_ffi::replystream_result::*;
use replystream_ffi::*;

fn ptr(s: &str) -> *const c_char {
    s.as_ptr().cast()
}

/// The bytes of a view.
fn view(s: &replystream_str) -> String {
    // SAFETY: the library hands out valid UTF-8 views, live until the next call on the handle.
    let bytes = unsafe { std::slice::from_raw_parts(s.ptr.cast::<u8>(), s.len) };
    String::from_utf8(bytes.to_vec()).expect("UTF-8 view")
}

/// An options handle with the case's settings.
fn options(d: &Defect) -> *mut replystream_options {
    let mut opts = std::ptr::null_mut();
    // SAFETY: valid out-pointer and handle throughout; strings outlive the calls.
    unsafe {
        assert_eq!(replystream_options_new(&mut opts), REPLYSTREAM_OK);
        if let Some(limit) = d.limit {
            assert_eq!(
                replystream_options_set_text_limit(opts, limit),
                REPLYSTREAM_OK
            );
        }
        if let Some(cap) = d.max_lines {
            assert_eq!(replystream_options_set_max_lines(opts, cap), REPLYSTREAM_OK);
        }
        if let Some(p) = d.prefix {
            assert_eq!(
                replystream_options_set_response_prefix(opts, ptr(p), p.len()),
                REPLYSTREAM_OK
            );
        }
    }
    opts
}

/// Polls every pending action, acking each send at once; collects answer texts. Returns
/// whether the engine said idle.
///
/// # Safety
/// `engine` is a live handle.
unsafe fn drain(engine: *mut replystream_engine, now: u64, texts: &mut Vec<String>) -> bool {
    let mut idle = false;
    loop {
        let mut action: *const replystream_action = std::ptr::null();
        // SAFETY: caller contract; the action is read before the next call on the handle.
        let r = unsafe { replystream_engine_poll_action(engine, &mut action) };
        if r == REPLYSTREAM_DONE {
            return idle;
        }
        assert_eq!(r, REPLYSTREAM_OK);
        // SAFETY: OK means a valid action.
        let a = unsafe { &*action };
        match a.kind {
            REPLYSTREAM_ACTION_SEND => {
                // The judge reads Markdown: the Markdown each send was rendered from (on
                // Telegram, `text` is the HTML to post).
                if a.lane == REPLYSTREAM_LANE_ANSWER {
                    texts.push(view(&a.markdown));
                }
                let id = a.send_id;
                // SAFETY: live handle; the reference is "m".
                let r = unsafe { replystream_engine_push_delivered(engine, id, ptr("m"), 1, now) };
                assert_eq!(r, REPLYSTREAM_OK);
            }
            REPLYSTREAM_ACTION_IDLE => idle = true,
            _ => {}
        }
    }
}

/// The messages a C host shows for a case.
fn messages(d: &Defect) -> Vec<String> {
    let opts = options(d);
    let mut out = Vec::new();
    // SAFETY: handles are used while live and freed once; texts outlive the calls.
    unsafe {
        match d.via {
            Via::Engine => {
                let mut engine = std::ptr::null_mut();
                let r =
                    replystream_engine_new(ptr(d.channel), d.channel.len(), opts, 7, &mut engine);
                assert_eq!(r, REPLYSTREAM_OK);
                let mut now = 0;
                assert_eq!(
                    replystream_engine_push_message_start(engine, now),
                    REPLYSTREAM_OK
                );
                drain(engine, now, &mut out);
                let r = replystream_engine_push_text_delta(engine, ptr(&d.text), d.text.len(), now);
                assert_eq!(r, REPLYSTREAM_OK);
                drain(engine, now, &mut out);
                let r = replystream_engine_push_message_end(engine, std::ptr::null(), 0, now);
                assert_eq!(r, REPLYSTREAM_OK);
                drain(engine, now, &mut out);
                assert_eq!(replystream_engine_push_finish(engine, now), REPLYSTREAM_OK);
                let mut idle = drain(engine, now, &mut out);
                while !idle {
                    let mut deadline = 0;
                    assert!(
                        replystream_engine_next_deadline(engine, &mut deadline),
                        "stuck"
                    );
                    now = now.max(deadline);
                    assert_eq!(replystream_engine_push_timer(engine, now), REPLYSTREAM_OK);
                    idle = drain(engine, now, &mut out);
                }
                replystream_engine_free(engine);
            }
            Via::Splitter => {
                let mut blocks = std::ptr::null_mut();
                let r = replystream_split(
                    ptr(d.channel),
                    d.channel.len(),
                    opts,
                    ptr(&d.text),
                    d.text.len(),
                    &mut blocks,
                );
                assert_eq!(r, REPLYSTREAM_OK);
                for i in 0..replystream_blocks_count(blocks) {
                    out.push(view(&(*replystream_blocks_get(blocks, i)).text));
                }
                replystream_blocks_free(blocks);
            }
        }
        replystream_options_free(opts);
    }
    out
}

fn holds(id: &str) {
    let d = defect(id);
    if let Err(e) = check(&d, &messages(&d)) {
        panic!("through the C ABI: {e}");
    }
}

/// The harness itself: a case that holds today (prose and a fence under a prefix) passes
/// through the same calls, so an ignored case fails for its defect, not for the harness.
#[test]
fn the_c_abi_harness_shows_what_the_engine_sends() {
    let d = Defect {
        id: "ok",
        today: "holds",
        via: Via::Engine,
        channel: "discord",
        limit: Some(120),
        max_lines: None,
        prefix: Some("[bot]"),
        text:
            "Sure, here it is.\n\n```python\nprint(1)\nprint(2)\n```\n\nThat prints **two** lines, \
               and the second paragraph is long enough to need its own message here."
                .to_owned(),
        sees: |m| {
            if m.len() >= 2 {
                Ok(())
            } else {
                Err(format!("{m:?}"))
            }
        },
    };
    let shown = messages(&d);
    check(&d, &shown).unwrap_or_else(|e| panic!("{e}"));
    assert!(shown[0].starts_with("[bot] Sure"), "{shown:?}");
}

defects::numbered_defect_tests!(holds);
