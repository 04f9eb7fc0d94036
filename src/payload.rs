//! What the engine delivers: a payload of text and/or media plus delivery metadata.

/// Which visibility class a payload belongs to. Payloads of different lanes are never
/// merged into one message.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Lane {
    /// The answer the user asked for.
    #[default]
    Answer,
    /// The model's reasoning, shown separately (reasoning `on` or `stream`).
    Reasoning,
    /// A status line such as a tool summary.
    Status,
}

/// One deliverable message: text and/or media, with where and how to deliver it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Payload {
    /// The message text (may be empty when there is media).
    pub text: String,
    /// Media URLs or local paths, in order.
    pub media: Vec<String>,
    /// The platform message this one replies to (`[[reply_to: ID]]`, or the current message
    /// for `[[reply_to_current]]`).
    pub reply_to: Option<ReplyTarget>,
    /// Audio in `media` should be sent as a voice note (`[[audio_as_voice]]`).
    pub audio_as_voice: bool,
    /// This payload reports an error (the model failed).
    pub is_error: bool,
    /// Visibility class.
    pub lane: Lane,
}

/// Which message a payload replies to.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ReplyTarget {
    /// The user message this turn answers (`[[reply_to_current]]`).
    Current,
    /// A platform message id (`[[reply_to: ID]]`).
    Id(String),
}

impl Lane {
    /// The lane's name: `answer`, `reasoning` or `status`.
    pub fn name(self) -> &'static str {
        match self {
            Lane::Answer => "answer",
            Lane::Reasoning => "reasoning",
            Lane::Status => "status",
        }
    }
}

impl Payload {
    /// A text payload on the answer lane.
    pub fn text(text: impl Into<String>) -> Payload {
        Payload {
            text: text.into(),
            ..Payload::default()
        }
    }

    /// True when there is nothing to deliver: no text (after trimming) and no media.
    pub fn is_empty(&self) -> bool {
        self.text.trim().is_empty() && self.media.is_empty()
    }
}
