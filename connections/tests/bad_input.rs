//! Bad input for every platform and for the model client: a server that is not there, a
//! name that does not resolve, TLS to a server that speaks none, a server that never
//! answers, a 500 storm through the sink, and a model stream that stalls, sends garbage or
//! refuses. Each is a clear error or a documented retry, never a panic, and none takes longer
//! than its timeout. (Telegram's own cases are in `telegram.rs`; these run the same cases on
//! all three platforms through one generic server.)
#![allow(clippy::disallowed_methods)] // real servers, real time

mod fake;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use fake::{Response, failure, send, serve};
use replystream::driver::{Driver, DriverOptions, StreamEvent};
use replystream::{ChannelProfile, Config, OwnedInput, Payload, SendOp};
use replystream_connections::discord::Discord;
use replystream_connections::model::{ModelError, ModelRequest, Protocol, stream_reply};
use replystream_connections::sink::PlatformSink;
use replystream_connections::slack::Slack;
use replystream_connections::telegram::Telegram;
use replystream_connections::{HttpOptions, Outcome, Platform};

const TOKEN: &str = "123:bad-input-SECRET";

/// Each platform on the API at `url`, with `options`, and a chat key it accepts.
fn platforms(url: &str, options: &HttpOptions) -> Vec<(Box<dyn Platform>, &'static str)> {
    vec![
        (Box::new(Telegram::with_options(TOKEN, url, options)), "1"),
        (Box::new(Discord::with_options(TOKEN, url, options)), "1"),
        (Box::new(Slack::with_options(TOKEN, url, options)), "C1"),
    ]
}

/// A platform chosen at run time, as the sink's platform.
struct Boxed(Box<dyn Platform>);

impl Platform for Boxed {
    fn name(&self) -> &'static str {
        self.0.name()
    }

    fn deliver(&self, chat: &str, send: &replystream::SendRequest) -> Outcome {
        self.0.deliver(chat, send)
    }

    fn deliver_answering(
        &self,
        chat: &str,
        current: Option<&str>,
        send: &replystream::SendRequest,
    ) -> Outcome {
        self.0.deliver_answering(chat, current, send)
    }

    fn turn_ended(&self, chat: &str) {
        self.0.turn_ended(chat);
    }
}

/// A port on which nothing listens (it was free a moment ago).
fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

fn hi() -> replystream::SendRequest {
    send(SendOp::CREATE, Payload::text("hi"), None)
}

/// Delivers `hi` on every platform at `url` and checks a transient network failure (no
/// wait, the token not in it) came within `max`.
fn network_failure_everywhere(url: &str, options: &HttpOptions, max: Duration) {
    for (platform, chat) in platforms(url, options) {
        let began = Instant::now();
        let f = failure(platform.deliver(chat, &hi()));
        let took = began.elapsed();
        let name = platform.name();
        assert!(!f.permanent && f.retry_after_ms.is_none(), "{name}: {f:?}");
        assert!(f.reason.starts_with("network:"), "{name}: {f:?}");
        assert!(!f.reason.contains("SECRET"), "{name}: {f:?}");
        assert!(took < max, "{name}: {took:?}");
    }
}

#[test]
fn an_unreachable_server_a_bad_name_and_a_failed_handshake_are_network_failures() {
    let options = HttpOptions::default().with_timeout(Duration::from_secs(5));
    let max = Duration::from_secs(5);
    network_failure_everywhere(
        &format!("http://127.0.0.1:{}", closed_port()),
        &options,
        max,
    );
    network_failure_everywhere("http://replystream-test.invalid", &options, max);
    // TLS to a server that answers plain HTTP: the handshake fails, nothing is delivered.
    let calls = Arc::new(Mutex::new(0u32));
    let counted = calls.clone();
    let plain = serve(move |_| {
        *counted.lock().unwrap() += 1;
        Response::json(200, &serde_json::json!({ "ok": true }))
    });
    let tls = plain.url().replace("http://", "https://");
    network_failure_everywhere(&tls, &options, max);
    assert_eq!(
        *calls.lock().unwrap(),
        0,
        "a request got through without TLS"
    );
}

#[test]
fn a_server_that_never_answers_fails_after_the_timeout_not_later() {
    let silent = serve(|_| {
        std::thread::sleep(Duration::from_secs(10));
        Response::empty(200)
    });
    let options = HttpOptions::default().with_timeout(Duration::from_millis(400));
    for (platform, chat) in platforms(&silent.url(), &options) {
        let began = Instant::now();
        let f = failure(platform.deliver(chat, &hi()));
        let took = began.elapsed();
        let name = platform.name();
        assert!(
            !f.permanent && f.reason.starts_with("network:"),
            "{name}: {f:?}"
        );
        assert!(
            took >= Duration::from_millis(400) && took < Duration::from_secs(3),
            "{name}: {took:?}"
        );
    }
}

/// Every call answered 500 (in each platform's error form): each send is retried with the
/// engine's backoff (never sooner than 1 s after the try before), then given up on and
/// reported undelivered; the turn ends and the driver shuts down clean.
#[test]
fn a_500_storm_is_retried_then_reported_undelivered_on_every_platform() {
    // The three platforms at once (each waits out the backoff), each with its own server.
    std::thread::scope(|scope| {
        for i in 0..3 {
            scope.spawn(move || storm_on(i));
        }
    });
}

fn storm_on(index: usize) {
    let calls = Arc::new(Mutex::new(Vec::<Instant>::new()));
    let seen = calls.clone();
    let storm = serve(move |req| {
        seen.lock().unwrap().push(req.at);
        let body = serde_json::json!({
            "ok": false, "error": "internal_error", "error_code": 500,
            "description": "Internal Server Error", "message": "500: Internal Server Error",
        });
        Response::json(500, &body)
    });
    let all = platforms(&storm.url(), &HttpOptions::default());
    if let Some((platform, chat)) = all.into_iter().nth(index) {
        let name = platform.name();
        let outcomes = Arc::new(Mutex::new(Vec::new()));
        let o = outcomes.clone();
        let sink = PlatformSink::new(Boxed(platform)).on_event(move |_, e| {
            if let StreamEvent::Idle(outcome) = e {
                o.lock().unwrap().push(outcome.clone());
            }
        });
        let driver = Driver::spawn(sink, DriverOptions::default());
        let config = Config::for_channel(&ChannelProfile::by_name(name).unwrap());
        let began = Instant::now();
        let stream = driver.open(chat, config, 7).unwrap();
        stream.text("A short reply that never arrives.").unwrap();
        stream.finish().unwrap();
        assert!(
            driver.shutdown(Duration::from_secs(30)).is_clean(),
            "{name}"
        );
        let outcome = outcomes.lock().unwrap().pop().expect("the turn ended");
        assert!(!outcome.all_delivered(), "{name}");
        let lost: Vec<&str> = outcome
            .undelivered
            .iter()
            .map(|u| u.payload.text.as_str())
            .collect();
        assert_eq!(lost, ["A short reply that never arrives."], "{name}");
        let times = calls.lock().unwrap().clone();
        // Each send (the block, then the final carrying its text again) tried once and
        // retried three times, each retry at least 1 s after the try before.
        assert_eq!(times.len(), 8, "{name}: {} calls", times.len());
        for send in times.chunks(4) {
            for pair in send.windows(2) {
                let gap = pair[1] - pair[0];
                assert!(
                    gap >= Duration::from_millis(1000),
                    "{name}: early ({gap:?})"
                );
            }
        }
        assert!(began.elapsed() < Duration::from_secs(30), "{name}");
    }
}

const OPENAI_HEAD: &str = "data: {\"choices\":[{\"delta\":{\"content\":\"Hello \"}}]}\n\n";
const OPENAI_TAIL: &str =
    "data: {\"choices\":[{\"delta\":{\"content\":\"world\"}}]}\n\ndata: [DONE]\n\n";

fn openai(url: &str) -> ModelRequest {
    let mut request = ModelRequest::new(Protocol::OpenAiChat, url, "sk-SECRET", "gpt", "hi");
    request.stall_timeout = Duration::from_millis(400);
    request
}

/// What the first event of `OPENAI_HEAD` decodes to.
fn hello() -> Vec<OwnedInput> {
    vec![
        OwnedInput::MessageStart,
        OwnedInput::TextDelta("Hello ".into()),
    ]
}

fn sse(chunks: Vec<(Duration, &'static [u8])>) -> Response {
    Response {
        status: 200,
        headers: vec![("Content-Type".into(), "text/event-stream".into())],
        chunks: chunks
            .into_iter()
            .map(|(pause, bytes)| (pause, bytes.to_vec()))
            .collect(),
        cut: false,
    }
}

/// A model that goes silent mid-reply: an error once the stall timeout passes (not when the
/// server gives up), with what came before handed over.
#[test]
fn a_model_stream_that_stalls_mid_way_is_an_error_after_the_stall_timeout() {
    let server = serve(|_| {
        sse(vec![
            (Duration::ZERO, OPENAI_HEAD.as_bytes()),
            (Duration::from_secs(10), OPENAI_TAIL.as_bytes()),
        ])
    });
    let began = Instant::now();
    let mut inputs = Vec::new();
    let e = stream_reply(&openai(&server.url()), |i| inputs.push(i)).unwrap_err();
    let took = began.elapsed();
    assert!(matches!(e, ModelError::Request(_)), "{e:?}");
    assert!(!e.to_string().contains("SECRET"), "{e}");
    assert!(
        took >= Duration::from_millis(400) && took < Duration::from_secs(3),
        "{took:?}"
    );
    assert_eq!(inputs, hello());
}

/// Garbage where an event should be, a 500, and a server that is not there: each a clear
/// error naming what went wrong.
#[test]
fn a_model_stream_with_garbage_a_500_or_no_server_is_a_clear_error() {
    // A good event and a bad one in the same read: the good one's inputs still come.
    let garbage = serve(|_| {
        sse(vec![(
            Duration::ZERO,
            b"data: {\"choices\":[{\"delta\":{\"content\":\"Hello \"}}]}\n\n\
              data: {\"choices\": [{\"delta\": nonsense\n\n",
        )])
    });
    let mut inputs = Vec::new();
    let e = stream_reply(&openai(&garbage.url()), |i| inputs.push(i)).unwrap_err();
    assert!(matches!(e, ModelError::Malformed { .. }), "{e:?}");
    assert!(e.to_string().starts_with("malformed model event"), "{e}");
    assert_eq!(inputs, hello());
    // Bytes that are no event stream at all (not UTF-8), after a good event in one read.
    let binary = serve(|_| {
        sse(vec![(
            Duration::ZERO,
            b"data: {\"choices\":[{\"delta\":{\"content\":\"Hello \"}}]}\n\ndata: \xff\xfe\n\n",
        )])
    });
    let mut inputs = Vec::new();
    let e = stream_reply(&openai(&binary.url()), |i| inputs.push(i)).unwrap_err();
    assert!(matches!(e, ModelError::Sse(_)), "{e:?}");
    assert_eq!(inputs, hello());

    let failing = serve(|_| {
        let body = serde_json::json!({ "error": { "message": "The server had an error" } });
        Response::json(500, &body)
    });
    let e = stream_reply(&openai(&failing.url()), |_| {}).unwrap_err();
    let text = e.to_string();
    assert!(
        text.contains("500") && text.contains("The server had an error"),
        "{text}"
    );

    // No server, a name that does not resolve, TLS to a plain server.
    let tls = failing.url().replace("http://", "https://");
    let closed = format!("http://127.0.0.1:{}", closed_port());
    for url in [
        closed.as_str(),
        "http://replystream-test.invalid",
        tls.as_str(),
    ] {
        let began = Instant::now();
        let e = stream_reply(&openai(url), |_| {}).unwrap_err();
        assert!(matches!(e, ModelError::Request(_)), "{url}: {e:?}");
        assert!(!e.to_string().contains("SECRET"), "{e}");
        assert!(began.elapsed() < Duration::from_secs(5), "{url}");
    }
}

/// Response headers, as written in a test case.
type Headers = &'static [(&'static str, &'static str)];

/// A Discord 429 without Discord's JSON (an HTML page from the edge, as Cloudflare answers
/// a banned address): the wait comes from the headers, `X-RateLimit-Reset-After` (fractional
/// seconds) before `Retry-After` (whole seconds), rounded up, never early.
#[test]
fn a_discord_429_without_its_json_waits_what_the_headers_say() {
    let cases: [(Headers, Option<u64>); 4] = [
        (&[("Retry-After", "2")], Some(2000)),
        (
            &[("Retry-After", "2"), ("X-RateLimit-Reset-After", "0.2505")],
            Some(251),
        ),
        (&[("Retry-After", "soon")], None),
        (&[], None),
    ];
    for (headers, wait) in cases {
        let owned: Vec<(String, String)> = headers
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        let server = serve(move |_| {
            let mut r = Response {
                status: 429,
                headers: vec![("Content-Type".into(), "text/html".into())],
                chunks: vec![(Duration::ZERO, b"<html>Too Many Requests</html>".to_vec())],
                cut: false,
            };
            for (k, v) in &owned {
                r = r.header(k, v);
            }
            r
        });
        let dc = Discord::with_options(TOKEN, &server.url(), &HttpOptions::default());
        let f = failure(dc.deliver("1", &hi()));
        assert!(!f.permanent, "{headers:?}: {f:?}");
        assert_eq!(f.retry_after_ms, wait, "{headers:?}: {f:?}");
    }
}
