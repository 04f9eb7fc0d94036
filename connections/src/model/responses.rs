//! The OpenAI Responses API's streaming events: typed events (`response.*`), each with its
//! `type` in the data; `response.completed`, `response.incomplete` or `response.failed`
//! ends the stream (there is no `[DONE]`).

use replystream::OwnedInput;

use super::{Mapper, ModelError, json, opt_str, req_str};
use crate::sse::SseEvent;

#[derive(Default)]
pub(super) struct ResponsesMapper {
    started: bool,
    thinking: bool,
}

impl Mapper for ResponsesMapper {
    fn event(&mut self, event: &SseEvent, out: &mut Vec<OwnedInput>) -> Result<bool, ModelError> {
        let v = json(event)?;
        let kind = req_str(event, &v, "/type")?;
        if !self.started && kind != "error" {
            self.started = true;
            out.push(OwnedInput::MessageStart);
        }
        match kind {
            "response.output_text.delta" => {
                self.end_thinking(out);
                let delta = req_str(event, &v, "/delta")?;
                if !delta.is_empty() {
                    out.push(OwnedInput::TextDelta(delta.to_owned()));
                }
            }
            "response.output_text.done" => {
                let text = opt_str(event, &v, "/text")?;
                out.push(OwnedInput::TextEnd(text.map(str::to_owned)));
            }
            "response.reasoning_text.delta" | "response.reasoning_summary_text.delta" => {
                let delta = req_str(event, &v, "/delta")?;
                if !delta.is_empty() {
                    self.thinking = true;
                    out.push(OwnedInput::ThinkingDelta(delta.to_owned()));
                }
            }
            "response.reasoning_text.done" | "response.reasoning_summary_text.done" => {
                self.end_thinking(out);
            }
            "response.output_item.added"
                if opt_str(event, &v, "/item/type")? == Some("function_call") =>
            {
                self.end_thinking(out);
                let name = req_str(event, &v, "/item/name")?;
                out.push(OwnedInput::ToolStart {
                    name: name.to_owned(),
                });
            }
            "response.completed" | "response.incomplete" => {
                self.end_thinking(out);
                out.push(OwnedInput::MessageEnd(None));
                return Ok(true);
            }
            "response.failed" | "error" => {
                let message = opt_str(event, &v, "/response/error/message")?
                    .or(opt_str(event, &v, "/message")?)
                    .unwrap_or("the model failed");
                out.push(OwnedInput::Fail {
                    error: message.to_owned(),
                });
                return Ok(true);
            }
            _ => {}
        }
        Ok(false)
    }
}

impl ResponsesMapper {
    fn end_thinking(&mut self, out: &mut Vec<OwnedInput>) {
        if std::mem::take(&mut self.thinking) {
            out.push(OwnedInput::ThinkingEnd);
        }
    }
}
