//! OpenAI chat-completions streaming: `data:` chunks of `choices[0].delta`, then
//! `data: [DONE]`.

use std::collections::HashSet;

use replystream::OwnedInput;
use serde_json::Value;

use super::{Mapper, ModelError, json, malformed, opt_str};
use crate::sse::SseEvent;

#[derive(Default)]
pub(super) struct ChatMapper {
    started: bool,
    thinking: bool,
    /// Tool calls (by `index`) already announced.
    tools: HashSet<u64>,
}

impl Mapper for ChatMapper {
    fn event(&mut self, event: &SseEvent, out: &mut Vec<OwnedInput>) -> Result<bool, ModelError> {
        if event.data.trim() == "[DONE]" {
            self.end_thinking(out);
            if self.started {
                out.push(OwnedInput::MessageEnd(None));
            }
            return Ok(true);
        }
        let v = json(event)?;
        if let Some(e) = v.get("error") {
            let message = e.get("message").and_then(Value::as_str).unwrap_or("error");
            out.push(OwnedInput::Fail {
                error: message.to_owned(),
            });
            return Ok(true);
        }
        let choices = match v.get("choices") {
            Some(Value::Array(c)) => c,
            // A usage-only chunk has no choices, or an empty list.
            None | Some(Value::Null) => return Ok(false),
            Some(_) => return Err(malformed(event, "choices is not a list")),
        };
        if !self.started {
            self.started = true;
            out.push(OwnedInput::MessageStart);
        }
        let Some(choice) = choices
            .iter()
            .find(|c| c.get("index").and_then(Value::as_u64).unwrap_or(0) == 0)
        else {
            return Ok(false);
        };
        let reasoning = match opt_str(event, choice, "/delta/reasoning_content")? {
            Some(r) => Some(r),
            None => opt_str(event, choice, "/delta/reasoning")?,
        };
        if let Some(r) = reasoning.filter(|r| !r.is_empty()) {
            self.thinking = true;
            out.push(OwnedInput::ThinkingDelta(r.to_owned()));
        }
        if let Some(text) = opt_str(event, choice, "/delta/content")?.filter(|t| !t.is_empty()) {
            self.end_thinking(out);
            out.push(OwnedInput::TextDelta(text.to_owned()));
        }
        match choice.pointer("/delta/tool_calls") {
            None | Some(Value::Null) => {}
            Some(Value::Array(calls)) => {
                for call in calls {
                    let Some(index) = call.get("index").and_then(Value::as_u64) else {
                        return Err(malformed(event, "a tool call without an index"));
                    };
                    if let Some(name) = opt_str(event, call, "/function/name")?
                        && self.tools.insert(index)
                    {
                        self.end_thinking(out);
                        out.push(OwnedInput::ToolStart {
                            name: name.to_owned(),
                        });
                    }
                }
            }
            Some(_) => return Err(malformed(event, "tool_calls is not a list")),
        }
        Ok(false)
    }
}

impl ChatMapper {
    fn end_thinking(&mut self, out: &mut Vec<OwnedInput>) {
        if std::mem::take(&mut self.thinking) {
            out.push(OwnedInput::ThinkingEnd);
        }
    }
}
