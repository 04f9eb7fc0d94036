//! A fake Telegram Bot API: chats with messages, drafts and files; the documented limits
//! (4096 UTF-16 units of text and 1024 of caption, after entity parsing), HTML parse mode
//! and `entities` / `caption_entities` read with Telegram's rules and their refusals ("can't
//! parse entities"), "message is not modified", 429 with `parameters.retry_after`, bots
//! blocked (403) and chats not found. Each message keeps what the chat shows: the visible
//! text and its styled spans.

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
    /// How it shows: bold, code, links... (from the HTML tags or the entities).
    pub spans: Vec<Span>,
    /// The parse mode it was sent with.
    pub parse_mode: Option<String>,
    /// The file: a URL, or an uploaded file's name and size.
    pub file: Option<String>,
    pub reply_to: Option<i64>,
    pub edits: u32,
}

/// A styled span of a message, in UTF-16 units of its visible text, as Telegram keeps it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Span {
    /// The Bot API entity type: `bold`, `italic`, `code`, `pre`, `text_link`, ...
    pub kind: String,
    pub offset: usize,
    pub length: usize,
    pub url: Option<String>,
    pub language: Option<String>,
}

impl Message {
    /// The visible text each span of `kind` covers, in order.
    pub fn styled(&self, kind: &str) -> Vec<String> {
        let units: Vec<u16> = self.text.encode_utf16().collect();
        self.spans
            .iter()
            .filter(|s| s.kind == kind)
            .map(|s| String::from_utf16(&units[s.offset..s.offset + s.length]).unwrap())
            .collect()
    }
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
    /// Every text the chat showed, in order (a send, an edit, a draft): the method and the
    /// message as shown (kind `text`, no file).
    pub shown: Vec<(String, Message)>,
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
            let (text, spans) = match shown(&raw, parse_mode.as_deref(), fields.get("entities")) {
                Ok(t) => t,
                Err(e) => return error(400, &format!("Bad Request: can't parse entities: {e}")),
            };
            if text.encode_utf16().count() > 4096 {
                return error(400, "Bad Request: message is too long");
            }
            if text.trim().is_empty() && method != "sendMessageDraft" {
                return error(400, "Bad Request: message text is empty");
            }
            let seen = Message {
                kind: "text".into(),
                text: text.clone(),
                spans: spans.clone(),
                parse_mode: parse_mode.clone(),
                file: None,
                reply_to,
                edits: 0,
            };
            st.shown.push((method.to_owned(), seen));
            match method {
                "sendMessage" => {
                    let id = st.next_id;
                    st.next_id += 1;
                    let message = Message {
                        kind: "text".into(),
                        text: text.clone(),
                        spans,
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
                    if m.text == text && m.spans == spans {
                        return error(
                            400,
                            "Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message",
                        );
                    }
                    m.text = text.clone();
                    m.spans = spans;
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
            let (caption, spans) =
                match shown(&raw, parse_mode.as_deref(), fields.get("caption_entities")) {
                    Ok(t) => t,
                    Err(e) => {
                        return error(400, &format!("Bad Request: can't parse entities: {e}"));
                    }
                };
            if caption.encode_utf16().count() > 1024 {
                return error(400, "Bad Request: message caption is too long");
            }
            let id = st.next_id;
            st.next_id += 1;
            let message = Message {
                kind: field,
                text: caption,
                spans,
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

/// What a message shows: its visible text and spans, from HTML (`parse_mode=HTML`), from
/// `entities` (a JSON array, or its text in a multipart form), or the text as it is. Both
/// at once is refused, as Telegram ignores one of them and a test should not rely on which.
pub fn shown(
    raw: &str,
    mode: Option<&str>,
    entities: Option<&Value>,
) -> Result<(String, Vec<Span>), String> {
    let entities = match entities {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => {
            Some(serde_json::from_str::<Value>(s).map_err(|e| format!("bad entities JSON: {e}"))?)
        }
        Some(other) => Some(other.clone()),
    };
    match (mode, entities) {
        (None, None) => Ok((raw.to_owned(), Vec::new())),
        (None, Some(list)) => Ok((raw.to_owned(), read_entities(raw, &list)?)),
        (Some("HTML"), None) => parse_html(raw),
        (Some(_), Some(_)) => Err("both a parse mode and entities".into()),
        (Some(other), None) => Err(format!("unsupported parse mode {other}")),
    }
}

/// The text a user sees, with no spans (drafts, tests of the refusal).
pub fn parse(raw: &str, mode: Option<&str>) -> Result<String, String> {
    shown(raw, mode, None).map(|(text, _)| text)
}

const ENTITY_TYPES: &[&str] = &[
    "bold",
    "italic",
    "underline",
    "strikethrough",
    "spoiler",
    "code",
    "pre",
    "text_link",
    "blockquote",
    "expandable_blockquote",
];

/// Checks `entities` against `text` as Telegram does: known types, offsets and lengths in
/// UTF-16 units within the text and not inside a surrogate pair, a URL on each text link.
fn read_entities(text: &str, list: &Value) -> Result<Vec<Span>, String> {
    let units: Vec<u16> = text.encode_utf16().collect();
    let inside_pair =
        |at: usize| at > 0 && at < units.len() && (0xDC00..0xE000).contains(&units[at]);
    let mut spans = Vec::new();
    for e in list.as_array().ok_or("entities is not an array")? {
        let kind = e
            .get("type")
            .and_then(Value::as_str)
            .ok_or("entity without a type")?;
        if !ENTITY_TYPES.contains(&kind) {
            return Err(format!("unsupported entity type \"{kind}\""));
        }
        let offset = e
            .get("offset")
            .and_then(Value::as_u64)
            .ok_or("entity without an offset")? as usize;
        let length = e
            .get("length")
            .and_then(Value::as_u64)
            .ok_or("entity without a length")? as usize;
        if length == 0 || offset + length > units.len() {
            return Err(format!(
                "entity {kind} at {offset}+{length} is outside the text of {} units",
                units.len()
            ));
        }
        if inside_pair(offset) || inside_pair(offset + length) {
            return Err(format!(
                "entity {kind} at {offset}+{length} splits a character"
            ));
        }
        let url = e.get("url").and_then(Value::as_str).map(str::to_owned);
        if kind == "text_link" && url.is_none() {
            return Err("text_link entity without a url".into());
        }
        let language = e.get("language").and_then(Value::as_str).map(str::to_owned);
        spans.push(Span {
            kind: kind.to_owned(),
            offset,
            length,
            url: if kind == "text_link" { url } else { None },
            language: if kind == "pre" { language } else { None },
        });
    }
    Ok(spans)
}

/// One open HTML tag: its name, the entity it makes, where its text starts.
struct Open {
    tag: String,
    span: Option<Span>,
}

/// Telegram's HTML: only its tags, each closed in order, attributes quoted, `<`, `>` and
/// `&` written as entities (`&lt;` `&gt;` `&amp;` `&quot;` and numeric ones), nothing else.
fn parse_html(raw: &str) -> Result<(String, Vec<Span>), String> {
    let mut out = String::new();
    let mut len = 0usize; // UTF-16 units of `out`
    let mut open: Vec<Open> = Vec::new();
    let mut spans = Vec::new();
    let mut rest = raw;
    let push = |out: &mut String, len: &mut usize, text: &str| {
        out.push_str(text);
        *len += text.encode_utf16().count();
    };
    while let Some(i) = rest.find(['<', '&', '>']) {
        push(&mut out, &mut len, &rest[..i]);
        rest = &rest[i..];
        if rest.starts_with('>') {
            return Err("unexpected \">\" outside a tag".into());
        }
        if rest.starts_with('&') {
            let end = rest.find(';').ok_or("unclosed character entity")?;
            let name = &rest[1..end];
            let c = match name {
                "lt" => '<',
                "gt" => '>',
                "amp" => '&',
                "quot" => '"',
                n if n.starts_with('#') => {
                    let code = match n[1..].strip_prefix(['x', 'X']) {
                        Some(hex) => u32::from_str_radix(hex, 16),
                        None => n[1..].parse(),
                    };
                    code.ok()
                        .and_then(char::from_u32)
                        .ok_or(format!("bad character entity &{n};"))?
                }
                e => return Err(format!("unsupported character entity &{e};")),
            };
            let mut buf = [0u8; 4];
            push(&mut out, &mut len, c.encode_utf8(&mut buf));
            rest = &rest[end + 1..];
            continue;
        }
        let end = rest.find('>').ok_or("unclosed start tag")?;
        let tag = &rest[1..end];
        rest = &rest[end + 1..];
        if let Some(name) = tag.strip_prefix('/') {
            let name = name.trim();
            match open.pop() {
                Some(o) if o.tag == name => {
                    if let Some(mut span) = o.span {
                        span.length = len - span.offset;
                        if span.length > 0 {
                            spans.push(span);
                        }
                    }
                }
                _ => return Err(format!("unexpected end tag </{name}>")),
            }
            continue;
        }
        let (name, attrs) = tag_parts(tag)?;
        let attr = |a: &str| attrs.iter().find(|(k, _)| k == a).map(|(_, v)| v.clone());
        let in_pre = open.iter().any(|o| o.tag == "pre");
        let kind = match name.as_str() {
            "b" | "strong" => Some("bold"),
            "i" | "em" => Some("italic"),
            "u" | "ins" => Some("underline"),
            "s" | "strike" | "del" => Some("strikethrough"),
            "tg-spoiler" => Some("spoiler"),
            "span" if attr("class").as_deref() == Some("tg-spoiler") => Some("spoiler"),
            // `<pre><code class="language-x">`: one pre entity with a language.
            "code" if in_pre => None,
            "code" => Some("code"),
            "pre" => Some("pre"),
            "a" => Some("text_link"),
            "blockquote" if attrs.iter().any(|(k, _)| k == "expandable") => {
                Some("expandable_blockquote")
            }
            "blockquote" => Some("blockquote"),
            other => return Err(format!("unsupported start tag \"{other}\"")),
        };
        if name == "code" && in_pre {
            let language =
                attr("class").and_then(|c| c.strip_prefix("language-").map(str::to_owned));
            if let Some(pre) = open.iter_mut().rev().find(|o| o.tag == "pre")
                && let Some(span) = &mut pre.span
                && language.is_some()
            {
                span.language = language;
            }
        }
        if name == "a" && attr("href").is_none() {
            return Err("a link without an href".into());
        }
        if name == "blockquote" && open.iter().any(|o| o.tag == "blockquote") {
            return Err("a blockquote inside a blockquote".into());
        }
        open.push(Open {
            tag: name.clone(),
            span: kind.map(|k| Span {
                kind: k.to_owned(),
                offset: len,
                length: 0,
                url: if name == "a" { attr("href") } else { None },
                language: None,
            }),
        });
    }
    push(&mut out, &mut len, rest);
    match open.pop() {
        Some(o) => Err(format!(
            "can't find end tag corresponding to start tag \"{}\"",
            o.tag
        )),
        None => {
            spans.sort_by_key(|s| (s.offset, std::cmp::Reverse(s.length)));
            Ok((out, spans))
        }
    }
}

/// A start tag's name and attributes; an attribute value must be quoted (`"` or `'`) and
/// may hold `&quot;`; a bare attribute (`expandable`) has an empty value.
fn tag_parts(tag: &str) -> Result<(String, Vec<(String, String)>), String> {
    let tag = tag.trim();
    let name_end = tag.find(char::is_whitespace).unwrap_or(tag.len());
    let name = tag[..name_end].to_ascii_lowercase();
    if name.is_empty() {
        return Err("empty tag".into());
    }
    let mut attrs = Vec::new();
    let mut rest = tag[name_end..].trim_start();
    while !rest.is_empty() {
        let key_end = rest
            .find(|c: char| c == '=' || c.is_whitespace())
            .unwrap_or(rest.len());
        let key = rest[..key_end].to_ascii_lowercase();
        rest = rest[key_end..].trim_start();
        let Some(after) = rest.strip_prefix('=') else {
            attrs.push((key, String::new()));
            continue;
        };
        let after = after.trim_start();
        let quote = after.chars().next().filter(|c| *c == '"' || *c == '\'');
        let Some(q) = quote else {
            return Err(format!("unquoted value of attribute {key}"));
        };
        let close = after[1..]
            .find(q)
            .ok_or(format!("unclosed value of attribute {key}"))?;
        let value = after[1..1 + close]
            .replace("&quot;", "\"")
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&amp;", "&");
        attrs.push((key, value));
        rest = after[close + 2..].trim_start();
    }
    Ok((name, attrs))
}
