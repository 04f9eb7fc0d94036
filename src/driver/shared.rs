//! What the driver's handles and its thread share: the turn registry (which chats have turns
//! open, so `open` decides at once, without a round trip to the thread), the stream slots
//! (so an id finds its stream's mailbox and slot without a map), the count of inputs waiting
//! for the thread (the bounded queue), the inbox of commands issued on the driver thread
//! itself (from inside sink callbacks, where waiting for the thread would wait forever), and
//! the thread's fate.

use std::cell::Cell;
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use super::mailbox::Mailbox;
use super::queue::CommandQueue;
use super::{BusyChat, Command, DriverError, DriverOptions, ShutdownReport, StreamId, WhenFull};

/// How an input may wait for room among the inputs waiting for the driver thread.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Room {
    /// As [`DriverOptions::when_full`] says (opens and inputs).
    AsConfigured,
    /// Always wait for room (acks: an outcome is never refused).
    Wait,
}

/// How often a caller waiting for room looks again without being woken.
const RECHECK_ROOM: std::time::Duration = std::time::Duration::from_millis(1);

thread_local! {
    /// The driver whose thread this is (the address of its `Shared`), or 0.
    static DRIVER_OF_THIS_THREAD: Cell<usize> = const { Cell::new(0) };
}

pub(super) struct Shared {
    options: DriverOptions,
    registry: Mutex<Registry>,
    /// Signalled when a chat's turn ends (a waiting slot frees) and when the driver closes.
    room: Condvar,
    /// Opens and inputs handed to the driver thread and not yet taken by it.
    /// (Written by every push and every take, so on a cache line of its own.)
    waiting: Padded<AtomicUsize>,
    /// Callers waiting for `waiting` to drop below the capacity.
    blocked: Padded<AtomicUsize>,
    /// Guards the wait for room among the waiting inputs (the count itself is atomic).
    space: Mutex<()>,
    space_freed: Condvar,
    /// Commands issued on the driver thread, run as soon as the current callback returns.
    /// Opens, mailboxes that turned non-empty, and shutdown, for the driver thread.
    pub(super) queue: Padded<CommandQueue>,
    /// (Locked by the driver thread on every turn of its loop, so on a cache line of its
    /// own, away from what pushes read.)
    inbox: Padded<Mutex<VecDeque<Command>>>,
    /// The driver thread stopped (cleanly or not): no input is taken any more.
    stopped: AtomicBool,
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
    /// Stream slots: the generation each slot is at, and the mailbox of the stream in it.
    slots: Vec<SlotEntry>,
    /// Slots free for the next stream (the most recently freed first).
    free: Vec<u32>,
}

#[derive(Default)]
struct SlotEntry {
    generation: u32,
    mailbox: Option<Arc<Mailbox>>,
}

/// A stream id is its slot (plus one, so that no id is 0) in the low 32 bits and the slot's
/// generation in the high 32: a slot is reused once its stream is done, with the next
/// generation, so ids stay unique (until one slot has been reused 2^32 times) and an id of
/// a finished stream never reaches the stream that reuses its slot.
pub(super) fn stream_id(slot: u32, generation: u32) -> StreamId {
    StreamId((u64::from(generation) << 32) | (u64::from(slot) + 1))
}

/// The slot and generation of `id`, if it can name a stream at all.
pub(super) fn slot_of(id: StreamId) -> Option<(u32, u32)> {
    let low = (id.0 & 0xFFFF_FFFF) as u32;
    Some((low.checked_sub(1)?, (id.0 >> 32) as u32))
}

impl Shared {
    pub(super) fn new(options: DriverOptions) -> Shared {
        Shared {
            options,
            registry: Mutex::new(Registry::default()),
            room: Condvar::new(),
            waiting: Padded(AtomicUsize::new(0)),
            blocked: Padded(AtomicUsize::new(0)),
            space: Mutex::new(()),
            space_freed: Condvar::new(),
            queue: Padded(CommandQueue::new()),
            inbox: Padded(Mutex::new(VecDeque::new())),
            stopped: AtomicBool::new(false),
            dead: AtomicBool::new(false),
            death: Mutex::new(None),
        }
    }

    /// Called by the driver thread first thing.
    pub(super) fn set_worker(&self) {
        self.queue.set_receiver();
        DRIVER_OF_THIS_THREAD.set(self as *const Shared as usize);
    }

    /// Whether the caller is the driver thread (inside a sink callback).
    pub(super) fn on_worker_thread(&self) -> bool {
        DRIVER_OF_THIS_THREAD.get() == self as *const Shared as usize
    }

    /// Takes room for one open or input among those waiting for the driver thread: waits
    /// for it or refuses as `room` and the options say. On the driver thread it never waits
    /// (the count may then pass the capacity for a moment).
    pub(super) fn reserve(&self, room: Room) -> Result<(), DriverError> {
        if self.stopped.load(Ordering::Acquire) {
            return Err(self.gone());
        }
        if self.try_reserve() {
            return Ok(());
        }
        if self.on_worker_thread() {
            self.waiting.fetch_add(1, Ordering::SeqCst);
            return Ok(());
        }
        if room == Room::AsConfigured && self.options.when_full == WhenFull::Refuse {
            return Err(DriverError::Full);
        }
        let mut guard = lock(&self.space);
        self.blocked.fetch_add(1, Ordering::SeqCst);
        let result = loop {
            if self.stopped.load(Ordering::Acquire) {
                break Err(self.gone());
            }
            if self.try_reserve() {
                break Ok(());
            }
            // Woken once the driver thread has freed a good share of the room (see
            // `release`), and every millisecond in any case: one free place is enough,
            // and the thread may be busy in a callback that waits for this very call.
            guard = self
                .space_freed
                .wait_timeout(guard, RECHECK_ROOM)
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .0;
        };
        self.blocked.fetch_sub(1, Ordering::SeqCst);
        result
    }

    fn low_water(&self) -> usize {
        let capacity = self.options.command_capacity.max(1);
        capacity - (capacity / 16).max(1)
    }

    fn try_reserve(&self) -> bool {
        let capacity = self.options.command_capacity.max(1);
        let mut n = self.waiting.load(Ordering::SeqCst);
        loop {
            if n >= capacity {
                return false;
            }
            match self
                .waiting
                .compare_exchange_weak(n, n + 1, Ordering::SeqCst, Ordering::SeqCst)
            {
                Ok(_) => return true,
                Err(now) => n = now,
            }
        }
    }

    /// `n` opens or inputs were taken by the driver thread (or never handed over).
    /// Callers waiting for room are woken once the waiting inputs are down to the low
    /// water mark (a sixteenth of the capacity free), not for each input taken: a wake-up is
    /// a system call, and the driver thread would pay one per input while a producer is
    /// ahead of it.
    pub(super) fn release(&self, n: usize) {
        if n == 0 {
            return;
        }
        let after = self.waiting.fetch_sub(n, Ordering::SeqCst) - n;
        if after <= self.low_water() && self.blocked.load(Ordering::SeqCst) > 0 {
            let _guard = lock(&self.space);
            self.space_freed.notify_all();
        }
    }

    /// Hands `command` to the driver thread: through the inbox from the thread itself (run
    /// as soon as the current callback returns), else through the command queue. Room was
    /// taken beforehand (the queue itself never blocks).
    pub(super) fn send(&self, command: Command) -> Result<(), DriverError> {
        if self.on_worker_thread() {
            lock(&self.inbox).push_back(command);
            return Ok(());
        }
        self.queue.push(command).map_err(|_| self.gone())
    }

    /// The next command issued from inside a callback, if any.
    pub(super) fn take_inbox(&self) -> Option<Command> {
        lock(&self.inbox).pop_front()
    }

    /// Registers a new turn for `chat` and gives it a slot, or says why it cannot be
    /// opened. With a full waiting-turn queue and [`WhenFull::Block`], waits for a turn of
    /// the chat to end (never on the driver thread, where that would wait forever).
    pub(super) fn begin_turn(&self, chat: &str, merge: bool) -> Result<Arc<Mailbox>, DriverError> {
        let mut registry = lock(&self.registry);
        loop {
            if registry.closed {
                return Err(self.gone());
            }
            let open = registry.turns.get(chat).copied().unwrap_or(0);
            if open == 0 {
                registry.turns.insert(chat.to_owned(), 1);
                break;
            }
            if self.options.busy_chat == BusyChat::Reject {
                return Err(DriverError::ChatBusy);
            }
            if open - 1 < self.options.max_waiting_turns {
                *registry.turns.get_mut(chat).expect("counted") += 1;
                break;
            }
            if self.options.when_full == WhenFull::Refuse || self.on_worker_thread() {
                return Err(DriverError::Full);
            }
            registry = self
                .room
                .wait(registry)
                .unwrap_or_else(|poisoned| poisoned.into_inner());
        }
        let slot = match registry.free.pop() {
            Some(slot) => slot,
            None => {
                let Ok(slot) = u32::try_from(registry.slots.len()) else {
                    // 2^32 - 1 streams open at once: no id is left (memory ran out long
                    // before).
                    drop(registry);
                    self.end_turn(chat, None);
                    return Err(DriverError::Full);
                };
                registry.slots.push(SlotEntry::default());
                slot
            }
        };
        let entry = &mut registry.slots[slot as usize];
        let mailbox = Arc::new(Mailbox::new(stream_id(slot, entry.generation), merge));
        entry.mailbox = Some(mailbox.clone());
        Ok(mailbox)
    }

    /// A turn of `chat` ended, or was never started; frees the slot of stream `id`, if it
    /// had one, for the next stream (with the next generation).
    pub(super) fn end_turn(&self, chat: &str, id: Option<StreamId>) {
        let mut registry = lock(&self.registry);
        if let Some(open) = registry.turns.get_mut(chat) {
            *open -= 1;
            if *open == 0 {
                registry.turns.remove(chat);
            }
        }
        if let Some((slot, generation)) = id.and_then(slot_of)
            && let Some(entry) = registry.slots.get_mut(slot as usize)
            && entry.generation == generation
        {
            entry.generation = entry.generation.wrapping_add(1);
            entry.mailbox = None;
            registry.free.push(slot);
        }
        drop(registry);
        self.room.notify_all();
    }

    /// The mailbox of stream `id`, if the stream is open.
    pub(super) fn mailbox_of(&self, id: StreamId) -> Option<Arc<Mailbox>> {
        let (slot, generation) = slot_of(id)?;
        let registry = lock(&self.registry);
        let entry = registry.slots.get(slot as usize)?;
        if entry.generation != generation {
            return None;
        }
        entry.mailbox.clone()
    }

    /// Refuses new turns from now on.
    pub(super) fn close(&self) {
        lock(&self.registry).closed = true;
        self.room.notify_all();
    }

    /// Whether the driver thread stopped taking inputs.
    pub(super) fn is_stopped(&self) -> bool {
        self.stopped.load(Ordering::Acquire)
    }

    /// The driver thread stopped: no input is taken any more, and callers waiting for room
    /// are told so.
    pub(super) fn stop(&self) {
        self.close();
        self.stopped.store(true, Ordering::Release);
        let _guard = lock(&self.space);
        self.space_freed.notify_all();
    }

    /// The driver thread panicked: every later call reports it.
    pub(super) fn die(&self, report: ShutdownReport) {
        *lock(&self.death) = Some(report);
        self.dead.store(true, Ordering::Release);
        self.stop();
    }

    /// Adds streams found after the panic (opens still queued) to the death report.
    pub(super) fn add_unfinished(&self, stream: (StreamId, String)) {
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
    pub(super) fn gone(&self) -> DriverError {
        match self.death_report().and_then(|r| r.failure) {
            Some(why) if self.dead.load(Ordering::Acquire) => DriverError::WorkerPanicked(why),
            _ => DriverError::Closed,
        }
    }
}

/// `T` alone on its cache lines (128 bytes: the pair of lines adjacent-line prefetchers move
/// together), so that writes to it do not evict what other threads read next to it.
#[repr(align(128))]
pub(super) struct Padded<T>(T);

impl<T> std::ops::Deref for Padded<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.0
    }
}

/// Locks `m`, ignoring poisoning: no driver code holding a lock calls user code or panics.
pub(super) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}
