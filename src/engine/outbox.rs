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

/// What a `DeliveryFailed` said, for [`Engine::on_ack_outcome`].
#[derive(Clone, Copy, Debug)]
pub(super) struct Failure {
    /// Retry no earlier than this many ms from now.
    pub(super) retry_after_ms: Option<u64>,
    /// Retrying will not help.
    pub(super) permanent: bool,
    /// The failed send was the one in flight (not one whose timeout had already fired).
    pub(super) in_flight: bool,
}

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

    /// What an ack means for the ledger, the dedupe keys and the live preview. `failure`
    /// is the `retry_after` and `permanent` of a `DeliveryFailed`.
    pub(super) fn on_ack_outcome(
        &mut self,
        outcome: AckOutcome,
        failure: Option<Failure>,
        now: Time,
    ) {
        // A failure reported for a send whose timeout already fired was handled then.
        let live_failure = failure.filter(|f| f.in_flight);
        let late = matches!(outcome, AckOutcome::LateDelivered(_));
        match outcome {
            AckOutcome::Delivered(item) | AckOutcome::LateDelivered(item)
                if item.kind == SendKind::Preview =>
            {
                self.preview_delivered(item, late);
            }
            AckOutcome::Delivered(item) | AckOutcome::LateDelivered(item) => {
                for span in &item.spans {
                    self.ledger.record(span);
                }
                self.sent_keys.push(PayloadKey::of(&item.payload));
            }
            AckOutcome::Dropped(_, item) if item.kind == SendKind::Preview => {
                // A preview update is not lost text: the final carries it.
                if let Some(f) = live_failure {
                    self.preview_failed(&item, f.retry_after_ms, f.permanent, now);
                }
            }
            AckOutcome::Dropped(_, item)
                if item.kind == SendKind::Final
                    && matches!(item.op, SendOp::Edit { .. })
                    && live_failure.is_some() =>
            {
                // Replaced by a delete and a new message, which carries the text.
                self.replace_failed_final_edit(item);
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
        if self.preview.is_some() {
            self.preview_step(now);
        }
        if self.phase == Phase::Streaming && self.dispatcher.is_idle() {
            // Nothing is queued, held or in flight: `on_time` would change nothing, and the
            // finishing steps below only run after `Finish`.
            self.arm_timer();
            return;
        }
        self.dispatcher_time(now);
        // With a preview, segments were finalized while streaming: reconcile only once
        // every send before the finals is resolved.
        let ready = if self.preview.is_some() {
            self.dispatcher.is_drained()
        } else {
            !self.dispatcher.has_pending(SendKind::Block)
        };
        if self.phase == Phase::Finishing && ready {
            self.queue_finals();
            self.phase = Phase::Finals;
            self.dispatcher_time(now);
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

    /// Lets the dispatcher act on time (timeouts, holds, queued sends); a timed-out preview
    /// update degrades the preview, and a timed-out final edit removes the preview (its text
    /// is sent again with the finals, as never confirmed).
    fn dispatcher_time(&mut self, now: Time) {
        match self.dispatcher.on_time(now, &mut self.actions) {
            Some((SendKind::Preview, op)) => self.preview_timed_out(op),
            Some((SendKind::Final, SendOp::Edit { key })) => self.delete_preview(key, now),
            _ => {}
        }
    }

    pub(super) fn next_deadline(&self) -> Option<Time> {
        if matches!(self.phase, Phase::Idle | Phase::Cancelled) {
            return None;
        }
        let earliest = |a: Option<Time>, b: Option<Time>| match (a, b) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let mut next = earliest(self.coalescer.deadline(), self.dispatcher.deadline());
        if self.preview.is_some() {
            next = earliest(next, self.preview_deadline());
        }
        next
    }

    fn arm_timer(&mut self) {
        let next = self.next_deadline();
        if next != self.armed {
            self.armed = next;
            self.actions.push_back(Action::ArmTimer { deadline: next });
        }
    }
}
