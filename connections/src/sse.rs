//! An incremental reader of server-sent events (the `text/event-stream` format): bytes in,
//! in pieces of any size, events out as soon as their blank line arrives.
//!
//! Lines end in LF, CRLF or CR (a CR at the end of a piece waits to see whether an LF
//! follows); a leading byte-order mark is skipped; `:` lines are comments; `data` lines
//! join with `\n`; `event`, `id` and `retry` are kept, other fields ignored. A line that is
//! not UTF-8, or an event larger than [`MAX_EVENT_BYTES`], is an [`SseError`]; a stream that
//! ends inside an event is [`SseError::Truncated`] from [`SseParser::finish`].

/// The largest event (all its lines) the parser holds, in bytes.
pub const MAX_EVENT_BYTES: usize = 16 << 20;

/// One event.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event` field (`message` when none was given).
    pub event: String,
    /// The `data` lines, joined with `\n`.
    pub data: String,
    /// The last `id` field seen in the stream, if any.
    pub id: Option<String>,
}

/// Why a stream of events could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SseError {
    /// A line is not UTF-8; `offset` is its first byte in the whole stream.
    NotUtf8 {
        /// The line's first byte, counted from the start of the stream.
        offset: u64,
    },
    /// An event grew past [`MAX_EVENT_BYTES`].
    TooLarge,
    /// The stream ended inside an event (no blank line after its last field).
    Truncated,
}

impl std::fmt::Display for SseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SseError::NotUtf8 { offset } => {
                write!(f, "event stream: the line at byte {offset} is not UTF-8")
            }
            SseError::TooLarge => write!(f, "event stream: an event over {MAX_EVENT_BYTES} bytes"),
            SseError::Truncated => f.write_str("event stream: it ended inside an event"),
        }
    }
}

impl std::error::Error for SseError {}

/// The incremental parser. See the module docs.
#[derive(Debug, Default)]
pub struct SseParser {
    /// The current line's bytes so far.
    line: Vec<u8>,
    /// Bytes of the stream consumed before `line` began.
    line_start: u64,
    /// The previous piece ended in CR: an LF first in the next piece ends nothing.
    after_cr: bool,
    /// Past the first bytes (where a BOM may be).
    started: bool,
    /// The first bytes, while it is not known whether they are a BOM.
    head: Vec<u8>,
    event: String,
    data: String,
    has_data: bool,
    /// Some field of the current event was read (for `finish`).
    in_event: bool,
    event_bytes: usize,
    last_id: Option<String>,
    consumed: u64,
}

impl SseParser {
    /// A parser at the start of a stream.
    pub fn new() -> SseParser {
        SseParser::default()
    }

    /// Reads the next piece of the stream, appending the events it completes to `out`.
    /// After an error the parser should not be fed again.
    pub fn feed(&mut self, mut bytes: &[u8], out: &mut Vec<SseEvent>) -> Result<(), SseError> {
        const BOM: &[u8] = b"\xEF\xBB\xBF";
        if !self.started {
            // The BOM may itself arrive split: hold up to three bytes until it is decided.
            let take = (3 - self.head.len()).min(bytes.len());
            self.head.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
            if self.head.len() < 3 && BOM.starts_with(&self.head) {
                return Ok(());
            }
            self.started = true;
            let head = std::mem::take(&mut self.head);
            if head == BOM {
                self.consumed = 3;
                self.line_start = 3;
            } else {
                self.scan(&head, out)?;
            }
        }
        self.scan(bytes, out)
    }

    fn scan(&mut self, bytes: &[u8], out: &mut Vec<SseEvent>) -> Result<(), SseError> {
        let mut rest = bytes;
        if self.after_cr && rest.first() == Some(&b'\n') {
            rest = &rest[1..];
            self.consumed += 1;
            self.line_start = self.consumed;
        }
        self.after_cr = false;
        while let Some(i) = rest.iter().position(|&c| c == b'\n' || c == b'\r') {
            self.line.extend_from_slice(&rest[..i]);
            self.consumed += i as u64 + 1;
            let cr = rest[i] == b'\r';
            rest = &rest[i + 1..];
            if cr {
                if rest.first() == Some(&b'\n') {
                    rest = &rest[1..];
                    self.consumed += 1;
                } else if rest.is_empty() {
                    self.after_cr = true;
                }
            }
            let line = std::mem::take(&mut self.line);
            self.on_line(&line, out)?;
            self.line_start = self.consumed;
        }
        self.line.extend_from_slice(rest);
        self.consumed += rest.len() as u64;
        if self.event_bytes + self.line.len() > MAX_EVENT_BYTES {
            return Err(SseError::TooLarge);
        }
        Ok(())
    }

    fn on_line(&mut self, line: &[u8], out: &mut Vec<SseEvent>) -> Result<(), SseError> {
        let line = std::str::from_utf8(line).map_err(|_| SseError::NotUtf8 {
            offset: self.line_start,
        })?;
        if line.is_empty() {
            if self.has_data {
                let mut data = std::mem::take(&mut self.data);
                data.pop(); // the `\n` after the last data line
                out.push(SseEvent {
                    event: if self.event.is_empty() {
                        "message".to_owned()
                    } else {
                        std::mem::take(&mut self.event)
                    },
                    data,
                    id: self.last_id.clone(),
                });
            }
            self.event.clear();
            self.data.clear();
            self.has_data = false;
            self.in_event = false;
            self.event_bytes = 0;
            return Ok(());
        }
        self.event_bytes += line.len() + 1;
        if self.event_bytes > MAX_EVENT_BYTES {
            return Err(SseError::TooLarge);
        }
        if line.starts_with(':') {
            return Ok(());
        }
        self.in_event = true;
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        match field {
            "event" => value.clone_into(&mut self.event),
            "data" => {
                self.data.push_str(value);
                self.data.push('\n');
                self.has_data = true;
            }
            "id" if !value.contains('\0') => self.last_id = Some(value.to_owned()),
            _ => {}
        }
        Ok(())
    }

    /// The stream ended: an event begun and not closed by a blank line is
    /// [`SseError::Truncated`] (the spec drops it; a model reply cut there is incomplete).
    pub fn finish(&mut self) -> Result<(), SseError> {
        if self.in_event || (!self.line.is_empty() && !self.line.starts_with(b":")) {
            return Err(SseError::Truncated);
        }
        Ok(())
    }
}
