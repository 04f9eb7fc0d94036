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
#[non_exhaustive]
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
    /// The host finished a send. An edit the platform answered with "message is not
    /// modified" is delivered too (the message shows that text).
    Delivered {
        /// Which send.
        send_id: SendId,
        /// The platform's id for the message a `Create` made, needed to edit it later; it
        /// comes back on every later send for that message (`SendRequest::message_ref`).
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

/// An [`Input`] that owns its text, for sending across threads or reading from a trace.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum OwnedInput {
    /// See [`Input::MessageStart`].
    MessageStart,
    /// See [`Input::TextDelta`].
    TextDelta(String),
    /// See [`Input::TextSnapshot`].
    TextSnapshot(String),
    /// See [`Input::TextEnd`].
    TextEnd(Option<String>),
    /// See [`Input::ThinkingDelta`].
    ThinkingDelta(String),
    /// See [`Input::ThinkingEnd`].
    ThinkingEnd,
    /// See [`Input::ToolStart`].
    ToolStart {
        /// The tool's name.
        name: String,
    },
    /// See [`Input::ToolResult`].
    ToolResult(Payload),
    /// See [`Input::Media`].
    Media(Payload),
    /// See [`Input::MessageEnd`].
    MessageEnd(Option<String>),
    /// See [`Input::FinalReply`].
    FinalReply(Payload),
    /// See [`Input::Finish`].
    Finish,
    /// See [`Input::Fail`].
    Fail {
        /// The error text.
        error: String,
    },
    /// See [`Input::Cancel`].
    Cancel,
    /// See [`Input::Timer`].
    Timer,
    /// See [`Input::Delivered`].
    Delivered {
        /// Which send.
        send_id: SendId,
        /// The platform's id for the message.
        message_ref: Option<String>,
    },
    /// See [`Input::DeliveryFailed`].
    DeliveryFailed {
        /// Which send.
        send_id: SendId,
        /// Retry no earlier than this many milliseconds from now.
        retry_after_ms: Option<u64>,
        /// Retrying will not help.
        permanent: bool,
    },
}

impl OwnedInput {
    /// The borrowed form, for [`crate::Engine::push`]. Payloads are cloned (they are rare
    /// and small); text is borrowed.
    pub fn as_input(&self) -> Input<'_> {
        match self {
            OwnedInput::MessageStart => Input::MessageStart,
            OwnedInput::TextDelta(t) => Input::TextDelta(t),
            OwnedInput::TextSnapshot(t) => Input::TextSnapshot(t),
            OwnedInput::TextEnd(t) => Input::TextEnd(t.as_deref()),
            OwnedInput::ThinkingDelta(t) => Input::ThinkingDelta(t),
            OwnedInput::ThinkingEnd => Input::ThinkingEnd,
            OwnedInput::ToolStart { name } => Input::ToolStart { name },
            OwnedInput::ToolResult(p) => Input::ToolResult(p.clone()),
            OwnedInput::Media(p) => Input::Media(p.clone()),
            OwnedInput::MessageEnd(t) => Input::MessageEnd(t.as_deref()),
            OwnedInput::FinalReply(p) => Input::FinalReply(p.clone()),
            OwnedInput::Finish => Input::Finish,
            OwnedInput::Fail { error } => Input::Fail { error },
            OwnedInput::Cancel => Input::Cancel,
            OwnedInput::Timer => Input::Timer,
            OwnedInput::Delivered {
                send_id,
                message_ref,
            } => Input::Delivered {
                send_id: *send_id,
                message_ref: message_ref.as_deref(),
            },
            OwnedInput::DeliveryFailed {
                send_id,
                retry_after_ms,
                permanent,
            } => Input::DeliveryFailed {
                send_id: *send_id,
                retry_after_ms: *retry_after_ms,
                permanent: *permanent,
            },
        }
    }
}

impl From<Input<'_>> for OwnedInput {
    fn from(input: Input<'_>) -> OwnedInput {
        match input {
            Input::MessageStart => OwnedInput::MessageStart,
            Input::TextDelta(t) => OwnedInput::TextDelta(t.to_owned()),
            Input::TextSnapshot(t) => OwnedInput::TextSnapshot(t.to_owned()),
            Input::TextEnd(t) => OwnedInput::TextEnd(t.map(str::to_owned)),
            Input::ThinkingDelta(t) => OwnedInput::ThinkingDelta(t.to_owned()),
            Input::ThinkingEnd => OwnedInput::ThinkingEnd,
            Input::ToolStart { name } => OwnedInput::ToolStart {
                name: name.to_owned(),
            },
            Input::ToolResult(p) => OwnedInput::ToolResult(p),
            Input::Media(p) => OwnedInput::Media(p),
            Input::MessageEnd(t) => OwnedInput::MessageEnd(t.map(str::to_owned)),
            Input::FinalReply(p) => OwnedInput::FinalReply(p),
            Input::Finish => OwnedInput::Finish,
            Input::Fail { error } => OwnedInput::Fail {
                error: error.to_owned(),
            },
            Input::Cancel => OwnedInput::Cancel,
            Input::Timer => OwnedInput::Timer,
            Input::Delivered {
                send_id,
                message_ref,
            } => OwnedInput::Delivered {
                send_id,
                message_ref: message_ref.map(str::to_owned),
            },
            Input::DeliveryFailed {
                send_id,
                retry_after_ms,
                permanent,
            } => OwnedInput::DeliveryFailed {
                send_id,
                retry_after_ms,
                permanent,
            },
        }
    }
}
