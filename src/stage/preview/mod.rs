//! The live preview (SPEC §10): one platform message that shows the reply as it grows, edited
//! in place at a throttled pace, or an ephemeral draft bubble.
//!
//! Two pure parts, wired by `engine::preview`:
//!
//! - [`PreviewState`] (this file) decides *whether and when* the preview changes: it owns the
//!   message key of the current preview, what the platform shows (the text of the last
//!   delivered operation), the throttle window, pauses after rate limits, the failure count,
//!   and whether an operation is in flight. It never sees the reply itself; the engine asks it
//!   [`PreviewState::ready_at`] and, only when an update is due, renders the text and hands it
//!   to [`PreviewState::prepare`].
//! - [`render::PreviewRenderer`] decides *what* the preview shows: the latest text (or a tail
//!   window of it past the preview limit) with the reasoning quoted above it and a cursor.
//!
//! Rules (where the spec is silent, the choice is written here):
//!
//! - **Throttle.** At most one operation per window, measured between the times operations
//!   are handed to the host, and never one while the previous is in flight. The window starts
//!   at the configured throttle and doubles on every rate limit (a failure with
//!   `retry_after`), up to [`MAX_BACKOFF_THROTTLE_MS`] (or the configured value if larger); it
//!   stays doubled for the rest of the turn (a chat that was rate-limited once is likely to
//!   be again).
//! - **Pauses.** A failure with `retry_after` pauses the preview until exactly `now +
//!   retry_after`; the dispatcher holds every other send until then too.
//! - **Latest wins.** Nothing is queued: when an update is due the engine renders the text of
//!   that moment, so intermediate texts are never sent.
//! - **Skips.** A text identical to what the platform shows is never sent; nor is a
//!   regressive one, whose content (the text before the cursor) is a strict prefix of the
//!   content shown. A skip costs no throttle window.
//! - **Failures.** A failed operation is not retried as such (the next update sends the
//!   latest text instead). After [`MAX_CONSECUTIVE_FAILURES`] failures in a row, a permanent
//!   failure, or a delivery timeout, the preview is *degraded*: it stops updating for the
//!   rest of the turn and the reply is delivered by the finals alone. A success resets the
//!   count.
//! - **Segments.** Each preview message is a segment of one assistant message; a boundary (a
//!   new message, a tool, a media item, the end of the turn) closes the segment and the next
//!   update opens a new preview under a new key. A new preview does not wait for the
//!   previous one's throttle window (it is a new message); a pause still holds.

pub(crate) mod render;

#[cfg(test)]
mod tests;

use crate::action::{MessageKey, SendOp};
use crate::config::PreviewTransport;
use crate::time::Time;

/// After this many failed preview operations in a row the preview stops updating.
pub(crate) const MAX_CONSECUTIVE_FAILURES: u32 = 3;

/// Rate limits double the throttle up to this many ms (unless the configured throttle is
/// already longer).
pub(crate) const MAX_BACKOFF_THROTTLE_MS: u64 = 10_000;

/// The settings the state machine needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PreviewPolicy {
    /// The throttle window in ms (already clamped by the configuration).
    pub throttle_ms: u64,
    /// Edit in place, or draft bubble.
    pub transport: PreviewTransport,
}

/// What became of an update the engine rendered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Update {
    /// Send this operation with the text.
    Send(SendOp),
    /// The text is what the platform already shows: nothing to send.
    Identical,
    /// The text's content is a strict prefix of the content shown: not sent.
    Regressive,
}

/// The platform's view of the current segment's preview message.
#[derive(Debug)]
struct Segment {
    key: MessageKey,
    /// A create (or the first draft) was delivered: the message exists.
    created: bool,
    /// What the platform shows: the text of the last delivered operation.
    shown: String,
    /// Bytes of `shown` before its cursor and synthetic closing lines (its content).
    shown_body: usize,
    /// The body length of the operation in flight, if it is this segment's.
    pending_body: Option<usize>,
    /// The content changed since the last update was rendered.
    dirty: bool,
}

/// A segment that was closed: what the finals need to know about its preview message.
#[derive(Debug)]
pub(crate) struct ClosedSegment {
    /// The preview's key.
    pub key: MessageKey,
    /// The platform has (or may have, while its create is in flight) a message or bubble
    /// under this key.
    pub has_message: bool,
    /// What the platform shows under the key (empty when nothing was delivered).
    pub shown: String,
    /// An operation on this key is still in flight.
    pub in_flight: bool,
}

/// The preview's decisions. See the module docs.
#[derive(Debug)]
pub(crate) struct PreviewState {
    policy: PreviewPolicy,
    /// The current throttle window (doubled by rate limits).
    throttle_ms: u64,
    /// No operation before this time (a rate limit's `retry_after`).
    paused_until: Option<Time>,
    /// When the last operation was handed to the host.
    last_op_at: Option<Time>,
    /// The key of the operation in flight, if any (at most one).
    in_flight: Option<MessageKey>,
    failures: u32,
    degraded: bool,
    next_key: u32,
    segment: Option<Segment>,
}

impl PreviewState {
    pub(crate) fn new(policy: PreviewPolicy) -> Self {
        PreviewState {
            policy,
            throttle_ms: policy.throttle_ms,
            paused_until: None,
            last_op_at: None,
            in_flight: None,
            failures: 0,
            degraded: false,
            next_key: 1,
            segment: None,
        }
    }

    /// The current throttle window in ms.
    #[cfg(test)]
    pub(crate) fn throttle_ms(&self) -> u64 {
        self.throttle_ms
    }

    /// Whether the preview stopped updating for the rest of the turn.
    #[cfg(test)]
    pub(crate) fn is_degraded(&self) -> bool {
        self.degraded
    }

    /// Stops updating for the rest of the turn (delivery timeout, repeated failures).
    pub(crate) fn degrade(&mut self) {
        self.degraded = true;
    }

    /// Whether the open segment's preview exists or is being created: then the first-preview
    /// threshold no longer applies.
    pub(crate) fn has_message(&self) -> bool {
        self.segment
            .as_ref()
            .is_some_and(|s| s.created || self.in_flight == Some(s.key))
    }

    /// The content of the open segment changed (opens one if none is open).
    #[inline]
    pub(crate) fn mark_dirty(&mut self) {
        match &mut self.segment {
            Some(s) => s.dirty = true,
            None => {
                let key = MessageKey(self.next_key);
                self.next_key = self.next_key.wrapping_add(1);
                self.segment = Some(Segment {
                    key,
                    created: false,
                    shown: String::new(),
                    shown_body: 0,
                    pending_body: None,
                    dirty: true,
                });
            }
        }
    }

    /// Nothing new can be shown yet (`block` mode: no new preview block): the segment is
    /// clean until its content changes again.
    pub(crate) fn settle(&mut self) {
        if let Some(s) = self.segment.as_mut() {
            s.dirty = false;
        }
    }

    /// When an update may next be sent, if one is wanted: the content changed, the preview
    /// is not degraded, and nothing is in flight. At or after the end of the throttle window
    /// and of any pause. `None` when no update is wanted (or one is in flight: its ack comes
    /// first).
    #[inline]
    pub(crate) fn ready_at(&self) -> Option<Time> {
        let s = self.segment.as_ref()?;
        if !s.dirty || self.degraded || self.in_flight.is_some() {
            return None;
        }
        let throttle = self
            .last_op_at
            .map_or(Time::ZERO, |t| t.plus_millis(self.throttle_ms));
        Some(throttle.max(self.paused_until.unwrap_or(Time::ZERO)))
    }

    /// The engine rendered the open segment's text (`body` bytes of it are content, the rest
    /// cursor and synthetic closing lines): decides whether to send it, and with which
    /// operation. Either way the segment is clean afterwards. Call [`PreviewState::on_sent`]
    /// when the operation is handed to the host.
    pub(crate) fn prepare(&mut self, text: &str, body: usize) -> Update {
        let transport = self.policy.transport;
        let Some(s) = self.segment.as_mut() else {
            return Update::Identical;
        };
        s.dirty = false;
        if text == s.shown {
            return Update::Identical;
        }
        let content = text.get(..body).unwrap_or(text);
        let shown = s.shown.get(..s.shown_body).unwrap_or(&s.shown);
        if content.len() < shown.len() && shown.starts_with(content) {
            return Update::Regressive;
        }
        s.pending_body = Some(body);
        Update::Send(match transport {
            PreviewTransport::Draft => SendOp::Draft { key: s.key },
            _ if s.created => SendOp::Edit { key: s.key },
            _ => SendOp::Create { key: Some(s.key) },
        })
    }

    /// The operation [`PreviewState::prepare`] chose was handed to the host at `now`.
    pub(crate) fn on_sent(&mut self, key: MessageKey, now: Time) {
        self.in_flight = Some(key);
        self.last_op_at = Some(now);
    }

    /// The host delivered the preview operation on `key` showing `text` (moved in: it is
    /// what the platform shows now). "Message is not modified" counts as delivered.
    pub(crate) fn on_delivered(&mut self, key: MessageKey, text: String) {
        if self.in_flight == Some(key) {
            self.in_flight = None;
        }
        self.failures = 0;
        if let Some(s) = self.segment.as_mut().filter(|s| s.key == key) {
            s.created = true;
            s.shown_body = s.pending_body.take().unwrap_or(text.len()).min(text.len());
            s.shown = text;
        }
    }

    /// The preview operation on `key` failed at `now`. The next update (if still wanted)
    /// sends the latest text, no earlier than `now + retry_after_ms` and the (doubled)
    /// throttle window.
    pub(crate) fn on_failed(
        &mut self,
        key: MessageKey,
        retry_after_ms: Option<u64>,
        permanent: bool,
        now: Time,
    ) {
        if self.in_flight == Some(key) {
            self.in_flight = None;
        }
        self.failures += 1;
        if let Some(wait) = retry_after_ms {
            let until = now.plus_millis(wait);
            self.paused_until = Some(self.paused_until.map_or(until, |t| t.max(until)));
            let cap = MAX_BACKOFF_THROTTLE_MS.max(self.policy.throttle_ms);
            self.throttle_ms = self.throttle_ms.saturating_mul(2).min(cap);
        }
        if permanent || self.failures >= MAX_CONSECUTIVE_FAILURES {
            self.degraded = true;
        }
        if let Some(s) = self.segment.as_mut().filter(|s| s.key == key) {
            s.pending_body = None;
            // What it tried to show is not shown: the latest text goes next time.
            s.dirty = true;
        }
    }

    /// The preview operation on `key` timed out (the host never answered): the dispatcher
    /// aborted streaming; the preview degrades.
    pub(crate) fn on_timed_out(&mut self, key: MessageKey) {
        if self.in_flight == Some(key) {
            self.in_flight = None;
        }
        self.degraded = true;
    }

    /// Closes the open segment (a boundary): the next update opens a new preview under a
    /// new key. `None` when no segment was open.
    pub(crate) fn close_segment(&mut self) -> Option<ClosedSegment> {
        let s = self.segment.take()?;
        // The next preview is a new message: it does not wait for this one's window (a
        // rate limit's pause still holds).
        self.last_op_at = None;
        let in_flight = self.in_flight == Some(s.key);
        Some(ClosedSegment {
            key: s.key,
            has_message: s.created || in_flight,
            shown: s.shown,
            in_flight,
        })
    }
}
