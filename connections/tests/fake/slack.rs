//! A fake Slack Web API: channels with messages keyed by `ts`, `ok: false` errors as Slack
//! names them, and 429s with a `Retry-After` header.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::json;

use super::{Request, Response, Server, serve};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    /// The text as users see it (entities decoded).
    pub text: String,
    /// Whom it pinged: `<!channel>`, `<!here>`, `<!everyone>`, `<@U...>` in the raw text.
    pub pings: Vec<String>,
    pub thread_ts: Option<String>,
    pub edits: u32,
}

pub enum Fault {
    /// 429 with `Retry-After: n` seconds.
    RateLimit(u64),
    /// `ok: false` with this error.
    Error(&'static str),
}

#[derive(Default)]
pub struct State {
    pub channels: HashMap<String, BTreeMap<String, Message>>,
    next_ts: u64,
    faults: VecDeque<Fault>,
    limited_until: Option<Instant>,
    pub log: Vec<(String, u16, Instant)>,
    pub early_calls: u32,
}

pub struct FakeSlack {
    pub server: Server,
    pub state: Arc<Mutex<State>>,
}

impl FakeSlack {
    pub fn start(token: &str, channels: &[&str]) -> FakeSlack {
        let state = Arc::new(Mutex::new(State {
            next_ts: 100,
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
        let auth = format!("Bearer {token}");
        let server = serve(move |req| {
            let mut st = s.lock().unwrap();
            let response = answer(
                &mut st,
                req,
                req.header("authorization") == Some(auth.as_str()),
            );
            st.log.push((req.path.clone(), response.status, req.at));
            response
        });
        FakeSlack { server, state }
    }

    pub fn url(&self) -> String {
        self.server.url()
    }

    pub fn fail_next(&self, fault: Fault) {
        self.state.lock().unwrap().faults.push_back(fault);
    }

    pub fn messages(&self, channel: &str) -> Vec<Message> {
        let st = self.state.lock().unwrap();
        st.channels
            .get(channel)
            .map(|m| m.values().cloned().collect())
            .unwrap_or_default()
    }

    pub fn texts(&self, channel: &str) -> Vec<String> {
        self.messages(channel).into_iter().map(|m| m.text).collect()
    }
}

fn not_ok(error: &str) -> Response {
    Response::json(200, &json!({ "ok": false, "error": error }))
}

fn answer(st: &mut State, req: &Request, authorized: bool) -> Response {
    let now = Instant::now();
    if let Some(until) = st.limited_until {
        if now < until {
            st.early_calls += 1;
            let left = (until - now).as_secs() + 1;
            return Response::json(429, &json!({ "ok": false, "error": "ratelimited" }))
                .header("Retry-After", &left.to_string());
        }
        st.limited_until = None;
    }
    match st.faults.pop_front() {
        Some(Fault::RateLimit(secs)) => {
            st.limited_until = Some(now + Duration::from_secs(secs));
            return Response::json(429, &json!({ "ok": false, "error": "ratelimited" }))
                .header("Retry-After", &secs.to_string());
        }
        Some(Fault::Error(e)) => return not_ok(e),
        None => {}
    }
    if !authorized {
        return not_ok("invalid_auth");
    }
    let body = req.json();
    let channel = body["channel"].as_str().unwrap_or("").to_owned();
    let Some(msgs) = st.channels.get_mut(&channel) else {
        return not_ok("channel_not_found");
    };
    let raw = body["text"].as_str().unwrap_or("").to_owned();
    let pings = pings(&raw);
    let text = raw
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&");
    if text.chars().count() > 40_000 {
        return not_ok("msg_too_long");
    }
    let ts = body["ts"].as_str().unwrap_or("").to_owned();
    match req.path.as_str() {
        "/chat.postMessage" => {
            if text.trim().is_empty() {
                return not_ok("no_text");
            }
            let ts = format!("1700000000.{:06}", st.next_ts);
            st.next_ts += 1;
            let thread_ts = body["thread_ts"].as_str().map(str::to_owned);
            let message = Message {
                text,
                pings,
                thread_ts,
                edits: 0,
            };
            st.channels
                .get_mut(&channel)
                .unwrap()
                .insert(ts.clone(), message);
            Response::json(200, &json!({ "ok": true, "channel": channel, "ts": ts }))
        }
        "/chat.update" => match msgs.get_mut(&ts) {
            Some(m) => {
                m.text = text;
                m.pings.extend(pings);
                m.edits += 1;
                Response::json(200, &json!({ "ok": true, "channel": channel, "ts": ts }))
            }
            None => not_ok("message_not_found"),
        },
        "/chat.delete" => match msgs.remove(&ts) {
            Some(_) => Response::json(200, &json!({ "ok": true, "channel": channel, "ts": ts })),
            None => not_ok("message_not_found"),
        },
        _ => not_ok("unknown_method"),
    }
}

fn pings(raw: &str) -> Vec<String> {
    raw.split('<')
        .skip(1)
        .filter_map(|p| p.split('>').next())
        .filter(|p| p.starts_with('!') || p.starts_with('@'))
        .map(str::to_owned)
        .collect()
}
