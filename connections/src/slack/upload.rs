//! Local files on Slack, through its external-upload flow:
//!
//! 1. `files.getUploadURLExternal` (form fields `filename`, `length`) answers an
//!    `upload_url` and a `file_id`, per file;
//! 2. the file's bytes are POSTed to that URL (a multipart form; Slack answers 200);
//! 3. `files.completeUploadExternal` with every `{id, title}`, `channel_id`, and
//!    optionally `initial_comment` (the send's text, mrkdwn) and `thread_ts` (the reply-to
//!    message) shares them in the channel as one message.
//!
//! Nothing shows in the channel before step 3: a failure at steps 1 or 2 (a 429 with its
//! `Retry-After`, a 5xx, a network error) is retried as a whole without a duplicate, and
//! uploads never completed are discarded by Slack. A rate limit on any step is a retry no
//! earlier than its `Retry-After`; any other refusal reads as a Web API error does (see the
//! module docs' table). A file outside the media roots is refused before step 1.

use std::path::Path;

use serde_json::{Value, json};

use super::Slack;
use crate::http::Body;
use crate::multipart::Form;
use crate::{Failure, Outcome, media, seconds_to_ms};

impl Slack {
    /// Uploads `files` and shares them in `chat` as one message, with `comment` as its text
    /// and in the thread of `thread_ts` when given. Delivered with the share's `ts` when
    /// Slack's answer holds it (shares are made asynchronously: often it does not).
    pub(super) fn share_files(
        &self,
        chat: &str,
        files: &[&Path],
        comment: Option<&str>,
        thread_ts: Option<&str>,
    ) -> Outcome {
        let mut uploaded = Vec::with_capacity(files.len());
        for path in files {
            match self.upload_one(path) {
                Ok(file) => uploaded.push(file),
                Err(outcome) => return outcome,
            }
        }
        let mut body = json!({ "files": uploaded, "channel_id": chat });
        if let Some(text) = comment.filter(|t| !t.is_empty()) {
            body["initial_comment"] = Value::from(text);
        }
        if let Some(ts) = thread_ts {
            body["thread_ts"] = Value::from(ts);
        }
        match self.call("files.completeUploadExternal", &body) {
            Ok(reply) => Outcome::delivered(share_ts(&reply, chat)),
            Err(outcome) => outcome,
        }
    }

    /// Steps 1 and 2 for one file: its `{id, title}` for step 3.
    fn upload_one(&self, path: &Path) -> Result<Value, Outcome> {
        let (name, bytes) = self.roots.read(path).map_err(Outcome::from)?;
        let length = bytes.len().to_string();
        let fields = [("filename", name.as_str()), ("length", length.as_str())];
        let reply = self.call_with("files.getUploadURLExternal", Body::Form(&fields))?;
        let text = |field: &str| reply.get(field).and_then(Value::as_str);
        let (Some(url), Some(id)) = (text("upload_url"), text("file_id")) else {
            return Err(Failure::transient(
                None,
                "files.getUploadURLExternal: no upload_url or file_id in the answer",
            )
            .into());
        };
        let mut form = Form::new();
        form.file("filename", &name, media::content_type(&name), &bytes);
        // The upload URL is signed: it takes no token (and is not given one).
        let answer = self
            .http
            .request("POST", url, None, Body::Multipart(&form))
            .map_err(Outcome::from)?;
        match answer.status {
            200..=299 => Ok(json!({ "id": id, "title": name })),
            429 => {
                let wait = answer
                    .header("retry-after")
                    .and_then(|v| v.trim().parse::<f64>().ok())
                    .and_then(seconds_to_ms);
                Err(Failure::transient(wait, "file upload: 429 rate limited").into())
            }
            status if status >= 500 => {
                Err(Failure::transient(None, format!("file upload: {status}")).into())
            }
            status => Err(Failure::permanent(format!(
                "file upload of {}: {status} {}",
                path.display(),
                answer.body.trim()
            ))
            .into()),
        }
    }
}

/// The `ts` of the message that shared the first file in `chat`, when the answer says.
fn share_ts(reply: &Value, chat: &str) -> Option<String> {
    let shares = reply.get("files")?.get(0)?.get("shares")?;
    ["public", "private"].iter().find_map(|kind| {
        let ts = shares.get(kind)?.get(chat)?.get(0)?.get("ts")?;
        ts.as_str().map(str::to_owned)
    })
}
