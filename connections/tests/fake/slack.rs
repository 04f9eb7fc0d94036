//! A fake Slack Web API: channels with messages keyed by `ts`, `ok: false` errors as Slack
//! names them, 429s with a `Retry-After` header, and Slack's streaming methods
//! (`chat.startStream` in a thread, `chat.appendStream` adding text, `chat.stopStream`;
//! `message_not_in_streaming_state` once stopped; a streaming message cannot be updated).

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::json;

use super::{Request, Response, Server, serve};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    /// The text as users see it (entities decoded).
    pub text: String,
    /// The text as sent, markup and entities included (a stream's pieces joined).
    pub raw: String,
    /// How Slack reads `raw`: `markdown` (`markdown_text`), `mrkdwn` (`text` with
    /// `mrkdwn` on, Slack's default) or `plain` (`mrkdwn: false`).
    pub markup: &'static str,
    /// Whom it pinged: `<!channel>`, `<!here>`, `<!everyone>`, `<@U...>` in the raw text.
    pub pings: Vec<String>,
    pub thread_ts: Option<String>,
    pub edits: u32,
    /// Started with `chat.startStream` and not stopped yet.
    pub streaming: bool,
    /// Started with `chat.startStream`.
    pub streamed: bool,
    /// `chat.appendStream` calls that added text.
    pub appends: u32,
}

pub enum Fault {
    /// 429 with `Retry-After: n` seconds.
    RateLimit(u64),
    /// `ok: false` with this error.
    Error(&'static str),
    /// Slack closes every open stream (as it does with idle ones), then answers the call.
    CloseStreams,
    /// The call is carried out, but its answer is lost: a 500 comes back instead.
    LoseAnswer,
}

#[derive(Default)]
pub struct State {
    pub channels: HashMap<String, BTreeMap<String, Message>>,
    next_ts: u64,
    faults: VecDeque<Fault>,
    /// Faults for the next call to a method (`/chat.appendStream`), ahead of `faults`.
    method_faults: Vec<(String, Fault)>,
    limited_until: Option<Instant>,
    pub log: Vec<(String, u16, Instant)>,
    pub early_calls: u32,
    /// Uploads and file shares (`slack_files`).
    pub files: super::slack_files::Files,
}

impl State {
    /// A new message `ts`.
    pub fn next_ts(&mut self) -> String {
        let ts = format!("1700000000.{:06}", self.next_ts);
        self.next_ts += 1;
        ts
    }
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
        state.lock().unwrap().files.base = server.url();
        FakeSlack { server, state }
    }

    /// The messages that shared files, in order.
    pub fn shares(&self) -> Vec<super::slack_files::Share> {
        self.state.lock().unwrap().files.shares.clone()
    }

    /// Files asked an upload URL for, shared or not.
    pub fn uploads(&self) -> Vec<super::slack_files::Upload> {
        self.state.lock().unwrap().files.uploads.clone()
    }

    pub fn url(&self) -> String {
        self.server.url()
    }

    pub fn fail_next(&self, fault: Fault) {
        self.state.lock().unwrap().faults.push_back(fault);
    }

    /// `fault` on the next call to `method` (`chat.appendStream`), whenever it comes.
    pub fn fail_next_call_to(&self, method: &str, fault: Fault) {
        let mut st = self.state.lock().unwrap();
        st.method_faults.push((format!("/{method}"), fault));
    }

    /// The methods called, in order, with the HTTP status of each answer.
    pub fn calls(&self) -> Vec<(String, u16)> {
        let st = self.state.lock().unwrap();
        st.log
            .iter()
            .map(|(path, status, _)| (path.trim_start_matches('/').to_owned(), *status))
            .collect()
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
    let fault = match st.method_faults.iter().position(|(m, _)| *m == req.path) {
        Some(i) => Some(st.method_faults.remove(i).1),
        None => st.faults.pop_front(),
    };
    let lose = matches!(fault, Some(Fault::LoseAnswer));
    match fault {
        Some(Fault::RateLimit(secs)) => {
            st.limited_until = Some(now + Duration::from_secs(secs));
            return Response::json(429, &json!({ "ok": false, "error": "ratelimited" }))
                .header("Retry-After", &secs.to_string());
        }
        Some(Fault::Error(e)) => return not_ok(e),
        Some(Fault::CloseStreams) => {
            for m in st.channels.values_mut().flat_map(|c| c.values_mut()) {
                m.streaming = false;
            }
        }
        Some(Fault::LoseAnswer) | None => {}
    }
    // The upload URL is signed: it needs no token.
    let upload_step = req.path.starts_with("/upload/");
    if !authorized && !upload_step {
        return not_ok("invalid_auth");
    }
    let response = match super::slack_files::answer(st, req) {
        Some(response) => response,
        None => carry_out(st, req),
    };
    if lose {
        return Response::json(500, &json!({ "ok": false, "error": "internal_error" }));
    }
    response
}

/// The call itself, authorized and not faulted.
fn carry_out(st: &mut State, req: &Request) -> Response {
    let body = req.json();
    let channel = body["channel"].as_str().unwrap_or("").to_owned();
    let Some(msgs) = st.channels.get_mut(&channel) else {
        return not_ok("channel_not_found");
    };
    let markdown = body["markdown_text"].as_str();
    let raw = markdown.or(body["text"].as_str()).unwrap_or("").to_owned();
    let pings = pings(&raw);
    let markup = match (markdown.is_some(), body["mrkdwn"].as_bool()) {
        (true, _) => "markdown",
        (false, Some(false)) => "plain",
        (false, _) => "mrkdwn",
    };
    let text = raw
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&");
    let limit = if markdown.is_some() { 12_000 } else { 40_000 };
    if text.chars().count() > limit {
        return not_ok("msg_too_long");
    }
    let ts = body["ts"].as_str().unwrap_or("").to_owned();
    let thread_ts = body["thread_ts"].as_str().map(str::to_owned);
    match req.path.as_str() {
        "/chat.startStream" => {
            // Streamed messages are replies to a user's message.
            if thread_ts.is_none() {
                return not_ok("invalid_arguments");
            }
            let ts = format!("1700000000.{:06}", st.next_ts);
            st.next_ts += 1;
            let message = Message {
                text,
                raw,
                markup,
                pings,
                thread_ts,
                edits: 0,
                streaming: true,
                streamed: true,
                appends: 0,
            };
            st.channels
                .get_mut(&channel)
                .unwrap()
                .insert(ts.clone(), message);
            Response::json(200, &json!({ "ok": true, "channel": channel, "ts": ts }))
        }
        "/chat.appendStream" | "/chat.stopStream" => {
            let append = req.path == "/chat.appendStream";
            if append && text.is_empty() {
                return not_ok("invalid_arguments");
            }
            let Some(m) = msgs.get_mut(&ts) else {
                return not_ok("message_not_found");
            };
            if !m.streaming {
                return not_ok("message_not_in_streaming_state");
            }
            if !text.is_empty() {
                m.text.push_str(&text);
                m.raw.push_str(&raw);
                m.pings.extend(pings);
                m.appends += u32::from(append);
            }
            m.streaming = append;
            Response::json(200, &json!({ "ok": true, "channel": channel, "ts": ts }))
        }
        "/chat.postMessage" => {
            if text.trim().is_empty() {
                return not_ok("no_text");
            }
            let ts = format!("1700000000.{:06}", st.next_ts);
            st.next_ts += 1;
            let message = Message {
                text,
                raw,
                markup,
                pings,
                thread_ts,
                edits: 0,
                streaming: false,
                streamed: false,
                appends: 0,
            };
            st.channels
                .get_mut(&channel)
                .unwrap()
                .insert(ts.clone(), message);
            Response::json(200, &json!({ "ok": true, "channel": channel, "ts": ts }))
        }
        "/chat.update" => match msgs.get_mut(&ts) {
            Some(m) if m.streaming => not_ok("cant_update_message"),
            Some(m) => {
                m.text = text;
                m.raw = raw;
                m.markup = markup;
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
