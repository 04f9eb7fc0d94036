//! The driver thread's queue of commands: opens, `Ready` tokens (a stream's mailbox turned
//! non-empty), shutdown.
//!
//! A vector under a lock, which the thread takes whole: one lock per batch on its side,
//! one per command on the side of the callers, and a wake-up only when the thread sleeps.
//! (A general-purpose channel cost about 170 more instructions per delta on the driver
//! thread.) The queue needs no bound of its own: every command but a shutdown stands for
//! an open or input counted against [`super::DriverOptions::command_capacity`], or for a
//! mailbox, at most one per stream.
//!
//! Once closed (the thread stopped), a push is refused, as a send on a channel whose
//! receiver is gone.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};
use std::thread::Thread;
use std::time::Instant;

use super::Command;
use super::shared::lock;
use super::worker::now_instant;

pub(super) struct CommandQueue {
    state: Mutex<State>,
    /// The thread is asleep or about to be: a push must wake it.
    sleeping: AtomicBool,
    /// The thread that takes the commands, set before it first waits.
    receiver: OnceLock<Thread>,
}

#[derive(Default)]
struct State {
    commands: VecDeque<Command>,
    closed: bool,
}

impl CommandQueue {
    pub(super) fn new() -> CommandQueue {
        CommandQueue {
            state: Mutex::new(State::default()),
            sleeping: AtomicBool::new(false),
            receiver: OnceLock::new(),
        }
    }

    /// Called by the receiving thread before it first waits.
    pub(super) fn set_receiver(&self) {
        let _ = self.receiver.set(std::thread::current());
    }

    /// Appends `command`, waking the thread if it sleeps; gives it back if the queue is
    /// closed.
    pub(super) fn push(&self, command: Command) -> Result<(), Command> {
        {
            let mut state = lock(&self.state);
            if state.closed {
                return Err(command);
            }
            state.commands.push_back(command);
        }
        // After the push: a thread that announced its sleep before it is woken, one that
        // announces it after finds the command when it looks again.
        if self.sleeping.swap(false, Ordering::SeqCst)
            && let Some(thread) = self.receiver.get()
        {
            thread.unpark();
        }
        Ok(())
    }

    /// Moves every queued command into `into` (which must be empty), waiting for one until
    /// `deadline` (forever without one). Returns with `into` empty when the deadline passed.
    /// May return early and empty (a spurious wake-up); the caller looks again.
    pub(super) fn wait(&self, into: &mut VecDeque<Command>, deadline: Option<Instant>) {
        debug_assert!(into.is_empty());
        if self.take(into) {
            return;
        }
        self.sleeping.store(true, Ordering::SeqCst);
        // A push between the first look and the announcement did not wake anyone.
        if self.take(into) {
            self.sleeping.store(false, Ordering::SeqCst);
            return;
        }
        match deadline {
            Some(deadline) => {
                let now = now_instant();
                if deadline > now {
                    std::thread::park_timeout(deadline - now);
                }
            }
            None => std::thread::park(),
        }
        self.sleeping.store(false, Ordering::SeqCst);
        self.take(into);
    }

    /// Closes the queue and returns what was still in it.
    pub(super) fn close(&self) -> VecDeque<Command> {
        let mut state = lock(&self.state);
        state.closed = true;
        std::mem::take(&mut state.commands)
    }

    /// Swaps the queue's commands into `into`; whether there were any.
    fn take(&self, into: &mut VecDeque<Command>) -> bool {
        let mut state = lock(&self.state);
        if state.commands.is_empty() {
            return false;
        }
        std::mem::swap(&mut state.commands, into);
        true
    }
}
