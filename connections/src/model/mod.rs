//! Model-stream adapters: a model API's streamed reply (server-sent events) turned into
//! replystream inputs.
//!
//! A [`Decoder`] takes the reply's bytes in pieces of any size and gives
//! [`OwnedInput`]s: `MessageStart`, `TextDelta`, `ThinkingDelta` / `ThinkingEnd`,
//! `ToolStart`, `TextEnd`, `MessageEnd`, and `Fail` when the provider reports an error in
//! the stream. It never pushes `Finish`: the host decides when the turn is over (after the
//! decoder [is done](Decoder::is_done), usually). An event that does not parse as the
//! protocol says is a [`ModelError`], never a panic; event types it does not know are
//! skipped (providers add new ones). Three protocols ([`Protocol`]):
//!
//! - OpenAI chat completions (`choices[0].delta.content`, `reasoning_content` or
//!   `reasoning`, `tool_calls`; `data: [DONE]` ends it). Most compatible servers speak it.
//! - The OpenAI Responses API (`response.output_text.delta`, reasoning text and summary
//!   deltas, `function_call` output items; `response.completed` ends it).
//! - Anthropic Messages (`content_block_*` with `text_delta`, `thinking_delta`,
//!   `tool_use` blocks; `message_stop` ends it).

mod anthropic;
mod client;
mod openai;
mod responses;

use replystream::OwnedInput;
use serde_json::Value;

use crate::sse::{SseError, SseEvent, SseParser};

pub use client::{ModelRequest, stream_reply};

/// Which streaming protocol a reply speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Protocol {
    /// OpenAI chat completions (`/v1/chat/completions` with `stream: true`).
    OpenAiChat,
    /// The OpenAI Responses API (`/v1/responses` with `stream: true`).
    OpenAiResponses,
    /// Anthropic Messages (`/v1/messages` with `stream: true`).
    Anthropic,
}

/// Why a model stream could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ModelError {
    /// The bytes are not a valid event stream.
    Sse(SseError),
    /// An event is not what the protocol says: `why`, and the event's data (cut to 200
    /// bytes).
    Malformed {
        /// What was wrong.
        why: String,
        /// The start of the event's data.
        data: String,
    },
    /// The stream ended before the protocol's last event.
    Incomplete,
    /// The request failed (network, or an HTTP status other than 200, with what the
    /// server said). Never holds the API key.
    Request(String),
}

impl std::fmt::Display for ModelError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ModelError::Sse(e) => write!(f, "{e}"),
            ModelError::Malformed { why, data } => {
                write!(f, "malformed model event ({why}): {data:?}")
            }
            ModelError::Incomplete => f.write_str("the model stream ended before its last event"),
            ModelError::Request(why) => write!(f, "model request: {why}"),
        }
    }
}

impl std::error::Error for ModelError {}

impl From<SseError> for ModelError {
    fn from(e: SseError) -> ModelError {
        ModelError::Sse(e)
    }
}

/// One protocol's reading of events.
trait Mapper: Send {
    /// Maps one event; returns true when it was the protocol's last.
    fn event(&mut self, event: &SseEvent, out: &mut Vec<OwnedInput>) -> Result<bool, ModelError>;
}

/// Turns a model's streamed reply into inputs. See the module docs.
pub struct Decoder {
    sse: SseParser,
    mapper: Box<dyn Mapper>,
    events: Vec<SseEvent>,
    done: bool,
}

impl Decoder {
    /// A decoder for `protocol`, at the start of a reply.
    pub fn new(protocol: Protocol) -> Decoder {
        let mapper: Box<dyn Mapper> = match protocol {
            Protocol::OpenAiChat => Box::new(openai::ChatMapper::default()),
            Protocol::OpenAiResponses => Box::new(responses::ResponsesMapper::default()),
            Protocol::Anthropic => Box::new(anthropic::AnthropicMapper::default()),
        };
        Decoder {
            sse: SseParser::new(),
            mapper,
            events: Vec::new(),
            done: false,
        }
    }

    /// Reads the next piece of the reply, appending the inputs it completes to `out`.
    /// Bytes after the protocol's last event are ignored. On an error, `out` still holds
    /// the inputs of the events before the bad one.
    pub fn feed(&mut self, bytes: &[u8], out: &mut Vec<OwnedInput>) -> Result<(), ModelError> {
        if self.done {
            return Ok(());
        }
        // The events parsed before bytes that are not an event stream still count.
        let parsed = self.sse.feed(bytes, &mut self.events);
        for event in std::mem::take(&mut self.events) {
            if self.done {
                break;
            }
            self.done = self.mapper.event(&event, out)?;
        }
        parsed.map_err(ModelError::from)
    }

    /// The protocol's last event was read.
    pub fn is_done(&self) -> bool {
        self.done
    }

    /// The reply's bytes ended: an error unless the protocol's last event came.
    pub fn finish(&mut self) -> Result<(), ModelError> {
        if self.done {
            return Ok(());
        }
        self.sse.finish()?;
        Err(ModelError::Incomplete)
    }
}

/// An event's data as JSON.
fn json(event: &SseEvent) -> Result<Value, ModelError> {
    serde_json::from_str(&event.data).map_err(|e| malformed(event, &format!("not JSON: {e}")))
}

fn malformed(event: &SseEvent, why: &str) -> ModelError {
    let mut end = event.data.len().min(200);
    while !event.data.is_char_boundary(end) {
        end -= 1;
    }
    ModelError::Malformed {
        why: why.to_owned(),
        data: event.data[..end].to_owned(),
    }
}

/// A string field that may be absent or null, but is a string when present.
fn opt_str<'a>(
    event: &SseEvent,
    v: &'a Value,
    pointer: &str,
) -> Result<Option<&'a str>, ModelError> {
    match v.pointer(pointer) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(malformed(event, &format!("{pointer} is not a string"))),
    }
}

/// A string field that must be there.
fn req_str<'a>(event: &SseEvent, v: &'a Value, pointer: &str) -> Result<&'a str, ModelError> {
    opt_str(event, v, pointer)?.ok_or_else(|| malformed(event, &format!("no {pointer}")))
}
