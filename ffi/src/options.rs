//! The options handle: overrides of a channel's defaults, one setter per configuration knob,
//! so the set of knobs can grow without changing any struct layout.

use std::ffi::c_char;
use std::panic::{AssertUnwindSafe, catch_unwind};

use replystream::{
    BreakMode, BreakPreference, ChannelProfile, ChunkMode, Config, ConfigOverrides, Format,
    HumanDelay, LengthMetric, PreviewMode, PreviewTransport, ReasoningMode, TableMode,
};

use crate::args::{ArgError, str_arg};
use crate::handle::{free_handle, panic_text, set_detail, write_detail};
use crate::result::replystream_result::{self, *};
use crate::types::replystream_str;

/// Overrides of a channel profile's defaults, for `replystream_engine_new`,
/// `replystream_split` and `replystream_chunk`. Opaque; create with `replystream_options_new`
/// (every knob "from the channel"), set knobs with the `replystream_options_set_*`
/// functions, free with `replystream_options_free`. A knob that is never set keeps the
/// channel's value.
///
/// Setters check what they can on their own (an enum number, a text's UTF-8) and return
/// `REPLYSTREAM_INVALID_CONFIG` (unknown number) or `REPLYSTREAM_INVALID_UTF8`;
/// `replystream_options_last_error` tells why. Ranges and combinations (a text limit below
/// `replystream_min_limit`, chunk bounds, a prefix too long for the limit) are checked when
/// the options are used,
/// by `replystream_engine_new`, `replystream_split` and `replystream_chunk`, which then return
/// `REPLYSTREAM_INVALID_CONFIG` with the field named in `replystream_new_error`.
///
/// Threads: like an engine handle (setters are non-`const` calls).
pub struct replystream_options {
    overrides: ConfigOverrides,
    poisoned: bool,
    /// The detail of the last failed setter, NUL-terminated.
    last_error: String,
}

/// How a channel counts text length (`replystream_options_set_metric`).
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum replystream_metric {
    /// UTF-16 code units (JavaScript's `String.length`; Telegram, WhatsApp).
    REPLYSTREAM_METRIC_UTF16 = 0,
    /// Unicode scalar values (Discord).
    REPLYSTREAM_METRIC_CHARS = 1,
    /// UTF-8 bytes.
    REPLYSTREAM_METRIC_BYTES = 2,
    /// Extended grapheme clusters (what a reader sees as one character).
    REPLYSTREAM_METRIC_GRAPHEMES = 3,
}

/// Where the chunker prefers to cut (`replystream_options_set_break_preference`).
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum replystream_break_preference {
    /// Paragraph break, then line break, then sentence end (the default).
    REPLYSTREAM_BREAK_PARAGRAPH = 0,
    /// Line breaks only.
    REPLYSTREAM_BREAK_NEWLINE = 1,
    /// Sentence ends.
    REPLYSTREAM_BREAK_SENTENCE = 2,
}

/// Length or paragraph chunking (`replystream_options_set_chunk_mode`).
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum replystream_chunk_mode {
    /// Blocks are cut by length, between chunk min and max (the default).
    REPLYSTREAM_CHUNK_LENGTH = 0,
    /// Each paragraph is sent as its own message as soon as it ends.
    REPLYSTREAM_CHUNK_NEWLINE = 1,
}

/// When streamed blocks are emitted (`replystream_options_set_break_mode`).
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum replystream_break_mode {
    /// While streaming; each text end drains the chunker (the default).
    REPLYSTREAM_BREAK_TEXT_END = 0,
    /// Nothing until the message ends, then everything.
    REPLYSTREAM_BREAK_MESSAGE_END = 1,
}

/// What happens to the model's reasoning (`replystream_options_set_reasoning`).
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum replystream_reasoning {
    /// Reasoning is dropped (the default).
    REPLYSTREAM_REASONING_OFF = 0,
    /// The reasoning is sent as its own block, before the answer it belongs to (at the
    /// message's end if no answer follows it).
    REPLYSTREAM_REASONING_ON = 1,
    /// Reasoning is streamed as it grows, on the reasoning lane.
    REPLYSTREAM_REASONING_STREAM = 2,
}

/// The pause between block sends (`replystream_options_set_human_delay`).
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum replystream_human_delay {
    /// No pause (the default).
    REPLYSTREAM_HUMAN_DELAY_OFF = 0,
    /// A uniform random pause in [800, 2500] ms.
    REPLYSTREAM_HUMAN_DELAY_NATURAL = 1,
    /// A uniform random pause in [min_ms, max_ms] (exactly min_ms when max_ms <= min_ms);
    /// each bound at most 60000.
    REPLYSTREAM_HUMAN_DELAY_CUSTOM = 2,
}

/// Live preview streaming (`replystream_options_set_preview`).
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum replystream_preview_mode {
    /// No preview (the default).
    REPLYSTREAM_PREVIEW_OFF = 0,
    /// The preview shows the latest cleaned text.
    REPLYSTREAM_PREVIEW_PARTIAL = 1,
    /// The preview advances by chunker blocks.
    REPLYSTREAM_PREVIEW_BLOCK = 2,
}

/// How a live preview reaches the platform (`replystream_options_set_preview_transport`).
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum replystream_preview_transport {
    /// A message created (CREATE with a message key) and then edited in place (EDIT); the
    /// default.
    REPLYSTREAM_PREVIEW_TRANSPORT_EDIT = 0,
    /// A draft bubble updated with DRAFT sends; the final is a normal CREATE.
    REPLYSTREAM_PREVIEW_TRANSPORT_DRAFT = 1,
}

// The library values behind each C enum, indexed by the C number.
const METRICS: [LengthMetric; 4] = [
    LengthMetric::Utf16,
    LengthMetric::Chars,
    LengthMetric::Bytes,
    LengthMetric::Graphemes,
];
const BREAK_PREFERENCES: [BreakPreference; 3] = [
    BreakPreference::Paragraph,
    BreakPreference::Newline,
    BreakPreference::Sentence,
];
const CHUNK_MODES: [ChunkMode; 2] = [ChunkMode::Length, ChunkMode::Newline];
const BREAK_MODES: [BreakMode; 2] = [BreakMode::TextEnd, BreakMode::MessageEnd];
const REASONING_MODES: [ReasoningMode; 3] =
    [ReasoningMode::Off, ReasoningMode::On, ReasoningMode::Stream];
const PREVIEW_MODES: [PreviewMode; 3] =
    [PreviewMode::Off, PreviewMode::Partial, PreviewMode::Block];
const PREVIEW_TRANSPORTS: [PreviewTransport; 2] = [PreviewTransport::Edit, PreviewTransport::Draft];

/// The library value for C number `value` of the enum behind `table`.
fn named<T: Copy>(table: &[T], value: u32, what: &str) -> Result<T, ArgError> {
    usize::try_from(value)
        .ok()
        .and_then(|i| table.get(i).copied())
        .ok_or_else(|| {
            ArgError::new(
                REPLYSTREAM_INVALID_CONFIG,
                format!(
                    "{what}: unknown value {value} (expected 0 to {})",
                    table.len() - 1
                ),
            )
        })
}

/// Runs a setter on the options behind `options`, inside a panic boundary (a panic poisons
/// the options).
///
/// # Safety
/// `options` is NULL or a live options handle that no other call is using.
pub(crate) unsafe fn update(
    options: *mut replystream_options,
    f: impl FnOnce(&mut ConfigOverrides) -> Result<(), ArgError>,
) -> replystream_result {
    // SAFETY: caller contract.
    let Some(o) = (unsafe { options.as_mut() }) else {
        return REPLYSTREAM_NULL_POINTER;
    };
    if o.poisoned {
        return REPLYSTREAM_POISONED;
    }
    match catch_unwind(AssertUnwindSafe(|| f(&mut o.overrides))) {
        Ok(Ok(())) => {
            set_detail(&mut o.last_error, "");
            REPLYSTREAM_OK
        }
        Ok(Err(error)) => {
            set_detail(&mut o.last_error, &error.detail);
            error.code
        }
        Err(payload) => {
            o.poisoned = true;
            set_detail(
                &mut o.last_error,
                format_args!("panic: {}", panic_text(&*payload)),
            );
            REPLYSTREAM_PANIC
        }
    }
}

/// Runs a setter that cannot fail on its own.
///
/// # Safety
/// As for [`update`].
unsafe fn set(
    options: *mut replystream_options,
    apply: impl FnOnce(&mut ConfigOverrides),
) -> replystream_result {
    // SAFETY: forwarded from the caller.
    unsafe {
        update(options, |o| {
            apply(o);
            Ok(())
        })
    }
}

/// Runs a setter of an enum knob: `value` is the C number of an entry of `table`.
///
/// # Safety
/// As for [`update`].
unsafe fn set_named<T: Copy>(
    options: *mut replystream_options,
    table: &[T],
    value: u32,
    what: &str,
    apply: impl FnOnce(&mut ConfigOverrides, T),
) -> replystream_result {
    // SAFETY: forwarded from the caller.
    unsafe {
        update(options, |o| {
            apply(o, named(table, value, what)?);
            Ok(())
        })
    }
}

/// Runs a setter of a text knob: NULL (with length 0) is `None`, else the UTF-8 text.
///
/// # Safety
/// As for [`update`]; `ptr` is NULL or points to `len` readable bytes.
unsafe fn set_text(
    options: *mut replystream_options,
    ptr: *const c_char,
    len: usize,
    what: &str,
    apply: impl FnOnce(&mut ConfigOverrides, Option<String>),
) -> replystream_result {
    // SAFETY: forwarded from the caller.
    unsafe {
        update(options, |o| {
            let value = str_arg(ptr, len, what)?.map(str::to_owned);
            apply(o, value);
            Ok(())
        })
    }
}

/// The configuration for a channel name with `options` layered over it.
///
/// # Safety
/// `channel` is NULL or points to `channel_len` readable bytes; `options` is NULL or a live
/// options handle not being written.
pub(crate) unsafe fn config_from(
    channel: *const c_char,
    channel_len: usize,
    options: *const replystream_options,
) -> Result<Config, ArgError> {
    // SAFETY: caller contract.
    let name = unsafe { str_arg(channel, channel_len, "channel") }?.unwrap_or("");
    let profile = if name.trim().is_empty() {
        ChannelProfile::GENERIC
    } else {
        ChannelProfile::by_name(name).ok_or_else(|| {
            ArgError::new(
                REPLYSTREAM_UNKNOWN_CHANNEL,
                format!(
                    "unknown channel {name:?} (known: {})",
                    ChannelProfile::NAMES.join(", ")
                ),
            )
        })?
    };
    let mut config = Config::for_channel(&profile);
    // SAFETY: caller contract.
    if let Some(o) = unsafe { options.as_ref() } {
        if o.poisoned {
            return Err(ArgError::new(
                REPLYSTREAM_POISONED,
                "the options are poisoned by an earlier panic",
            ));
        }
        config.apply(&o.overrides);
    }
    Ok(config)
}

/// Creates options that keep every channel default. `*out` receives the handle
/// (`REPLYSTREAM_OK`), or the call returns `REPLYSTREAM_NULL_POINTER` when `out` is NULL.
/// Free it with `replystream_options_free`.
///
/// # Safety
/// `out` is NULL or points to writable storage for a pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_options_new(
    out: *mut *mut replystream_options,
) -> replystream_result {
    if out.is_null() {
        return REPLYSTREAM_NULL_POINTER;
    }
    let made = catch_unwind(|| {
        Box::into_raw(Box::new(replystream_options {
            overrides: ConfigOverrides::default(),
            poisoned: false,
            last_error: String::from("\0"),
        }))
    });
    let (handle, code) = match made {
        Ok(handle) => (handle, REPLYSTREAM_OK),
        Err(_) => (std::ptr::null_mut(), REPLYSTREAM_PANIC),
    };
    // SAFETY: `out` is non-NULL and writable (caller contract).
    unsafe { out.write(handle) };
    code
}

/// Destroys options. NULL is allowed and does nothing. Engines created with them are not
/// affected.
///
/// # Safety
/// `options` is NULL or a handle from `replystream_options_new` not freed yet and not in use.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_options_free(options: *mut replystream_options) {
    // SAFETY: caller contract (a handle from `replystream_options_new`, freed once).
    unsafe { free_handle(options) }
}

/// Why the last setter on these options failed (empty if it succeeded). The view stays valid
/// until the next setter or free. `REPLYSTREAM_NULL_POINTER` if `options` or `out` is NULL.
///
/// # Safety
/// `options` is NULL or a live handle not being written; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_options_last_error(
    options: *const replystream_options,
    out: *mut replystream_str,
) -> replystream_result {
    // SAFETY: caller contract.
    unsafe { write_detail(options.as_ref().map(|o| o.last_error.as_str()), out) }
}

/// The smallest text limit accepted in `metric` (one of `replystream_metric`), for the text
/// limit, the preview limit, chunk max and the preview's block max: room to close and
/// reopen a fenced code block (at its widest standard form, three spaces and three
/// backticks) around the widest grapheme cluster kept whole (a 10-code-point emoji
/// sequence). 24 chars, 29 UTF-16 units, 49 bytes, 15 graphemes. A smaller limit is refused
/// with `REPLYSTREAM_INVALID_CONFIG` by `replystream_engine_new`, `replystream_split` and
/// `replystream_chunk`. Returns 0 for a number that is not a `replystream_metric`.
#[unsafe(no_mangle)]
pub extern "C" fn replystream_min_limit(metric: u32) -> usize {
    usize::try_from(metric)
        .ok()
        .and_then(|i| METRICS.get(i))
        .map_or(0, |m| m.min_limit())
}

// ---------------------------------------------------------------------------------------------
// Setters. Every one returns `REPLYSTREAM_OK`, `REPLYSTREAM_NULL_POINTER` (NULL options, or a
// NULL text with a non-zero length), `REPLYSTREAM_POISONED`, or the error its doc names.
// Lengths and limits are in the channel's metric units, times in milliseconds.

/// The longest message text (channel default; generic 4000). At least
/// `replystream_min_limit(metric)` (checked on use).
///
/// # Safety
/// `options` is NULL or a live options handle that no other call is using.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_options_set_text_limit(
    options: *mut replystream_options,
    text_limit: usize,
) -> replystream_result {
    // SAFETY: caller contract.
    unsafe { set(options, |o| o.text_limit = Some(text_limit)) }
}

/// How the channel counts length: one of `replystream_metric`; another number is
/// `REPLYSTREAM_INVALID_CONFIG`.
///
/// # Safety
/// As for `replystream_options_set_text_limit`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_options_set_metric(
    options: *mut replystream_options,
    metric: u32,
) -> replystream_result {
    // SAFETY: caller contract.
    unsafe {
        set_named(options, &METRICS, metric, "metric", |o, v| {
            o.metric = Some(v)
        })
    }
}

/// The longest text a live preview may show (channel default; generic 4000). At least
/// `replystream_min_limit(metric)` (checked on use).
///
/// # Safety
/// As for `replystream_options_set_text_limit`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_options_set_preview_limit(
    options: *mut replystream_options,
    preview_limit: usize,
) -> replystream_result {
    // SAFETY: caller contract.
    unsafe { set(options, |o| o.preview_limit = Some(preview_limit)) }
}

/// A soft cap on lines per message; 0 removes the channel's cap (Discord: 17). At least 3
/// otherwise (checked on use).
///
/// # Safety
/// As for `replystream_options_set_text_limit`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_options_set_max_lines(
    options: *mut replystream_options,
    max_lines: usize,
) -> replystream_result {
    let cap = (max_lines != 0).then_some(max_lines);
    // SAFETY: caller contract.
    unsafe { set(options, |o| o.max_lines = Some(cap)) }
}

/// The chunker's minimum block length (800): no block is emitted before the buffer holds
/// this much, unless forced. Raised to 1 and lowered to the maximum on use.
///
/// # Safety
/// As for `replystream_options_set_text_limit`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_options_set_chunk_min(
    options: *mut replystream_options,
    chunk_min: usize,
) -> replystream_result {
    // SAFETY: caller contract.
    unsafe { set(options, |o| o.chunk_min = Some(chunk_min)) }
}

/// The chunker's maximum block length (1200); lowered to the text limit on use, and then at
/// least `replystream_min_limit(metric)` (checked on use).
///
/// # Safety
/// As for `replystream_options_set_text_limit`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_options_set_chunk_max(
    options: *mut replystream_options,
    chunk_max: usize,
) -> replystream_result {
    // SAFETY: caller contract.
    unsafe { set(options, |o| o.chunk_max = Some(chunk_max)) }
}

/// Where the chunker prefers to cut: one of `replystream_break_preference`.
///
/// # Safety
/// As for `replystream_options_set_text_limit`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_options_set_break_preference(
    options: *mut replystream_options,
    preference: u32,
) -> replystream_result {
    // SAFETY: caller contract.
    unsafe {
        set_named(
            options,
            &BREAK_PREFERENCES,
            preference,
            "break_preference",
            |o, v| o.break_preference = Some(v),
        )
    }
}

/// Length or paragraph chunking: one of `replystream_chunk_mode`.
///
/// # Safety
/// As for `replystream_options_set_text_limit`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_options_set_chunk_mode(
    options: *mut replystream_options,
    mode: u32,
) -> replystream_result {
    // SAFETY: caller contract.
    unsafe {
        set_named(options, &CHUNK_MODES, mode, "chunk_mode", |o, v| {
            o.chunk_mode = Some(v)
        })
    }
}

/// When streamed blocks are emitted: one of `replystream_break_mode`.
///
/// # Safety
/// As for `replystream_options_set_text_limit`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_options_set_break_mode(
    options: *mut replystream_options,
    mode: u32,
) -> replystream_result {
    // SAFETY: caller contract.
    unsafe {
        set_named(options, &BREAK_MODES, mode, "break_mode", |o, v| {
            o.break_mode = Some(v)
        })
    }
}

/// Send blocks while the model writes (true, the default), or deliver everything at finish
/// as final messages (false).
///
/// # Safety
/// As for `replystream_options_set_text_limit`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_options_set_block_streaming(
    options: *mut replystream_options,
    on: bool,
) -> replystream_result {
    // SAFETY: caller contract.
    unsafe { set(options, |o| o.block_streaming = Some(on)) }
}

/// The coalescer's minimum; 0 = the default (the channel's coalesce minimum, else the
/// chunk minimum).
///
/// # Safety
/// As for `replystream_options_set_text_limit`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_options_set_coalesce_min(
    options: *mut replystream_options,
    coalesce_min: usize,
) -> replystream_result {
    let value = (coalesce_min != 0).then_some(coalesce_min);
    // SAFETY: caller contract.
    unsafe { set(options, |o| o.coalesce_min = Some(value)) }
}

/// The coalescer's maximum; 0 = the default (the text limit, less the prefix's room).
///
/// # Safety
/// As for `replystream_options_set_text_limit`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_options_set_coalesce_max(
    options: *mut replystream_options,
    coalesce_max: usize,
) -> replystream_result {
    let value = (coalesce_max != 0).then_some(coalesce_max);
    // SAFETY: caller contract.
    unsafe { set(options, |o| o.coalesce_max = Some(value)) }
}

/// The coalescer's idle time in ms (channel default; generic 1000); 0 = no idle timer.
/// Clamped to 60000 on use.
///
/// # Safety
/// As for `replystream_options_set_text_limit`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_options_set_coalesce_idle_ms(
    options: *mut replystream_options,
    idle_ms: u64,
) -> replystream_result {
    // SAFETY: caller contract.
    unsafe { set(options, |o| o.coalesce_idle_ms = Some(idle_ms)) }
}

/// The pause between block sends: `mode` is one of `replystream_human_delay`; `min_ms` and
/// `max_ms` are used by `REPLYSTREAM_HUMAN_DELAY_CUSTOM` only (each at most 60000, checked on
/// use). An unknown mode is `REPLYSTREAM_INVALID_CONFIG`.
///
/// # Safety
/// As for `replystream_options_set_text_limit`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_options_set_human_delay(
    options: *mut replystream_options,
    mode: u32,
    min_ms: u64,
    max_ms: u64,
) -> replystream_result {
    const MODES: [HumanDelay; 3] = [
        HumanDelay::Off,
        HumanDelay::Natural,
        HumanDelay::Custom {
            min_ms: 0,
            max_ms: 0,
        },
    ];
    // SAFETY: caller contract.
    unsafe {
        set_named(options, &MODES, mode, "human_delay", |o, delay| {
            o.human_delay = Some(match delay {
                HumanDelay::Custom { .. } => HumanDelay::Custom { min_ms, max_ms },
                other => other,
            })
        })
    }
}

/// How long a send may stay unacknowledged, in ms (15000); 0 = no timeout.
///
/// # Safety
/// As for `replystream_options_set_text_limit`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_options_set_delivery_timeout_ms(
    options: *mut replystream_options,
    timeout_ms: u64,
) -> replystream_result {
    // SAFETY: caller contract.
    unsafe { set(options, |o| o.delivery_timeout_ms = Some(timeout_ms)) }
}

/// The response prefix template, e.g. "[{model}]" (placeholders `{model}`, `{modelFull}`,
/// `{provider}`, `{thinkingLevel}`, `{identityName}`); NULL for none. Copied. Invalid UTF-8
/// is `REPLYSTREAM_INVALID_UTF8`.
///
/// # Safety
/// As for `replystream_options_set_text_limit`; `prefix` is NULL or points to `len` readable
/// bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_options_set_response_prefix(
    options: *mut replystream_options,
    prefix: *const c_char,
    len: usize,
) -> replystream_result {
    // SAFETY: caller contract.
    unsafe {
        set_text(options, prefix, len, "response_prefix", |o, v| {
            o.response_prefix = Some(v)
        })
    }
}

/// Apply the response prefix to every message, not only the first of the turn (false).
///
/// # Safety
/// As for `replystream_options_set_text_limit`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_options_set_prefix_every_message(
    options: *mut replystream_options,
    every: bool,
) -> replystream_result {
    // SAFETY: caller contract.
    unsafe { set(options, |o| o.prefix_every_message = Some(every)) }
}

/// The model id for the prefix's `{model}`, e.g. "anthropic/claude-3-5-sonnet"; NULL for
/// none. Copied.
///
/// # Safety
/// As for `replystream_options_set_response_prefix`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_options_set_model(
    options: *mut replystream_options,
    model: *const c_char,
    len: usize,
) -> replystream_result {
    // SAFETY: caller contract.
    unsafe { set_text(options, model, len, "model", |o, v| o.model = Some(v)) }
}

/// The provider for the prefix's `{provider}`; NULL for none (then the part of the model id
/// before its first '/'). Copied.
///
/// # Safety
/// As for `replystream_options_set_response_prefix`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_options_set_provider(
    options: *mut replystream_options,
    provider: *const c_char,
    len: usize,
) -> replystream_result {
    // SAFETY: caller contract.
    unsafe {
        set_text(options, provider, len, "provider", |o, v| {
            o.provider = Some(v)
        })
    }
}

/// The reasoning effort for the prefix's `{thinkingLevel}`; NULL for none. Copied.
///
/// # Safety
/// As for `replystream_options_set_response_prefix`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_options_set_thinking_level(
    options: *mut replystream_options,
    level: *const c_char,
    len: usize,
) -> replystream_result {
    // SAFETY: caller contract.
    unsafe {
        set_text(options, level, len, "thinking_level", |o, v| {
            o.thinking_level = Some(v)
        })
    }
}

/// The assistant's name for the prefix's `{identityName}`; NULL for none. Copied.
///
/// # Safety
/// As for `replystream_options_set_response_prefix`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_options_set_identity_name(
    options: *mut replystream_options,
    name: *const c_char,
    len: usize,
) -> replystream_result {
    // SAFETY: caller contract.
    unsafe {
        set_text(options, name, len, "identity_name", |o, v| {
            o.identity_name = Some(v)
        })
    }
}

/// What happens to the model's reasoning: one of `replystream_reasoning`.
///
/// # Safety
/// As for `replystream_options_set_text_limit`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_options_set_reasoning(
    options: *mut replystream_options,
    mode: u32,
) -> replystream_result {
    // SAFETY: caller contract.
    unsafe {
        set_named(options, &REASONING_MODES, mode, "reasoning", |o, v| {
            o.reasoning = Some(v)
        })
    }
}

/// Only text inside `<final>...</final>` is the answer (false).
///
/// # Safety
/// As for `replystream_options_set_text_limit`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_options_set_require_final_tag(
    options: *mut replystream_options,
    require: bool,
) -> replystream_result {
    // SAFETY: caller contract.
    unsafe { set(options, |o| o.require_final_tag = Some(require)) }
}

/// The silent token ("NO_REPLY"): a reply that is only this token sends nothing. NULL
/// disables it; an empty or blank token is refused on use. Copied.
///
/// # Safety
/// As for `replystream_options_set_response_prefix`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_options_set_silent_token(
    options: *mut replystream_options,
    token: *const c_char,
    len: usize,
) -> replystream_result {
    // SAFETY: caller contract.
    unsafe {
        set_text(options, token, len, "silent_token", |o, v| {
            o.silent_token = Some(v)
        })
    }
}

/// The heartbeat token ("HEARTBEAT_OK"), stripped from replies. NULL disables it; an empty
/// or blank token is refused on use. Copied.
///
/// # Safety
/// As for `replystream_options_set_response_prefix`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_options_set_heartbeat_token(
    options: *mut replystream_options,
    token: *const c_char,
    len: usize,
) -> replystream_result {
    // SAFETY: caller contract.
    unsafe {
        set_text(options, token, len, "heartbeat_token", |o, v| {
            o.heartbeat_token = Some(v)
        })
    }
}

/// Live preview streaming: one of `replystream_preview_mode`.
///
/// # Safety
/// As for `replystream_options_set_text_limit`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_options_set_preview(
    options: *mut replystream_options,
    mode: u32,
) -> replystream_result {
    // SAFETY: caller contract.
    unsafe {
        set_named(options, &PREVIEW_MODES, mode, "preview", |o, v| {
            o.preview = Some(v)
        })
    }
}

/// At most one preview edit per this many ms (1000); clamped to [250, 60000] on use.
///
/// # Safety
/// As for `replystream_options_set_text_limit`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_options_set_preview_throttle_ms(
    options: *mut replystream_options,
    throttle_ms: u64,
) -> replystream_result {
    // SAFETY: caller contract.
    unsafe { set(options, |o| o.preview_throttle_ms = Some(throttle_ms)) }
}

/// Appended to the preview while streaming ("█"); NULL (or empty) for no cursor. Copied.
///
/// # Safety
/// As for `replystream_options_set_response_prefix`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_options_set_preview_cursor(
    options: *mut replystream_options,
    cursor: *const c_char,
    len: usize,
) -> replystream_result {
    // SAFETY: caller contract.
    unsafe {
        set_text(options, cursor, len, "preview_cursor", |o, v| {
            o.preview_cursor = Some(v)
        })
    }
}

/// The first preview waits for this many units of text (30); lowered to the preview limit.
///
/// # Safety
/// As for `replystream_options_set_text_limit`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_options_set_preview_min_initial_units(
    options: *mut replystream_options,
    units: usize,
) -> replystream_result {
    // SAFETY: caller contract.
    unsafe { set(options, |o| o.preview_min_initial_units = Some(units)) }
}

/// The draft chunker's minimum in preview BLOCK mode (200).
///
/// # Safety
/// As for `replystream_options_set_text_limit`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_options_set_preview_block_min(
    options: *mut replystream_options,
    block_min: usize,
) -> replystream_result {
    // SAFETY: caller contract.
    unsafe { set(options, |o| o.preview_block_min = Some(block_min)) }
}

/// The draft chunker's maximum in preview BLOCK mode (800); lowered to the preview limit.
///
/// # Safety
/// As for `replystream_options_set_text_limit`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_options_set_preview_block_max(
    options: *mut replystream_options,
    block_max: usize,
) -> replystream_result {
    // SAFETY: caller contract.
    unsafe { set(options, |o| o.preview_block_max = Some(block_max)) }
}

/// How the preview reaches the platform: one of `replystream_preview_transport` (EDIT).
///
/// # Safety
/// As for `replystream_options_set_text_limit`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_options_set_preview_transport(
    options: *mut replystream_options,
    transport: u32,
) -> replystream_result {
    // SAFETY: caller contract.
    unsafe {
        set_named(
            options,
            &PREVIEW_TRANSPORTS,
            transport,
            "preview_transport",
            |o, v| o.preview_transport = Some(v),
        )
    }
}

/// Quote the reasoning at the top of a preview with Telegram's expandable notation (`**>`
/// first line, `||` at the end) rather than a plain Markdown quote (default: the channel's;
/// telegram true).
///
/// # Safety
/// As for `replystream_options_set_text_limit`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_options_set_preview_expandable_quote(
    options: *mut replystream_options,
    on: bool,
) -> replystream_result {
    // SAFETY: caller contract.
    unsafe { set(options, |o| o.preview_expandable_quote = Some(on)) }
}

/// Adds a directory under which a local path written by the model (`MEDIA: /p`,
/// `[[media:file:///p]]`) may be sent as media. With no root (the default) no local path is
/// media: such a reference is removed from the text and counted in
/// `replystream_stats.media_refused`. Paths are read lexically (`..` resolved on paper) and
/// sent resolved; symbolic links are not followed, so pass a canonical root and check the
/// file again when uploading. The root must be absolute (`/…`, or `C:\…`), without `..`,
/// and not the top of the file system: checked on use (`REPLYSTREAM_INVALID_CONFIG` naming
/// `media.roots[i]`). The text is copied; NULL is `REPLYSTREAM_NULL_POINTER`, invalid UTF-8
/// `REPLYSTREAM_INVALID_UTF8`.
///
/// # Safety
/// As for `replystream_options_set_response_prefix`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_options_add_media_root(
    options: *mut replystream_options,
    root: *const c_char,
    len: usize,
) -> replystream_result {
    // SAFETY: caller contract.
    unsafe {
        update(options, |o| {
            let Some(root) = str_arg(root, len, "media_root")? else {
                return Err(ArgError::new(
                    REPLYSTREAM_NULL_POINTER,
                    "media_root: NULL (pass the directory)",
                ));
            };
            o.media_roots
                .get_or_insert_with(Vec::new)
                .push(root.to_owned());
            Ok(())
        })
    }
}

/// Whether `http://` URLs written by the model are media (true); false sends only
/// `https://` ones, and an `http://` reference stays in the text, counted in
/// `replystream_stats.media_refused`. Either way only public hosts are media.
///
/// # Safety
/// As for `replystream_options_set_text_limit`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_options_set_media_allow_http(
    options: *mut replystream_options,
    on: bool,
) -> replystream_result {
    // SAFETY: caller contract.
    unsafe { set(options, |o| o.media_allow_http = Some(on)) }
}

/// The format every send's text is rendered in, by name: `markdown`, `discord`,
/// `telegram-html`, `telegram-entities`, `slack-mrkdwn`, `whatsapp` or `plain` (any case,
/// `_` for `-`); NULL (with 0) goes back to the channel's own (telegram `telegram-html`,
/// discord `discord`, slack `slack-mrkdwn`, whatsapp `whatsapp`, signal and imessage
/// `plain`, others `markdown`). An unknown name is `REPLYSTREAM_INVALID_CONFIG` (the detail
/// names `format` and lists the known ones); invalid UTF-8 `REPLYSTREAM_INVALID_UTF8`. A
/// format the channel cannot show (e.g. `slack-mrkdwn` on telegram) is refused on use:
/// `replystream_engine_new`, `replystream_split`, `replystream_chunk` and
/// `replystream_render` return `REPLYSTREAM_INVALID_CONFIG`, the detail naming `format`.
///
/// # Safety
/// As for `replystream_options_set_response_prefix`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_options_set_format(
    options: *mut replystream_options,
    name: *const c_char,
    len: usize,
) -> replystream_result {
    // SAFETY: caller contract.
    unsafe {
        update(options, |o| {
            o.format = match str_arg(name, len, "format")? {
                None => None,
                Some(name) => Some(Format::from_name(name).ok_or_else(|| {
                    let known: Vec<_> = Format::ALL.iter().map(|f| f.name()).collect();
                    ArgError::new(
                        REPLYSTREAM_INVALID_CONFIG,
                        format!(
                            "format: unknown format {name:?} (known: {})",
                            known.join(", ")
                        ),
                    )
                })?),
            };
            Ok(())
        })
    }
}

/// How a table shows in a format without tables, by name: `code` (a monospace block,
/// columns aligned; the default there), `bullets` (one bullet per row, `header: value`),
/// `off` (the lines as written) or `native` (only for format `markdown`, its default);
/// OpenClaw's `block` is read as `code`. NULL (with 0) for the format's default. An unknown
/// name is `REPLYSTREAM_INVALID_CONFIG` (the detail names `table_mode`); `native` with a
/// format that shows no tables is refused on use, like the format.
///
/// # Safety
/// As for `replystream_options_set_response_prefix`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_options_set_table_mode(
    options: *mut replystream_options,
    name: *const c_char,
    len: usize,
) -> replystream_result {
    // SAFETY: caller contract.
    unsafe {
        update(options, |o| {
            let mode = match str_arg(name, len, "table_mode")? {
                None => None,
                Some(name) => Some(TableMode::from_name(name).ok_or_else(|| {
                    ArgError::new(
                        REPLYSTREAM_INVALID_CONFIG,
                        format!(
                            "table_mode: unknown mode {name:?} (known: code, bullets, off, native)"
                        ),
                    )
                })?),
            };
            o.table_mode = Some(mode);
            Ok(())
        })
    }
}

/// Discord: let `@everyone` and `@here` written by the model ping (false: they are
/// neutralised so they show as text).
///
/// # Safety
/// As for `replystream_options_set_text_limit`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_options_set_allow_mass_mentions(
    options: *mut replystream_options,
    allow: bool,
) -> replystream_result {
    // SAFETY: caller contract.
    unsafe { set(options, |o| o.allow_mass_mentions = Some(allow)) }
}

/// The longest caption a media message carries, in the metric's units (channel default:
/// telegram and whatsapp 1024, others none); 0 for none (a caption may be as long as a
/// message). Text of a media send that does not fit is sent as its own message before the
/// media.
///
/// # Safety
/// As for `replystream_options_set_text_limit`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_options_set_caption_limit(
    options: *mut replystream_options,
    caption_limit: usize,
) -> replystream_result {
    let value = (caption_limit != 0).then_some(caption_limit);
    // SAFETY: caller contract.
    unsafe { set(options, |o| o.caption_limit = Some(value)) }
}

#[cfg(test)]
pub(crate) fn overrides_of(options: &replystream_options) -> &ConfigOverrides {
    &options.overrides
}
