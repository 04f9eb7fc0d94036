//! What the driver's handles and its thread share: the turn registry (which chats have turns
//! open, so `open` decides at once, without a round trip to the thread), the inbox of
//! commands issued on the driver thread itself (from inside sink callbacks, where waiting for
//! the thread would wait forever), and the thread's fate.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, OnceLock};
use std::thread::ThreadId;

use crossbeam_channel::{Sender, TrySendError};

use super::{BusyChat, Command, DriverError, DriverOptions, ShutdownReport, WhenFull};

/// How a command may wait for room in the command channel.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Room {
    /// As [`DriverOptions::when_full`] says (opens and inputs).
    AsConfigured,
    /// Always wait for room (acks and shutdown: an outcome is never refused).
    Wait,
}

pub(super) struct Shared {
    options: DriverOptions,
    registry: Mutex<Registry>,
    /// Signalled when a chat's turn ends (a waiting slot frees) and when the driver closes.
    room: Condvar,
    /// The driver thread, set before it runs any callback.
    worker: OnceLock<ThreadId>,
    /// Commands issued on the driver thread, run as soon as the current callback returns.
    inbox: Mutex<VecDeque<Command>>,
    next_id: AtomicU64,
    dead: AtomicBool,
    /// What the thread left when it panicked.
    death: Mutex<Option<ShutdownReport>>,
}

#[derive(Default)]
struct Registry {
    /// Open turns (the active one and those waiting) per chat.
    turns: HashMap<String, usize>,
    /// No more turns: the driver is shutting down or its thread died.
    closed: bool,
}

impl Shared {
    pub(super) fn new(options: DriverOptions) -> Shared {
        Shared {
            options,
            registry: Mutex::new(Registry::default()),
            room: Condvar::new(),
            worker: OnceLock::new(),
            inbox: Mutex::new(VecDeque::new()),
            next_id: AtomicU64::new(1),
            dead: AtomicBool::new(false),
            death: Mutex::new(None),
        }
    }

    /// Called by the driver thread first thing.
    pub(super) fn set_worker(&self, id: ThreadId) {
        let _ = self.worker.set(id);
    }

    /// Whether the caller is the driver thread (inside a sink callback).
    pub(super) fn on_worker_thread(&self) -> bool {
        self.worker
            .get()
            .is_some_and(|id| *id == std::thread::current().id())
    }

    pub(super) fn next_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// Hands `command` to the driver thread: through the inbox from the thread itself (never
    /// blocks), else through the bounded channel, waiting for room or refusing as `room` and
    /// the options say.
    pub(super) fn send(
        &self,
        commands: &Sender<Command>,
        command: Command,
        room: Room,
    ) -> Result<(), DriverError> {
        if self.dead.load(Ordering::Acquire) {
            return Err(self.gone());
        }
        if self.on_worker_thread() {
            lock(&self.inbox).push_back(command);
            return Ok(());
        }
        let refuse = room == Room::AsConfigured && self.options.when_full == WhenFull::Refuse;
        if refuse {
            return match commands.try_send(command) {
                Ok(()) => Ok(()),
                Err(TrySendError::Full(_)) => Err(DriverError::Full),
                Err(TrySendError::Disconnected(_)) => Err(self.gone()),
            };
        }
        commands.send(command).map_err(|_| self.gone())
    }

    /// The next command issued from inside a callback, if any.
    pub(super) fn take_inbox(&self) -> Option<Command> {
        lock(&self.inbox).pop_front()
    }

    /// Registers a new turn for `chat`, or says why it cannot be opened. With a full
    /// waiting-turn queue and [`WhenFull::Block`], waits for a turn of the chat to end
    /// (never on the driver thread, where that would wait forever).
    pub(super) fn begin_turn(&self, chat: &str) -> Result<(), DriverError> {
        let mut registry = lock(&self.registry);
        loop {
            if registry.closed {
                return Err(self.gone());
            }
            let open = registry.turns.get(chat).copied().unwrap_or(0);
            if open == 0 {
                registry.turns.insert(chat.to_owned(), 1);
                return Ok(());
            }
            if self.options.busy_chat == BusyChat::Reject {
                return Err(DriverError::ChatBusy);
            }
            if open - 1 < self.options.max_waiting_turns {
                *registry.turns.get_mut(chat).expect("counted") += 1;
                return Ok(());
            }
            if self.options.when_full == WhenFull::Refuse || self.on_worker_thread() {
                return Err(DriverError::Full);
            }
            registry = self
                .room
                .wait(registry)
                .unwrap_or_else(|poisoned| poisoned.into_inner());
        }
    }

    /// A turn of `chat` ended (or was never started).
    pub(super) fn end_turn(&self, chat: &str) {
        let mut registry = lock(&self.registry);
        if let Some(open) = registry.turns.get_mut(chat) {
            *open -= 1;
            if *open == 0 {
                registry.turns.remove(chat);
            }
        }
        drop(registry);
        self.room.notify_all();
    }

    /// Refuses new turns from now on.
    pub(super) fn close(&self) {
        lock(&self.registry).closed = true;
        self.room.notify_all();
    }

    /// The driver thread panicked: every later call reports it.
    pub(super) fn die(&self, report: ShutdownReport) {
        *lock(&self.death) = Some(report);
        self.dead.store(true, Ordering::Release);
        self.close();
    }

    /// Adds streams found after the panic (opens still queued) to the death report.
    pub(super) fn add_unfinished(&self, stream: (super::StreamId, String)) {
        if let Some(report) = lock(&self.death).as_mut() {
            report.unfinished.push(stream);
            report.unfinished.sort();
        }
    }

    /// What the thread left when it panicked, if it did.
    pub(super) fn death_report(&self) -> Option<ShutdownReport> {
        lock(&self.death).clone()
    }

    /// The error for a call the driver can no longer take.
    fn gone(&self) -> DriverError {
        match self.death_report().and_then(|r| r.failure) {
            Some(why) if self.dead.load(Ordering::Acquire) => DriverError::WorkerPanicked(why),
            _ => DriverError::Closed,
        }
    }
}

/// Locks `m`, ignoring poisoning: no code holding these locks calls user code or panics.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}
