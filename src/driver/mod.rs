//! The thread driver: runs many engines on one thread and executes their actions.
//!
//! The core is sans-IO; this module is the one place that reads the clock and blocks. One
//! driver thread serves many reply streams. Each stream has a mailbox where its inputs wait
//! in push order; the thread is told through its command queue when a mailbox turns
//! non-empty (and of opens and shutdown), and sleeps on that queue until the next deadline of
//! a timer wheel (1 ms slots). For each `Send` it calls the user's [`Sink`], which delivers
//! synchronously (returning the outcome) or asynchronously (returning [`Delivery::Pending`]
//! and reporting later through the [`AckHandle`] from any thread).
//!
//! ```
//! use replystream::driver::{Delivery, Driver, DriverOptions, Sink, AckHandle, StreamId};
//! use replystream::{Config, SendRequest};
//!
//! struct Stdout;
//! impl Sink for Stdout {
//!     fn deliver(&mut self, _stream: StreamId, send: &SendRequest, _acks: &AckHandle) -> Delivery {
//!         println!("{}", send.payload.text);
//!         Delivery::Delivered { message_ref: None }
//!     }
//! }
//!
//! let driver = Driver::spawn(Stdout, DriverOptions::default());
//! let stream = driver.open("chat-1", Config::default(), 7).unwrap();
//! stream.text("Hello from a thread.").unwrap();
//! stream.finish().unwrap();
//! let report = driver.shutdown(std::time::Duration::from_secs(5));
//! assert!(report.is_clean());
//! ```
//!
//! # Policies
//!
//! - **Busy chats.** One turn per chat is active at a time: a second turn opened for a busy
//!   chat waits until the first one is idle ([`BusyChat::Wait`], the default; its inputs wait
//!   too) or is refused ([`BusyChat::Reject`]).
//! - **Full queues.** At most [`DriverOptions::command_capacity`] opens and inputs (acks
//!   included) wait for the driver thread at once, over all streams, and a chat at most
//!   [`DriverOptions::max_waiting_turns`] waiting turns. When either is full, a call waits for
//!   room ([`WhenFull::Block`], the default: backpressure) or returns
//!   [`DriverError::Full`] at once ([`WhenFull::Refuse`]; nothing was taken, the caller keeps
//!   its input and may try again). Acks never get `Full`: they wait for room whatever the
//!   policy, as refusing one would make the engine think its send was lost.
//! - **Calls from inside a callback.** A [`Sink`] may call the driver from its callbacks:
//!   open the next turn when one goes idle, push input, ack. Such calls run on the driver
//!   thread, so they never wait: the command is queued and handled as soon as the callback
//!   returns. The only error they can add is `Full` when the chat's waiting-turn queue is
//!   full (waiting there would wait forever).
//! - **Panics.** Every sink callback runs under `catch_unwind`. A panic in
//!   [`Sink::deliver`] counts as a permanent delivery failure (the text comes back in the
//!   final) and is reported as [`StreamEvent::SinkPanicked`]; a panic in [`Sink::event`] is
//!   ignored. Both are counted in [`ShutdownReport::sink_panics`]. Should the driver thread
//!   itself die (a bug), every later call returns [`DriverError::WorkerPanicked`] and
//!   [`Driver::shutdown`] reports the failure and every stream that was open.
//! - **Time.** The engines' clock is milliseconds since the driver started. An input is
//!   handled at the real time rounded up to the next millisecond, so a deadline counted from
//!   it (a `retry_after`, an idle timer) is never shorter than asked; a deadline is acted on
//!   only once the real clock has reached it (an input that would make a deadline of the
//!   current millisecond due early waits for it, at most a millisecond).
//! - **Merged deltas.** When the thread comes to a stream, it takes every input waiting in
//!   its mailbox, and pushes consecutive text deltas into the engine as one delta. The
//!   text core gives the same blocks for any split of the same text as long as no timer
//!   fires in between, and none can fire between deltas taken together (a deadline that
//!   fell due before them fires first, as it would before the first of them). So the sends
//!   are the same; only the engine pushes are fewer, and the further the thread is behind,
//!   the more each push carries. [`ShutdownReport::merged_deltas`] counts them. A refused
//!   merged delta (text after the turn ended) is reported once per delta it stands for.
//!   Streams with a live preview are not merged: a preview shows the text received so far
//!   whenever it is created or edited, so it would show more text at once.
//! - **Shutdown.** [`Driver::shutdown`] ends every open turn after the inputs accepted for
//!   it (a turn waiting behind another of its chat included, in order, once that one is
//!   idle), and refuses later inputs but acks. What did not finish in time is reported:
//!   [`ShutdownReport::unfinished`] and, with the text the sink never got,
//!   [`ShutdownReport::unsent`]. An accepted input is delivered or reported, never dropped
//!   under a clean report.
//! - **Ids before events.** [`Driver::open`] returns the stream's id before any event names
//!   it: [`StreamEvent::Started`] is reported just before the stream's first input is
//!   handled, and inputs can only come through the handle `open` returned.

mod lateness;
mod mailbox;
mod queue;
mod shared;
mod trace;
mod wheel;
mod worker;

#[cfg(test)]
mod tests;

use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use crossbeam_channel::Sender;

use self::mailbox::{Incoming, Mailbox, Pushed};
use self::shared::{Room, Shared};
use crate::action::{AbortReason, SendRequest};
use crate::config::Config;
use crate::engine::{Engine, TurnOutcome};
use crate::error::Error;
use crate::input::{OwnedInput, SendId};

/// Identifies one reply stream (one turn) on a driver.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct StreamId(pub u64);

impl std::fmt::Display for StreamId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "stream {}", self.0)
    }
}

/// What a [`Sink`] did with a send.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Delivery {
    /// Delivered; `message_ref` is the platform's id for the message, if it has one.
    Delivered {
        /// The platform's id for the message.
        message_ref: Option<String>,
    },
    /// Failed. With `retry_after_ms` (a 429), the engine retries no earlier than that.
    Failed {
        /// Retry no earlier than this many milliseconds from now.
        retry_after_ms: Option<u64>,
        /// Retrying will not help.
        permanent: bool,
    },
    /// Delivery continues elsewhere; report it through the [`AckHandle`].
    Pending,
}

/// Something that happened to a stream, reported to [`Sink::event`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum StreamEvent {
    /// The stream is active and its first input is about to be handled. A turn that waited
    /// behind another turn of its chat starts only once that one is idle. Always reported
    /// after [`Driver::open`] returned the stream's id, and before any other event of it.
    Started,
    /// Streaming stopped (cancelled, or a delivery timed out).
    Aborted(AbortReason),
    /// The turn finished and every send was answered or given up on (see
    /// [`Action::Idle`](crate::Action::Idle)): how it went for the user (whether the final
    /// and every other message arrived, and what did not).
    Idle(TurnOutcome),
    /// The sink panicked while delivering this send; it counts as a permanent failure.
    SinkPanicked(SendId),
    /// An input for this stream was refused by the engine (e.g. text after `Finish`, or an
    /// ack for an unknown send).
    InputRefused(Error),
}

/// Delivers sends. Implemented by the user: a chat API client, a socket, stdout.
///
/// Called on the driver thread, one send at a time per stream. A slow synchronous sink
/// slows every stream on the driver; return [`Delivery::Pending`] and ack later to deliver
/// in parallel. A callback may call the driver (see "Calls from inside a callback" in the
/// module docs) and may panic (see "Panics").
pub trait Sink: std::marker::Send + 'static {
    /// Delivers `send` for `stream`: return the outcome, or `Pending` and report it later
    /// through `acks`.
    fn deliver(&mut self, stream: StreamId, send: &SendRequest, acks: &AckHandle) -> Delivery;

    /// Tells the sink the chat `stream` was opened for ([`Driver::open`]'s `chat`), once, just
    /// before [`StreamEvent::Started`] and so before any send of it: a sink that delivers to
    /// many chats keeps it until the stream's last event: [`StreamEvent::Idle`], or
    /// [`StreamEvent::Aborted`] with [`AbortReason::Cancelled`]
    /// (a cancelled turn has no `Idle`). The default ignores it.
    fn started(&mut self, stream: StreamId, chat: &str) {
        let _ = (stream, chat);
    }

    /// Reports a stream event. The default ignores it.
    fn event(&mut self, stream: StreamId, event: &StreamEvent) {
        let _ = (stream, event);
    }
}

/// What to do with a turn opened for a chat that already has an active turn.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum BusyChat {
    /// Queue it; it starts when the active turn is idle (its inputs wait too).
    #[default]
    Wait,
    /// Refuse it: [`Driver::open`] returns [`DriverError::ChatBusy`].
    Reject,
}

/// What a call does when the queue it would join is full.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum WhenFull {
    /// Wait for room (backpressure). Never on the driver thread itself.
    #[default]
    Block,
    /// Return [`DriverError::Full`] at once; nothing was taken.
    Refuse,
}

/// Driver settings. Start from `DriverOptions::default()` and change what you need.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct DriverOptions {
    /// A second turn for a busy chat waits or is refused.
    pub busy_chat: BusyChat,
    /// How many opens and inputs (acks included) may wait for the driver thread at once,
    /// over all streams (at least 1; default 1 048 576). A waiting text delta costs its
    /// text (plus an item of a few dozen bytes when it cannot be merged into the delta
    /// before it); other inputs an item each. The default is large so that a thread serving
    /// 100 000 streams can fall several deltas behind on each, which is what lets it merge
    /// them and catch up (see "Merged deltas").
    pub command_capacity: usize,
    /// How many turns may wait behind a chat's active turn (default 64).
    pub max_waiting_turns: usize,
    /// What a call does when the inputs waiting for the driver thread or a chat's waiting-turn
    /// queue are full.
    pub when_full: WhenFull,
}

impl Default for DriverOptions {
    fn default() -> Self {
        DriverOptions {
            busy_chat: BusyChat::Wait,
            command_capacity: 1 << 20,
            max_waiting_turns: 64,
            when_full: WhenFull::Block,
        }
    }
}

impl DriverOptions {
    /// With `busy_chat` set.
    #[must_use]
    pub fn with_busy_chat(mut self, busy_chat: BusyChat) -> Self {
        self.busy_chat = busy_chat;
        self
    }

    /// With `command_capacity` set (at least 1).
    #[must_use]
    pub fn with_command_capacity(mut self, capacity: usize) -> Self {
        self.command_capacity = capacity;
        self
    }

    /// With `max_waiting_turns` set.
    #[must_use]
    pub fn with_max_waiting_turns(mut self, turns: usize) -> Self {
        self.max_waiting_turns = turns;
        self
    }

    /// With `when_full` set.
    #[must_use]
    pub fn with_when_full(mut self, when_full: WhenFull) -> Self {
        self.when_full = when_full;
        self
    }
}

/// Why the driver refused a request.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum DriverError {
    /// The configuration is invalid.
    Config(Error),
    /// The chat already has an active turn and the policy is [`BusyChat::Reject`].
    ChatBusy,
    /// The inputs waiting for the driver thread or the chat's waiting-turn queue are full
    /// and the policy is [`WhenFull::Refuse`] (or the call came from inside a callback,
    /// which cannot wait for a waiting-turn slot). Nothing was taken; try again later.
    Full,
    /// The driver has shut down.
    Closed,
    /// The driver thread died (a panic outside the sink, i.e. a bug); the message says
    /// why. Its streams are lost; [`Driver::shutdown`] lists them.
    WorkerPanicked(String),
}

impl std::fmt::Display for DriverError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DriverError::Config(e) => write!(f, "{e}"),
            DriverError::ChatBusy => f.write_str("the chat already has an active turn"),
            DriverError::Full => f.write_str("the driver's queue is full; try again later"),
            DriverError::Closed => f.write_str("the driver has shut down"),
            DriverError::WorkerPanicked(why) => write!(f, "the driver thread died: {why}"),
        }
    }
}

impl std::error::Error for DriverError {}

/// What a shutdown left undone, and how punctual the timers were.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ShutdownReport {
    /// Streams that reached idle before the driver stopped (over its whole life).
    pub completed: u64,
    /// Streams not idle when the wait ran out (or when the driver thread died), with their
    /// chat id.
    pub unfinished: Vec<(StreamId, String)>,
    /// What the sink was never given, for each unfinished stream that has such text, in
    /// stream order: the text of the sends its engine had queued behind the one in flight
    /// (a blank line between two, as they are separate messages), then the text of the
    /// inputs that never reached its engine, back to back as the model wrote it (a turn
    /// still waiting behind another turn of its chat holds all of its inputs; the text of
    /// deltas, snapshots and payloads, in push order), after a blank line. Text in a send the sink was given but never acknowledged is
    /// not repeated here (the sink knows it). Empty after a clean stop.
    pub unsent: Vec<(StreamId, String)>,
    /// Inputs pushed into engines (acks and timer inputs included). Consecutive text
    /// deltas that were waiting together count once (see [`Self::merged_deltas`]).
    pub pushes: u64,
    /// Text deltas that were pushed together with the delta before them, because both were
    /// waiting for the driver thread when it came to their stream (the output is the same;
    /// see "Merged deltas" in the module docs). Zero while the thread keeps up.
    pub merged_deltas: u64,
    /// How late engine timers fired, over the driver's life.
    pub timer_lateness: Lateness,
    /// Sink callbacks that panicked (and were contained).
    pub sink_panics: u64,
    /// Why the driver did not stop cleanly, if it did not: its thread panicked, or
    /// `shutdown` was called from inside a sink callback (where it cannot wait).
    pub failure: Option<String>,
}

impl ShutdownReport {
    /// Every stream finished and the driver stopped normally.
    #[must_use]
    pub fn is_clean(&self) -> bool {
        self.unfinished.is_empty() && self.failure.is_none()
    }
}

/// A summary of how late timers fired after their deadline, in microseconds.
///
/// Kept as a fixed histogram (100 µs buckets up to 100 ms), so recording costs no
/// allocation and the memory is bounded however long the driver runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Lateness {
    /// Timers fired.
    pub count: u64,
    /// Median lateness (upper edge of its 100 µs bucket).
    pub p50_us: u64,
    /// 99th percentile lateness (upper edge of its bucket; 100 000+ means beyond 100 ms).
    pub p99_us: u64,
    /// The largest lateness seen.
    pub max_us: u64,
}

/// Commands from handles to the driver thread (through its [`queue`]). Inputs do not travel
/// here: they wait in their stream's [`Mailbox`], and the queue carries one `Ready` per
/// mailbox that turned non-empty.
enum Command {
    Open {
        chat: String,
        engine: Box<Engine>,
        mailbox: Arc<Mailbox>,
    },
    /// Stream `id`'s mailbox has inputs.
    Ready { id: StreamId },
    Shutdown {
        wait: Duration,
        reply: Sender<ShutdownReport>,
    },
    /// Makes the driver thread panic, to test what its death looks like.
    #[cfg(test)]
    Crash,
}

/// Runs engines on one thread. See the module docs.
pub struct Driver {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl Driver {
    /// Starts the driver thread with `sink`.
    pub fn spawn(sink: impl Sink, options: DriverOptions) -> Driver {
        let shared = Arc::new(Shared::new(options));
        let acks = AckHandle {
            shared: shared.clone(),
        };
        let thread_shared = shared.clone();
        let thread = std::thread::Builder::new()
            .name("replystream-driver".into())
            .spawn(move || worker::run(Box::new(sink), thread_shared, acks))
            .expect("spawn the driver thread");
        Driver {
            shared,
            thread: Some(thread),
        }
    }

    /// Opens a reply stream (one turn) for `chat` and returns its handle. The engine is
    /// built here, so an invalid config is reported at once; so are a busy chat under
    /// [`BusyChat::Reject`], a full queue under [`WhenFull::Refuse`], and a driver that shut
    /// down or died. Never waits for the driver thread, so a sink may call it from its
    /// callbacks (to open the next turn on `Idle`, say).
    pub fn open(&self, chat: &str, config: Config, seed: u64) -> Result<StreamHandle, DriverError> {
        let merge = mailbox::merges_deltas(&config);
        let engine = Engine::new(config, seed).map_err(DriverError::Config)?;
        let mailbox = self.shared.begin_turn(chat, merge)?;
        let id = mailbox.id;
        if let Err(e) = self.shared.reserve(Room::AsConfigured) {
            self.shared.end_turn(chat, Some(id));
            return Err(e);
        }
        let open = Command::Open {
            chat: chat.to_owned(),
            engine: Box::new(engine),
            mailbox: mailbox.clone(),
        };
        if let Err(e) = self.shared.send(open) {
            self.shared.release(1);
            self.shared.end_turn(chat, Some(id));
            return Err(e);
        }
        Ok(StreamHandle {
            mailbox,
            shared: self.shared.clone(),
        })
    }

    /// A handle for reporting asynchronous deliveries.
    pub fn acks(&self) -> AckHandle {
        AckHandle {
            shared: self.shared.clone(),
        }
    }

    /// Stops the driver: every open stream is finished, and the thread keeps delivering for
    /// at most `wait`; what is still undelivered then is reported. If the driver thread
    /// died, the report says why ([`ShutdownReport::failure`]) and lists every stream that
    /// was open.
    ///
    /// Finishing a stream pushes every input accepted for it before the shutdown reached
    /// it, then ends its turn; from then on its handle refuses every input but an ack with
    /// [`DriverError::Closed`] (it would come after the end), so an input is either refused
    /// to its caller or handled. A turn waiting behind another turn of its chat is finished
    /// the same way: its inputs are pushed, in order, once the turn ahead is idle. A stream
    /// not idle when `wait` runs out is listed in [`ShutdownReport::unfinished`], and the
    /// text the sink never got in [`ShutdownReport::unsent`]; the report is clean only if
    /// every stream went idle.
    pub fn shutdown(mut self, wait: Duration) -> ShutdownReport {
        self.stop(wait)
    }

    fn stop(&mut self, wait: Duration) -> ShutdownReport {
        self.shared.close();
        if self.shared.on_worker_thread() {
            // Inside a callback the thread cannot be waited for: it stops once the callback
            // returns and the wait has passed.
            let (reply, _) = crossbeam_channel::bounded(1);
            let _ = self.shared.send(Command::Shutdown { wait, reply });
            self.thread = None;
            return ShutdownReport {
                failure: Some(
                    "shutdown was called from inside a sink callback, so nothing was waited for"
                        .to_owned(),
                ),
                ..ShutdownReport::default()
            };
        }
        let (tx, rx) = crossbeam_channel::bounded(1);
        let shutdown = Command::Shutdown { wait, reply: tx };
        let report = match self.shared.send(shutdown) {
            Ok(()) => rx.recv().ok(),
            Err(_) => None,
        };
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        report
            .or_else(|| self.shared.death_report())
            .unwrap_or_else(|| ShutdownReport {
                failure: Some("the driver thread stopped without a report".to_owned()),
                ..ShutdownReport::default()
            })
    }

    /// Makes the driver thread panic (tests of what its death looks like).
    #[cfg(test)]
    fn crash(&self) {
        let _ = self.shared.send(Command::Crash);
    }
}

impl Drop for Driver {
    /// Dropping the driver stops its thread without waiting for deliveries.
    fn drop(&mut self) {
        if self.thread.is_some() {
            self.stop(Duration::ZERO);
        }
    }
}

/// Pushes inputs into one stream from any thread. Cheap to clone.
#[derive(Clone)]
pub struct StreamHandle {
    mailbox: Arc<Mailbox>,
    shared: Arc<Shared>,
}

impl StreamHandle {
    /// This stream's id.
    pub fn id(&self) -> StreamId {
        self.mailbox.id
    }

    /// Pushes `input` (timestamped by the driver when it is handled). Under
    /// [`WhenFull::Refuse`] a full queue returns [`DriverError::Full`] and the input was not
    /// taken. An input for a stream that already finished is dropped quietly. Once a
    /// shutdown has ended the stream's turn, every input but an ack returns
    /// [`DriverError::Closed`] (see [`Driver::shutdown`]).
    pub fn push(&self, input: OwnedInput) -> Result<(), DriverError> {
        match input {
            OwnedInput::TextDelta(text) => self.deliver(Incoming::Text(&text), Room::AsConfigured),
            input => self.deliver(Incoming::Input(input), Room::AsConfigured),
        }
    }

    /// Pushes a text delta (copied once, into the stream's mailbox).
    pub fn text(&self, delta: &str) -> Result<(), DriverError> {
        self.deliver(Incoming::Text(delta), Room::AsConfigured)
    }

    /// Ends the turn.
    pub fn finish(&self) -> Result<(), DriverError> {
        self.push(OwnedInput::Finish)
    }

    /// Cancels the turn.
    pub fn cancel(&self) -> Result<(), DriverError> {
        self.push(OwnedInput::Cancel)
    }

    fn deliver(&self, input: Incoming<'_>, room: Room) -> Result<(), DriverError> {
        put(&self.shared, &self.mailbox, input, room)
    }
}

/// Appends `input` to `mailbox` once there is room for it, and tells the driver thread if
/// the mailbox was empty.
fn put(
    shared: &Shared,
    mailbox: &Mailbox,
    input: Incoming<'_>,
    room: Room,
) -> Result<(), DriverError> {
    shared.reserve(room)?;
    match mailbox.push(input) {
        Pushed::Tell => match shared.send(Command::Ready { id: mailbox.id }) {
            Ok(()) => Ok(()),
            // The queue closed after the input was appended: the thread is stopping, and
            // closes every mailbox it has not taken, with the input in its report (or it
            // took the input already). Either way it was accepted. Not if the thread died.
            Err(e @ DriverError::WorkerPanicked(_)) => Err(e),
            Err(_) => Ok(()),
        },
        Pushed::Queued => Ok(()),
        Pushed::Dropped => {
            shared.release(1);
            Ok(())
        }
        Pushed::Stopped => {
            shared.release(1);
            Err(shared.gone())
        }
    }
}

/// Reports asynchronous delivery outcomes from any thread. Cheap to clone. An outcome is
/// never refused for a full queue: it waits for room (never on the driver thread).
#[derive(Clone)]
pub struct AckHandle {
    shared: Arc<Shared>,
}

impl AckHandle {
    /// Send `send_id` of `stream` was delivered.
    pub fn delivered(
        &self,
        stream: StreamId,
        send_id: SendId,
        message_ref: Option<String>,
    ) -> Result<(), DriverError> {
        self.ack(
            stream,
            OwnedInput::Delivered {
                send_id,
                message_ref,
            },
        )
    }

    /// Send `send_id` of `stream` failed.
    pub fn failed(
        &self,
        stream: StreamId,
        send_id: SendId,
        retry_after_ms: Option<u64>,
        permanent: bool,
    ) -> Result<(), DriverError> {
        self.ack(
            stream,
            OwnedInput::DeliveryFailed {
                send_id,
                retry_after_ms,
                permanent,
            },
        )
    }

    fn ack(&self, id: StreamId, input: OwnedInput) -> Result<(), DriverError> {
        match self.shared.mailbox_of(id) {
            Some(mailbox) => put(&self.shared, &mailbox, Incoming::Input(input), Room::Wait),
            // A stream that finished (a late ack is dropped quietly, as the engine would
            // drop it), or an id no stream had; a driver that stopped says so.
            None if self.shared.is_stopped() => Err(self.shared.gone()),
            None => Ok(()),
        }
    }
}
