//! What the host tells the engine.

use crate::payload::Payload;

/// Identifies one send; echoed back in acks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SendId(pub u64);

impl std::fmt::Display for SendId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "#{}", self.0)
    }
}

/// One event from the model or the host, pushed with the current time.
///
/// Text is borrowed: pushing a delta copies only what the engine must keep.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Input<'a> {
    /// A new assistant message begins; per-message state resets. Blocks of two messages
    /// are never merged.
    MessageStart,
    /// The next piece of assistant text.
    TextDelta(&'a str),
    /// The whole assistant text so far; the engine derives the new part.
    TextSnapshot(&'a str),
    /// A text content block ended. May carry the full content (providers resend it), which
    /// adds nothing that was already accepted.
    TextEnd(Option<&'a str>),
    /// Reasoning text delivered outside the answer.
    ThinkingDelta(&'a str),
    /// The reasoning block ended.
    ThinkingEnd,
    /// The model calls a tool: everything buffered is flushed first.
    ToolStart {
        /// The tool's name (informational).
        name: &'a str,
    },
    /// A tool summary to show the user (sent with kind `tool`).
    ToolResult(Payload),
    /// A media payload from the host or a tool.
    Media(Payload),
    /// The assistant message ended. May carry the full content, like `TextEnd`.
    MessageEnd(Option<&'a str>),
    /// The host's final reply payload, as a gateway builds it at the end of a run. At
    /// `Finish` it is reconciled against what was streamed: text already delivered is not
    /// sent again; media not yet sent is.
    FinalReply(Payload),
    /// The turn is complete: flush, reconcile, send finals, then go idle.
    Finish,
    /// The model failed: deliver what was produced, then an error payload.
    Fail {
        /// The error text shown to the user.
        error: &'a str,
    },
    /// The user or host stops the turn: abort, send nothing more.
    Cancel,
    /// A deadline armed earlier may have passed. Early or repeated timer inputs do nothing.
    Timer,
    /// The host finished a send.
    Delivered {
        /// Which send.
        send_id: SendId,
        /// The platform's id for the message, needed to edit it later.
        message_ref: Option<&'a str>,
    },
    /// A send failed.
    DeliveryFailed {
        /// Which send.
        send_id: SendId,
        /// Retry no earlier than this many milliseconds from now (a 429's `retry_after`).
        retry_after_ms: Option<u64>,
        /// The failure will not go away by retrying.
        permanent: bool,
    },
}

impl Input<'_> {
    /// A short name for logs and traces.
    pub fn name(&self) -> &'static str {
        match self {
            Input::MessageStart => "message_start",
            Input::TextDelta(_) => "text_delta",
            Input::TextSnapshot(_) => "text_snapshot",
            Input::TextEnd(_) => "text_end",
            Input::ThinkingDelta(_) => "thinking_delta",
            Input::ThinkingEnd => "thinking_end",
            Input::ToolStart { .. } => "tool_start",
            Input::ToolResult(_) => "tool_result",
            Input::Media(_) => "media",
            Input::MessageEnd(_) => "message_end",
            Input::FinalReply(_) => "final_reply",
            Input::Finish => "finish",
            Input::Fail { .. } => "fail",
            Input::Cancel => "cancel",
            Input::Timer => "timer",
            Input::Delivered { .. } => "delivered",
            Input::DeliveryFailed { .. } => "delivery_failed",
        }
    }
}
