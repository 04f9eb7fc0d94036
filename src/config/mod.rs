//! Engine configuration (SPEC §9): every option with its documented default, layered
//! resolution, clamping and validation.
//!
//! Resolution goes library defaults → [`ChannelProfile`] → per-account overrides → explicit
//! overrides. Each override layer is a [`ConfigOverrides`] whose `Some` fields replace the
//! value below; [`Config::resolve`] applies the layers in order, then clamps and validates the
//! result into a [`ResolvedConfig`], which hands the engine ready-made chunker, splitter and
//! coalescer settings and the rendered response prefix.

mod human_delay;
mod media;
mod profile;

pub use human_delay::HumanDelay;
pub use media::MediaPolicy;
pub use profile::ChannelProfile;

use std::borrow::Cow;

use crate::stage::coalescer::CoalescerConfig;
use crate::stage::prefix::{PrefixContext, prefix_cost, render_prefix};
use crate::stage::preview::render::RenderConfig;
use crate::text::chunker::{BreakPreference, ChunkerConfig};
use crate::text::limits::check_limit;
use crate::text::splitter::{SplitConfig, SplitMode};
use crate::{Error, Format, LengthMetric, RenderOptions, TableMode};

/// How the model's text is chunked.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ChunkMode {
    /// Blocks are cut by length, between `chunk_min` and `chunk_max` (the default).
    #[default]
    Length,
    /// Paragraph mode: each paragraph is emitted as soon as its blank line arrives and sent
    /// as its own message; the platform splitter splits at every paragraph first.
    Newline,
}

/// When streamed blocks are emitted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum BreakMode {
    /// While streaming; each `TextEnd` force-drains the chunker (the default).
    #[default]
    TextEnd,
    /// Nothing until `MessageEnd`, then everything.
    MessageEnd,
}

/// What happens to the model's reasoning (SPEC §8).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ReasoningMode {
    /// Hidden reasoning is dropped (the default).
    #[default]
    Off,
    /// The reasoning is sent as its own block (`Reasoning:` and the text in italics, on the
    /// reasoning lane), before the answer it belongs to: before the first send that shows
    /// answer text written after it (or at the message's end, if none does). While blocks
    /// stream in `text_end` mode, reasoning in the middle of a message goes between the
    /// answer before it and the answer after it.
    /// With a live preview, the preview shows the reasoning above the answer while it
    /// streams, and the block is sent at the message's end.
    On,
    /// Reasoning is streamed as it grows, on the reasoning lane.
    Stream,
}

/// Live preview streaming (SPEC §10).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum PreviewMode {
    /// No preview (the default).
    #[default]
    Off,
    /// The preview shows the latest cleaned text.
    Partial,
    /// The preview advances by chunker blocks.
    Block,
}

/// How a live preview reaches the platform (SPEC §10).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum PreviewTransport {
    /// A real message, created with `SendOp::Create { key }` and then edited in place with
    /// `SendOp::Edit { key }` (the default; Telegram `sendMessage` + `editMessageText`).
    #[default]
    Edit,
    /// An ephemeral draft bubble updated with `SendOp::Draft { key }` (a
    /// `sendMessageDraft`-style transport). The final is always a normal `Create`.
    Draft,
}

macro_rules! named_enum {
    ($ty:ident { $($variant:ident => $name:literal $(| $alias:literal)*),+ $(,)? }) => {
        impl $ty {
            /// The value's name as the CLI and the C ABI spell it.
            pub fn name(self) -> &'static str {
                match self {
                    $($ty::$variant => $name,)+
                }
            }

            /// Parses a name (or an accepted alias), ignoring ASCII case and surrounding
            /// whitespace.
            pub fn from_name(name: &str) -> Option<$ty> {
                let name = name.trim();
                $(
                    if name.eq_ignore_ascii_case($name)
                        $(|| name.eq_ignore_ascii_case($alias))*
                    {
                        return Some($ty::$variant);
                    }
                )+
                None
            }
        }
    };
}

named_enum!(ChunkMode { Length => "length", Newline => "newline" | "paragraph" });
named_enum!(BreakMode { TextEnd => "text_end" | "text-end", MessageEnd => "message_end" | "message-end" });
named_enum!(ReasoningMode { Off => "off", On => "on", Stream => "stream" });
named_enum!(PreviewMode { Off => "off", Partial => "partial", Block => "block" });
named_enum!(PreviewTransport { Edit => "edit" | "message", Draft => "draft" });

/// The smallest text limit (and preview limit, chunk max) accepted in any metric: 15, in
/// graphemes. The smallest in a given metric is [`LengthMetric::min_limit`] (24 chars, 29
/// UTF-16 units, 49 bytes, 15 graphemes): room to close and reopen a code fence around the
/// widest grapheme cluster kept whole. Smaller limits are an [`Error::InvalidConfig`].
pub const MIN_TEXT_LIMIT: usize = LengthMetric::Graphemes.min_limit();

/// The smallest line cap accepted: a reopened fence line, one line of content and a closing
/// fence line.
pub const MIN_MAX_LINES: usize = crate::text::limits::MIN_LINES;

/// The longest idle time of the coalescer, in ms; larger values are clamped to it.
pub const MAX_IDLE_MS: u64 = 60_000;

/// The shortest preview throttle, in ms; smaller values are raised to it.
pub const MIN_PREVIEW_THROTTLE_MS: u64 = 250;

/// The longest preview throttle, in ms; larger values are clamped to it.
pub const MAX_PREVIEW_THROTTLE_MS: u64 = 60_000;

/// Every engine option, with its value.
///
/// [`Config::default`] holds the library defaults on the generic channel;
/// [`Config::for_channel`] layers a channel profile over them. The fields are plain values,
/// not yet clamped or checked: [`Config::validate`] (or [`Config::resolve`]) does that.
///
/// ```
/// use replystream::{BreakMode, ChannelProfile, Config, LengthMetric};
///
/// let config = Config {
///     chunk_min: 300,
///     chunk_max: 5000, // above Telegram's limit: lowered to it, and min in proportion
///     break_mode: BreakMode::MessageEnd,
///     ..Config::for_channel(&ChannelProfile::TELEGRAM)
/// };
/// let resolved = config.validate().expect("a valid configuration");
/// assert_eq!(resolved.config().metric, LengthMetric::Utf16);
/// assert_eq!((resolved.config().chunk_min, resolved.config().chunk_max), (240, 4000));
///
/// // Too small to close and reopen a code fence around an emoji: refused, with the
/// // smallest value that works.
/// let broken = Config { text_limit: 3, ..Config::default() };
/// assert!(broken
///     .validate()
///     .unwrap_err()
///     .to_string()
///     .starts_with("invalid configuration: text_limit must be at least 24, counted in chars (got 3)"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// The channel profile's name, for reference (`"generic"` by default).
    pub channel: &'static str,
    /// The longest message text the platform accepts, in `metric` units (4000).
    pub text_limit: usize,
    /// How the platform counts length (`chars`).
    pub metric: LengthMetric,
    /// The longest text a live preview may show, in `metric` units (4000; Telegram 4096).
    pub preview_limit: usize,
    /// A soft cap on lines per message (`None`; Discord 17).
    pub max_lines: Option<usize>,
    /// The chunker emits no block (unless forced) before the buffer holds this many units
    /// (800).
    pub chunk_min: usize,
    /// No block is longer than this many units (1200).
    pub chunk_max: usize,
    /// Where the chunker prefers to cut (paragraph); also picks the coalescer's joiner.
    pub break_preference: BreakPreference,
    /// Length or paragraph chunking (`Length`).
    pub chunk_mode: ChunkMode,
    /// When blocks are emitted (`TextEnd`).
    pub break_mode: BreakMode,
    /// Blocks are sent while the model writes (`true`); when `false`, all text is delivered
    /// once, at `Finish`, as final messages.
    pub block_streaming: bool,
    /// The coalescer's minimum (`None`: the channel's coalesce minimum, else `chunk_min`).
    pub coalesce_min: Option<usize>,
    /// The coalescer's maximum (`None`: the text limit).
    pub coalesce_max: Option<usize>,
    /// The coalescer's idle time in ms (1000; 0 = no idle timer; at most 60 000).
    pub coalesce_idle_ms: u64,
    /// The pause between block sends (`Off`).
    pub human_delay: HumanDelay,
    /// How long a send may stay unacknowledged, in ms (15 000; 0 = no timeout).
    pub delivery_timeout_ms: u64,
    /// The response prefix template (`None`), e.g. `"[{model}]"`; see
    /// [`render_prefix`].
    pub response_prefix: Option<String>,
    /// Apply the prefix to every message, not only the first of the turn (`false`).
    pub prefix_every_message: bool,
    /// The values the prefix template refers to.
    pub prefix_context: PrefixContext,
    /// What happens to reasoning (`Off`).
    pub reasoning: ReasoningMode,
    /// Only text inside `<final>…</final>` is the answer (`false`).
    pub require_final_tag: bool,
    /// The silent token (`Some("NO_REPLY")`; `None` disables it).
    pub silent_token: Option<String>,
    /// The heartbeat token (`Some("HEARTBEAT_OK")`; `None` disables it).
    pub heartbeat_token: Option<String>,
    /// Live preview streaming (`Off`).
    pub preview: PreviewMode,
    /// At most one preview edit per this many ms (1000; at least 250, at most 60 000).
    pub preview_throttle_ms: u64,
    /// Appended to the preview while streaming (`Some("█")`; `None` for no cursor).
    pub preview_cursor: Option<String>,
    /// The first preview waits for this many units of text (30).
    pub preview_min_initial_units: usize,
    /// The draft chunker's minimum in preview `Block` mode (200).
    pub preview_block_min: usize,
    /// The draft chunker's maximum in preview `Block` mode (800).
    pub preview_block_max: usize,
    /// How the preview reaches the platform: an edited message or a draft bubble (`Edit`).
    pub preview_transport: PreviewTransport,
    /// The reasoning shown at the top of a preview is written as an expandable block quote
    /// (the channel profile's `expandable_quote`: Telegram yes, others no); otherwise as a
    /// plain Markdown block quote.
    pub preview_expandable_quote: bool,
    /// Which media references written by the model may be sent (public `https`/`http` URLs;
    /// no local path until roots are configured). See [`MediaPolicy`].
    pub media: MediaPolicy,
    /// The format each send's text is rendered in (SPEC §16; the channel profile's
    /// `format`: `markdown` by default). Refused at validation where the channel cannot
    /// show it (see [`Format::usable_on`]).
    pub format: Format,
    /// How tables show in a format without tables (`None`: the format's default, `code`;
    /// `native` only where the format renders tables).
    pub table_mode: Option<TableMode>,
    /// Discord: let `@everyone` / `@here` written by the model ping (`false`).
    pub allow_mass_mentions: bool,
    /// The longest caption a media message carries, in `metric` units (the profile's:
    /// Telegram and WhatsApp 1024, else `None`); a longer text goes as its own message
    /// before the media.
    pub caption_limit: Option<usize>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            channel: ChannelProfile::GENERIC.name,
            text_limit: ChannelProfile::GENERIC.text_limit,
            metric: ChannelProfile::GENERIC.metric,
            preview_limit: ChannelProfile::GENERIC.preview_limit,
            max_lines: None,
            chunk_min: 800,
            chunk_max: 1200,
            break_preference: BreakPreference::Paragraph,
            chunk_mode: ChunkMode::Length,
            break_mode: BreakMode::TextEnd,
            block_streaming: true,
            coalesce_min: None,
            coalesce_max: None,
            coalesce_idle_ms: 1000,
            human_delay: HumanDelay::Off,
            delivery_timeout_ms: 15_000,
            response_prefix: None,
            prefix_every_message: false,
            prefix_context: PrefixContext::default(),
            reasoning: ReasoningMode::Off,
            require_final_tag: false,
            silent_token: Some("NO_REPLY".to_owned()),
            heartbeat_token: Some("HEARTBEAT_OK".to_owned()),
            preview: PreviewMode::Off,
            preview_throttle_ms: 1000,
            preview_cursor: Some("█".to_owned()),
            preview_min_initial_units: 30,
            preview_block_min: 200,
            preview_block_max: 800,
            preview_transport: PreviewTransport::Edit,
            preview_expandable_quote: ChannelProfile::GENERIC.expandable_quote,
            media: MediaPolicy::default(),
            format: ChannelProfile::GENERIC.format,
            table_mode: None,
            allow_mass_mentions: false,
            caption_limit: ChannelProfile::GENERIC.caption_limit,
        }
    }
}

/// One layer of overrides: each `Some` field replaces the value of the layer below.
///
/// Fields whose [`Config`] value is itself an `Option` are `Option<Option<…>>` here: `None`
/// leaves the value alone, `Some(None)` clears it (e.g. disables the silent token or removes
/// the line cap), `Some(Some(v))` sets it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ConfigOverrides {
    /// See [`Config::text_limit`].
    pub text_limit: Option<usize>,
    /// See [`Config::metric`].
    pub metric: Option<LengthMetric>,
    /// See [`Config::preview_limit`].
    pub preview_limit: Option<usize>,
    /// See [`Config::max_lines`].
    pub max_lines: Option<Option<usize>>,
    /// See [`Config::chunk_min`].
    pub chunk_min: Option<usize>,
    /// See [`Config::chunk_max`].
    pub chunk_max: Option<usize>,
    /// See [`Config::break_preference`].
    pub break_preference: Option<BreakPreference>,
    /// See [`Config::chunk_mode`].
    pub chunk_mode: Option<ChunkMode>,
    /// See [`Config::break_mode`].
    pub break_mode: Option<BreakMode>,
    /// See [`Config::block_streaming`].
    pub block_streaming: Option<bool>,
    /// See [`Config::coalesce_min`].
    pub coalesce_min: Option<Option<usize>>,
    /// See [`Config::coalesce_max`].
    pub coalesce_max: Option<Option<usize>>,
    /// See [`Config::coalesce_idle_ms`].
    pub coalesce_idle_ms: Option<u64>,
    /// See [`Config::human_delay`].
    pub human_delay: Option<HumanDelay>,
    /// See [`Config::delivery_timeout_ms`].
    pub delivery_timeout_ms: Option<u64>,
    /// See [`Config::response_prefix`].
    pub response_prefix: Option<Option<String>>,
    /// See [`Config::prefix_every_message`].
    pub prefix_every_message: Option<bool>,
    /// See [`PrefixContext::model`].
    pub model: Option<Option<String>>,
    /// See [`PrefixContext::provider`].
    pub provider: Option<Option<String>>,
    /// See [`PrefixContext::thinking_level`].
    pub thinking_level: Option<Option<String>>,
    /// See [`PrefixContext::identity_name`].
    pub identity_name: Option<Option<String>>,
    /// See [`Config::reasoning`].
    pub reasoning: Option<ReasoningMode>,
    /// See [`Config::require_final_tag`].
    pub require_final_tag: Option<bool>,
    /// See [`Config::silent_token`].
    pub silent_token: Option<Option<String>>,
    /// See [`Config::heartbeat_token`].
    pub heartbeat_token: Option<Option<String>>,
    /// See [`Config::preview`].
    pub preview: Option<PreviewMode>,
    /// See [`Config::preview_throttle_ms`].
    pub preview_throttle_ms: Option<u64>,
    /// See [`Config::preview_cursor`].
    pub preview_cursor: Option<Option<String>>,
    /// See [`Config::preview_min_initial_units`].
    pub preview_min_initial_units: Option<usize>,
    /// See [`Config::preview_block_min`].
    pub preview_block_min: Option<usize>,
    /// See [`Config::preview_block_max`].
    pub preview_block_max: Option<usize>,
    /// See [`Config::preview_transport`].
    pub preview_transport: Option<PreviewTransport>,
    /// See [`Config::preview_expandable_quote`].
    pub preview_expandable_quote: Option<bool>,
    /// See [`MediaPolicy::roots`] (replaces the list below).
    pub media_roots: Option<Vec<String>>,
    /// See [`MediaPolicy::allow_http`].
    pub media_allow_http: Option<bool>,
    /// See [`Config::format`].
    pub format: Option<Format>,
    /// See [`Config::table_mode`].
    pub table_mode: Option<Option<TableMode>>,
    /// See [`Config::allow_mass_mentions`].
    pub allow_mass_mentions: Option<bool>,
    /// See [`Config::caption_limit`].
    pub caption_limit: Option<Option<usize>>,
}

impl Config {
    /// The library defaults with `profile` layered over them: the channel's name, text limit,
    /// metric, preview limit, line cap and coalescer defaults.
    pub fn for_channel(profile: &ChannelProfile) -> Config {
        let mut config = Config {
            channel: profile.name,
            text_limit: profile.text_limit,
            metric: profile.metric,
            preview_limit: profile.preview_limit,
            max_lines: profile.max_lines,
            preview_expandable_quote: profile.expandable_quote,
            format: profile.format,
            caption_limit: profile.caption_limit,
            ..Config::default()
        };
        if let Some(min) = profile.coalesce_min {
            config.coalesce_min = Some(min);
        }
        if let Some(idle) = profile.coalesce_idle_ms {
            config.coalesce_idle_ms = idle;
        }
        config
    }

    /// Applies one override layer: every `Some` field of `overrides` replaces the value here.
    pub fn apply(&mut self, overrides: &ConfigOverrides) {
        fn set<T: Clone>(slot: &mut T, value: &Option<T>) {
            if let Some(v) = value {
                *slot = v.clone();
            }
        }
        let o = overrides;
        set(&mut self.text_limit, &o.text_limit);
        set(&mut self.metric, &o.metric);
        set(&mut self.preview_limit, &o.preview_limit);
        set(&mut self.max_lines, &o.max_lines);
        set(&mut self.chunk_min, &o.chunk_min);
        set(&mut self.chunk_max, &o.chunk_max);
        set(&mut self.break_preference, &o.break_preference);
        set(&mut self.chunk_mode, &o.chunk_mode);
        set(&mut self.break_mode, &o.break_mode);
        set(&mut self.block_streaming, &o.block_streaming);
        set(&mut self.coalesce_min, &o.coalesce_min);
        set(&mut self.coalesce_max, &o.coalesce_max);
        set(&mut self.coalesce_idle_ms, &o.coalesce_idle_ms);
        set(&mut self.human_delay, &o.human_delay);
        set(&mut self.delivery_timeout_ms, &o.delivery_timeout_ms);
        set(&mut self.response_prefix, &o.response_prefix);
        set(&mut self.prefix_every_message, &o.prefix_every_message);
        set(&mut self.prefix_context.model, &o.model);
        set(&mut self.prefix_context.provider, &o.provider);
        set(&mut self.prefix_context.thinking_level, &o.thinking_level);
        set(&mut self.prefix_context.identity_name, &o.identity_name);
        set(&mut self.reasoning, &o.reasoning);
        set(&mut self.require_final_tag, &o.require_final_tag);
        set(&mut self.silent_token, &o.silent_token);
        set(&mut self.heartbeat_token, &o.heartbeat_token);
        set(&mut self.preview, &o.preview);
        set(&mut self.preview_throttle_ms, &o.preview_throttle_ms);
        set(&mut self.preview_cursor, &o.preview_cursor);
        set(
            &mut self.preview_min_initial_units,
            &o.preview_min_initial_units,
        );
        set(&mut self.preview_block_min, &o.preview_block_min);
        set(&mut self.preview_block_max, &o.preview_block_max);
        set(&mut self.preview_transport, &o.preview_transport);
        set(
            &mut self.preview_expandable_quote,
            &o.preview_expandable_quote,
        );
        set(&mut self.media.roots, &o.media_roots);
        set(&mut self.media.allow_http, &o.media_allow_http);
        set(&mut self.format, &o.format);
        set(&mut self.table_mode, &o.table_mode);
        set(&mut self.allow_mass_mentions, &o.allow_mass_mentions);
        set(&mut self.caption_limit, &o.caption_limit);
    }

    /// Resolves a configuration: library defaults, then `profile`, then each layer of
    /// `overrides` in order (per-account first, explicit last: later layers win), then
    /// [`Config::validate`].
    pub fn resolve(
        profile: &ChannelProfile,
        overrides: &[&ConfigOverrides],
    ) -> Result<ResolvedConfig, Error> {
        let mut config = Config::for_channel(profile);
        for layer in overrides {
            config.apply(layer);
        }
        config.validate()
    }

    /// Clamps every value to its sane range and checks what cannot be clamped.
    ///
    /// Errors ([`Error::InvalidConfig`], naming the field and the smallest value that
    /// works):
    /// - `text_limit` or `preview_limit` below the metric's smallest limit,
    ///   [`LengthMetric::min_limit`] (24 chars, 29 UTF-16 units, 49 bytes, 15 graphemes:
    ///   room to close and reopen a code fence around the widest grapheme cluster kept
    ///   whole);
    /// - a rendered `response_prefix` so long that less than that remains of `text_limit`;
    /// - with a rendered `format`, a `text_limit` (less the prefix's room) below the
    ///   smallest limit that keeps every piece within it once rendered: the metric's smallest
    ///   Markdown limit, and a piece cut to the least room (a bare fence reopened and closed
    ///   around one char: 8 units and the widest char) grown as much as the format grows
    ///   text (Slack ten times, `&` in a bare URL being `&amp;` twice; the others four
    ///   times), plus 3 (93 characters on Slack, 43 UTF-16 units on Telegram);
    /// - `chunk_max` or `preview_block_max` (once raised to their `min`) below that limit;
    /// - `max_lines` below [`MIN_MAX_LINES`] (0 included), or, with a response prefix, not
    ///   above it (the prefix goes on a line of its own before a block construct, and the
    ///   splitter and the coalescer keep a line for it);
    /// - a custom `human_delay` bound above [`HumanDelay::CUSTOM_LIMIT_MS`];
    /// - a `silent_token` or `heartbeat_token` that is empty or only whitespace (use `None`
    ///   to disable a token);
    /// - with a preview on, a `preview_limit` too small for a tail window's header, a
    ///   reopened and a closed fence line, the `preview_cursor` and one character;
    /// - a media root (`media.roots[i]`) that is empty, not absolute (`/…` or `C:\…`), holds
    ///   a `..` component, a control character or (POSIX) a backslash, or is the top of the
    ///   file system. Valid roots are written resolved (see [`MediaPolicy::roots`]).
    ///
    /// Clamps, in this order, with the *text budget* being `text_limit` minus the room the
    /// response prefix takes (its length plus a joining space or line break, see
    /// `prefix_cost`), so that a prefixed message still fits:
    /// - chunk: `min >= 1`, `max >= min`; when the budget forces `max` down, `min` comes
    ///   down in proportion (800/1200 under a budget of 500 gives 333/500), so that cuts
    ///   still fall at breaks rather than at `max` mid-word;
    /// - coalesce: the same, with `min` defaulting to the channel's coalesce minimum or else
    ///   the clamped `chunk_min`, and `max` defaulting to the budget;
    /// - `coalesce_idle_ms <= 60 000`;
    /// - `preview_throttle_ms` within [250, 60 000];
    /// - preview block min/max like the chunk values, within `preview_limit`;
    ///   `preview_min_initial_units <= preview_limit`.
    ///
    /// Tokens are trimmed; an empty prefix or cursor becomes `None`.
    pub fn validate(&self) -> Result<ResolvedConfig, Error> {
        let mut c = self.clone();
        check_limit("text_limit", c.text_limit, c.metric)?;
        check_limit("preview_limit", c.preview_limit, c.metric)?;
        if let Some(lines) = c.max_lines
            && lines < MIN_MAX_LINES
        {
            return Err(invalid(format!(
                "max_lines must be at least {MIN_MAX_LINES} (got {lines}); use None for no cap"
            )));
        }
        if let HumanDelay::Custom { min_ms, max_ms } = c.human_delay
            && (min_ms > HumanDelay::CUSTOM_LIMIT_MS || max_ms > HumanDelay::CUSTOM_LIMIT_MS)
        {
            return Err(invalid(format!(
                "human_delay custom bounds must be at most {} ms (got {min_ms}..{max_ms})",
                HumanDelay::CUSTOM_LIMIT_MS
            )));
        }
        c.media = std::mem::take(&mut c.media).checked()?;
        if !c.format.usable_on(c.channel) {
            return Err(invalid(format!(
                "format {} cannot be shown on channel {} (use {} or plain)",
                c.format.name(),
                c.channel,
                Format::for_channel(c.channel).name()
            )));
        }
        if c.table_mode == Some(TableMode::Native) && !c.format.has_tables() {
            return Err(invalid(format!(
                "table_mode native needs a format that shows tables; {} shows none (use code, \
                 bullets or off)",
                c.format.name()
            )));
        }
        c.silent_token = checked_token("silent_token", c.silent_token)?;
        c.heartbeat_token = checked_token("heartbeat_token", c.heartbeat_token)?;
        c.preview_cursor = c.preview_cursor.filter(|s| !s.is_empty());

        let prefix = c
            .response_prefix
            .as_deref()
            .map(|t| render_prefix(t, &c.prefix_context))
            .filter(|p| !p.trim().is_empty());
        if prefix.is_none() {
            c.response_prefix = None;
        }
        let render = RenderOptions {
            table_mode: c.table_mode,
            allow_mass_mentions: c.allow_mass_mentions,
            quote: false,
        };
        // The prefix's room as posted too (Slack's `&amp;`), and the joining char.
        let cost = prefix.as_deref().map_or(0, |p| {
            let posted = match c.format {
                Format::Markdown => 0,
                f => crate::posted_len(p, f, &render, c.metric) + 1,
            };
            prefix_cost(p, c.metric).max(posted)
        });
        let budget = c.text_limit.saturating_sub(cost);
        let smallest = c.metric.min_limit();
        if budget < smallest {
            return Err(invalid(format!(
                "response_prefix takes {cost} of the {} units of text_limit; at least \
                 {smallest} must remain (a text_limit of at least {} with this prefix)",
                c.text_limit,
                smallest + cost
            )));
        }

        let posted_min = crate::render::min_posted_limit(c.format, c.metric);
        if budget < posted_min {
            return Err(invalid(format!(
                "text_limit must be at least {} for format {}, counted in {} (got {}{}): a \
                 piece cut to the least room, grown as much as rendering can grow it, must \
                 still fit",
                posted_min + cost,
                c.format.name(),
                c.metric,
                c.text_limit,
                if cost > 0 {
                    ", with the response prefix"
                } else {
                    ""
                }
            )));
        }

        // Before a block construct the prefix takes a line of its own: keep one for it.
        let max_lines = match (c.max_lines, &prefix) {
            (Some(lines), Some(_)) => {
                if lines <= MIN_MAX_LINES {
                    return Err(invalid(format!(
                        "max_lines must be at least {} with a response_prefix (got {lines}): \
                         the prefix goes on a line of its own before a code fence, a table or \
                         a list, and a piece needs {MIN_MAX_LINES} more",
                        MIN_MAX_LINES + 1
                    )));
                }
                Some(lines - 1)
            }
            (lines, _) => lines,
        };
        (c.chunk_min, c.chunk_max) = clamp_range(c.chunk_min, c.chunk_max, budget);
        check_limit("chunk_max", c.chunk_max, c.metric)?;
        let coalesce_min = c.coalesce_min.unwrap_or(c.chunk_min);
        let coalesce_max = c.coalesce_max.unwrap_or(budget);
        let (coalesce_min, coalesce_max) = clamp_range(coalesce_min, coalesce_max, budget);
        c.coalesce_min = Some(coalesce_min);
        c.coalesce_max = Some(coalesce_max);
        c.coalesce_idle_ms = c.coalesce_idle_ms.min(MAX_IDLE_MS);
        c.preview_throttle_ms = c
            .preview_throttle_ms
            .clamp(MIN_PREVIEW_THROTTLE_MS, MAX_PREVIEW_THROTTLE_MS);
        (c.preview_block_min, c.preview_block_max) =
            clamp_range(c.preview_block_min, c.preview_block_max, c.preview_limit);
        check_limit("preview_block_max", c.preview_block_max, c.metric)?;
        c.preview_min_initial_units = c.preview_min_initial_units.min(c.preview_limit);
        if c.preview != PreviewMode::Off {
            let floor = RenderConfig::overhead_floor(c.metric, c.preview_cursor.as_deref());
            if c.preview_limit < floor {
                return Err(invalid(format!(
                    "preview_limit {} leaves no room for a live preview's tail window with \
                     its header, fence lines and preview_cursor: at least {floor} units are \
                     needed (shorten preview_cursor or raise preview_limit)",
                    c.preview_limit
                )));
            }
        }

        let flush_on_paragraph = c.chunk_mode == ChunkMode::Newline;
        let chunker = ChunkerConfig {
            min: c.chunk_min,
            max: c.chunk_max,
            break_preference: c.break_preference,
            flush_on_paragraph,
            metric: c.metric,
        };
        let preview_chunker = ChunkerConfig {
            min: c.preview_block_min,
            max: c.preview_block_max,
            flush_on_paragraph: false,
            ..chunker
        };
        let splitter = SplitConfig {
            limit: budget,
            metric: c.metric,
            mode: match c.chunk_mode {
                ChunkMode::Length => SplitMode::Length,
                ChunkMode::Newline => SplitMode::Newline,
            },
            max_lines,
            format: c.format,
            render,
        };
        let coalescer = CoalescerConfig {
            min: coalesce_min,
            max: coalesce_max,
            idle_ms: c.coalesce_idle_ms,
            break_preference: c.break_preference,
            flush_on_enqueue: flush_on_paragraph,
            metric: c.metric,
            max_lines,
            format: c.format,
            render: splitter.render,
        };
        Ok(ResolvedConfig {
            config: c,
            response_prefix: prefix,
            text_budget: budget,
            chunker,
            preview_chunker,
            splitter,
            coalescer,
        })
    }
}

fn invalid(message: String) -> Error {
    Error::InvalidConfig(Cow::Owned(message))
}

/// `1 <= min <= max <= limit`, raising `max` to `min` first (the SPEC's `max >= min`).
/// When `limit` forces `max` down, `min` comes down in proportion, so that the range keeps
/// its shape (a `min` equal to `max` would make every cut a hard cut at `max`). `limit`
/// must be at least 1.
fn clamp_range(min: usize, max: usize, limit: usize) -> (usize, usize) {
    let min = min.max(1);
    let max = max.max(min);
    if max <= limit {
        return (min, max);
    }
    // `min * limit / max`, in u128 so that it cannot overflow.
    let scaled = (min as u128 * limit as u128 / max as u128) as usize;
    (scaled.clamp(1, limit), limit)
}

fn checked_token(field: &str, token: Option<String>) -> Result<Option<String>, Error> {
    match token {
        None => Ok(None),
        Some(t) if t.trim().is_empty() => Err(invalid(format!(
            "{field} must not be empty; use None to disable it"
        ))),
        Some(t) => Ok(Some(t.trim().to_owned())),
    }
}

/// A validated, clamped configuration, with the settings each stage needs ready-made.
///
/// Built only by [`Config::validate`] or [`Config::resolve`]; immutable afterwards, so every
/// invariant listed there holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResolvedConfig {
    config: Config,
    response_prefix: Option<String>,
    text_budget: usize,
    chunker: ChunkerConfig,
    preview_chunker: ChunkerConfig,
    splitter: SplitConfig,
    coalescer: CoalescerConfig,
}

impl ResolvedConfig {
    /// The clamped values. `coalesce_min` and `coalesce_max` are always `Some` here, the
    /// tokens are trimmed, and `response_prefix` is `None` when it renders empty.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The rendered response prefix, if any (see [`render_prefix`]).
    pub fn response_prefix(&self) -> Option<&str> {
        self.response_prefix.as_deref()
    }

    /// The room left for a message's text once the response prefix is applied, in the
    /// channel's metric: `text_limit` minus `prefix_cost`, or
    /// `text_limit` without a prefix. Chunk, coalesce and split limits never exceed it.
    pub fn text_budget(&self) -> usize {
        self.text_budget
    }

    /// The block chunker's settings.
    pub fn chunker(&self) -> ChunkerConfig {
        self.chunker
    }

    /// The draft chunker's settings for preview `Block` mode (within `preview_limit`).
    pub fn preview_chunker(&self) -> ChunkerConfig {
        self.preview_chunker
    }

    /// The platform splitter's settings: limit = [`ResolvedConfig::text_budget`], the
    /// channel's metric and line cap, and `Newline` mode in paragraph chunk mode.
    pub fn splitter(&self) -> SplitConfig {
        self.splitter
    }

    /// The coalescer's settings.
    pub fn coalescer(&self) -> CoalescerConfig {
        self.coalescer
    }

    /// The options every send is rendered with (table mode, mass mentions).
    pub fn render_options(&self) -> RenderOptions {
        RenderOptions {
            table_mode: self.config.table_mode,
            allow_mass_mentions: self.config.allow_mass_mentions,
            quote: false,
        }
    }
}

impl Default for ResolvedConfig {
    /// The library defaults on the generic channel, resolved.
    fn default() -> Self {
        match Config::default().validate() {
            Ok(resolved) => resolved,
            // The defaults are valid; this arm is never taken.
            Err(_) => unreachable!("the default configuration is valid"),
        }
    }
}

#[cfg(test)]
mod tests;
