//! replystream turns a streaming LLM reply into well-formed, well-paced chat messages.
//!
//! A model writes its answer a few characters at a time; a chat platform wants whole
//! messages of a bounded length, counted in its own unit, with Markdown that still renders.
//! replystream cuts the stream at paragraph, line and sentence breaks, never inside a code
//! fence or inline code span while a better cut exists (and when a fence must be cut, closes
//! it and reopens it in the next message), never inside a grapheme cluster, never above the
//! platform's limit, and never loses or repeats a character. It hides `<think>` blocks,
//! turns `MEDIA:` lines and `[[reply_to…]]` tags into message metadata, merges small blocks,
//! paces and orders the sends, and at the end sends exactly what did not get through.
//!
//! The core is synchronous and sans-IO: an [`Engine`] takes inputs with the current time
//! and returns actions; it never reads a clock, starts a thread or blocks. Hosts are a plain
//! loop, the thread [`driver`], any async executor (`examples/tokio.rs`), or C and Python
//! through the C ABI of the `replystream-ffi` crate.
//!
//! # Streaming a reply
//!
//! One [`Engine`] per reply (one turn). Push each model event with the time from your
//! monotonic clock, execute the actions in order, and report each send's outcome:
//!
//! ```
//! use replystream::{Action, ChannelProfile, Config, Engine, Input, Time};
//!
//! let mut config = Config::for_channel(&ChannelProfile::TELEGRAM);
//! config.chunk_min = 40; // small blocks for the example
//! config.chunk_max = 120;
//! let mut engine = Engine::new(config, 7).expect("a valid configuration");
//!
//! let reply = "<think>Plan it.</think>The first part of the answer, long enough to \
//!              go out on its own.\n\nThe second part, which ends the reply.";
//! let mut inputs: Vec<Input> = reply.split_inclusive(' ').map(Input::TextDelta).collect();
//! inputs.push(Input::Finish);
//!
//! let mut chat: Vec<String> = Vec::new();
//! for (i, input) in inputs.into_iter().enumerate() {
//!     let now = Time::from_millis(20 * i as u64);
//!     // The actions an input causes stay queued until read, here with `poll_action`.
//!     drop(engine.push(input, now).expect("a valid input"));
//!     while let Some(action) = engine.poll_action() {
//!         match action {
//!             Action::Send(send) => {
//!                 chat.push(send.payload.text.clone()); // post it to the platform, then:
//!                 let ack = Input::Delivered { send_id: send.send_id, message_ref: None };
//!                 drop(engine.push(ack, now).expect("a known send"));
//!             }
//!             // Sleep until `engine.poll_timeout()`, then push `Input::Timer`.
//!             Action::ArmTimer { .. } => {}
//!             Action::Abort { reason } => eprintln!("aborted: {}", reason.name()),
//!             Action::Idle => {}
//!             _ => {} // `Action` is #[non_exhaustive]
//!         }
//!     }
//! }
//! // The thinking is hidden; the two blocks arrived within the coalescer's idle time
//! // (1 s) and went out as one message, joined by the blank line that separated them.
//! assert_eq!(
//!     chat,
//!     ["The first part of the answer, long enough to go out on its own.\n\n\
//!       The second part, which ends the reply."]
//! );
//! assert!(engine.outcome().expect("the turn is over").all_delivered());
//! ```
//!
//! The calling contract is on [`Engine`]. Misuse (an ack for an unknown send, text after
//! `Finish`) is an [`Error`] that changes nothing; domain outcomes are actions
//! ([`Action::Abort`]); no input panics. [`sim::Sim`] drives an engine on a virtual clock
//! (acks after a latency, failures, hangs) and is the quickest way to try a configuration.
//!
//! # Configuration
//!
//! [`Config`] holds every option with its default; [`Config::for_channel`] starts from a
//! [`ChannelProfile`] (Telegram counts UTF-16 units up to 4000, Discord 2000 characters and
//! 17 lines, …). Layers of [`ConfigOverrides`] go on top (per account, then explicit), and
//! [`Config::resolve`] clamps and checks the result: a setting under which the guarantees
//! cannot hold is an error up front, never a panic later.
//!
//! ```
//! use replystream::{ChannelProfile, Config, ConfigOverrides, HumanDelay};
//!
//! let account = ConfigOverrides { text_limit: Some(1800), ..ConfigOverrides::default() };
//! let explicit = ConfigOverrides {
//!     human_delay: Some(HumanDelay::Natural), // 800-2500 ms between blocks
//!     response_prefix: Some(Some("[{model}]".to_owned())),
//!     model: Some(Some("anthropic/claude-3-5-sonnet-20241022".to_owned())),
//!     ..ConfigOverrides::default()
//! };
//! let resolved = Config::resolve(&ChannelProfile::DISCORD, &[&account, &explicit]).unwrap();
//! assert_eq!(resolved.config().text_limit, 1800);
//! assert_eq!(resolved.response_prefix(), Some("[claude-3-5-sonnet]"));
//! // Room left for text once the prefix and its space are in.
//! assert_eq!(resolved.text_budget(), 1800 - "[claude-3-5-sonnet] ".len());
//!
//! let nonsense = ConfigOverrides { text_limit: Some(0), ..ConfigOverrides::default() };
//! assert!(Config::resolve(&ChannelProfile::DISCORD, &[&nonsense]).is_err());
//! ```
//!
// The module exists only with its feature: linked to then, named without it (a plain
// `cargo doc` has no broken link).
#![cfg_attr(
    feature = "openclaw",
    doc = "With the `openclaw` feature, [`openclaw`] reads an OpenClaw configuration file \
           into such a layer for a channel and account."
)]
#![cfg_attr(
    not(feature = "openclaw"),
    doc = "With the `openclaw` feature, the `openclaw` module reads an OpenClaw \
           configuration file into such a layer for a channel and account."
)]
//!
//! # The text core alone
//!
//! [`BlockChunker`] cuts a stream of deltas into blocks (one chunker per assistant message);
//! [`PlatformSplitter`] splits a whole text to a platform's limit. Both count length in a
//! [`LengthMetric`] and keep Markdown fences balanced; their docs have examples.
//!
//! # Hosts
//!
//! - A loop you own, as above: the engine is `Send` and holds no thread or timer.
//! - [`driver::Driver`]: many engines on one thread, a sink you implement for the sends,
//!   acks from any thread, one turn per chat at a time, bounded shutdown.
//! - An async executor: `examples/tokio.rs` runs an engine in one task with `tokio::select!`
//!   over the model stream, the acks and `sleep_until(poll_timeout)`.
//! - C and Python: the `replystream-ffi` crate of the repository.
//!
//! # Knowing what arrived
//!
//! When the turn is over, [`Engine::outcome`] (and the driver's
//! [`StreamEvent::Idle`](driver::StreamEvent::Idle)) says whether the user got everything,
//! and lists what did not arrive, e.g. a final reply the platform refused for good:
//! [`TurnOutcome::final_delivered`].
//!
//! # Cargo features
//!
//! None is on by default; the default build depends on memchr, smallvec,
//! unicode-segmentation, crossbeam-channel and fastrand only.
//!
#![cfg_attr(
    feature = "openclaw",
    doc = "- `openclaw`: the [`openclaw`] module (read an OpenClaw JSON5 configuration \
           file). No extra dependency."
)]
#![cfg_attr(
    not(feature = "openclaw"),
    doc = "- `openclaw`: the `openclaw` module (read an OpenClaw JSON5 configuration file). \
           No extra dependency."
)]
//! - `tracing`: spans per stream and events for sends, failures, retries, timers, aborts and
//!   outcomes from the [`driver`], through the `tracing` crate. Without it the hooks compile
//!   to nothing.
#![cfg_attr(not(test), forbid(unsafe_code))]
#![cfg_attr(test, deny(unsafe_code))]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod action;
mod config;
pub mod driver;
mod engine;
mod error;
mod input;
#[cfg(feature = "openclaw")]
#[cfg_attr(docsrs, doc(cfg(feature = "openclaw")))]
pub mod openclaw;
mod payload;
mod render;
pub mod sim;
mod stage;
mod text;
mod time;

#[cfg(test)]
mod test_alloc;

pub use action::{AbortReason, Action, MessageKey, SendKind, SendOp, SendRequest};
pub use config::{
    BreakMode, ChannelProfile, ChunkMode, Config, ConfigOverrides, HumanDelay, MAX_IDLE_MS,
    MAX_PREVIEW_THROTTLE_MS, MIN_MAX_LINES, MIN_PREVIEW_THROTTLE_MS, MIN_TEXT_LIMIT, MediaPolicy,
    PreviewMode, PreviewTransport, ReasoningMode, ResolvedConfig,
};
pub use engine::{
    Actions, Engine, Stats, TurnEnding, TurnOutcome, UndeliveredReason, UndeliveredSend,
};
pub use error::Error;
pub use input::{Input, OwnedInput, SendId};
pub use payload::{Lane, Payload, ReplyTarget};
pub use render::{
    Entity, EntityKind, Format, RenderOptions, Rendered, TableMode, posted_len, render,
};
pub use stage::dispatch::DispatchStats;
pub use stage::prefix::{PrefixContext, render_prefix, short_model_name};
pub use text::block::Block;
pub use text::chunker::{BlockChunker, BreakPreference, ChunkerConfig};
pub use text::markdown::{ContainerPrefix, FenceMarker};
pub use text::metric::LengthMetric;
pub use text::splitter::{PlatformSplitter, SplitConfig, SplitMode};
pub use time::Time;

/// The README's Rust examples, compiled and run as doc tests so they stay true (one of them
/// reads an OpenClaw file, hence the feature).
#[cfg(all(doctest, feature = "openclaw"))]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
