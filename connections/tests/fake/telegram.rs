//! A fake Telegram Bot API: chats with messages, drafts and files; the documented limits
//! (4096 UTF-16 units of text and 1024 of caption, after entity parsing), HTML parse mode
//! with its refusals, "message is not modified", 429 with `parameters.retry_after`, bots
//! blocked (403) and chats not found.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{Request, Response, Server, serve};

/// A message in a fake chat.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    /// `text`, `photo`, `voice`, `audio`, `video`, `document`.
    pub kind: String,
    /// The text or caption, as the user sees it (entities parsed away).
    pub text: String,
    /// The parse mode it was sent with.
    pub parse_mode: Option<String>,
    /// The file: a URL, or an uploaded file's name and size.
    pub file: Option<String>,
    pub reply_to: Option<i64>,
    pub edits: u32,
}

/// A fault to inject into the next call of a method.
#[derive(Clone, Debug)]
pub enum Fault {
    /// 429 with `retry_after` seconds; calls before it ends get 429 too.
    RateLimit(u64),
    /// 500.
    ServerError,
}

impl FakeTelegram {
    /// Every call answers 500 from now on.
    pub fn break_down(&self) {
        self.state.lock().unwrap().broken = true;
    }
}

#[derive(Default)]
pub struct State {
    pub chats: HashMap<String, BTreeMap<i64, Message>>,
    pub drafts: HashMap<String, BTreeMap<i64, String>>,
    pub blocked: HashSet<String>,
    next_id: i64,
    faults: VecDeque<(String, u32, Fault)>,
    limited_until: Option<Instant>,
    /// Every call: method, chat, HTTP status, when.
    pub log: Vec<(String, String, u16, Instant)>,
    /// Calls made while a rate limit was in force.
    pub early_calls: u32,
    pub latency: Duration,
    /// Every call answers 500.
    pub broken: bool,
    /// Updates a user made: (update_id, chat, text).
    pub updates: Vec<(i64, String, String)>,
    /// Extra latency for one chat's calls.
    pub slow: HashMap<String, Duration>,
}

pub struct FakeTelegram {
    pub server: Server,
    pub state: Arc<Mutex<State>>,
    pub token: String,
}

impl FakeTelegram {
    /// A fake with these chats (ids as text).
    pub fn start(token: &str, chats: &[&str]) -> FakeTelegram {
        let state = Arc::new(Mutex::new(State {
            next_id: 100,
            ..State::default()
        }));
        for c in chats {
            state
                .lock()
                .unwrap()
                .chats
                .insert((*c).to_owned(), BTreeMap::new());
        }
        let s = state.clone();
        let prefix = format!("/bot{token}/");
        let server = serve(move |req| {
            let chat = text_of(req.fields().get("chat_id")).unwrap_or_default();
            let latency = {
                let st = s.lock().unwrap();
                st.latency + st.slow.get(&chat).copied().unwrap_or_default()
            };
            std::thread::sleep(latency);
            handle(&s, &prefix, req)
        });
        FakeTelegram {
            server,
            state,
            token: token.to_owned(),
        }
    }

    pub fn url(&self) -> String {
        self.server.url()
    }

    pub fn fail_next(&self, method: &str, fault: Fault) {
        self.fail_later(method, 0, fault);
    }

    /// The fault hits the call of `method` that follows `skip` successful ones.
    pub fn fail_later(&self, method: &str, skip: u32, fault: Fault) {
        let mut st = self.state.lock().unwrap();
        st.faults.push_back((method.to_owned(), skip, fault));
    }

    /// A user writes `text` in `chat` (seen by `getUpdates`).
    pub fn user_says(&self, chat: &str, text: &str) {
        let mut st = self.state.lock().unwrap();
        let id = 500 + st.updates.len() as i64;
        st.updates.push((id, chat.to_owned(), text.to_owned()));
    }

    pub fn block(&self, chat: &str) {
        self.state.lock().unwrap().blocked.insert(chat.to_owned());
    }

    pub fn slow_chat(&self, chat: &str, latency: Duration) {
        self.state
            .lock()
            .unwrap()
            .slow
            .insert(chat.to_owned(), latency);
    }

    pub fn set_latency(&self, latency: Duration) {
        self.state.lock().unwrap().latency = latency;
    }

    /// The chat's messages, oldest first.
    pub fn messages(&self, chat: &str) -> Vec<Message> {
        let state = self.state.lock().unwrap();
        state
            .chats
            .get(chat)
            .map(|m| m.values().cloned().collect())
            .unwrap_or_default()
    }

    pub fn texts(&self, chat: &str) -> Vec<String> {
        self.messages(chat).into_iter().map(|m| m.text).collect()
    }

    pub fn drafts(&self, chat: &str) -> BTreeMap<i64, String> {
        let state = self.state.lock().unwrap();
        state.drafts.get(chat).cloned().unwrap_or_default()
    }

    pub fn calls(&self) -> Vec<(String, String, u16, Instant)> {
        self.state.lock().unwrap().log.clone()
    }

    pub fn methods(&self) -> Vec<String> {
        self.calls().into_iter().map(|c| c.0).collect()
    }
}

fn error(code: u16, description: &str) -> Response {
    Response::json(
        code,
        &json!({ "ok": false, "error_code": code, "description": description }),
    )
}

fn ok(result: Value) -> Response {
    Response::json(200, &json!({ "ok": true, "result": result }))
}

fn text_of(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::String(s) => Some(s.clone()),
        Value::Null => None,
        other => Some(other.to_string()),
    }
}

fn handle(state: &Mutex<State>, prefix: &str, req: &Request) -> Response {
    let Some(method) = req.path.strip_prefix(prefix) else {
        return error(401, "Unauthorized");
    };
    let method = method.to_owned();
    let fields = req.fields();
    let chat = text_of(fields.get("chat_id")).unwrap_or_default();
    let mut st = state.lock().unwrap();
    let response = answer(&mut st, &method, &chat, &fields);
    st.log.push((method, chat, response.status, req.at));
    response
}

fn answer(
    st: &mut State,
    method: &str,
    chat: &str,
    fields: &serde_json::Map<String, Value>,
) -> Response {
    let now = Instant::now();
    if let Some(until) = st.limited_until {
        if now < until {
            st.early_calls += 1;
            let left = (until - now).as_secs() + 1;
            return rate_limited(left);
        }
        st.limited_until = None;
    }
    if st.broken {
        return error(500, "Internal Server Error");
    }
    let due = match st.faults.iter().position(|(m, _, _)| m == method) {
        Some(i) if st.faults[i].1 > 0 => {
            st.faults[i].1 -= 1;
            None
        }
        Some(i) => st.faults.remove(i).map(|f| f.2),
        None => None,
    };
    if let Some(fault) = due {
        return match fault {
            Fault::RateLimit(secs) => {
                st.limited_until = Some(now + Duration::from_secs(secs));
                rate_limited(secs)
            }
            Fault::ServerError => error(500, "Internal Server Error"),
        };
    }
    if method == "getUpdates" {
        let offset = fields.get("offset").and_then(Value::as_i64).unwrap_or(0);
        let updates: Vec<Value> = st
            .updates
            .iter()
            .filter(|u| u.0 >= offset)
            .map(|(id, chat, text)| {
                let chat_id: i64 = chat.parse().unwrap_or(0);
                json!({ "update_id": id, "message": {
                    "message_id": id * 10, "chat": { "id": chat_id, "type": "private" }, "text": text } })
            })
            .chain(std::iter::once(json!({ "update_id": 900, "edited_message": {} })).filter(|_| offset <= 900))
            .collect();
        return ok(Value::Array(updates));
    }
    if !st.chats.contains_key(chat) {
        return error(400, "Bad Request: chat not found");
    }
    if st.blocked.contains(chat) {
        return error(403, "Forbidden: bot was blocked by the user");
    }
    let parse_mode = text_of(fields.get("parse_mode"));
    let reply_to = fields
        .get("reply_parameters")
        .and_then(|r| match r {
            Value::String(s) => serde_json::from_str::<Value>(s).ok(),
            other => Some(other.clone()),
        })
        .and_then(|r| r.get("message_id").and_then(Value::as_i64));
    match method {
        "sendMessage" | "editMessageText" | "sendMessageDraft" => {
            let raw = text_of(fields.get("text")).unwrap_or_default();
            let text = match parse(&raw, parse_mode.as_deref()) {
                Ok(t) => t,
                Err(e) => return error(400, &format!("Bad Request: can't parse entities: {e}")),
            };
            if text.encode_utf16().count() > 4096 {
                return error(400, "Bad Request: message is too long");
            }
            if text.trim().is_empty() && method != "sendMessageDraft" {
                return error(400, "Bad Request: message text is empty");
            }
            match method {
                "sendMessage" => {
                    let id = st.next_id;
                    st.next_id += 1;
                    let message = Message {
                        kind: "text".into(),
                        text: text.clone(),
                        parse_mode,
                        file: None,
                        reply_to,
                        edits: 0,
                    };
                    st.chats.get_mut(chat).unwrap().insert(id, message);
                    ok(json!({ "message_id": id, "chat": { "id": chat }, "text": text }))
                }
                "editMessageText" => {
                    let id = fields
                        .get("message_id")
                        .and_then(Value::as_i64)
                        .unwrap_or(0);
                    let Some(m) = st.chats.get_mut(chat).unwrap().get_mut(&id) else {
                        return error(400, "Bad Request: message to edit not found");
                    };
                    if m.text == text && m.parse_mode == parse_mode {
                        return error(
                            400,
                            "Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message",
                        );
                    }
                    m.text = text.clone();
                    m.parse_mode = parse_mode;
                    m.edits += 1;
                    ok(json!({ "message_id": id, "text": text }))
                }
                _ => {
                    let id = fields.get("draft_id").and_then(Value::as_i64).unwrap_or(0);
                    if id == 0 {
                        return error(400, "Bad Request: draft_id must be non-zero");
                    }
                    st.drafts
                        .entry(chat.to_owned())
                        .or_default()
                        .insert(id, text);
                    ok(Value::Bool(true))
                }
            }
        }
        "deleteMessage" => {
            let id = fields
                .get("message_id")
                .and_then(Value::as_i64)
                .unwrap_or(0);
            match st.chats.get_mut(chat).unwrap().remove(&id) {
                Some(_) => ok(Value::Bool(true)),
                None => error(400, "Bad Request: message to delete not found"),
            }
        }
        "sendPhoto" | "sendVoice" | "sendAudio" | "sendVideo" | "sendDocument" => {
            let field = method.trim_start_matches("send").to_ascii_lowercase();
            let file = match fields.get(&field) {
                Some(Value::String(url)) => url.clone(),
                Some(Value::Object(f)) => format!(
                    "upload:{}:{}:{}",
                    f["filename"].as_str().unwrap_or(""),
                    f["content_type"].as_str().unwrap_or(""),
                    f["bytes"].as_array().map_or(0, Vec::len)
                ),
                _ => return error(400, "Bad Request: there is no file in the request"),
            };
            let raw = text_of(fields.get("caption")).unwrap_or_default();
            let caption = match parse(&raw, parse_mode.as_deref()) {
                Ok(t) => t,
                Err(e) => return error(400, &format!("Bad Request: can't parse entities: {e}")),
            };
            if caption.encode_utf16().count() > 1024 {
                return error(400, "Bad Request: message caption is too long");
            }
            let id = st.next_id;
            st.next_id += 1;
            let message = Message {
                kind: field,
                text: caption,
                parse_mode,
                file: Some(file),
                reply_to,
                edits: 0,
            };
            st.chats.get_mut(chat).unwrap().insert(id, message);
            ok(json!({ "message_id": id }))
        }
        _ => error(404, "Not Found"),
    }
}

fn rate_limited(secs: u64) -> Response {
    Response::json(
        429,
        &json!({
            "ok": false,
            "error_code": 429,
            "description": format!("Too Many Requests: retry after {secs}"),
            "parameters": { "retry_after": secs }
        }),
    )
}

/// The text a user sees: HTML tags parsed away (refusing what Telegram refuses), or the
/// text as it is without a parse mode.
pub fn parse(raw: &str, mode: Option<&str>) -> Result<String, String> {
    match mode {
        None => Ok(raw.to_owned()),
        Some("HTML") => parse_html(raw),
        Some(other) => Err(format!("unsupported parse mode {other}")),
    }
}

fn parse_html(raw: &str) -> Result<String, String> {
    const TAGS: &[&str] = &[
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
        "tg-spoiler",
        "span",
        "blockquote",
    ];
    let mut out = String::new();
    let mut open: Vec<String> = Vec::new();
    let mut rest = raw;
    while let Some(i) = rest.find(['<', '&']) {
        out.push_str(&rest[..i]);
        rest = &rest[i..];
        if rest.starts_with('&') {
            let end = rest.find(';').ok_or("unclosed character entity")?;
            out.push(match &rest[1..end] {
                "lt" => '<',
                "gt" => '>',
                "amp" => '&',
                "quot" => '"',
                e => return Err(format!("unsupported character entity &{e};")),
            });
            rest = &rest[end + 1..];
            continue;
        }
        let end = rest.find('>').ok_or("unclosed start tag")?;
        let tag = &rest[1..end];
        rest = &rest[end + 1..];
        if let Some(name) = tag.strip_prefix('/') {
            match open.pop() {
                Some(o) if o == name.trim() => {}
                _ => return Err(format!("unexpected end tag </{name}>")),
            }
        } else {
            let name = tag.split_whitespace().next().unwrap_or("");
            if !TAGS.contains(&name) {
                return Err(format!("unsupported start tag \"{name}\""));
            }
            open.push(name.to_owned());
        }
    }
    out.push_str(rest);
    match open.pop() {
        Some(o) => Err(format!(
            "can't find end tag corresponding to start tag \"{o}\""
        )),
        None => Ok(out),
    }
}
