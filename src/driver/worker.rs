//! The driver thread's loop: commands, one deadline heap, the sink, and the clock.
//!
//! **The clock.** Engine time is milliseconds since the driver started. A deadline `t` names
//! the real instant `origin + t ms` and is acted on only once the real clock has reached it.
//! An input is pushed with the real time rounded *up* to the millisecond, so a deadline the
//! engine counts from it (`now + retry_after`, `now + idle`) is never earlier in real time
//! than asked. Rounding up must not make anything due early, so an input that arrives in the
//! last fraction of a millisecond holding a deadline (the stream's next deadline is that very
//! millisecond) waits for that deadline to fire first, at most one millisecond. A timer is
//! pushed with the real time rounded *down*, which is at or after its deadline.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender, select};

use super::lateness::LatenessHistogram;
use super::shared::Shared;
use super::trace::StreamTrace;
use super::{AckHandle, Command, Delivery, ShutdownReport, Sink, StreamEvent, StreamId};
use crate::action::Action;
use crate::engine::Engine;
use crate::input::OwnedInput;
use crate::time::Time;

/// Commands taken from the channel in one go before timers are looked at again.
const BATCH: usize = 256;

/// The driver thread: runs the loop, and if it panics, reports the death to every handle.
pub(super) fn run(
    sink: Box<dyn Sink>,
    shared: Arc<Shared>,
    acks: AckHandle,
    commands: Receiver<Command>,
) {
    shared.set_worker(std::thread::current().id());
    let mut worker = Worker::new(sink, shared.clone(), acks);
    let outcome = catch_unwind(AssertUnwindSafe(|| worker.run(&commands)));
    if let Err(payload) = outcome {
        let why = panic_message(payload.as_ref());
        dispose(payload);
        let mut report = worker.report();
        report.failure = Some(format!("the driver thread panicked: {why}"));
        shared.die(report.clone());
        // Streams whose open is still queued are lost too; a shutdown waiting for an answer
        // gets the report.
        let mut queued = Vec::new();
        while let Ok(command) = commands.try_recv() {
            queued.push(command);
        }
        while let Some(command) = shared.take_inbox() {
            queued.push(command);
        }
        for command in queued {
            match command {
                Command::Open { id, chat, .. } => shared.add_unfinished((id, chat)),
                Command::Shutdown { reply, .. } => {
                    let _ = reply.send(shared.death_report().unwrap_or(report.clone()));
                }
                _ => {}
            }
        }
    }
    // The sink and the engines are dropped here; a panicking `Drop` must not hide the report.
    if let Err(payload) = catch_unwind(AssertUnwindSafe(move || drop(worker))) {
        dispose(payload);
    }
}

/// Hashes a [`StreamId`] (a counter) with one multiplication: the ids are not chosen by an
/// adversary, and the streams map is looked up for every input.
#[derive(Default)]
struct IdHasher(u64);

impl std::hash::Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

type IdMap<V> = HashMap<StreamId, V, std::hash::BuildHasherDefault<IdHasher>>;

/// One stream on the driver.
struct Stream {
    engine: Box<Engine>,
    chat: String,
    /// Only the first stream of a chat is active; the others wait with their inputs.
    active: bool,
    /// `Started` was reported.
    started: bool,
    /// Inputs not yet pushed: the stream is not active yet, or they wait for the stream's
    /// deadline to fire first (see the module docs). Pushed in order.
    held: VecDeque<OwnedInput>,
    /// The engine's next deadline (heap entries for other times are stale).
    armed: Option<Time>,
    /// Its tracing span and state (zero-sized without the `tracing` feature).
    trace: StreamTrace,
}

struct Worker {
    sink: Box<dyn Sink>,
    shared: Arc<Shared>,
    acks: AckHandle,
    /// The driver's clock origin: engine time is milliseconds since this instant.
    origin: Instant,
    streams: IdMap<Stream>,
    /// Per chat, its streams in arrival order; the front one is active.
    chats: HashMap<String, VecDeque<StreamId>>,
    deadlines: BinaryHeap<Reverse<(Time, StreamId)>>,
    completed: u64,
    shutdown: Option<(Instant, Sender<ShutdownReport>)>,
    pushes: u64,
    sink_panics: u64,
    lateness: LatenessHistogram,
    /// Reused buffers: actions of one push, and inputs produced by synchronous acks.
    actions: Vec<Action>,
    work: VecDeque<(StreamId, OwnedInput)>,
}

/// The real clock as engine time.
#[derive(Clone, Copy)]
struct Clock {
    instant: Instant,
    /// Whole milliseconds since the origin (rounded down).
    floor: Time,
    /// Rounded up.
    ceil: Time,
}

impl Worker {
    fn new(sink: Box<dyn Sink>, shared: Arc<Shared>, acks: AckHandle) -> Worker {
        Worker {
            sink,
            shared,
            acks,
            origin: now_instant(),
            streams: IdMap::default(),
            chats: HashMap::new(),
            deadlines: BinaryHeap::new(),
            completed: 0,
            shutdown: None,
            pushes: 0,
            sink_panics: 0,
            lateness: LatenessHistogram::new(),
            actions: Vec::new(),
            work: VecDeque::new(),
        }
    }

    /// Runs until a shutdown completes or every handle is gone.
    fn run(&mut self, commands: &Receiver<Command>) {
        loop {
            self.run_inbox();
            if let Some((deadline, _)) = &self.shutdown
                && (self.streams.is_empty() || now_instant() >= *deadline)
            {
                let (_, reply) = self.shutdown.take().expect("checked");
                let _ = reply.send(self.report());
                return;
            }
            let timer = match self.next_wake() {
                Some(at) => crossbeam_channel::at(at),
                None => crossbeam_channel::never(),
            };
            select! {
                recv(commands) -> command => match command {
                    Ok(command) => {
                        self.on_command(command);
                        for _ in 1..BATCH {
                            match commands.try_recv() {
                                Ok(command) => self.on_command(command),
                                Err(_) => break,
                            }
                        }
                    }
                    Err(_) => return,
                },
                recv(timer) -> _ => {}
            }
            self.fire_due();
        }
    }

    /// Runs the commands sink callbacks issued, and those they issue in turn.
    fn run_inbox(&mut self) {
        while let Some(command) = self.shared.take_inbox() {
            self.on_command(command);
        }
    }

    fn clock(&self) -> Clock {
        let instant = now_instant();
        let since = instant.saturating_duration_since(self.origin);
        let floor = u64::try_from(since.as_millis()).unwrap_or(u64::MAX);
        let partial = !since.subsec_nanos().is_multiple_of(1_000_000);
        Clock {
            instant,
            floor: Time::from_millis(floor),
            ceil: Time::from_millis(floor.saturating_add(u64::from(partial))),
        }
    }

    /// The real instant deadline `t` names; `None` if it is too far away to represent.
    fn instant_of(&self, t: Time) -> Option<Instant> {
        self.origin
            .checked_add(Duration::from_millis(t.as_millis()))
    }

    /// The earliest engine deadline, or the shutdown deadline.
    fn next_wake(&self) -> Option<Instant> {
        let timer = self
            .deadlines
            .peek()
            .and_then(|Reverse((t, _))| self.instant_of(*t));
        let stop = self.shutdown.as_ref().map(|(d, _)| *d);
        match (timer, stop) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn on_command(&mut self, command: Command) {
        match command {
            Command::Open { id, chat, engine } => self.open(id, chat, engine),
            Command::Text { id, text } => {
                self.push_input(id, OwnedInput::TextDelta(text));
                self.run_work();
            }
            Command::Input { id, input } => {
                self.push_input(id, *input);
                self.run_work();
            }
            Command::Shutdown { wait, reply } => self.begin_shutdown(wait, reply),
            #[cfg(test)]
            Command::Crash => panic!("crash requested by a test"),
        }
    }

    fn open(&mut self, id: StreamId, chat: String, engine: Box<Engine>) {
        let queue = self.chats.entry(chat.clone()).or_default();
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
                started: false,
                held: VecDeque::new(),
                armed: None,
            },
        );
        if self.shutdown.is_some() {
            self.work.push_back((id, OwnedInput::Finish));
            self.run_work();
        }
    }

    /// Pushes queued inputs and everything they cause (synchronous acks feed back in).
    fn run_work(&mut self) {
        while let Some((id, input)) = self.work.pop_front() {
            self.push_input(id, input);
        }
    }

    /// Pushes one input, or holds it (see the module docs on the clock).
    fn push_input(&mut self, id: StreamId, input: OwnedInput) {
        loop {
            let clock = self.clock();
            let Some(stream) = self.streams.get_mut(&id) else {
                // Late acks for a stream that already finished are dropped quietly.
                return;
            };
            if !stream.active || !stream.held.is_empty() {
                stream.held.push_back(input);
                return;
            }
            if matches!(input, OwnedInput::Timer) {
                // A timer input is harmless at any time: pushed like a timer.
                self.push_engine(id, &input, clock.floor);
                return;
            }
            match stream.armed {
                Some(t) if t <= clock.floor => {
                    // Overdue (the thread was busy): fire it first, then look again.
                    self.fire(id, t, clock);
                }
                Some(t) if t <= clock.ceil => {
                    stream.held.push_back(input);
                    return;
                }
                _ => {
                    self.push_engine(id, &input, clock.ceil);
                    return;
                }
            }
        }
    }

    /// Pushes `Timer` into a stream whose deadline `t` has passed, then the inputs it held.
    fn fire(&mut self, id: StreamId, t: Time, clock: Clock) {
        let at = self.instant_of(t);
        let Some(stream) = self.streams.get_mut(&id) else {
            return;
        };
        stream.armed = None;
        let held = std::mem::take(&mut stream.held);
        if let Some(at) = at {
            let late = clock.instant.saturating_duration_since(at);
            self.lateness.record(late);
            stream.trace.timer(late);
        }
        self.push_engine(id, &OwnedInput::Timer, clock.floor);
        for input in held {
            self.push_input(id, input);
        }
    }

    fn push_engine(&mut self, id: StreamId, input: &OwnedInput, now: Time) {
        let Some(stream) = self.streams.get_mut(&id) else {
            return;
        };
        if !stream.started {
            stream.started = true;
            let sink = &mut self.sink;
            guarded(&mut self.sink_panics, || {
                sink.event(id, &StreamEvent::Started)
            });
        }
        self.pushes += 1;
        // Entered for everything this push causes (it owns its span, borrowing nothing).
        let _span = stream.trace.enter();
        let refused = match stream.engine.push(input.as_input(), now) {
            Ok(actions) => {
                self.actions.extend(actions);
                None
            }
            Err(e) => Some(e),
        };
        // Every action was read, so the engine's own queue is empty.
        let done = stream.engine.is_done();
        let next = stream.engine.poll_timeout();
        if next != stream.armed {
            stream.armed = next;
            if let Some(t) = next {
                self.deadlines.push(Reverse((t, id)));
            }
        }
        if let Some(e) = refused {
            let finishing_twice = self.shutdown.is_some() && matches!(input, OwnedInput::Finish);
            if !finishing_twice {
                stream.trace.refused(&e);
                self.event(id, &StreamEvent::InputRefused(e));
            }
        }
        if !self.actions.is_empty() {
            let mut actions = std::mem::take(&mut self.actions);
            for action in actions.drain(..) {
                self.execute(id, action);
            }
            self.actions = actions;
        }
        if done {
            self.close(id);
        }
    }

    fn execute(&mut self, id: StreamId, action: Action) {
        match action {
            Action::Send(send) => {
                if let Some(s) = self.streams.get_mut(&id) {
                    s.trace.send(&send);
                }
                let acks = &self.acks;
                let outcome = guarded(&mut self.sink_panics, || self.sink.deliver(id, &send, acks));
                if let Some(s) = self.streams.get_mut(&id) {
                    match &outcome {
                        Some(delivery) => s.trace.delivery(send.send_id, delivery),
                        None => s.trace.sink_panicked(send.send_id),
                    }
                }
                let input = match outcome {
                    Some(Delivery::Delivered { message_ref }) => Some(OwnedInput::Delivered {
                        send_id: send.send_id,
                        message_ref,
                    }),
                    Some(Delivery::Failed {
                        retry_after_ms,
                        permanent,
                    }) => Some(OwnedInput::DeliveryFailed {
                        send_id: send.send_id,
                        retry_after_ms,
                        permanent,
                    }),
                    Some(Delivery::Pending) => None,
                    None => {
                        self.event(id, &StreamEvent::SinkPanicked(send.send_id));
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
            // The deadline is read from the engine after each push.
            Action::ArmTimer { .. } => {}
            Action::Abort { reason } => {
                if let Some(s) = self.streams.get(&id) {
                    s.trace.abort(reason);
                }
                self.event(id, &StreamEvent::Aborted(reason));
            }
            Action::Idle => {
                if let Some(s) = self.streams.get(&id)
                    && let Some(outcome) = s.engine.outcome()
                {
                    s.trace.idle(&outcome);
                    self.event(id, &StreamEvent::Idle(outcome));
                }
            }
        }
    }

    /// Reports an event to the sink; a panic there is contained and counted.
    fn event(&mut self, id: StreamId, event: &StreamEvent) {
        let sink = &mut self.sink;
        guarded(&mut self.sink_panics, || sink.event(id, event));
    }

    /// Pushes `Timer` into every stream whose deadline has passed.
    fn fire_due(&mut self) {
        while let Some(&Reverse((t, id))) = self.deadlines.peek() {
            let clock = self.clock();
            if t > clock.floor {
                break;
            }
            self.deadlines.pop();
            if self.streams.get(&id).is_some_and(|s| s.armed == Some(t)) {
                self.fire(id, t, clock);
                self.run_work();
            }
        }
    }

    /// The stream is done: forget it and start the next turn of its chat.
    fn close(&mut self, id: StreamId) {
        let Some(stream) = self.streams.remove(&id) else {
            return;
        };
        self.completed += 1;
        self.shared.end_turn(&stream.chat);
        let Some(queue) = self.chats.get_mut(&stream.chat) else {
            return;
        };
        queue.retain(|s| *s != id);
        let Some(&next) = queue.front() else {
            self.chats.remove(&stream.chat);
            return;
        };
        let held = match self.streams.get_mut(&next) {
            Some(s) => {
                s.active = true;
                std::mem::take(&mut s.held)
            }
            None => return,
        };
        for input in held {
            self.work.push_back((next, input));
        }
    }

    fn begin_shutdown(&mut self, wait: Duration, reply: Sender<ShutdownReport>) {
        self.shared.close();
        self.shutdown = Some((now_instant() + wait, reply));
        let mut ids: Vec<StreamId> = self.streams.keys().copied().collect();
        ids.sort();
        for id in ids {
            self.work.push_back((id, OwnedInput::Finish));
        }
        self.run_work();
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
            sink_panics: self.sink_panics,
            failure: None,
        }
    }
}

/// Runs a sink callback; a panic is contained, counted, and gives `None`.
fn guarded<R>(panics: &mut u64, f: impl FnOnce() -> R) -> Option<R> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => Some(r),
        Err(payload) => {
            *panics += 1;
            dispose(payload);
            None
        }
    }
}

/// Drops a panic payload; if dropping it panics too, the payload is leaked instead.
fn dispose(payload: Box<dyn std::any::Any + std::marker::Send>) {
    if let Err(again) = catch_unwind(AssertUnwindSafe(move || drop(payload))) {
        std::mem::forget(again);
    }
}

fn panic_message(payload: &(dyn std::any::Any + std::marker::Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic with a non-text payload".to_owned()
    }
}

/// The driver is the only code that reads the clock.
#[allow(clippy::disallowed_methods)]
fn now_instant() -> Instant {
    Instant::now()
}
