//! Slack's external file upload in the fake Slack server, as Slack documents it:
//! `files.getUploadURLExternal` (form fields `filename` and `length`, a positive size)
//! answers an `upload_url` and a `file_id`; a POST of exactly `length` bytes to that URL is
//! answered 200 `OK - <length>`; `files.completeUploadExternal` (`files` = `[{id, title}]`,
//! `channel_id`, optional `initial_comment` and `thread_ts`) shares the uploaded files in the
//! channel as one message. Nothing is shared before that last call, and an upload is shared
//! once at most. Rate limits and faults are applied to every step by the server's `answer`.

use serde_json::{Value, json};

use super::slack::State;
use super::{Request, Response};

/// One file being uploaded.
#[derive(Clone, Debug)]
pub struct Upload {
    pub filename: String,
    pub length: usize,
    /// The bytes POSTed to the upload URL, once they were.
    pub bytes: Option<Vec<u8>>,
    pub shared: bool,
    /// The bytes came with an `Authorization` header (the signed URL needs none).
    pub token_sent: bool,
}

/// A message that shared files.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Share {
    pub channel: String,
    pub ts: String,
    pub thread_ts: Option<String>,
    /// The `initial_comment` as sent (mrkdwn, entities not decoded).
    pub comment: Option<String>,
    /// Each file's title and bytes, in order.
    pub files: Vec<(String, Vec<u8>)>,
}

/// The files side of the fake's state.
#[derive(Default)]
pub struct Files {
    /// The server's own URL, for upload URLs.
    pub base: String,
    pub uploads: Vec<Upload>,
    pub shares: Vec<Share>,
}

fn not_ok(error: &str) -> Response {
    Response::json(200, &json!({ "ok": false, "error": error }))
}

/// The form fields of a `application/x-www-form-urlencoded` body, or a JSON object's
/// strings and numbers as text.
fn fields(req: &Request) -> Vec<(String, String)> {
    let form = req
        .header("content-type")
        .is_some_and(|t| t.starts_with("application/x-www-form-urlencoded"));
    if !form {
        return req
            .fields()
            .into_iter()
            .map(|(k, v)| match v {
                Value::String(s) => (k, s),
                other => (k, other.to_string()),
            })
            .collect();
    }
    String::from_utf8_lossy(&req.body)
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            (decode(k), decode(v))
        })
        .collect()
}

fn decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("");
                out.push(u8::from_str_radix(hex, 16).unwrap_or(b'?'));
                i += 2;
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `files.getUploadURLExternal`, `files.completeUploadExternal`, or a POST to an upload
/// URL; `None` for any other path.
pub fn answer(st: &mut State, req: &Request) -> Option<Response> {
    if let Some(id) = req.path.strip_prefix("/upload/v1/") {
        return Some(receive(st, id, req));
    }
    match req.path.as_str() {
        "/files.getUploadURLExternal" => Some(upload_url(st, req)),
        "/files.completeUploadExternal" => Some(complete(st, req)),
        _ => None,
    }
}

fn upload_url(st: &mut State, req: &Request) -> Response {
    let fields = fields(req);
    let get = |name: &str| {
        fields
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    };
    let (Some(filename), Some(length)) = (get("filename"), get("length")) else {
        return not_ok("invalid_arguments");
    };
    let length = match length.parse::<usize>() {
        Ok(0) => return not_ok("missing_argument"),
        Ok(n) => n,
        Err(_) => return not_ok("invalid_arguments"),
    };
    let files = &mut st.files;
    files.uploads.push(Upload {
        filename,
        length,
        bytes: None,
        shared: false,
        token_sent: false,
    });
    let id = format!("F{:08}", files.uploads.len());
    let url = format!("{}/upload/v1/{id}", files.base);
    Response::json(
        200,
        &json!({ "ok": true, "upload_url": url, "file_id": id }),
    )
}

fn upload_index(id: &str) -> Option<usize> {
    id.strip_prefix('F')?.parse::<usize>().ok()?.checked_sub(1)
}

/// The bytes, as the multipart form's `filename` part (or the raw body).
fn receive(st: &mut State, id: &str, req: &Request) -> Response {
    let Some(upload) = upload_index(id).and_then(|i| st.files.uploads.get_mut(i)) else {
        return Response::empty(404);
    };
    if upload.bytes.is_some() {
        return Response::empty(400);
    }
    let bytes = match req.fields().get("filename") {
        Some(part) => part["bytes"]
            .as_array()
            .map(|b| {
                b.iter()
                    .filter_map(|x| x.as_u64())
                    .map(|x| x as u8)
                    .collect()
            })
            .unwrap_or_default(),
        None => req.body.clone(),
    };
    if bytes.len() != upload.length {
        return Response::empty(400);
    }
    let answer = format!("OK - {}", bytes.len());
    upload.bytes = Some(bytes);
    upload.token_sent = req.header("authorization").is_some();
    Response {
        status: 200,
        headers: vec![("Content-Type".into(), "text/plain".into())],
        chunks: vec![(std::time::Duration::ZERO, answer.into_bytes())],
        cut: false,
    }
}

fn complete(st: &mut State, req: &Request) -> Response {
    let body = req.json();
    let Some(list) = body["files"].as_array().filter(|l| !l.is_empty()) else {
        return not_ok("invalid_arguments");
    };
    let mut indexes = Vec::new();
    for file in list {
        let index = file["id"].as_str().and_then(upload_index);
        match index.and_then(|i| st.files.uploads.get(i).map(|u| (i, u))) {
            Some((i, u)) if u.bytes.is_some() && !u.shared => indexes.push(i),
            _ => return not_ok("file_not_found"),
        }
    }
    let Some(channel) = body["channel_id"].as_str() else {
        // Without a channel the files stay private: nothing shows.
        return Response::json(200, &json!({ "ok": true, "files": list }));
    };
    if !st.channels.contains_key(channel) {
        return not_ok("channel_not_found");
    }
    let ts = st.next_ts();
    let files = indexes
        .iter()
        .map(|&i| {
            let u = &mut st.files.uploads[i];
            u.shared = true;
            (u.filename.clone(), u.bytes.clone().unwrap_or_default())
        })
        .collect();
    st.files.shares.push(Share {
        channel: channel.to_owned(),
        ts,
        thread_ts: body["thread_ts"].as_str().map(str::to_owned),
        comment: body["initial_comment"].as_str().map(str::to_owned),
        files,
    });
    let answered: Vec<Value> = list
        .iter()
        .map(|f| json!({ "id": f["id"], "title": f["title"] }))
        .collect();
    Response::json(200, &json!({ "ok": true, "files": answered }))
}
