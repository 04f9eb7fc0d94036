//! The outbox: normalizing and queueing sends, ack outcomes, the per-input step that lets
//! sends leave and advances the finish, and the timer.

use smallvec::SmallVec;

use super::{Engine, Phase};
use crate::action::{Action, SendKind, SendOp};
use crate::payload::{Lane, Payload};
use crate::render::Measured;
use crate::stage::dispatch::{AckOutcome, Outgoing};
use crate::stage::ledger::SourceSpan;
use crate::stage::prefix::apply_prefix;
use crate::text::splitter::PlatformSplitter;
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
    /// Queues a payload: drops it when empty, applies the response prefix, splits it to the
    /// platform limit. Token rules are not applied here: the model's text had them at the
    /// edges of each message (never at the seams between its blocks), and host payloads
    /// have them on their whole text before they get here.
    pub(super) fn enqueue(
        &mut self,
        kind: SendKind,
        payload: Payload,
        spans: SmallVec<[SourceSpan; 2]>,
    ) {
        self.enqueue_checked(kind, payload, spans, false, None);
    }

    /// [`Engine::enqueue`] for a coalesced text whose posted length the coalescer already
    /// held within the limit (as long as no prefix is added): it is not rendered again to
    /// be measured, and `measured`, the render the coalescer measured it with (if it had to
    /// render it), is the render posted.
    pub(super) fn enqueue_coalesced_text(
        &mut self,
        payload: Payload,
        spans: SmallVec<[SourceSpan; 2]>,
        measured: Option<Measured>,
    ) {
        self.enqueue_checked(SendKind::Block, payload, spans, true, measured);
    }

    fn enqueue_checked(
        &mut self,
        kind: SendKind,
        mut payload: Payload,
        spans: SmallVec<[SourceSpan; 2]>,
        measured: bool,
        render: Option<Measured>,
    ) {
        if payload.is_empty() {
            return;
        }
        if payload.lane == Lane::Answer && self.message_open {
            self.send_reasoning_before(&spans);
        }
        let before = payload.text.len();
        self.apply_response_prefix(&mut payload);
        let measured = measured && payload.text.len() == before && payload.media.is_empty();
        // A prefix changed the text: what was measured is not what is posted.
        let render = render.filter(|_| measured);
        self.enqueue_prefixed(kind, payload, spans, measured, render);
    }

    /// [`Engine::enqueue`] once the response prefix is on: a caption too long for the
    /// channel's caption limit goes as its own message(s) first, with its spans, then the
    /// media alone; a text above the platform limit is split.
    fn enqueue_prefixed(
        &mut self,
        kind: SendKind,
        mut payload: Payload,
        spans: SmallVec<[SourceSpan; 2]>,
        measured: bool,
        render: Option<Measured>,
    ) {
        if !payload.media.is_empty()
            && !payload.text.trim().is_empty()
            && !self.fits_caption(&payload.text, payload.lane)
        {
            let text = Payload {
                text: std::mem::take(&mut payload.text),
                media: Vec::new(),
                audio_as_voice: false,
                ..payload.clone()
            };
            // Both keep the reply target: the model's `[[reply_to…]]` holds for every send
            // of its message (SPEC §4: media without a target take the caption's).
            self.enqueue_prefixed(kind, text, spans, false, None);
            self.dispatcher.enqueue(Outgoing {
                kind,
                op: SendOp::CREATE,
                payload,
                spans: SmallVec::new(),
            });
            return;
        }
        let media_only = payload.text.trim().is_empty();
        // The render that measures the text, if one is needed, is the render posted.
        let (fits, render) = match (media_only, measured) {
            (true, _) => (true, render),
            (false, true) => (
                self.fits_markdown(&payload.text, self.cfg().metric.len(&payload.text)),
                render,
            ),
            (false, false) => self.fits_measured(&payload.text, payload.lane),
        };
        if fits {
            let send = Outgoing {
                kind,
                op: SendOp::CREATE,
                payload,
                spans,
            };
            self.dispatcher.enqueue_measured(send, render);
            return;
        }
        // Above the platform limit: only a host payload gets here (blocks are cut to fit and
        // finals go through `enqueue_final`). Any spans travel with the last piece.
        let pieces = self.splitter_for(payload.lane).split(&payload.text);
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

    /// Whether `text` fits the channel's caption limit (always, without one), counted on
    /// what is posted.
    fn fits_caption(&self, text: &str, lane: Lane) -> bool {
        let cfg = self.cfg();
        cfg.caption_limit.is_none_or(|limit| {
            let units = cfg.metric.len(text);
            units <= limit && self.posts_within(text, units, lane, limit)
        })
    }

    /// Whether `text` fits the platform's limit and line cap: its Markdown and, with a
    /// rendered format, what is posted, counted as the platform counts it (SPEC §16).
    pub(super) fn fits(&self, text: &str, lane: Lane) -> bool {
        let units = self.cfg().metric.len(text);
        self.fits_markdown(text, units)
            && self.posts_within(text, units, lane, self.cfg().text_limit)
    }

    /// [`Engine::fits`], with the render made to measure `text` (if one was needed): the
    /// render to post, so the text is not rendered again.
    fn fits_measured(&self, text: &str, lane: Lane) -> (bool, Option<Measured>) {
        let cfg = self.cfg();
        let units = cfg.metric.len(text);
        if !self.fits_markdown(text, units) {
            return (false, None);
        }
        if cfg.format == crate::Format::Markdown {
            return (units <= cfg.text_limit, None);
        }
        let options = self.config.render_options().on_lane(lane);
        crate::render::posted_within_measured(
            text,
            units,
            cfg.format,
            &options,
            cfg.metric,
            cfg.text_limit,
        )
    }

    /// Whether the Markdown of `text` (`units` long in the channel's metric) fits the
    /// platform's limit and line cap.
    fn fits_markdown(&self, text: &str, units: usize) -> bool {
        let cfg = self.cfg();
        let within_len = units <= cfg.text_limit;
        let within_lines = cfg
            .max_lines
            .is_none_or(|max| memchr::memchr_iter(b'\n', text.as_bytes()).count() < max);
        within_len && within_lines
    }

    /// Whether `text` (`units` long in the channel's metric) once posted on `lane`
    /// (reasoning is quoted) is within `limit` units of the metric (the Markdown's own
    /// length in format `markdown`).
    fn posts_within(&self, text: &str, units: usize, lane: Lane, limit: usize) -> bool {
        let cfg = self.cfg();
        if cfg.format == crate::Format::Markdown {
            return units <= limit;
        }
        let options = self.config.render_options().on_lane(lane);
        crate::render::posted_within(text, units, cfg.format, &options, cfg.metric, limit)
    }

    /// The splitter for sends on `lane`: reasoning is measured quoted, as it is posted.
    pub(super) fn splitter_for(&self, lane: Lane) -> std::borrow::Cow<'_, PlatformSplitter> {
        let config = *self.splitter.config();
        if lane != Lane::Reasoning || config.format == crate::Format::Markdown {
            return std::borrow::Cow::Borrowed(&self.splitter);
        }
        let quoted = crate::SplitConfig {
            render: config.render.on_lane(Lane::Reasoning),
            ..config
        };
        match PlatformSplitter::new(quoted) {
            Ok(s) => std::borrow::Cow::Owned(s),
            Err(_) => std::borrow::Cow::Borrowed(&self.splitter),
        }
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
                self.remember_delivered(&item.payload);
                if self.phase == Phase::Finals
                    && item.kind != SendKind::Final
                    && !item.spans.is_empty()
                {
                    // A late ack after the finals were computed (see `finals`).
                    self.requeue_remainder();
                }
            }
            AckOutcome::WillRetry(SendKind::Final, spans)
                if self.phase == Phase::Finals && spans.iter().any(|s| self.ledger.overlaps(s)) =>
            {
                // A remainder final is about to be retried after a late ack confirmed some of
                // its text: compute the remainder again rather than resend that text.
                self.requeue_remainder();
            }
            AckOutcome::WillRetry(..) => {}
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
        }
    }

    pub(super) fn on_timer(&mut self, now: Time) {
        if self.coalescer.deadline().is_some_and(|d| now >= d) {
            self.coalescer.on_timer(now, &mut self.coalesced);
            self.enqueue_coalesced();
        }
    }

    /// After every input: let sends leave, advance the finish, re-arm the timer.
    #[inline]
    pub(super) fn after_input(&mut self, now: Time) {
        if self.phase == Phase::Streaming && self.preview.is_none() && self.dispatcher.is_idle() {
            // The usual case while the model writes, what `after_input_in_general` does here:
            // nothing is queued, held or in flight, so `on_time` would change nothing and the
            // dispatcher has no deadline; without a preview the coalescer's is the only one.
            let next = self.coalescer.deadline();
            debug_assert_eq!(next, self.next_deadline());
            self.arm_timer_at(next);
            return;
        }
        self.after_input_in_general(now);
    }

    /// [`Engine::after_input`] in every case.
    #[inline(never)]
    fn after_input_in_general(&mut self, now: Time) {
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
        if self.phase == Phase::Finishing && ready && !self.waits_for_late_acks(now) {
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

    /// Before the finals: whether to keep waiting for timed-out sends to be acked, at most
    /// one delivery timeout from when the wait began (see `finals`, ordering 2).
    fn waits_for_late_acks(&mut self, now: Time) -> bool {
        if !self.dispatcher.has_unresolved_timeouts() {
            return false;
        }
        let timeout = self.cfg().delivery_timeout_ms;
        let until = *self.finals_wait.get_or_insert(now.plus_millis(timeout));
        now < until
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
        if self.phase == Phase::Finishing {
            // The wait for late acks before the finals (see `finals`, ordering 2).
            next = earliest(next, self.finals_wait);
        }
        next
    }

    fn arm_timer(&mut self) {
        self.arm_timer_at(self.next_deadline());
    }

    /// Arms the timer for `next`, the engine's next deadline, unless it already is.
    #[inline]
    fn arm_timer_at(&mut self, next: Option<Time>) {
        if next != self.armed {
            self.armed = next;
            self.actions.push_back(Action::ArmTimer { deadline: next });
        }
    }
}
