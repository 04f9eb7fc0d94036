//! Channel profiles: what each chat platform allows and how it counts (SPEC §9).

use crate::{Format, LengthMetric};

/// The built-in defaults of one chat platform: its text limit, how it counts length, and the
/// streaming defaults that suit it.
///
/// A profile is the second layer of configuration, between the library defaults and the
/// per-account and explicit overrides (see [`Config::resolve`](crate::Config::resolve)).
///
/// A profile says nothing about live previews: whether the host can edit a message it sent
/// depends on how it reaches the platform (a bot, a webhook, a bridge), not on the platform
/// alone, and previews are off unless asked for ([`Config::preview`](crate::Config::preview)).
/// A preview runs on any channel, within the channel's `preview_limit`; a host that cannot
/// edit messages leaves previews off. (An earlier `supports_preview` flag claimed Discord
/// could not edit, which is wrong, and nothing read it.)
///
/// ```compile_fail
/// // The flag is gone: nothing decides previews per platform.
/// let _ = replystream::ChannelProfile::DISCORD.supports_preview;
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ChannelProfile {
    /// The channel's name, lowercase (`"telegram"`, `"discord"`, …).
    pub name: &'static str,
    /// The longest message text the platform accepts, in `metric` units.
    pub text_limit: usize,
    /// How the platform counts the length of a text.
    pub metric: LengthMetric,
    /// The longest text a live preview message may show, in `metric` units. Equal to
    /// `text_limit` except on Telegram, whose edited messages may hold 4096 units.
    pub preview_limit: usize,
    /// A soft cap on lines per message (Discord: 17), `None` for no cap.
    pub max_lines: Option<usize>,
    /// The coalescer's default minimum for this channel, `None` to use the chunk minimum.
    pub coalesce_min: Option<usize>,
    /// The coalescer's default idle time in ms for this channel, `None` for the library
    /// default (1000 ms).
    pub coalesce_idle_ms: Option<u64>,
    /// Whether the platform can show a collapsed, expandable block quote (Telegram's
    /// `<blockquote expandable>`): the default of `Config::preview_expandable_quote`, which
    /// decides how reasoning is quoted at the top of a live preview.
    pub expandable_quote: bool,
    /// The format messages are posted in by default (SPEC §16): Telegram HTML, Discord's
    /// Markdown, Slack mrkdwn, WhatsApp's markers, plain text for Signal and iMessage,
    /// Markdown elsewhere.
    pub format: Format,
    /// The longest caption a media message may carry, in `metric` units (Telegram and
    /// WhatsApp: 1024); `None` where a caption may be as long as a message. Text that does
    /// not fit goes as its own message before the media.
    pub caption_limit: Option<usize>,
}

impl ChannelProfile {
    /// Telegram: 4000 UTF-16 units per message, 4096 in an edited preview.
    pub const TELEGRAM: ChannelProfile = ChannelProfile {
        name: "telegram",
        text_limit: 4000,
        metric: LengthMetric::Utf16,
        preview_limit: 4096,
        max_lines: None,
        coalesce_min: None,
        coalesce_idle_ms: None,
        expandable_quote: true,
        format: Format::TelegramHtml,
        caption_limit: Some(1024),
    };

    /// Discord: 2000 characters and at most 17 lines per message; coalesce to 1500.
    pub const DISCORD: ChannelProfile = ChannelProfile {
        name: "discord",
        text_limit: 2000,
        metric: LengthMetric::Chars,
        preview_limit: 2000,
        max_lines: Some(17),
        coalesce_min: Some(1500),
        coalesce_idle_ms: Some(1000),
        expandable_quote: false,
        format: Format::Discord,
        caption_limit: None,
    };

    /// Slack: 4000 characters; coalesce to 1500.
    pub const SLACK: ChannelProfile = ChannelProfile {
        name: "slack",
        text_limit: 4000,
        metric: LengthMetric::Chars,
        preview_limit: 4000,
        max_lines: None,
        coalesce_min: Some(1500),
        coalesce_idle_ms: Some(1000),
        expandable_quote: false,
        format: Format::SlackMrkdwn,
        caption_limit: None,
    };

    /// Signal: the same limits as Slack (4000 characters; coalesce to 1500).
    pub const SIGNAL: ChannelProfile = ChannelProfile {
        name: "signal",
        format: Format::Plain,
        ..Self::SLACK
    };

    /// WhatsApp: 4000 UTF-16 units.
    pub const WHATSAPP: ChannelProfile = ChannelProfile {
        name: "whatsapp",
        text_limit: 4000,
        metric: LengthMetric::Utf16,
        preview_limit: 4000,
        max_lines: None,
        coalesce_min: None,
        coalesce_idle_ms: None,
        expandable_quote: false,
        format: Format::Whatsapp,
        caption_limit: Some(1024),
    };

    /// iMessage: 4000 UTF-16 units.
    pub const IMESSAGE: ChannelProfile = ChannelProfile {
        name: "imessage",
        text_limit: 4000,
        metric: LengthMetric::Utf16,
        preview_limit: 4000,
        max_lines: None,
        coalesce_min: None,
        coalesce_idle_ms: None,
        expandable_quote: false,
        format: Format::Plain,
        caption_limit: None,
    };

    /// Google Chat: 4000 UTF-16 units.
    pub const GOOGLECHAT: ChannelProfile = ChannelProfile {
        name: "googlechat",
        text_limit: 4000,
        metric: LengthMetric::Utf16,
        preview_limit: 4000,
        max_lines: None,
        coalesce_min: None,
        coalesce_idle_ms: None,
        expandable_quote: false,
        format: Format::Markdown,
        caption_limit: None,
    };

    /// Any other platform (the default): 4000 characters.
    pub const GENERIC: ChannelProfile = ChannelProfile {
        name: "generic",
        text_limit: 4000,
        metric: LengthMetric::Chars,
        preview_limit: 4000,
        max_lines: None,
        coalesce_min: None,
        coalesce_idle_ms: None,
        expandable_quote: false,
        format: Format::Markdown,
        caption_limit: None,
    };

    /// Every built-in profile, the default (`generic`) last.
    pub const ALL: [ChannelProfile; 8] = [
        ChannelProfile::TELEGRAM,
        ChannelProfile::DISCORD,
        ChannelProfile::SLACK,
        ChannelProfile::SIGNAL,
        ChannelProfile::WHATSAPP,
        ChannelProfile::IMESSAGE,
        ChannelProfile::GOOGLECHAT,
        ChannelProfile::GENERIC,
    ];

    /// The names of every built-in profile, in the order of [`ChannelProfile::ALL`].
    pub const NAMES: [&'static str; 8] = [
        "telegram",
        "discord",
        "slack",
        "signal",
        "whatsapp",
        "imessage",
        "googlechat",
        "generic",
    ];

    /// The profile called `name`, ignoring case and surrounding whitespace.
    pub fn by_name(name: &str) -> Option<ChannelProfile> {
        let name = name.trim();
        ChannelProfile::ALL
            .into_iter()
            .find(|p| p.name.eq_ignore_ascii_case(name))
    }
}

impl Default for ChannelProfile {
    fn default() -> Self {
        ChannelProfile::GENERIC
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_values() {
        let t = ChannelProfile::TELEGRAM;
        assert_eq!(
            (t.text_limit, t.metric, t.preview_limit),
            (4000, LengthMetric::Utf16, 4096)
        );
        assert!(t.expandable_quote);
        assert_eq!(
            (t.max_lines, t.coalesce_min, t.coalesce_idle_ms),
            (None, None, None)
        );

        let d = ChannelProfile::DISCORD;
        assert_eq!(
            (d.text_limit, d.metric, d.preview_limit),
            (2000, LengthMetric::Chars, 2000)
        );
        assert_eq!(d.max_lines, Some(17));
        assert_eq!(
            (d.coalesce_min, d.coalesce_idle_ms),
            (Some(1500), Some(1000))
        );

        for p in [ChannelProfile::SLACK, ChannelProfile::SIGNAL] {
            assert_eq!((p.text_limit, p.metric), (4000, LengthMetric::Chars));
            assert_eq!(
                (p.coalesce_min, p.coalesce_idle_ms),
                (Some(1500), Some(1000))
            );
            assert_eq!(p.max_lines, None);
        }
        for p in [
            ChannelProfile::WHATSAPP,
            ChannelProfile::IMESSAGE,
            ChannelProfile::GOOGLECHAT,
        ] {
            assert_eq!((p.text_limit, p.metric), (4000, LengthMetric::Utf16));
            assert_eq!((p.coalesce_min, p.max_lines), (None, None));
        }
        let g = ChannelProfile::GENERIC;
        assert_eq!((g.text_limit, g.metric), (4000, LengthMetric::Chars));
        assert_eq!(ChannelProfile::default(), g);
        for p in ChannelProfile::ALL {
            assert!(!p.expandable_quote || p.name == "telegram");
            if p.name != "telegram" {
                assert_eq!(p.preview_limit, p.text_limit);
            }
        }
    }

    #[test]
    fn names_and_lookup() {
        for (p, name) in ChannelProfile::ALL.iter().zip(ChannelProfile::NAMES) {
            assert_eq!(p.name, name);
            assert_eq!(ChannelProfile::by_name(name), Some(*p));
            assert_eq!(ChannelProfile::by_name(&name.to_uppercase()), Some(*p));
        }
        assert_eq!(
            ChannelProfile::by_name(" Discord "),
            Some(ChannelProfile::DISCORD)
        );
        assert_eq!(ChannelProfile::by_name("irc"), None);
        assert_eq!(ChannelProfile::by_name(""), None);
    }
}
