//! `replystream demo FILE`: stream a file through a channel profile and show the timeline of
//! messages a chat would see.
//!
//! By default the run is simulated on a virtual clock (instant, deterministic); `--live` runs
//! the real thread driver on real time, so a person watches the blocks arrive with their
//! pacing. Every engine setting of [`EngineArgs`] applies, so a chunking or coalescing
//! setting can be tried on a real reply.
//!
//! With a live preview (`--preview partial|block`) every operation on the chat is a line:
//! the preview's create, each edit (or draft update), the final edit that ends it, deletes.
//! The simulated chat (and, with `--live`, the sink) gives each new message an id that comes
//! back on every later operation on it, as a platform's message id does.

use std::fs::File;
use std::io::{self, Read, Write};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use clap::Args;
use replystream::driver::{
    AckHandle, Delivery, Driver, DriverOptions, Sink, StreamEvent, StreamHandle, StreamId,
};
use replystream::sim::{Ack, Chat, Sim};
use replystream::{
    Action, Engine, FenceMarker, Input, Lane, LengthMetric, PreviewMode, ResolvedConfig, SendKind,
    SendOp, SendRequest,
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
With --preview, every operation on a message is a line, its kind followed by the operation:
preview.create, preview.edit (or preview.draft), final.edit (the preview becomes the final),
preview.delete; a plain new message shows its kind alone; a preview line shows where its
text has got to.
Then a summary: message counts and when the first and last messages went out.";

/// How timeline lines are laid out.
#[derive(Clone, Copy)]
struct Layout {
    metric: LengthMetric,
    /// The width of the kind column (wider with previews: `preview.create`).
    kind_width: usize,
}

impl Layout {
    fn of(resolved: &ResolvedConfig) -> Layout {
        let preview = resolved.config().preview != PreviewMode::Off;
        Layout {
            metric: resolved.config().metric,
            kind_width: if preview { 14 } else { 5 },
        }
    }
}

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
    // Ctrl-C is caught from before the first line out, so a reader who saw the header knows
    // an interrupt is answered with a summary.
    let watch = args.live.then(live_watch::Watch::with_interrupt);
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
    let layout = Layout::of(&resolved);
    let columns = format!(
        "      time  {:<w$} {:>5}  lines  text\n",
        "kind",
        "len",
        w = layout.kind_width
    );
    out.write_all(columns.as_bytes())
        .map_err(CliError::output)?;
    drop(out);
    let deltas = DeltaReader::new(reply, &args.file, args.token);
    let timeline = Timeline::new(layout);
    let timeline = if let Some(watch) = watch {
        run_live(&args, &resolved, deltas, timeline, watch)?
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

/// One message (or one operation on a message) on the timeline.
struct Entry {
    at_ms: u64,
    kind: SendKind,
    op: SendOp,
    lane: Lane,
    text: String,
    media: usize,
}

impl Entry {
    fn new(at_ms: u64, send: &SendRequest) -> Entry {
        Entry {
            at_ms,
            kind: send.kind,
            op: send.op,
            lane: send.payload.lane,
            // What the chat is sent, in the channel's format.
            text: send.text().to_owned(),
            media: send.payload.media.len(),
        }
    }

    /// The kind column: the kind alone for a plain new message, else kind and operation.
    fn label(&self) -> String {
        if self.op == SendOp::CREATE {
            self.kind.name().to_owned()
        } else {
            format!("{}.{}", self.kind.name(), self.op.name())
        }
    }

    fn line(&self, layout: Layout) -> String {
        /// The longest stretch of the first line shown, in chars.
        const SHOWN_CHARS: usize = 60;
        let metric = layout.metric;
        let first = FirstLine::of(&self.text);
        let mut shown: String = first.line.chars().take(SHOWN_CHARS).collect();
        if first.more || first.line.chars().count() > SHOWN_CHARS {
            shown.push('…');
        }
        if self.kind == SendKind::Preview && first.more {
            // A preview grows at its end: show where it has got to.
            let last = last_line(&self.text);
            let skip = last.chars().count().saturating_sub(SHOWN_CHARS);
            shown = format!("…{}", last.chars().skip(skip).collect::<String>());
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
            "{:>9.3}s  {:<w$} {:>5}  {:>5}  {lane}{code}{:?}{media}\n",
            self.at_ms as f64 / 1000.0,
            self.label(),
            metric.len(&self.text),
            self.text.split('\n').count(),
            shown,
            w = layout.kind_width,
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

/// The last line with content of a preview (its tail, where the model is writing), fence
/// lines and blank lines skipped.
fn last_line(text: &str) -> &str {
    text.lines()
        .rev()
        .map(|l| l.trim_end_matches('\r'))
        .find(|l| !l.trim().is_empty() && FenceMarker::parse_open(l).is_none())
        .unwrap_or("")
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
    layout: Layout,
    /// Messages per kind: block, tool, final, preview, other.
    counts: [usize; 5],
    first_ms: Option<u64>,
    /// When the model's last delta went in (`None`: the run was interrupted before).
    model_done_ms: Option<u64>,
    end_ms: u64,
    /// How many messages the simulated chat shows at the end (simulated runs only).
    chat_messages: Option<usize>,
    /// The run was stopped by Ctrl-C (live runs only): the summary says so.
    interrupted: bool,
}

impl Timeline {
    fn new(layout: Layout) -> Timeline {
        Timeline {
            layout,
            counts: [0; 5],
            first_ms: None,
            model_done_ms: None,
            end_ms: 0,
            chat_messages: None,
            interrupted: false,
        }
    }

    /// Counts a message sent at `at_ms` and returns its line.
    fn message(&mut self, at_ms: u64, send: &SendRequest) -> String {
        let kind = match send.kind {
            SendKind::Block => 0,
            SendKind::Tool => 1,
            SendKind::Final => 2,
            SendKind::Preview => 3,
            _ => 4,
        };
        self.counts[kind] += 1;
        self.first_ms.get_or_insert(at_ms);
        Entry::new(at_ms, send).line(self.layout)
    }

    fn summary(&self) -> String {
        let first = self.first_ms.map_or("none".to_owned(), |ms| {
            format!("{:.3} s", ms as f64 / 1000.0)
        });
        let previews = if self.counts[3] > 0 {
            format!(", {} preview", self.counts[3])
        } else {
            String::new()
        };
        let chat = self
            .chat_messages
            .filter(|_| !previews.is_empty())
            .map_or(String::new(), |n| {
                let plural = if n == 1 { "" } else { "s" };
                format!("; the chat shows {n} message{plural}")
            });
        let seconds = |ms: u64| format!("{:.3} s", ms as f64 / 1000.0);
        let model = self.model_done_ms.map_or(String::new(), |ms| {
            format!("; model finished at {}", seconds(ms))
        });
        let end = if self.interrupted {
            format!("; interrupted (Ctrl-C) at {}", seconds(self.end_ms))
        } else {
            format!("; last message delivered at {}", seconds(self.end_ms))
        };
        format!(
            "\nsummary: {} messages ({} block, {} tool, {} final{previews}); first message at \
             {first}{model}{end}{chat}\n",
            self.counts.iter().sum::<usize>(),
            self.counts[0],
            self.counts[1],
            self.counts[2],
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
    // The chat keeps the messages a preview may still edit, not the whole reply.
    sim.chat = Chat::keyed_only();
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
    timeline.model_done_ms = Some(sim.now);
    sim.push(Input::Finish).run_until_idle();
    print_new(&mut sim, &mut timeline)?;
    timeline.end_ms = last_delivered.unwrap_or(sim.now);
    timeline.chat_messages = Some(sim.chat.shown_messages());
    Ok(timeline)
}

/// A sink that prints each message as it arrives and acks it after a delay, giving each new
/// message an id (its `message_ref`) as a platform would.
struct TerminalSink {
    started: Instant,
    ack_ms: u64,
    timeline: Arc<Mutex<Timeline>>,
    watch: live_watch::Watch,
    messages_created: u64,
}

impl Sink for TerminalSink {
    fn deliver(&mut self, stream: StreamId, send: &SendRequest, acks: &AckHandle) -> Delivery {
        let at_ms = self.started.elapsed().as_millis() as u64;
        let line = self
            .timeline
            .lock()
            .expect("not poisoned")
            .message(at_ms, send);
        if !self.watch.output_closed() {
            let mut out = io::stdout().lock();
            if let Err(err) = out.write_all(line.as_bytes()).and_then(|()| out.flush()) {
                self.watch.set_write_error(err);
            }
        }
        let message_ref = matches!(send.op, SendOp::Create { .. }).then(|| {
            self.messages_created += 1;
            format!("m{}", self.messages_created)
        });
        if self.ack_ms == 0 {
            return Delivery::Delivered { message_ref };
        }
        let acks = acks.clone();
        let id = send.send_id;
        let wait = Duration::from_millis(self.ack_ms);
        std::thread::spawn(move || {
            std::thread::sleep(wait);
            let _ = acks.delivered(stream, id, message_ref);
        });
        Delivery::Pending
    }

    fn event(&mut self, _stream: StreamId, event: &StreamEvent) {
        if matches!(event, StreamEvent::Idle(_)) {
            self.watch.set_idle();
        }
    }
}

/// What the live run's main thread waits for: the stream going idle, a write to stdout
/// failing (the reader went away: `demo --live | head -1`), or Ctrl-C.
mod live_watch {
    use std::io;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Arc, Condvar, Mutex};
    use std::time::{Duration, Instant};

    /// Why the wait ended early.
    #[derive(Debug)]
    pub(super) enum Stop {
        /// Writing to stdout failed (a closed pipe, or another error).
        Output(io::Error),
        /// SIGINT (Ctrl-C).
        Interrupted,
    }

    #[derive(Default)]
    struct State {
        idle: bool,
        write_error: Option<io::Error>,
    }

    /// Shared between the sink (on the driver thread), the signal handler's flag and the
    /// main thread.
    #[derive(Clone)]
    pub(super) struct Watch {
        state: Arc<(Mutex<State>, Condvar)>,
        /// Set by the SIGINT handler (which can only store to an atomic), so it is polled.
        interrupted: Arc<AtomicBool>,
        /// A failed write was seen: later lines are not written.
        closed: Arc<AtomicBool>,
    }

    /// How often a wait looks at the Ctrl-C flag: short enough that the summary comes at
    /// once, long enough to cost nothing.
    const POLL: Duration = Duration::from_millis(20);

    impl Watch {
        /// A watch whose Ctrl-C flag is set on SIGINT from now on. If the handler cannot be
        /// installed, Ctrl-C keeps its default effect (the process ends without a summary).
        pub(super) fn with_interrupt() -> Watch {
            let interrupted = Arc::new(AtomicBool::new(false));
            let _ = signal_hook::flag::register(signal_hook::consts::SIGINT, interrupted.clone());
            Watch {
                state: Arc::default(),
                interrupted,
                closed: Arc::default(),
            }
        }

        pub(super) fn set_idle(&self) {
            let (m, c) = &*self.state;
            m.lock().expect("not poisoned").idle = true;
            c.notify_all();
        }

        pub(super) fn set_write_error(&self, err: io::Error) {
            self.closed.store(true, Ordering::Relaxed);
            let (m, c) = &*self.state;
            m.lock()
                .expect("not poisoned")
                .write_error
                .get_or_insert(err);
            c.notify_all();
        }

        pub(super) fn output_closed(&self) -> bool {
            self.closed.load(Ordering::Relaxed)
        }

        /// Why the run must stop now, if it must.
        pub(super) fn stopped(&self) -> Option<Stop> {
            let (m, _) = &*self.state;
            if let Some(err) = m.lock().expect("not poisoned").write_error.take() {
                return Some(Stop::Output(err));
            }
            self.interrupted
                .load(Ordering::Relaxed)
                .then_some(Stop::Interrupted)
        }

        /// Waits until `deadline`, or less if the run must stop (then returns why).
        pub(super) fn sleep_until(&self, deadline: Instant) -> Option<Stop> {
            self.wait(deadline, |_| false).err()
        }

        /// Waits until the stream is idle (`Ok(true)`), `deadline` passes (`Ok(false)`), or
        /// the run must stop (`Err`).
        pub(super) fn idle_by(&self, deadline: Instant) -> Result<bool, Stop> {
            self.wait(deadline, |state| state.idle)
        }

        #[allow(clippy::disallowed_methods)] // live mode is a host: it reads its own clock
        fn wait(&self, deadline: Instant, done: impl Fn(&State) -> bool) -> Result<bool, Stop> {
            let (m, c) = &*self.state;
            loop {
                if let Some(stop) = self.stopped() {
                    return Err(stop);
                }
                let guard = m.lock().expect("not poisoned");
                if guard.write_error.is_some() {
                    continue; // taken by `stopped` on the next round
                }
                if done(&guard) {
                    return Ok(true);
                }
                let now = Instant::now();
                let Some(left) = deadline
                    .checked_duration_since(now)
                    .filter(|d| !d.is_zero())
                else {
                    return Ok(false);
                };
                let _ = c.wait_timeout(guard, left.min(POLL)).expect("not poisoned");
            }
        }
    }
}

/// The whole run on the real driver and real time. Ends early when stdout closes (quietly)
/// or on Ctrl-C (the summary of what was shown so far is printed, then the exit status is
/// 130, as for a shell's interrupted command).
#[allow(clippy::disallowed_methods)] // live mode is a host: it reads its own clock
fn run_live(
    args: &DemoArgs,
    resolved: &ResolvedConfig,
    mut deltas: DeltaReader<impl Read>,
    timeline: Timeline,
    watch: live_watch::Watch,
) -> Result<Timeline, CliError> {
    let started = Instant::now();
    let timeline = Arc::new(Mutex::new(timeline));
    let sink = TerminalSink {
        started,
        ack_ms: args.ack_ms,
        timeline: timeline.clone(),
        watch: watch.clone(),
        messages_created: 0,
    };
    let driver = Driver::spawn(sink, DriverOptions::default());
    let stream = driver
        .open("demo", resolved.config().clone(), args.engine.seed)
        .map_err(|e| CliError::usage(e.to_string()))?;
    let take_timeline = |model_done_ms: Option<u64>| {
        let mut taken = std::mem::replace(
            &mut *timeline.lock().expect("not poisoned"),
            Timeline::new(Layout::of(resolved)),
        );
        taken.end_ms = started.elapsed().as_millis() as u64;
        taken.model_done_ms = model_done_ms;
        taken
    };
    let gap = Duration::from_micros(1_000_000 / args.rate);
    let mut next = Instant::now();
    while let Some(delta) = deltas.next_delta()? {
        stream
            .text(delta)
            .map_err(|e| CliError::runtime(e.to_string()))?;
        next += gap;
        if let Some(stop) = watch.sleep_until(next) {
            return Err(end_early(stop, &stream, driver, || take_timeline(None)));
        }
    }
    let model_done_ms = started.elapsed().as_millis() as u64;
    stream
        .finish()
        .map_err(|e| CliError::runtime(e.to_string()))?;
    match watch.idle_by(Instant::now() + Duration::from_secs(600)) {
        Ok(true) => {}
        Ok(false) => {
            return Err(CliError::runtime(
                "the stream did not finish within 10 minutes",
            ));
        }
        Err(stop) => {
            let take = || take_timeline(Some(model_done_ms));
            return Err(end_early(stop, &stream, driver, take));
        }
    }
    let timeline = take_timeline(Some(model_done_ms));
    let report = driver.shutdown(Duration::from_secs(5));
    if !report.is_clean() {
        return Err(CliError::runtime(
            "the stream did not finish within 10 minutes",
        ));
    }
    Ok(timeline)
}

/// Ends a live run early: the turn is cancelled and the driver stopped at once (messages
/// not yet acknowledged are not waited for). A closed stdout ends the run quietly; on Ctrl-C
/// the summary of what was shown so far is printed first.
fn end_early(
    stop: live_watch::Stop,
    stream: &StreamHandle,
    driver: Driver,
    timeline: impl FnOnce() -> Timeline,
) -> CliError {
    let _ = stream.cancel();
    let _ = driver.shutdown(Duration::ZERO);
    match stop {
        live_watch::Stop::Output(err) => CliError::output(err),
        live_watch::Stop::Interrupted => {
            let mut timeline = timeline();
            timeline.interrupted = true;
            let mut out = io::stdout().lock();
            match out
                .write_all(timeline.summary().as_bytes())
                .and_then(|()| out.flush())
            {
                Ok(()) => CliError::interrupted(),
                Err(err) => CliError::output(err),
            }
        }
    }
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
        let timeline = Timeline::new(Layout {
            metric: LengthMetric::Chars,
            kind_width: 5,
        });
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
            op: SendOp::CREATE,
            lane,
            text: text.to_owned(),
            media: 0,
        };
        let layout = Layout {
            metric: LengthMetric::Chars,
            kind_width: 5,
        };
        let line = entry("```rust\nfn main() {\n}\n```", Lane::Answer).line(layout);
        assert_eq!(
            line,
            "    1.500s  block    25      4  ‹rust› \"fn main() {…\"\n"
        );
        let line = entry("Thinking hard", Lane::Reasoning).line(layout);
        assert!(line.ends_with("(reasoning) \"Thinking hard\"\n"), "{line}");
        let long = "x".repeat(61);
        let line = entry(&long, Lane::Answer).line(layout);
        assert!(
            line.ends_with(&format!("\"{}…\"\n", "x".repeat(60))),
            "{line}"
        );
    }

    #[test]
    fn preview_operations_are_labelled() {
        let entry = |kind, op| Entry {
            at_ms: 0,
            kind,
            op,
            lane: Lane::Answer,
            text: "Hi█".to_owned(),
            media: 0,
        };
        let key = replystream::MessageKey(1);
        let create = SendOp::Create { key: Some(key) };
        assert_eq!(entry(SendKind::Preview, create).label(), "preview.create");
        let edit = SendOp::Edit { key };
        assert_eq!(entry(SendKind::Final, edit).label(), "final.edit");
        assert_eq!(entry(SendKind::Final, SendOp::CREATE).label(), "final");
        let layout = Layout {
            metric: LengthMetric::Utf16,
            kind_width: 14,
        };
        let line = entry(SendKind::Preview, edit).line(layout);
        assert_eq!(line, "    0.000s  preview.edit       3      1  \"Hi█\"\n");
        let mut grown = entry(SendKind::Preview, edit);
        grown.text = "First line.\n\nSecond line, being writ█\n```".to_owned();
        let line = grown.line(layout);
        assert!(line.ends_with("\"…Second line, being writ█\"\n"), "{line}");
    }
}
