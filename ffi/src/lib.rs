//! The C ABI of replystream.
//!
//! One opaque handle per reply stream ([`replystream_engine`]), push functions for every input
//! kind, and a poll loop for the actions. The model is rustls-ffi: result codes with fixed
//! numbers and static messages, no callbacks, every export catches panics, and a handle that
//! panicked is poisoned. The header `include/replystream.h` is generated from this file by a
//! pinned cbindgen and committed; `tests/header.rs` checks it is current.
#![warn(missing_docs)]
// The exported names are C names.
#![allow(non_camel_case_types)]

mod convert;

use std::ffi::c_char;
use std::panic::{AssertUnwindSafe, catch_unwind};

use convert::{overrides_from, str_arg};

use replystream::{
    AbortReason, Action, ChannelProfile, Config, Engine, Error, Input, Lane, Payload, ReplyTarget,
    SendId, SendKind, SendOp, SendRequest, Time,
};

/// "No value" for the 64-bit arguments and fields that document it: no deadline, no
/// `retry_after`, or (in `replystream_options`) "off".
pub const REPLYSTREAM_NONE: u64 = u64::MAX;

/// What a call did. The numbers are fixed and will not change; new codes get new numbers.
/// `replystream_result_str` gives a static message for every code.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum replystream_result {
    /// Success.
    REPLYSTREAM_OK = 0,
    /// `replystream_engine_poll_action`: no action is pending. Not an error.
    REPLYSTREAM_DONE = 1,
    /// A required pointer was NULL (the engine, an out-pointer, or a text pointer with a
    /// non-zero length).
    REPLYSTREAM_NULL_POINTER = 2,
    /// A text argument is not valid UTF-8. Nothing was pushed.
    REPLYSTREAM_INVALID_UTF8 = 3,
    /// `replystream_engine_new`: the channel name is not one of the built-in profiles.
    REPLYSTREAM_UNKNOWN_CHANNEL = 4,
    /// `replystream_engine_new`: an option is out of range, contradicts another one, or holds
    /// an unknown enum value. The detail is in `replystream_new_error`.
    REPLYSTREAM_INVALID_CONFIG = 5,
    /// An ack named a send the engine is not waiting for (never sent, already acknowledged,
    /// or from another engine). Nothing changed.
    REPLYSTREAM_UNKNOWN_SEND = 6,
    /// A model event arrived after the turn finished, failed or was cancelled. It was
    /// ignored; acks and timers are still accepted.
    REPLYSTREAM_TURN_ENDED = 7,
    /// An index is out of range (e.g. a media index not below `media_count`, or no SEND was
    /// the last polled action).
    REPLYSTREAM_OUT_OF_RANGE = 8,
    /// A length argument is larger than any object can be (above `PTRDIFF_MAX`).
    REPLYSTREAM_INVALID_ARGUMENT = 9,
    /// The call panicked inside the library (a bug). The handle is now poisoned.
    REPLYSTREAM_PANIC = 10,
    /// The handle panicked in an earlier call; only `replystream_engine_free` and
    /// `replystream_engine_last_error` still work on it.
    REPLYSTREAM_POISONED = 11,
    /// Any other engine error (the detail is in `replystream_engine_last_error`).
    REPLYSTREAM_ERROR = 12,
}

use replystream_result::*;

/// Every result code, in numeric order.
pub(crate) const ALL_RESULTS: [replystream_result; 13] = [
    REPLYSTREAM_OK,
    REPLYSTREAM_DONE,
    REPLYSTREAM_NULL_POINTER,
    REPLYSTREAM_INVALID_UTF8,
    REPLYSTREAM_UNKNOWN_CHANNEL,
    REPLYSTREAM_INVALID_CONFIG,
    REPLYSTREAM_UNKNOWN_SEND,
    REPLYSTREAM_TURN_ENDED,
    REPLYSTREAM_OUT_OF_RANGE,
    REPLYSTREAM_INVALID_ARGUMENT,
    REPLYSTREAM_PANIC,
    REPLYSTREAM_POISONED,
    REPLYSTREAM_ERROR,
];

impl replystream_result {
    /// The static message for this code.
    pub fn message(self) -> &'static std::ffi::CStr {
        match self {
            REPLYSTREAM_OK => c"ok",
            REPLYSTREAM_DONE => c"done: no action pending",
            REPLYSTREAM_NULL_POINTER => c"a required pointer was NULL",
            REPLYSTREAM_INVALID_UTF8 => c"text is not valid UTF-8",
            REPLYSTREAM_UNKNOWN_CHANNEL => c"unknown channel name",
            REPLYSTREAM_INVALID_CONFIG => c"invalid configuration",
            REPLYSTREAM_UNKNOWN_SEND => c"ack for a send the engine is not waiting for",
            REPLYSTREAM_TURN_ENDED => c"model event after the turn ended",
            REPLYSTREAM_OUT_OF_RANGE => c"index out of range",
            REPLYSTREAM_INVALID_ARGUMENT => c"invalid argument",
            REPLYSTREAM_PANIC => c"internal panic (a bug); the handle is now poisoned",
            REPLYSTREAM_POISONED => c"the handle is poisoned by an earlier panic",
            REPLYSTREAM_ERROR => c"engine error",
        }
    }

    /// The code with this number, if there is one.
    pub fn from_u32(code: u32) -> Option<replystream_result> {
        ALL_RESULTS.into_iter().find(|r| *r as u32 == code)
    }
}

/// A read-only view of UTF-8 text owned by the library. Not NUL-terminated in general, but
/// `ptr[len]` is always a readable NUL byte, so `ptr` may also be used as a C string when the
/// text has no interior NUL. `ptr` is never NULL (an empty text points to a NUL byte).
/// Print with `printf("%.*s", (int)s.len, s.ptr)`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct replystream_str {
    /// The first byte.
    pub ptr: *const c_char,
    /// The length in bytes, without the trailing NUL.
    pub len: usize,
}

impl replystream_str {
    /// The empty text (a static NUL byte).
    pub const EMPTY: replystream_str = replystream_str {
        ptr: c"".as_ptr(),
        len: 0,
    };

    /// A view of `s`, whose last byte must be the NUL the view leaves out.
    fn of_nul_terminated(s: &str) -> replystream_str {
        debug_assert!(s.ends_with('\0'));
        replystream_str {
            ptr: s.as_ptr().cast(),
            len: s.len().saturating_sub(1),
        }
    }
}

/// What kind of action `replystream_engine_poll_action` returned.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum replystream_action_kind {
    /// No action (the call returned `REPLYSTREAM_DONE` or an error).
    REPLYSTREAM_ACTION_NONE = 0,
    /// Deliver a message, then ack it with `replystream_engine_push_delivered` or
    /// `replystream_engine_push_delivery_failed` and the same `send_id`.
    REPLYSTREAM_ACTION_SEND = 1,
    /// The earliest deadline changed: call `replystream_engine_push_timer` at (or after)
    /// `deadline_ms`. `deadline_ms == REPLYSTREAM_NONE` cancels the earlier request.
    REPLYSTREAM_ACTION_ARM_TIMER = 2,
    /// Streaming stopped, for `abort_reason`.
    REPLYSTREAM_ACTION_ABORT = 3,
    /// The turn finished and every send is acknowledged; emitted once.
    REPLYSTREAM_ACTION_IDLE = 4,
}

/// Which stream a send belongs to.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum replystream_send_kind {
    /// A tool summary.
    REPLYSTREAM_SEND_TOOL = 0,
    /// A block streamed while the model writes.
    REPLYSTREAM_SEND_BLOCK = 1,
    /// A final message, sent when the turn finishes.
    REPLYSTREAM_SEND_FINAL = 2,
    /// A live preview message (created, then edited in place), or a draft bubble.
    REPLYSTREAM_SEND_PREVIEW = 3,
}

/// What to do on the platform.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum replystream_send_op {
    /// Post a new message. A nonzero `message_key` names it for later edits and deletes:
    /// ack it with the platform's message id.
    REPLYSTREAM_OP_CREATE = 0,
    /// Edit the message created under `message_key`.
    REPLYSTREAM_OP_EDIT = 1,
    /// Delete the message created under `message_key`.
    REPLYSTREAM_OP_DELETE = 2,
    /// Show or update the ephemeral draft bubble `message_key` (nothing is posted).
    REPLYSTREAM_OP_DRAFT = 3,
}

/// Which visibility class a send belongs to.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum replystream_lane {
    /// The answer the user asked for.
    REPLYSTREAM_LANE_ANSWER = 0,
    /// The model's reasoning, shown separately.
    REPLYSTREAM_LANE_REASONING = 1,
    /// A status line such as a tool summary.
    REPLYSTREAM_LANE_STATUS = 2,
}

/// Which message a send replies to.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum replystream_reply_to {
    /// Not a reply.
    REPLYSTREAM_REPLY_NONE = 0,
    /// A reply to the user message this turn answers.
    REPLYSTREAM_REPLY_CURRENT = 1,
    /// A reply to the platform message whose id is `reply_to_id`.
    REPLYSTREAM_REPLY_ID = 2,
}

/// Why the engine stopped streaming.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum replystream_abort_reason {
    /// Not an abort.
    REPLYSTREAM_ABORT_NONE = 0,
    /// The host cancelled the turn (`replystream_engine_push_cancel`).
    REPLYSTREAM_ABORT_CANCELLED = 1,
    /// A send was not acknowledged within the delivery timeout: later block sends are
    /// skipped, and the undelivered text is sent as the final at finish.
    REPLYSTREAM_ABORT_DELIVERY_TIMEOUT = 2,
}

/// One action for the host, filled by `replystream_engine_poll_action`. Only the fields of
/// `kind` are meaningful; the others are zero (and views empty).
///
/// Lifetime: every `replystream_str` in it points into the handle and stays valid until the
/// next `replystream_engine_poll_action` or `replystream_engine_free` on that handle. Copy the
/// text out if you need it longer.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct replystream_action {
    /// One of `replystream_action_kind`.
    pub kind: replystream_action_kind,
    /// SEND: the id to echo in the ack.
    pub send_id: u64,
    /// SEND: one of `replystream_send_kind`.
    pub send_kind: replystream_send_kind,
    /// SEND: one of `replystream_send_op`.
    pub op: replystream_send_op,
    /// SEND with op EDIT or DELETE: the key of the message created earlier. The host maps
    /// keys to platform ids through the `message_ref` of `replystream_engine_push_delivered`.
    pub message_key: u32,
    /// SEND: the message text (may be empty when there is media).
    pub text: replystream_str,
    /// SEND: this message reports an error (the model failed).
    pub is_error: bool,
    /// SEND: audio in the media should be sent as a voice note.
    pub audio_as_voice: bool,
    /// SEND: one of `replystream_lane`.
    pub lane: replystream_lane,
    /// SEND: one of `replystream_reply_to`.
    pub reply_to: replystream_reply_to,
    /// SEND with reply_to ID: the platform message id (empty otherwise).
    pub reply_to_id: replystream_str,
    /// SEND: how many media URLs; read each with `replystream_action_media`.
    pub media_count: usize,
    /// ARM_TIMER: when to push a timer, in the caller's milliseconds; `REPLYSTREAM_NONE`
    /// cancels the earlier request.
    pub deadline_ms: u64,
    /// ABORT: one of `replystream_abort_reason`.
    pub abort_reason: replystream_abort_reason,
}

impl replystream_action {
    const NONE: replystream_action = replystream_action {
        kind: replystream_action_kind::REPLYSTREAM_ACTION_NONE,
        send_id: 0,
        send_kind: replystream_send_kind::REPLYSTREAM_SEND_TOOL,
        op: replystream_send_op::REPLYSTREAM_OP_CREATE,
        message_key: 0,
        text: replystream_str::EMPTY,
        is_error: false,
        audio_as_voice: false,
        lane: replystream_lane::REPLYSTREAM_LANE_ANSWER,
        reply_to: replystream_reply_to::REPLYSTREAM_REPLY_NONE,
        reply_to_id: replystream_str::EMPTY,
        media_count: 0,
        deadline_ms: 0,
        abort_reason: replystream_abort_reason::REPLYSTREAM_ABORT_NONE,
    };
}

/// Human delay between block sends, for `replystream_options.human_delay`.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum replystream_human_delay {
    /// The channel default (off).
    REPLYSTREAM_HUMAN_DELAY_DEFAULT = 0,
    /// No pause.
    REPLYSTREAM_HUMAN_DELAY_OFF = 1,
    /// A uniform random pause in [800, 2500] ms.
    REPLYSTREAM_HUMAN_DELAY_NATURAL = 2,
    /// A uniform random pause in [`human_delay_min_ms`, `human_delay_max_ms`] (exactly the
    /// minimum when max <= min); each bound at most 60000.
    REPLYSTREAM_HUMAN_DELAY_CUSTOM = 3,
}

/// When streamed blocks are emitted, for `replystream_options.break_mode`.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum replystream_break_mode {
    /// The channel default (text_end).
    REPLYSTREAM_BREAK_DEFAULT = 0,
    /// While streaming; each text end drains the chunker.
    REPLYSTREAM_BREAK_TEXT_END = 1,
    /// Nothing until the message ends, then everything.
    REPLYSTREAM_BREAK_MESSAGE_END = 2,
}

/// What happens to the model's reasoning, for `replystream_options.reasoning`.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum replystream_reasoning {
    /// The channel default (off).
    REPLYSTREAM_REASONING_DEFAULT = 0,
    /// Reasoning is dropped.
    REPLYSTREAM_REASONING_OFF = 1,
    /// At message end the reasoning is sent as its own block.
    REPLYSTREAM_REASONING_ON = 2,
    /// Reasoning is streamed as it grows, on the reasoning lane.
    REPLYSTREAM_REASONING_STREAM = 3,
}

/// An on/off option with a "channel default" value, for `replystream_options.block_streaming`.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum replystream_toggle {
    /// The channel default.
    REPLYSTREAM_TOGGLE_DEFAULT = 0,
    /// On.
    REPLYSTREAM_TOGGLE_ON = 1,
    /// Off.
    REPLYSTREAM_TOGGLE_OFF = 2,
}

/// Overrides of the channel profile's defaults for `replystream_engine_new`.
///
/// A zero-filled struct (`replystream_options o = {0};` or `replystream_options_default()`)
/// means "every value from the channel". Each field says what 0 and other special values mean.
/// Enum-valued fields are plain `uint32_t`s holding one of the named constants; an unknown
/// number is `REPLYSTREAM_INVALID_CONFIG`. Values are clamped and checked like the Rust
/// `Config::validate` does (e.g. a text limit below 16 is an error).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct replystream_options {
    /// The longest message text, in the channel's length unit. 0 = channel default.
    pub text_limit: usize,
    /// The chunker's minimum block length. 0 = default (800).
    pub chunk_min: usize,
    /// The chunker's maximum block length. 0 = default (1200).
    pub chunk_max: usize,
    /// The coalescer's idle time in ms. 0 = channel default (1000);
    /// `REPLYSTREAM_NONE` = no idle timer.
    pub coalesce_idle_ms: u64,
    /// How long a send may stay unacknowledged, in ms. 0 = default (15000);
    /// `REPLYSTREAM_NONE` = no timeout.
    pub delivery_timeout_ms: u64,
    /// With `REPLYSTREAM_HUMAN_DELAY_CUSTOM`: the shortest pause in ms.
    pub human_delay_min_ms: u64,
    /// With `REPLYSTREAM_HUMAN_DELAY_CUSTOM`: the longest pause in ms.
    pub human_delay_max_ms: u64,
    /// One of `replystream_human_delay`.
    pub human_delay: u32,
    /// One of `replystream_break_mode`.
    pub break_mode: u32,
    /// One of `replystream_reasoning`.
    pub reasoning: u32,
    /// One of `replystream_toggle`: send blocks while the model writes (on, the default), or
    /// deliver everything at finish as final messages (off).
    pub block_streaming: u32,
}

/// Counters of what an engine saw and did, filled by `replystream_engine_stats`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct replystream_stats {
    /// Sequence-number gaps seen (events missing in between).
    pub gaps: u64,
    /// Events ignored because their sequence number was repeated or older.
    pub duplicates_ignored: u64,
    /// Snapshots that diverged from the accepted text.
    pub divergences: u64,
    /// Host payloads (tool results, media) dropped as already sent or pending.
    pub payloads_deduped: u64,
    /// Acks naming a send the engine was not waiting for.
    pub unknown_acks: u64,
    /// Sends handed to the host (retries included).
    pub sends: u64,
    /// Sends confirmed delivered (late acks included).
    pub delivered: u64,
    /// Failure acks received.
    pub failures: u64,
    /// Sends retried after a failure.
    pub retries: u64,
    /// Sends that failed for good (permanent, or out of retries).
    pub dropped: u64,
    /// Sends whose delivery timed out.
    pub timeouts: u64,
    /// Block sends skipped after an abort (their text goes to the final).
    pub skipped_blocks: u64,
}

/// One reply stream. Opaque; create with `replystream_engine_new`, destroy with
/// `replystream_engine_free`.
///
/// Threads: a handle may be moved to another thread, but must not be used by two threads at
/// once (no call on it may overlap another call on it).
pub struct replystream_engine {
    engine: Engine,
    /// Set when a call panicked; every later call but free and last_error is refused.
    poisoned: bool,
    /// The last polled SEND, its strings NUL-terminated; views in the last action point here.
    last_send: Option<SendRequest>,
    /// The detail of the last failed call, NUL-terminated (empty: just "\0").
    last_error: String,
    /// The sequence number for the next push (`replystream_engine_set_seq`).
    next_seq: Option<u64>,
}

impl replystream_engine {
    fn set_error(&mut self, detail: impl std::fmt::Display) {
        use std::fmt::Write;
        self.last_error.clear();
        let _ = write!(self.last_error, "{detail}");
        self.last_error.retain(|c| c != '\0');
        self.last_error.push('\0');
    }

    fn clear_error(&mut self) {
        self.last_error.clear();
        self.last_error.push('\0');
    }
}

/// The code for an engine error.
fn code_of(error: &Error) -> replystream_result {
    match error {
        Error::InvalidConfig(_) => REPLYSTREAM_INVALID_CONFIG,
        Error::UnknownSend(_) => REPLYSTREAM_UNKNOWN_SEND,
        Error::TurnEnded(_) => REPLYSTREAM_TURN_ENDED,
        _ => REPLYSTREAM_ERROR,
    }
}

/// The text of a panic payload.
fn panic_text(payload: &(dyn std::any::Any + std::marker::Send)) -> &str {
    if let Some(s) = payload.downcast_ref::<&str>() {
        s
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s
    } else {
        "unknown panic"
    }
}

/// Runs `f` on the handle behind `engine`, catching panics: NULL is
/// `REPLYSTREAM_NULL_POINTER`, a poisoned handle `REPLYSTREAM_POISONED`, a panic poisons the
/// handle and gives `REPLYSTREAM_PANIC`.
///
/// # Safety
/// `engine` is NULL or a live handle from `replystream_engine_new` that no other call is
/// using.
unsafe fn with_engine(
    engine: *mut replystream_engine,
    f: impl FnOnce(&mut replystream_engine) -> replystream_result,
) -> replystream_result {
    // SAFETY: the caller guarantees `engine` is NULL or valid and not aliased.
    let Some(handle) = (unsafe { engine.as_mut() }) else {
        return REPLYSTREAM_NULL_POINTER;
    };
    if handle.poisoned {
        return REPLYSTREAM_POISONED;
    }
    match catch_unwind(AssertUnwindSafe(|| {
        handle.clear_error();
        f(&mut *handle)
    })) {
        Ok(code) => code,
        Err(payload) => {
            handle.poisoned = true;
            handle.last_send = None;
            let detail = format!("panic: {}", panic_text(&*payload));
            // Formatting the message could only panic on allocation failure, which aborts.
            handle.set_error(detail);
            REPLYSTREAM_PANIC
        }
    }
}

/// Pushes one input (with the pending sequence number, if any).
fn push_input(h: &mut replystream_engine, input: Input<'_>, now_ms: u64) -> replystream_result {
    let now = Time::from_millis(now_ms);
    let pushed = match h.next_seq.take() {
        Some(seq) => h.engine.push_seq(seq, input, now),
        None => h.engine.push(input, now),
    };
    match pushed {
        // Undrained actions stay queued in the engine; the host reads them with poll_action.
        Ok(_) => REPLYSTREAM_OK,
        Err(error) => {
            let code = code_of(&error);
            h.set_error(error);
            code
        }
    }
}

/// Converts a text argument and pushes the input built from it.
///
/// # Safety
/// `engine` as for [`with_engine`]; `ptr` is NULL or points to `len` readable bytes.
unsafe fn push_text<'a>(
    engine: *mut replystream_engine,
    ptr: *const c_char,
    len: usize,
    now_ms: u64,
    make: impl FnOnce(&'a str) -> Input<'a>,
) -> replystream_result {
    // SAFETY: forwarded from the caller.
    unsafe {
        with_engine(engine, |h| {
            // SAFETY: forwarded from the caller.
            match str_arg(ptr, len, "text") {
                Ok(Some(text)) => push_input(h, make(text), now_ms),
                Ok(None) => push_input(h, make(""), now_ms),
                Err((code, detail)) => {
                    h.set_error(detail);
                    code
                }
            }
        })
    }
}

/// Converts an optional text argument (NULL = none) and pushes the input built from it.
///
/// # Safety
/// As for [`push_text`].
unsafe fn push_optional_text<'a>(
    engine: *mut replystream_engine,
    ptr: *const c_char,
    len: usize,
    now_ms: u64,
    make: impl FnOnce(Option<&'a str>) -> Input<'a>,
) -> replystream_result {
    // SAFETY: forwarded from the caller.
    unsafe {
        with_engine(engine, |h| match str_arg(ptr, len, "text") {
            Ok(text) => push_input(h, make(text), now_ms),
            Err((code, detail)) => {
                h.set_error(detail);
                code
            }
        })
    }
}

/// Builds a payload from a text and an optional media URL and pushes the input made of it.
///
/// # Safety
/// As for [`push_text`], for both texts.
unsafe fn push_payload(
    engine: *mut replystream_engine,
    text: (*const c_char, usize),
    media: (*const c_char, usize),
    now_ms: u64,
    make: impl FnOnce(Payload) -> Input<'static>,
) -> replystream_result {
    // SAFETY: forwarded from the caller.
    unsafe {
        with_engine(engine, |h| {
            let text = match str_arg(text.0, text.1, "text") {
                Ok(t) => t.unwrap_or(""),
                Err((code, detail)) => {
                    h.set_error(detail);
                    return code;
                }
            };
            let media = match str_arg(media.0, media.1, "media_url") {
                Ok(m) => m,
                Err((code, detail)) => {
                    h.set_error(detail);
                    return code;
                }
            };
            let mut payload = Payload::text(text);
            payload.media.extend(media.map(str::to_owned));
            push_input(h, make(payload), now_ms)
        })
    }
}

/// Pushes an input that carries no text.
///
/// # Safety
/// As for [`with_engine`].
unsafe fn push_plain(
    engine: *mut replystream_engine,
    input: Input<'static>,
    now_ms: u64,
) -> replystream_result {
    // SAFETY: forwarded from the caller.
    unsafe { with_engine(engine, |h| push_input(h, input, now_ms)) }
}

// ---------------------------------------------------------------------------------------------
// Results, version, options

/// A static, NUL-terminated message for a result code. Never NULL; unknown numbers get
/// "unknown result code". The string must not be freed.
#[unsafe(no_mangle)]
pub extern "C" fn replystream_result_str(result: u32) -> *const c_char {
    match replystream_result::from_u32(result) {
        Some(code) => code.message().as_ptr(),
        None => c"unknown result code".as_ptr(),
    }
}

/// The library version, a static NUL-terminated string such as "0.1.0". Must not be freed.
#[unsafe(no_mangle)]
pub extern "C" fn replystream_version() -> *const c_char {
    const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), "\0");
    VERSION.as_ptr().cast()
}

/// Options that keep every channel default (all fields zero).
#[unsafe(no_mangle)]
pub extern "C" fn replystream_options_default() -> replystream_options {
    replystream_options::default()
}

// ---------------------------------------------------------------------------------------------
// Lifecycle

thread_local! {
    /// The detail of the last failed `replystream_engine_new` on this thread, NUL-terminated.
    static NEW_ERROR: std::cell::RefCell<String> = std::cell::RefCell::new(String::from("\0"));
}

fn set_new_error(detail: &str) {
    NEW_ERROR.with(|e| {
        let mut e = e.borrow_mut();
        e.clear();
        e.extend(detail.chars().filter(|&c| c != '\0'));
        e.push('\0');
    });
}

/// Creates an engine for one reply stream (one turn).
///
/// - `channel_ptr`/`channel_len`: the channel profile's name, UTF-8, case-insensitive:
///   `telegram`, `discord`, `slack`, `signal`, `whatsapp`, `imessage`, `googlechat`, `generic`.
///   NULL or empty means `generic`. Another name is `REPLYSTREAM_UNKNOWN_CHANNEL`.
/// - `opts`: overrides of the channel defaults, or NULL for none. Only read during the call.
/// - `seed`: seeds the engine's random numbers (human delay); the same inputs, times and seed
///   give the same actions.
/// - `out`: receives the new handle on `REPLYSTREAM_OK`, NULL otherwise.
///
/// Returns `REPLYSTREAM_OK`, `REPLYSTREAM_NULL_POINTER` (`out` NULL, or a NULL channel
/// pointer with a non-zero length), `REPLYSTREAM_INVALID_UTF8`, `REPLYSTREAM_UNKNOWN_CHANNEL`
/// or `REPLYSTREAM_INVALID_CONFIG`. `replystream_new_error` then tells why.
///
/// The caller owns the handle and must release it with `replystream_engine_free` exactly once.
///
/// # Safety
/// `channel_ptr` is NULL or points to `channel_len` readable bytes; `opts` is NULL or points to
/// a `replystream_options`; `out` is NULL or points to writable storage for a pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_engine_new(
    channel_ptr: *const c_char,
    channel_len: usize,
    opts: *const replystream_options,
    seed: u64,
    out: *mut *mut replystream_engine,
) -> replystream_result {
    let result = catch_unwind(|| {
        set_new_error("");
        if out.is_null() {
            set_new_error("out is NULL");
            return REPLYSTREAM_NULL_POINTER;
        }
        // SAFETY: `out` is non-NULL and writable (caller contract).
        unsafe { out.write(std::ptr::null_mut()) };
        // SAFETY: caller contract for `channel_ptr`/`channel_len`.
        let channel = match unsafe { str_arg(channel_ptr, channel_len, "channel") } {
            Ok(name) => name.unwrap_or(""),
            Err((code, detail)) => {
                set_new_error(&detail);
                return code;
            }
        };
        let profile = if channel.trim().is_empty() {
            ChannelProfile::GENERIC
        } else {
            match ChannelProfile::by_name(channel) {
                Some(profile) => profile,
                None => {
                    set_new_error(&format!("unknown channel {channel:?}"));
                    return REPLYSTREAM_UNKNOWN_CHANNEL;
                }
            }
        };
        let mut config = Config::for_channel(&profile);
        // SAFETY: `opts` is NULL or points to a readable `replystream_options` (caller
        // contract); every bit pattern of its integer fields is a valid value.
        if let Some(opts) = unsafe { opts.as_ref() } {
            match overrides_from(opts) {
                Ok(overrides) => config.apply(&overrides),
                Err(detail) => {
                    set_new_error(&detail);
                    return REPLYSTREAM_INVALID_CONFIG;
                }
            }
        }
        match Engine::new(config, seed) {
            Ok(engine) => {
                let handle = Box::new(replystream_engine {
                    engine,
                    poisoned: false,
                    last_send: None,
                    last_error: String::from("\0"),
                    next_seq: None,
                });
                // SAFETY: checked non-NULL above.
                unsafe { out.write(Box::into_raw(handle)) };
                REPLYSTREAM_OK
            }
            Err(error) => {
                set_new_error(&error.to_string());
                code_of(&error)
            }
        }
    });
    result.unwrap_or_else(|payload| {
        let detail = format!("panic: {}", panic_text(&*payload));
        // Recording the detail cannot panic but for allocation failure, which aborts.
        let _ = catch_unwind(|| set_new_error(&detail));
        REPLYSTREAM_PANIC
    })
}

/// Why the last `replystream_engine_new` on this thread failed (empty after a success).
/// The view stays valid until the next `replystream_engine_new` on this thread.
///
/// # Safety
/// `out` is NULL or points to a writable `replystream_str`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_new_error(out: *mut replystream_str) -> replystream_result {
    if out.is_null() {
        return REPLYSTREAM_NULL_POINTER;
    }
    let view = catch_unwind(|| {
        NEW_ERROR.with(|e| replystream_str::of_nul_terminated(e.borrow().as_str()))
    })
    .unwrap_or(replystream_str::EMPTY);
    // SAFETY: `out` is non-NULL and writable (caller contract).
    unsafe { out.write(view) };
    REPLYSTREAM_OK
}

/// Destroys a handle and everything it owns (views from it become invalid). NULL is allowed
/// and does nothing. Works on a poisoned handle. Freeing a handle twice is undefined behaviour.
///
/// # Safety
/// `engine` is NULL or a handle from `replystream_engine_new` that was not freed yet and that
/// no other call is using.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_engine_free(engine: *mut replystream_engine) {
    if engine.is_null() {
        return;
    }
    // SAFETY: `engine` came from `Box::into_raw` in `replystream_engine_new` and is freed once
    // (caller contract). A panic in a destructor is swallowed: nothing may unwind into C.
    let _ = catch_unwind(|| drop(unsafe { Box::from_raw(engine) }));
}

// ---------------------------------------------------------------------------------------------
// Inputs

/// Sets the sequence number carried by the next push on this handle (only that one). A
/// repeated or older number makes the engine ignore that input (counted in its stats); a gap
/// is counted and processing continues.
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
/// code; `replystream_engine_last_error` gives the detail. After a push, drain the actions with
/// `replystream_engine_poll_action`. Text arguments are pointer + length in bytes, UTF-8, not
/// NUL-terminated, and only read during the call; NULL with length 0 is the empty text, NULL
/// with a non-zero length is `REPLYSTREAM_NULL_POINTER`, invalid UTF-8 is
/// `REPLYSTREAM_INVALID_UTF8` (and nothing is pushed).
///
/// # Safety
/// `engine` is NULL or a live handle not used by another call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_engine_push_message_start(
    engine: *mut replystream_engine,
    now_ms: u64,
) -> replystream_result {
    // SAFETY: caller contract.
    unsafe { push_plain(engine, Input::MessageStart, now_ms) }
}

/// The next piece of assistant text (incremental).
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
    unsafe { push_text(engine, text, len, now_ms, Input::TextDelta) }
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
    unsafe { push_text(engine, text, len, now_ms, Input::TextSnapshot) }
}

/// A text content block ended. `text` may carry the block's full content as providers resend
/// it (what was already accepted is not sent twice); NULL means no content (then `len` must
/// be 0).
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
    unsafe { push_optional_text(engine, text, len, now_ms, Input::TextEnd) }
}

/// Reasoning text delivered outside the answer.
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
    unsafe { push_text(engine, text, len, now_ms, Input::ThinkingDelta) }
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
    unsafe { push_plain(engine, Input::ThinkingEnd, now_ms) }
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
    unsafe { push_text(engine, name, len, now_ms, |name| Input::ToolStart { name }) }
}

/// A tool summary to show the user (sent as a SEND of kind TOOL): `text` plus at most one
/// media URL or path (`media_url` NULL for none). Both are copied.
///
/// # Safety
/// `engine` is NULL or a live handle not used by another call; each text pointer is NULL or
/// points to its length of readable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_engine_push_tool_result(
    engine: *mut replystream_engine,
    text: *const c_char,
    text_len: usize,
    media_url: *const c_char,
    media_len: usize,
    now_ms: u64,
) -> replystream_result {
    // SAFETY: caller contract.
    unsafe {
        push_payload(
            engine,
            (text, text_len),
            (media_url, media_len),
            now_ms,
            Input::ToolResult,
        )
    }
}

/// A media payload (one URL or local path) from the host or a tool. Copied.
///
/// # Safety
/// As for `replystream_engine_push_text_delta` (`url`/`len` instead of `text`/`len`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_engine_push_media(
    engine: *mut replystream_engine,
    url: *const c_char,
    len: usize,
    now_ms: u64,
) -> replystream_result {
    // SAFETY: caller contract.
    unsafe {
        with_engine(engine, |h| match str_arg(url, len, "url") {
            Ok(Some(url)) if !url.is_empty() => {
                let payload = Payload {
                    media: vec![url.to_owned()],
                    ..Payload::default()
                };
                push_input(h, Input::Media(payload), now_ms)
            }
            Ok(_) => {
                h.set_error("media url is empty");
                REPLYSTREAM_INVALID_ARGUMENT
            }
            Err((code, detail)) => {
                h.set_error(detail);
                code
            }
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
    unsafe { push_optional_text(engine, text, len, now_ms, Input::MessageEnd) }
}

/// The host's final reply payload (text plus at most one media URL, `media_url` NULL for
/// none), as a gateway builds it at the end of a run. At finish it is reconciled against what
/// was streamed: text already delivered is not sent again. Both are copied.
///
/// # Safety
/// As for `replystream_engine_push_tool_result`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_engine_push_final_reply(
    engine: *mut replystream_engine,
    text: *const c_char,
    text_len: usize,
    media_url: *const c_char,
    media_len: usize,
    now_ms: u64,
) -> replystream_result {
    // SAFETY: caller contract.
    unsafe {
        push_payload(
            engine,
            (text, text_len),
            (media_url, media_len),
            now_ms,
            Input::FinalReply,
        )
    }
}

/// The turn is complete: flush, reconcile, send the finals, then go idle (an IDLE action
/// once every send is acknowledged).
///
/// # Safety
/// `engine` is NULL or a live handle not used by another call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_engine_push_finish(
    engine: *mut replystream_engine,
    now_ms: u64,
) -> replystream_result {
    // SAFETY: caller contract.
    unsafe { push_plain(engine, Input::Finish, now_ms) }
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
    unsafe { push_text(engine, error, len, now_ms, |error| Input::Fail { error }) }
}

/// The user or host stops the turn: an ABORT action (reason CANCELLED) follows and nothing
/// more is sent.
///
/// # Safety
/// `engine` is NULL or a live handle not used by another call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_engine_push_cancel(
    engine: *mut replystream_engine,
    now_ms: u64,
) -> replystream_result {
    // SAFETY: caller contract.
    unsafe { push_plain(engine, Input::Cancel, now_ms) }
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
    unsafe { push_plain(engine, Input::Timer, now_ms) }
}

/// The host delivered the SEND `send_id`. `message_ref` is the platform's id of the message
/// (needed for later edits), NULL for none; it is copied. An id the engine is not waiting
/// for is `REPLYSTREAM_UNKNOWN_SEND` (nothing changes).
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
        push_optional_text(engine, message_ref, len, now_ms, |message_ref| {
            Input::Delivered {
                send_id: SendId(send_id),
                message_ref,
            }
        })
    }
}

/// The SEND `send_id` failed. `retry_after_ms`: retry no earlier than this many ms from now
/// (a 429's retry-after), `REPLYSTREAM_NONE` for none. `permanent`: retrying will not help
/// (the failure is reported and the queue moves on).
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
    unsafe { push_plain(engine, input, now_ms) }
}

// ---------------------------------------------------------------------------------------------
// Outputs

/// Fills the action struct for `action`, keeping a SEND's strings in the handle.
fn fill_action(h: &mut replystream_engine, action: Action) -> replystream_action {
    use replystream_action_kind::*;
    let mut out = replystream_action::NONE;
    match action {
        Action::Send(mut send) => {
            send.payload.text.push('\0');
            for url in &mut send.payload.media {
                url.push('\0');
            }
            if let Some(ReplyTarget::Id(id)) = &mut send.payload.reply_to {
                id.push('\0');
            }
            let send = h.last_send.insert(send);
            out.kind = REPLYSTREAM_ACTION_SEND;
            out.send_id = send.send_id.0;
            out.send_kind = match send.kind {
                SendKind::Tool => replystream_send_kind::REPLYSTREAM_SEND_TOOL,
                SendKind::Block => replystream_send_kind::REPLYSTREAM_SEND_BLOCK,
                SendKind::Final => replystream_send_kind::REPLYSTREAM_SEND_FINAL,
                SendKind::Preview | _ => replystream_send_kind::REPLYSTREAM_SEND_PREVIEW,
            };
            out.message_key = send.op.key().map_or(0, |k| k.0);
            out.op = match send.op {
                SendOp::Create { .. } => replystream_send_op::REPLYSTREAM_OP_CREATE,
                SendOp::Edit { .. } => replystream_send_op::REPLYSTREAM_OP_EDIT,
                SendOp::Delete { .. } => replystream_send_op::REPLYSTREAM_OP_DELETE,
                SendOp::Draft { .. } | _ => replystream_send_op::REPLYSTREAM_OP_DRAFT,
            };
            let payload = &send.payload;
            out.text = replystream_str::of_nul_terminated(&payload.text);
            out.is_error = payload.is_error;
            out.audio_as_voice = payload.audio_as_voice;
            out.lane = match payload.lane {
                Lane::Answer => replystream_lane::REPLYSTREAM_LANE_ANSWER,
                Lane::Reasoning => replystream_lane::REPLYSTREAM_LANE_REASONING,
                Lane::Status | _ => replystream_lane::REPLYSTREAM_LANE_STATUS,
            };
            (out.reply_to, out.reply_to_id) = match &payload.reply_to {
                None => (
                    replystream_reply_to::REPLYSTREAM_REPLY_NONE,
                    replystream_str::EMPTY,
                ),
                Some(ReplyTarget::Current) => (
                    replystream_reply_to::REPLYSTREAM_REPLY_CURRENT,
                    replystream_str::EMPTY,
                ),
                Some(ReplyTarget::Id(id)) => (
                    replystream_reply_to::REPLYSTREAM_REPLY_ID,
                    replystream_str::of_nul_terminated(id),
                ),
                Some(_) => (
                    replystream_reply_to::REPLYSTREAM_REPLY_NONE,
                    replystream_str::EMPTY,
                ),
            };
            out.media_count = payload.media.len();
        }
        Action::ArmTimer { deadline } => {
            out.kind = REPLYSTREAM_ACTION_ARM_TIMER;
            out.deadline_ms = deadline.map_or(u64::MAX, |d| d.as_millis());
        }
        Action::Abort { reason } => {
            out.kind = REPLYSTREAM_ACTION_ABORT;
            out.abort_reason = match reason {
                AbortReason::Cancelled => replystream_abort_reason::REPLYSTREAM_ABORT_CANCELLED,
                AbortReason::DeliveryTimeout | _ => {
                    replystream_abort_reason::REPLYSTREAM_ABORT_DELIVERY_TIMEOUT
                }
            };
        }
        Action::Idle => out.kind = REPLYSTREAM_ACTION_IDLE,
        // A variant this version of the C ABI does not know yet: reported as NONE.
        _ => {}
    }
    out
}

/// Takes the next pending action into `*out`. Returns `REPLYSTREAM_OK` with an action, or
/// `REPLYSTREAM_DONE` (with `out->kind == REPLYSTREAM_ACTION_NONE`) when none is pending. Call
/// it after every push until it returns DONE, and execute the actions in order.
///
/// Views in `*out` (text, reply_to_id, and the media from `replystream_action_media`) stay
/// valid until the next `replystream_engine_poll_action` or `replystream_engine_free` on this
/// handle; pushes do not invalidate them.
///
/// # Safety
/// `engine` is NULL or a live handle not used by another call; `out` is NULL or points to a
/// writable `replystream_action` (its old contents are not read).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_engine_poll_action(
    engine: *mut replystream_engine,
    out: *mut replystream_action,
) -> replystream_result {
    // SAFETY: caller contract.
    unsafe {
        with_engine(engine, |h| {
            if out.is_null() {
                h.set_error("out is NULL");
                return REPLYSTREAM_NULL_POINTER;
            }
            h.last_send = None;
            let (action, code) = match h.engine.poll_action() {
                Some(action) => (fill_action(h, action), REPLYSTREAM_OK),
                None => (replystream_action::NONE, REPLYSTREAM_DONE),
            };
            // SAFETY: `out` is non-NULL and writable (caller contract).
            out.write(action);
            code
        })
    }
}

/// The media URL number `index` (from 0) of the action last returned by
/// `replystream_engine_poll_action`, which must be a SEND; `index < media_count`. The view
/// has the same lifetime as the action's text. `REPLYSTREAM_OUT_OF_RANGE` otherwise.
///
/// # Safety
/// `engine` is NULL or a live handle not used by another call; `out` is NULL or points to a
/// writable `replystream_str`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_action_media(
    engine: *mut replystream_engine,
    index: usize,
    out: *mut replystream_str,
) -> replystream_result {
    // SAFETY: caller contract.
    unsafe {
        with_engine(engine, |h| {
            if out.is_null() {
                h.set_error("out is NULL");
                return REPLYSTREAM_NULL_POINTER;
            }
            let url = h
                .last_send
                .as_ref()
                .and_then(|s| s.payload.media.get(index));
            match url {
                Some(url) => {
                    // SAFETY: `out` is non-NULL and writable (caller contract).
                    out.write(replystream_str::of_nul_terminated(url));
                    REPLYSTREAM_OK
                }
                None => {
                    out.write(replystream_str::EMPTY);
                    h.set_error(format_args!("no media {index} in the last polled action"));
                    REPLYSTREAM_OUT_OF_RANGE
                }
            }
        })
    }
}

/// The earliest deadline the engine waits for, in the caller's milliseconds:
/// `REPLYSTREAM_NONE` (UINT64_MAX) when there is none, and for a NULL or poisoned handle.
/// Sleep until then (or until the next model event), then call `replystream_engine_push_timer`.
///
/// # Safety
/// `engine` is NULL or a live handle not used by another call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_engine_next_deadline(engine: *mut replystream_engine) -> u64 {
    let mut deadline = REPLYSTREAM_NONE;
    // SAFETY: caller contract.
    unsafe {
        with_engine(engine, |h| {
            deadline = h
                .engine
                .poll_timeout()
                .map_or(REPLYSTREAM_NONE, Time::as_millis);
            REPLYSTREAM_OK
        })
    };
    deadline
}

/// True when the turn is over (finished or failed and every send acknowledged, or
/// cancelled) and no action is pending. False for a NULL or poisoned handle.
///
/// # Safety
/// `engine` is NULL or a live handle not used by another call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_engine_is_done(engine: *mut replystream_engine) -> bool {
    let mut done = false;
    // SAFETY: caller contract.
    unsafe {
        with_engine(engine, |h| {
            done = h.engine.is_done();
            REPLYSTREAM_OK
        })
    };
    done
}

/// Copies the engine's counters into `*out`.
///
/// # Safety
/// `engine` is NULL or a live handle not used by another call; `out` is NULL or points to a
/// writable `replystream_stats`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_engine_stats(
    engine: *mut replystream_engine,
    out: *mut replystream_stats,
) -> replystream_result {
    // SAFETY: caller contract.
    unsafe {
        with_engine(engine, |h| {
            if out.is_null() {
                h.set_error("out is NULL");
                return REPLYSTREAM_NULL_POINTER;
            }
            let s = h.engine.stats();
            let d = s.dispatch;
            // SAFETY: `out` is non-NULL and writable (caller contract).
            out.write(replystream_stats {
                gaps: s.gaps,
                duplicates_ignored: s.duplicates_ignored,
                divergences: s.divergences,
                payloads_deduped: s.payloads_deduped,
                unknown_acks: s.unknown_acks,
                sends: d.sends,
                delivered: d.delivered,
                failures: d.failures,
                retries: d.retries,
                dropped: d.dropped,
                timeouts: d.timeouts,
                skipped_blocks: d.skipped_blocks,
            });
            REPLYSTREAM_OK
        })
    }
}

/// The detail of the last call on this handle that failed (empty if the last call
/// succeeded), e.g. "ack for unknown send #7". Works on a poisoned handle (it then tells the
/// panic). The view stays valid until the next call on this handle.
///
/// # Safety
/// `engine` is NULL or a live handle not used by another call; `out` is NULL or points to a
/// writable `replystream_str`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_engine_last_error(
    engine: *mut replystream_engine,
    out: *mut replystream_str,
) -> replystream_result {
    // SAFETY: caller contract.
    let Some(h) = (unsafe { engine.as_ref() }) else {
        return REPLYSTREAM_NULL_POINTER;
    };
    if out.is_null() {
        return REPLYSTREAM_NULL_POINTER;
    }
    // SAFETY: `out` is non-NULL and writable (caller contract).
    unsafe { out.write(replystream_str::of_nul_terminated(&h.last_error)) };
    REPLYSTREAM_OK
}

#[cfg(test)]
mod tests;
