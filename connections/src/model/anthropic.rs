//! Anthropic Messages streaming: `message_start`, then per content block
//! `content_block_start` / `content_block_delta` / `content_block_stop`, then
//! `message_delta` and `message_stop`; `ping` and `error` may come at any time.

use std::collections::HashMap;

use replystream::OwnedInput;
use serde_json::Value;

use super::{Mapper, ModelError, json, malformed, opt_str, req_str};
use crate::sse::SseEvent;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Block {
    Text,
    Thinking,
    Other,
}

#[derive(Default)]
pub(super) struct AnthropicMapper {
    started: bool,
    /// Open content blocks by index.
    blocks: HashMap<u64, Block>,
}

impl Mapper for AnthropicMapper {
    fn event(&mut self, event: &SseEvent, out: &mut Vec<OwnedInput>) -> Result<bool, ModelError> {
        let v = json(event)?;
        let kind = req_str(event, &v, "/type")?;
        let index = || {
            v.get("index")
                .and_then(Value::as_u64)
                .ok_or_else(|| malformed(event, "no block index"))
        };
        match kind {
            "message_start" if !self.started => {
                self.started = true;
                out.push(OwnedInput::MessageStart);
            }
            "content_block_start" => {
                let block = match req_str(event, &v, "/content_block/type")? {
                    "text" => Block::Text,
                    "thinking" => Block::Thinking,
                    "tool_use" | "server_tool_use" => {
                        let name = req_str(event, &v, "/content_block/name")?;
                        out.push(OwnedInput::ToolStart {
                            name: name.to_owned(),
                        });
                        Block::Other
                    }
                    _ => Block::Other,
                };
                self.blocks.insert(index()?, block);
            }
            "content_block_delta" => {
                let i = index()?;
                let Some(&block) = self.blocks.get(&i) else {
                    return Err(malformed(event, "a delta for a block that was not started"));
                };
                match (req_str(event, &v, "/delta/type")?, block) {
                    ("text_delta", Block::Text) => {
                        let text = req_str(event, &v, "/delta/text")?;
                        if !text.is_empty() {
                            out.push(OwnedInput::TextDelta(text.to_owned()));
                        }
                    }
                    ("thinking_delta", Block::Thinking) => {
                        let text = req_str(event, &v, "/delta/thinking")?;
                        if !text.is_empty() {
                            out.push(OwnedInput::ThinkingDelta(text.to_owned()));
                        }
                    }
                    ("text_delta" | "thinking_delta", _) => {
                        return Err(malformed(event, "a delta of another block's type"));
                    }
                    _ => {} // input_json_delta, signature_delta, citations: nothing to show
                }
            }
            "content_block_stop" => match self.blocks.remove(&index()?) {
                Some(Block::Text) => out.push(OwnedInput::TextEnd(None)),
                Some(Block::Thinking) => out.push(OwnedInput::ThinkingEnd),
                Some(Block::Other) => {}
                None => return Err(malformed(event, "a stop for a block that was not started")),
            },
            "message_stop" => {
                out.push(OwnedInput::MessageEnd(None));
                return Ok(true);
            }
            "error" => {
                let message = opt_str(event, &v, "/error/message")?.unwrap_or("the model failed");
                out.push(OwnedInput::Fail {
                    error: message.to_owned(),
                });
                return Ok(true);
            }
            _ => {} // ping, message_delta, and types added later
        }
        Ok(false)
    }
}
