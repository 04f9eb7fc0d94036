//! What the engine asks the host to do.

use crate::input::SendId;
use crate::payload::Payload;
use crate::time::Time;

/// Which stream a send belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SendKind {
    /// A tool summary.
    Tool,
    /// A block streamed while the model writes.
    Block,
    /// A final message, sent when the turn finishes.
    Final,
}

impl SendKind {
    /// The kind's name: `tool`, `block` or `final`.
    pub fn name(self) -> &'static str {
        match self {
            SendKind::Tool => "tool",
            SendKind::Block => "block",
            SendKind::Final => "final",
        }
    }
}

/// A platform message the engine refers to by its own key; the host maps keys to platform
/// ids through `Delivered::message_ref`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MessageKey(pub u32);

/// What to do on the platform.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendOp {
    /// Post a new message.
    Create,
    /// Edit the message created under this key.
    Edit(MessageKey),
    /// Delete the message created under this key.
    Delete(MessageKey),
}

/// One message for the host to deliver. Report its outcome with `Input::Delivered` or
/// `Input::DeliveryFailed` carrying the same `send_id`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Send {
    /// Echo this in the ack.
    pub send_id: SendId,
    /// Tool, block or final.
    pub kind: SendKind,
    /// Create, edit or delete.
    pub op: SendOp,
    /// What to deliver.
    pub payload: Payload,
}

/// Why the engine stopped streaming.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
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
pub enum Action {
    /// Deliver a message, then ack it.
    Send(Send),
    /// The earliest deadline changed: push `Input::Timer` at (or after) this time.
    /// [`Time::NEVER`] cancels the previous request.
    ArmTimer {
        /// When to wake the engine.
        deadline: Time,
    },
    /// Streaming stopped.
    Abort {
        /// Why.
        reason: AbortReason,
    },
    /// The turn finished and every send is acknowledged; emitted once.
    Idle,
}
