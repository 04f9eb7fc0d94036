//! The platform a simulated [`Chat`](super::Chat) stands for: what it does with the text
//! of a send and how it counts its limits, as the real one does (SPEC §16).
//!
//! | platform | reads | text limit | caption limit |
//! |---|---|---|---|
//! | Telegram | HTML (`parse_mode=HTML`, refused when it does not parse) or text plus entities | 4096 UTF-16 units of the text after entity parsing | 1024, likewise |
//! | Slack | the mrkdwn as posted | 40 000 characters | the same |
//! | Discord | the Markdown as posted | 2000 characters | 2000 |
//! | WhatsApp | the text as posted | 4096 UTF-16 units | 1024 |

use super::telegram_html::visible_text;
use crate::action::SendRequest;
use crate::render::Format;
use crate::text::metric::LengthMetric;

/// How a [`Chat`](super::Chat) reads sends. See the module docs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Platform {
    /// Takes each send's Markdown (its payload text) as it is, with no limit of its own:
    /// the chat of the engine's tests before formats, and the default.
    #[default]
    Markdown,
    /// Telegram: posts the send's text in its format (HTML or entities; Markdown and plain
    /// text as plain text), refuses HTML it cannot parse, counts the text after entity
    /// parsing in UTF-16 units.
    Telegram,
    /// Slack: posts the mrkdwn, counts characters.
    Slack,
    /// Discord: posts the Markdown, counts characters.
    Discord,
    /// WhatsApp: posts the text, counts UTF-16 units.
    Whatsapp,
}

impl Platform {
    /// The platform of a channel profile by name (`telegram`, `slack`, `discord`,
    /// `whatsapp`); [`Platform::Markdown`] for any other.
    pub fn for_channel(name: &str) -> Platform {
        match name {
            "telegram" => Platform::Telegram,
            "slack" => Platform::Slack,
            "discord" => Platform::Discord,
            "whatsapp" => Platform::Whatsapp,
            _ => Platform::Markdown,
        }
    }

    /// The longest message text the platform accepts, in the metric it counts in.
    pub fn text_limit(self) -> Option<(usize, LengthMetric)> {
        match self {
            Platform::Markdown => None,
            Platform::Telegram => Some((4096, LengthMetric::Utf16)),
            Platform::Slack => Some((40_000, LengthMetric::Chars)),
            Platform::Discord => Some((2000, LengthMetric::Chars)),
            Platform::Whatsapp => Some((4096, LengthMetric::Utf16)),
        }
    }

    /// The longest caption (the text of a message with media) the platform accepts.
    pub fn caption_limit(self) -> Option<(usize, LengthMetric)> {
        match self {
            Platform::Telegram | Platform::Whatsapp => Some((1024, LengthMetric::Utf16)),
            other => other.text_limit(),
        }
    }

    /// What the platform shows for `send`: the text it counts toward its limits and keeps;
    /// `Err` with the platform's refusal when it cannot read it.
    pub(crate) fn read(self, send: &SendRequest) -> Result<String, String> {
        match self {
            Platform::Markdown => Ok(send.payload.text.clone()),
            Platform::Telegram => match send.format {
                Format::TelegramHtml => visible_text(send.text()),
                Format::TelegramEntities => {
                    let units = send.text().encode_utf16().count();
                    match send
                        .entities()
                        .iter()
                        .find(|e| e.length == 0 || e.offset + e.length > units)
                    {
                        Some(e) => Err(format!(
                            "Bad Request: can't parse entities: entity {} at {}+{} beyond \
                             the text's {units} units",
                            e.kind.name(),
                            e.offset,
                            e.length
                        )),
                        None => Ok(send.text().to_owned()),
                    }
                }
                _ => Ok(send.text().to_owned()),
            },
            _ => Ok(send.text().to_owned()),
        }
    }
}
