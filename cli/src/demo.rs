//! `replystream demo FILE`: stream a file through a channel profile and show the timeline of
//! messages a chat would see.
//!
//! By default the run is simulated on a virtual clock (instant, deterministic); `--live` runs
//! the real thread driver on real time, so a person watches the blocks arrive with their
//! pacing. Every engine setting of [`EngineArgs`] applies, so a chunking or coalescing
//! setting can be tried on a real reply.

use std::io::{self, Write};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use clap::Args;
use replystream::driver::{
    AckHandle, Delivery, Driver, DriverOptions, Sink, StreamEvent, StreamId,
};
use replystream::sim::{Ack, Sim};
use replystream::{
    Engine, FenceMarker, Input, Lane, LengthMetric, ResolvedConfig, SendKind, SendRequest,
};

use crate::settings::{EngineArgs, describe};
use crate::text::char_deltas;
use crate::values::{self, MAX_MS, MAX_UNITS};
use crate::{CliError, read_input};

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
pub(crate) fn run_demo(args: DemoArgs) -> Result<(), CliError> {
    let resolved = args.engine.resolve()?;
    let engine = args.engine.engine(&resolved)?;
    let text = read_input(&args.file)?;
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
    let metric = resolved.config().metric;
    let timeline = if args.live {
        run_live(&args, &resolved, &text, metric)?
    } else {
        run_simulated(&args, &text, engine)
    };
    let mut out = io::stdout().lock();
    if !args.live {
        for entry in &timeline.entries {
            out.write_all(entry.line(metric).as_bytes())
                .map_err(CliError::output)?;
        }
    }
    out.write_all(timeline.summary().as_bytes())
        .map_err(CliError::output)?;
    out.flush().map_err(CliError::output)
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

struct Timeline {
    entries: Vec<Entry>,
    model_done_ms: u64,
    end_ms: u64,
}

impl Timeline {
    fn summary(&self) -> String {
        let count = |k: SendKind| self.entries.iter().filter(|e| e.kind == k).count();
        let first = self.entries.first().map_or("none".to_owned(), |e| {
            format!("{:.3} s", e.at_ms as f64 / 1000.0)
        });
        format!(
            "\nsummary: {} messages ({} block, {} tool, {} final); first message at {first}; \
             model finished at {:.3} s; last message delivered at {:.3} s\n",
            self.entries.len(),
            count(SendKind::Block),
            count(SendKind::Tool),
            count(SendKind::Final),
            self.model_done_ms as f64 / 1000.0,
            self.end_ms as f64 / 1000.0,
        )
    }
}

/// The whole run on a virtual clock: instant and deterministic.
fn run_simulated(args: &DemoArgs, text: &str, engine: Engine) -> Timeline {
    let ack_ms = args.ack_ms;
    let mut sim = Sim::with_policy(
        engine,
        Box::new(move |_, _| Ack::Deliver { after_ms: ack_ms }),
    );
    let gap_ms = (1000 / args.rate).max(1);
    let mut t = 0;
    for delta in char_deltas(text, args.token) {
        sim.at(t);
        sim.push(Input::TextDelta(delta));
        t += gap_ms;
    }
    let model_done_ms = sim.now;
    sim.push(Input::Finish).run_until_idle();
    let entries = sim
        .sends()
        .iter()
        .map(|(at_ms, send)| Entry::new(*at_ms, send))
        .collect();
    let end_ms = sim.delivered.last().map_or(sim.now, |(t, _)| *t);
    Timeline {
        entries,
        model_done_ms,
        end_ms,
    }
}

/// A sink that prints each message as it arrives and acks it after a delay.
struct TerminalSink {
    started: Instant,
    ack_ms: u64,
    metric: LengthMetric,
    entries: Arc<Mutex<Vec<Entry>>>,
    done: crossbeam_done::Flag,
}

impl Sink for TerminalSink {
    fn deliver(&mut self, stream: StreamId, send: &SendRequest, acks: &AckHandle) -> Delivery {
        let entry = Entry::new(self.started.elapsed().as_millis() as u64, send);
        let line = entry.line(self.metric);
        let _ = io::stdout().lock().write_all(line.as_bytes());
        self.entries.lock().expect("not poisoned").push(entry);
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
    text: &str,
    metric: LengthMetric,
) -> Result<Timeline, CliError> {
    let started = Instant::now();
    let entries = Arc::new(Mutex::new(Vec::new()));
    let done = crossbeam_done::Flag::default();
    let sink = TerminalSink {
        started,
        ack_ms: args.ack_ms,
        metric,
        entries: entries.clone(),
        done: done.clone(),
    };
    let driver = Driver::spawn(sink, DriverOptions::default());
    let stream = driver
        .open("demo", resolved.config().clone(), args.engine.seed)
        .map_err(|e| CliError::usage(e.to_string()))?;
    let gap = Duration::from_micros(1_000_000 / args.rate);
    let mut next = Instant::now();
    for delta in char_deltas(text, args.token) {
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
    if !report.unfinished.is_empty() {
        return Err(CliError::runtime(
            "the stream did not finish within 10 minutes",
        ));
    }
    let entries = std::mem::take(&mut *entries.lock().expect("not poisoned"));
    Ok(Timeline {
        entries,
        model_done_ms,
        end_ms,
    })
}

#[cfg(test)]
mod tests {
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
