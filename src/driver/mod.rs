//! The thread driver: runs many engines on one thread and executes their actions.
//!
//! The core is sans-IO; this module is the one place that reads the clock and blocks. One
//! driver thread serves many reply streams: commands arrive over a crossbeam channel, and
//! the thread sleeps in `select!` on that channel and on `crossbeam_channel::at(next
//! deadline)` from a single deadline heap. For each `Send` it calls the user's [`Sink`],
//! which delivers synchronously (returning the outcome) or asynchronously (returning
//! [`Delivery::Pending`] and reporting later through the [`AckHandle`] from any thread).
//!
//! One turn per chat is active at a time: a second turn opened for a busy chat waits until the
//! first one is idle ([`BusyChat::Wait`], the default) or is refused ([`BusyChat::Reject`]).
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
//! stream.text("Hello from a thread.");
//! stream.finish();
//! let report = driver.shutdown(std::time::Duration::from_secs(5));
//! assert!(report.unfinished.is_empty());
//! ```

mod trace;
mod worker;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use crossbeam_channel::{Receiver, Sender};

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
    /// The stream became active (a waiting turn for a busy chat starts now).
    Started,
    /// Streaming stopped (cancelled, or a delivery timed out).
    Aborted(AbortReason),
    /// The turn finished and every send was answered: how it went for the user (whether
    /// the final and every other message arrived, and what did not).
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
/// in parallel.
pub trait Sink: std::marker::Send + 'static {
    /// Delivers `send` for `stream`: return the outcome, or `Pending` and report it later
    /// through `acks`.
    fn deliver(&mut self, stream: StreamId, send: &SendRequest, acks: &AckHandle) -> Delivery;

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

/// Driver settings.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DriverOptions {
    /// A second turn for a busy chat waits or is refused.
    pub busy_chat: BusyChat,
}

/// Why the driver refused a request.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum DriverError {
    /// The configuration is invalid.
    Config(Error),
    /// The chat already has an active turn and the policy is [`BusyChat::Reject`].
    ChatBusy,
    /// The driver has shut down.
    Closed,
}

impl std::fmt::Display for DriverError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DriverError::Config(e) => write!(f, "{e}"),
            DriverError::ChatBusy => f.write_str("the chat already has an active turn"),
            DriverError::Closed => f.write_str("the driver has shut down"),
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
    /// Streams not idle when the wait ran out, with their chat id.
    pub unfinished: Vec<(StreamId, String)>,
    /// Inputs pushed into engines (acks and timer inputs included).
    pub pushes: u64,
    /// How late engine timers fired, over the driver's life.
    pub timer_lateness: Lateness,
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

/// Commands from handles to the driver thread.
enum Command {
    Open {
        id: StreamId,
        chat: String,
        engine: Box<Engine>,
        reply: Sender<Result<(), DriverError>>,
    },
    Input {
        id: StreamId,
        input: OwnedInput,
    },
    Shutdown {
        wait: Duration,
        reply: Sender<ShutdownReport>,
    },
}

/// Runs engines on one thread. See the module docs.
pub struct Driver {
    commands: Sender<Command>,
    next_id: Arc<AtomicU64>,
    thread: Option<JoinHandle<()>>,
}

impl Driver {
    /// Starts the driver thread with `sink`.
    pub fn spawn(sink: impl Sink, options: DriverOptions) -> Driver {
        let (tx, rx): (Sender<Command>, Receiver<Command>) = crossbeam_channel::unbounded();
        let acks = AckHandle {
            commands: tx.clone(),
        };
        let thread = std::thread::Builder::new()
            .name("replystream-driver".into())
            .spawn(move || worker::Worker::new(Box::new(sink), options, acks).run(rx))
            .expect("spawn the driver thread");
        Driver {
            commands: tx,
            next_id: Arc::new(AtomicU64::new(1)),
            thread: Some(thread),
        }
    }

    /// Opens a reply stream (one turn) for `chat`. The engine is built here, so an invalid
    /// config is reported at once.
    pub fn open(&self, chat: &str, config: Config, seed: u64) -> Result<StreamHandle, DriverError> {
        let engine = Engine::new(config, seed).map_err(DriverError::Config)?;
        let id = StreamId(self.next_id.fetch_add(1, Ordering::Relaxed));
        let (reply_tx, reply_rx) = crossbeam_channel::bounded(1);
        self.commands
            .send(Command::Open {
                id,
                chat: chat.to_owned(),
                engine: Box::new(engine),
                reply: reply_tx,
            })
            .map_err(|_| DriverError::Closed)?;
        reply_rx.recv().map_err(|_| DriverError::Closed)??;
        Ok(StreamHandle {
            id,
            commands: self.commands.clone(),
        })
    }

    /// A handle for reporting asynchronous deliveries.
    pub fn acks(&self) -> AckHandle {
        AckHandle {
            commands: self.commands.clone(),
        }
    }

    /// Stops the driver: every open stream is finished, and the thread keeps delivering for
    /// at most `wait`; what is still undelivered then is reported.
    pub fn shutdown(mut self, wait: Duration) -> ShutdownReport {
        self.stop(wait)
    }

    fn stop(&mut self, wait: Duration) -> ShutdownReport {
        let (tx, rx) = crossbeam_channel::bounded(1);
        let report = if self
            .commands
            .send(Command::Shutdown { wait, reply: tx })
            .is_ok()
        {
            rx.recv().unwrap_or_default()
        } else {
            ShutdownReport::default()
        };
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        report
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
    id: StreamId,
    commands: Sender<Command>,
}

impl StreamHandle {
    /// This stream's id.
    pub fn id(&self) -> StreamId {
        self.id
    }

    /// Pushes `input` (timestamped by the driver when it is handled).
    pub fn push(&self, input: OwnedInput) -> Result<(), DriverError> {
        self.commands
            .send(Command::Input { id: self.id, input })
            .map_err(|_| DriverError::Closed)
    }

    /// Pushes a text delta.
    pub fn text(&self, delta: &str) -> Result<(), DriverError> {
        self.push(OwnedInput::TextDelta(delta.to_owned()))
    }

    /// Ends the turn.
    pub fn finish(&self) -> Result<(), DriverError> {
        self.push(OwnedInput::Finish)
    }

    /// Cancels the turn.
    pub fn cancel(&self) -> Result<(), DriverError> {
        self.push(OwnedInput::Cancel)
    }
}

/// Reports asynchronous delivery outcomes from any thread. Cheap to clone.
#[derive(Clone)]
pub struct AckHandle {
    commands: Sender<Command>,
}

impl AckHandle {
    /// Send `send_id` of `stream` was delivered.
    pub fn delivered(
        &self,
        stream: StreamId,
        send_id: SendId,
        message_ref: Option<String>,
    ) -> Result<(), DriverError> {
        self.commands
            .send(Command::Input {
                id: stream,
                input: OwnedInput::Delivered {
                    send_id,
                    message_ref,
                },
            })
            .map_err(|_| DriverError::Closed)
    }

    /// Send `send_id` of `stream` failed.
    pub fn failed(
        &self,
        stream: StreamId,
        send_id: SendId,
        retry_after_ms: Option<u64>,
        permanent: bool,
    ) -> Result<(), DriverError> {
        self.commands
            .send(Command::Input {
                id: stream,
                input: OwnedInput::DeliveryFailed {
                    send_id,
                    retry_after_ms,
                    permanent,
                },
            })
            .map_err(|_| DriverError::Closed)
    }
}
