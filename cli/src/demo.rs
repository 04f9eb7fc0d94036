//! `replystream demo FILE`: stream a file through a channel profile and show the timeline of
//! messages a chat would see.
//!
//! By default the run is simulated on a virtual clock (instant, deterministic); `--live` runs
//! the real thread driver on real time, so a person watches the blocks arrive with their
//! pacing.

use std::io::{self, Write};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use replystream::driver::{
    AckHandle, Delivery, Driver, DriverOptions, Sink, StreamEvent, StreamId,
};
use replystream::sim::{Ack, Sim};
use replystream::{
    ChannelProfile, Config, Engine, HumanDelay, Input, LengthMetric, Send, SendKind,
};

use crate::args::{Arg, ArgReader};
use crate::text::{char_deltas, parse_count, require_file, set_file, unknown_option};
use crate::{CliError, print_usage, read_input};

/// Options shared by `demo` and `replay`: which channel and how the host behaves.
pub struct HostOptions {
    /// The channel profile's name.
    pub channel: &'static str,
    /// The engine's configuration, channel defaults plus the options given.
    pub config: Config,
    /// The RNG seed.
    pub seed: u64,
    /// Every send is acked after this many ms.
    pub ack_ms: u64,
}

impl HostOptions {
    fn new() -> HostOptions {
        HostOptions {
            channel: "generic",
            config: Config::default(),
            seed: 1,
            ack_ms: 150,
        }
    }

    /// The replay's defaults: acks come at once unless a trace says otherwise.
    pub fn new_for_replay() -> HostOptions {
        HostOptions {
            ack_ms: 0,
            ..HostOptions::new()
        }
    }

    /// Reads one of the shared options; `false` if `name` is not one of them.
    pub fn read(&mut self, name: &str, args: &mut ArgReader) -> Result<bool, CliError> {
        match name {
            "channel" => {
                let value = args.value("channel")?;
                let profile = ChannelProfile::by_name(&value).ok_or_else(|| {
                    CliError::usage(format!(
                        "unknown channel {value:?} (expected one of: {})",
                        ChannelProfile::NAMES.join(", ")
                    ))
                })?;
                let keep = self.config.human_delay;
                self.channel = profile.name;
                self.config = Config::for_channel(&profile);
                self.config.human_delay = keep;
            }
            "seed" => self.seed = args.parsed("seed", "a whole number")?,
            "ack-ms" => self.ack_ms = args.parsed("ack-ms", "a whole number of milliseconds")?,
            "human-delay" => {
                self.config.human_delay = match args.value("human-delay")?.trim() {
                    "off" => HumanDelay::Off,
                    "natural" => HumanDelay::Natural,
                    other => {
                        return Err(CliError::usage(format!(
                            "invalid value {other:?} for --human-delay (expected off or natural)"
                        )));
                    }
                }
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Builds the engine; an invalid configuration is a usage error.
    pub fn engine(&self) -> Result<Engine, CliError> {
        Engine::new(self.config.clone(), self.seed).map_err(|e| CliError::usage(e.to_string()))
    }
}

struct DemoOptions {
    file: String,
    host: HostOptions,
    rate: u64,
    token_chars: usize,
    live: bool,
}

fn parse(mut args: ArgReader) -> Result<Option<DemoOptions>, CliError> {
    let mut file = None;
    let mut host = HostOptions::new();
    let mut rate = 50;
    let mut token_chars = 4;
    let mut live = false;
    while let Some(arg) = args.next_arg()? {
        match arg {
            Arg::Help => return Ok(None),
            Arg::Positional(value) => set_file(&mut file, value)?,
            Arg::Long(name) => {
                if host.read(&name, &mut args)? {
                    continue;
                }
                match name.as_str() {
                    "help" => return Ok(None),
                    "rate" => {
                        rate = parse_count(&mut args, "rate")? as u64;
                        if rate == 0 || rate > 100_000 {
                            return Err(CliError::usage(
                                "--rate must be between 1 and 100000 deltas per second",
                            ));
                        }
                    }
                    "token" => {
                        token_chars = parse_count(&mut args, "token")?;
                        if token_chars == 0 {
                            return Err(CliError::usage("--token must be at least 1"));
                        }
                    }
                    "live" => live = true,
                    _ => return Err(unknown_option("demo", &name)),
                }
            }
        }
    }
    Ok(Some(DemoOptions {
        file: require_file(file, "demo")?,
        host,
        rate,
        token_chars,
        live,
    }))
}

/// Runs `replystream demo`.
pub fn run_demo(args: ArgReader) -> Result<(), CliError> {
    let Some(options) = parse(args)? else {
        return print_usage();
    };
    let text = read_input(&options.file)?;
    let engine = options.host.engine()?;
    let limits = describe_limits(engine.config());
    let mut out = io::stdout().lock();
    let header = format!(
        "replystream demo: {} on {} ({limits}), {}-char deltas at {}/s, acks after {} ms, human delay {}, seed {}{}\n\n",
        options.file,
        options.host.channel,
        options.token_chars,
        options.rate,
        options.host.ack_ms,
        options.host.config.human_delay.name(),
        options.host.seed,
        if options.live { ", live" } else { "" },
    );
    out.write_all(header.as_bytes()).map_err(CliError::output)?;
    out.write_all(b"      time  kind    len  lines  text\n")
        .map_err(CliError::output)?;
    drop(out);
    let metric = engine.config().metric;
    let timeline = if options.live {
        run_live(&options, &text, metric)?
    } else {
        run_simulated(&options, &text, engine)
    };
    let mut out = io::stdout().lock();
    if !options.live {
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
    text: String,
    media: usize,
}

impl Entry {
    fn line(&self, metric: LengthMetric) -> String {
        let first = self
            .text
            .lines()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("");
        let mut shown: String = first.chars().take(60).collect();
        if first.chars().count() > 60
            || self.text.lines().filter(|l| !l.trim().is_empty()).count() > 1
        {
            shown.push('…');
        }
        let media = if self.media > 0 {
            format!(" [+{} media]", self.media)
        } else {
            String::new()
        };
        format!(
            "{:>9.3}s  {:<5} {:>5}  {:>5}  {:?}{media}\n",
            self.at_ms as f64 / 1000.0,
            self.kind.name(),
            metric.len(&self.text),
            self.text.split('\n').count(),
            shown,
        )
    }
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

fn describe_limits(config: &Config) -> String {
    let mut s = format!("limit {} {}", config.text_limit, config.metric.name());
    if let Some(lines) = config.max_lines {
        s.push_str(&format!(", {lines} lines"));
    }
    s
}

/// The whole run on a virtual clock: instant and deterministic.
fn run_simulated(options: &DemoOptions, text: &str, engine: Engine) -> Timeline {
    let ack_ms = options.host.ack_ms;
    let mut sim = Sim::with_policy(
        engine,
        Box::new(move |_, _| Ack::Deliver { after_ms: ack_ms }),
    );
    let gap_ms = (1000 / options.rate).max(1);
    let mut t = 0;
    for delta in char_deltas(text, options.token_chars) {
        sim.at(t);
        sim.push(Input::TextDelta(delta));
        t += gap_ms;
    }
    let model_done_ms = sim.now;
    sim.push(Input::Finish).run_until_idle();
    let entries = sim
        .sends()
        .into_iter()
        .map(|(at_ms, s)| Entry {
            at_ms,
            kind: s.kind,
            media: s.payload.media.len(),
            text: s.payload.text,
        })
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
    fn deliver(&mut self, stream: StreamId, send: &Send, acks: &AckHandle) -> Delivery {
        let entry = Entry {
            at_ms: self.started.elapsed().as_millis() as u64,
            kind: send.kind,
            text: send.payload.text.clone(),
            media: send.payload.media.len(),
        };
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
        if *event == StreamEvent::Idle {
            self.done.set();
        }
    }
}

/// A one-shot "the stream is idle" flag between the sink and the main thread.
mod crossbeam_done {
    use std::sync::{Arc, Condvar, Mutex};
    use std::time::Duration;

    #[derive(Clone, Default)]
    pub struct Flag(Arc<(Mutex<bool>, Condvar)>);

    impl Flag {
        pub fn set(&self) {
            let (m, c) = &*self.0;
            *m.lock().expect("not poisoned") = true;
            c.notify_all();
        }

        /// Waits until set or `limit` passes; true if set.
        pub fn wait(&self, limit: Duration) -> bool {
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
fn run_live(options: &DemoOptions, text: &str, metric: LengthMetric) -> Result<Timeline, CliError> {
    let started = Instant::now();
    let entries = Arc::new(Mutex::new(Vec::new()));
    let done = crossbeam_done::Flag::default();
    let sink = TerminalSink {
        started,
        ack_ms: options.host.ack_ms,
        metric,
        entries: entries.clone(),
        done: done.clone(),
    };
    let driver = Driver::spawn(sink, DriverOptions::default());
    let stream = driver
        .open("demo", options.host.config.clone(), options.host.seed)
        .map_err(|e| CliError::usage(e.to_string()))?;
    let gap = Duration::from_micros(1_000_000 / options.rate);
    let mut next = Instant::now();
    for delta in char_deltas(text, options.token_chars) {
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
