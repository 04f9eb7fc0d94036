//! Argument conversion: C text views to `&str`, C options to `ConfigOverrides`.

use std::ffi::c_char;

use replystream::{BreakMode, ConfigOverrides, HumanDelay, ReasoningMode};

use crate::replystream_result::{self, *};
use crate::{
    REPLYSTREAM_NONE, replystream_break_mode, replystream_human_delay, replystream_options,
    replystream_reasoning, replystream_toggle,
};

/// Reads a text argument: NULL is `None` (with `len` 0), else UTF-8 bytes borrowed for `'a`.
/// Errors are a code and a detail naming the argument `what`.
///
/// # Safety
/// `ptr` is NULL or points to `len` bytes readable for `'a`.
pub(crate) unsafe fn str_arg<'a>(
    ptr: *const c_char,
    len: usize,
    what: &str,
) -> Result<Option<&'a str>, (replystream_result, String)> {
    if ptr.is_null() {
        return if len == 0 {
            Ok(None)
        } else {
            Err((
                REPLYSTREAM_NULL_POINTER,
                format!("{what} is NULL but its length is {len}"),
            ))
        };
    }
    if len > isize::MAX as usize {
        return Err((
            REPLYSTREAM_INVALID_ARGUMENT,
            format!("{what} length {len} is larger than any object"),
        ));
    }
    // SAFETY: `ptr` is non-NULL and points to `len <= isize::MAX` readable bytes (caller
    // contract); the bytes are only read.
    let bytes = unsafe { std::slice::from_raw_parts(ptr.cast::<u8>(), len) };
    match std::str::from_utf8(bytes) {
        Ok(text) => Ok(Some(text)),
        Err(e) => Err((
            REPLYSTREAM_INVALID_UTF8,
            format!(
                "{what} is not valid UTF-8 (bad byte at offset {})",
                e.valid_up_to()
            ),
        )),
    }
}

/// Turns C options into one override layer. Errors name the field.
pub(crate) fn overrides_from(o: &replystream_options) -> Result<ConfigOverrides, String> {
    let mut out = ConfigOverrides::default();
    let size = |v: usize| (v != 0).then_some(v);
    out.text_limit = size(o.text_limit);
    out.chunk_min = size(o.chunk_min);
    out.chunk_max = size(o.chunk_max);
    let ms = |v: u64| match v {
        0 => None,
        REPLYSTREAM_NONE => Some(0),
        v => Some(v),
    };
    out.coalesce_idle_ms = ms(o.coalesce_idle_ms);
    out.delivery_timeout_ms = ms(o.delivery_timeout_ms);

    use replystream_break_mode::*;
    use replystream_human_delay::*;
    use replystream_reasoning::*;
    use replystream_toggle::*;
    out.human_delay = match o.human_delay {
        v if v == REPLYSTREAM_HUMAN_DELAY_DEFAULT as u32 => None,
        v if v == REPLYSTREAM_HUMAN_DELAY_OFF as u32 => Some(HumanDelay::Off),
        v if v == REPLYSTREAM_HUMAN_DELAY_NATURAL as u32 => Some(HumanDelay::Natural),
        v if v == REPLYSTREAM_HUMAN_DELAY_CUSTOM as u32 => Some(HumanDelay::Custom {
            min_ms: o.human_delay_min_ms,
            max_ms: o.human_delay_max_ms,
        }),
        v => return Err(format!("human_delay: unknown value {v}")),
    };
    out.break_mode = match o.break_mode {
        v if v == REPLYSTREAM_BREAK_DEFAULT as u32 => None,
        v if v == REPLYSTREAM_BREAK_TEXT_END as u32 => Some(BreakMode::TextEnd),
        v if v == REPLYSTREAM_BREAK_MESSAGE_END as u32 => Some(BreakMode::MessageEnd),
        v => return Err(format!("break_mode: unknown value {v}")),
    };
    out.reasoning = match o.reasoning {
        v if v == REPLYSTREAM_REASONING_DEFAULT as u32 => None,
        v if v == REPLYSTREAM_REASONING_OFF as u32 => Some(ReasoningMode::Off),
        v if v == REPLYSTREAM_REASONING_ON as u32 => Some(ReasoningMode::On),
        v if v == REPLYSTREAM_REASONING_STREAM as u32 => Some(ReasoningMode::Stream),
        v => return Err(format!("reasoning: unknown value {v}")),
    };
    out.block_streaming = match o.block_streaming {
        v if v == REPLYSTREAM_TOGGLE_DEFAULT as u32 => None,
        v if v == REPLYSTREAM_TOGGLE_ON as u32 => Some(true),
        v if v == REPLYSTREAM_TOGGLE_OFF as u32 => Some(false),
        v => return Err(format!("block_streaming: unknown value {v}")),
    };
    Ok(out)
}
