//! The Telegram Bot API: `sendMessage`, `editMessageText`, `deleteMessage`,
//! `sendMessageDraft` and the media methods (`sendPhoto`, `sendAudio`, `sendVoice`,
//! `sendVideo`, `sendDocument`), with the platform's answers read as the engine needs them.
//!
//! | answer | outcome |
//! |---|---|
//! | `ok: true` | delivered, `message_ref` = `result.message_id` |
//! | 400 "message is not modified" (edit) | delivered: the message shows that text |
//! | 400 "message to delete not found" (delete) | delivered: the message is gone |
//! | 400 "can't parse entities" (HTML or entities) | sent again once as plain text: the visible text, no markup |
//! | 429 with `parameters.retry_after` (seconds) | retry no earlier than that, in ms |
//! | 5xx, network error | transient: the engine retries after its backoff |
//! | 400 (chat not found, message is too long, ...), 401, 403 (bot blocked), 404 | permanent |
//! | no valid URL (a chat id or API URL that cannot be written into one) | permanent |
//!
//! The chat key a stream is opened with is the `chat_id`: a number, or `@channelname`.
//!
//! Text goes out in the send's format ([`SendRequest::format`]): `telegram-html` as
//! [`SendRequest::text`] with `parse_mode=HTML`; `telegram-entities` as the plain text with an
//! `entities` array (`caption_entities` for a caption); any other format (`markdown`, a send
//! built by hand) as its text with no parse mode. Edits and drafts alike. Should Telegram
//! refuse the markup ("can't parse entities"), the send goes once more as the text the user
//! would have seen without its styling: the HTML's tags taken out and its `&lt;`, `&gt;`,
//! `&amp;`, `&quot;` read back, or the entities' text without the entities. Not the
//! Markdown: that would show `**` and fences, which no Telegram reader wants.

use std::collections::HashMap;
use std::sync::Mutex;

use replystream::{Entity, Format, Payload, ReplyTarget, SendOp, SendRequest};
use serde_json::{Value, json};

use crate::http::{Body, Http, HttpOptions, Reply};
use crate::media::{self, MediaKind, MediaRoots, Source};
use crate::multipart::Form;
use crate::{Failure, Outcome, Platform, seconds_to_ms};

/// The public Bot API server.
pub const DEFAULT_API_URL: &str = "https://api.telegram.org";

/// The most UTF-16 units of a media caption, after entity parsing.
pub const CAPTION_LIMIT: usize = 1024;

/// A text in the form the API reads it: the text, and its parse mode or its entities.
#[derive(Clone, Debug, PartialEq)]
struct Outgoing {
    text: String,
    /// `HTML`, or `None`.
    parse_mode: Option<&'static str>,
    /// `telegram-entities`: the Bot API `MessageEntity` array.
    entities: Option<Value>,
}

impl Outgoing {
    fn styled(&self) -> bool {
        self.parse_mode.is_some() || self.entities.is_some()
    }

    /// The same text as the user would see it, with no markup: for the one retry after
    /// "can't parse entities".
    fn plain(&self) -> Outgoing {
        let text = match self.parse_mode {
            Some(_) => html_visible_text(&self.text),
            None => self.text.clone(),
        };
        Outgoing {
            text,
            parse_mode: None,
            entities: None,
        }
    }

    /// How many UTF-16 units Telegram counts: the text after entity parsing.
    fn visible_len(&self) -> usize {
        match self.parse_mode {
            Some(_) => utf16_len(&html_visible_text(&self.text)),
            None => utf16_len(&self.text),
        }
    }

    /// Writes the text into `body` as `field` (`text` or `caption`), with its parse mode
    /// or its entities (`entities` or `caption_entities`).
    fn write(&self, body: &mut Value, field: &str) {
        body[field] = Value::from(self.text.as_str());
        if let Some(o) = body.as_object_mut() {
            o.remove("parse_mode");
            o.remove("entities");
            o.remove("caption_entities");
        }
        if let Some(mode) = self.parse_mode {
            body["parse_mode"] = Value::from(mode);
        }
        if let Some(entities) = &self.entities {
            let name = if field == "caption" {
                "caption_entities"
            } else {
                "entities"
            };
            body[name] = entities.clone();
        }
    }

    /// The text without leading and trailing whitespace (a caption), entities moved along.
    fn trimmed(self) -> Outgoing {
        let start = self.text.len() - self.text.trim_start().len();
        let kept = self.text.trim().to_owned();
        let lead = utf16_len(&self.text[..start]);
        let total = utf16_len(&kept);
        let entities = self.entities.map(|list| {
            let moved = list
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|e| {
                    let offset = e.get("offset")?.as_u64()? as usize;
                    let length = e.get("length")?.as_u64()? as usize;
                    let from = offset.saturating_sub(lead).min(total);
                    let to = (offset + length).saturating_sub(lead).min(total);
                    (to > from).then(|| {
                        let mut e = e.clone();
                        e["offset"] = Value::from(from);
                        e["length"] = Value::from(to - from);
                        e
                    })
                })
                .collect();
            Value::Array(moved)
        });
        Outgoing {
            text: kept,
            parse_mode: self.parse_mode,
            entities,
        }
    }
}

/// What `send` posts, in its format. Media URLs are not part of the text on Telegram
/// (each goes as its own media message).
fn outgoing(send: &SendRequest) -> Outgoing {
    match send.format {
        Format::TelegramHtml => Outgoing {
            text: send.text().to_owned(),
            parse_mode: Some("HTML"),
            entities: None,
        },
        Format::TelegramEntities => Outgoing {
            text: send.text().to_owned(),
            parse_mode: None,
            entities: Some(entities_json(send.entities())),
        },
        _ => Outgoing {
            text: send.text().to_owned(),
            parse_mode: None,
            entities: None,
        },
    }
}

/// replystream's entities as Bot API `MessageEntity` objects.
fn entities_json(entities: &[Entity]) -> Value {
    entities
        .iter()
        .map(|e| {
            let mut v = json!({ "type": e.kind.name(), "offset": e.offset, "length": e.length });
            if let Some(url) = &e.url {
                v["url"] = Value::from(url.as_str());
            }
            if let Some(language) = &e.language {
                v["language"] = Value::from(language.as_str());
            }
            v
        })
        .collect()
}

/// The text a Telegram HTML message shows: the tags Telegram knows taken out, the four
/// entities it names (`&lt;` `&gt;` `&amp;` `&quot;`) read back, anything else kept as
/// written. For HTML Telegram refused, so a stray `<` that opens no known tag stays text.
fn html_visible_text(html: &str) -> String {
    const TAGS: [&str; 15] = [
        "b",
        "strong",
        "i",
        "em",
        "u",
        "ins",
        "s",
        "strike",
        "del",
        "code",
        "pre",
        "a",
        "blockquote",
        "tg-spoiler",
        "span",
    ];
    let mut out = String::with_capacity(html.len());
    let mut rest = html;
    while let Some(i) = rest.find(['<', '&']) {
        out.push_str(&rest[..i]);
        rest = &rest[i..];
        if rest.starts_with('<') {
            let inner = rest[1..].strip_prefix('/').unwrap_or(&rest[1..]);
            let name_end = inner
                .find(|c: char| c == '>' || c.is_ascii_whitespace())
                .unwrap_or(inner.len());
            let known = TAGS.contains(&&inner[..name_end]);
            match rest.find('>') {
                Some(end) if known => rest = &rest[end + 1..],
                _ => {
                    out.push('<');
                    rest = &rest[1..];
                }
            }
            continue;
        }
        let entity = [
            ("&lt;", '<'),
            ("&gt;", '>'),
            ("&amp;", '&'),
            ("&quot;", '"'),
        ]
        .into_iter()
        .find(|(name, _)| rest.starts_with(name));
        match entity {
            Some((name, c)) => {
                out.push(c);
                rest = &rest[name.len()..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// A Telegram bot. See the module docs for how answers are read.
pub struct Telegram {
    http: Http,
    /// `{api_url}/bot{token}`.
    base: String,
    /// Media sends that failed part-way: how many entries of the payload already arrived,
    /// so a retry of the same send does not post them twice.
    progress: Mutex<HashMap<(String, u64), (Payload, usize)>>,
    /// Where local files may be uploaded from.
    roots: MediaRoots,
}

impl Telegram {
    /// A bot with this token, on the public API server.
    pub fn new(token: &str) -> Telegram {
        Telegram::with_options(token, DEFAULT_API_URL, &HttpOptions::default())
    }

    /// A bot with this token on the Bot API server at `api_url` (a self-hosted server, or a
    /// test's fake), with these HTTP settings.
    pub fn with_options(token: &str, api_url: &str, http: &HttpOptions) -> Telegram {
        Telegram {
            http: Http::new(http, token),
            base: format!("{}/bot{token}", api_url.trim_end_matches('/')),
            progress: Mutex::new(HashMap::new()),
            roots: MediaRoots::none(),
        }
    }

    /// Uploads local files only from inside these directories, checked on the file system
    /// at upload time (see [`MediaRoots`]); none by default, so no local file is uploaded.
    #[must_use]
    pub fn with_media_roots(mut self, roots: MediaRoots) -> Telegram {
        self.roots = roots;
        self
    }

    /// Calls `method` and returns its `result`, or the platform's refusal.
    fn call(&self, method: &str, body: Body<'_>) -> Result<Value, Refusal> {
        let url = format!("{}/{method}", self.base);
        let reply = self
            .http
            .request("POST", &url, None, body)
            .map_err(Refusal::Failed)?;
        read_reply(method, &reply)
    }

    /// Calls a text method with `text` as `field` (`text` or `caption`), and once more as
    /// plain text when the API cannot parse its markup.
    fn call_text(
        &self,
        method: &str,
        mut body: Value,
        text: &Outgoing,
        field: &str,
    ) -> Result<Value, Refusal> {
        text.write(&mut body, field);
        match self.call(method, Body::Json(&body)) {
            Err(Refusal::Api(e)) if text.styled() && e.cannot_parse() => {
                text.plain().write(&mut body, field);
                self.call(method, Body::Json(&body))
            }
            other => other,
        }
    }

    fn create_text(&self, chat: &str, send: &SendRequest) -> Outcome {
        let mut body = json!({ "chat_id": chat_id(chat) });
        reply_parameters(&mut body, &send.payload);
        match self.call_text("sendMessage", body, &outgoing(send), "text") {
            Ok(result) => Outcome::delivered(message_id(&result)),
            Err(e) => e.into_outcome(),
        }
    }

    fn edit(&self, chat: &str, send: &SendRequest) -> Outcome {
        let Some(id) = send
            .message_ref
            .as_deref()
            .and_then(|r| r.parse::<i64>().ok())
        else {
            return Failure::permanent("edit: no Telegram message id to edit").into();
        };
        let body = json!({ "chat_id": chat_id(chat), "message_id": id });
        match self.call_text("editMessageText", body, &outgoing(send), "text") {
            Ok(_) => Outcome::delivered(send.message_ref.clone()),
            Err(Refusal::Api(e)) if e.description.contains("message is not modified") => {
                Outcome::delivered(send.message_ref.clone())
            }
            Err(e) => e.into_outcome(),
        }
    }

    fn delete(&self, chat: &str, send: &SendRequest) -> Outcome {
        // A draft bubble (no message id) vanishes by itself; nothing to delete.
        let Some(id) = send.message_ref.as_deref() else {
            return Outcome::delivered(None);
        };
        let Ok(id) = id.parse::<i64>() else {
            return Failure::permanent(format!("delete: {id:?} is not a Telegram message id"))
                .into();
        };
        let body = json!({ "chat_id": chat_id(chat), "message_id": id });
        match self.call("deleteMessage", Body::Json(&body)) {
            Ok(_) => Outcome::delivered(send.message_ref.clone()),
            Err(Refusal::Api(e)) if e.description.contains("message to delete not found") => {
                Outcome::delivered(send.message_ref.clone())
            }
            Err(e) => e.into_outcome(),
        }
    }

    fn draft(&self, chat: &str, key: u32, send: &SendRequest) -> Outcome {
        // Draft ids must be non-zero; the engine's keys start at 0.
        let body = json!({ "chat_id": chat_id(chat), "draft_id": u64::from(key) + 1 });
        match self.call_text("sendMessageDraft", body, &outgoing(send), "text") {
            Ok(_) => Outcome::delivered(None),
            Err(e) => e.into_outcome(),
        }
    }

    /// Sends each media entry as its own message; the text rides as the first one's caption
    /// when it fits, and goes first as a message of its own when it does not.
    fn create_media(&self, chat: &str, send: &SendRequest) -> Outcome {
        let payload = &send.payload;
        // A file that may not be uploaded fails the send before any part of it goes out.
        if let Err(refused) = self.roots.check_all(&payload.media) {
            return refused.into();
        }
        let progress_key = (chat.to_owned(), send.send_id.0);
        let mut done = {
            let map = self.progress.lock().unwrap_or_else(|p| p.into_inner());
            map.get(&progress_key)
                .filter(|(p, _)| p == payload)
                .map_or(0, |(_, n)| *n)
        };
        let text = outgoing(send).trimmed();
        let caption_fits = !text.text.is_empty() && text.visible_len() <= CAPTION_LIMIT;
        // Steps: 0 is the separate text message (when there is one), then one per entry.
        let separate_text = !text.text.is_empty() && !caption_fits;
        let steps = payload.media.len() + usize::from(separate_text);
        let mut last_id = None;
        while done < steps {
            let result = if separate_text && done == 0 {
                let mut body = json!({ "chat_id": chat_id(chat) });
                reply_parameters(&mut body, payload);
                self.call_text("sendMessage", body, &text, "text")
            } else {
                let index = done - usize::from(separate_text);
                let first = index == 0;
                let caption = (first && caption_fits).then_some(&text);
                self.send_one_media(chat, payload, &payload.media[index], caption, first)
            };
            match result {
                Ok(r) => {
                    last_id = message_id(&r).or(last_id);
                    done += 1;
                }
                Err(e) => {
                    let outcome = e.into_outcome();
                    let mut map = self.progress.lock().unwrap_or_else(|p| p.into_inner());
                    match &outcome {
                        Outcome::Failed(f) if !f.permanent && done > 0 => {
                            map.insert(progress_key, (payload.clone(), done));
                        }
                        _ => {
                            map.remove(&progress_key);
                        }
                    }
                    return outcome;
                }
            }
        }
        self.progress
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&progress_key);
        Outcome::delivered(last_id)
    }

    fn send_one_media(
        &self,
        chat: &str,
        payload: &Payload,
        entry: &str,
        caption: Option<&Outgoing>,
        first: bool,
    ) -> Result<Value, Refusal> {
        let (method, field) = match media::kind(entry) {
            MediaKind::Photo => ("sendPhoto", "photo"),
            MediaKind::Audio if payload.audio_as_voice => ("sendVoice", "voice"),
            MediaKind::Audio => ("sendAudio", "audio"),
            MediaKind::Video => ("sendVideo", "video"),
            MediaKind::Document => ("sendDocument", "document"),
        };
        let mut body = json!({ "chat_id": chat_id(chat) });
        if first {
            reply_parameters(&mut body, payload);
        }
        match media::source(entry) {
            Source::Url(url) => {
                body[field] = Value::from(url);
                match caption {
                    Some(c) => self.call_text(method, body, c, "caption"),
                    None => self.call(method, Body::Json(&body)),
                }
            }
            Source::File(path) => {
                let (name, bytes) = self.roots.read(path).map_err(Refusal::Failed)?;
                let upload = |caption: Option<&Outgoing>| {
                    let mut fields = body.clone();
                    if let Some(c) = caption {
                        c.write(&mut fields, "caption");
                    }
                    let mut form = Form::new();
                    for (k, v) in fields.as_object().into_iter().flatten() {
                        match v {
                            Value::String(s) => form.text(k, s),
                            other => form.text(k, &other.to_string()),
                        }
                    }
                    form.file(field, &name, media::content_type(&name), &bytes);
                    self.call(method, Body::Multipart(&form))
                };
                match caption {
                    Some(c) => match upload(Some(c)) {
                        Err(Refusal::Api(e)) if c.styled() && e.cannot_parse() => {
                            upload(Some(&c.plain()))
                        }
                        other => other,
                    },
                    None => upload(None),
                }
            }
        }
    }
}

/// A user's text message, from [`Telegram::updates`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct IncomingMessage {
    /// The update's id: ask for updates from `update_id + 1` next.
    pub update_id: i64,
    /// The chat it came from (the key to open the reply's stream with).
    pub chat: String,
    /// The message's id (to reply to it).
    pub message_id: String,
    /// Its text.
    pub text: String,
}

impl Telegram {
    /// Long-polls `getUpdates` for new messages from `offset` on, waiting up to
    /// `wait_secs` (keep it under the HTTP timeout). Updates that are not text messages are
    /// skipped, but their ids still count: pass the returned offset next time.
    pub fn updates(
        &self,
        offset: i64,
        wait_secs: u32,
    ) -> Result<(i64, Vec<IncomingMessage>), Failure> {
        let body =
            json!({ "offset": offset, "timeout": wait_secs, "allowed_updates": ["message"] });
        let result = self
            .call("getUpdates", Body::Json(&body))
            .map_err(Refusal::into_failure)?;
        let mut next = offset;
        let mut messages = Vec::new();
        for update in result.as_array().into_iter().flatten() {
            let Some(id) = update.get("update_id").and_then(Value::as_i64) else {
                continue;
            };
            next = next.max(id + 1);
            let m = &update["message"];
            if let (Some(chat), Some(message_id), Some(text)) = (
                m.pointer("/chat/id").and_then(Value::as_i64),
                m.get("message_id").and_then(Value::as_i64),
                m.get("text").and_then(Value::as_str),
            ) {
                messages.push(IncomingMessage {
                    update_id: id,
                    chat: chat.to_string(),
                    message_id: message_id.to_string(),
                    text: text.to_owned(),
                });
            }
        }
        Ok((next, messages))
    }
}

impl Platform for Telegram {
    fn name(&self) -> &'static str {
        "telegram"
    }

    fn deliver(&self, chat: &str, send: &SendRequest) -> Outcome {
        match send.op {
            SendOp::Create { .. } if send.payload.media.is_empty() => self.create_text(chat, send),
            SendOp::Create { .. } => self.create_media(chat, send),
            SendOp::Edit { .. } => self.edit(chat, send),
            SendOp::Delete { .. } => self.delete(chat, send),
            SendOp::Draft { key } => self.draft(chat, key.0, send),
            _ => Failure::permanent(format!(
                "telegram: unsupported operation {}",
                send.op.name()
            ))
            .into(),
        }
    }
}

/// A numeric chat id as a number, a `@username` as text.
fn chat_id(chat: &str) -> Value {
    chat.parse::<i64>()
        .map_or_else(|_| Value::from(chat), Value::from)
}

fn reply_parameters(body: &mut Value, payload: &Payload) {
    if let Some(ReplyTarget::Id(id)) = &payload.reply_to
        && let Ok(id) = id.parse::<i64>()
    {
        body["reply_parameters"] = json!({ "message_id": id, "allow_sending_without_reply": true });
    }
}

fn message_id(result: &Value) -> Option<String> {
    result.get("message_id").map(|id| match id {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    })
}

fn utf16_len(text: &str) -> usize {
    text.encode_utf16().count()
}

/// An answer other than `ok: true`.
enum Refusal {
    /// The request did not get an API answer (network), or could not be made.
    Failed(Failure),
    /// The API said no.
    Api(ApiError),
}

struct ApiError {
    method: String,
    code: u16,
    description: String,
    retry_after_ms: Option<u64>,
}

impl ApiError {
    fn cannot_parse(&self) -> bool {
        self.code == 400 && self.description.contains("can't parse entities")
    }
}

impl Refusal {
    fn into_outcome(self) -> Outcome {
        self.into_failure().into()
    }

    fn into_failure(self) -> Failure {
        match self {
            Refusal::Failed(f) => f,
            Refusal::Api(e) => {
                let reason = format!("{}: {} {}", e.method, e.code, e.description);
                if e.code == 429 || e.code >= 500 {
                    Failure::transient(e.retry_after_ms, reason)
                } else {
                    Failure::permanent(reason)
                }
            }
        }
    }
}

fn read_reply(method: &str, reply: &Reply) -> Result<Value, Refusal> {
    let body = reply.json();
    if body.get("ok") == Some(&Value::Bool(true)) {
        return Ok(body.get("result").cloned().unwrap_or(Value::Null));
    }
    let code = body
        .get("error_code")
        .and_then(Value::as_u64)
        .and_then(|c| u16::try_from(c).ok())
        .unwrap_or(reply.status);
    let description = match body.get("description").and_then(Value::as_str) {
        Some(d) => d.to_owned(),
        None => format!("unexpected reply (HTTP {})", reply.status),
    };
    let retry_after_ms = body
        .pointer("/parameters/retry_after")
        .and_then(Value::as_f64)
        .and_then(seconds_to_ms);
    // A 2xx that is not `ok: true` is no answer the API documents: a proxy's page, say.
    let code = if (200..300).contains(&code) {
        502
    } else {
        code
    };
    Err(Refusal::Api(ApiError {
        method: method.to_owned(),
        code,
        description,
        retry_after_ms,
    }))
}
