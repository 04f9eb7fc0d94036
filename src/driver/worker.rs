//! The driver thread's loop: commands, one deadline heap, and the sink.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender, select};

use super::trace::StreamTrace;
use super::{
    AckHandle, BusyChat, Command, Delivery, DriverError, DriverOptions, Lateness, ShutdownReport,
    Sink, StreamEvent, StreamId,
};
use crate::action::Action;
use crate::engine::Engine;
use crate::input::OwnedInput;
use crate::time::Time;

/// One stream on the driver.
struct Stream {
    engine: Box<Engine>,
    chat: String,
    /// Only the first stream of a chat is active; the others wait with their inputs.
    active: bool,
    waiting: VecDeque<OwnedInput>,
    /// The deadline the engine asked for last (heap entries for other times are stale).
    armed: Option<Time>,
    /// Its tracing span and state (zero-sized without the `tracing` feature).
    trace: StreamTrace,
}

pub(super) struct Worker {
    sink: Box<dyn Sink>,
    options: DriverOptions,
    acks: AckHandle,
    /// The driver's clock origin: engine time is milliseconds since this instant.
    origin: Instant,
    streams: HashMap<StreamId, Stream>,
    /// Per chat, its streams in arrival order; the front one is active.
    chats: HashMap<String, VecDeque<StreamId>>,
    deadlines: BinaryHeap<Reverse<(Time, StreamId)>>,
    completed: u64,
    shutdown: Option<(Instant, Sender<ShutdownReport>)>,
    pushes: u64,
    lateness: LatenessHistogram,
    /// Reused buffers: actions of one push, and inputs produced by synchronous acks.
    actions: Vec<Action>,
    work: VecDeque<(StreamId, OwnedInput)>,
}

impl Worker {
    pub(super) fn new(sink: Box<dyn Sink>, options: DriverOptions, acks: AckHandle) -> Worker {
        Worker {
            sink,
            options,
            acks,
            origin: now_instant(),
            streams: HashMap::new(),
            chats: HashMap::new(),
            deadlines: BinaryHeap::new(),
            completed: 0,
            shutdown: None,
            pushes: 0,
            lateness: LatenessHistogram::new(),
            actions: Vec::new(),
            work: VecDeque::new(),
        }
    }

    /// Runs until a shutdown completes.
    pub(super) fn run(mut self, commands: Receiver<Command>) {
        loop {
            if let Some((deadline, _)) = &self.shutdown
                && (self.streams.is_empty() || now_instant() >= *deadline)
            {
                let (_, reply) = self.shutdown.take().expect("checked");
                let _ = reply.send(self.report());
                return;
            }
            let wake = self.next_wake();
            let timer = match wake {
                Some(at) => crossbeam_channel::at(at),
                None => crossbeam_channel::never(),
            };
            select! {
                recv(commands) -> cmd => match cmd {
                    Ok(cmd) => self.on_command(cmd),
                    Err(_) => return,
                },
                recv(timer) -> _ => self.fire_due(),
            }
        }
    }

    /// Engine time: milliseconds since the origin, rounded up, so a deadline computed from
    /// it (now + delay) is never earlier in real time than the delay asked for.
    fn now(&self) -> Time {
        let us = self.origin.elapsed().as_micros();
        Time::from_millis(u64::try_from(us.div_ceil(1000)).unwrap_or(u64::MAX))
    }

    fn instant_of(&self, t: Time) -> Instant {
        self.origin + Duration::from_millis(t.as_millis())
    }

    /// The earliest engine deadline, or the shutdown deadline.
    fn next_wake(&self) -> Option<Instant> {
        let timer = self
            .deadlines
            .peek()
            .map(|Reverse((t, _))| self.instant_of(*t));
        let stop = self.shutdown.as_ref().map(|(d, _)| *d);
        match (timer, stop) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn on_command(&mut self, cmd: Command) {
        match cmd {
            Command::Open {
                id,
                chat,
                engine,
                reply,
            } => {
                let result = self.open(id, chat, engine);
                let _ = reply.send(result);
            }
            Command::Input { id, input } => self.push(id, input),
            Command::Shutdown { wait, reply } => self.begin_shutdown(wait, reply),
        }
    }

    fn open(&mut self, id: StreamId, chat: String, engine: Box<Engine>) -> Result<(), DriverError> {
        if self.shutdown.is_some() {
            return Err(DriverError::Closed);
        }
        let queue = self.chats.entry(chat.clone()).or_default();
        if !queue.is_empty() && self.options.busy_chat == BusyChat::Reject {
            return Err(DriverError::ChatBusy);
        }
        let active = queue.is_empty();
        queue.push_back(id);
        let trace = StreamTrace::new(id, &chat);
        self.streams.insert(
            id,
            Stream {
                engine,
                trace,
                chat,
                active,
                waiting: VecDeque::new(),
                armed: None,
            },
        );
        if active {
            self.sink.event(id, &StreamEvent::Started);
        }
        Ok(())
    }

    /// Pushes an input and everything it causes (synchronous acks feed back in).
    fn push(&mut self, id: StreamId, input: OwnedInput) {
        self.work.push_back((id, input));
        while let Some((id, input)) = self.work.pop_front() {
            self.push_one(id, input);
        }
    }

    fn push_one(&mut self, id: StreamId, input: OwnedInput) {
        let now = self.now();
        // Late acks for a stream that already finished are dropped quietly.
        let Some(stream) = self.streams.get_mut(&id) else {
            return;
        };
        if !stream.active {
            stream.waiting.push_back(input);
            return;
        }
        let shutting_down = self.shutdown.is_some();
        self.pushes += 1;
        let _span = stream.trace.enter();
        match stream.engine.push(input.as_input(), now) {
            Ok(actions) => self.actions.extend(actions),
            Err(e) => {
                let finishing_twice = shutting_down && matches!(input, OwnedInput::Finish);
                if !finishing_twice {
                    stream.trace.refused(&e);
                    self.sink.event(id, &StreamEvent::InputRefused(e));
                }
            }
        }
        let mut actions = std::mem::take(&mut self.actions);
        for action in actions.drain(..) {
            self.execute(id, action);
        }
        self.actions = actions;
        if self.streams.get(&id).is_some_and(|s| s.engine.is_done()) {
            self.close(id);
        }
    }

    fn execute(&mut self, id: StreamId, action: Action) {
        match action {
            Action::Send(send) => {
                if let Some(s) = self.streams.get_mut(&id) {
                    s.trace.send(&send);
                }
                let sink = &mut self.sink;
                let acks = &self.acks;
                let outcome = catch_unwind(AssertUnwindSafe(|| sink.deliver(id, &send, acks)));
                if let Some(s) = self.streams.get_mut(&id) {
                    match &outcome {
                        Ok(delivery) => s.trace.delivery(send.send_id, delivery),
                        Err(_) => s.trace.sink_panicked(send.send_id),
                    }
                }
                let input = match outcome {
                    Ok(Delivery::Delivered { message_ref }) => Some(OwnedInput::Delivered {
                        send_id: send.send_id,
                        message_ref,
                    }),
                    Ok(Delivery::Failed {
                        retry_after_ms,
                        permanent,
                    }) => Some(OwnedInput::DeliveryFailed {
                        send_id: send.send_id,
                        retry_after_ms,
                        permanent,
                    }),
                    Ok(Delivery::Pending) => None,
                    Err(_) => {
                        self.sink
                            .event(id, &StreamEvent::SinkPanicked(send.send_id));
                        Some(OwnedInput::DeliveryFailed {
                            send_id: send.send_id,
                            retry_after_ms: None,
                            permanent: true,
                        })
                    }
                };
                if let Some(input) = input {
                    self.work.push_back((id, input));
                }
            }
            Action::ArmTimer { deadline } => {
                if let Some(stream) = self.streams.get_mut(&id) {
                    stream.armed = deadline;
                    if let Some(deadline) = deadline {
                        self.deadlines.push(Reverse((deadline, id)));
                    }
                }
            }
            Action::Abort { reason } => {
                if let Some(s) = self.streams.get(&id) {
                    s.trace.abort(reason);
                }
                self.sink.event(id, &StreamEvent::Aborted(reason));
            }
            Action::Idle => {
                if let Some(s) = self.streams.get(&id)
                    && let Some(outcome) = s.engine.outcome()
                {
                    s.trace.idle(&outcome);
                    self.sink.event(id, &StreamEvent::Idle(outcome));
                }
            }
        }
    }

    /// Pushes `Timer` into every stream whose armed deadline has passed.
    fn fire_due(&mut self) {
        let now = self.now();
        let instant_now = now_instant();
        while let Some(Reverse((t, id))) = self.deadlines.peek().copied() {
            if t > now {
                break;
            }
            self.deadlines.pop();
            let due = self.streams.get_mut(&id).is_some_and(|s| {
                if s.armed == Some(t) {
                    s.armed = None;
                    true
                } else {
                    false
                }
            });
            if due {
                let late = instant_now.saturating_duration_since(self.instant_of(t));
                self.lateness.record(late);
                if let Some(s) = self.streams.get(&id) {
                    s.trace.timer(late);
                }
                self.push(id, OwnedInput::Timer);
            }
        }
    }

    /// The stream is done: forget it and start the next turn of its chat.
    fn close(&mut self, id: StreamId) {
        let Some(stream) = self.streams.remove(&id) else {
            return;
        };
        self.completed += 1;
        let Some(queue) = self.chats.get_mut(&stream.chat) else {
            return;
        };
        queue.retain(|s| *s != id);
        let Some(&next) = queue.front() else {
            self.chats.remove(&stream.chat);
            return;
        };
        let waiting = match self.streams.get_mut(&next) {
            Some(s) => {
                s.active = true;
                std::mem::take(&mut s.waiting)
            }
            None => return,
        };
        self.sink.event(next, &StreamEvent::Started);
        for input in waiting {
            self.work.push_back((next, input));
        }
    }

    fn begin_shutdown(&mut self, wait: Duration, reply: Sender<ShutdownReport>) {
        self.shutdown = Some((now_instant() + wait, reply));
        let ids: Vec<StreamId> = self.streams.keys().copied().collect();
        for id in ids {
            self.push(id, OwnedInput::Finish);
        }
    }

    fn report(&self) -> ShutdownReport {
        let mut unfinished: Vec<(StreamId, String)> = self
            .streams
            .iter()
            .map(|(id, s)| (*id, s.chat.clone()))
            .collect();
        unfinished.sort();
        ShutdownReport {
            completed: self.completed,
            unfinished,
            pushes: self.pushes,
            timer_lateness: self.lateness.summary(),
        }
    }
}

/// Timer lateness in 100 µs buckets up to 100 ms, plus one overflow bucket.
struct LatenessHistogram {
    buckets: Box<[u64; LATENESS_BUCKETS + 1]>,
    count: u64,
    max_us: u64,
}

const LATENESS_BUCKETS: usize = 1000;
const LATENESS_BUCKET_US: u64 = 100;

impl LatenessHistogram {
    fn new() -> Self {
        LatenessHistogram {
            buckets: Box::new([0; LATENESS_BUCKETS + 1]),
            count: 0,
            max_us: 0,
        }
    }

    fn record(&mut self, late: Duration) {
        let us = u64::try_from(late.as_micros()).unwrap_or(u64::MAX);
        let i = ((us / LATENESS_BUCKET_US) as usize).min(LATENESS_BUCKETS);
        self.buckets[i] += 1;
        self.count += 1;
        self.max_us = self.max_us.max(us);
    }

    /// The upper edge of the bucket holding the `p` quantile, never above the maximum seen.
    fn percentile(&self, p: f64) -> u64 {
        if self.count == 0 {
            return 0;
        }
        let rank = ((self.count as f64) * p).ceil().max(1.0) as u64;
        let mut seen = 0;
        for (i, n) in self.buckets.iter().enumerate() {
            seen += n;
            if seen >= rank {
                return ((i as u64 + 1) * LATENESS_BUCKET_US).min(self.max_us);
            }
        }
        self.max_us
    }

    fn summary(&self) -> Lateness {
        Lateness {
            count: self.count,
            p50_us: self.percentile(0.50),
            p99_us: self.percentile(0.99),
            max_us: self.max_us,
        }
    }
}

/// The driver is the only code that reads the clock.
#[allow(clippy::disallowed_methods)]
fn now_instant() -> Instant {
    Instant::now()
}
