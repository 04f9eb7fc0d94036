//! Chat platform connections and model-stream adapters for replystream.
//!
//! The library's core is sans-IO: it says *what* to send ([`SendRequest`]) and the host
//! delivers it. This crate is that host for three chat platforms, over blocking HTTP (no
//! async runtime):
//!
//! - [`telegram::Telegram`], [`discord::Discord`] and [`slack::Slack`] each map a send
//!   (create, edit, delete, draft, media, reply-to) onto the platform's API and read its
//!   answer into an [`Outcome`]: delivered (with the platform's message id), retry later
//!   (a rate limit's wait, in milliseconds), or give up.
//! - [`sink::PlatformSink`] runs a [`Platform`] as the thread driver's sink on a bounded pool
//!   of worker threads, so a slow chat never holds up another, and acks through the driver's
//!   asynchronous path. It knows the chat of every stream from
//!   [`Sink::started`](replystream::driver::Sink::started), and the user message a stream
//!   answers when the host says ([`sink::CurrentMessages`]), so `[[reply_to_current]]`
//!   becomes a reply to it.
//! - [`sse`] reads server-sent events incrementally and [`model`] turns OpenAI and Anthropic
//!   streaming replies into replystream [`Input`](replystream::Input)s.
//!
//! Each platform is a feature (`telegram`, `discord`, `slack`) and so are the model-stream
//! adapters (`model`: [`sse`] and [`model`]); all are on by default.

// This crate is the host side: it reads the clock (timeouts, timelines), unlike the core.
#![allow(clippy::disallowed_methods)]
// With only some features, parts of the shared helpers (HTTP, media, uploads) go unused.
#![cfg_attr(
    not(all(feature = "telegram", feature = "discord", feature = "slack")),
    allow(dead_code, unused_imports)
)]

#[cfg(feature = "discord")]
pub mod discord;
mod http;
mod media;
#[cfg(feature = "model")]
pub mod model;
mod multipart;
pub mod sink;
#[cfg(feature = "slack")]
pub mod slack;
#[cfg(feature = "model")]
pub mod sse;
#[cfg(feature = "telegram")]
pub mod telegram;

use replystream::SendRequest;
use replystream::driver::Delivery;

pub use http::HttpOptions;
pub use media::MediaRoots;

/// What a platform answered to one send.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The platform shows the send; `message_ref` is its id for the message, if any.
    Delivered {
        /// The platform's message id (Telegram `message_id`, Discord snowflake, Slack `ts`).
        message_ref: Option<String>,
    },
    /// The send did not arrive.
    Failed(Failure),
}

/// Why a send did not arrive, and whether trying again may help.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    /// Retry no earlier than this many milliseconds from now (a rate limit's wait).
    pub retry_after_ms: Option<u64>,
    /// Retrying will not help (a bot blocked, a chat not found, a token refused).
    pub permanent: bool,
    /// What the platform (or the network) said, for logs. Never holds a token.
    pub reason: String,
}

impl Failure {
    /// A failure that retrying will not fix.
    pub fn permanent(reason: impl Into<String>) -> Failure {
        Failure {
            retry_after_ms: None,
            permanent: true,
            reason: reason.into(),
        }
    }

    /// A failure that may go away (a 5xx, a network error), with an optional wait.
    pub fn transient(retry_after_ms: Option<u64>, reason: impl Into<String>) -> Failure {
        Failure {
            retry_after_ms,
            permanent: false,
            reason: reason.into(),
        }
    }
}

impl Outcome {
    /// Delivered with this message id.
    pub fn delivered(message_ref: Option<String>) -> Outcome {
        Outcome::Delivered { message_ref }
    }

    /// The outcome as the driver's [`Delivery`].
    pub fn to_delivery(&self) -> Delivery {
        match self {
            Outcome::Delivered { message_ref } => Delivery::Delivered {
                message_ref: message_ref.clone(),
            },
            Outcome::Failed(f) => Delivery::Failed {
                retry_after_ms: f.retry_after_ms,
                permanent: f.permanent,
            },
        }
    }

    /// True when delivered.
    pub fn is_delivered(&self) -> bool {
        matches!(self, Outcome::Delivered { .. })
    }
}

impl From<Failure> for Outcome {
    fn from(f: Failure) -> Outcome {
        Outcome::Failed(f)
    }
}

/// A chat platform: delivers one send to one chat and says how it went. Called from the
/// sink's worker threads, several chats at once, so it takes `&self`.
pub trait Platform: Send + Sync + 'static {
    /// The platform's name (`telegram`, `discord`, `slack`).
    fn name(&self) -> &'static str;

    /// Delivers `send` to `chat` (the key the stream was opened with: a Telegram chat id, a
    /// Discord channel id, a Slack channel id) and blocks until the platform answered.
    fn deliver(&self, chat: &str, send: &SendRequest) -> Outcome;

    /// Delivers `send` for a stream that answers the user message `current` (the host told
    /// the sink with [`CurrentMessages::set`](sink::CurrentMessages::set)). The sink has
    /// already turned a `[[reply_to_current]]` target into that id; a platform may use it for
    /// more (Slack streams a draft preview in its thread). The default ignores it.
    fn deliver_answering(&self, chat: &str, current: Option<&str>, send: &SendRequest) -> Outcome {
        let _ = current;
        self.deliver(chat, send)
    }

    /// A turn in `chat` is over (its stream went idle or was cancelled); called after its
    /// last send, in the
    /// chat's order, unless the sink is dropped first. For cleanup: Slack stops a preview
    /// stream no final went into (a cancelled turn, a final that failed for good). The
    /// default does nothing.
    fn turn_ended(&self, chat: &str) {
        let _ = chat;
    }
}

/// Seconds (a rate limit's `retry_after`, fractional on Discord) as whole milliseconds,
/// rounded up so a retry is never early. Negative, NaN or absurd values give `None`.
pub(crate) fn seconds_to_ms(seconds: f64) -> Option<u64> {
    if !(0.0..86_400.0 * 365.0).contains(&seconds) {
        return None;
    }
    let ms = seconds * 1000.0;
    // 0.3 s is 300.00000000000006 ms in floating point: that is 300, not 301.
    let near = ms.round();
    Some(if (ms - near).abs() < 1e-6 {
        near
    } else {
        ms.ceil()
    } as u64)
}
