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
    /// The driver is shutting down and has taken the stream's inputs and ended its turn:
    /// only acks (for sends still in flight) are taken; any other input is refused, since
    /// it would come after the turn's end.
    Sealed,
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
            State::Sealed if is_ack(&input) => {}
            State::Sealed => return Pushed::Stopped,
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
        self.take_sealing(into, false)
    }

    /// Like [`Mailbox::take`], and from now on only acks are taken (see [`State::Sealed`]):
    /// under one lock, so every input pushed before is in `into` and every later one but an
    /// ack is refused to its caller.
    pub(super) fn take_and_seal(&self, into: &mut Pending) -> usize {
        self.take_sealing(into, true)
    }

    fn take_sealing(&self, into: &mut Pending, seal: bool) -> usize {
        debug_assert!(into.text.is_empty() && into.items.is_empty() && into.tail.deltas == 0);
        let mut p = lock(&self.pending);
        if seal && p.state == State::Open {
            p.state = State::Sealed;
        }
        std::mem::swap(&mut p.text, &mut into.text);
        std::mem::swap(&mut p.items, &mut into.items);
        into.tail = std::mem::take(&mut p.tail);
        p.queued = false;
        std::mem::take(&mut p.inputs)
    }

    /// The stream finished (`stopped`: the driver thread stopped): what is pending is
    /// dropped, and so is every later input (refused, if the driver thread stopped or a
    /// shutdown sealed the mailbox). Returns how many inputs were dropped.
    pub(super) fn close(&self, stopped: bool) -> usize {
        self.close_into(stopped, None)
    }

    /// [`Mailbox::close`] with the driver thread stopping: the text of what is pending (see
    /// [`model_text`]) is appended to `unsent`, in push order, for the shutdown report.
    pub(super) fn close_reporting(&self, unsent: &mut String) -> usize {
        self.close_into(true, Some(unsent))
    }

    fn close_into(&self, stopped: bool, unsent: Option<&mut String>) -> usize {
        let mut p = lock(&self.pending);
        if let Some(unsent) = unsent {
            p.model_text(unsent);
        }
        p.state = match p.state {
            _ if stopped => State::Stopped,
            State::Open => State::Finished,
            // Ended by a shutdown: a late input is still refused to its caller, not dropped
            // (it was never handled).
            State::Sealed => State::Stopped,
            state => state,
        };
        p.text = String::new();
        p.items = VecDeque::new();
        p.tail = Run::default();
        std::mem::take(&mut p.inputs)
    }
}

/// The model text `input` carries: a delta's or snapshot's text, a payload's text.
pub(super) fn model_text(input: &OwnedInput) -> &str {
    match input {
        OwnedInput::TextDelta(t) | OwnedInput::TextSnapshot(t) => t,
        OwnedInput::ToolResult(p) | OwnedInput::Media(p) | OwnedInput::FinalReply(p) => &p.text,
        _ => "",
    }
}

/// Whether `input` reports the outcome of a send.
fn is_ack(input: &Incoming<'_>) -> bool {
    matches!(
        input,
        Incoming::Input(OwnedInput::Delivered { .. } | OwnedInput::DeliveryFailed { .. })
    )
}

impl Pending {
    /// Empties the buffers, keeping their memory for the next swap.
    pub(super) fn clear(&mut self) {
        self.text.clear();
        self.items.clear();
        self.tail = Run::default();
    }

    /// Appends the model text of everything pending to `out`, in push order.
    fn model_text(&self, out: &mut String) {
        let mut at = 0;
        for item in &self.items {
            match item {
                Item::Text(run) => {
                    out.push_str(&self.text[at..at + run.len]);
                    at += run.len;
                }
                Item::Input(input) => out.push_str(model_text(input)),
            }
        }
        out.push_str(&self.text[at..]);
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
    fn a_sealed_mailbox_takes_acks_only_and_refuses_after_it_closes() {
        let mailbox = Mailbox::new(StreamId(1), true);
        mailbox.push(Incoming::Text("before"));
        let mut p = Pending::default();
        assert_eq!(mailbox.take_and_seal(&mut p), 1);
        assert_eq!(texts(&p), ["1 text \"before\""]);
        assert_eq!(mailbox.push(Incoming::Text("after")), Pushed::Stopped);
        let finish = Incoming::Input(OwnedInput::Finish);
        assert_eq!(mailbox.push(finish), Pushed::Stopped);
        let ack = OwnedInput::Delivered {
            send_id: crate::input::SendId(1),
            message_ref: None,
        };
        assert_eq!(mailbox.push(Incoming::Input(ack)), Pushed::Tell);
        assert_eq!(mailbox.close(false), 1);
        assert_eq!(mailbox.push(Incoming::Text("late")), Pushed::Stopped);
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
