//! Slack's native streaming (`chat.startStream` / `chat.appendStream` / `chat.stopStream`)
//! as the transport of the engine's draft previews ([`SendOp::Draft`](replystream::SendOp::Draft) with
//! [`PreviewTransport::Draft`](replystream::PreviewTransport)).
//!
//! The engine sends every preview update as the whole text so far; Slack's stream takes only
//! what is appended. So the connection remembers, per chat, what the open stream shows and
//! sends the difference:
//!
//! | engine sends | Slack gets |
//! |---|---|
//! | the first `Draft` (no message id yet), replying to a message (or, replying to none, in a turn whose user message the host named: [`CurrentMessages`](crate::sink::CurrentMessages)) | `chat.startStream` with `thread_ts` and the text; its `ts` is the preview's id |
//! | the first `Draft` with no message to reply to | `chat.postMessage` (a stream must be a thread reply): later drafts edit it |
//! | a `Draft` whose text extends what the stream shows | `chat.appendStream` with the new part (nothing when nothing is new) |
//! | a `Draft` whose text does not extend it (a tail window past the preview limit, reasoning shown at the top) | `chat.stopStream`, then `chat.update` with the whole text; the preview is an edited message from then on |
//! | the first `Final` create after the preview (not the reasoning's own message) | the final goes *into* the preview: `chat.stopStream` with the missing part when it extends what is shown; otherwise `chat.stopStream` and `chat.update` with the final text. Its id is the preview's `ts` |
//! | `Delete` of the preview | `chat.delete` |
//! | (the turn ended, cancelled or with its final refused, the stream still open) | `chat.stopStream` ([`Platform::turn_ended`](crate::Platform::turn_ended)) |
//!
//! A streamed message stays in the channel (unlike a Telegram draft bubble, which goes
//! away), so the final must not be posted as a second message: the first final create of
//! the chat consumes the preview, and the reply shows once. Retries are safe: the preview's
//! state changes only on Slack's `ok`, and a `stopStream` that Slack answers
//! `message_not_in_streaming_state` (the stream already stopped: Slack closes idle streams,
//! or an earlier stop's answer was lost) falls back to `chat.update`, which sets the final
//! text whatever the message showed.
//!
//! A trailing preview cursor (the engine's `█` by default) is taken off every draft before
//! the difference is computed, and so is the closing fence line the engine adds while a code
//! block is open: an appended stream cannot take either back.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

use replystream::{ReplyTarget, SendRequest};
use serde_json::{Value, json};

use super::{Slack, escape, posted_text};
use crate::{Failure, Outcome, media};

/// Slack's answer when a stream was stopped already.
const NOT_STREAMING: &str = "message_not_in_streaming_state";

/// A chat's preview message: what it shows and whether its stream is still open.
#[derive(Clone, Debug)]
pub(super) struct Live {
    ts: String,
    /// The text the message shows, as sent (escaped).
    shown: String,
    /// The stream is open: text can be appended.
    streaming: bool,
    /// The message was started as a stream (its text is markdown), not posted.
    markdown: bool,
}

/// One text in the two forms a Slack message can take: Markdown (escaped) for a stream's
/// `markdown_text`, which Slack reads as Markdown, and mrkdwn for a posted message's `text`.
pub(super) struct Texts {
    pub(super) markdown: String,
    pub(super) mrkdwn: String,
}

impl Texts {
    /// The form for a message that was started as a stream (`markdown`) or posted.
    fn pick(&self, markdown: bool) -> &str {
        if markdown {
            &self.markdown
        } else {
            &self.mrkdwn
        }
    }
}

/// The previews of every chat, by chat. A chat's entry is taken out while a call for it is
/// running (the sink serves one call per chat at a time), so no lock is held over HTTP.
#[derive(Default)]
pub(super) struct Previews {
    live: Mutex<HashMap<String, Live>>,
}

impl Previews {
    fn lock(&self) -> MutexGuard<'_, HashMap<String, Live>> {
        self.live.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn take(&self, chat: &str) -> Option<Live> {
        self.lock().remove(chat)
    }

    fn put(&self, chat: &str, live: Live) {
        self.lock().insert(chat.to_owned(), live);
    }

    /// Forgets the preview `ts` of `chat` (it was deleted).
    pub(super) fn forget(&self, chat: &str, ts: &str) {
        let mut live = self.lock();
        if live.get(chat).is_some_and(|l| l.ts == ts) {
            live.remove(chat);
        }
    }

    /// Whether `chat` has a preview a final would go into.
    pub(super) fn has(&self, chat: &str) -> bool {
        self.lock().contains_key(chat)
    }
}

impl Slack {
    /// One preview update (a `Draft`).
    pub(super) fn draft(&self, chat: &str, current: Option<&str>, send: &SendRequest) -> Outcome {
        let text = Texts {
            markdown: self.draft_text(&send.payload.text),
            mrkdwn: self.draft_mrkdwn(send),
        };
        let known = self.previews.take(chat);
        let live = match (send.message_ref.as_deref(), known) {
            (None, _) => return self.start(chat, current, send, text),
            (Some(ts), Some(live)) if live.ts == ts => live,
            // A preview this connection does not know (another process started it): edit.
            (Some(ts), _) => Live {
                ts: ts.to_owned(),
                shown: String::new(),
                streaming: false,
                markdown: false,
            },
        };
        self.advance(chat, live, &text)
    }

    /// The text of a draft as it goes out: without the cursor, trailing whitespace and a
    /// closing fence line at the end, escaped.
    ///
    /// While a code block is open the engine's preview ends with a closing fence line it
    /// added; appended, it would end the block for good and the next update would no longer
    /// extend the stream. Holding back a last line that is only a fence costs nothing: a real
    /// closing fence comes again in a later update (followed by more text) or in the final.
    fn draft_text(&self, text: &str) -> String {
        // The engine writes the cursor after the content and the closing line after both.
        let mut text = text.trim_end();
        if let Some(newline) = text.rfind('\n')
            && is_fence_line(&text[newline + 1..])
        {
            text = text[..newline].trim_end();
        }
        if let Some(c) = self.cursor.as_deref().filter(|c| !c.is_empty()) {
            text = text.strip_suffix(c).unwrap_or(text).trim_end();
        }
        escape(text)
    }

    /// A draft as a posted message shows it: the send's text in its format (mrkdwn), the
    /// cursor taken off the end.
    fn draft_mrkdwn(&self, send: &SendRequest) -> String {
        let mut text = posted_text(send);
        if let Some(c) = self.cursor.as_deref().filter(|c| !c.is_empty()) {
            let kept = text.trim_end();
            let kept = kept.strip_suffix(c).unwrap_or(kept).trim_end().len();
            text.truncate(kept);
        }
        text
    }

    /// The first update of a preview: a stream in the thread it replies to, or a message.
    fn start(
        &self,
        chat: &str,
        current: Option<&str>,
        send: &SendRequest,
        texts: Texts,
    ) -> Outcome {
        let thread = match &send.payload.reply_to {
            Some(ReplyTarget::Id(ts)) => Some(ts.as_str()),
            _ => current,
        };
        let (method, body, markdown) = match thread {
            Some(thread_ts) => {
                let text = &texts.markdown;
                let mut body = json!({ "channel": chat, "thread_ts": thread_ts });
                if !text.is_empty() {
                    body["markdown_text"] = Value::from(text.as_str());
                }
                if let Some((team, user)) = &self.recipient {
                    body["recipient_team_id"] = Value::from(team.as_str());
                    body["recipient_user_id"] = Value::from(user.as_str());
                }
                ("chat.startStream", body, true)
            }
            None => (
                "chat.postMessage",
                json!({ "channel": chat, "text": texts.mrkdwn, "mrkdwn": true }),
                false,
            ),
        };
        let reply = match self.call(method, &body) {
            Ok(v) => v,
            Err(o) => return o,
        };
        let Some(ts) = reply.get("ts").and_then(Value::as_str) else {
            return Failure::permanent(format!("{method}: no ts in Slack's answer")).into();
        };
        self.previews.put(
            chat,
            Live {
                ts: ts.to_owned(),
                shown: texts.pick(markdown).to_owned(),
                streaming: markdown,
                markdown,
            },
        );
        Outcome::delivered(Some(ts.to_owned()))
    }

    /// Shows `text` in the preview `live`: appended to the stream when it extends what the
    /// stream shows, otherwise by stopping the stream and editing the message.
    fn advance(&self, chat: &str, mut live: Live, texts: &Texts) -> Outcome {
        let text = texts.pick(live.markdown);
        let ts = live.ts.clone();
        if live.streaming
            && let Some(delta) = text.strip_prefix(live.shown.as_str())
        {
            if delta.is_empty() {
                self.previews.put(chat, live);
                return Outcome::delivered(Some(ts));
            }
            let body = json!({ "channel": chat, "ts": ts, "markdown_text": delta });
            match self.call("chat.appendStream", &body) {
                Ok(_) => {
                    live.shown = text.to_owned();
                    self.previews.put(chat, live);
                    return Outcome::delivered(Some(ts));
                }
                Err(o) if is_error(&o, NOT_STREAMING) => live.streaming = false,
                Err(o) => {
                    self.previews.put(chat, live);
                    return o;
                }
            }
        }
        if let Err(o) = self.stop(chat, &mut live, None) {
            self.previews.put(chat, live);
            return o;
        }
        let field = if live.markdown {
            "markdown_text"
        } else {
            "text"
        };
        let mut body = json!({ "channel": chat, "ts": ts });
        body[field] = Value::from(text);
        match self.call("chat.update", &body) {
            Ok(_) => {
                live.shown = text.to_owned();
                self.previews.put(chat, live);
                Outcome::delivered(Some(ts))
            }
            Err(o) => {
                self.previews.put(chat, live);
                o
            }
        }
    }

    /// Stops the stream of `live` if it is open, with `tail` as its last text; a stream
    /// Slack stopped already is stopped.
    fn stop(&self, chat: &str, live: &mut Live, tail: Option<&str>) -> Result<(), Outcome> {
        if !live.streaming {
            return Ok(());
        }
        let mut body = json!({ "channel": chat, "ts": live.ts });
        if let Some(tail) = tail.filter(|t| !t.is_empty()) {
            body["markdown_text"] = Value::from(tail);
        }
        match self.call("chat.stopStream", &body) {
            Ok(_) => {
                live.streaming = false;
                if let Some(tail) = tail {
                    live.shown.push_str(tail);
                }
                Ok(())
            }
            Err(o) if is_error(&o, NOT_STREAMING) => {
                live.streaming = false;
                // What the stream shows now is not known for sure: the next step edits.
                live.shown.clear();
                Ok(())
            }
            Err(o) => Err(o),
        }
    }

    /// The first final create of a chat that has a preview: the final goes into it.
    /// `None` when the chat has no preview (post the final as usual).
    pub(super) fn finish_into_preview(&self, chat: &str, texts: &Texts) -> Option<Outcome> {
        let mut live = self.previews.take(chat)?;
        let text = texts.pick(live.markdown);
        let ts = live.ts.clone();
        if live.streaming
            && let Some(delta) = text.strip_prefix(live.shown.as_str())
        {
            match self.stop(chat, &mut live, Some(delta)) {
                Ok(()) if live.shown == text => return Some(Outcome::delivered(Some(ts))),
                Ok(()) => {}
                Err(o) => {
                    self.previews.put(chat, live);
                    return Some(o);
                }
            }
        }
        if let Err(o) = self.stop(chat, &mut live, None) {
            self.previews.put(chat, live);
            return Some(o);
        }
        let field = if live.markdown {
            "markdown_text"
        } else {
            "text"
        };
        let mut body = json!({ "channel": chat, "ts": ts });
        body[field] = Value::from(text);
        match self.call("chat.update", &body) {
            Ok(_) => Some(Outcome::delivered(Some(ts))),
            // The preview is gone (deleted by someone): post the final as a new message.
            Err(o) if is_error(&o, "message_not_found") => None,
            Err(o) => {
                self.previews.put(chat, live);
                Some(o)
            }
        }
    }
}

/// A line that is only a code fence marker: three or more backticks or tildes.
fn is_fence_line(line: &str) -> bool {
    let line = line.trim();
    line.len() >= 3 && (line.bytes().all(|b| b == b'`') || line.bytes().all(|b| b == b'~'))
}

impl Slack {
    /// Stops and forgets `chat`'s preview, if it has one (its turn is over).
    pub(super) fn end_preview(&self, chat: &str) {
        if let Some(mut live) = self.previews.take(chat) {
            // Nothing to retry into: the turn is over. Slack closes what stays open.
            let _ = self.stop(chat, &mut live, None);
        }
    }
}

/// Whether `outcome` is Slack's `ok: false` with `error`.
fn is_error(outcome: &Outcome, error: &str) -> bool {
    matches!(outcome, Outcome::Failed(f) if f.reason.ends_with(&format!(" {error}")))
}

/// The text a final create shows in a stream (Markdown, escaped), as sent.
pub(super) fn final_text(payload: &replystream::Payload) -> String {
    escape(&media::text_with_links(&payload.text, &payload.media))
}
