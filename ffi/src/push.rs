//! Inputs: one export per input kind, each a one-line call of a generic push helper that
//! converts the arguments, keeps streamed text's UTF-8 carries, and pushes.

use std::ffi::c_char;

use replystream::{Engine, Error, Input, Payload, SendId, Time};

use crate::args::{ArgError, Utf8Carry, bytes_arg, media_arg, str_arg, streamed};
use crate::handle::{code_of, replystream_engine, with_engine};
use crate::result::replystream_result::{self, *};
use crate::types::{REPLYSTREAM_NONE, replystream_str};

/// A streamed text whose deltas may split a UTF-8 sequence.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stream {
    Answer,
    Thinking,
}

impl Stream {
    fn input_name(self) -> &'static str {
        match self {
            Stream::Answer => "text_delta",
            Stream::Thinking => "thinking_delta",
        }
    }

    fn carry(self, h: &mut replystream_engine) -> &mut Utf8Carry {
        match self {
            Stream::Answer => &mut h.answer_carry,
            Stream::Thinking => &mut h.thinking_carry,
        }
    }
}

/// What a push does to the streams' UTF-8 carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ends {
    /// Nothing (timers, acks, host payloads).
    Neither,
    /// Ends the answer text: a carry left there is an error.
    Answer,
    /// Ends the reasoning text: a carry left there is an error.
    Thinking,
    /// Ends both.
    Both,
    /// The stream broke off (fail, cancel): carries are dropped without an error.
    Abandon,
}

impl Ends {
    fn covers(self, stream: Stream) -> bool {
        match self {
            Ends::Neither | Ends::Abandon => false,
            Ends::Answer => stream == Stream::Answer,
            Ends::Thinking => stream == Stream::Thinking,
            Ends::Both => true,
        }
    }
}

/// Applies `ends` to the carries: refuses the push (dropping the carry) when it ends a stream
/// whose last delta stopped inside a UTF-8 sequence.
fn check_ends(h: &mut replystream_engine, ends: Ends, what: &str) -> Result<(), ArgError> {
    if ends == Ends::Abandon {
        h.answer_carry = Utf8Carry::default();
        h.thinking_carry = Utf8Carry::default();
        return Ok(());
    }
    for stream in [Stream::Answer, Stream::Thinking] {
        let carry = stream.carry(h);
        if ends.covers(stream) && !carry.is_empty() {
            let kept = carry.as_bytes().len();
            *carry = Utf8Carry::default();
            return Err(ArgError::new(
                REPLYSTREAM_INVALID_UTF8,
                format!(
                    "the last {} ended inside a UTF-8 sequence that was never completed \
                     ({kept} byte(s), now dropped); nothing was pushed: push {what} again",
                    stream.input_name()
                ),
            ));
        }
    }
    Ok(())
}

/// Pushes one input (with the pending sequence number, if any).
fn push_input(
    engine: &mut Engine,
    next_seq: &mut Option<u64>,
    input: Input<'_>,
    now_ms: u64,
) -> Result<(), Error> {
    let now = Time::from_millis(now_ms);
    // Undrained actions stay queued in the engine; the host reads them with poll_action.
    match next_seq.take() {
        Some(seq) => engine.push_seq(seq, input, now).map(drop),
        None => engine.push(input, now).map(drop),
    }
}

/// The generic push: applies `ends` to the carries, builds the input from the arguments
/// with `build` (an argument error refuses the push), then pushes it.
///
/// # Safety
/// `engine` is NULL or a live handle that no other call is using; whatever `build` reads is
/// valid during the call.
unsafe fn push_with<'a>(
    engine: *mut replystream_engine,
    now_ms: u64,
    ends: Ends,
    what: &str,
    build: impl FnOnce() -> Result<Input<'a>, ArgError>,
) -> replystream_result {
    // SAFETY: forwarded from the caller.
    unsafe {
        with_engine(engine, |h| {
            let input = match check_ends(h, ends, what).and_then(|()| build()) {
                Ok(input) => input,
                Err(error) => return h.refuse(error),
            };
            match push_input(&mut h.engine, &mut h.next_seq, input, now_ms) {
                Ok(()) => REPLYSTREAM_OK,
                Err(error) => {
                    h.set_error(&error);
                    code_of(&error)
                }
            }
        })
    }
}

/// A push of a streamed delta: the stream's carry is joined to the new bytes, an incomplete
/// sequence at the end becomes the new carry (kept only if the engine takes the push).
///
/// # Safety
/// As for [`push_with`]; `ptr` is NULL or points to `len` readable bytes.
unsafe fn push_streamed(
    engine: *mut replystream_engine,
    stream: Stream,
    ptr: *const c_char,
    len: usize,
    now_ms: u64,
) -> replystream_result {
    // SAFETY: forwarded from the caller.
    unsafe {
        with_engine(engine, |h| {
            let what = stream.input_name();
            let bytes = match bytes_arg(ptr, len, "text") {
                Ok(bytes) => bytes.unwrap_or_default(),
                Err(error) => return h.refuse(error),
            };
            let carry = *stream.carry(h);
            let (text, new_carry) = match streamed(carry, bytes, &mut h.scratch, what) {
                Ok(s) => (s.text, s.carry),
                Err(e) => {
                    if e.drop_carry {
                        *stream.carry(h) = Utf8Carry::default();
                    }
                    h.set_error(&e.error.detail);
                    return e.error.code;
                }
            };
            let input = match stream {
                Stream::Answer => Input::TextDelta(text),
                Stream::Thinking => Input::ThinkingDelta(text),
            };
            match push_input(&mut h.engine, &mut h.next_seq, input, now_ms) {
                Ok(()) => {
                    *stream.carry(h) = new_carry;
                    REPLYSTREAM_OK
                }
                Err(error) => {
                    h.set_error(&error);
                    code_of(&error)
                }
            }
        })
    }
}

/// Reads a text argument that must be present (NULL with length 0 is the empty text).
///
/// # Safety
/// `ptr` is NULL or points to `len` bytes readable for `'a`.
unsafe fn text<'a>(ptr: *const c_char, len: usize, what: &str) -> Result<&'a str, ArgError> {
    // SAFETY: forwarded from the caller.
    Ok(unsafe { str_arg(ptr, len, what) }?.unwrap_or(""))
}

/// Builds a host payload from a text and an array of media URLs.
///
/// # Safety
/// `text` is NULL or points to `text_len` readable bytes; `media` as for [`media_arg`].
unsafe fn payload(
    text: *const c_char,
    text_len: usize,
    media: *const replystream_str,
    media_count: usize,
) -> Result<Payload, ArgError> {
    // SAFETY: forwarded from the caller.
    let mut payload = Payload::text(unsafe { self::text(text, text_len, "text") }?);
    // SAFETY: forwarded from the caller.
    payload.media = unsafe { media_arg(media, media_count) }?;
    Ok(payload)
}

/// A push of a host payload (tool result, final reply): text plus media URLs, wrapped into
/// its input by `input`.
///
/// # Safety
/// As for [`push_with`] and [`payload`].
#[allow(clippy::too_many_arguments)]
unsafe fn push_payload(
    engine: *mut replystream_engine,
    what: &str,
    text: *const c_char,
    text_len: usize,
    media: *const replystream_str,
    media_count: usize,
    now_ms: u64,
    input: fn(Payload) -> Input<'static>,
) -> replystream_result {
    // SAFETY: forwarded from the caller.
    unsafe {
        push_with(engine, now_ms, Ends::Neither, what, || {
            Ok(input(payload(text, text_len, media, media_count)?))
        })
    }
}

// ---------------------------------------------------------------------------------------------
// The exports.

/// Sets the sequence number carried by the next push on this handle (only that one). A
/// repeated or older number makes the engine ignore that input (counted in its stats); a gap
/// is counted and processing continues. A push refused for its arguments keeps the number
/// for the next push.
///
/// # Safety
/// `engine` is NULL or a live handle not used by another call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_engine_set_seq(
    engine: *mut replystream_engine,
    seq: u64,
) -> replystream_result {
    // SAFETY: caller contract.
    unsafe {
        with_engine(engine, |h| {
            h.next_seq = Some(seq);
            REPLYSTREAM_OK
        })
    }
}

/// A new assistant message begins: per-message state resets; blocks of two messages are
/// never merged.
///
/// Every push function takes `now_ms`, the caller's monotonic clock in milliseconds (time that
/// goes backwards counts as the last time seen), and returns `REPLYSTREAM_OK` or an error
/// code, with `replystream_engine_last_error` telling why:
/// - `REPLYSTREAM_NULL_POINTER`: `engine` is NULL, or a text pointer is NULL with a non-zero
///   length;
/// - `REPLYSTREAM_INVALID_ARGUMENT`: a length above `PTRDIFF_MAX`, or (payload pushes) an
///   empty media URL;
/// - `REPLYSTREAM_INVALID_UTF8`: a text is not UTF-8 (see below);
/// - `REPLYSTREAM_TURN_ENDED`: a model event after the turn finished, failed or was
///   cancelled (acks, timers and cancel are always accepted);
/// - `REPLYSTREAM_UNKNOWN_SEND` (acks only), `REPLYSTREAM_POISONED`, `REPLYSTREAM_PANIC`.
///
/// On every error nothing was pushed. After a push, drain the actions with
/// `replystream_engine_poll_action`.
///
/// Text arguments are pointer + length in bytes, UTF-8, not NUL-terminated, and only read
/// during the call; NULL with length 0 is the empty text. Streamed pieces
/// (`replystream_engine_push_text_delta`, `_thinking_delta`) may end inside a character: the
/// incomplete sequence is kept and completed by the next delta of the same stream. A push
/// that ends that stream while a sequence is still incomplete (text_snapshot and text_end
/// for the answer, thinking_end for the reasoning, message_start, message_end, tool_start
/// and finish for both) is refused with `REPLYSTREAM_INVALID_UTF8` and the kept bytes are
/// dropped, so pushing it again succeeds; fail and cancel drop them without an error. Any
/// other invalid byte is `REPLYSTREAM_INVALID_UTF8`.
///
/// # Safety
/// `engine` is NULL or a live handle not used by another call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_engine_push_message_start(
    engine: *mut replystream_engine,
    now_ms: u64,
) -> replystream_result {
    // SAFETY: caller contract.
    unsafe {
        push_with(engine, now_ms, Ends::Both, "message_start", || {
            Ok(Input::MessageStart)
        })
    }
}

/// The next piece of assistant text (incremental). It may end inside a UTF-8 sequence (see
/// `replystream_engine_push_message_start`).
///
/// # Safety
/// `engine` is NULL or a live handle not used by another call; `text` is NULL or points to
/// `len` readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_engine_push_text_delta(
    engine: *mut replystream_engine,
    text: *const c_char,
    len: usize,
    now_ms: u64,
) -> replystream_result {
    // SAFETY: caller contract.
    unsafe { push_streamed(engine, Stream::Answer, text, len, now_ms) }
}

/// The whole assistant text so far (cumulative); the engine derives the new part.
///
/// # Safety
/// As for `replystream_engine_push_text_delta`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_engine_push_text_snapshot(
    engine: *mut replystream_engine,
    text: *const c_char,
    len: usize,
    now_ms: u64,
) -> replystream_result {
    // SAFETY: caller contract.
    unsafe {
        push_with(engine, now_ms, Ends::Answer, "text_snapshot", || {
            Ok(Input::TextSnapshot(self::text(text, len, "text")?))
        })
    }
}

/// A text content block ended. `text` may carry the block's full content as providers resend
/// it (what was already accepted is not sent twice); NULL means no content.
///
/// # Safety
/// As for `replystream_engine_push_text_delta`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_engine_push_text_end(
    engine: *mut replystream_engine,
    text: *const c_char,
    len: usize,
    now_ms: u64,
) -> replystream_result {
    // SAFETY: caller contract.
    unsafe {
        push_with(engine, now_ms, Ends::Answer, "text_end", || {
            Ok(Input::TextEnd(str_arg(text, len, "text")?))
        })
    }
}

/// Reasoning text delivered outside the answer (incremental). It may end inside a UTF-8
/// sequence, like a text delta.
///
/// # Safety
/// As for `replystream_engine_push_text_delta`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_engine_push_thinking_delta(
    engine: *mut replystream_engine,
    text: *const c_char,
    len: usize,
    now_ms: u64,
) -> replystream_result {
    // SAFETY: caller contract.
    unsafe { push_streamed(engine, Stream::Thinking, text, len, now_ms) }
}

/// The reasoning block ended.
///
/// # Safety
/// `engine` is NULL or a live handle not used by another call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_engine_push_thinking_end(
    engine: *mut replystream_engine,
    now_ms: u64,
) -> replystream_result {
    // SAFETY: caller contract.
    unsafe {
        push_with(engine, now_ms, Ends::Thinking, "thinking_end", || {
            Ok(Input::ThinkingEnd)
        })
    }
}

/// The model calls the tool `name`: everything buffered is flushed first, so text before the
/// tool arrives before the tool's output.
///
/// # Safety
/// As for `replystream_engine_push_text_delta` (`name`/`len` instead of `text`/`len`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_engine_push_tool_start(
    engine: *mut replystream_engine,
    name: *const c_char,
    len: usize,
    now_ms: u64,
) -> replystream_result {
    // SAFETY: caller contract.
    unsafe {
        push_with(engine, now_ms, Ends::Both, "tool_start", || {
            Ok(Input::ToolStart {
                name: text(name, len, "name")?,
            })
        })
    }
}

/// A tool summary to show the user (sent as a SEND of kind TOOL): `text` plus `media_count`
/// media URLs or paths (`media` NULL for none). Everything is copied. An empty URL is
/// `REPLYSTREAM_INVALID_ARGUMENT`; an empty payload sends nothing.
///
/// # Safety
/// `engine` is NULL or a live handle not used by another call; `text` is NULL or points to
/// `text_len` readable bytes; `media` is NULL or points to `media_count` readable views, each
/// NULL or pointing to its length of readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_engine_push_tool_result(
    engine: *mut replystream_engine,
    text: *const c_char,
    text_len: usize,
    media: *const replystream_str,
    media_count: usize,
    now_ms: u64,
) -> replystream_result {
    // SAFETY: caller contract.
    unsafe {
        push_payload(
            engine,
            "tool_result",
            text,
            text_len,
            media,
            media_count,
            now_ms,
            Input::ToolResult,
        )
    }
}

/// A media payload from the host or a tool: `media_count` URLs or local paths (at least one;
/// none, or an empty URL, is `REPLYSTREAM_INVALID_ARGUMENT`) and an optional caption `text`
/// (NULL for none; the buffered answer text becomes the caption when it fits). Copied.
///
/// # Safety
/// As for `replystream_engine_push_tool_result`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_engine_push_media(
    engine: *mut replystream_engine,
    text: *const c_char,
    text_len: usize,
    media: *const replystream_str,
    media_count: usize,
    now_ms: u64,
) -> replystream_result {
    // SAFETY: caller contract.
    unsafe {
        push_with(engine, now_ms, Ends::Neither, "media", || {
            if media_count == 0 {
                return Err(ArgError::new(
                    REPLYSTREAM_INVALID_ARGUMENT,
                    "a media push needs at least one URL (media_count is 0)",
                ));
            }
            Ok(Input::Media(payload(text, text_len, media, media_count)?))
        })
    }
}

/// The assistant message ended. `text` may carry the message's full content, like
/// `replystream_engine_push_text_end`; NULL means no content.
///
/// # Safety
/// As for `replystream_engine_push_text_delta`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_engine_push_message_end(
    engine: *mut replystream_engine,
    text: *const c_char,
    len: usize,
    now_ms: u64,
) -> replystream_result {
    // SAFETY: caller contract.
    unsafe {
        push_with(engine, now_ms, Ends::Both, "message_end", || {
            Ok(Input::MessageEnd(str_arg(text, len, "text")?))
        })
    }
}

/// The host's final reply payload (text plus `media_count` media URLs), as a gateway builds
/// it at the end of a run. At finish it is reconciled against what was streamed: text
/// already delivered is not sent again, media not yet sent is. Copied; an empty URL is
/// `REPLYSTREAM_INVALID_ARGUMENT`.
///
/// # Safety
/// As for `replystream_engine_push_tool_result`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_engine_push_final_reply(
    engine: *mut replystream_engine,
    text: *const c_char,
    text_len: usize,
    media: *const replystream_str,
    media_count: usize,
    now_ms: u64,
) -> replystream_result {
    // SAFETY: caller contract.
    unsafe {
        push_payload(
            engine,
            "final_reply",
            text,
            text_len,
            media,
            media_count,
            now_ms,
            Input::FinalReply,
        )
    }
}

/// The turn is complete: flush, reconcile, send the finals, then go idle (an IDLE action
/// once every send was answered or given up on after its delivery timeout).
///
/// # Safety
/// `engine` is NULL or a live handle not used by another call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_engine_push_finish(
    engine: *mut replystream_engine,
    now_ms: u64,
) -> replystream_result {
    // SAFETY: caller contract.
    unsafe { push_with(engine, now_ms, Ends::Both, "finish", || Ok(Input::Finish)) }
}

/// The model failed: what was produced is delivered, then a SEND with `is_error` carrying
/// `error` (the text shown to the user).
///
/// # Safety
/// As for `replystream_engine_push_text_delta` (`error`/`len` instead of `text`/`len`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_engine_push_fail(
    engine: *mut replystream_engine,
    error: *const c_char,
    len: usize,
    now_ms: u64,
) -> replystream_result {
    // SAFETY: caller contract.
    unsafe {
        push_with(engine, now_ms, Ends::Abandon, "fail", || {
            Ok(Input::Fail {
                error: text(error, len, "error")?,
            })
        })
    }
}

/// The user or host stops the turn: an ABORT action (reason CANCELLED) follows and nothing
/// more is sent. After the turn went idle, or a second time, it does nothing. Acks of sends
/// that were in flight are still accepted; an ack of a send never made is
/// `REPLYSTREAM_UNKNOWN_SEND`.
///
/// # Safety
/// `engine` is NULL or a live handle not used by another call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_engine_push_cancel(
    engine: *mut replystream_engine,
    now_ms: u64,
) -> replystream_result {
    // SAFETY: caller contract.
    unsafe {
        push_with(engine, now_ms, Ends::Abandon, "cancel", || {
            Ok(Input::Cancel)
        })
    }
}

/// A deadline armed earlier may have passed. Early or repeated timer pushes do nothing, so
/// it is always safe to call.
///
/// # Safety
/// `engine` is NULL or a live handle not used by another call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_engine_push_timer(
    engine: *mut replystream_engine,
    now_ms: u64,
) -> replystream_result {
    // SAFETY: caller contract.
    unsafe { push_with(engine, now_ms, Ends::Neither, "timer", || Ok(Input::Timer)) }
}

/// The host delivered the SEND `send_id`. `message_ref` is the platform's id of the message
/// (NULL for none); it is copied, and comes back as the `message_ref` of later EDIT and DELETE
/// sends for the same message key. An id the engine is not waiting for is
/// `REPLYSTREAM_UNKNOWN_SEND` (nothing changes).
///
/// # Safety
/// As for `replystream_engine_push_text_delta` (`message_ref`/`len` instead of `text`/`len`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_engine_push_delivered(
    engine: *mut replystream_engine,
    send_id: u64,
    message_ref: *const c_char,
    len: usize,
    now_ms: u64,
) -> replystream_result {
    // SAFETY: caller contract.
    unsafe {
        push_with(engine, now_ms, Ends::Neither, "delivered", || {
            Ok(Input::Delivered {
                send_id: SendId(send_id),
                message_ref: str_arg(message_ref, len, "message_ref")?,
            })
        })
    }
}

/// The SEND `send_id` failed. `retry_after_ms`: retry no earlier than this many ms from now
/// (a 429's retry-after), `REPLYSTREAM_NONE` for none. `permanent`: retrying will not help
/// (the failure is reported and the queue moves on). An id the engine is not waiting for is
/// `REPLYSTREAM_UNKNOWN_SEND`.
///
/// # Safety
/// `engine` is NULL or a live handle not used by another call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_engine_push_delivery_failed(
    engine: *mut replystream_engine,
    send_id: u64,
    retry_after_ms: u64,
    permanent: bool,
    now_ms: u64,
) -> replystream_result {
    let input = Input::DeliveryFailed {
        send_id: SendId(send_id),
        retry_after_ms: (retry_after_ms != REPLYSTREAM_NONE).then_some(retry_after_ms),
        permanent,
    };
    // SAFETY: caller contract.
    unsafe {
        push_with(engine, now_ms, Ends::Neither, "delivery_failed", || {
            Ok(input)
        })
    }
}
