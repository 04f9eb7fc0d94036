//! Tracing hooks of the driver (cargo feature `tracing`).
//!
//! With the feature on, each stream has a `tracing` span (`replystream.stream`, with its
//! `stream` id and `chat`) that is entered while the driver works for it, and the driver
//! emits events inside it (target `replystream::driver`):
//!
//! | event | level | fields |
//! |---|---|---|
//! | a send handed to the sink | DEBUG | `send_id`, `kind`, `op`, `len` (bytes), `retry` |
//! | a send delivered | TRACE | `send_id` |
//! | a send failed | WARN | `send_id`, `retry_after_ms`, `permanent` |
//! | a send left pending (async sink) | TRACE | `send_id` |
//! | the sink panicked | ERROR | `send_id` |
//! | an engine timer fired | TRACE | `late_us` |
//! | an abort (delivery timeout, cancel) | WARN | `reason` |
//! | an input the engine refused | WARN | `error` |
//! | the turn is idle | INFO, WARN if something was not delivered | `all_delivered`, `final_delivered`, `undelivered` |
//!
//! With the feature off, every hook here is an empty inline function over zero-sized types:
//! the driver compiles to the same code as without them, and `tracing` is not a dependency.

use super::{Delivery, StreamId};
use crate::action::{AbortReason, SendRequest};
use crate::engine::TurnOutcome;
use crate::error::Error;
use crate::input::SendId;

/// One stream's tracing state: its span, and the last send that failed (so the next send
/// with that id is reported as a retry).
#[derive(Debug)]
pub(super) struct StreamTrace {
    #[cfg(feature = "tracing")]
    span: tracing::Span,
    #[cfg(feature = "tracing")]
    failed: Option<SendId>,
}

/// The stream's span, entered for as long as this guard lives.
pub(super) struct Entered {
    #[cfg(feature = "tracing")]
    _guard: tracing::span::EnteredSpan,
}

impl StreamTrace {
    #[inline(always)]
    pub(super) fn new(id: StreamId, chat: &str) -> StreamTrace {
        #[cfg(not(feature = "tracing"))]
        let _ = (id, chat);
        StreamTrace {
            #[cfg(feature = "tracing")]
            span: tracing::info_span!(
                target: "replystream::driver",
                "replystream.stream",
                stream = id.0,
                chat = chat
            ),
            #[cfg(feature = "tracing")]
            failed: None,
        }
    }

    /// Enters the stream's span.
    #[inline(always)]
    pub(super) fn enter(&self) -> Entered {
        Entered {
            #[cfg(feature = "tracing")]
            _guard: self.span.clone().entered(),
        }
    }

    #[inline(always)]
    pub(super) fn send(&mut self, send: &SendRequest) {
        #[cfg(feature = "tracing")]
        {
            let retry = self.failed == Some(send.send_id);
            tracing::debug!(
                target: "replystream::driver",
                send_id = send.send_id.0,
                kind = send.kind.name(),
                op = send.op.name(),
                len = send.payload.text.len(),
                retry,
                "send"
            );
        }
        #[cfg(not(feature = "tracing"))]
        let _ = send;
    }

    #[inline(always)]
    pub(super) fn delivery(&mut self, send_id: SendId, delivery: &Delivery) {
        #[cfg(feature = "tracing")]
        match delivery {
            Delivery::Delivered { .. } => {
                tracing::trace!(target: "replystream::driver", send_id = send_id.0, "delivered");
            }
            Delivery::Failed {
                retry_after_ms,
                permanent,
            } => {
                self.failed = Some(send_id);
                tracing::warn!(
                    target: "replystream::driver",
                    send_id = send_id.0,
                    retry_after_ms = *retry_after_ms,
                    permanent = *permanent,
                    "send failed"
                );
            }
            Delivery::Pending => {
                tracing::trace!(target: "replystream::driver", send_id = send_id.0, "pending");
            }
        }
        #[cfg(not(feature = "tracing"))]
        let _ = (send_id, delivery);
    }

    #[inline(always)]
    pub(super) fn sink_panicked(&mut self, send_id: SendId) {
        #[cfg(feature = "tracing")]
        {
            self.failed = Some(send_id);
            tracing::error!(target: "replystream::driver", send_id = send_id.0, "sink panicked");
        }
        #[cfg(not(feature = "tracing"))]
        let _ = send_id;
    }

    /// An engine timer fired (before the driver enters the span to push it).
    #[inline(always)]
    pub(super) fn timer(&self, late: std::time::Duration) {
        #[cfg(feature = "tracing")]
        self.span.in_scope(|| {
            tracing::trace!(
                target: "replystream::driver",
                late_us = u64::try_from(late.as_micros()).unwrap_or(u64::MAX),
                "timer"
            )
        });
        #[cfg(not(feature = "tracing"))]
        let _ = late;
    }

    #[inline(always)]
    pub(super) fn abort(&self, reason: AbortReason) {
        #[cfg(feature = "tracing")]
        tracing::warn!(target: "replystream::driver", reason = reason.name(), "abort");
        #[cfg(not(feature = "tracing"))]
        let _ = reason;
    }

    #[inline(always)]
    pub(super) fn refused(&self, error: &Error) {
        #[cfg(feature = "tracing")]
        tracing::warn!(target: "replystream::driver", error = %error, "input refused");
        #[cfg(not(feature = "tracing"))]
        let _ = error;
    }

    #[inline(always)]
    pub(super) fn idle(&self, outcome: &TurnOutcome) {
        #[cfg(feature = "tracing")]
        {
            let (all, fin, n) = (
                outcome.all_delivered(),
                outcome.final_delivered(),
                outcome.undelivered.len(),
            );
            if all {
                tracing::info!(target: "replystream::driver", all_delivered = all, final_delivered = fin, undelivered = n, "idle");
            } else {
                tracing::warn!(target: "replystream::driver", all_delivered = all, final_delivered = fin, undelivered = n, "idle");
            }
        }
        #[cfg(not(feature = "tracing"))]
        let _ = outcome;
    }
}

#[cfg(all(test, not(feature = "tracing")))]
mod tests {
    use super::*;

    /// Without the feature the hooks carry no data: nothing is stored per stream.
    #[test]
    fn nothing_is_kept_without_the_feature() {
        assert_eq!(std::mem::size_of::<StreamTrace>(), 0);
        assert_eq!(std::mem::size_of::<Entered>(), 0);
    }
}
