//! The engine handle, the panic boundary every export runs inside, the per-thread detail of
//! the last failed constructor, and the handle's lifecycle.

use std::any::Any;
use std::cell::RefCell;
use std::ffi::c_char;
use std::panic::{AssertUnwindSafe, catch_unwind};

use replystream::{Engine, Error, SendRequest};

use crate::args::{ArgError, Utf8Carry};
use crate::options::{config_from, replystream_options};
use crate::result::replystream_result::{self, *};
use crate::types::{replystream_action, replystream_entity, replystream_str};

/// One reply stream. Opaque; create with `replystream_engine_new`, destroy with
/// `replystream_engine_free`.
///
/// Threads: a handle may be moved to another thread. Functions taking a non-`const` handle
/// must not overlap any other call on it. Functions taking a `const` handle only read: they
/// may run at the same time as each other (on several threads), but not with a non-`const`
/// call on the same handle.
pub struct replystream_engine {
    pub(crate) engine: Engine,
    /// Set when a call panicked; every later call but free and last_error is refused.
    pub(crate) poisoned: bool,
    /// The last polled SEND, its strings NUL-terminated; the action's views point here.
    pub(crate) last_send: Option<SendRequest>,
    /// Views of `last_send`'s media URLs (the action's `media` array).
    pub(crate) media_views: Vec<replystream_str>,
    /// Views of `last_send`'s entities (the action's `entities` array).
    pub(crate) entity_views: Vec<replystream_entity>,
    /// The last polled action (what `replystream_engine_poll_action` hands out).
    pub(crate) action: replystream_action,
    /// The detail of the last failed call, NUL-terminated (empty: just "\0").
    pub(crate) last_error: String,
    /// The sequence number for the next push (`replystream_engine_set_seq`).
    pub(crate) next_seq: Option<u64>,
    /// An incomplete UTF-8 sequence at the end of the last text delta.
    pub(crate) answer_carry: Utf8Carry,
    /// An incomplete UTF-8 sequence at the end of the last thinking delta.
    pub(crate) thinking_carry: Utf8Carry,
    /// Joins a carry with the next delta (reused; only used while a carry is kept).
    pub(crate) scratch: Vec<u8>,
}

impl replystream_engine {
    fn new(engine: Engine) -> replystream_engine {
        replystream_engine {
            engine,
            poisoned: false,
            last_send: None,
            media_views: Vec::new(),
            entity_views: Vec::new(),
            action: replystream_action::NONE,
            last_error: String::from("\0"),
            next_seq: None,
            answer_carry: Utf8Carry::default(),
            thinking_carry: Utf8Carry::default(),
            scratch: Vec::new(),
        }
    }

    pub(crate) fn set_error(&mut self, detail: impl std::fmt::Display) {
        set_detail(&mut self.last_error, detail);
    }

    /// Records an argument error and returns its code.
    pub(crate) fn refuse(&mut self, error: ArgError) -> replystream_result {
        self.set_error(&error.detail);
        error.code
    }

    fn clear_error(&mut self) {
        self.last_error.clear();
        self.last_error.push('\0');
    }
}

/// Writes `detail` into `slot`, NUL-terminated, without interior NULs.
pub(crate) fn set_detail(slot: &mut String, detail: impl std::fmt::Display) {
    use std::fmt::Write;
    slot.clear();
    let _ = write!(slot, "{detail}");
    slot.retain(|c| c != '\0');
    slot.push('\0');
}

/// Frees a handle made with `Box::into_raw`; NULL does nothing. A panic in a destructor is
/// swallowed: nothing may unwind into C.
///
/// # Safety
/// `handle` is NULL or came from `Box::into_raw` and was not freed yet, and nothing else is
/// using it.
pub(crate) unsafe fn free_handle<T>(handle: *mut T) {
    if handle.is_null() {
        return;
    }
    // SAFETY: caller contract: freed once, not in use.
    let _ = catch_unwind(AssertUnwindSafe(|| drop(unsafe { Box::from_raw(handle) })));
}

/// Writes a view of a NUL-terminated detail (a handle's last error) to `out`:
/// `REPLYSTREAM_NULL_POINTER` when the handle or `out` is NULL.
///
/// # Safety
/// `out` is NULL or points to a writable `replystream_str`.
pub(crate) unsafe fn write_detail(
    detail: Option<&str>,
    out: *mut replystream_str,
) -> replystream_result {
    let Some(detail) = detail else {
        return REPLYSTREAM_NULL_POINTER;
    };
    if out.is_null() {
        return REPLYSTREAM_NULL_POINTER;
    }
    // SAFETY: `out` is non-NULL and writable (caller contract).
    unsafe { out.write(replystream_str::of_nul_terminated(detail)) };
    REPLYSTREAM_OK
}

/// The code for an engine error.
pub(crate) fn code_of(error: &Error) -> replystream_result {
    match error {
        Error::InvalidConfig(_) => REPLYSTREAM_INVALID_CONFIG,
        Error::UnknownSend(_) => REPLYSTREAM_UNKNOWN_SEND,
        Error::TurnEnded(_) => REPLYSTREAM_TURN_ENDED,
        _ => REPLYSTREAM_ERROR,
    }
}

/// The text of a panic payload.
pub(crate) fn panic_text(payload: &(dyn Any + std::marker::Send)) -> &str {
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
/// handle and gives `REPLYSTREAM_PANIC`. The last error is cleared first.
///
/// # Safety
/// `engine` is NULL or a live handle from `replystream_engine_new` that no other call is
/// using.
pub(crate) unsafe fn with_engine(
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
            handle.media_views = Vec::new();
            handle.entity_views = Vec::new();
            handle.action = replystream_action::NONE;
            let detail = format!("panic: {}", panic_text(&*payload));
            // Formatting the message could only panic on allocation failure, which aborts.
            handle.set_error(detail);
            REPLYSTREAM_PANIC
        }
    }
}

/// Runs a read-only `f` on the handle behind `engine`: NULL is `REPLYSTREAM_NULL_POINTER`, a
/// poisoned handle `REPLYSTREAM_POISONED`, a panic `REPLYSTREAM_PANIC`. Nothing is written:
/// not the last error, and a panic does not poison (a read cannot leave broken state).
///
/// # Safety
/// `engine` is NULL or a live handle that no non-`const` call is using.
pub(crate) unsafe fn read_engine(
    engine: *const replystream_engine,
    f: impl FnOnce(&replystream_engine) -> replystream_result,
) -> replystream_result {
    // SAFETY: the caller guarantees `engine` is NULL or valid and not being written.
    let Some(handle) = (unsafe { engine.as_ref() }) else {
        return REPLYSTREAM_NULL_POINTER;
    };
    if handle.poisoned {
        return REPLYSTREAM_POISONED;
    }
    catch_unwind(AssertUnwindSafe(|| f(handle))).unwrap_or(REPLYSTREAM_PANIC)
}

thread_local! {
    /// Why the last constructor (`replystream_engine_new`, `replystream_split`,
    /// `replystream_chunk`) on this thread failed, NUL-terminated.
    static NEW_ERROR: RefCell<String> = RefCell::new(String::from("\0"));
}

/// Records the detail of a failed constructor on this thread (empty: it succeeded).
pub(crate) fn set_new_error(detail: &str) {
    NEW_ERROR.with(|e| set_detail(&mut e.borrow_mut(), detail));
}

/// Runs a constructor body inside a panic boundary, recording its error detail for
/// `replystream_new_error`.
pub(crate) fn constructor(f: impl FnOnce() -> Result<(), ArgError>) -> replystream_result {
    let result = catch_unwind(AssertUnwindSafe(|| {
        set_new_error("");
        f()
    }));
    match result {
        Ok(Ok(())) => REPLYSTREAM_OK,
        Ok(Err(error)) => {
            // Recording cannot panic but for allocation failure, which aborts.
            let _ = catch_unwind(|| set_new_error(&error.detail));
            error.code
        }
        Err(payload) => {
            let detail = format!("panic: {}", panic_text(&*payload));
            let _ = catch_unwind(|| set_new_error(&detail));
            REPLYSTREAM_PANIC
        }
    }
}

/// Creates an engine for one reply stream (one turn).
///
/// - `channel`/`channel_len`: the channel profile's name, UTF-8, case-insensitive:
///   `telegram`, `discord`, `slack`, `signal`, `whatsapp`, `imessage`, `googlechat`, `generic`.
///   NULL or empty (or blank) means `generic`.
/// - `options`: overrides of the channel defaults (see `replystream_options_new`), or NULL for
///   none. Only read during the call; it may be freed or reused afterwards.
/// - `seed`: seeds the engine's random numbers (human delay); the same inputs, times and seed
///   give the same actions.
/// - `out`: receives the new handle on `REPLYSTREAM_OK`, NULL otherwise.
///
/// Returns:
/// - `REPLYSTREAM_OK`: `*out` is the new handle;
/// - `REPLYSTREAM_NULL_POINTER`: `out` is NULL, or `channel` is NULL with a non-zero length;
/// - `REPLYSTREAM_INVALID_ARGUMENT`: `channel_len` is above `PTRDIFF_MAX`;
/// - `REPLYSTREAM_INVALID_UTF8`: the channel name is not UTF-8;
/// - `REPLYSTREAM_UNKNOWN_CHANNEL`: the channel name is not a built-in profile;
/// - `REPLYSTREAM_INVALID_CONFIG`: the options, layered over the channel, are refused by the
///   configuration check (e.g. a text limit below `replystream_min_limit`, a line cap below
///   3, an empty silent token, a response prefix leaving less than that limit of text);
/// - `REPLYSTREAM_POISONED`: `options` is poisoned by an earlier panic;
/// - `REPLYSTREAM_PANIC`: a bug.
///
/// On every error `replystream_new_error` tells why (the field, for INVALID_CONFIG).
/// The caller owns the handle and must release it with `replystream_engine_free` exactly once.
///
/// # Safety
/// `channel` is NULL or points to `channel_len` readable bytes; `options` is NULL or a live
/// options handle not being written by another call; `out` is NULL or points to writable
/// storage for a pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_engine_new(
    channel: *const c_char,
    channel_len: usize,
    options: *const replystream_options,
    seed: u64,
    out: *mut *mut replystream_engine,
) -> replystream_result {
    constructor(|| {
        if out.is_null() {
            return Err(ArgError::new(REPLYSTREAM_NULL_POINTER, "out is NULL"));
        }
        // SAFETY: `out` is non-NULL and writable (caller contract).
        unsafe { out.write(std::ptr::null_mut()) };
        // SAFETY: caller contract for `channel` and `options`.
        let config = unsafe { config_from(channel, channel_len, options) }?;
        let engine = Engine::new(config, seed)
            .map_err(|error| ArgError::new(code_of(&error), error.to_string()))?;
        let handle = Box::new(replystream_engine::new(engine));
        // SAFETY: checked non-NULL above.
        unsafe { out.write(Box::into_raw(handle)) };
        Ok(())
    })
}

/// Why the last `replystream_engine_new`, `replystream_split`, `replystream_chunk` or
/// `replystream_render` on this thread failed (empty after a success). The view stays valid until the next of those calls
/// on this thread. Returns `REPLYSTREAM_NULL_POINTER` if `out` is NULL.
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
    // SAFETY: caller contract (a handle from `replystream_engine_new`, freed once).
    unsafe { free_handle(engine) }
}

/// The detail of the last non-`const` call on this handle that failed (empty if it
/// succeeded), e.g. "ack for unknown send #7". Calls on a `const` handle leave it alone.
/// Works on a poisoned handle (it then tells the panic). The view stays valid until the next
/// non-`const` call on this handle. Returns `REPLYSTREAM_NULL_POINTER` if `engine` or `out` is
/// NULL.
///
/// # Safety
/// `engine` is NULL or a live handle that no non-`const` call is using; `out` is NULL or
/// points to a writable `replystream_str`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_engine_last_error(
    engine: *const replystream_engine,
    out: *mut replystream_str,
) -> replystream_result {
    // SAFETY: caller contract.
    unsafe { write_detail(engine.as_ref().map(|h| h.last_error.as_str()), out) }
}
