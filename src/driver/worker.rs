//! The driver thread's loop: commands, stream slots, the timer wheel, the sink, and the
//! clock.
//!
//! **The clock.** Engine time is milliseconds since the driver started. A deadline `t` names
//! the real instant `origin + t ms` and is acted on only once the real clock has reached it.
//! An input is pushed with the real time rounded *up* to the millisecond, so a deadline the
//! engine counts from it (`now + retry_after`, `now + idle`) is never earlier in real time
//! than asked. Rounding up must not make anything due early, so an input that arrives in the
//! last fraction of a millisecond holding a deadline (the stream's next deadline is that very
//! millisecond) waits for that deadline to fire first, at most one millisecond. A timer is
//! pushed with the real time rounded *down*, which is at or after its deadline.
//!
//! **Streams** live in a vector indexed by the slot in their id, checked against the id's
//! generation, so finding a stream is one index and a finished stream's id finds nothing.
//!
//! **Deadlines.** Each stream has at most one live entry in the [`TimerWheel`], at or before
//! its engine's deadline. A deadline that moves later (an idle timer re-armed by every delta)
//! leaves the entry where it is; when the entry comes due, it is moved on to the current
//! deadline. A deadline that moves earlier files a new entry, and the old one is skipped
//! when it comes due (its time no longer matches the stream's entry).

use std::collections::{HashMap, VecDeque};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::Sender;

use super::lateness::LatenessHistogram;
use super::mailbox::{Item, Mailbox, Pending, model_text};
use super::shared::{Shared, slot_of};
use super::trace::StreamTrace;
use super::wheel::{TimerKey, TimerWheel};
use super::{AckHandle, Command, Delivery, ShutdownReport, Sink, StreamEvent, StreamId};
use crate::action::Action;
use crate::engine::Engine;
use crate::input::{Input, OwnedInput};
use crate::time::Time;

/// Commands run in one go before timers are looked at again: a few dozen microseconds of
/// work, so that a timer waits for a batch far less than the 5 ms lateness budget (256 made
/// the median lateness 0.8 ms at 100 000 streams, 32 makes it 0.4 ms; looking costs a clock
/// read).
const BATCH: usize = 32;

/// The driver thread: runs the loop, and if it panics, reports the death to every handle.
pub(super) fn run(sink: Box<dyn Sink>, shared: Arc<Shared>, acks: AckHandle) {
    shared.set_worker();
    let mut worker = Worker::new(sink, shared.clone(), acks);
    let outcome = catch_unwind(AssertUnwindSafe(|| worker.run()));
    if let Err(payload) = outcome {
        let why = panic_message(payload.as_ref());
        dispose(payload);
        let mut report = worker.report();
        report.failure = Some(format!("the driver thread panicked: {why}"));
        shared.die(report.clone());
        worker.stop_mailboxes();
        // Streams whose open is still queued are lost too; a shutdown waiting for an answer
        // gets the report.
        let mut queued: Vec<Command> = std::mem::take(&mut worker.commands).into();
        queued.extend(shared.queue.close());
        while let Some(command) = shared.take_inbox() {
            queued.push(command);
        }
        for command in queued {
            match command {
                Command::Open { chat, mailbox, .. } => {
                    mailbox.close(true);
                    shared.add_unfinished((mailbox.id, chat));
                }
                Command::Shutdown { reply, .. } => {
                    let _ = reply.send(shared.death_report().unwrap_or(report.clone()));
                }
                _ => {}
            }
        }
    } else {
        shared.stop();
        // Commands after the shutdown are dropped: a shutdown waiting for an answer (a
        // second one, from inside a callback) sees its reply channel closed.
        shared.queue.close();
        worker.stop_mailboxes();
    }
    // The sink and the engines are dropped here; a panicking `Drop` must not hide the report.
    if let Err(payload) = catch_unwind(AssertUnwindSafe(move || drop(worker))) {
        dispose(payload);
    }
}

/// One stream on the driver.
struct Stream {
    id: StreamId,
    engine: Box<Engine>,
    /// Where its inputs wait for this thread.
    mailbox: Arc<Mailbox>,
    /// The engine's next deadline.
    armed: Option<Time>,
    /// The time of the stream's live entry in the timer wheel (at or before `armed`).
    filed: Option<Time>,
    /// Only the first stream of a chat is active; the others wait with their inputs.
    active: bool,
    /// `Started` was reported.
    started: bool,
    chat: String,
    /// Inputs not yet pushed: the stream is not active yet, or they wait for the stream's
    /// deadline to fire first (see the module docs). Pushed in order, each with the number
    /// of deltas it stands for (a merged run of text, or 1).
    held: VecDeque<(OwnedInput, usize)>,
    /// Its tracing span and state (zero-sized without the `tracing` feature).
    trace: StreamTrace,
}

impl Stream {
    /// The text the sink was never given (see [`ShutdownReport::unsent`]).
    fn unsent_text(&self) -> String {
        let mut text = String::new();
        self.engine.queued_text(&mut text);
        let mut first = true;
        for (input, _) in &self.held {
            let held = model_text(input);
            if first && !held.is_empty() && !text.is_empty() {
                text.push_str("\n\n");
            }
            first &= held.is_empty();
            text.push_str(held);
        }
        text
    }
}

struct Worker {
    sink: Box<dyn Sink>,
    shared: Arc<Shared>,
    acks: AckHandle,
    /// The driver's clock origin: engine time is milliseconds since this instant.
    origin: Instant,
    /// The streams, by slot.
    streams: Vec<Option<Stream>>,
    /// How many slots hold a stream.
    live: usize,
    /// Per chat, its streams in arrival order; the front one is active.
    chats: HashMap<String, VecDeque<StreamId>>,
    wheel: TimerWheel,
    /// Wheel entries taken out as due, reused.
    due: Vec<(Time, TimerKey)>,
    completed: u64,
    shutdown: Option<(Instant, Sender<ShutdownReport>)>,
    pushes: u64,
    merged: u64,
    sink_panics: u64,
    lateness: LatenessHistogram,
    /// Commands taken from the queue and not yet run.
    commands: VecDeque<Command>,
    /// Reused buffers: actions of one push, inputs produced by synchronous acks, and what
    /// was taken from a mailbox.
    actions: Vec<Action>,
    work: VecDeque<Work>,
    taken: Pending,
    /// Inputs taken from mailboxes and not yet given back to the bounded queue's count.
    /// The count is an atomic that every push from another thread also writes; giving
    /// back once per turn of the loop (at most [`BATCH`] commands) instead of once per
    /// mailbox saves a contended cache line per push. A caller waiting for room waits at
    /// most one batch longer, and never for a sink callback: the room is given back before
    /// the sink is called (a sink may wait for a thread that waits for room).
    unreleased: usize,
}

/// Something the driver thread still has to do for a stream, in order.
enum Work {
    /// Push an input standing for this many deltas (an ack of a synchronous delivery).
    Push(StreamId, OwnedInput, usize),
    /// The stream just became its chat's active turn: push the inputs it held while it
    /// waited. They stay in its `held` until then, so that an input arriving meanwhile
    /// queues behind them (see [`Worker::push_input`]).
    Release(StreamId),
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

/// Stream `id` in `streams`, if it is still there.
fn stream_in(streams: &mut [Option<Stream>], id: StreamId) -> Option<&mut Stream> {
    let (slot, _) = slot_of(id)?;
    streams
        .get_mut(slot as usize)?
        .as_mut()
        .filter(|s| s.id == id)
}

/// The wheel's name for stream `id`.
fn key_of(id: StreamId) -> TimerKey {
    let (slot, generation) = slot_of(id).expect("a driver-made id");
    TimerKey { slot, generation }
}

impl Worker {
    fn new(sink: Box<dyn Sink>, shared: Arc<Shared>, acks: AckHandle) -> Worker {
        Worker {
            sink,
            shared,
            acks,
            origin: now_instant(),
            streams: Vec::new(),
            live: 0,
            chats: HashMap::new(),
            wheel: TimerWheel::new(),
            due: Vec::new(),
            completed: 0,
            shutdown: None,
            pushes: 0,
            merged: 0,
            unreleased: 0,
            sink_panics: 0,
            lateness: LatenessHistogram::new(),
            commands: VecDeque::new(),
            actions: Vec::new(),
            work: VecDeque::new(),
            taken: Pending::default(),
        }
    }

    fn stream(&self, id: StreamId) -> Option<&Stream> {
        let (slot, _) = slot_of(id)?;
        self.streams
            .get(slot as usize)?
            .as_ref()
            .filter(|s| s.id == id)
    }

    fn stream_mut(&mut self, id: StreamId) -> Option<&mut Stream> {
        stream_in(&mut self.streams, id)
    }

    /// Runs until a shutdown completes.
    fn run(&mut self) {
        loop {
            self.run_inbox();
            // Before anything that may sleep: room taken is given back.
            self.release_taken();
            if let Some((deadline, _)) = &self.shutdown
                && (self.live == 0 || now_instant() >= *deadline)
            {
                let (_, reply) = self.shutdown.take().expect("checked");
                // Inputs pushed from now on are refused, before `shutdown` returns.
                self.shared.stop();
                let report = self.wind_up();
                let _ = reply.send(report);
                return;
            }
            if self.commands.is_empty() {
                let wake = self.next_wake();
                self.shared.queue.wait(&mut self.commands, wake);
            }
            for _ in 0..BATCH {
                let Some(command) = self.commands.pop_front() else {
                    break;
                };
                self.on_command(command);
            }
            self.fire_due();
        }
    }

    /// Gives the inputs taken since the last call back to the bounded queue's count.
    fn release_taken(&mut self) {
        self.shared.release(std::mem::take(&mut self.unreleased));
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

    /// The earliest wheel entry, or the shutdown deadline.
    fn next_wake(&mut self) -> Option<Instant> {
        let timer = self.wheel.next_deadline().and_then(|t| self.instant_of(t));
        let stop = self.shutdown.as_ref().map(|(d, _)| *d);
        match (timer, stop) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn on_command(&mut self, command: Command) {
        match command {
            Command::Open {
                chat,
                engine,
                mailbox,
            } => self.open(chat, engine, mailbox),
            Command::Ready { id } => self.take_mailbox(id, false),
            Command::Shutdown { wait, reply } => self.begin_shutdown(wait, reply),
            #[cfg(test)]
            Command::Crash => panic!("crash requested by a test"),
        }
    }

    fn open(&mut self, chat: String, engine: Box<Engine>, mailbox: Arc<Mailbox>) {
        self.shared.release(1);
        let id = mailbox.id;
        let (slot, _) = slot_of(id).expect("a driver-made id");
        let slot = slot as usize;
        if self.streams.len() <= slot {
            self.streams.resize_with(slot + 1, || None);
        }
        let queue = self.chats.entry(chat.clone()).or_default();
        let active = queue.is_empty();
        queue.push_back(id);
        let trace = StreamTrace::new(id, &chat);
        debug_assert!(self.streams[slot].is_none(), "a slot is freed before reuse");
        self.streams[slot] = Some(Stream {
            id,
            engine,
            mailbox,
            armed: None,
            filed: None,
            active,
            started: false,
            chat,
            held: VecDeque::new(),
            trace,
        });
        self.live += 1;
        // Inputs pushed before this open was handled (its handle can reach another thread
        // while the open waits in a callback's inbox): their token may have come first.
        if self.shutdown.is_some() {
            self.finish_for_shutdown(id);
        } else {
            self.take_mailbox(id, false);
        }
    }

    /// Takes everything waiting in stream `id`'s mailbox and pushes it in order (`seal`: and
    /// from now on the mailbox takes acks only, see [`Mailbox::take_and_seal`]).
    fn take_mailbox(&mut self, id: StreamId, seal: bool) {
        let mut taken = std::mem::take(&mut self.taken);
        let Some(stream) = self.stream(id) else {
            // A finished stream (its mailbox dropped what it held), or one whose open is
            // still on its way (the open takes the mailbox).
            self.taken = taken;
            return;
        };
        self.unreleased += if seal {
            stream.mailbox.take_and_seal(&mut taken)
        } else {
            stream.mailbox.take(&mut taken)
        };
        let mut at = 0;
        for item in taken.items.drain(..) {
            match item {
                Item::Text(run) => {
                    let text = &taken.text[at..at + run.len];
                    at += run.len;
                    self.push_run(id, text, run.deltas);
                }
                Item::Input(input) => self.push_input(id, input.as_input(), 1),
            }
            self.run_work();
        }
        if taken.tail.deltas > 0 {
            self.push_run(id, &taken.text[at..], taken.tail.deltas);
            self.run_work();
        }
        taken.clear();
        self.taken = taken;
    }

    /// Pushes `deltas` text deltas, merged into `text`.
    fn push_run(&mut self, id: StreamId, text: &str, deltas: usize) {
        self.merged += deltas as u64 - 1;
        self.push_input(id, Input::TextDelta(text), deltas);
    }

    /// Pushes queued inputs and everything they cause (synchronous acks feed back in).
    fn run_work(&mut self) {
        while let Some(work) = self.work.pop_front() {
            match work {
                Work::Push(id, input, deltas) => self.push_input(id, input.as_input(), deltas),
                Work::Release(id) => self.release_held(id),
            }
        }
    }

    /// Pushes the inputs stream `id` held, in order; those held again (behind a deadline)
    /// keep their order in `held`.
    fn release_held(&mut self, id: StreamId) {
        let Some(stream) = self.stream_mut(id) else {
            return;
        };
        let held = std::mem::take(&mut stream.held);
        for (input, deltas) in held {
            self.push_input(id, input.as_input(), deltas);
        }
    }

    /// Pushes one input (standing for `deltas` deltas), or holds it (see the module docs on
    /// the clock).
    fn push_input(&mut self, id: StreamId, input: Input<'_>, deltas: usize) {
        loop {
            let clock = self.clock();
            let Some(stream) = self.stream_mut(id) else {
                // Late acks for a stream that already finished are dropped quietly.
                return;
            };
            if !stream.active || !stream.held.is_empty() {
                stream.held.push_back((input.into(), deltas));
                return;
            }
            if matches!(input, Input::Timer) {
                // A timer input is harmless at any time: pushed like a timer.
                self.push_engine(id, input, clock.floor, deltas);
                return;
            }
            match stream.armed {
                Some(t) if t <= clock.floor => {
                    // Overdue (the thread was busy): fire it first, then look again.
                    self.fire(id, t, clock);
                }
                Some(t) if t <= clock.ceil => {
                    stream.held.push_back((input.into(), deltas));
                    return;
                }
                _ => {
                    self.push_engine(id, input, clock.ceil, deltas);
                    return;
                }
            }
        }
    }

    /// Pushes `Timer` into a stream whose deadline `t` has passed, then the inputs it held.
    fn fire(&mut self, id: StreamId, t: Time, clock: Clock) {
        let at = self.instant_of(t);
        let Some(stream) = self.stream_mut(id) else {
            return;
        };
        stream.armed = None;
        let held = std::mem::take(&mut stream.held);
        if let Some(at) = at {
            let late = clock.instant.saturating_duration_since(at);
            stream.trace.timer(late);
            self.lateness.record(late);
        }
        self.push_engine(id, Input::Timer, clock.floor, 1);
        for (input, deltas) in held {
            self.push_input(id, input.as_input(), deltas);
        }
    }

    /// Pushes `input` into the stream's engine at `now` and executes what it asks. A refused
    /// input standing for several deltas is reported once per delta, as if each had been
    /// pushed alone (a refusal depends only on the engine's state, which it leaves as it was).
    fn push_engine(&mut self, id: StreamId, input: Input<'_>, now: Time, deltas: usize) {
        let finish = matches!(input, Input::Finish);
        let Some(stream) = stream_in(&mut self.streams, id) else {
            return;
        };
        if !stream.started {
            stream.started = true;
            self.shared.release(std::mem::take(&mut self.unreleased));
            let (sink, chat) = (&mut self.sink, &stream.chat);
            guarded(&mut self.sink_panics, || sink.started(id, chat));
            guarded(&mut self.sink_panics, || {
                sink.event(id, &StreamEvent::Started)
            });
        }
        self.pushes += 1;
        let finishing_twice = self.shutdown.is_some() && finish;
        let Some(stream) = stream_in(&mut self.streams, id) else {
            return;
        };
        // Entered for everything this push causes (it owns its span, borrowing nothing).
        let _span = stream.trace.enter();
        let refused = match stream.engine.push(input, now) {
            Ok(actions) => {
                self.actions.extend(actions);
                None
            }
            Err(e) => Some(e),
        };
        // Every action was read, so the engine's own queue is empty.
        let done = stream.engine.is_done();
        let next = stream.engine.poll_timeout();
        stream.armed = next;
        if let Some(t) = next
            && stream.filed.is_none_or(|filed| t < filed)
        {
            stream.filed = Some(t);
            self.wheel.insert(t, key_of(id));
        }
        if let Some(e) = refused
            && !finishing_twice
        {
            for _ in 0..deltas {
                stream.trace.refused(&e);
            }
            let event = StreamEvent::InputRefused(e);
            for _ in 0..deltas {
                self.event(id, &event);
            }
        }
        if !self.actions.is_empty() {
            // The sink is user code that may wait for a thread waiting for room.
            self.release_taken();
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
                if let Some(s) = self.stream_mut(id) {
                    s.trace.send(&send);
                }
                let acks = &self.acks;
                let outcome = guarded(&mut self.sink_panics, || self.sink.deliver(id, &send, acks));
                if let Some(s) = self.stream_mut(id) {
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
                    self.work.push_back(Work::Push(id, input, 1));
                }
            }
            // The deadline is read from the engine after each push.
            Action::ArmTimer { .. } => {}
            Action::Abort { reason } => {
                if let Some(s) = self.stream(id) {
                    s.trace.abort(reason);
                }
                self.event(id, &StreamEvent::Aborted(reason));
            }
            Action::Idle => {
                if let Some(s) = self.stream(id)
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
        self.release_taken();
        let sink = &mut self.sink;
        guarded(&mut self.sink_panics, || sink.event(id, event));
    }

    /// Pushes `Timer` into every stream whose deadline has passed.
    fn fire_due(&mut self) {
        loop {
            let clock = self.clock();
            let mut due = std::mem::take(&mut self.due);
            self.wheel.take_due(clock.floor, &mut due);
            if due.is_empty() {
                self.due = due;
                return;
            }
            for (t, key) in due.drain(..) {
                let clock = self.clock();
                let Some(Some(stream)) = self.streams.get_mut(key.slot as usize) else {
                    continue;
                };
                if slot_of(stream.id).map(|(_, g)| g) != Some(key.generation)
                    || stream.filed != Some(t)
                {
                    // A finished stream's entry, or one replaced by an earlier deadline.
                    continue;
                }
                stream.filed = None;
                let id = stream.id;
                match stream.armed {
                    Some(armed) if armed <= clock.floor => {
                        self.fire(id, armed, clock);
                        self.run_work();
                    }
                    Some(armed) => {
                        // The deadline moved on since the entry was filed: follow it.
                        stream.filed = Some(armed);
                        self.wheel.insert(armed, key);
                    }
                    None => {}
                }
            }
            self.due = due;
        }
    }

    /// The stream is done: forget it and start the next turn of its chat.
    fn close(&mut self, id: StreamId) {
        let Some((slot, _)) = slot_of(id) else {
            return;
        };
        let Some(stream) = self.streams[slot as usize].take_if(|s| s.id == id) else {
            return;
        };
        self.live -= 1;
        self.completed += 1;
        self.shared.release(stream.mailbox.close(false));
        self.shared.end_turn(&stream.chat, Some(id));
        let Some(queue) = self.chats.get_mut(&stream.chat) else {
            return;
        };
        queue.retain(|s| *s != id);
        let Some(&next) = queue.front() else {
            self.chats.remove(&stream.chat);
            return;
        };
        if let Some(s) = self.stream_mut(next) {
            s.active = true;
            self.work.push_back(Work::Release(next));
        }
    }

    fn begin_shutdown(&mut self, wait: Duration, reply: Sender<ShutdownReport>) {
        self.shared.close();
        self.shutdown = Some((now_instant() + wait, reply));
        let mut ids: Vec<StreamId> = self.streams.iter().flatten().map(|s| s.id).collect();
        ids.sort();
        for id in ids {
            self.finish_for_shutdown(id);
        }
    }

    /// Ends stream `id`'s turn for the shutdown: every input accepted for it so far is pushed
    /// (or held, if the turn waits behind another of its chat) before the `Finish`, and from
    /// now on its mailbox takes acks only, so no input can arrive after the end it would be
    /// refused by. A waiting turn gets its `Finish` behind its held inputs and pushes them
    /// all, in order, once it is active.
    fn finish_for_shutdown(&mut self, id: StreamId) {
        self.take_mailbox(id, true);
        self.push_input(id, Input::Finish, 1);
        self.run_work();
    }

    /// The thread stops (after [`Shared::stop`]): closes the command queue and every
    /// mailbox, and reports. What waited there is in the report, not lost: a turn whose open
    /// was still queued never started (it is unfinished, its text unsent), and the text
    /// left in a live stream's mailbox is unsent. An input appended to a mailbox before it
    /// closed is taken or reported; one pushed after is refused to its caller.
    fn wind_up(&mut self) -> ShutdownReport {
        let mut left: Vec<Command> = std::mem::take(&mut self.commands).into();
        left.extend(self.shared.queue.close());
        while let Some(command) = self.shared.take_inbox() {
            left.push(command);
        }
        let mut report = self.report();
        for stream in self.streams.iter().flatten() {
            let mut text = String::new();
            self.shared
                .release(stream.mailbox.close_reporting(&mut text));
            if text.is_empty() {
                continue;
            }
            match report.unsent.iter_mut().find(|(id, _)| *id == stream.id) {
                Some((_, unsent)) => unsent.push_str(&text),
                None => report.unsent.push((stream.id, text)),
            }
        }
        for command in left {
            // Tokens of live mailboxes were handled above; a second shutdown (from inside a
            // callback) sees its reply channel closed.
            if let Command::Open { chat, mailbox, .. } = command {
                let mut text = String::new();
                self.shared.release(1 + mailbox.close_reporting(&mut text));
                report.unfinished.push((mailbox.id, chat));
                if !text.is_empty() {
                    report.unsent.push((mailbox.id, text));
                }
            }
        }
        report.unfinished.sort();
        report.unsent.sort();
        report
    }

    /// The thread stopped: every input pushed from now on is refused.
    fn stop_mailboxes(&self) {
        for stream in self.streams.iter().flatten() {
            stream.mailbox.close(true);
        }
    }

    fn report(&self) -> ShutdownReport {
        let mut unfinished: Vec<(StreamId, String)> = self
            .streams
            .iter()
            .flatten()
            .map(|s| (s.id, s.chat.clone()))
            .collect();
        unfinished.sort();
        let mut unsent: Vec<(StreamId, String)> = self
            .streams
            .iter()
            .flatten()
            .filter_map(|s| {
                let text = s.unsent_text();
                (!text.is_empty()).then_some((s.id, text))
            })
            .collect();
        unsent.sort();
        ShutdownReport {
            completed: self.completed,
            unfinished,
            unsent,
            pushes: self.pushes,
            merged_deltas: self.merged,
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
pub(super) fn now_instant() -> Instant {
    Instant::now()
}
