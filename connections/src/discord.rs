//! Discord REST: create, edit and delete channel messages, with files as attachments.
//!
//! | answer | outcome |
//! |---|---|
//! | 200 / 204 | delivered, `message_ref` = the message's `id` (a snowflake) |
//! | 404 Unknown Message (10008) on a delete | delivered: the message is gone |
//! | 429 | retry after the body's `retry_after` (seconds, fractional), else the `X-RateLimit-Reset-After` or `Retry-After` header |
//! | 5xx, network error | transient |
//! | 400, 401, 403, 404 | permanent |
//!
//! The content is [`SendRequest::text`]: in the `discord` format (the Discord profile's),
//! Markdown with tables as aligned code blocks and `@everyone` / `@here` defused; in any
//! other format, that format's text as is.
//!
//! Every message is sent with `allowed_mentions: {"parse": []}` unless set otherwise: a
//! model's `@everyone` or `<@id>` shows as text and pings nobody. When a reply leaves a
//! channel's bucket empty (`X-RateLimit-Remaining: 0`), the next send to that channel waits
//! out `X-RateLimit-Reset-After` (reported as a failure to retry then, without a call)
//! instead of meeting a 429. The chat key is the channel id. Media by URL is linked in the
//! content (Discord previews it); local files are uploaded as attachments. Discord has no
//! drafts: a `Draft` send is refused as permanent (use the edit transport for previews).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use replystream::{ReplyTarget, SendOp, SendRequest};
use serde_json::{Value, json};

use crate::http::{Body, Http, HttpOptions, Reply};
use crate::media::{self, MediaRoots, Source};
use crate::multipart::Form;
use crate::{Failure, Outcome, Platform, seconds_to_ms};

/// Discord's REST API, version 10.
pub const DEFAULT_API_URL: &str = "https://discord.com/api/v10";

/// A Discord bot. See the module docs.
pub struct Discord {
    http: Http,
    base: String,
    auth: String,
    allowed_mentions: Value,
    /// Channels whose rate-limit bucket is empty, until when.
    empty_until: Mutex<HashMap<String, Instant>>,
    /// Where local files may be uploaded from.
    roots: MediaRoots,
}

impl Discord {
    /// A bot with this token on the public API.
    pub fn new(token: &str) -> Discord {
        Discord::with_options(token, DEFAULT_API_URL, &HttpOptions::default())
    }

    /// A bot with this token on the API at `api_url` (ending in the version, like
    /// [`DEFAULT_API_URL`]), with these HTTP settings.
    pub fn with_options(token: &str, api_url: &str, http: &HttpOptions) -> Discord {
        Discord {
            http: Http::new(http, token),
            base: api_url.trim_end_matches('/').to_owned(),
            auth: format!("Bot {token}"),
            allowed_mentions: json!({ "parse": [] }),
            empty_until: Mutex::new(HashMap::new()),
            roots: MediaRoots::none(),
        }
    }

    /// Uploads local files only from inside these directories, checked on the file system
    /// at upload time (see [`MediaRoots`]); none by default, so no local file is uploaded.
    #[must_use]
    pub fn with_media_roots(mut self, roots: MediaRoots) -> Discord {
        self.roots = roots;
        self
    }

    /// Sends `allowed_mentions` with every message instead of `{"parse": []}` (e.g.
    /// `{"parse": ["users"]}` to let the model ping users).
    #[must_use]
    pub fn with_allowed_mentions(mut self, allowed_mentions: Value) -> Discord {
        self.allowed_mentions = allowed_mentions;
        self
    }

    fn call(&self, method: &str, path: &str, chat: &str, body: Body<'_>) -> Result<Value, Refusal> {
        let url = format!("{}{path}", self.base);
        let reply = self
            .http
            .request(method, &url, Some(&self.auth), body)
            .map_err(Refusal::Failed)?;
        self.note_bucket(chat, &reply);
        if (200..300).contains(&reply.status) {
            return Ok(reply.json());
        }
        Err(Refusal::Api(read_error(method, &reply)))
    }

    /// Remembers an emptied bucket, from the rate-limit headers of any reply.
    fn note_bucket(&self, chat: &str, reply: &Reply) {
        let empty = reply.header("x-ratelimit-remaining").map(str::trim) == Some("0");
        let reset = reply
            .header("x-ratelimit-reset-after")
            .and_then(|v| v.trim().parse::<f64>().ok())
            .and_then(seconds_to_ms);
        let mut map = self.empty_until.lock().unwrap_or_else(|p| p.into_inner());
        match (empty, reset) {
            (true, Some(ms)) => {
                map.insert(chat.to_owned(), Instant::now() + Duration::from_millis(ms));
            }
            _ => {
                map.remove(chat);
            }
        }
    }

    /// The wait left before `chat`'s bucket refills, if it is empty.
    fn bucket_wait(&self, chat: &str) -> Option<u64> {
        let map = self.empty_until.lock().unwrap_or_else(|p| p.into_inner());
        let until = *map.get(chat)?;
        let left = until.checked_duration_since(Instant::now())?;
        Some(left.as_nanos().div_ceil(1_000_000) as u64)
    }

    /// The message: the send's text in its format (`discord`: Markdown with tables as code
    /// blocks and mass mentions defused), the media URLs after it.
    fn message_body(&self, send: &SendRequest, with_reference: bool) -> Value {
        let payload = &send.payload;
        let mut body = json!({
            "content": media::text_with_links(send.text(), &payload.media),
            "allowed_mentions": self.allowed_mentions,
        });
        if with_reference && let Some(ReplyTarget::Id(id)) = &payload.reply_to {
            body["message_reference"] = json!({ "message_id": id, "fail_if_not_exists": false });
        }
        body
    }

    fn create(&self, chat: &str, send: &SendRequest) -> Outcome {
        let payload = &send.payload;
        let body = self.message_body(send, true);
        let path = format!("/channels/{chat}/messages");
        let files: Vec<&str> = payload
            .media
            .iter()
            .filter(|m| matches!(media::source(m), Source::File(_)))
            .map(String::as_str)
            .collect();
        let result = if files.is_empty() {
            self.call("POST", &path, chat, Body::Json(&body))
        } else {
            let mut form = Form::new();
            form.text("payload_json", &body.to_string());
            for (i, entry) in files.iter().enumerate() {
                let Source::File(p) = media::source(entry) else {
                    continue;
                };
                let (name, bytes) = match self.roots.read(p) {
                    Ok(f) => f,
                    Err(f) => return f.into(),
                };
                form.file(
                    &format!("files[{i}]"),
                    &name,
                    media::content_type(&name),
                    &bytes,
                );
            }
            self.call("POST", &path, chat, Body::Multipart(&form))
        };
        match result {
            Ok(v) => Outcome::delivered(v.get("id").and_then(Value::as_str).map(str::to_owned)),
            Err(e) => e.into_outcome(),
        }
    }

    fn edit(&self, chat: &str, send: &SendRequest) -> Outcome {
        let Some(id) = send.message_ref.as_deref() else {
            return Failure::permanent("edit: no Discord message id to edit").into();
        };
        let body = self.message_body(send, false);
        let path = format!("/channels/{chat}/messages/{id}");
        match self.call("PATCH", &path, chat, Body::Json(&body)) {
            Ok(_) => Outcome::delivered(send.message_ref.clone()),
            Err(e) => e.into_outcome(),
        }
    }

    fn delete(&self, chat: &str, send: &SendRequest) -> Outcome {
        let Some(id) = send.message_ref.as_deref() else {
            return Outcome::delivered(None);
        };
        let path = format!("/channels/{chat}/messages/{id}");
        match self.call("DELETE", &path, chat, Body::None) {
            Ok(_) => Outcome::delivered(send.message_ref.clone()),
            Err(Refusal::Api(e)) if e.status == 404 && e.code == Some(10008) => {
                Outcome::delivered(send.message_ref.clone())
            }
            Err(e) => e.into_outcome(),
        }
    }
}

impl Platform for Discord {
    fn name(&self) -> &'static str {
        "discord"
    }

    fn deliver(&self, chat: &str, send: &SendRequest) -> Outcome {
        if let Some(wait) = self.bucket_wait(chat) {
            return Failure::transient(
                Some(wait),
                "rate limit bucket empty (X-RateLimit-Remaining: 0)",
            )
            .into();
        }
        match send.op {
            SendOp::Create { .. } => self.create(chat, send),
            SendOp::Edit { .. } => self.edit(chat, send),
            SendOp::Delete { .. } => self.delete(chat, send),
            _ => Failure::permanent(format!("discord has no {} operation", send.op.name())).into(),
        }
    }
}

enum Refusal {
    Failed(Failure),
    Api(ApiError),
}

struct ApiError {
    method: String,
    status: u16,
    code: Option<u64>,
    message: String,
    retry_after_ms: Option<u64>,
}

impl Refusal {
    fn into_outcome(self) -> Outcome {
        match self {
            Refusal::Failed(f) => f.into(),
            Refusal::Api(e) => {
                let code = e.code.map(|c| format!(" (code {c})")).unwrap_or_default();
                let reason = format!("{} {}: {}{code}", e.method, e.status, e.message);
                if e.status == 429 || e.status >= 500 {
                    Failure::transient(e.retry_after_ms, reason).into()
                } else {
                    Failure::permanent(reason).into()
                }
            }
        }
    }
}

fn read_error(method: &str, reply: &Reply) -> ApiError {
    let body = reply.json();
    let header_secs = |name| {
        reply
            .header(name)
            .and_then(|v: &str| v.trim().parse::<f64>().ok())
            .and_then(seconds_to_ms)
    };
    let retry_after_ms = body
        .get("retry_after")
        .and_then(Value::as_f64)
        .and_then(seconds_to_ms)
        .or_else(|| header_secs("x-ratelimit-reset-after"))
        .or_else(|| header_secs("retry-after"));
    ApiError {
        method: method.to_owned(),
        status: reply.status,
        code: body.get("code").and_then(Value::as_u64),
        message: body
            .get("message")
            .and_then(Value::as_str)
            .map_or_else(|| format!("HTTP {}", reply.status), str::to_owned),
        retry_after_ms,
    }
}
