//! Platform formats (SPEC §16) at the C ABI: the format and entity records of a send, and
//! `replystream_render`, which renders a whole text as the engine renders each send.

use std::ffi::{CStr, c_char};

use replystream::{Entity, EntityKind, Format, Rendered, render};

use crate::args::{ArgError, str_arg};
use crate::handle::{code_of, constructor, free_handle};
use crate::options::{config_from, replystream_options};
use crate::result::replystream_result::{self, *};
use crate::types::{
    replystream_entity, replystream_entity_kind, replystream_format, replystream_str,
};

/// Every format with its C number and static name, in `replystream_format` order.
const FORMATS: [(Format, replystream_format, &CStr); 7] = {
    use replystream_format::*;
    [
        (Format::Markdown, REPLYSTREAM_FORMAT_MARKDOWN, c"markdown"),
        (Format::Discord, REPLYSTREAM_FORMAT_DISCORD, c"discord"),
        (
            Format::TelegramHtml,
            REPLYSTREAM_FORMAT_TELEGRAM_HTML,
            c"telegram-html",
        ),
        (
            Format::TelegramEntities,
            REPLYSTREAM_FORMAT_TELEGRAM_ENTITIES,
            c"telegram-entities",
        ),
        (
            Format::SlackMrkdwn,
            REPLYSTREAM_FORMAT_SLACK_MRKDWN,
            c"slack-mrkdwn",
        ),
        (Format::Whatsapp, REPLYSTREAM_FORMAT_WHATSAPP, c"whatsapp"),
        (Format::Plain, REPLYSTREAM_FORMAT_PLAIN, c"plain"),
    ]
};

/// Every entity kind with its C number and static Bot API name.
const ENTITY_KINDS: [(EntityKind, replystream_entity_kind, &CStr); 8] = {
    use replystream_entity_kind::*;
    [
        (EntityKind::Bold, REPLYSTREAM_ENTITY_BOLD, c"bold"),
        (EntityKind::Italic, REPLYSTREAM_ENTITY_ITALIC, c"italic"),
        (
            EntityKind::Strikethrough,
            REPLYSTREAM_ENTITY_STRIKETHROUGH,
            c"strikethrough",
        ),
        (EntityKind::Code, REPLYSTREAM_ENTITY_CODE, c"code"),
        (EntityKind::Pre, REPLYSTREAM_ENTITY_PRE, c"pre"),
        (
            EntityKind::TextLink,
            REPLYSTREAM_ENTITY_TEXT_LINK,
            c"text_link",
        ),
        (
            EntityKind::Blockquote,
            REPLYSTREAM_ENTITY_BLOCKQUOTE,
            c"blockquote",
        ),
        (
            EntityKind::ExpandableBlockquote,
            REPLYSTREAM_ENTITY_EXPANDABLE_BLOCKQUOTE,
            c"expandable_blockquote",
        ),
    ]
};

/// A view of a static C string.
fn static_view(s: &'static CStr) -> replystream_str {
    replystream_str {
        ptr: s.as_ptr(),
        len: s.count_bytes(),
    }
}

/// The C number and static name of a format.
pub(crate) fn format_of(format: Format) -> (replystream_format, replystream_str) {
    FORMATS.iter().find(|(f, ..)| *f == format).map_or(
        (
            replystream_format::REPLYSTREAM_FORMAT_MARKDOWN,
            replystream_str::EMPTY,
        ),
        |(_, c, name)| (*c, static_view(name)),
    )
}

/// NUL-terminates the text and the entities' strings of a rendered message, so views can
/// point into it.
pub(crate) fn nul_terminate_rendered(rendered: &mut Rendered) {
    rendered.text.push('\0');
    for entity in &mut rendered.entities {
        nul_terminate_entity(entity);
    }
}

fn nul_terminate_entity(entity: &mut Entity) {
    for s in [&mut entity.url, &mut entity.language]
        .into_iter()
        .flatten()
    {
        s.push('\0');
    }
}

/// Views of NUL-terminated entities (see [`nul_terminate_rendered`]), appended to `out`.
pub(crate) fn entity_views(entities: &[Entity], out: &mut Vec<replystream_entity>) {
    let view = |s: &Option<String>| {
        s.as_deref()
            .map_or(replystream_str::EMPTY, replystream_str::of_nul_terminated)
    };
    out.extend(entities.iter().map(|e| {
        let (kind, type_name) = ENTITY_KINDS.iter().find(|(k, ..)| *k == e.kind).map_or(
            (
                replystream_entity_kind::REPLYSTREAM_ENTITY_UNKNOWN,
                replystream_str::EMPTY,
            ),
            |(_, c, name)| (*c, static_view(name)),
        );
        replystream_entity {
            kind,
            type_name,
            offset: e.offset,
            length: e.length,
            url: view(&e.url),
            language: view(&e.language),
        }
    }));
}

/// The static name of format number `format` (one of `replystream_format`), e.g.
/// "telegram-html"; NULL for a number that is not a format. Must not be freed.
#[unsafe(no_mangle)]
pub extern "C" fn replystream_format_name(format: u32) -> *const c_char {
    FORMATS
        .iter()
        .find(|(_, c, _)| *c as u32 == format)
        .map_or(std::ptr::null(), |(.., name)| name.as_ptr())
}

/// A text rendered by `replystream_render`. Opaque; read with `replystream_rendered_text`,
/// `replystream_rendered_format` and `replystream_rendered_entity`, free with
/// `replystream_rendered_free` (every view into it becomes invalid then). Read-only, so it
/// may be read from several threads at once.
pub struct replystream_rendered {
    /// The rendered text and entities, their strings NUL-terminated; the views point here.
    rendered: Rendered,
    format: Format,
    entities: Vec<replystream_entity>,
}

/// Renders a whole Markdown text into a channel's format, as the engine renders each send
/// (the text to post, and with `telegram-entities` its entities). Use it for text the engine
/// did not send: a message of your own, or a piece of `replystream_split`.
///
/// `channel` and `options` choose the format, the table mode and whether `@everyone` /
/// `@here` may ping, as for `replystream_engine_new` (the channel's format unless
/// `replystream_options_set_format` changed it). `text`/`len` is UTF-8 Markdown, read during
/// the call only (NULL with 0 is the empty text). `*out` receives the result (NULL on error).
///
/// Returns `REPLYSTREAM_OK`, or `REPLYSTREAM_NULL_POINTER` (`out` NULL, or a NULL pointer with
/// a non-zero length), `REPLYSTREAM_INVALID_ARGUMENT` (a length above `PTRDIFF_MAX`),
/// `REPLYSTREAM_INVALID_UTF8` (the text or channel name), `REPLYSTREAM_UNKNOWN_CHANNEL`,
/// `REPLYSTREAM_INVALID_CONFIG` (the options are refused, e.g. a format the channel cannot
/// show: the detail names `format`), `REPLYSTREAM_POISONED` (options), `REPLYSTREAM_PANIC`;
/// `replystream_new_error` tells why. Rendering itself never fails: Markdown that is not
/// well-formed renders as the visible text it is, escaped.
///
/// # Safety
/// `channel` and `text` are NULL or point to their lengths of readable bytes; `options` is
/// NULL or a live options handle not being written; `out` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_render(
    channel: *const c_char,
    channel_len: usize,
    options: *const replystream_options,
    text: *const c_char,
    len: usize,
    out: *mut *mut replystream_rendered,
) -> replystream_result {
    constructor(|| {
        if out.is_null() {
            return Err(ArgError::new(REPLYSTREAM_NULL_POINTER, "out is NULL"));
        }
        // SAFETY: `out` is non-NULL and writable (caller contract).
        unsafe { out.write(std::ptr::null_mut()) };
        // SAFETY: caller contract.
        let config = unsafe { config_from(channel, channel_len, options) }?;
        let resolved = config
            .validate()
            .map_err(|error| ArgError::new(code_of(&error), error.to_string()))?;
        // SAFETY: caller contract.
        let text = unsafe { str_arg(text, len, "text") }?.unwrap_or("");
        let format = resolved.config().format;
        let mut rendered = render(text, format, &resolved.render_options());
        nul_terminate_rendered(&mut rendered);
        let mut entities = Vec::with_capacity(rendered.entities.len());
        entity_views(&rendered.entities, &mut entities);
        let result = Box::new(replystream_rendered {
            rendered,
            format,
            entities,
        });
        // SAFETY: checked non-NULL above.
        unsafe { out.write(Box::into_raw(result)) };
        Ok(())
    })
}

/// The rendered text, to post as is (an empty view for NULL). Valid until
/// `replystream_rendered_free`.
///
/// # Safety
/// `rendered` is NULL or a live result.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_rendered_text(
    rendered: *const replystream_rendered,
) -> replystream_str {
    // SAFETY: caller contract.
    unsafe { rendered.as_ref() }.map_or(replystream_str::EMPTY, |r| {
        replystream_str::of_nul_terminated(&r.rendered.text)
    })
}

/// The format the text is in (one of `replystream_format`; MARKDOWN for NULL). Its name is
/// `replystream_format_name`.
///
/// # Safety
/// `rendered` is NULL or a live result.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_rendered_format(
    rendered: *const replystream_rendered,
) -> replystream_format {
    // SAFETY: caller contract.
    unsafe { rendered.as_ref() }.map_or(replystream_format::REPLYSTREAM_FORMAT_MARKDOWN, |r| {
        format_of(r.format).0
    })
}

/// How many entities the text has (0 for NULL, and in every format but
/// `telegram-entities`).
///
/// # Safety
/// `rendered` is NULL or a live result.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_rendered_entity_count(
    rendered: *const replystream_rendered,
) -> usize {
    // SAFETY: caller contract.
    unsafe { rendered.as_ref() }.map_or(0, |r| r.entities.len())
}

/// The entity number `index` (from 0), or NULL when `index` is not below the count (or
/// `rendered` is NULL). The entities are contiguous: `replystream_rendered_entity(r, 0)[i]`
/// is entity `i`. Valid, with its views, until `replystream_rendered_free`.
///
/// # Safety
/// `rendered` is NULL or a live result.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_rendered_entity(
    rendered: *const replystream_rendered,
    index: usize,
) -> *const replystream_entity {
    // SAFETY: caller contract.
    unsafe { rendered.as_ref() }
        .and_then(|r| r.entities.get(index))
        .map_or(std::ptr::null(), |e| e as *const replystream_entity)
}

/// Frees a result and every view into it. NULL is allowed and does nothing.
///
/// # Safety
/// `rendered` is NULL or a result from `replystream_render` not freed yet and not in use.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_rendered_free(rendered: *mut replystream_rendered) {
    // SAFETY: caller contract (a result from `replystream_render`, freed once).
    unsafe { free_handle(rendered) }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The C tables follow the library's: every format in `Format::ALL` order, numbered from
    /// 0, named as `Format::name` (a new format in the library fails here until the C ABI
    /// names it); every entity kind named as `EntityKind::name`, once.
    #[test]
    fn the_c_tables_cover_every_format_and_entity_kind() {
        assert_eq!(FORMATS.len(), Format::ALL.len());
        for (i, (format, c, name)) in FORMATS.iter().enumerate() {
            assert_eq!(*format, Format::ALL[i]);
            assert_eq!(*c as usize, i);
            assert_eq!(name.to_str().unwrap(), format.name());
            assert_eq!(format_of(*format).0, *c);
            // SAFETY: a static NUL-terminated string.
            let back = unsafe { CStr::from_ptr(replystream_format_name(i as u32)) };
            assert_eq!(back, *name);
        }
        assert!(replystream_format_name(FORMATS.len() as u32).is_null());
        for (kind, c, name) in ENTITY_KINDS {
            assert_eq!(name.to_str().unwrap(), kind.name());
            assert_ne!(c, replystream_entity_kind::REPLYSTREAM_ENTITY_UNKNOWN);
        }
        let mut names: Vec<_> = ENTITY_KINDS.iter().map(|(k, ..)| k.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), ENTITY_KINDS.len());
    }
}
