//! The Slack Web API: `chat.postMessage`, `chat.update` and `chat.delete`, and Slack's
//! native streaming for draft previews ([`stream`](self#draft-previews)).
//!
//! | answer | outcome |
//! |---|---|
//! | `ok: true` | delivered, `message_ref` = the message's `ts` |
//! | `message_not_found` on a delete | delivered: the message is gone |
//! | 429 with `Retry-After` (seconds) | retry no earlier than that |
//! | 5xx, network error, `ok: false` with `ratelimited`, `internal_error`, `fatal_error`, `service_unavailable`, `request_timeout` | transient |
//! | any other `ok: false` (`channel_not_found`, `not_in_channel`, `invalid_auth`, `msg_too_long`, ...) | permanent |
//!
//! The chat key is the channel id. A posted or edited message's `text` is
//! [`SendRequest::text`] with `mrkdwn: true`: in the `slack-mrkdwn` format (the Slack
//! profile's) `*bold*`, `<url|text>` links and `&`, `<`, `>` escaped by the renderer; in any
//! other format its text escaped here. Either way a model's `<!channel>` or `<@U123>` shows
//! as text and pings nobody. Draft previews streamed natively stay Markdown
//! (`markdown_text`, which Slack's streaming methods read as Markdown), escaped the same
//! way. A reply-to id becomes `thread_ts`. Media by URL is linked in the text (Slack
//! unfurls it); local files go through Slack's external-upload flow ([Files](self#files))
//! from inside the [`MediaRoots`] only.
//!
//! # Files
//!
//! A send with local files uploads each (`files.getUploadURLExternal`, then the bytes to
//! the URL it answers) and shares them with `files.completeUploadExternal` in the channel
//! (`channel_id`), the send's text as the `initial_comment` and the reply-to message as
//! `thread_ts`: one message, files and text. Nothing is shared before the last step, so a
//! failure on the way is retried whole without a duplicate. A final that goes into an open
//! preview stream shares its files first (no comment, once per send) and then finishes the
//! preview with its text. Slack shares asynchronously: the message's `ts` is the send's
//! `message_ref` only when the answer holds it.
//!
//! # Draft previews
//!
//! With the engine's preview transport set to `draft`, previews go through Slack's native
//! streaming (`chat.startStream`, `chat.appendStream`, `chat.stopStream`) in the thread of the
//! message they reply to, and the final goes into the streamed message (it is not posted a
//! second time). How each update maps onto the three methods, and the fallback to
//! `chat.update` when a new preview text does not extend the streamed one, is in the
//! `stream` module's source docs; the README's "Connect it to a chat" has the summary.

use replystream::{Format, Lane, Payload, ReplyTarget, SendKind, SendOp, SendRequest};
use serde_json::{Value, json};

mod stream;
mod upload;

use std::collections::HashMap;
use std::path::Path;
use std::sync::Mutex;

use crate::http::{Body, Http, HttpOptions};
use crate::media::{self, MediaRoots, Source};
use crate::{Failure, Outcome, Platform, seconds_to_ms};

/// The public Web API.
pub const DEFAULT_API_URL: &str = "https://slack.com/api";

/// Slack `error` values that go away by themselves.
const TRANSIENT: &[&str] = &[
    "ratelimited",
    "internal_error",
    "fatal_error",
    "service_unavailable",
    "request_timeout",
];

/// A Slack bot. See the module docs.
pub struct Slack {
    http: Http,
    base: String,
    auth: String,
    previews: stream::Previews,
    cursor: Option<String>,
    recipient: Option<(String, String)>,
    /// Where local files may be uploaded from.
    roots: MediaRoots,
    /// Finals whose files were shared ahead of their text going into a preview, by chat and
    /// send id: a retry of the text does not share them twice.
    shared: Mutex<HashMap<(String, u64), Payload>>,
}

impl Slack {
    /// A bot with this token (`xoxb-...`) on the public API.
    pub fn new(token: &str) -> Slack {
        Slack::with_options(token, DEFAULT_API_URL, &HttpOptions::default())
    }

    /// A bot with this token on the API at `api_url`, with these HTTP settings.
    pub fn with_options(token: &str, api_url: &str, http: &HttpOptions) -> Slack {
        Slack {
            http: Http::new(http, token),
            base: api_url.trim_end_matches('/').to_owned(),
            auth: format!("Bearer {token}"),
            previews: stream::Previews::default(),
            cursor: Some("\u{2588}".to_owned()),
            recipient: None,
            roots: MediaRoots::none(),
            shared: Mutex::new(HashMap::new()),
        }
    }

    /// Uploads local files only from inside these directories, checked on the file system
    /// at upload time (see [`MediaRoots`]); none by default, so no local file is uploaded.
    #[must_use]
    pub fn with_media_roots(mut self, roots: MediaRoots) -> Slack {
        self.roots = roots;
        self
    }

    /// The preview cursor the engine appends to drafts (`█` by default, the engine's
    /// default; `None` when the engine's `preview_cursor` is off): taken off before a draft
    /// is streamed, since text appended to a stream cannot be taken back.
    #[must_use]
    pub fn with_preview_cursor(mut self, cursor: Option<&str>) -> Slack {
        self.cursor = cursor.map(str::to_owned);
        self
    }

    /// The user a streamed preview is for (`recipient_team_id`, `recipient_user_id`): Slack
    /// requires them when streaming in a channel (not in a direct message).
    #[must_use]
    pub fn with_stream_recipient(mut self, team: &str, user: &str) -> Slack {
        self.recipient = Some((team.to_owned(), user.to_owned()));
        self
    }

    fn call(&self, method: &str, body: &Value) -> Result<Value, Outcome> {
        self.call_with(method, Body::Json(body))
    }

    fn call_with(&self, method: &str, body: Body<'_>) -> Result<Value, Outcome> {
        let url = format!("{}/{method}", self.base);
        let reply = self
            .http
            .request("POST", &url, Some(&self.auth), body)
            .map_err(Outcome::from)?;
        let json = reply.json();
        if reply.status == 429 {
            let wait = reply
                .header("retry-after")
                .and_then(|v| v.trim().parse::<f64>().ok())
                .and_then(seconds_to_ms);
            return Err(Failure::transient(wait, format!("{method}: 429 rate limited")).into());
        }
        if json.get("ok") == Some(&Value::Bool(true)) {
            return Ok(json);
        }
        let error = json.get("error").and_then(Value::as_str);
        let reason = format!(
            "{method}: {} {}",
            reply.status,
            error.unwrap_or("unexpected reply")
        );
        let transient = reply.status >= 500 || error.is_some_and(|e| TRANSIENT.contains(&e));
        let transient = transient || (error.is_none() && reply.status < 400);
        Err(if transient {
            Failure::transient(None, reason)
        } else {
            Failure::permanent(reason)
        }
        .into())
    }

    fn create(&self, chat: &str, send: &SendRequest) -> Outcome {
        let (kind, payload) = (send.kind, &send.payload);
        let files: Vec<&Path> = payload
            .media
            .iter()
            .filter_map(|m| match media::source(m) {
                Source::File(path) => Some(path),
                Source::Url(_) => None,
            })
            .collect();
        let thread_ts = match &payload.reply_to {
            Some(ReplyTarget::Id(ts)) => Some(ts.as_str()),
            _ => None,
        };
        let texts = stream::Texts {
            markdown: stream::final_text(payload),
            mrkdwn: posted_text(send),
        };
        // The reasoning, delivered as its own message, is not the reply the preview showed.
        let into_preview =
            kind == SendKind::Final && payload.lane != Lane::Reasoning && self.previews.has(chat);
        if !files.is_empty() {
            // A file that may not be uploaded fails the send before any part goes out.
            if let Err(refused) = self.roots.check_all(&payload.media) {
                return refused.into();
            }
            if !into_preview {
                return self.share_files(chat, &files, Some(&texts.mrkdwn), thread_ts);
            }
            let key = (chat.to_owned(), send.send_id.0);
            let done = self.shared_lock().get(&key) == Some(payload);
            if !done {
                match self.share_files(chat, &files, None, thread_ts) {
                    Outcome::Delivered { .. } => {
                        self.shared_lock().insert(key.clone(), payload.clone());
                    }
                    failed => return failed,
                }
            }
            let outcome = self
                .finish_into_preview(chat, &texts)
                .unwrap_or_else(|| self.post(chat, &texts, thread_ts));
            if !matches!(&outcome, Outcome::Failed(f) if !f.permanent) {
                self.shared_lock().remove(&key);
            }
            return outcome;
        }
        if into_preview && let Some(outcome) = self.finish_into_preview(chat, &texts) {
            return outcome;
        }
        self.post(chat, &texts, thread_ts)
    }

    fn shared_lock(&self) -> std::sync::MutexGuard<'_, HashMap<(String, u64), Payload>> {
        self.shared.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// `chat.postMessage` with the mrkdwn text, in the thread of `thread_ts` if given.
    fn post(&self, chat: &str, texts: &stream::Texts, thread_ts: Option<&str>) -> Outcome {
        let mut body = json!({ "channel": chat, "text": texts.mrkdwn, "mrkdwn": true });
        if let Some(ts) = thread_ts {
            body["thread_ts"] = Value::from(ts);
        }
        match self.call("chat.postMessage", &body) {
            Ok(v) => Outcome::delivered(v.get("ts").and_then(Value::as_str).map(str::to_owned)),
            Err(o) => o,
        }
    }

    fn edit(&self, chat: &str, send: &SendRequest) -> Outcome {
        let Some(ts) = send.message_ref.as_deref() else {
            return Failure::permanent("edit: no Slack message ts to edit").into();
        };
        let body = json!({ "channel": chat, "ts": ts, "text": posted_text(send), "mrkdwn": true });
        match self.call("chat.update", &body) {
            Ok(_) => Outcome::delivered(send.message_ref.clone()),
            Err(o) => o,
        }
    }

    fn delete(&self, chat: &str, send: &SendRequest) -> Outcome {
        let Some(ts) = send.message_ref.as_deref() else {
            return Outcome::delivered(None);
        };
        self.previews.forget(chat, ts);
        match self.call("chat.delete", &json!({ "channel": chat, "ts": ts })) {
            Ok(_) => Outcome::delivered(send.message_ref.clone()),
            Err(Outcome::Failed(f)) if f.reason.ends_with(" message_not_found") => {
                Outcome::delivered(send.message_ref.clone())
            }
            Err(o) => o,
        }
    }
}

impl Platform for Slack {
    fn name(&self) -> &'static str {
        "slack"
    }

    fn deliver(&self, chat: &str, send: &SendRequest) -> Outcome {
        self.deliver_answering(chat, None, send)
    }

    /// A preview stream no final went into (a cancelled turn, a final refused for good) is
    /// stopped, so it does not stay "streaming" in the channel. Best effort: one call.
    fn turn_ended(&self, chat: &str) {
        self.end_preview(chat);
    }

    /// A draft preview that replies to nothing streams in the thread of the user message
    /// the turn answers (`current`), if known: Slack streams only in threads.
    fn deliver_answering(&self, chat: &str, current: Option<&str>, send: &SendRequest) -> Outcome {
        match send.op {
            SendOp::Create { .. } => self.create(chat, send),
            SendOp::Draft { .. } => self.draft(chat, current, send),
            SendOp::Edit { .. } => self.edit(chat, send),
            SendOp::Delete { .. } => self.delete(chat, send),
            _ => Failure::permanent(format!("slack has no {} operation", send.op.name())).into(),
        }
    }
}

/// What a posted message's `text` holds: the send's text in mrkdwn (as rendered with the
/// `slack-mrkdwn` format, which escapes what it must; any other format's text escaped
/// here), then the media URLs, escaped, one a line.
fn posted_text(send: &SendRequest) -> String {
    let mut text = if send.format == Format::SlackMrkdwn {
        send.text().to_owned()
    } else {
        escape(send.text())
    };
    let links = escape(&media::text_with_links("", &send.payload.media));
    if !links.is_empty() {
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(&links);
    }
    text
}

/// Slack's three control characters as entities: `<...>` would otherwise be read as a
/// mention, a channel ping or a link.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}
