//! The dispatcher: one ordered queue for all sends, at most one in flight (SPEC §7).
//!
//! Sends leave in the order they were produced. The next one leaves only after the host
//! acknowledged the previous one, so a chat never shows messages out of order. Between block
//! sends the dispatcher may wait a human-like delay; every send has a delivery timeout; a
//! rate-limited send is retried no earlier than the host said.
//!
//! The dispatcher is pure: it reads no clock and owns no timer. It reports the one deadline
//! it is waiting for ([`Dispatcher::deadline`]) and is called again at or after it.
//!
//! Keyed messages (live previews, SPEC §10): the dispatcher remembers, per [`MessageKey`],
//! whether the keyed `Create` (or first `Draft`) was delivered and the `message_ref` the host
//! gave with it, and puts that ref on every later send for the key, so a host needs no map
//! of its own. An `Edit` of a key whose message was never confirmed created (its create
//! failed or timed out) leaves as a plain `Create`, and a `Delete` of such a key is skipped.
//! A failed preview update (kind `Preview`, any op but `Delete`) is not retried: the preview
//! sends its latest text instead; a `retry_after` still holds every send until then.

use std::collections::VecDeque;

use smallvec::SmallVec;

use super::ledger::SourceSpan;
use crate::action::{AbortReason, Action, MessageKey, SendKind, SendOp, SendRequest};
use crate::config::HumanDelay;
use crate::error::Error;
use crate::input::SendId;
use crate::payload::Payload;
use crate::render::Measured;
use crate::render::send::SendRenderer;
use crate::time::Time;

/// How long to wait before retrying a failure that gave no `retry_after`.
pub(crate) const DEFAULT_RETRY_BACKOFF_MS: u64 = 1000;

/// How many times one send is retried before it counts as a permanent failure.
pub(crate) const MAX_RETRIES: u32 = 3;

/// A send waiting in the queue, with the model text it carries (for the ledger).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Outgoing {
    /// Tool, block or final.
    pub kind: SendKind,
    /// Create, edit or delete.
    pub op: SendOp,
    /// What to deliver.
    pub payload: Payload,
    /// Which ranges of which assistant message's text this send shows.
    pub spans: SmallVec<[SourceSpan; 2]>,
}

/// The send currently with the host.
#[derive(Debug)]
struct InFlight {
    id: SendId,
    item: Outgoing,
    timeout_at: Option<Time>,
    attempts: u32,
}

/// Why the queue is held.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Hold {
    /// A human-like pause before the block at the front.
    HumanDelay,
    /// A retry of the send at the front, not before the host's `retry_after`.
    Retry,
}

/// Counters the engine reports in its stats.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct DispatchStats {
    /// Sends handed to the host (retries included).
    pub sends: u64,
    /// Sends confirmed delivered (late acks included).
    pub delivered: u64,
    /// `DeliveryFailed` acks received.
    pub failures: u64,
    /// Sends retried after a failure.
    pub retries: u64,
    /// Sends that failed for good (permanent, or out of retries).
    pub dropped: u64,
    /// Sends whose delivery timed out.
    pub timeouts: u64,
    /// Block sends skipped after an abort (their text goes to the final).
    pub skipped_blocks: u64,
}

/// What became of a send the host acknowledged.
#[derive(Debug)]
pub(crate) enum AckOutcome {
    /// Delivered: the ledger records its spans.
    Delivered(Outgoing),
    /// Delivered after its timeout fired: recorded, streaming is not restarted.
    LateDelivered(Outgoing),
    /// Failed and queued again for a retry: its kind and the model text it carries.
    WillRetry(SendKind, SmallVec<[SourceSpan; 2]>),
    /// Failed for good (or, for a preview update, not retried); the queue moved on. Its text
    /// was not delivered.
    Dropped(SendId, Outgoing),
}

/// What the dispatcher knows about one keyed message.
#[derive(Debug)]
struct KeyedMessage {
    key: MessageKey,
    /// Its create (or first draft) was delivered.
    created: bool,
    /// An edit of it left as a new message because it was not created (yet).
    superseded: bool,
    /// The platform's id, from the create's ack.
    message_ref: Option<String>,
}

/// A queued send: the send, its id and attempt count if it is a retry, and its text as
/// rendered when it was measured (posted as it is, not rendered again).
type Queued = (Outgoing, Option<(SendId, u32)>, Option<Box<Measured>>);

/// The dispatcher's queue, counting its sends per kind, so "is a block still queued?" is
/// answered without a walk: the engine asks it after every input, and at the end of a long
/// turn the queue holds one final per undelivered block (a walk per ack was quadratic).
///
/// `repr(C)`: the items (whose length says whether the queue is empty) come first, next to
/// the dispatcher's other per-input fields.
#[derive(Debug, Default)]
#[repr(C)]
struct SendQueue {
    items: VecDeque<Queued>,
    /// Queued sends per kind, indexed by [`kind_index`].
    per_kind: [usize; 4],
}

fn kind_index(kind: SendKind) -> usize {
    match kind {
        SendKind::Tool => 0,
        SendKind::Block => 1,
        SendKind::Final => 2,
        SendKind::Preview => 3,
    }
}

impl SendQueue {
    fn push_back(&mut self, queued: Queued) {
        self.per_kind[kind_index(queued.0.kind)] += 1;
        self.items.push_back(queued);
    }

    fn push_front(&mut self, queued: Queued) {
        self.per_kind[kind_index(queued.0.kind)] += 1;
        self.items.push_front(queued);
    }

    fn pop_front(&mut self) -> Option<Queued> {
        let queued = self.items.pop_front()?;
        self.per_kind[kind_index(queued.0.kind)] -= 1;
        Some(queued)
    }

    fn front(&self) -> Option<&Queued> {
        self.items.front()
    }

    fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    fn has(&self, kind: SendKind) -> bool {
        self.per_kind[kind_index(kind)] > 0
    }

    fn iter(&self) -> impl Iterator<Item = &Queued> {
        self.items.iter()
    }

    /// Keeps the sends `keep` says yes to, in order.
    fn retain(&mut self, mut keep: impl FnMut(&Outgoing) -> bool) {
        let per_kind = &mut self.per_kind;
        self.items.retain(|(o, _, _)| {
            let kept = keep(o);
            if !kept {
                per_kind[kind_index(o.kind)] -= 1;
            }
            kept
        });
    }

    fn clear(&mut self) {
        self.items.clear();
        self.per_kind = [0; 4];
    }
}

/// One ordered queue, one send in flight. See the module docs.
#[derive(Debug)]
#[repr(C)]
pub(crate) struct Dispatcher {
    // What the engine reads after every input (`is_idle`, `deadline`) comes first, in one
    // cache line (`repr(C)` keeps this order): at 100 000 streams each line a push touches
    // is a miss. The send in flight is boxed for the same reason: inline it took three
    // lines, and only its presence and timeout are read while the model writes.
    hold: Option<(Time, Hold)>,
    in_flight: Option<Box<InFlight>>,
    queue: SendQueue,
    /// Sends whose timeout fired, or that were in flight at a cancel; a late ack still
    /// counts as delivered.
    timed_out: Vec<(SendId, Outgoing)>,
    next_id: u64,
    timeout_ms: u64,
    human_delay: HumanDelay,
    rng: fastrand::Rng,
    blocks_sent: u64,
    /// The human delay for the front block was already waited.
    delay_done: bool,
    aborted: bool,
    stats: DispatchStats,
    /// Keyed messages, oldest first (one per live preview).
    keys: Vec<KeyedMessage>,
    /// Renders each send into the platform's format as it leaves.
    renderer: SendRenderer,
}

impl Dispatcher {
    /// A dispatcher with a delivery timeout (`0` = none), the pause between block sends and
    /// the engine's RNG (the only consumer of its draws, one per delayed block).
    pub(crate) fn new(timeout_ms: u64, human_delay: HumanDelay, rng: fastrand::Rng) -> Self {
        Dispatcher {
            queue: SendQueue::default(),
            in_flight: None,
            timed_out: Vec::new(),
            next_id: 1,
            timeout_ms,
            human_delay,
            rng,
            blocks_sent: 0,
            hold: None,
            delay_done: false,
            aborted: false,
            stats: DispatchStats::default(),
            keys: Vec::new(),
            renderer: SendRenderer::default(),
        }
    }

    /// Sets the format sends are rendered in (the default is `markdown`: no rendering).
    pub(crate) fn set_renderer(&mut self, renderer: SendRenderer) {
        self.renderer = renderer;
    }

    /// Appends a send to the queue. Call [`Dispatcher::pump`] to let it leave.
    pub(crate) fn enqueue(&mut self, item: Outgoing) {
        self.queue.push_back((item, None, None));
    }

    /// [`Dispatcher::enqueue`] for a send whose text was rendered to be measured: `measured`
    /// is posted when it is the render of the send (see [`SendRenderer::render_measured`]).
    pub(crate) fn enqueue_measured(&mut self, item: Outgoing, measured: Option<Measured>) {
        self.queue.push_back((item, None, measured.map(Box::new)));
    }

    /// Removes and returns the queued sends (not the one in flight) that `pick` selects, in
    /// order.
    pub(crate) fn withdraw(&mut self, mut pick: impl FnMut(&Outgoing) -> bool) -> Vec<Outgoing> {
        let mut taken = Vec::new();
        self.queue.retain(|o| {
            if pick(o) {
                taken.push(o.clone());
                false
            } else {
                true
            }
        });
        taken
    }

    /// Puts sends at the front of the queue, in the given order: they leave before anything
    /// queued (a failed final edit's replacement takes the edit's place).
    pub(crate) fn enqueue_front(&mut self, items: impl DoubleEndedIterator<Item = Outgoing>) {
        for item in items.rev() {
            self.queue.push_front((item, None, None));
        }
    }

    /// The model text carried by sends that are with the host: the one in flight and those
    /// whose timeout fired before any ack (they may still arrive).
    pub(crate) fn unresolved_spans(&self) -> impl Iterator<Item = &SourceSpan> {
        let timed_out = self.timed_out.iter().map(|(_, item)| item);
        self.in_flight
            .iter()
            .map(|f| &f.item)
            .chain(timed_out)
            .flat_map(|item| item.spans.iter())
    }

    /// Whether a send whose delivery timeout fired has not been acked (nor failed) yet.
    pub(crate) fn has_unresolved_timeouts(&self) -> bool {
        !self.timed_out.is_empty()
    }

    /// Whether a send handed over now would leave at once: nothing queued or in flight, and
    /// no hold that lasts past `now`.
    #[inline]
    pub(crate) fn is_free(&self, now: Time) -> bool {
        self.queue.is_empty()
            && self.in_flight.is_none()
            && self.hold.is_none_or(|(until, _)| now >= until)
    }

    /// Whether `id` is the send in flight (not one whose timeout already fired).
    pub(crate) fn is_in_flight(&self, id: SendId) -> bool {
        self.in_flight.as_ref().is_some_and(|f| f.id == id)
    }

    /// When the current hold (a human delay or a `retry_after`) ends, if one is set.
    pub(crate) fn hold_until(&self) -> Option<Time> {
        self.hold.map(|(t, _)| t)
    }

    /// Whether a delivery timeout aborted streaming.
    pub(crate) fn is_aborted(&self) -> bool {
        self.aborted
    }

    /// Whether the keyed message's edits would replace a new message: its create was
    /// overtaken by an edit sent as a new message (see the module docs).
    pub(crate) fn is_superseded(&self, key: MessageKey) -> bool {
        self.keyed(key).is_some_and(|k| k.superseded)
    }

    fn keyed(&self, key: MessageKey) -> Option<&KeyedMessage> {
        self.keys.iter().rev().find(|k| k.key == key)
    }

    fn keyed_mut(&mut self, key: MessageKey) -> &mut KeyedMessage {
        match self.keys.iter().rposition(|k| k.key == key) {
            Some(i) => &mut self.keys[i],
            None => {
                self.keys.push(KeyedMessage {
                    key,
                    created: false,
                    superseded: false,
                    message_ref: None,
                });
                self.keys.last_mut().expect("just pushed")
            }
        }
    }

    /// A keyed send was delivered: a create (or draft) makes its message known, with the
    /// platform's id.
    fn record_delivered(&mut self, op: SendOp, message_ref: Option<&str>) {
        match op {
            SendOp::Create { key: Some(key) } => {
                let k = self.keyed_mut(key);
                k.created = true;
                k.message_ref = message_ref.map(str::to_owned);
            }
            SendOp::Draft { key } => {
                let k = self.keyed_mut(key);
                k.created = true;
                if let Some(r) = message_ref {
                    k.message_ref = Some(r.to_owned());
                }
            }
            _ => {}
        }
    }

    /// The operation a queued send leaves with (`None`: skip it), given what is known of its
    /// keyed message, and the ref to put on it.
    fn resolve(&mut self, op: SendOp) -> Option<(SendOp, Option<String>)> {
        let key = match op {
            SendOp::Edit { key } | SendOp::Delete { key } | SendOp::Draft { key } => key,
            _ => return Some((op, None)),
        };
        let (created, message_ref) = self
            .keyed(key)
            .map_or((false, None), |k| (k.created, k.message_ref.clone()));
        match op {
            SendOp::Edit { .. } if !created => {
                self.keyed_mut(key).superseded = true;
                Some((SendOp::CREATE, None))
            }
            SendOp::Delete { .. } if !created => None,
            _ => Some((op, message_ref)),
        }
    }

    /// Whether nothing is queued, held or in flight.
    pub(crate) fn is_drained(&self) -> bool {
        self.queue.is_empty() && self.in_flight.is_none()
    }

    /// Whether nothing is queued, held or in flight: then [`Dispatcher::on_time`] and
    /// [`Dispatcher::pump`] change nothing and [`Dispatcher::deadline`] is `None`.
    #[inline]
    pub(crate) fn is_idle(&self) -> bool {
        self.queue.is_empty() && self.in_flight.is_none() && self.hold.is_none()
    }

    /// Whether a send of `kind` is queued or in flight.
    pub(crate) fn has_pending(&self, kind: SendKind) -> bool {
        self.queue.has(kind) || self.in_flight.as_ref().is_some_and(|f| f.item.kind == kind)
    }

    /// The sends still queued (not the one in flight), in order.
    pub(crate) fn queued(&self) -> impl Iterator<Item = &Outgoing> {
        self.queue.iter().map(|(o, _, _)| o)
    }

    /// Every payload queued or in flight, for dedupe.
    pub(crate) fn pending_payloads(&self) -> impl Iterator<Item = &Payload> {
        self.queue
            .iter()
            .map(|(o, _, _)| &o.payload)
            .chain(self.in_flight.iter().map(|f| &f.item.payload))
    }

    /// The earliest time the dispatcher must be called again, if any.
    pub(crate) fn deadline(&self) -> Option<Time> {
        let hold = self.hold.map(|(t, _)| t);
        let timeout = self.in_flight.as_ref().and_then(|f| f.timeout_at);
        match (hold, timeout) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Sends whose delivery timeout fired and that no ack has answered since.
    pub(crate) fn timed_out(&self) -> impl Iterator<Item = (SendId, &Outgoing)> {
        self.timed_out.iter().map(|(id, item)| (*id, item))
    }

    /// Counters so far.
    pub(crate) fn stats(&self) -> DispatchStats {
        self.stats
    }

    /// Handles time passing: a fired delivery timeout aborts streaming. Then lets queued
    /// sends leave. Calls before a deadline change nothing. Returns the kind and operation
    /// of the send whose timeout fired, if one did.
    pub(crate) fn on_time(
        &mut self,
        now: Time,
        actions: &mut VecDeque<Action>,
    ) -> Option<(SendKind, SendOp)> {
        let mut fired = None;
        if let Some(f) = &self.in_flight
            && f.timeout_at.is_some_and(|t| now >= t)
        {
            let f = self.in_flight.take().expect("checked");
            self.stats.timeouts += 1;
            fired = Some((f.item.kind, f.item.op));
            self.timed_out.push((f.id, f.item));
            if !self.aborted {
                self.aborted = true;
                actions.push_back(Action::Abort {
                    reason: AbortReason::DeliveryTimeout,
                });
            }
        }
        self.pump(now, actions);
        fired
    }

    /// Lets queued sends leave while nothing is in flight and nothing holds the queue.
    pub(crate) fn pump(&mut self, now: Time, actions: &mut VecDeque<Action>) {
        loop {
            if self.in_flight.is_some() {
                return;
            }
            if let Some((until, _)) = self.hold {
                if now < until {
                    return;
                }
                self.hold = None;
            }
            let Some((front, retry, _)) = self.queue.front() else {
                return;
            };
            if self.aborted && front.kind == SendKind::Block && retry.is_none() {
                // Its text stays out of the ledger, so the final carries it.
                self.queue.pop_front();
                self.stats.skipped_blocks += 1;
                continue;
            }
            if front.kind == SendKind::Block
                && retry.is_none()
                && self.blocks_sent > 0
                && !self.delay_done
                && self.human_delay != HumanDelay::Off
            {
                self.delay_done = true;
                let delay = self.human_delay.sample(&mut self.rng);
                if delay > 0 {
                    self.hold = Some((now.plus_millis(delay), Hold::HumanDelay));
                    return;
                }
            }
            let (mut item, retry, measured) = self.queue.pop_front().expect("front exists");
            self.delay_done = false;
            let Some((op, message_ref)) = self.resolve(item.op) else {
                // A delete of a message that was never created: nothing to do.
                continue;
            };
            item.op = op;
            let (id, attempts) = retry.unwrap_or_else(|| {
                let id = SendId(self.next_id);
                self.next_id += 1;
                (id, 0)
            });
            if item.kind == SendKind::Block && attempts == 0 {
                self.blocks_sent += 1;
            }
            self.stats.sends += 1;
            let measured = measured.map(|m| *m);
            let rendered =
                self.renderer
                    .render_measured(&item.payload, item.kind, item.op, measured);
            actions.push_back(Action::Send(SendRequest {
                send_id: id,
                kind: item.kind,
                op: item.op,
                payload: item.payload.clone(),
                message_ref,
                format: self.renderer.format(),
                rendered,
            }));
            let timeout_at = (self.timeout_ms > 0).then(|| now.plus_millis(self.timeout_ms));
            self.in_flight = Some(Box::new(InFlight {
                id,
                item,
                timeout_at,
                attempts,
            }));
        }
    }

    /// The host delivered send `id`; `message_ref` is the platform's id for the message.
    pub(crate) fn on_delivered(
        &mut self,
        id: SendId,
        message_ref: Option<&str>,
    ) -> Result<AckOutcome, Error> {
        if self.in_flight.as_ref().is_some_and(|f| f.id == id) {
            let f = self.in_flight.take().expect("checked");
            self.stats.delivered += 1;
            self.record_delivered(f.item.op, message_ref);
            return Ok(AckOutcome::Delivered(f.item));
        }
        if let Some(i) = self.timed_out.iter().position(|(t, _)| *t == id) {
            let (_, item) = self.timed_out.swap_remove(i);
            self.stats.delivered += 1;
            self.record_delivered(item.op, message_ref);
            return Ok(AckOutcome::LateDelivered(item));
        }
        Err(Error::UnknownSend(id))
    }

    /// The host failed to deliver send `id`.
    pub(crate) fn on_failed(
        &mut self,
        id: SendId,
        retry_after_ms: Option<u64>,
        permanent: bool,
        now: Time,
    ) -> Result<AckOutcome, Error> {
        if let Some(i) = self.timed_out.iter().position(|(t, _)| *t == id) {
            // Its timeout already fired and streaming was aborted; its text is undelivered.
            let (id, item) = self.timed_out.swap_remove(i);
            self.stats.failures += 1;
            return Ok(AckOutcome::Dropped(id, item));
        }
        if self.in_flight.as_ref().is_none_or(|f| f.id != id) {
            return Err(Error::UnknownSend(id));
        }
        let f = self.in_flight.take().expect("checked");
        self.stats.failures += 1;
        let preview_update =
            f.item.kind == SendKind::Preview && !matches!(f.item.op, SendOp::Delete { .. });
        if preview_update {
            // Not retried: the preview sends its latest text next. A rate limit still holds
            // every send until exactly its end.
            if let Some(wait) = retry_after_ms {
                let until = now.plus_millis(wait);
                let until = self.hold.map_or(until, |(t, _)| t.max(until));
                self.hold = Some((until, Hold::Retry));
            }
            self.stats.dropped += 1;
            return Ok(AckOutcome::Dropped(f.id, f.item));
        }
        if permanent || f.attempts >= MAX_RETRIES {
            self.stats.dropped += 1;
            return Ok(AckOutcome::Dropped(f.id, f.item));
        }
        self.stats.retries += 1;
        let wait = retry_after_ms.unwrap_or(DEFAULT_RETRY_BACKOFF_MS);
        self.hold = Some((now.plus_millis(wait), Hold::Retry));
        let outcome = AckOutcome::WillRetry(f.item.kind, f.item.spans.clone());
        self.queue
            .push_front((f.item, Some((f.id, f.attempts + 1)), None));
        Ok(outcome)
    }

    /// Drops everything queued and forgets the send in flight (the turn was cancelled).
    pub(crate) fn cancel(&mut self) {
        self.queue.clear();
        // The host may still ack the send it was delivering: keep its id known, like a send
        // whose timeout fired (its ack then counts, an ack of any other id stays unknown).
        if let Some(f) = self.in_flight.take() {
            self.timed_out.push((f.id, f.item));
        }
        self.hold = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(text: &str) -> Outgoing {
        Outgoing {
            kind: SendKind::Block,
            op: SendOp::CREATE,
            payload: Payload::text(text),
            spans: SmallVec::new(),
        }
    }

    fn sent_ids(actions: &mut VecDeque<Action>) -> Vec<u64> {
        sent(actions).into_iter().map(|s| s.send_id.0).collect()
    }

    #[test]
    fn one_in_flight_in_order() {
        let mut d = Dispatcher::new(0, HumanDelay::Off, fastrand::Rng::with_seed(1));
        let mut actions = VecDeque::new();
        d.enqueue(block("a"));
        d.enqueue(block("b"));
        d.pump(Time::ZERO, &mut actions);
        assert_eq!(sent_ids(&mut actions), [1]);
        assert!(matches!(
            d.on_delivered(SendId(1), None),
            Ok(AckOutcome::Delivered(_))
        ));
        d.pump(Time::ZERO, &mut actions);
        assert_eq!(sent_ids(&mut actions), [2]);
        assert!(matches!(
            d.on_delivered(SendId(7), None),
            Err(Error::UnknownSend(SendId(7)))
        ));
    }

    #[test]
    fn after_cancel_only_the_send_in_flight_is_known() {
        let mut d = Dispatcher::new(0, HumanDelay::Off, fastrand::Rng::with_seed(1));
        let mut actions = VecDeque::new();
        d.enqueue(block("a"));
        d.enqueue(block("b"));
        d.pump(Time::ZERO, &mut actions);
        assert_eq!(sent_ids(&mut actions), [1]);
        d.cancel();
        // Send 2 was never made; send 1 was in flight and its ack still counts.
        assert!(matches!(
            d.on_delivered(SendId(2), None),
            Err(Error::UnknownSend(SendId(2)))
        ));
        assert!(matches!(
            d.on_delivered(SendId(1), None),
            Ok(AckOutcome::LateDelivered(_))
        ));
        assert_eq!(d.stats().delivered, 1);
        assert!(d.on_delivered(SendId(1), None).is_err(), "acked once only");
        d.pump(Time::ZERO, &mut actions);
        assert!(actions.is_empty(), "nothing is sent after a cancel");
    }

    #[test]
    fn retry_waits_exactly_retry_after() {
        let mut d = Dispatcher::new(0, HumanDelay::Off, fastrand::Rng::with_seed(1));
        let mut actions = VecDeque::new();
        d.enqueue(block("a"));
        d.pump(Time::ZERO, &mut actions);
        sent_ids(&mut actions);
        let t = Time::from_millis(100);
        assert!(matches!(
            d.on_failed(SendId(1), Some(500), false, t),
            Ok(AckOutcome::WillRetry(..))
        ));
        assert_eq!(d.deadline(), Some(Time::from_millis(600)));
        d.pump(Time::from_millis(599), &mut actions);
        assert!(actions.is_empty());
        d.pump(Time::from_millis(600), &mut actions);
        assert_eq!(sent_ids(&mut actions), [1], "same send id on retry");
    }

    #[test]
    fn timeout_aborts_and_skips_later_blocks() {
        let mut d = Dispatcher::new(1000, HumanDelay::Off, fastrand::Rng::with_seed(1));
        let mut actions = VecDeque::new();
        d.enqueue(block("a"));
        d.enqueue(block("b"));
        d.pump(Time::ZERO, &mut actions);
        sent_ids(&mut actions);
        d.on_time(Time::from_millis(999), &mut actions);
        assert!(actions.is_empty());
        d.on_time(Time::from_millis(1000), &mut actions);
        assert_eq!(
            actions.pop_front(),
            Some(Action::Abort {
                reason: AbortReason::DeliveryTimeout
            })
        );
        assert!(actions.is_empty(), "block b is skipped");
        assert_eq!(d.stats().skipped_blocks, 1);
        assert!(matches!(
            d.on_delivered(SendId(1), None),
            Ok(AckOutcome::LateDelivered(_))
        ));
    }

    fn keyed(kind: SendKind, op: SendOp) -> Outgoing {
        Outgoing {
            kind,
            op,
            payload: Payload::text("x"),
            spans: SmallVec::new(),
        }
    }

    fn sent(actions: &mut VecDeque<Action>) -> Vec<SendRequest> {
        actions
            .drain(..)
            .filter_map(|a| match a {
                Action::Send(s) => Some(s),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn the_create_s_ref_travels_on_later_sends_for_its_key() {
        let mut d = Dispatcher::new(0, HumanDelay::Off, fastrand::Rng::with_seed(1));
        let mut actions = VecDeque::new();
        let key = MessageKey(4);
        d.enqueue(keyed(SendKind::Preview, SendOp::Create { key: Some(key) }));
        d.enqueue(keyed(SendKind::Preview, SendOp::Edit { key }));
        d.enqueue(keyed(SendKind::Preview, SendOp::Delete { key }));
        d.pump(Time::ZERO, &mut actions);
        assert_eq!(sent(&mut actions)[0].message_ref, None);
        d.on_delivered(SendId(1), Some("m-77")).unwrap();
        for id in [2, 3] {
            d.pump(Time::ZERO, &mut actions);
            let s = sent(&mut actions);
            assert_eq!(s[0].message_ref.as_deref(), Some("m-77"));
            d.on_delivered(SendId(id), None).unwrap();
        }
    }

    #[test]
    fn an_edit_of_a_message_never_created_leaves_as_a_new_one() {
        let mut d = Dispatcher::new(0, HumanDelay::Off, fastrand::Rng::with_seed(1));
        let mut actions = VecDeque::new();
        let key = MessageKey(1);
        d.enqueue(keyed(SendKind::Preview, SendOp::Create { key: Some(key) }));
        d.enqueue(keyed(SendKind::Final, SendOp::Edit { key }));
        d.enqueue(keyed(SendKind::Preview, SendOp::Delete { key }));
        d.enqueue(keyed(SendKind::Final, SendOp::CREATE));
        d.pump(Time::ZERO, &mut actions);
        sent(&mut actions);
        assert!(matches!(
            d.on_failed(SendId(1), None, true, Time::ZERO),
            Ok(AckOutcome::Dropped(..))
        ));
        d.pump(Time::ZERO, &mut actions);
        let s = sent(&mut actions);
        assert_eq!(s[0].op, SendOp::CREATE, "the edit leaves as a create");
        assert!(d.is_superseded(key));
        d.on_delivered(SendId(2), Some("m1")).unwrap();
        d.pump(Time::ZERO, &mut actions);
        let s = sent(&mut actions);
        assert_eq!(
            s[0].send_id,
            SendId(3),
            "the delete of no message is skipped"
        );
        assert_eq!(s[0].op, SendOp::CREATE);
    }

    #[test]
    fn a_failed_preview_update_is_not_retried_but_its_retry_after_holds_everything() {
        let mut d = Dispatcher::new(0, HumanDelay::Off, fastrand::Rng::with_seed(1));
        let mut actions = VecDeque::new();
        let key = MessageKey(1);
        d.enqueue(keyed(SendKind::Preview, SendOp::Create { key: Some(key) }));
        d.pump(Time::ZERO, &mut actions);
        sent(&mut actions);
        let t = Time::from_millis(100);
        let outcome = d.on_failed(SendId(1), Some(2000), false, t).unwrap();
        assert!(
            matches!(outcome, AckOutcome::Dropped(_, item) if item.op == SendOp::Create { key: Some(key) })
        );
        assert_eq!(d.hold_until(), Some(Time::from_millis(2100)));
        assert!(!d.is_free(Time::from_millis(2099)));
        assert!(d.is_free(Time::from_millis(2100)));
        d.enqueue(block("a"));
        d.pump(Time::from_millis(2099), &mut actions);
        assert!(actions.is_empty(), "every send waits for the pause");
        d.pump(Time::from_millis(2100), &mut actions);
        assert_eq!(sent_ids(&mut actions), [2]);
    }

    #[test]
    fn sends_put_at_the_front_leave_first_in_order() {
        let mut d = Dispatcher::new(0, HumanDelay::Off, fastrand::Rng::with_seed(1));
        let mut actions = VecDeque::new();
        d.enqueue(block("c"));
        d.enqueue_front([block("a"), block("b")].into_iter());
        let mut texts = Vec::new();
        for id in 1..=3 {
            d.pump(Time::ZERO, &mut actions);
            texts.extend(sent(&mut actions).into_iter().map(|s| s.payload.text));
            d.on_delivered(SendId(id), None).unwrap();
        }
        assert_eq!(texts, ["a", "b", "c"]);
    }
}
