//! `replystream demo FILE`: stream a file through a channel profile and show the timeline of
//! messages a chat would see.
//!
//! By default the run is simulated on a virtual clock (instant, deterministic); `--live` runs
//! the real thread driver on real time, so a person watches the blocks arrive with their
//! pacing. Every engine setting of [`EngineArgs`] applies, so a chunking or coalescing
//! setting can be tried on a real reply.

use std::fs::File;
use std::io::{self, Read, Write};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use clap::Args;
use replystream::driver::{
    AckHandle, Delivery, Driver, DriverOptions, Sink, StreamEvent, StreamId,
};
use replystream::sim::{Ack, Sim};
use replystream::{
    Action, Engine, FenceMarker, Input, Lane, LengthMetric, ResolvedConfig, SendKind, SendRequest,
};

use crate::CliError;
use crate::deltas::{DeltaReader, check_utf8};
use crate::settings::{EngineArgs, describe};
use crate::values::{self, MAX_MS, MAX_UNITS};

/// `replystream demo`: stream FILE through a channel and show the timeline.
#[derive(Args, Debug)]
#[command(after_help = TIMELINE_COLUMNS)]
pub(crate) struct DemoArgs {
    /// The reply to stream: a path, or - for standard input (UTF-8)
    #[arg(value_name = "FILE")]
    file: String,

    /// Deltas per second from the model [1..=100000]
    #[arg(long, value_name = "R", default_value_t = 50,
          value_parser = values::number(1, 100_000))]
    rate: u64,

    /// Characters per delta [1..=1000000]
    #[arg(long, value_name = "K", default_value_t = 4,
          value_parser = values::units(1, MAX_UNITS))]
    token: usize,

    /// The chat platform acknowledges each message after MS [0..=86400000]
    #[arg(long, value_name = "MS", default_value_t = 150,
          value_parser = values::millis(MAX_MS))]
    ack_ms: u64,

    /// Run the real thread driver on real time and print messages as they arrive (the
    /// default is an instant simulation on a virtual clock)
    #[arg(long)]
    live: bool,

    #[command(flatten)]
    engine: EngineArgs,
}

/// What `demo` prints, shown after its help.
const TIMELINE_COLUMNS: &str = "\
Output: one line per message: when it was sent, its kind (block, tool, final), its length in
the channel's metric, its line count, and its first line of content (quoted; a trailing …
means more follows). A message that starts inside a code block shows its first code line after
the block's language, e.g. ‹rust› \"fn main() {…\"; a reasoning message is marked (reasoning).
Then a summary: message counts and when the first and last messages went out.";

/// Runs `replystream demo`.
///
/// The timeline is printed as it happens and the reply is read as it is streamed, so a long
/// reply shows its first messages at once and costs the demo no more than a window of it
/// (the engine keeps what it needs for the final). Input that is not UTF-8 is reported
/// before any output: a file is checked in a first pass that keeps nothing; standard input,
/// which cannot be read twice, is read whole.
pub(crate) fn run_demo(args: DemoArgs) -> Result<(), CliError> {
    let resolved = args.engine.resolve()?;
    let engine = args.engine.engine(&resolved)?;
    let reply = open_reply(&args.file)?;
    let mut out = io::stdout().lock();
    let header = format!(
        "replystream demo: {} on {} ({}), {}-char deltas at {}/s, acks after {} ms, seed {}{}\n\n",
        args.file,
        args.engine.channel_label(),
        describe(&resolved),
        args.token,
        args.rate,
        args.ack_ms,
        args.engine.seed,
        if args.live { ", live" } else { "" },
    );
    out.write_all(header.as_bytes()).map_err(CliError::output)?;
    out.write_all(b"      time  kind    len  lines  text\n")
        .map_err(CliError::output)?;
    drop(out);
    let deltas = DeltaReader::new(reply, &args.file, args.token);
    let timeline = Timeline::new(resolved.config().metric);
    let timeline = if args.live {
        run_live(&args, &resolved, deltas, timeline)?
    } else {
        run_simulated(&args, deltas, engine, timeline, &mut io::stdout().lock())?
    };
    let mut out = io::stdout().lock();
    out.write_all(timeline.summary().as_bytes())
        .map_err(CliError::output)?;
    out.flush().map_err(CliError::output)
}

/// The reply to stream, checked to be UTF-8.
fn open_reply(path: &str) -> Result<Box<dyn Read + Send>, CliError> {
    if path == "-" {
        let mut bytes = Vec::new();
        io::stdin()
            .lock()
            .read_to_end(&mut bytes)
            .map_err(|err| CliError::runtime(format!("cannot read standard input: {err}")))?;
        check_utf8(bytes.as_slice(), "standard input")?;
        return Ok(Box::new(io::Cursor::new(bytes)));
    }
    let open =
        || File::open(path).map_err(|err| CliError::runtime(format!("cannot read {path}: {err}")));
    check_utf8(open()?, path)?;
    Ok(Box::new(open()?))
}

/// One message on the timeline.
struct Entry {
    at_ms: u64,
    kind: SendKind,
    lane: Lane,
    text: String,
    media: usize,
}

impl Entry {
    fn new(at_ms: u64, send: &SendRequest) -> Entry {
        Entry {
            at_ms,
            kind: send.kind,
            lane: send.payload.lane,
            text: send.payload.text.clone(),
            media: send.payload.media.len(),
        }
    }

    fn line(&self, metric: LengthMetric) -> String {
        /// The longest stretch of the first line shown, in chars.
        const SHOWN_CHARS: usize = 60;
        let first = FirstLine::of(&self.text);
        let mut shown: String = first.line.chars().take(SHOWN_CHARS).collect();
        if first.more || first.line.chars().count() > SHOWN_CHARS {
            shown.push('…');
        }
        let lane = if self.lane == Lane::Answer {
            String::new()
        } else {
            format!("({}) ", self.lane.name())
        };
        let code = first
            .code
            .map_or(String::new(), |language| format!("‹{language}› "));
        let media = if self.media > 0 {
            format!(" [+{} media]", self.media)
        } else {
            String::new()
        };
        format!(
            "{:>9.3}s  {:<5} {:>5}  {:>5}  {lane}{code}{:?}{media}\n",
            self.at_ms as f64 / 1000.0,
            self.kind.name(),
            metric.len(&self.text),
            self.text.split('\n').count(),
            shown,
        )
    }
}

/// The first line of a message a reader would take for its content.
#[derive(Debug, PartialEq, Eq)]
struct FirstLine<'a> {
    /// The line, without its line break.
    line: &'a str,
    /// The language of the code block the line is in (the fence's info word, or `code`);
    /// `None` outside code.
    code: Option<&'a str>,
    /// More content follows the line.
    more: bool,
}

impl<'a> FirstLine<'a> {
    /// Blank lines and fence lines are skipped: a piece of a long code block starts with a
    /// reopened fence line such as "```python", which says nothing about the message, so the
    /// first code line is shown instead, with the block's language. A message of nothing but
    /// fence and blank lines shows its first non-blank line.
    fn of(text: &'a str) -> FirstLine<'a> {
        let mut open: Option<(FenceMarker, &str)> = None;
        let mut found: Option<FirstLine<'a>> = None;
        for line in text.split('\n') {
            let line = line.strip_suffix('\r').unwrap_or(line);
            let fence_line = match open {
                Some((marker, _)) if marker.is_closed_by(line) => {
                    open = None;
                    true
                }
                Some(_) => false,
                None => FenceMarker::parse_open(line).is_some_and(|marker| {
                    open = Some((marker, fence_language(line, marker)));
                    true
                }),
            };
            if fence_line || line.trim().is_empty() {
                continue;
            }
            if let Some(first) = found {
                return FirstLine {
                    more: true,
                    ..first
                };
            }
            found = Some(FirstLine {
                line,
                code: open.map(|(_, language)| language),
                more: false,
            });
        }
        found.unwrap_or_else(|| FirstLine {
            line: text.lines().find(|l| !l.trim().is_empty()).unwrap_or(""),
            code: None,
            more: false,
        })
    }
}

/// The language an opening fence line names: the first word of its info string, or `code`.
fn fence_language(line: &str, marker: FenceMarker) -> &str {
    let after_marker = line
        .trim_start_matches(' ')
        .trim_start_matches(char::from(marker.ch));
    after_marker.split_whitespace().next().unwrap_or("code")
}

/// The timeline's summary, kept as it goes: counts and times, not the messages.
struct Timeline {
    metric: LengthMetric,
    /// Messages per kind: block, tool, final, other.
    counts: [usize; 4],
    first_ms: Option<u64>,
    model_done_ms: u64,
    end_ms: u64,
}

impl Timeline {
    fn new(metric: LengthMetric) -> Timeline {
        Timeline {
            metric,
            counts: [0; 4],
            first_ms: None,
            model_done_ms: 0,
            end_ms: 0,
        }
    }

    /// Counts a message sent at `at_ms` and returns its line.
    fn message(&mut self, at_ms: u64, send: &SendRequest) -> String {
        let kind = match send.kind {
            SendKind::Block => 0,
            SendKind::Tool => 1,
            SendKind::Final => 2,
            _ => 3,
        };
        self.counts[kind] += 1;
        self.first_ms.get_or_insert(at_ms);
        Entry::new(at_ms, send).line(self.metric)
    }

    fn summary(&self) -> String {
        let first = self.first_ms.map_or("none".to_owned(), |ms| {
            format!("{:.3} s", ms as f64 / 1000.0)
        });
        format!(
            "\nsummary: {} messages ({} block, {} tool, {} final); first message at {first}; \
             model finished at {:.3} s; last message delivered at {:.3} s\n",
            self.counts.iter().sum::<usize>(),
            self.counts[0],
            self.counts[1],
            self.counts[2],
            self.model_done_ms as f64 / 1000.0,
            self.end_ms as f64 / 1000.0,
        )
    }
}

/// The whole run on a virtual clock: instant and deterministic. Each message is printed as
/// soon as it is sent; the harness's log is drained as it goes, so it stays short.
fn run_simulated(
    args: &DemoArgs,
    mut deltas: DeltaReader<impl Read>,
    engine: Engine,
    mut timeline: Timeline,
    out: &mut impl Write,
) -> Result<Timeline, CliError> {
    let ack_ms = args.ack_ms;
    let mut sim = Sim::with_policy(
        engine,
        Box::new(move |_, _| Ack::Deliver { after_ms: ack_ms }),
    );
    let mut last_delivered = None;
    let mut print_new = |sim: &mut Sim, timeline: &mut Timeline| -> Result<(), CliError> {
        for (at_ms, action) in sim.drain_log() {
            if let Action::Send(send) = action {
                let line = timeline.message(at_ms, &send);
                out.write_all(line.as_bytes()).map_err(CliError::output)?;
            }
        }
        if let Some((at_ms, _)) = sim.drain_delivered().next_back() {
            last_delivered = Some(at_ms);
        }
        Ok(())
    };
    let gap_ms = (1000 / args.rate).max(1);
    let mut t = 0u64;
    while let Some(delta) = deltas.next_delta()? {
        sim.at(t);
        sim.push(Input::TextDelta(delta));
        print_new(&mut sim, &mut timeline)?;
        t = t.saturating_add(gap_ms);
    }
    timeline.model_done_ms = sim.now;
    sim.push(Input::Finish).run_until_idle();
    print_new(&mut sim, &mut timeline)?;
    timeline.end_ms = last_delivered.unwrap_or(sim.now);
    Ok(timeline)
}

/// A sink that prints each message as it arrives and acks it after a delay.
struct TerminalSink {
    started: Instant,
    ack_ms: u64,
    timeline: Arc<Mutex<Timeline>>,
    done: crossbeam_done::Flag,
}

impl Sink for TerminalSink {
    fn deliver(&mut self, stream: StreamId, send: &SendRequest, acks: &AckHandle) -> Delivery {
        let at_ms = self.started.elapsed().as_millis() as u64;
        let line = self
            .timeline
            .lock()
            .expect("not poisoned")
            .message(at_ms, send);
        let _ = io::stdout().lock().write_all(line.as_bytes());
        if self.ack_ms == 0 {
            return Delivery::Delivered { message_ref: None };
        }
        let acks = acks.clone();
        let id = send.send_id;
        let wait = Duration::from_millis(self.ack_ms);
        std::thread::spawn(move || {
            std::thread::sleep(wait);
            let _ = acks.delivered(stream, id, None);
        });
        Delivery::Pending
    }

    fn event(&mut self, _stream: StreamId, event: &StreamEvent) {
        if matches!(event, StreamEvent::Idle(_)) {
            self.done.set();
        }
    }
}

/// A one-shot "the stream is idle" flag between the sink and the main thread.
mod crossbeam_done {
    use std::sync::{Arc, Condvar, Mutex};
    use std::time::Duration;

    #[derive(Clone, Default)]
    pub(super) struct Flag(Arc<(Mutex<bool>, Condvar)>);

    impl Flag {
        pub(super) fn set(&self) {
            let (m, c) = &*self.0;
            *m.lock().expect("not poisoned") = true;
            c.notify_all();
        }

        /// Waits until set or `limit` passes; true if set.
        pub(super) fn wait(&self, limit: Duration) -> bool {
            let (m, c) = &*self.0;
            let guard = m.lock().expect("not poisoned");
            let (guard, _) = c
                .wait_timeout_while(guard, limit, |set| !*set)
                .expect("not poisoned");
            *guard
        }
    }
}

/// The whole run on the real driver and real time.
#[allow(clippy::disallowed_methods)] // live mode is a host: it reads its own clock
fn run_live(
    args: &DemoArgs,
    resolved: &ResolvedConfig,
    mut deltas: DeltaReader<impl Read>,
    timeline: Timeline,
) -> Result<Timeline, CliError> {
    let started = Instant::now();
    let timeline = Arc::new(Mutex::new(timeline));
    let done = crossbeam_done::Flag::default();
    let sink = TerminalSink {
        started,
        ack_ms: args.ack_ms,
        timeline: timeline.clone(),
        done: done.clone(),
    };
    let driver = Driver::spawn(sink, DriverOptions::default());
    let stream = driver
        .open("demo", resolved.config().clone(), args.engine.seed)
        .map_err(|e| CliError::usage(e.to_string()))?;
    let gap = Duration::from_micros(1_000_000 / args.rate);
    let mut next = Instant::now();
    while let Some(delta) = deltas.next_delta()? {
        stream
            .text(delta)
            .map_err(|e| CliError::runtime(e.to_string()))?;
        next += gap;
        if let Some(wait) = next.checked_duration_since(Instant::now()) {
            std::thread::sleep(wait);
        }
    }
    let model_done_ms = started.elapsed().as_millis() as u64;
    stream
        .finish()
        .map_err(|e| CliError::runtime(e.to_string()))?;
    done.wait(Duration::from_secs(600));
    let end_ms = started.elapsed().as_millis() as u64;
    let report = driver.shutdown(Duration::from_secs(5));
    if !report.is_clean() {
        return Err(CliError::runtime(
            "the stream did not finish within 10 minutes",
        ));
    }
    let mut timeline = std::mem::replace(
        &mut *timeline.lock().expect("not poisoned"),
        Timeline::new(resolved.config().metric),
    );
    timeline.model_done_ms = model_done_ms;
    timeline.end_ms = end_ms;
    Ok(timeline)
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;
    use std::rc::Rc;

    use super::*;

    fn first(text: &str) -> (Option<&str>, &str, bool) {
        let f = FirstLine::of(text);
        (f.code, f.line, f.more)
    }

    #[test]
    fn prose_shows_its_first_non_blank_line() {
        assert_eq!(first("\n\nHello.\n\nMore."), (None, "Hello.", true));
        assert_eq!(first("Only line"), (None, "Only line", false));
        assert_eq!(first("Line\r\n\r\n"), (None, "Line", false));
    }

    #[test]
    fn a_reopened_fence_shows_its_first_code_line() {
        let piece = "```python\n\n    x = compute()\n    y = x + 1\n```";
        assert_eq!(first(piece), (Some("python"), "    x = compute()", true));
        assert_eq!(
            first("~~~~ rust title=\"a\"\nfn a() {}\n~~~~"),
            (Some("rust"), "fn a() {}", false)
        );
        assert_eq!(first("  ```\nplain\n  ```"), (Some("code"), "plain", false));
    }

    #[test]
    fn code_after_a_closed_fence_is_prose_again() {
        assert_eq!(first("```\n\n```\n\nAfter."), (None, "After.", false));
        // A longer fence is not closed by a shorter marker line, which is code.
        assert_eq!(first("````md\n```\n````"), (Some("md"), "```", false));
    }

    #[test]
    fn only_fence_lines_fall_back_to_the_first_non_blank_line() {
        assert_eq!(first("\n```js\n\n```\n"), (None, "```js", false));
        assert_eq!(first(""), (None, "", false));
    }

    /// Counts the bytes read, to see how much of the reply was read when a line came out.
    struct Counted<'a> {
        text: &'a [u8],
        read: Rc<Cell<usize>>,
    }

    impl Read for Counted<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = self.text.read(buf)?;
            self.read.set(self.read.get() + n);
            Ok(n)
        }
    }

    /// Records, for each write, how many bytes of the reply had been read.
    struct Watched {
        read: Rc<Cell<usize>>,
        writes: Vec<(usize, String)>,
    }

    impl Write for Watched {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            let text = String::from_utf8_lossy(buf).into_owned();
            self.writes.push((self.read.get(), text));
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn the_timeline_comes_out_while_the_reply_is_read() {
        use clap::Parser;
        let paragraph = "A paragraph of prose that says something. ".repeat(30) + "\n\n";
        let reply = paragraph.repeat(400); // about 500 KB, eight blocks of the file
        let cli = crate::Cli::try_parse_from(["replystream", "demo", "-", "--token", "50"])
            .expect("valid arguments");
        let Some(crate::Command::Demo(args)) = cli.command else {
            panic!("a demo command");
        };
        let resolved = args.engine.resolve().unwrap();
        let engine = args.engine.engine(&resolved).unwrap();
        let read = Rc::new(Cell::new(0));
        let deltas = DeltaReader::new(
            Counted {
                text: reply.as_bytes(),
                read: read.clone(),
            },
            "reply",
            args.token,
        );
        let mut out = Watched {
            read: read.clone(),
            writes: Vec::new(),
        };
        let timeline = Timeline::new(LengthMetric::Chars);
        let timeline = run_simulated(&args, deltas, engine, timeline, &mut out).unwrap();
        assert_eq!(read.get(), reply.len());
        assert!(timeline.counts[0] > 100, "{:?}", timeline.counts);
        let (read_at_first, first) = &out.writes[0];
        assert!(first.contains("block"), "{first}");
        assert!(
            *read_at_first <= 2 * 64 * 1024,
            "the first message waited for {read_at_first} of {} bytes",
            reply.len()
        );
        // Every message is written as it is sent: one write per message line.
        assert_eq!(out.writes.len(), timeline.counts.iter().sum::<usize>());
    }

    #[test]
    fn timeline_line_marks_code_and_reasoning() {
        let entry = |text: &str, lane: Lane| Entry {
            at_ms: 1500,
            kind: SendKind::Block,
            lane,
            text: text.to_owned(),
            media: 0,
        };
        let line = entry("```rust\nfn main() {\n}\n```", Lane::Answer).line(LengthMetric::Chars);
        assert_eq!(
            line,
            "    1.500s  block    25      4  ‹rust› \"fn main() {…\"\n"
        );
        let line = entry("Thinking hard", Lane::Reasoning).line(LengthMetric::Chars);
        assert!(line.ends_with("(reasoning) \"Thinking hard\"\n"), "{line}");
        let long = "x".repeat(61);
        let line = entry(&long, Lane::Answer).line(LengthMetric::Chars);
        assert!(
            line.ends_with(&format!("\"{}…\"\n", "x".repeat(60))),
            "{line}"
        );
    }
}
