//! What the engine asks the host to do.

use crate::input::SendId;
use crate::payload::Payload;
use crate::render::{Entity, Format, Rendered};
use crate::time::Time;

/// Which stream a send belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SendKind {
    /// A tool summary.
    Tool,
    /// A block streamed while the model writes.
    Block,
    /// A final message, sent when the turn finishes.
    Final,
    /// A live preview message (SPEC §10): created, then edited in place as the reply grows,
    /// or a native draft bubble.
    Preview,
}

impl SendKind {
    /// The kind's name: `tool`, `block`, `final` or `preview`.
    pub fn name(self) -> &'static str {
        match self {
            SendKind::Tool => "tool",
            SendKind::Block => "block",
            SendKind::Final => "final",
            SendKind::Preview => "preview",
        }
    }
}

/// A platform message the engine refers to by its own key. The host does not need to map
/// keys to platform ids: the `message_ref` it acks a keyed `Create` with comes back on every
/// later send for that key ([`SendRequest::message_ref`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MessageKey(pub u32);

/// What to do on the platform.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SendOp {
    /// Post a new message. With a `key`, the engine will edit or delete that message later:
    /// ack the send with the platform's id in `Input::Delivered { message_ref }`.
    Create {
        /// The name later edits and deletes use, if any.
        key: Option<MessageKey>,
    },
    /// Replace the text of the message created under `key`. When the platform answers that
    /// nothing changed ("message is not modified"), ack it with `Input::Delivered`: the
    /// message shows the text.
    Edit {
        /// Which message.
        key: MessageKey,
    },
    /// Delete the message created under `key` (for a draft key: clear the draft bubble).
    Delete {
        /// Which message.
        key: MessageKey,
    },
    /// Show or update an ephemeral draft bubble (a `sendMessageDraft`-style transport) with
    /// the payload's text: nothing is posted to the chat; the final is always a normal
    /// `Create`, which replaces the bubble.
    Draft {
        /// Which draft bubble.
        key: MessageKey,
    },
}

impl SendOp {
    /// A plain new message that is never edited.
    pub const CREATE: SendOp = SendOp::Create { key: None };

    /// The message key the operation names, if any.
    pub fn key(self) -> Option<MessageKey> {
        match self {
            SendOp::Create { key } => key,
            SendOp::Edit { key } | SendOp::Delete { key } | SendOp::Draft { key } => Some(key),
        }
    }

    /// The operation's name: `create`, `edit`, `delete` or `draft`.
    pub fn name(self) -> &'static str {
        match self {
            SendOp::Create { .. } => "create",
            SendOp::Edit { .. } => "edit",
            SendOp::Delete { .. } => "delete",
            SendOp::Draft { .. } => "draft",
        }
    }
}

/// One message for the host to deliver. Report its outcome with `Input::Delivered` or
/// `Input::DeliveryFailed` carrying the same `send_id`.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct SendRequest {
    /// Echo this in the ack.
    pub send_id: SendId,
    /// Tool, block, final or preview.
    pub kind: SendKind,
    /// Create, edit, delete or draft.
    pub op: SendOp,
    /// What to deliver (for `Delete`, the payload is empty).
    pub payload: Payload,
    /// For an operation on a keyed message (`Edit`, `Delete`, `Draft`): the platform id the
    /// host gave in the `Delivered { message_ref }` ack of that message's `Create` (`None` if
    /// it gave none, and on a `Create`). The host needs no map of its own.
    pub message_ref: Option<String>,
    /// The format the text to post is in (the configuration's [`Config::format`](crate::Config::format)).
    pub format: Format,
    /// The payload rendered into `format` (SPEC §16), rendered once when the send leaves;
    /// `None` when the text to post is the Markdown itself (format `markdown`, and deletes).
    /// Read it through [`SendRequest::text`] and [`SendRequest::entities`].
    pub rendered: Option<Rendered>,
}

impl SendRequest {
    /// The text to post, as is, in [`SendRequest::format`]: Telegram HTML, Slack mrkdwn, …,
    /// or with `telegram-entities` the plain text the entities index.
    pub fn text(&self) -> &str {
        self.rendered
            .as_ref()
            .map_or(&self.payload.text, |r| &r.text)
    }

    /// The Markdown the send was rendered from (the payload's text).
    pub fn markdown(&self) -> &str {
        &self.payload.text
    }

    /// With `telegram-entities`: the message entities of [`SendRequest::text`]; empty
    /// otherwise.
    pub fn entities(&self) -> &[Entity] {
        self.rendered.as_ref().map_or(&[], |r| &r.entities)
    }
}

impl SendRequest {
    /// A send built by hand: to test a sink or a platform connection without an engine, or
    /// to replay a recorded send. The engine makes its own. Its format is
    /// [`Format::Markdown`]: the text to post is the payload's.
    pub fn new(
        send_id: SendId,
        kind: SendKind,
        op: SendOp,
        payload: Payload,
        message_ref: Option<String>,
    ) -> SendRequest {
        SendRequest {
            send_id,
            kind,
            op,
            payload,
            message_ref,
            format: Format::Markdown,
            rendered: None,
        }
    }
}

/// Why the engine stopped streaming.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum AbortReason {
    /// The host cancelled the turn (`Input::Cancel`).
    Cancelled,
    /// A send was not acknowledged within the delivery timeout. Later block sends are
    /// skipped; the undelivered text is sent as the final at `Finish`.
    DeliveryTimeout,
}

impl AbortReason {
    /// The reason's name.
    pub fn name(self) -> &'static str {
        match self {
            AbortReason::Cancelled => "cancelled",
            AbortReason::DeliveryTimeout => "delivery_timeout",
        }
    }
}

/// One thing for the host to do, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Action {
    /// Deliver a message, then ack it.
    Send(SendRequest),
    /// The earliest deadline changed: push `Input::Timer` at (or after) `deadline`.
    /// `None` cancels the previous request (no deadline).
    ArmTimer {
        /// When to wake the engine, if ever.
        deadline: Option<Time>,
    },
    /// Streaming stopped.
    Abort {
        /// Why.
        reason: AbortReason,
    },
    /// The turn is over: it finished (`Finish` or `Fail`) and every send was answered:
    /// acknowledged as delivered, failed for good, or given up on when its delivery
    /// timeout (and the wait for late acks before the finals) ran out. Nothing more is
    /// sent. Emitted once, and not after a `Cancel` (that ends with `Abort`).
    ///
    /// It does not mean that everything arrived, nor that anything was acknowledged: with
    /// a host that never answers, `Idle` still comes once the timeouts have run out
    /// (without a delivery timeout, it waits for every ack). [`Engine::outcome`] says
    /// what did not arrive; a late ack still updates it.
    ///
    /// [`Engine::outcome`]: crate::Engine::outcome
    Idle,
}
