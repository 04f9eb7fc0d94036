//! How a turn ended (`replystream_engine_outcome`): a read-only snapshot of
//! `Engine::outcome()`, owned by the caller, so a host sees "the final reply was not
//! delivered" without decoding the counters.

use replystream::{TurnEnding, TurnOutcome, UndeliveredReason, UndeliveredSend};

use crate::handle::{free_handle, read_engine, replystream_engine};
use crate::poll::{lane_of, media_views, nul_terminate_payload, send_kind_of};
use crate::result::replystream_result::{self, *};
use crate::types::{replystream_lane, replystream_send_kind, replystream_str};

/// How the turn ended (`replystream_outcome.ending`).
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum replystream_turn_ending {
    /// `replystream_engine_push_finish`, and every send was answered or given up on.
    REPLYSTREAM_TURN_FINISHED = 0,
    /// `replystream_engine_push_fail`: what the model wrote and the error were sent.
    REPLYSTREAM_TURN_FAILED = 1,
    /// `replystream_engine_push_cancel`: nothing more was sent after it.
    REPLYSTREAM_TURN_CANCELLED = 2,
}

/// Why a send did not reach the user (`replystream_undelivered.reason`).
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum replystream_undelivered_reason {
    /// The host reported a permanent failure, or the retries ran out.
    REPLYSTREAM_UNDELIVERED_FAILED = 0,
    /// No ack came within the delivery timeout (a late delivered ack still counts and
    /// removes it from the list of a later outcome).
    REPLYSTREAM_UNDELIVERED_TIMED_OUT = 1,
}

/// A send that did not reach the user, in a `replystream_outcome`. Its views point into the
/// outcome and stay valid until `replystream_outcome_free`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct replystream_undelivered {
    /// The id it was sent with.
    pub send_id: u64,
    /// Tool, block or final (previews are never listed: the final supersedes them).
    pub send_kind: replystream_send_kind,
    /// Failed for good, or timed out.
    pub reason: replystream_undelivered_reason,
    /// The text that did not arrive (empty for a streamed block, whose text goes out again
    /// in the final: only its media are listed).
    pub text: replystream_str,
    /// The media URLs that did not arrive, `media_count` views (NULL when there are none).
    pub media: *const replystream_str,
    /// How many media URLs.
    pub media_count: usize,
    /// The send reported an error (the model failed).
    pub is_error: bool,
    /// One of `replystream_lane`.
    pub lane: replystream_lane,
}

/// How a turn ended, from `replystream_engine_outcome`: whether everything reached the user,
/// and what did not. Read-only; owned by the caller until `replystream_outcome_free` (every
/// view in it stays valid until then). The library allocates it, so later versions may add
/// fields at its end without breaking programs built against this header.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct replystream_outcome {
    /// Finished, failed or cancelled.
    pub ending: replystream_turn_ending,
    /// The user got the whole reply: the turn was not cancelled and nothing is undelivered.
    pub all_delivered: bool,
    /// No final message is listed as undelivered.
    pub final_delivered: bool,
    /// What never reached the user, in send order, `undelivered_count` records (NULL when
    /// there are none): sends that failed for good, or were still unanswered after their
    /// delivery timeout when the outcome was taken.
    pub undelivered: *const replystream_undelivered,
    /// How many undelivered sends.
    pub undelivered_count: usize,
}

/// What `replystream_engine_outcome` allocates: the record the caller sees, then the storage
/// its views point into. `repr(C)` with the record first, so a pointer to the record is a
/// pointer to the whole.
#[repr(C)]
struct OwnedOutcome {
    record: replystream_outcome,
    /// The undelivered records (`record.undelivered` points here).
    items: Vec<replystream_undelivered>,
    /// Each record's media views (`items[i].media` points into `media[i]`).
    media: Vec<Vec<replystream_str>>,
    /// The sends, their strings NUL-terminated (the views point here).
    sends: Vec<UndeliveredSend>,
}

impl OwnedOutcome {
    fn new(outcome: TurnOutcome) -> Box<OwnedOutcome> {
        let ending = match outcome.ending {
            TurnEnding::Finished => replystream_turn_ending::REPLYSTREAM_TURN_FINISHED,
            TurnEnding::Failed => replystream_turn_ending::REPLYSTREAM_TURN_FAILED,
            TurnEnding::Cancelled | _ => replystream_turn_ending::REPLYSTREAM_TURN_CANCELLED,
        };
        let (all_delivered, final_delivered) = (outcome.all_delivered(), outcome.final_delivered());
        let mut sends = outcome.undelivered;
        for send in &mut sends {
            nul_terminate_payload(&mut send.payload);
        }
        let media: Vec<Vec<replystream_str>> = sends
            .iter()
            .map(|s| media_views(&s.payload).collect())
            .collect();
        let items = sends
            .iter()
            .zip(&media)
            .map(|(send, media)| replystream_undelivered {
                send_id: send.send_id.0,
                send_kind: send_kind_of(send.kind),
                reason: match send.reason {
                    UndeliveredReason::Failed => {
                        replystream_undelivered_reason::REPLYSTREAM_UNDELIVERED_FAILED
                    }
                    UndeliveredReason::TimedOut | _ => {
                        replystream_undelivered_reason::REPLYSTREAM_UNDELIVERED_TIMED_OUT
                    }
                },
                text: replystream_str::of_nul_terminated(&send.payload.text),
                media: if media.is_empty() {
                    std::ptr::null()
                } else {
                    media.as_ptr()
                },
                media_count: media.len(),
                is_error: send.payload.is_error,
                lane: lane_of(send.payload.lane),
            })
            .collect::<Vec<_>>();
        // The vectors' heap buffers do not move when the vectors move into the box.
        Box::new(OwnedOutcome {
            record: replystream_outcome {
                ending,
                all_delivered,
                final_delivered,
                undelivered: if items.is_empty() {
                    std::ptr::null()
                } else {
                    items.as_ptr()
                },
                undelivered_count: items.len(),
            },
            items,
            media,
            sends,
        })
    }
}

/// How the turn ended, once it has. Writes to `*out` a new outcome (free it with
/// `replystream_outcome_free`) after the turn went idle (the IDLE action) or was cancelled,
/// and NULL while it runs. A late ack for a send whose timeout fired still counts: take the
/// outcome again to see it.
///
/// Returns `REPLYSTREAM_OK` (with the outcome or NULL), `REPLYSTREAM_NULL_POINTER` (`engine`
/// or `out` NULL), `REPLYSTREAM_POISONED`, or `REPLYSTREAM_PANIC`; `*out` is NULL on every
/// error. Reads only: the last error is left alone.
///
/// # Safety
/// `engine` is NULL or a live handle that no non-`const` call is using; `out` is NULL or
/// points to writable storage for a pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_engine_outcome(
    engine: *const replystream_engine,
    out: *mut *mut replystream_outcome,
) -> replystream_result {
    if out.is_null() {
        return REPLYSTREAM_NULL_POINTER;
    }
    // SAFETY: `out` is non-NULL and writable (caller contract).
    unsafe { out.write(std::ptr::null_mut()) };
    // SAFETY: caller contract.
    unsafe {
        read_engine(engine, |h| {
            if let Some(outcome) = h.engine.outcome() {
                let owned = Box::into_raw(OwnedOutcome::new(outcome));
                // SAFETY: `out` is writable (checked above); `record` is the first field of
                // a `repr(C)` struct, so the pointers are the same.
                out.write(owned.cast::<replystream_outcome>());
            }
            REPLYSTREAM_OK
        })
    }
}

/// Frees an outcome and every view into it. NULL is allowed and does nothing.
///
/// # Safety
/// `outcome` is NULL or an outcome from `replystream_engine_outcome` not freed yet and not in
/// use.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_outcome_free(outcome: *mut replystream_outcome) {
    // SAFETY: caller contract: it came from `Box::into_raw` of an `OwnedOutcome`, whose
    // first field it points to.
    unsafe { free_handle(outcome.cast::<OwnedOutcome>()) }
}
