//! The outbox: normalizing and queueing sends, ack outcomes, the per-input step that lets
//! sends leave and advances the finish, and the timer.

use smallvec::SmallVec;

use super::host::PayloadKey;
use super::{Engine, Phase};
use crate::action::{Action, SendKind, SendOp};
use crate::payload::Payload;
use crate::stage::dispatch::{AckOutcome, Outgoing};
use crate::stage::ledger::SourceSpan;
use crate::stage::prefix::apply_prefix;
use crate::stage::tokens::normalize_text;
use crate::time::Time;

impl Engine {
    /// Normalizes a payload (tokens, prefix, limits) and queues it.
    pub(super) fn enqueue(
        &mut self,
        kind: SendKind,
        mut payload: Payload,
        spans: SmallVec<[SourceSpan; 2]>,
    ) {
        let normalized = normalize_text(&self.token_config, &payload.text);
        if normalized.len() != payload.text.len() {
            payload.text = normalized.to_owned();
        }
        if payload.is_empty() {
            return;
        }
        self.apply_response_prefix(&mut payload);
        let media_only = payload.text.trim().is_empty();
        if media_only || self.fits(&payload.text) {
            self.dispatcher.enqueue(Outgoing {
                kind,
                op: SendOp::CREATE,
                payload,
                spans,
            });
            return;
        }
        // Above the platform limit: only a host payload gets here (blocks are cut to fit and
        // finals go through `enqueue_final`). Any spans travel with the last piece.
        let pieces = self.splitter.split(&payload.text);
        let n = pieces.len();
        for (i, piece) in pieces.into_iter().enumerate() {
            let last = i + 1 == n;
            let p = Payload {
                text: piece.text,
                media: if last {
                    std::mem::take(&mut payload.media)
                } else {
                    Vec::new()
                },
                ..payload.clone()
            };
            let spans = if last { spans.clone() } else { SmallVec::new() };
            self.dispatcher.enqueue(Outgoing {
                kind,
                op: SendOp::CREATE,
                payload: p,
                spans,
            });
        }
    }

    pub(super) fn fits(&self, text: &str) -> bool {
        let cfg = self.cfg();
        let within_len = cfg.metric.len(text) <= cfg.text_limit;
        let within_lines = cfg
            .max_lines
            .is_none_or(|max| text.split('\n').count() <= max);
        within_len && within_lines
    }

    pub(super) fn apply_response_prefix(&mut self, payload: &mut Payload) {
        let Some(prefix) = self.config.response_prefix() else {
            return;
        };
        if payload.text.trim().is_empty() {
            return;
        }
        if self.prefix_uses > 0 && !self.cfg().prefix_every_message {
            return;
        }
        self.prefix_uses += 1;
        if let std::borrow::Cow::Owned(text) = apply_prefix(prefix, &payload.text) {
            payload.text = text;
        }
    }

    pub(super) fn on_ack_outcome(&mut self, outcome: AckOutcome) {
        match outcome {
            AckOutcome::Delivered(item) | AckOutcome::LateDelivered(item) => {
                for span in &item.spans {
                    self.ledger.record(span);
                }
                self.sent_keys.push(PayloadKey::of(&item.payload));
            }
            AckOutcome::Dropped(id, item) => self.lost.push((id, item)),
            AckOutcome::WillRetry => {}
        }
    }

    pub(super) fn on_timer(&mut self, now: Time) {
        if self.coalescer.deadline().is_some_and(|d| now >= d) {
            self.coalescer.on_timer(now, &mut self.coalesced);
            self.enqueue_coalesced();
        }
    }

    /// After every input: let sends leave, advance the finish, re-arm the timer.
    pub(super) fn after_input(&mut self, now: Time) {
        if self.phase == Phase::Cancelled {
            self.arm_timer();
            return;
        }
        if self.phase == Phase::Streaming && self.dispatcher.is_idle() {
            // Nothing is queued, held or in flight: `on_time` would change nothing, and the
            // finishing steps below only run after `Finish`.
            self.arm_timer();
            return;
        }
        self.dispatcher.on_time(now, &mut self.actions);
        if self.phase == Phase::Finishing && !self.dispatcher.has_pending(SendKind::Block) {
            self.queue_finals();
            self.phase = Phase::Finals;
            self.dispatcher.on_time(now, &mut self.actions);
        }
        if self.phase == Phase::Finals && self.dispatcher.is_drained() {
            // Idle is the turn's last action: cancel the timer first.
            self.phase = Phase::Idle;
            self.arm_timer();
            self.actions.push_back(Action::Idle);
            return;
        }
        self.arm_timer();
    }

    pub(super) fn next_deadline(&self) -> Option<Time> {
        if matches!(self.phase, Phase::Idle | Phase::Cancelled) {
            return None;
        }
        match (self.coalescer.deadline(), self.dispatcher.deadline()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn arm_timer(&mut self) {
        let next = self.next_deadline();
        if next != self.armed {
            self.armed = next;
            self.actions.push_back(Action::ArmTimer { deadline: next });
        }
    }
}
