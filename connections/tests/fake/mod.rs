//! Fake platform servers for the tests: real HTTP/1.1 on 127.0.0.1, one thread per
//! connection, answering as each platform documents. Shared by the connections crate's tests
//! and the CLI's (through `#[path]`), so every part is not used by every test binary.
#![allow(dead_code, unreachable_pub, clippy::disallowed_methods)]

pub mod discord;
pub mod slack;
pub mod slack_files;
pub mod telegram;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// One request as the server read it.
#[derive(Clone, Debug)]
pub struct Request {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    pub at: Instant,
}

impl Request {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or(serde_json::Value::Null)
    }

    /// The body's fields: a JSON object's members, or a multipart form's parts (text parts
    /// as strings; file parts as `{"filename", "content_type", "bytes"}` objects).
    pub fn fields(&self) -> serde_json::Map<String, serde_json::Value> {
        let ct = self.header("content-type").unwrap_or("");
        if let Some(b) = ct.split("boundary=").nth(1) {
            return multipart_fields(&self.body, b);
        }
        match self.json() {
            serde_json::Value::Object(m) => m,
            _ => serde_json::Map::new(),
        }
    }
}

/// What to answer.
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    /// Pieces of the body, each written after its pause (a streamed reply when more than one).
    pub chunks: Vec<(Duration, Vec<u8>)>,
    /// Close the connection after the last chunk without finishing the reply (a reply cut
    /// mid-way); only for streamed replies.
    pub cut: bool,
}

impl Response {
    pub fn json(status: u16, body: &serde_json::Value) -> Response {
        Response {
            status,
            headers: vec![("Content-Type".into(), "application/json".into())],
            chunks: vec![(Duration::ZERO, body.to_string().into_bytes())],
            cut: false,
        }
    }

    pub fn empty(status: u16) -> Response {
        Response {
            status,
            headers: Vec::new(),
            chunks: vec![(Duration::ZERO, Vec::new())],
            cut: false,
        }
    }

    pub fn header(mut self, name: &str, value: &str) -> Response {
        self.headers.push((name.into(), value.into()));
        self
    }
}

type Handler = dyn Fn(&Request) -> Response + Send + Sync;

/// A running server; it stops serving when dropped (its listener thread exits at the next
/// connection attempt or stays parked; tests are short-lived).
pub struct Server {
    pub addr: SocketAddr,
    /// TCP connections accepted so far.
    pub connections: Arc<std::sync::atomic::AtomicUsize>,
}

impl Server {
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }
}

/// Serves `handler` on a fresh loopback port, every connection on its own thread.
pub fn serve(handler: impl Fn(&Request) -> Response + Send + Sync + 'static) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
    let addr = listener.local_addr().unwrap();
    let handler: Arc<Handler> = Arc::new(handler);
    let connections = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = connections.clone();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(conn) = conn else { continue };
            counted.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let handler = handler.clone();
            std::thread::spawn(move || {
                let _ = serve_connection(conn, &*handler);
            });
        }
    });
    Server { addr, connections }
}

fn serve_connection(conn: TcpStream, handler: &Handler) -> std::io::Result<()> {
    conn.set_nodelay(true)?;
    let mut reader = BufReader::new(conn.try_clone()?);
    let mut out = conn;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 {
            return Ok(());
        }
        let mut parts = line.split_whitespace();
        let method = parts.next().unwrap_or("").to_owned();
        let path = parts.next().unwrap_or("").to_owned();
        let mut headers = Vec::new();
        loop {
            let mut h = String::new();
            reader.read_line(&mut h)?;
            let h = h.trim_end();
            if h.is_empty() {
                break;
            }
            if let Some((k, v)) = h.split_once(':') {
                headers.push((k.trim().to_owned(), v.trim().to_owned()));
            }
        }
        let len = headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
            .and_then(|(_, v)| v.parse::<usize>().ok())
            .unwrap_or(0);
        let mut body = vec![0; len];
        reader.read_exact(&mut body)?;
        let request = Request {
            method,
            path,
            headers,
            body,
            at: Instant::now(),
        };
        let response = handler(&request);
        let streamed = response.chunks.len() > 1 || response.cut;
        let mut head = format!("HTTP/1.1 {} X\r\n", response.status);
        for (k, v) in &response.headers {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        if streamed {
            head.push_str("Connection: close\r\n\r\n");
        } else {
            let len: usize = response.chunks.iter().map(|(_, c)| c.len()).sum();
            head.push_str(&format!("Content-Length: {len}\r\n\r\n"));
        }
        if !streamed {
            // One write: a reply split in two small writes waits on Nagle and a delayed ACK.
            let mut whole = head.into_bytes();
            whole.extend(response.chunks.iter().flat_map(|(_, c)| c.iter().copied()));
            out.write_all(&whole)?;
            out.flush()?;
            continue;
        }
        out.write_all(head.as_bytes())?;
        for (pause, chunk) in &response.chunks {
            std::thread::sleep(*pause);
            out.write_all(chunk)?;
            out.flush()?;
        }
        if streamed {
            if response.cut {
                let _ = out.shutdown(std::net::Shutdown::Both);
            }
            return Ok(());
        }
    }
}

fn multipart_fields(body: &[u8], boundary: &str) -> serde_json::Map<String, serde_json::Value> {
    let mut fields = serde_json::Map::new();
    let delimiter = format!("--{boundary}");
    let d = delimiter.as_bytes();
    let mut starts = Vec::new();
    let mut i = 0;
    while i + d.len() <= body.len() {
        if &body[i..i + d.len()] == d {
            starts.push(i);
            i += d.len();
        } else {
            i += 1;
        }
    }
    for pair in starts.windows(2) {
        let part = &body[pair[0] + d.len()..pair[1]];
        let part = part.strip_prefix(b"\r\n").unwrap_or(part);
        let part = part.strip_suffix(b"\r\n").unwrap_or(part);
        let Some(split) = part.windows(4).position(|w| w == b"\r\n\r\n") else {
            continue;
        };
        let head = String::from_utf8_lossy(&part[..split]).into_owned();
        let content = &part[split + 4..];
        let param = |name: &str| {
            head.split(';')
                .map(str::trim)
                .find_map(|p| p.strip_prefix(&format!("{name}=\"")))
                .and_then(|p| p.strip_suffix('"').or(p.split('"').next()))
                .map(str::to_owned)
        };
        let Some(name) = param("name") else { continue };
        let value = match param("filename") {
            Some(filename) => {
                let ct = head
                    .lines()
                    .find_map(|l| l.strip_prefix("Content-Type: "))
                    .unwrap_or("")
                    .to_owned();
                serde_json::json!({ "filename": filename, "content_type": ct, "bytes": content })
            }
            None => serde_json::Value::from(String::from_utf8_lossy(content).into_owned()),
        };
        fields.insert(name, value);
    }
    fields
}

/// Checks that `messages`, in order, tile `input`: each is exactly a span of it (after
/// trimming), each span starts right after the previous one (whitespace between them
/// allowed), and nothing but whitespace is left over. Returns the first problem.
pub fn tiles(input: &str, messages: &[String]) -> Result<(), String> {
    let mut at = 0;
    for (i, m) in messages.iter().enumerate() {
        let m = m.trim();
        let rest = &input[at..];
        at += rest.len() - rest.trim_start().len();
        if !input[at..].starts_with(m) {
            let next: String = input[at..].chars().take(60).collect();
            return Err(format!(
                "message {i} ({m:?}) is not what follows in the input: {next:?}"
            ));
        }
        at += m.len();
    }
    let rest = &input[at..];
    if !rest.trim().is_empty() {
        return Err(format!("text lost at the end: {rest:?}"));
    }
    Ok(())
}

/// A send built by hand, for a platform called directly.
pub fn send(
    op: replystream::SendOp,
    payload: replystream::Payload,
    message_ref: Option<&str>,
) -> replystream::SendRequest {
    let message_ref = message_ref.map(str::to_owned);
    let kind = replystream::SendKind::Block;
    replystream::SendRequest::new(replystream::SendId(1), kind, op, payload, message_ref)
}

/// The failure in `outcome`; panics when it was delivered.
pub fn failure(outcome: replystream_connections::Outcome) -> replystream_connections::Failure {
    match outcome {
        replystream_connections::Outcome::Failed(f) => f,
        other => panic!("expected a failure, got {other:?}"),
    }
}

/// Streams `text` word by word into a new turn of `chat`, then finishes it.
pub fn stream_words(
    driver: &replystream::driver::Driver,
    chat: &str,
    config: replystream::Config,
    text: &str,
    pause: Duration,
) {
    let stream = driver.open(chat, config, 7).unwrap();
    for word in text.split_inclusive(' ') {
        stream.text(word).unwrap();
        if !pause.is_zero() {
            std::thread::sleep(pause);
        }
    }
    stream.finish().unwrap();
}

/// A reply of several paragraphs (from the library's test data).
pub const PROSE: &str = include_str!("../../../tests/data/prose-paragraphs.md");

/// `PROSE` cut at a word boundary before `max` bytes.
pub fn prose(max: usize) -> &'static str {
    let text = &PROSE[..PROSE.len().min(max)];
    &text[..text.rfind(' ').unwrap()]
}

/// A model API that answers any request carrying `key` (as a bearer token or `x-api-key`)
/// with `body` as a server-sent-event stream, in pieces of `piece` bytes 2 ms apart, broken
/// off after `cut_at` bytes if given; other requests get a 401.
pub fn sse_server(
    body: &'static str,
    piece: usize,
    cut_at: Option<usize>,
    key: &'static str,
) -> Server {
    serve(move |req| {
        let authorized = req.header("authorization") == Some(&format!("Bearer {key}"))
            || req.header("x-api-key") == Some(key);
        if !authorized {
            let error = serde_json::json!({ "error": { "message": "Incorrect API key provided" } });
            return Response::json(401, &error);
        }
        let bytes = &body.as_bytes()[..cut_at.unwrap_or(body.len())];
        let chunks = bytes
            .chunks(piece)
            .map(|c| (Duration::from_millis(2), c.to_vec()))
            .collect();
        Response {
            status: 200,
            headers: vec![("Content-Type".into(), "text/event-stream".into())],
            chunks,
            cut: cut_at.is_some(),
        }
    })
}
