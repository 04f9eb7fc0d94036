//! Platform formats (SPEC §16): one send's Markdown rendered into what the chat takes as
//! is: Telegram HTML or text plus entities, Slack mrkdwn, WhatsApp markers, Discord's
//! Markdown dialect, plain text.
//!
//! A send is read once (blocks, then inlines, with CommonMark's rules for what chat replies
//! use) into a small intermediate form, laid out as styled text (visible text plus nested
//! spans), and written by one writer per format. Markdown that is not well-formed (an
//! unclosed `**`, a stray `<` or `&`, an HTML tag from the model, a `|` line that is not a
//! table) renders as the visible text it is, escaped where the format needs it: rendering
//! never fails and never drops a character.
//!
//! ```
//! use replystream::{render, Format, RenderOptions};
//!
//! let md = "**Done.** See [the docs](https://example.com/a?b=1&c=2) & <more>.";
//! let html = render(md, Format::TelegramHtml, &RenderOptions::default());
//! assert_eq!(
//!     html.text,
//!     "<b>Done.</b> See <a href=\"https://example.com/a?b=1&amp;c=2\">the docs</a> &amp; &lt;more&gt;."
//! );
//! let slack = render(md, Format::SlackMrkdwn, &RenderOptions::default());
//! assert_eq!(slack.text, "*Done.* See <https://example.com/a?b=1&amp;c=2|the docs> &amp; &lt;more&gt;.");
//! let plain = render(md, Format::Plain, &RenderOptions::default());
//! assert_eq!(plain.text, "Done. See the docs (https://example.com/a?b=1&c=2) & <more>.");
//! ```

mod blocks;
mod entities;
mod html;
mod inline;
mod ir;
mod layout;
mod markers;
pub(crate) mod send;
mod source;
mod styled;
mod table;
mod width;

use markers::Dialect;
use smallvec::SmallVec;

/// The format a channel takes a message in (SPEC §16).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Format {
    /// CommonMark + GFM as written (tables native): the generic channel and Google Chat.
    #[default]
    Markdown,
    /// Discord's Markdown: as written, but tables per table mode (Discord shows none) and
    /// `@everyone` / `@here` neutralised unless allowed.
    Discord,
    /// Telegram `parse_mode=HTML`.
    TelegramHtml,
    /// Telegram plain text plus message entities (UTF-16 offsets), the same spans as the HTML.
    TelegramEntities,
    /// Slack mrkdwn.
    SlackMrkdwn,
    /// WhatsApp's markers.
    Whatsapp,
    /// Plain text: markup removed, links as `text (url)` (Signal, iMessage).
    Plain,
}

impl Format {
    /// Every format.
    pub const ALL: [Format; 7] = [
        Format::Markdown,
        Format::Discord,
        Format::TelegramHtml,
        Format::TelegramEntities,
        Format::SlackMrkdwn,
        Format::Whatsapp,
        Format::Plain,
    ];

    /// The format's name: `markdown`, `discord`, `telegram-html`, `telegram-entities`,
    /// `slack-mrkdwn`, `whatsapp` or `plain`.
    pub fn name(self) -> &'static str {
        match self {
            Format::Markdown => "markdown",
            Format::Discord => "discord",
            Format::TelegramHtml => "telegram-html",
            Format::TelegramEntities => "telegram-entities",
            Format::SlackMrkdwn => "slack-mrkdwn",
            Format::Whatsapp => "whatsapp",
            Format::Plain => "plain",
        }
    }

    /// Parses a format name (as [`Format::name`] spells it; `_` for `-` and any case too).
    pub fn from_name(name: &str) -> Option<Format> {
        let name = name.trim().replace('_', "-");
        Self::ALL
            .into_iter()
            .find(|f| f.name().eq_ignore_ascii_case(&name))
    }

    /// The default format of a channel by its profile name: telegram → `telegram-html`,
    /// discord → `discord`, slack → `slack-mrkdwn`, whatsapp → `whatsapp`, signal and
    /// imessage → `plain`, anything else (googlechat, generic) → `markdown`.
    pub fn for_channel(channel: &str) -> Format {
        match channel {
            "telegram" => Format::TelegramHtml,
            "discord" => Format::Discord,
            "slack" => Format::SlackMrkdwn,
            "whatsapp" => Format::Whatsapp,
            "signal" | "imessage" => Format::Plain,
            _ => Format::Markdown,
        }
    }

    /// Whether a channel (by profile name) can show this format: `markdown` and `plain`
    /// anywhere; Telegram's formats on telegram, `discord` on discord, `slack-mrkdwn` on
    /// slack, `whatsapp` on whatsapp; the generic channel (and any channel replystream has
    /// no profile for) takes any: the host knows where it posts.
    pub fn usable_on(self, channel: &str) -> bool {
        const KNOWN: [&str; 7] = [
            "telegram",
            "discord",
            "slack",
            "whatsapp",
            "signal",
            "imessage",
            "googlechat",
        ];
        if !KNOWN.contains(&channel) {
            return true;
        }
        match self {
            Format::Markdown | Format::Plain => true,
            Format::TelegramHtml | Format::TelegramEntities => {
                matches!(channel, "telegram" | "generic")
            }
            Format::Discord => matches!(channel, "discord" | "generic"),
            Format::SlackMrkdwn => matches!(channel, "slack" | "generic"),
            Format::Whatsapp => matches!(channel, "whatsapp" | "generic"),
        }
    }

    /// Whether the format shows GFM tables itself (table mode `native`): only `markdown`.
    pub fn has_tables(self) -> bool {
        self == Format::Markdown
    }

    /// The table mode used when none is set: `native` for `markdown`, `code` elsewhere.
    pub fn default_table_mode(self) -> TableMode {
        if self.has_tables() {
            TableMode::Native
        } else {
            TableMode::Code
        }
    }
}

/// How a format without tables shows a GFM table (OpenClaw's `markdown.tables`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TableMode {
    /// The table's lines as written, as text.
    Off,
    /// One bullet per body row: `header: value` pairs.
    Bullets,
    /// The table as a monospace code block, columns aligned (CJK and emoji count two
    /// columns).
    Code,
    /// The table as Markdown: only for formats that render tables (`markdown`).
    Native,
}

impl TableMode {
    /// Every mode.
    pub const ALL: [TableMode; 4] = [
        TableMode::Off,
        TableMode::Bullets,
        TableMode::Code,
        TableMode::Native,
    ];

    /// The mode's name: `off`, `bullets`, `code` or `native`.
    pub fn name(self) -> &'static str {
        match self {
            TableMode::Off => "off",
            TableMode::Bullets => "bullets",
            TableMode::Code => "code",
            TableMode::Native => "native",
        }
    }

    /// Parses a mode name, ignoring case. OpenClaw's `block` is read as `code` (a table laid
    /// out in a code block).
    pub fn from_name(name: &str) -> Option<TableMode> {
        let name = name.trim();
        if name.eq_ignore_ascii_case("block") {
            return Some(TableMode::Code);
        }
        Self::ALL
            .into_iter()
            .find(|m| m.name().eq_ignore_ascii_case(name))
    }
}

/// Options of [`render`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct RenderOptions {
    /// How tables show; `None` for the format's default ([`Format::default_table_mode`]).
    /// `native` on a format without tables is taken as `code`.
    pub table_mode: Option<TableMode>,
    /// Discord: let `@everyone` and `@here` from the model ping (off by default).
    pub allow_mass_mentions: bool,
    /// Put the whole message in a quote, collapsed where the platform can (Telegram's
    /// `<blockquote expandable>`): for reasoning shown as its own message.
    pub quote: bool,
}

impl RenderOptions {
    /// The table mode `format` will use with these options.
    pub fn table_mode_for(&self, format: Format) -> TableMode {
        match self.table_mode {
            None => format.default_table_mode(),
            Some(TableMode::Native) if !format.has_tables() => TableMode::Code,
            Some(mode) => mode,
        }
    }

    /// These options for a send on `lane`: reasoning is posted quoted.
    pub(crate) fn on_lane(self, lane: crate::Lane) -> Self {
        RenderOptions {
            quote: lane == crate::Lane::Reasoning,
            ..self
        }
    }
}

/// A message rendered for its platform.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Rendered {
    /// The text to post as is (with `telegram-entities`, the plain text the entities index).
    pub text: String,
    /// `telegram-entities` only: the message entities; empty for every other format.
    pub entities: Vec<Entity>,
}

/// A Telegram message entity: a span of the text in UTF-16 code units.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Entity {
    /// What the span does.
    pub kind: EntityKind,
    /// Where it starts, in UTF-16 code units from the start of the text.
    pub offset: usize,
    /// How long it is, in UTF-16 code units.
    pub length: usize,
    /// For [`EntityKind::TextLink`]: the URL.
    pub url: Option<String>,
    /// For [`EntityKind::Pre`]: the code block's language, if any.
    pub language: Option<String>,
}

/// The kind of a Telegram message entity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum EntityKind {
    /// `bold`.
    Bold,
    /// `italic`.
    Italic,
    /// `strikethrough`.
    Strikethrough,
    /// `code` (inline).
    Code,
    /// `pre` (a code block, with an optional language).
    Pre,
    /// `text_link` (with a URL).
    TextLink,
    /// `blockquote`.
    Blockquote,
    /// `expandable_blockquote`.
    ExpandableBlockquote,
}

impl EntityKind {
    /// The entity type as the Bot API spells it (`bold`, `text_link`, …).
    pub fn name(self) -> &'static str {
        match self {
            EntityKind::Bold => "bold",
            EntityKind::Italic => "italic",
            EntityKind::Strikethrough => "strikethrough",
            EntityKind::Code => "code",
            EntityKind::Pre => "pre",
            EntityKind::TextLink => "text_link",
            EntityKind::Blockquote => "blockquote",
            EntityKind::ExpandableBlockquote => "expandable_blockquote",
        }
    }
}

/// Renders one send's Markdown into `format`. The cost is linear in the send (a full read
/// of it, bounded by the message limit), apart from emphasis matching on pathological runs
/// of unmatched delimiters, which stays within the send.
pub fn render(markdown: &str, format: Format, options: &RenderOptions) -> Rendered {
    let tables = options.table_mode_for(format);
    let text = match format {
        Format::Markdown | Format::Discord => {
            let allow = options.allow_mass_mentions || format == Format::Markdown;
            let body = source::write_markdown(markdown, tables, allow);
            if options.quote {
                quote_markdown(&body)
            } else {
                body
            }
        }
        _ => {
            let styled = styled(markdown, tables, options.quote);
            return match format {
                Format::TelegramHtml => Rendered {
                    text: html::write_html(&styled),
                    entities: Vec::new(),
                },
                Format::TelegramEntities => {
                    let entities = entities::entities(&styled);
                    Rendered {
                        text: styled.text,
                        entities,
                    }
                }
                Format::SlackMrkdwn => {
                    plain_rendered(markers::write_markers(&styled, Dialect::Slack))
                }
                Format::Whatsapp => {
                    plain_rendered(markers::write_markers(&styled, Dialect::Whatsapp))
                }
                _ => plain_rendered(markers::write_markers(&styled, Dialect::Plain)),
            };
        }
    };
    plain_rendered(text)
}

/// The length of `markdown` once posted in `format`, counted as the platform counts its
/// limit (SPEC §16), in `metric`: Telegram counts the text after entity parsing (the HTML's
/// visible text, the same for both Telegram formats), every other platform the text posted
/// (Slack's `&amp;` is five characters, a `plain` link `text (url)` its whole length). The
/// cost is one render of `markdown`.
///
/// ```
/// use replystream::{posted_len, Format, LengthMetric, RenderOptions};
///
/// let o = RenderOptions::default();
/// let md = "**a** & [b](https://x.io)";
/// assert_eq!(posted_len(md, Format::TelegramHtml, &o, LengthMetric::Utf16), 5);
/// // `*a* &amp; <https://x.io|b>`
/// assert_eq!(posted_len(md, Format::SlackMrkdwn, &o, LengthMetric::Chars), 26);
/// // `a & b (https://x.io)`
/// assert_eq!(posted_len(md, Format::Plain, &o, LengthMetric::Chars), 20);
/// ```
pub fn posted_len(
    markdown: &str,
    format: Format,
    options: &RenderOptions,
    metric: crate::LengthMetric,
) -> usize {
    match format {
        Format::Markdown if !options.quote => metric.len(markdown),
        Format::TelegramHtml | Format::TelegramEntities => {
            metric.len(&styled(markdown, options.table_mode_for(format), options.quote).text)
        }
        _ => metric.len(&render(markdown, format, options).text),
    }
}

/// A send's text rendered to be measured, kept so that the render which measured it is the
/// render posted ([`Measured::into_rendered`]): a send is rendered once, not once to be
/// measured and again to be posted. Telegram keeps the styled text (its visible text is
/// what is counted; the HTML or the entities are written from it when it is posted); every
/// other format keeps what is posted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Measured {
    /// Boxed: a stage that may hold a render keeps one pointer inline, not a whole render
    /// (the engine's inline size counts against its memory per stream).
    form: Box<MeasuredForm>,
    /// The format and options it was rendered with, and the byte length of its Markdown:
    /// checked against the send before the render is posted.
    format: Format,
    options: RenderOptions,
    markdown_len: usize,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum MeasuredForm {
    Styled(styled::Styled),
    Rendered(Rendered),
}

impl Measured {
    /// Whether this is the render of a send of `markdown` in `format` with `options` (the
    /// text itself is the caller's to keep unchanged since it was measured).
    pub(crate) fn renders(&self, markdown: &str, format: Format, options: &RenderOptions) -> bool {
        self.format == format && self.options == *options && self.markdown_len == markdown.len()
    }

    /// What is posted: the same as [`render`] of the Markdown measured.
    pub(crate) fn into_rendered(self) -> Rendered {
        match *self.form {
            MeasuredForm::Rendered(r) => r,
            MeasuredForm::Styled(styled) => match self.format {
                Format::TelegramHtml => Rendered {
                    text: html::write_html(&styled),
                    entities: Vec::new(),
                },
                _ => {
                    let entities = entities::entities(&styled);
                    Rendered {
                        text: styled.text,
                        entities,
                    }
                }
            },
        }
    }
}

/// [`posted_len`] with the render it made kept, so the same render can be posted: `None`
/// in format `markdown` without a quote (nothing is rendered).
pub(crate) fn measure(
    markdown: &str,
    format: Format,
    options: &RenderOptions,
    metric: crate::LengthMetric,
) -> (usize, Option<Measured>) {
    let form = match format {
        Format::Markdown if !options.quote => return (metric.len(markdown), None),
        Format::TelegramHtml | Format::TelegramEntities => MeasuredForm::Styled(styled(
            markdown,
            options.table_mode_for(format),
            options.quote,
        )),
        _ => MeasuredForm::Rendered(render(markdown, format, options)),
    };
    let units = match &form {
        MeasuredForm::Styled(s) => metric.len(&s.text),
        MeasuredForm::Rendered(r) => metric.len(&r.text),
    };
    let measured = Measured {
        form: Box::new(form),
        format,
        options: *options,
        markdown_len: markdown.len(),
    };
    (units, Some(measured))
}

/// Whether `markdown` (`units` long) is known to fit `limit` once posted without rendering
/// it: it cannot grow in `format`, or a bound from one scan is within the limit (a bound is
/// never below the Markdown's own length, so over the limit it cannot help).
fn fits_unrendered(
    markdown: &str,
    units: usize,
    format: Format,
    options: &RenderOptions,
    limit: usize,
) -> bool {
    units <= limit
        && (cannot_grow(markdown, format, options.quote)
            || posted_bound(
                markdown,
                units,
                format,
                options.quote,
                options.table_mode_for(format),
            )
            .is_some_and(|b| b <= limit))
}

/// [`posted_within`] with the render it made, if it rendered (see [`measure`]).
/// `units` is the Markdown's own length in `metric`, which every caller knows already.
pub(crate) fn posted_within_measured(
    markdown: &str,
    units: usize,
    format: Format,
    options: &RenderOptions,
    metric: crate::LengthMetric,
    limit: usize,
) -> (bool, Option<Measured>) {
    debug_assert_eq!(units, metric.len(markdown));
    if fits_unrendered(markdown, units, format, options, limit) {
        return (true, None);
    }
    let (posted, measured) = measure(markdown, format, options, metric);
    (posted <= limit, measured)
}

/// Where [`posted_within_resumed`] takes its scan up and what it keeps for the next one.
pub(crate) struct ResumedScan<'a> {
    /// The state a previous scan kept, at a line start of this text's unchanged prefix.
    pub(crate) from: Option<&'a (usize, BoundScan)>,
    /// Where the state at the start of this text's last line starting at or before
    /// `upto` is written (`None` when none is).
    pub(crate) keep: &'a mut Option<(usize, BoundScan)>,
    /// See `keep`.
    pub(crate) upto: usize,
}

/// [`posted_within_measured`] for a text that grew at its end since it was last checked
/// (the coalescer's buffer, a block at a time): on the marker formats, where nothing is
/// known to fit without the bound, the bound's scan is taken up from `resume` (the state
/// [`BoundScan::scan`] kept at a line start of the text this one extends, `markdown[..at]`
/// unchanged since) instead of read from the start; what it keeps for the next check is
/// written as [`ResumedScan`] says.
pub(crate) fn posted_within_resumed(
    markdown: &str,
    units: usize,
    format: Format,
    options: &RenderOptions,
    metric: crate::LengthMetric,
    limit: usize,
    resumed: ResumedScan<'_>,
) -> (bool, Option<Measured>) {
    *resumed.keep = None;
    if !matches!(format, Format::SlackMrkdwn | Format::Whatsapp) || units > limit {
        return posted_within_measured(markdown, units, format, options, metric, limit);
    }
    debug_assert_eq!(units, metric.len(markdown));
    let (mut scan, from) = match resumed.from {
        Some((at, scan)) if *at <= markdown.len() => (scan.clone(), *at),
        _ => (BoundScan::default(), 0),
    };
    let tables = options.table_mode_for(format);
    scan.scan(
        markdown,
        from,
        format,
        tables,
        Some((resumed.keep, resumed.upto)),
    );
    if scan.bound(units, format).is_some_and(|b| b <= limit) {
        return (true, None);
    }
    let (posted, measured) = measure(markdown, format, options, metric);
    (posted <= limit, measured)
}

/// Whether `markdown` posted in `format` is certainly within `limit` units of `metric`,
/// checked cheaply when that can be shown without rendering (see [`cannot_grow`] and
/// [`posted_bound`]), else by rendering it ([`posted_len`]). `units` is the Markdown's own
/// length in `metric`.
pub(crate) fn posted_within(
    markdown: &str,
    units: usize,
    format: Format,
    options: &RenderOptions,
    metric: crate::LengthMetric,
    limit: usize,
) -> bool {
    debug_assert_eq!(units, metric.len(markdown));
    if fits_unrendered(markdown, units, format, options, limit) {
        return true;
    }
    posted_len(markdown, format, options, metric) <= limit
}

/// Whether rendering `markdown` into `format` can only keep or shrink what the platform
/// counts, in any metric, so that no render is needed to know it fits. True when the text
/// holds none of what can grow: a table (`|`), a line that starts (after spaces, tabs and
/// quote markers) with a list or rule marker (`- * + _` or a digit: markers as text,
/// renumbering, continuation indent, a rule drawn wider) or, outside Telegram, with a quote
/// marker (`> ` repeated on lazy lines) or indented code; on Discord a mass mention (`@`);
/// and no whole-message quote (`quote`) outside Telegram. Everything else a send holds
/// renders no longer than written (markup is dropped or kept, links shrink to their text,
/// fences and escapes go). Slack and WhatsApp never pass (their markers and
/// escapes can outgrow the Markdown in many small ways). On Telegram the lines of a fenced
/// code block are not looked at (the code is posted as written, less its fences), found
/// with the renderer's own fence rules ([`FenceMarker`](crate::text::markdown::FenceMarker));
/// a fence line that may open inside a quote (no blank line since a `>` line) is not
/// followed: such a text is measured.
pub(crate) fn cannot_grow(markdown: &str, format: Format, quote: bool) -> bool {
    let telegram = matches!(format, Format::TelegramHtml | Format::TelegramEntities);
    match format {
        Format::Markdown => return !quote,
        Format::Discord => {
            return !quote && memchr::memchr2(b'|', b'@', markdown.as_bytes()).is_none();
        }
        // Marker formats add markers of their own (a code block's, a heading's) where
        // Markdown had fewer or none: never shown here (see [`posted_bound`]).
        Format::SlackMrkdwn | Format::Whatsapp => return false,
        _ => {}
    }
    if quote && !telegram {
        return false;
    }
    let bytes = markdown.as_bytes();
    if !telegram && memchr::memchr(b'|', bytes).is_some() {
        return false;
    }
    let risky_start = |line: &[u8]| {
        let at = line.iter().position(|&b| !matches!(b, b' ' | b'\t' | b'>'));
        let first = at.map(|i| line[i]);
        // Other whitespace (a form feed, U+3000) may be skipped where the renderer trims
        // a line: what follows it is not looked at, so the text is measured. A line's own
        // `\r` is not content.
        let odd_space = at.is_some_and(|i| {
            let rest = &line[i..];
            match rest[0] {
                b'\r' => rest.len() > 1,
                b if b.is_ascii() => b.is_ascii_whitespace(),
                _ => std::str::from_utf8(&rest[..rest.len().min(4)])
                    .map_or_else(|e| std::str::from_utf8(&rest[..e.valid_up_to()]).ok(), Some)
                    .and_then(|s| s.chars().next())
                    .is_none_or(char::is_whitespace),
            }
        });
        let lead = line
            .iter()
            .take_while(|&&b| matches!(b, b' ' | b'\t' | b'>'));
        // Outside Telegram a quote is `> ` on every line (lazy ones too) and code is
        // fenced with markers: a quote marker or an indent of a tab or 4 spaces.
        let quoted_or_code = !telegram
            && (lead.clone().any(|&b| b == b'>' || b == b'\t') || line.starts_with(b"    "));
        // A quote marker or a heading with nothing after it is an empty block, posted as
        // the blank lines around it, which can be longer than its line.
        let rest = at.map_or(&[][..], |i| &line[i..]);
        let empty_block = rest
            .iter()
            .all(|&b| matches!(b, b'#' | b' ' | b'\t' | b'\r'))
            && (rest.contains(&b'#') || line.contains(&b'>'));
        quoted_or_code
            || odd_space
            || empty_block
            || first.is_some_and(|b| matches!(b, b'-' | b'*' | b'+' | b'_') || b.is_ascii_digit())
    };
    if telegram {
        return telegram_cannot_grow(markdown, risky_start);
    }
    let mut start = 0;
    for nl in memchr::memchr_iter(b'\n', bytes).chain(std::iter::once(bytes.len())) {
        if risky_start(&bytes[start..nl]) {
            return false;
        }
        start = nl + 1;
    }
    true
}

/// An upper bound on [`posted_len`] of `markdown` in `format` (quoted whole when `quote`),
/// given `units`, the Markdown's own length in the metric counted, found by one scan
/// without rendering: never below the length posted, so a text whose bound is within a
/// limit is within it once posted and needs no render to be measured (the property tests
/// `posted_bound_is_never_below_what_is_posted` and `code_table_bound_is_never_below_what_is_posted`
/// check it on random Markdown and random tables). `None` when the text holds a `|` that
/// no charge covers (see [`TableCharge`]); such a text is measured.
///
/// The bound is the Markdown's own length plus what a render can add, charged where it can
/// be added (each charge counted in UTF-8 bytes, never fewer than a metric's units):
/// per line a blank line between blocks and a grapheme an insertion may split; per line
/// with a lead (indentation, list or quote markers, `#`) a list marker (a bullet `•` or a
/// renumbered `n. `: a number is at most its start plus the number of lines, so at most
/// the line count's digits plus one longer); per nesting level the list indentation, the
/// nesting at most the line's lead (a level takes at least one char of it, a tab counted
/// as 4) or, on a lazy line (no blank line since), the previous line's; a rule drawn as
/// its 10 box-drawing chars; on Slack and WhatsApp a code block's or a quote's markers and,
/// per char escaped or wrapped there (`& < >`, mentions, emphasis markers), the escape and
/// a zero-width space; on Slack a bare URL's label (its run again, with `<`, `|`, `>`).
/// The lines of a fenced code block opened at the top level (no lead since a blank line)
/// are posted as written: only their escapes are charged. With tables laid out in `code`
/// mode (`tables`), a table whose lines all start with `|` is charged its padded layout
/// on top of its lines (see [`TableCharge`]).
pub(crate) fn posted_bound(
    markdown: &str,
    units: usize,
    format: Format,
    quote: bool,
    tables: TableMode,
) -> Option<usize> {
    if matches!(format, Format::Markdown) && !quote {
        return Some(units);
    }
    let mut scan = BoundScan::default();
    scan.scan(markdown, 0, format, tables, None);
    scan.bound(units, format)
}

/// [`posted_bound`]'s one scan, line by line, stopped and taken up again at a line start:
/// what it has counted of the lines before. A text that grows at its end (the coalescer's
/// buffer, a block at a time) is bounded by scanning its last line and what was added,
/// from the state kept at the start of that line, instead of the whole text again.
#[derive(Clone, Debug, Default)]
pub(crate) struct BoundScan {
    lines: usize,
    lead_lines: usize,
    depths: usize,
    rules: usize,
    /// The nesting a line can be at: its own lead, or the previous line's when it may be
    /// a lazy continuation (no blank line between).
    depth: usize,
    /// A fenced code block opened at the top level: its lines are posted as written.
    fence: Option<crate::text::markdown::FenceMarker>,
    /// The table being read (its lines so far) and what the tables before it are charged.
    table: TableCharge,
    table_extra: usize,
    /// The line before the next one, in bytes of the text (a `|` line right after text is
    /// not charged as a table's first line: the text is measured instead).
    last: std::ops::Range<usize>,
    /// What the bytes scanned are charged (escapes, bare URLs' labels).
    byte_charges: usize,
    /// A `|` that no charge covers: no bound.
    refused: bool,
}

impl BoundScan {
    /// Scans the lines of `markdown` from byte `from` (a line start: 0 or after a `\n`)
    /// to its end, `markdown[..from]` being what the scan read before. With `keep` and a
    /// byte `upto`, the state at the start of the last line that starts at or before
    /// `upto` (and at or after `from`) and that line's start are written there (not when
    /// the scan is refused before it): a later scan of a text that keeps this one up to
    /// `upto` takes up from there.
    pub(crate) fn scan(
        &mut self,
        markdown: &str,
        from: usize,
        format: Format,
        tables: TableMode,
        keep: Option<(&mut Option<(usize, BoundScan)>, usize)>,
    ) {
        debug_assert!(from == 0 || markdown.as_bytes()[from - 1] == b'\n');
        if self.refused {
            return;
        }
        let bytes = markdown.as_bytes();
        // The next `|` at or after the line read (none: past the end): found once per
        // `|`, not once per line.
        let mut next_pipe = memchr::memchr(b'|', &bytes[from..]).map_or(usize::MAX, |p| from + p);
        if next_pipe != usize::MAX && tables != TableMode::Code {
            self.refused = true;
            return;
        }
        let blank = |line: &[u8]| {
            let content = line.strip_suffix(b"\r").unwrap_or(line);
            content.iter().all(|&b| b == b' ' || b == b'\t')
        };
        let mut start = from;
        // Where the state is kept, and where to.
        let (mut keep, kept_at) = match keep {
            Some((keep, upto)) => {
                let upto = upto.clamp(from, bytes.len());
                let line =
                    memchr::memrchr(b'\n', &bytes[from..upto]).map_or(from, |p| from + p + 1);
                (Some(keep), line)
            }
            None => (None, usize::MAX),
        };
        // The charges of the bytes before the line kept, once its state is.
        let mut before_kept = None;
        let nls = memchr::memchr_iter(b'\n', &bytes[from..]).map(|p| from + p);
        for nl in nls.chain(std::iter::once(bytes.len())) {
            if start == kept_at
                && let Some(keep) = keep.take()
            {
                let charges = byte_charges(&bytes[from..start], format);
                let mut state = self.clone();
                state.byte_charges += charges;
                *keep = Some((start, state));
                before_kept = Some((start, charges));
            }
            let text = &markdown[start..nl];
            let line = &bytes[start..nl];
            let before = std::mem::replace(&mut self.last, start..nl);
            if next_pipe < start {
                next_pipe = memchr::memchr(b'|', &bytes[start..]).map_or(usize::MAX, |p| start + p);
            }
            start = nl + 1;
            self.lines += 1;
            if let Some(open) = &self.fence {
                if open.is_closed_by(text) {
                    self.fence = None;
                }
                continue;
            }
            let has_pipe = next_pipe < nl;
            if has_pipe || self.table.rows > 0 {
                let at = line
                    .iter()
                    .position(|&b| b != b' ' && b != b'\t')
                    .unwrap_or(line.len());
                if let Some(cells) = line[at..].strip_prefix(b"|") {
                    if self.table.rows == 0 && !blank(&bytes[before]) {
                        self.refused = true;
                        return;
                    }
                    self.table.row(cells.strip_suffix(b"\r").unwrap_or(cells));
                } else {
                    if self.table.rows > 0 {
                        // A table ends at a blank line; any other line may be read as one
                        // of its rows or as interrupting it: not charged.
                        if !blank(line) {
                            self.refused = true;
                            return;
                        }
                        self.table_extra += self.table.charge();
                        self.table = TableCharge::default();
                    }
                    if has_pipe {
                        self.refused = true;
                        return;
                    }
                }
            }
            if self.depth == 0 && matches!(line.first(), Some(b'`' | b'~')) {
                self.fence = crate::text::markdown::FenceMarker::parse_open(text);
                if self.fence.is_some() {
                    continue;
                }
            }
            let mut lead = 0usize;
            let mut at = 0;
            let mut rule_marks = false;
            for &b in line {
                match b {
                    b'\t' => lead += 4,
                    b' ' | b'>' | b'+' | b'.' | b')' | b'#' => lead += 1,
                    b'-' | b'*' | b'_' => {
                        lead += 1;
                        rule_marks = true;
                    }
                    b if b.is_ascii_digit() => lead += 1,
                    _ => break,
                }
                at += 1;
            }
            let rest = &line[at..];
            if rest.is_empty() || rest == b"\r" {
                self.rules += usize::from(rule_marks);
                if lead == 0 || line.iter().all(|&b| matches!(b, b' ' | b'\t' | b'\r')) {
                    // A blank line: what follows at lead 0 is not nested.
                    self.depth = 0;
                    continue;
                }
            }
            self.depth = self.depth.max(lead);
            self.depths += self.depth;
            self.lead_lines += usize::from(lead > 0);
        }
        self.byte_charges += match before_kept {
            Some((line, charges)) => charges + byte_charges(&bytes[line..], format),
            None => byte_charges(&bytes[from..], format),
        };
    }

    /// The bound of the text scanned, `units` long in the metric counted (see
    /// [`posted_bound`]); `None` when a `|` refused it.
    pub(crate) fn bound(&self, units: usize, format: Format) -> Option<usize> {
        if self.refused {
            return None;
        }
        let table_extra = self.table_extra
            + match self.table.rows {
                0 => 0,
                _ => self.table.charge(),
            };
        let markers = matches!(format, Format::SlackMrkdwn | Format::Whatsapp);
        let digits = self.lines.max(1).ilog10() as usize + 1;
        // Per nesting level: a marker of at most `digits + 1` more digits than written,
        // its space, and a bullet's two extra bytes.
        let level = digits + 4;
        // Every line: a blank line before it, a grapheme split; on the marker formats a
        // lazy quote line's `> `. A line with a lead may also start a list item.
        let per_line = 2 + if markers { 4 } else { 0 };
        let item = 2 * (digits + 2) + if markers { 8 } else { 0 };
        let extra = self.lines * per_line
            + self.depths * level
            + self.lead_lines * item
            + self.rules * 32
            + 8
            + table_extra
            + self.byte_charges;
        Some(units.saturating_add(extra))
    }
}

/// What [`posted_bound`] charges `bytes` (whole lines) for what a format adds per byte:
/// escapes and wrapped mentions, emphasis markers given a zero-width space (the marker
/// formats and Discord); on Slack a bare URL's label, which repeats it: its whole run of
/// non-space bytes again, with `<`, `|` and `>` (a run holding two URLs is charged twice,
/// more than needed).
fn byte_charges(bytes: &[u8], format: Format) -> usize {
    let mut extra = 0;
    if matches!(
        format,
        Format::SlackMrkdwn | Format::Whatsapp | Format::Discord
    ) {
        extra += bytes
            .iter()
            .map(|&b| usize::from(ESCAPE_GROWTH[usize::from(b)]))
            .sum::<usize>();
    }
    if matches!(format, Format::SlackMrkdwn) {
        for pattern in [&b"://"[..], &b"www."[..]] {
            for at in memchr::memmem::find_iter(bytes, pattern) {
                let is_space = |b: &u8| b.is_ascii_whitespace();
                let before = bytes[..at]
                    .iter()
                    .rev()
                    .take_while(|b| !is_space(b))
                    .count();
                let after = bytes[at..].iter().take_while(|b| !is_space(b)).count();
                extra += before + after + 3;
            }
        }
    }
    extra
}

/// What [`posted_bound`] charges a table laid out in `code` mode, read from its lines as
/// written, one scan, no render: a run of lines, each starting (after spaces and tabs)
/// with `|`, between blank lines (or the text's edges), that held no other line. Such a
/// run is at most one table (no line of it interrupts one) and a table lies within one
/// such run, so its rows are among the run's lines, split into the same cells: at
/// unescaped `|` (a `|` right after a `\\`), the leading one dropped.
///
/// The layout pads each column to its widest cell in display columns, separates cells
/// with ` | ` and draws the header's underline as wide: every rendered row is at most
/// `W` = the sum over columns of the widest cell (at least 1) plus 3 per separator, with
/// a column's widest cell taken over every line of the run (more lines and columns than
/// the table has only raise it). A cell shows its text without markup, escapes and
/// entities decoded, never more chars than written, each at most 2 columns (1 for ASCII:
/// an entity takes at least 4 chars for a wide char's 2 columns). Each row is charged
/// `W`, a line break and one unit per cell (a grapheme a cell edge may split) on top of
/// its line, which the Markdown's own length counts already (so a run that is not laid
/// out as a table is covered too); the whole table is charged its code block's fences
/// (a fence of backticks is at most one longer than a run inside a row, so at most
/// `W + 1`) and markers.
#[derive(Clone, Debug, Default)]
struct TableCharge {
    /// Lines of the run so far.
    rows: usize,
    /// Per column, the widest cell so far (display columns, bounded as above).
    widths: SmallVec<[usize; 12]>,
}

impl TableCharge {
    /// One line of the run, after its leading `|`.
    fn row(&mut self, cells: &[u8]) {
        self.rows += 1;
        let mut column = 0;
        let mut from = 0;
        let mut prev = 0u8;
        for (i, &b) in cells.iter().enumerate() {
            if b == b'|' && prev != b'\\' {
                self.cell(column, &cells[from..i]);
                column += 1;
                from = i + 1;
            }
            prev = b;
        }
        self.cell(column, &cells[from..]);
    }

    fn cell(&mut self, column: usize, cell: &[u8]) {
        let width = match cell.is_ascii() {
            true => cell.len(),
            false => 2 * cell.iter().filter(|&&b| (b as i8) >= -0x40).count(),
        };
        if self.widths.len() <= column {
            self.widths.resize(column + 1, 0);
        }
        self.widths[column] = self.widths[column].max(width);
    }

    /// What the run is charged (see [`TableCharge`]).
    fn charge(&self) -> usize {
        let columns = self.widths.len();
        let row = self.widths.iter().map(|&w| w.max(1)).sum::<usize>() + 3 * (columns - 1);
        self.rows * (row + 1 + columns) + 2 * row + 32
    }
}

/// What [`posted_bound`] charges a byte on the formats that escape or wrap it: `&` escaped
/// twice (in a bare URL's target and label), `<` `>` likewise, a mention wrapped, an
/// emphasis or code marker given a zero-width space.
const ESCAPE_GROWTH: [u8; 256] = {
    let mut t = [0u8; 256];
    t[b'&' as usize] = 10;
    t[b'<' as usize] = 8;
    t[b'>' as usize] = 8;
    t[b'@' as usize] = 6;
    t[b'#' as usize] = 6;
    t[b'!' as usize] = 6;
    t[b'*' as usize] = 3;
    t[b'_' as usize] = 3;
    t[b'~' as usize] = 3;
    t[b'`' as usize] = 3;
    t
};

/// [`cannot_grow`] on Telegram: no line outside fenced code has a `|` or a risky start.
/// The renderer opens a fence on any line [`FenceMarker::parse_open`] accepts at the start
/// of a top-level block, and closes it on the first line the marker is closed by (or runs
/// it to the end); outside a list (whose first line is risky, so the text was refused
/// already) and a quote, every such line starts a top-level block: it interrupts a
/// paragraph and ends indented code. After a `>` line, until a blank line, a fence line
/// may belong to the quote (or its lazy lines): the text is then measured.
///
/// [`FenceMarker::parse_open`]: crate::text::markdown::FenceMarker::parse_open
fn telegram_cannot_grow(markdown: &str, risky_start: impl Fn(&[u8]) -> bool) -> bool {
    use crate::text::markdown::FenceMarker;
    let bytes = markdown.as_bytes();
    let mut fence: Option<FenceMarker> = None;
    let mut quoted = false;
    let mut start = 0;
    for nl in memchr::memchr_iter(b'\n', bytes).chain(std::iter::once(bytes.len())) {
        let line = &markdown[start..nl];
        start = nl + 1;
        if let Some(open) = &fence {
            if open.is_closed_by(line) {
                fence = None;
            }
            continue;
        }
        if let Some(open) = FenceMarker::parse_open(line) {
            if quoted {
                return false;
            }
            fence = Some(open);
            continue;
        }
        let bytes = line.as_bytes();
        if memchr::memchr(b'|', bytes).is_some() || risky_start(bytes) {
            return false;
        }
        // Blank and quote lines as the renderer reads them.
        let content = line.strip_suffix('\r').unwrap_or(line);
        if content.bytes().all(|b| b == b' ' || b == b'\t') {
            quoted = false;
        } else if content.trim_start().starts_with('>') {
            quoted = true;
        }
    }
    true
}

/// How many times its Markdown length a short piece can grow once posted in `format`, at
/// most: Slack escapes `&` as `&amp;` in both the target and the label of a bare URL (ten
/// characters for one), the other formats grow by at most a rule line, list numbers and
/// the padding of a short table laid out in `code` mode.
const fn growth(format: Format) -> usize {
    match format {
        Format::Markdown => 1,
        Format::SlackMrkdwn => 10,
        _ => 4,
    }
}

/// The least room, in `metric` units of Markdown, a piece is planned with when its
/// rendering is over the limit: a bare fence marker reopened and closed (`"```\n"`,
/// `"\n```"`) around one char, so that a fence cut there is still repaired.
pub(crate) const fn min_room(metric: crate::LengthMetric) -> usize {
    2 * 4 + crate::text::limits::widest_char(metric)
}

/// The smallest limit accepted for pieces posted in `format` and counted in `metric`: the
/// smallest Markdown limit of the metric, and room for a piece planned with [`min_room`],
/// grown as much as the format can grow it (plus a link's `<`, `|`, `>`).
pub(crate) const fn min_posted_limit(format: Format, metric: crate::LengthMetric) -> usize {
    let markdown = crate::text::limits::min_limit(metric);
    if matches!(format, Format::Markdown) {
        return markdown;
    }
    let grown = growth(format) * min_room(metric) + 3;
    if grown > markdown { grown } else { markdown }
}

fn plain_rendered(text: String) -> Rendered {
    Rendered {
        text,
        entities: Vec::new(),
    }
}

/// The styled layout of `markdown`, wrapped in one expandable quote when `quote`.
fn styled(markdown: &str, tables: TableMode, quote: bool) -> styled::Styled {
    let blocks: Vec<ir::Block> = blocks::parse_document(markdown)
        .into_iter()
        .map(|l| l.block)
        .collect();
    let mut out = layout::layout(&blocks, tables, markdown.len() + markdown.len() / 8);
    if out.text.is_empty() && !markdown.trim().is_empty() {
        // Markup with nothing visible (`[]()`, an empty heading, a quote holding only an
        // empty code block): the chat would refuse an empty message, so the Markdown shows
        // as written, its line endings as every rendered text has them (`\n`).
        out = styled::Styled {
            text: markdown.trim().replace("\r\n", "\n").replace('\r', "\n"),
            spans: Vec::new(),
        };
    }
    if quote && !out.text.is_empty() {
        // Telegram refuses nested quotes: the inner ones are dropped, their text kept.
        out.spans
            .retain(|s| !matches!(s.kind, styled::SpanKind::Quote { .. }));
        out.spans.insert(
            0,
            styled::Span {
                start: 0,
                end: out.text.len(),
                kind: styled::SpanKind::Quote { expandable: true },
            },
        );
    }
    out
}

/// Markdown quoted line by line.
fn quote_markdown(body: &str) -> String {
    let mut out = String::with_capacity(body.len() + 16);
    for (i, line) in body.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push('>');
        if !line.is_empty() {
            out.push(' ');
            out.push_str(line);
        }
    }
    out
}

#[cfg(test)]
mod growth_tests {
    use super::*;
    use crate::LengthMetric;

    /// Random Markdown, list, table, rule and quote lines included, with escapes, links,
    /// bare URLs, mentions, emoji, CJK and CRLF.
    const PIECES: &[&str] = &[
        "word",
        " ",
        "\n",
        "\n\n",
        "\r\n",
        "**",
        "*",
        "_",
        "~~",
        "`",
        "```",
        "```rs\n",
        "\n```\n",
        "\n~~~\n",
        "\n````\n",
        "\n   ```\n",
        "\n```` a`b\n",
        "\u{3000}",
        "\x0c",
        "#",
        "\n#\n",
        "\n>\n",
        "[",
        "](https://x.io/a?b=1&c=2)",
        "![",
        "<",
        ">",
        "&",
        "&amp;",
        "|",
        "- ",
        "1. ",
        "2) ",
        "> ",
        "# ",
        "    ",
        "\t",
        "\\",
        "---",
        "***",
        "|---|---|",
        "<https://a.io/b>",
        "https://c.io/d_e",
        "@everyone",
        "@here",
        "日本語",
        "👩‍👩‍👧",
        "e\u{301}",
        "x",
    ];

    /// More of what a render can grow: nested and renumbered lists, deep leads, URLs
    /// full of escapes, mentions, emphasis inside words, rules.
    const GROWING: &[&str] = &[
        "\n  - ",
        "\n    1. ",
        "\n- - - ",
        "\n\t- ",
        "\n999999999. ",
        "\n1) ",
        "\n> - ",
        "\n---\n",
        "\n* * *\n",
        "\n___\n",
        "https://x.io/?a=1&b=<2>&c",
        "www.y.io/&&",
        "<https://z.io/&>",
        "a**b**c",
        "x_y_z",
        "@channel",
        "&&&",
        "<<>>",
        "# ",
        "\n#",
        "\n    code",
        "```\n",
        "\r\n\r\n",
        "\n\n",
        "\n",
        " ",
    ];

    /// The scanned bound is never below the length posted, in every format, metric and
    /// quoting, on random Markdown mixing [`PIECES`] and [`GROWING`].
    #[test]
    fn posted_bound_is_never_below_what_is_posted() {
        let mut rng = fastrand::Rng::with_seed(29);
        let mut checked = 0;
        for _ in 0..20_000 {
            let n = rng.usize(1..40);
            let md: String = (0..n)
                .map(|_| {
                    if rng.bool() {
                        PIECES[rng.usize(..PIECES.len())]
                    } else {
                        GROWING[rng.usize(..GROWING.len())]
                    }
                })
                .collect();
            for format in Format::ALL {
                for quote in [false, true] {
                    let options = RenderOptions {
                        quote,
                        ..RenderOptions::default()
                    };
                    let posted = match format {
                        Format::Markdown if !quote => md.clone(),
                        Format::TelegramHtml | Format::TelegramEntities => {
                            styled(&md, options.table_mode_for(format), quote).text
                        }
                        _ => render(&md, format, &options).text,
                    };
                    for metric in LengthMetric::ALL {
                        let tables = options.table_mode_for(format);
                        let Some(bound) = posted_bound(&md, metric.len(&md), format, quote, tables)
                        else {
                            continue;
                        };
                        checked += 1;
                        let units = metric.len(&posted);
                        assert!(
                            bound >= units,
                            "{format:?} quote {quote} {metric}: bound {bound} < {units}: {md:?}"
                        );
                    }
                }
            }
        }
        assert!(checked > 200_000, "{checked}");
    }

    /// What a table cell can hold: wide and zero-width chars, escapes (a pipe too),
    /// entities that decode to wide chars, markup, code spans with pipes, links, mentions.
    const CELLS: &[&str] = &[
        "a",
        "word",
        "Managed Postgres",
        "",
        " ",
        "日本語",
        "👩‍👩‍👧",
        "🇫🇷",
        "❤️",
        "e\u{301}",
        "\u{200b}",
        "\\|",
        "\\\\",
        "\\",
        "&amp;",
        "&#x1F600;",
        "&#12354;",
        "&lt;b&gt;",
        "&",
        "<",
        ">",
        "**b**",
        "_i_",
        "~~s~~",
        "`a|b`",
        "``x`y``",
        "```",
        "[t](https://x.io/?a=1&b=2)",
        "<https://y.io>",
        "https://z.io/p_q",
        "@everyone",
        "#",
        "$40–$400",
        "a rather long cell that pads every other row of its column",
        "日本語の長いセルは二列ずつ数えます日本語の長いセル",
    ];

    /// One random table row of `n` cells (or a different count), as a model writes it.
    fn table_row(rng: &mut fastrand::Rng, n: usize) -> String {
        let n = match rng.usize(..6) {
            0 => rng.usize(0..n + 3),
            _ => n,
        };
        let mut row = " ".repeat(rng.usize(..4));
        row.push('|');
        for c in 0..n {
            if c > 0 {
                row.push('|');
            }
            // Mostly short cells, now and then a long one: the others are padded to it.
            for _ in 0..[0, 1, 1, 1, 2, 5][rng.usize(..6)] {
                row.push_str(CELLS[rng.usize(..CELLS.len())]);
                row.push(' ');
            }
        }
        if rng.bool() {
            row.push('|');
        }
        row
    }

    /// A random table: header, delimiter row (alignments), body rows.
    fn table(rng: &mut fastrand::Rng) -> String {
        let n = rng.usize(1..6);
        let mut lines = vec![table_row(rng, n)];
        let delim: Vec<&str> = (0..n)
            .map(|_| [":---", "---:", ":-:", "---", "-"][rng.usize(..5)])
            .collect();
        lines.push(format!("|{}|", delim.join("|")));
        for _ in 0..rng.usize(..6) {
            lines.push(table_row(rng, n));
        }
        lines.join(if rng.usize(..4) == 0 { "\r\n" } else { "\n" })
    }

    /// The bound with tables in `code` mode is never below what is posted, in every
    /// format, metric and quoting, on random tables (CJK, emoji, escapes, entities, markup
    /// in cells; ragged rows; CRLF) among other blocks; and it is found (not `None`) for
    /// most texts whose tables start after a blank line.
    #[test]
    fn code_table_bound_is_never_below_what_is_posted() {
        const AROUND: &[&str] = &[
            "Some text before.",
            "- item\n- item two",
            "1. one\n2. two",
            "> quoted",
            "```\nlet x = a | b;\n```",
            "---",
            "# Heading",
            "plain | not a table",
            "    | indented | code |",
        ];
        let mut rng = fastrand::Rng::with_seed(41);
        let (mut checked, mut found) = (0, 0);
        for _ in 0..1500 {
            let mut parts = Vec::new();
            for _ in 0..rng.usize(1..5) {
                parts.push(match rng.usize(..3) {
                    0 => AROUND[rng.usize(..AROUND.len())].to_owned(),
                    _ => table(&mut rng),
                });
            }
            let sep = ["\n\n", "\n", "\n\n\n", "\r\n\r\n"][rng.usize(..4)];
            let md = parts.join(sep);
            for format in Format::ALL {
                for quote in [false, true] {
                    let options = RenderOptions {
                        quote,
                        table_mode: Some(TableMode::Code),
                        ..RenderOptions::default()
                    };
                    let posted = match format {
                        Format::Markdown if !quote => md.clone(),
                        Format::TelegramHtml | Format::TelegramEntities => {
                            styled(&md, TableMode::Code, quote).text
                        }
                        _ => render(&md, format, &options).text,
                    };
                    for metric in LengthMetric::ALL {
                        checked += 1;
                        let units = metric.len(&md);
                        let Some(bound) = posted_bound(&md, units, format, quote, TableMode::Code)
                        else {
                            continue;
                        };
                        found += 1;
                        let posted = metric.len(&posted);
                        assert!(
                            bound >= posted,
                            "{format:?} quote {quote} {metric}: bound {bound} < {posted}: {md:?}"
                        );
                    }
                }
            }
        }
        assert!(found * 4 > checked, "{found} of {checked}");
    }

    /// A scan taken up at the last line of a text it kept, on that text cut anywhere after
    /// the line's start and grown, gives the bound a scan from the start gives: the same
    /// number, or `None` alike.
    #[test]
    fn a_resumed_bound_scan_equals_a_fresh_one() {
        let mut rng = fastrand::Rng::with_seed(53);
        let mut resumed = 0;
        for _ in 0..3000 {
            let piece = |rng: &mut fastrand::Rng| -> String {
                match rng.usize(..3) {
                    0 => PIECES[rng.usize(..PIECES.len())].to_owned(),
                    1 => GROWING[rng.usize(..GROWING.len())].to_owned(),
                    _ => format!("\n\n{}\n\n", table(rng)),
                }
            };
            let first: String = (0..rng.usize(1..30)).map(|_| piece(&mut rng)).collect();
            let more: String = (0..rng.usize(0..30)).map(|_| piece(&mut rng)).collect();
            for format in [Format::SlackMrkdwn, Format::Whatsapp, Format::Discord] {
                let mut keep = None;
                let mut scan = BoundScan::default();
                let upto = rng.usize(..=first.len());
                scan.scan(&first, 0, format, TableMode::Code, Some((&mut keep, upto)));
                let Some((at, state)) = keep else {
                    assert_eq!(scan.bound(first.len(), format), None);
                    continue;
                };
                assert!(at <= upto.max(at));
                let mut cut = rng.usize(at..=first.len());
                while !first.is_char_boundary(cut) {
                    cut += 1;
                }
                let grown = format!("{}{more}", &first[..cut]);
                let mut again = state.clone();
                again.scan(&grown, at, format, TableMode::Code, None);
                let fresh = posted_bound(&grown, grown.len(), format, false, TableMode::Code);
                assert_eq!(
                    again.bound(grown.len(), format),
                    fresh,
                    "{format:?}: {grown:?}"
                );
                resumed += 1;
            }
        }
        assert!(resumed > 3000, "{resumed}");
    }

    /// The bound of a table that fits a limit comfortably is found without a render and
    /// stays within the limit; other table modes are still measured.
    #[test]
    fn code_table_bound_of_a_plain_table() {
        let md = "Compare:\n\n| Option | Latency |\n|---|---:|\n| Managed | 2 ms |\n| 自托管 | 1.5 ms |\n\nDone.";
        for format in [Format::TelegramHtml, Format::SlackMrkdwn, Format::Discord] {
            let units = LengthMetric::Utf16.len(md);
            let bound = posted_bound(md, units, format, false, TableMode::Code).unwrap();
            let posted = posted_len(md, format, &RenderOptions::default(), LengthMetric::Utf16);
            assert!(
                posted <= bound && bound <= 6 * units,
                "{format:?} {posted} {bound}"
            );
            assert_eq!(
                posted_bound(md, units, format, false, TableMode::Bullets),
                None
            );
        }
        // A `|` line right after text (no blank line) is measured.
        let md = "Text\n| a | b |\n|---|---|";
        assert_eq!(
            posted_bound(md, 30, Format::TelegramHtml, false, TableMode::Code),
            None
        );
    }

    #[test]
    fn what_cannot_grow_renders_no_longer() {
        let mut rng = fastrand::Rng::with_seed(17);
        let mut checked = 0;
        for _ in 0..20_000 {
            let n = rng.usize(1..40);
            let md: String = (0..n).map(|_| PIECES[rng.usize(..PIECES.len())]).collect();
            for format in Format::ALL {
                for quote in [false, true] {
                    if !cannot_grow(&md, format, quote) {
                        continue;
                    }
                    checked += 1;
                    let options = RenderOptions {
                        quote,
                        ..RenderOptions::default()
                    };
                    for metric in LengthMetric::ALL {
                        let posted = posted_len(&md, format, &options, metric);
                        assert!(
                            posted <= metric.len(&md),
                            "{format:?} quote {quote} {metric}: {posted} > {}: {md:?}",
                            metric.len(&md)
                        );
                    }
                }
            }
        }
        assert!(checked > 10_000, "{checked}");
    }
}
