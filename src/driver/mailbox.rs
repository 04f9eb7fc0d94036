//! One stream's inputs on their way to the driver thread, merged where that changes nothing.
//!
//! Every input for a stream, from any handle or thread, is appended to the stream's mailbox
//! under its lock, so the mailbox holds them in the order they were pushed. The driver thread
//! is told that a mailbox has something (one token in its command queue, sent only when
//! the mailbox turns non-empty) and takes everything it holds at once.
//!
//! Consecutive text deltas are stored as one run of text: the driver pushes the run into the
//! engine as one delta. The text core is split-invariant (the same blocks for any split of
//! the same text, as long as no timer fires in between), and no timer can fire between two
//! deltas handled in one push; a deadline that fell due before the push is fired first,
//! exactly as it would be before the first of the deltas (see the worker). So merging
//! changes no output, and it regulates itself: the further the driver thread is behind, the
//! more text each push carries, and the fewer pushes it needs.
//!
//! The buffers change hands instead of being freed: the driver thread swaps its empty ones
//! in as it takes a mailbox's contents, so a pushed delta is copied once, into memory that
//! is already allocated.

use std::collections::VecDeque;
use std::sync::Mutex;

use super::StreamId;
use super::shared::lock;
use crate::config::{Config, PreviewMode};
use crate::input::OwnedInput;

/// Whether a stream with `config` may have its waiting deltas merged. Not with a live
/// preview: a preview shows the text received so far each time it is created or edited, so
/// a merged push would show more text in it than the first of its deltas alone (the blocks
/// and finals are the same either way).
pub(super) fn merges_deltas(config: &Config) -> bool {
    config.preview == PreviewMode::Off
}

/// A stream's pending inputs.
pub(super) struct Mailbox {
    /// The stream this mailbox belongs to.
    pub(super) id: StreamId,
    /// Whether consecutive deltas are merged (see [`merges_deltas`]).
    merge: bool,
    pending: Mutex<Pending>,
}

/// What a mailbox holds, in push order.
#[derive(Default)]
pub(super) struct Pending {
    /// The text of the text runs, back to back.
    pub(super) text: String,
    /// The inputs before the last run of text: runs of text (their length in `text`) and
    /// other inputs.
    pub(super) items: VecDeque<Item>,
    /// The run of text after the last item (`deltas == 0`: none). Kept out of `items`, so
    /// that a stream fed only text never touches the items' buffer.
    pub(super) tail: Run,
    /// Inputs pushed since the driver thread last took them (a run counts each delta).
    pub(super) inputs: usize,
    /// The driver thread was told (a token is on its way, or the thread holds off).
    queued: bool,
    state: State,
}

/// Consecutive text deltas: `len` bytes of [`Pending::text`], from `deltas` pushes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Run {
    pub(super) len: usize,
    pub(super) deltas: usize,
}

/// One pending input.
pub(super) enum Item {
    /// A run of text.
    Text(Run),
    /// Any other input.
    Input(OwnedInput),
}

#[derive(Clone, Copy, Default, PartialEq, Eq)]
enum State {
    #[default]
    Open,
    /// The stream finished: later inputs are dropped quietly (as late acks are).
    Finished,
    /// The driver thread stopped: later inputs are refused.
    Stopped,
}

/// What became of an input handed to [`Mailbox::push`].
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Pushed {
    /// Appended; the driver thread must be told (the mailbox was empty).
    Tell,
    /// Appended to a mailbox the driver thread already knows about.
    Queued,
    /// The stream is finished: the input was dropped.
    Dropped,
    /// The driver thread stopped: the input was not taken.
    Stopped,
}

/// An input to append: a delta by reference (copied into the run), anything else owned.
pub(super) enum Incoming<'a> {
    Text(&'a str),
    Input(OwnedInput),
}

impl Mailbox {
    pub(super) fn new(id: StreamId, merge: bool) -> Mailbox {
        Mailbox {
            id,
            merge,
            pending: Mutex::new(Pending::default()),
        }
    }

    /// Appends `input`, merging a delta into the run before it.
    pub(super) fn push(&self, input: Incoming<'_>) -> Pushed {
        let mut p = lock(&self.pending);
        match p.state {
            State::Open => {}
            State::Finished => return Pushed::Dropped,
            State::Stopped => return Pushed::Stopped,
        }
        match input {
            Incoming::Text(text) => {
                p.text.push_str(text);
                if !self.merge {
                    p.end_run();
                }
                p.tail.len += text.len();
                p.tail.deltas += 1;
            }
            Incoming::Input(input) => {
                p.end_run();
                p.items.push_back(Item::Input(input));
            }
        }
        p.inputs += 1;
        if p.queued {
            Pushed::Queued
        } else {
            p.queued = true;
            Pushed::Tell
        }
    }

    /// Takes everything pending into `into` (whose buffers must be empty; they are swapped
    /// in), and returns how many inputs that was. The next push tells the driver thread again.
    pub(super) fn take(&self, into: &mut Pending) -> usize {
        debug_assert!(into.text.is_empty() && into.items.is_empty() && into.tail.deltas == 0);
        let mut p = lock(&self.pending);
        std::mem::swap(&mut p.text, &mut into.text);
        std::mem::swap(&mut p.items, &mut into.items);
        into.tail = std::mem::take(&mut p.tail);
        p.queued = false;
        std::mem::take(&mut p.inputs)
    }

    /// The stream finished (`stopped`: the driver thread stopped): what is pending is
    /// dropped, and so is every later input. Returns how many inputs were dropped.
    pub(super) fn close(&self, stopped: bool) -> usize {
        let mut p = lock(&self.pending);
        if p.state == State::Open || stopped {
            p.state = if stopped {
                State::Stopped
            } else {
                State::Finished
            };
        }
        p.text = String::new();
        p.items = VecDeque::new();
        p.tail = Run::default();
        std::mem::take(&mut p.inputs)
    }
}

impl Pending {
    /// Empties the buffers, keeping their memory for the next swap.
    pub(super) fn clear(&mut self) {
        self.text.clear();
        self.items.clear();
        self.tail = Run::default();
    }

    /// Files the run of text at the end (if any) as an item: an input comes after it.
    fn end_run(&mut self) {
        if self.tail.deltas > 0 {
            let run = std::mem::take(&mut self.tail);
            self.items.push_back(Item::Text(run));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(p: &Pending) -> Vec<String> {
        let mut at = 0;
        let mut run = |r: &Run| {
            at += r.len;
            format!("{} text {:?}", r.deltas, &p.text[at - r.len..at])
        };
        let mut out: Vec<String> = p
            .items
            .iter()
            .map(|item| match item {
                Item::Text(r) => run(r),
                Item::Input(input) => format!("{input:?}"),
            })
            .collect();
        if p.tail.deltas > 0 {
            out.push(run(&p.tail));
        }
        out
    }

    #[test]
    fn consecutive_deltas_merge_and_other_inputs_keep_their_place() {
        let mailbox = Mailbox::new(StreamId(1), true);
        assert_eq!(mailbox.push(Incoming::Text("Hello, ")), Pushed::Tell);
        assert_eq!(mailbox.push(Incoming::Text("world.")), Pushed::Queued);
        let tool = OwnedInput::ToolStart { name: "x".into() };
        assert_eq!(mailbox.push(Incoming::Input(tool)), Pushed::Queued);
        assert_eq!(mailbox.push(Incoming::Text(" After.")), Pushed::Queued);
        assert_eq!(
            mailbox.push(Incoming::Input(OwnedInput::Finish)),
            Pushed::Queued
        );
        let mut p = Pending::default();
        assert_eq!(mailbox.take(&mut p), 5);
        assert_eq!(
            texts(&p),
            [
                "2 text \"Hello, world.\"",
                "ToolStart { name: \"x\" }",
                "1 text \" After.\"",
                "Finish"
            ]
        );
        p.clear();
        // Taken: the next push tells the driver thread again.
        assert_eq!(mailbox.push(Incoming::Text("Again")), Pushed::Tell);
        assert_eq!(mailbox.take(&mut p), 1);
        assert_eq!(texts(&p), ["1 text \"Again\""]);
    }

    #[test]
    fn without_merging_every_delta_keeps_its_own_item() {
        let mailbox = Mailbox::new(StreamId(1), false);
        mailbox.push(Incoming::Text("Hello, "));
        mailbox.push(Incoming::Text("world."));
        let mut p = Pending::default();
        assert_eq!(mailbox.take(&mut p), 2);
        assert_eq!(texts(&p), ["1 text \"Hello, \"", "1 text \"world.\""]);
    }

    #[test]
    fn a_closed_mailbox_drops_or_refuses() {
        let mailbox = Mailbox::new(StreamId(1), true);
        mailbox.push(Incoming::Text("pending"));
        assert_eq!(mailbox.close(false), 1);
        assert_eq!(mailbox.push(Incoming::Text("late")), Pushed::Dropped);
        assert_eq!(mailbox.close(true), 0);
        assert_eq!(mailbox.push(Incoming::Text("later")), Pushed::Stopped);
    }
}
