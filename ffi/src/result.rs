//! Result codes with fixed numbers and static messages, and the library's version.

use std::ffi::{CStr, c_char};

/// What a call did. The numbers are fixed and will not change; new codes get new numbers.
///
/// Two codes are **statuses**, not errors: `REPLYSTREAM_OK` (0) and `REPLYSTREAM_DONE` (1,
/// only from `replystream_engine_poll_action`: the call worked and no action is pending).
/// Every other code is an error: the call changed nothing (unless its doc says otherwise)
/// and the handle's last error tells why. `replystream_result_is_error` tells them apart, and
/// `replystream_result_str` gives a static message for every code.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum replystream_result {
    /// Success.
    REPLYSTREAM_OK = 0,
    /// Status, not an error: `replystream_engine_poll_action` found no pending action.
    REPLYSTREAM_DONE = 1,
    /// A required pointer was NULL (a handle, an out-pointer, or a text pointer with a
    /// non-zero length).
    REPLYSTREAM_NULL_POINTER = 2,
    /// A text argument is not valid UTF-8. Nothing was pushed.
    REPLYSTREAM_INVALID_UTF8 = 3,
    /// The channel name is not one of the built-in profiles.
    REPLYSTREAM_UNKNOWN_CHANNEL = 4,
    /// A configuration value is out of range, contradicts another one, or is not one of the
    /// named constants. The detail names the field.
    REPLYSTREAM_INVALID_CONFIG = 5,
    /// An ack named a send the engine is not waiting for (never sent, already acknowledged,
    /// or from another engine). Nothing changed.
    REPLYSTREAM_UNKNOWN_SEND = 6,
    /// A model event arrived after the turn finished, failed or was cancelled. It was
    /// ignored; acks and timers are still accepted.
    REPLYSTREAM_TURN_ENDED = 7,
    /// An index is out of range (e.g. a media index not below `media_count`).
    REPLYSTREAM_OUT_OF_RANGE = 8,
    /// An argument is unusable: a length above `PTRDIFF_MAX`, an empty media URL, or a media
    /// push without any URL.
    REPLYSTREAM_INVALID_ARGUMENT = 9,
    /// The call panicked inside the library (a bug). The handle is now poisoned.
    REPLYSTREAM_PANIC = 10,
    /// The handle panicked in an earlier call; only `replystream_engine_free` and
    /// `replystream_engine_last_error` still work on it.
    REPLYSTREAM_POISONED = 11,
    /// Reserved for an engine error that has no more specific code; this version never
    /// returns it (every engine error it knows has its own code).
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
    pub fn message(self) -> &'static CStr {
        match self {
            REPLYSTREAM_OK => c"ok",
            REPLYSTREAM_DONE => c"done: no action pending (not an error)",
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

    /// Whether the code reports a failure (every code but OK and DONE).
    pub fn is_error(self) -> bool {
        !matches!(self, REPLYSTREAM_OK | REPLYSTREAM_DONE)
    }
}

/// A static, NUL-terminated message for a result code. Never NULL; unknown numbers get
/// "unknown result code". The string must not be freed.
#[unsafe(no_mangle)]
pub extern "C" fn replystream_result_str(result: u32) -> *const c_char {
    match replystream_result::from_u32(result) {
        Some(code) => code.message().as_ptr(),
        None => c"unknown result code".as_ptr(),
    }
}

/// True when `result` is an error: every code but `REPLYSTREAM_OK` and `REPLYSTREAM_DONE`,
/// unknown numbers included.
#[unsafe(no_mangle)]
pub extern "C" fn replystream_result_is_error(result: u32) -> bool {
    replystream_result::from_u32(result).is_none_or(replystream_result::is_error)
}

/// The library version, a static NUL-terminated string such as "0.1.0", the same as the
/// header's `REPLYSTREAM_VERSION` for a matching header. Must not be freed. Compare it with
/// the header's macros to detect a header/library mismatch at run time.
#[unsafe(no_mangle)]
pub extern "C" fn replystream_version() -> *const c_char {
    const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), "\0");
    VERSION.as_ptr().cast()
}
