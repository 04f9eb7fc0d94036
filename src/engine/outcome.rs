//! How a turn ended for the user: did every message arrive? The answer a host needs to
//! report "the final reply was not delivered" without decoding the delivery counters.

use super::{Engine, Phase};
use crate::action::SendKind;
use crate::input::SendId;
use crate::payload::Payload;

/// How a turn ended, from [`Engine::outcome`] and the driver's
/// [`StreamEvent::Idle`](crate::driver::StreamEvent::Idle).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct TurnOutcome {
    /// Finished, failed or cancelled.
    pub ending: TurnEnding,
    /// What never reached the user, in send order: sends that failed for good (a permanent
    /// failure, or out of retries) or were still unacknowledged after their delivery timeout
    /// when this was asked. Empty when everything arrived.
    ///
    /// A streamed block's text is not listed here: at the end of the turn the engine sends
    /// exactly the model text not confirmed delivered as the final, so that text arrives
    /// there (or the final is listed). A block's media items are listed, since nothing
    /// sends them again. Preview edits are never listed (the final supersedes them).
    pub undelivered: Vec<UndeliveredSend>,
}

impl TurnOutcome {
    /// Whether the user got the whole reply: the turn was not cancelled and nothing is
    /// undelivered.
    pub fn all_delivered(&self) -> bool {
        self.ending != TurnEnding::Cancelled && self.undelivered.is_empty()
    }

    /// Whether every final message was delivered (none is listed as undelivered).
    pub fn final_delivered(&self) -> bool {
        !self.undelivered.iter().any(|u| u.kind == SendKind::Final)
    }
}

/// How the turn ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TurnEnding {
    /// `Input::Finish`, and every send was answered or given up on (see
    /// [`Action::Idle`](crate::Action::Idle)).
    Finished,
    /// `Input::Fail`: the model failed; what it wrote and the error were sent.
    Failed,
    /// `Input::Cancel`: nothing more was sent after it.
    Cancelled,
}

/// A send that did not reach the user.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct UndeliveredSend {
    /// The id it was sent with.
    pub send_id: SendId,
    /// Tool, block or final.
    pub kind: SendKind,
    /// What was not delivered (for a block: its media only, see
    /// [`TurnOutcome::undelivered`]).
    pub payload: Payload,
    /// Why.
    pub reason: UndeliveredReason,
}

/// Why a send did not reach the user.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum UndeliveredReason {
    /// The host reported a permanent failure, or the retries ran out.
    Failed,
    /// No answer came within the delivery timeout (a late `Delivered` still counts and
    /// removes it from the list).
    TimedOut,
}

impl Engine {
    /// How the turn ended, once it has: `None` while it runs, then (after
    /// [`Action::Idle`](crate::Action::Idle), or after a cancel) whether everything reached
    /// the user and what did not. A late ack for a send whose timeout fired still updates it.
    #[must_use]
    pub fn outcome(&self) -> Option<TurnOutcome> {
        let ending = match self.phase {
            Phase::Idle if self.model_failed => TurnEnding::Failed,
            Phase::Idle => TurnEnding::Finished,
            Phase::Cancelled => TurnEnding::Cancelled,
            _ => return None,
        };
        let timed_out = self
            .dispatcher
            .timed_out()
            .map(|(id, item)| (id, item, UndeliveredReason::TimedOut));
        let failed = self
            .lost
            .iter()
            .map(|(id, item)| (*id, item, UndeliveredReason::Failed));
        let mut undelivered: Vec<UndeliveredSend> = failed
            .chain(timed_out)
            .filter(|(_, item, _)| item.kind != SendKind::Preview)
            .filter_map(|(send_id, item, reason)| {
                let mut payload = item.payload.clone();
                // Model text of a block goes out again in the finals (not after a cancel), as
                // does a live preview's final edit that timed out.
                let resent = item.kind == SendKind::Block
                    || matches!(item.op, crate::action::SendOp::Edit { .. });
                if resent && !item.spans.is_empty() && ending != TurnEnding::Cancelled {
                    payload.text.clear();
                }
                payload.media.retain(|m| !self.media_delivered(m));
                (!payload.is_empty()).then_some(UndeliveredSend {
                    send_id,
                    kind: item.kind,
                    payload,
                    reason,
                })
            })
            .collect();
        undelivered.sort_by_key(|u| u.send_id.0);
        Some(TurnOutcome {
            ending,
            undelivered,
        })
    }

    /// Appends to `out` the text of the sends this engine has queued and not yet asked the
    /// host to deliver, a blank line between two (they are separate messages; preview
    /// updates are left out: the final supersedes them). What a driver that stops before
    /// the turn is idle reports as never sent.
    pub(crate) fn queued_text(&self, out: &mut String) {
        for item in self.dispatcher.queued() {
            if item.kind != SendKind::Preview && !item.payload.text.is_empty() {
                if !out.is_empty() {
                    out.push_str("\n\n");
                }
                out.push_str(&item.payload.text);
            }
        }
    }

    fn media_delivered(&self, media: &str) -> bool {
        self.sent_media.iter().any(|m| m == media)
    }
}
