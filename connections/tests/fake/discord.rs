//! A fake Discord REST API: channels with messages and attachments, the 2000-character
//! limit, mentions that ping unless `allowed_mentions` forbids it, a per-channel rate-limit
//! bucket reported in the `X-RateLimit-*` headers, and 429s with a fractional
//! `retry_after`.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{Request, Response, Server, serve};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    pub content: String,
    pub attachments: Vec<String>,
    pub reply_to: Option<String>,
    pub edits: u32,
    /// Whom the message pinged (`everyone`, user ids).
    pub pings: Vec<String>,
}

#[derive(Default)]
pub struct State {
    pub channels: HashMap<String, BTreeMap<u64, Message>>,
    next_id: u64,
    /// Sends allowed per window, and the window (None: no bucket).
    pub bucket: Option<(u32, Duration)>,
    windows: HashMap<String, (Instant, u32)>,
    /// 429s to answer next: `retry_after` seconds.
    faults: VecDeque<f64>,
    limited_until: HashMap<String, Instant>,
    /// Method, path, status, when.
    pub log: Vec<(String, String, u16, Instant)>,
    pub early_calls: u32,
}

pub struct FakeDiscord {
    pub server: Server,
    pub state: Arc<Mutex<State>>,
}

impl FakeDiscord {
    pub fn start(token: &str, channels: &[&str]) -> FakeDiscord {
        let state = Arc::new(Mutex::new(State {
            next_id: 1_100_000_000_000_000_000,
            ..State::default()
        }));
        for c in channels {
            state
                .lock()
                .unwrap()
                .channels
                .insert((*c).to_owned(), BTreeMap::new());
        }
        let s = state.clone();
        let auth = format!("Bot {token}");
        let server = serve(move |req| {
            let mut st = s.lock().unwrap();
            let response = if req.header("authorization") != Some(auth.as_str()) {
                Response::json(401, &json!({ "message": "401: Unauthorized", "code": 0 }))
            } else {
                answer(&mut st, req)
            };
            st.log.push((
                req.method.clone(),
                req.path.clone(),
                response.status,
                req.at,
            ));
            response
        });
        FakeDiscord { server, state }
    }

    pub fn url(&self) -> String {
        self.server.url()
    }

    /// The next call meets a 429 with this `retry_after` (seconds).
    pub fn rate_limit_next(&self, seconds: f64) {
        self.state.lock().unwrap().faults.push_back(seconds);
    }

    pub fn bucket(&self, per_window: u32, window: Duration) {
        self.state.lock().unwrap().bucket = Some((per_window, window));
    }

    pub fn messages(&self, channel: &str) -> Vec<Message> {
        let st = self.state.lock().unwrap();
        st.channels
            .get(channel)
            .map(|m| m.values().cloned().collect())
            .unwrap_or_default()
    }

    pub fn contents(&self, channel: &str) -> Vec<String> {
        self.messages(channel)
            .into_iter()
            .map(|m| m.content)
            .collect()
    }

    pub fn statuses(&self) -> Vec<u16> {
        self.state.lock().unwrap().log.iter().map(|l| l.2).collect()
    }
}

fn error(status: u16, message: &str, code: u64) -> Response {
    Response::json(status, &json!({ "message": message, "code": code }))
}

fn limited(secs: f64) -> Response {
    Response::json(
        429,
        &json!({ "message": "You are being rate limited.", "retry_after": secs, "global": false }),
    )
    .header("Retry-After", &(secs.ceil() as u64).to_string())
    .header("X-RateLimit-Remaining", "0")
    .header("X-RateLimit-Reset-After", &format!("{secs:.3}"))
}

fn answer(st: &mut State, req: &Request) -> Response {
    let parts: Vec<&str> = req.path.trim_start_matches('/').split('/').collect();
    let (channel, message) = match parts.as_slice() {
        ["channels", c, "messages"] => ((*c).to_owned(), None),
        ["channels", c, "messages", m] => ((*c).to_owned(), m.parse::<u64>().ok()),
        _ => return error(404, "404: Not Found", 0),
    };
    let now = Instant::now();
    if let Some(until) = st.limited_until.get(&channel).copied() {
        if now < until {
            st.early_calls += 1;
            return limited((until - now).as_secs_f64());
        }
        st.limited_until.remove(&channel);
    }
    if let Some(secs) = st.faults.pop_front() {
        st.limited_until
            .insert(channel, now + Duration::from_secs_f64(secs));
        return limited(secs);
    }
    if !st.channels.contains_key(&channel) {
        return error(404, "Unknown Channel", 10003);
    }
    // The bucket: `n` calls per window, counted from the window's first call.
    let mut remaining = None;
    if let Some((n, window)) = st.bucket {
        let w = st.windows.entry(channel.clone()).or_insert((now, 0));
        if now >= w.0 + window {
            *w = (now, 0);
        }
        let reset = (w.0 + window - now).as_secs_f64();
        if w.1 >= n {
            st.early_calls += 1;
            st.limited_until.insert(channel, w.0 + window);
            return limited(reset);
        }
        w.1 += 1;
        remaining = Some((n - w.1, reset));
    }
    let fields = req.fields();
    let body: Value = match fields.get("payload_json") {
        Some(Value::String(p)) => serde_json::from_str(p).unwrap_or(Value::Null),
        _ => Value::Object(fields.clone()),
    };
    let attachments: Vec<String> = fields
        .iter()
        .filter(|(k, _)| k.starts_with("files["))
        .map(|(_, v)| {
            format!(
                "{}:{}",
                v["filename"].as_str().unwrap_or(""),
                v["bytes"].as_array().map_or(0, Vec::len)
            )
        })
        .collect();
    let content = body
        .get("content")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    if content.chars().count() > 2000 {
        return Response::json(
            400,
            &json!({ "message": "Invalid Form Body", "code": 50035,
                     "errors": { "content": { "_errors": [{ "code": "BASE_TYPE_MAX_LENGTH",
                     "message": "Must be 2000 or fewer in length." }] } } }),
        );
    }
    let msgs = st.channels.get_mut(&channel).unwrap();
    let response = match (req.method.as_str(), message) {
        ("POST", None) => {
            if content.trim().is_empty() && attachments.is_empty() {
                return error(400, "Cannot send an empty message", 50006);
            }
            let id = st.next_id;
            st.next_id += 1;
            let message = Message {
                pings: pings(&content, body.get("allowed_mentions")),
                content,
                attachments,
                reply_to: body
                    .pointer("/message_reference/message_id")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
                edits: 0,
            };
            st.channels.get_mut(&channel).unwrap().insert(id, message);
            Response::json(200, &json!({ "id": id.to_string(), "channel_id": channel }))
        }
        ("PATCH", Some(id)) => match msgs.get_mut(&id) {
            Some(m) => {
                m.pings
                    .extend(pings(&content, body.get("allowed_mentions")));
                m.content = content;
                m.edits += 1;
                Response::json(200, &json!({ "id": id.to_string() }))
            }
            None => error(404, "Unknown Message", 10008),
        },
        ("DELETE", Some(id)) => match msgs.remove(&id) {
            Some(_) => Response::empty(204),
            None => error(404, "Unknown Message", 10008),
        },
        _ => error(405, "405: Method Not Allowed", 0),
    };
    match remaining {
        Some((left, reset)) => response
            .header("X-RateLimit-Remaining", &left.to_string())
            .header("X-RateLimit-Reset-After", &format!("{reset:.3}")),
        None => response,
    }
}

/// Who a message pings: without `allowed_mentions`, everything it mentions.
fn pings(content: &str, allowed: Option<&Value>) -> Vec<String> {
    let parse: Vec<&str> = match allowed {
        None => vec!["everyone", "users", "roles"],
        Some(a) => a["parse"]
            .as_array()
            .map_or(Vec::new(), |p| p.iter().filter_map(Value::as_str).collect()),
    };
    let mut out = Vec::new();
    if parse.contains(&"everyone") && (content.contains("@everyone") || content.contains("@here")) {
        out.push("everyone".to_owned());
    }
    if parse.contains(&"users") {
        for part in content.split("<@").skip(1) {
            if let Some(id) = part.split('>').next() {
                out.push(id.trim_start_matches('!').to_owned());
            }
        }
    }
    out
}
