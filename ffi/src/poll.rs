//! Outputs: the poll loop (`replystream_engine_poll_action`) and the read-only getters.

use replystream::{
    AbortReason, Action, Lane, Payload, ReplyTarget, SendKind, SendOp, SendRequest, Time,
};

use crate::handle::{read_engine, replystream_engine, with_engine};
use crate::render::{entity_views, format_of, nul_terminate_rendered};
use crate::result::replystream_result::{self, *};
use crate::types::{
    REPLYSTREAM_NONE, replystream_abort_reason, replystream_action, replystream_action_kind,
    replystream_lane, replystream_reply_to, replystream_send_kind, replystream_send_op,
    replystream_stats, replystream_str,
};

/// NUL-terminates every string of a payload, so views can point into it.
pub(crate) fn nul_terminate_payload(payload: &mut Payload) {
    payload.text.push('\0');
    for url in &mut payload.media {
        url.push('\0');
    }
    if let Some(ReplyTarget::Id(id)) = &mut payload.reply_to {
        id.push('\0');
    }
}

/// NUL-terminates every string of a send (its rendered text and entities included), so
/// the action's views can point into it.
fn nul_terminate(send: &mut SendRequest) {
    nul_terminate_payload(&mut send.payload);
    if let Some(message_ref) = &mut send.message_ref {
        message_ref.push('\0');
    }
    if let Some(rendered) = &mut send.rendered {
        nul_terminate_rendered(rendered);
    }
}

/// Views of a NUL-terminated payload's media URLs.
pub(crate) fn media_views(payload: &Payload) -> impl Iterator<Item = replystream_str> + '_ {
    payload
        .media
        .iter()
        .map(|url| replystream_str::of_nul_terminated(url))
}

/// The C kind of a send.
pub(crate) fn send_kind_of(kind: SendKind) -> replystream_send_kind {
    match kind {
        SendKind::Tool => replystream_send_kind::REPLYSTREAM_SEND_TOOL,
        SendKind::Block => replystream_send_kind::REPLYSTREAM_SEND_BLOCK,
        SendKind::Final => replystream_send_kind::REPLYSTREAM_SEND_FINAL,
        SendKind::Preview | _ => replystream_send_kind::REPLYSTREAM_SEND_PREVIEW,
    }
}

/// The C lane of a payload.
pub(crate) fn lane_of(lane: Lane) -> replystream_lane {
    match lane {
        Lane::Answer => replystream_lane::REPLYSTREAM_LANE_ANSWER,
        Lane::Reasoning => replystream_lane::REPLYSTREAM_LANE_REASONING,
        Lane::Status | _ => replystream_lane::REPLYSTREAM_LANE_STATUS,
    }
}

/// Fills the handle's action record for `action`, keeping a SEND's strings in the handle.
fn fill_action(h: &mut replystream_engine, action: Action) {
    use replystream_action_kind::*;
    let mut out = replystream_action::NONE;
    h.media_views.clear();
    h.entity_views.clear();
    match action {
        Action::Send(mut send) => {
            nul_terminate(&mut send);
            let send = h.last_send.insert(send);
            out.kind = REPLYSTREAM_ACTION_SEND;
            out.send_id = send.send_id.0;
            out.send_kind = send_kind_of(send.kind);
            out.op = match send.op {
                SendOp::Create { .. } => replystream_send_op::REPLYSTREAM_OP_CREATE,
                SendOp::Edit { .. } => replystream_send_op::REPLYSTREAM_OP_EDIT,
                SendOp::Delete { .. } => replystream_send_op::REPLYSTREAM_OP_DELETE,
                SendOp::Draft { .. } | _ => replystream_send_op::REPLYSTREAM_OP_DRAFT,
            };
            if let Some(key) = send.op.key() {
                out.has_message_key = true;
                out.message_key = key.0;
            }
            if let Some(message_ref) = &send.message_ref {
                out.has_message_ref = true;
                out.message_ref = replystream_str::of_nul_terminated(message_ref);
            }
            // The text to post (rendered, or the Markdown itself) and its Markdown.
            out.text = replystream_str::of_nul_terminated(send.text());
            out.markdown = replystream_str::of_nul_terminated(send.markdown());
            (out.format, out.format_name) = format_of(send.format);
            entity_views(send.entities(), &mut h.entity_views);
            out.entity_count = h.entity_views.len();
            if out.entity_count > 0 {
                out.entities = h.entity_views.as_ptr();
            }
            let payload = &send.payload;
            h.media_views.extend(media_views(payload));
            out.media_count = h.media_views.len();
            if out.media_count > 0 {
                out.media = h.media_views.as_ptr();
            }
            out.is_error = payload.is_error;
            out.audio_as_voice = payload.audio_as_voice;
            out.lane = lane_of(payload.lane);
            (out.reply_to, out.reply_to_id) = match &payload.reply_to {
                Some(ReplyTarget::Current) => (
                    replystream_reply_to::REPLYSTREAM_REPLY_CURRENT,
                    replystream_str::EMPTY,
                ),
                Some(ReplyTarget::Id(id)) => (
                    replystream_reply_to::REPLYSTREAM_REPLY_ID,
                    replystream_str::of_nul_terminated(id),
                ),
                _ => (
                    replystream_reply_to::REPLYSTREAM_REPLY_NONE,
                    replystream_str::EMPTY,
                ),
            };
        }
        Action::ArmTimer { deadline } => {
            out.kind = REPLYSTREAM_ACTION_ARM_TIMER;
            if let Some(deadline) = deadline {
                out.has_deadline = true;
                out.deadline_ms = deadline.as_millis();
            }
        }
        Action::Abort { reason } => {
            out.kind = REPLYSTREAM_ACTION_ABORT;
            out.abort_reason = match reason {
                AbortReason::Cancelled => replystream_abort_reason::REPLYSTREAM_ABORT_CANCELLED,
                AbortReason::DeliveryTimeout | _ => {
                    replystream_abort_reason::REPLYSTREAM_ABORT_DELIVERY_TIMEOUT
                }
            };
        }
        Action::Idle => out.kind = REPLYSTREAM_ACTION_IDLE,
        // A variant this version of the C ABI does not know yet: reported as NONE.
        _ => {}
    }
    h.action = out;
}

/// Takes the next pending action. Returns `REPLYSTREAM_OK` with `*out` pointing to it, or
/// `REPLYSTREAM_DONE` (a status, not an error) when none is pending; `*out` then points to a
/// record of kind `REPLYSTREAM_ACTION_NONE`. Call it after every push until it returns DONE,
/// and execute the actions in order. Errors: `REPLYSTREAM_NULL_POINTER` (`engine` or `out`
/// NULL), `REPLYSTREAM_POISONED`, `REPLYSTREAM_PANIC`.
///
/// The record is owned by the handle and stays valid, views included, until the next
/// `replystream_engine_poll_action` or `replystream_engine_free` on this handle; pushes do
/// not invalidate it.
///
/// # Safety
/// `engine` is NULL or a live handle not used by another call; `out` is NULL or points to
/// writable storage for a pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_engine_poll_action(
    engine: *mut replystream_engine,
    out: *mut *const replystream_action,
) -> replystream_result {
    // SAFETY: caller contract.
    unsafe {
        with_engine(engine, |h| {
            if out.is_null() {
                h.set_error("out is NULL");
                return REPLYSTREAM_NULL_POINTER;
            }
            h.last_send = None;
            let code = match h.engine.poll_action() {
                Some(action) => {
                    fill_action(h, action);
                    REPLYSTREAM_OK
                }
                None => {
                    h.media_views.clear();
                    h.entity_views.clear();
                    h.action = replystream_action::NONE;
                    REPLYSTREAM_DONE
                }
            };
            // SAFETY: `out` is non-NULL and writable (caller contract).
            out.write(&h.action);
            code
        })
    }
}

/// The media URL number `index` (from 0) of the action last returned by
/// `replystream_engine_poll_action` (the same view as `action->media[index]`). Returns
/// `REPLYSTREAM_OUT_OF_RANGE` (and an empty view) unless that action is a SEND with
/// `index < media_count`; `REPLYSTREAM_NULL_POINTER` if `engine` or `out` is NULL. Reads only:
/// the last error is left alone.
///
/// # Safety
/// `engine` is NULL or a live handle that no non-`const` call is using; `out` is NULL or
/// points to a writable `replystream_str`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_action_media(
    engine: *const replystream_engine,
    index: usize,
    out: *mut replystream_str,
) -> replystream_result {
    // SAFETY: caller contract.
    unsafe {
        read_engine(engine, |h| {
            if out.is_null() {
                return REPLYSTREAM_NULL_POINTER;
            }
            let (view, code) = match h.media_views.get(index) {
                Some(view) => (*view, REPLYSTREAM_OK),
                None => (replystream_str::EMPTY, REPLYSTREAM_OUT_OF_RANGE),
            };
            // SAFETY: `out` is non-NULL and writable (caller contract).
            out.write(view);
            code
        })
    }
}

/// The earliest deadline the engine waits for. Returns true and writes it to `*deadline_ms`
/// (the caller's milliseconds) when there is one; returns false and writes
/// `REPLYSTREAM_NONE` when there is none, and for a NULL or poisoned handle (`deadline_ms`
/// may be NULL to only ask whether there is one). Sleep until then (or until the next model
/// event), then call `replystream_engine_push_timer`. Reads only.
///
/// # Safety
/// `engine` is NULL or a live handle that no non-`const` call is using; `deadline_ms` is
/// NULL or points to a writable `uint64_t`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_engine_next_deadline(
    engine: *const replystream_engine,
    deadline_ms: *mut u64,
) -> bool {
    let mut deadline = None;
    // SAFETY: caller contract.
    unsafe {
        read_engine(engine, |h| {
            deadline = h.engine.poll_timeout().map(Time::as_millis);
            REPLYSTREAM_OK
        })
    };
    if !deadline_ms.is_null() {
        // SAFETY: non-NULL and writable (caller contract).
        unsafe { deadline_ms.write(deadline.unwrap_or(REPLYSTREAM_NONE)) };
    }
    deadline.is_some()
}

/// True when the turn is over (finished or failed and every send acknowledged, or
/// cancelled) and no action is pending. False for a NULL or poisoned handle. Reads only.
///
/// # Safety
/// `engine` is NULL or a live handle that no non-`const` call is using.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_engine_is_done(engine: *const replystream_engine) -> bool {
    let mut done = false;
    // SAFETY: caller contract.
    unsafe {
        read_engine(engine, |h| {
            done = h.engine.is_done();
            REPLYSTREAM_OK
        })
    };
    done
}

/// Copies the engine's counters into `*out`, writing at most `out_size` bytes: pass
/// `sizeof(replystream_stats)`, so a program built against an older, shorter struct still
/// works with a newer library. Returns `REPLYSTREAM_NULL_POINTER` (`engine` or `out` NULL),
/// `REPLYSTREAM_POISONED`, or `REPLYSTREAM_OK`. Reads only.
///
/// # Safety
/// `engine` is NULL or a live handle that no non-`const` call is using; `out` is NULL or
/// points to `out_size` writable bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn replystream_engine_stats(
    engine: *const replystream_engine,
    out: *mut replystream_stats,
    out_size: usize,
) -> replystream_result {
    // SAFETY: caller contract.
    unsafe {
        read_engine(engine, |h| {
            if out.is_null() {
                return REPLYSTREAM_NULL_POINTER;
            }
            let s = h.engine.stats();
            let d = s.dispatch;
            let stats = replystream_stats {
                gaps: s.gaps,
                duplicates_ignored: s.duplicates_ignored,
                divergences: s.divergences,
                payloads_deduped: s.payloads_deduped,
                unknown_acks: s.unknown_acks,
                sends: d.sends,
                delivered: d.delivered,
                failures: d.failures,
                retries: d.retries,
                dropped: d.dropped,
                timeouts: d.timeouts,
                skipped_blocks: d.skipped_blocks,
                preview_updates: s.preview_updates,
                preview_skips: s.preview_skips,
                media_refused: s.media_refused,
            };
            let n = out_size.min(size_of::<replystream_stats>());
            // SAFETY: `out` points to `out_size >= n` writable bytes (caller contract); the
            // source is a local of at least `n` bytes; they do not overlap.
            std::ptr::copy_nonoverlapping((&raw const stats).cast::<u8>(), out.cast::<u8>(), n);
            REPLYSTREAM_OK
        })
    }
}
