//! The plain C types the functions exchange: text views, the action record and its enums,
//! and the counters.

use std::ffi::c_char;

/// "No value" for the 64-bit arguments that document it (`retry_after_ms` of
/// `replystream_engine_push_delivery_failed`), and what `replystream_engine_next_deadline`
/// writes when there is no deadline.
pub const REPLYSTREAM_NONE: u64 = u64::MAX;

/// A read-only view of UTF-8 text: a pointer and a length in bytes.
///
/// Handed out by the library, it is never NULL, and `ptr[len]` is always a readable NUL
/// byte, so `ptr` may also be used as a C string when the text has no interior NUL (an empty
/// text points to a NUL byte). Each function says how long its views stay valid. Print with
/// `printf("%.*s", (int)s.len, s.ptr)`.
///
/// Passed in (the media URLs of a payload), it is the caller's text, read during the call
/// only; it needs no NUL, and `{NULL, 0}` is the empty text.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct replystream_str {
    /// The first byte.
    pub ptr: *const c_char,
    /// The length in bytes, without the trailing NUL.
    pub len: usize,
}

impl replystream_str {
    /// The empty text (a static NUL byte).
    pub const EMPTY: replystream_str = replystream_str {
        ptr: c"".as_ptr(),
        len: 0,
    };

    /// A view of `s`, whose last byte must be the NUL the view leaves out.
    pub(crate) fn of_nul_terminated(s: &str) -> replystream_str {
        debug_assert!(s.ends_with('\0'));
        replystream_str {
            ptr: s.as_ptr().cast(),
            len: s.len().saturating_sub(1),
        }
    }
}

/// What kind of action `replystream_engine_poll_action` returned.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum replystream_action_kind {
    /// No action (after `REPLYSTREAM_DONE`, or an action kind this version does not know).
    REPLYSTREAM_ACTION_NONE = 0,
    /// Deliver a message, then ack it with `replystream_engine_push_delivered` or
    /// `replystream_engine_push_delivery_failed` and the same `send_id`.
    REPLYSTREAM_ACTION_SEND = 1,
    /// The earliest deadline changed: with `has_deadline`, call
    /// `replystream_engine_push_timer` at (or after) `deadline_ms`; without, the earlier
    /// request is cancelled.
    REPLYSTREAM_ACTION_ARM_TIMER = 2,
    /// Streaming stopped, for `abort_reason`.
    REPLYSTREAM_ACTION_ABORT = 3,
    /// The turn is over: it finished and every send was answered (acknowledged, failed for
    /// good, or given up on after its delivery timeout); nothing more is sent. Emitted
    /// once, not after a cancel. It does not mean everything arrived:
    /// `replystream_engine_outcome` says what did not.
    REPLYSTREAM_ACTION_IDLE = 4,
}

/// Which stream a send belongs to.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum replystream_send_kind {
    /// A tool summary.
    REPLYSTREAM_SEND_TOOL = 0,
    /// A block streamed while the model writes.
    REPLYSTREAM_SEND_BLOCK = 1,
    /// A final message, sent when the turn finishes.
    REPLYSTREAM_SEND_FINAL = 2,
    /// A live preview message (created, then edited in place), or a draft bubble.
    REPLYSTREAM_SEND_PREVIEW = 3,
}

/// What to do on the platform.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum replystream_send_op {
    /// Post a new message. With `has_message_key`, the engine will edit or delete it later:
    /// ack it with the platform's message id as `message_ref`.
    REPLYSTREAM_OP_CREATE = 0,
    /// Edit the message created under `message_key` (its platform id is `message_ref`).
    REPLYSTREAM_OP_EDIT = 1,
    /// Delete the message created under `message_key` (its platform id is `message_ref`).
    REPLYSTREAM_OP_DELETE = 2,
    /// Show or update the ephemeral draft bubble `message_key` (nothing is posted).
    REPLYSTREAM_OP_DRAFT = 3,
}

/// Which visibility class a send belongs to.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum replystream_lane {
    /// The answer the user asked for.
    REPLYSTREAM_LANE_ANSWER = 0,
    /// The model's reasoning, shown separately.
    REPLYSTREAM_LANE_REASONING = 1,
    /// A status line such as a tool summary.
    REPLYSTREAM_LANE_STATUS = 2,
}

/// Which message a send replies to.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum replystream_reply_to {
    /// Not a reply.
    REPLYSTREAM_REPLY_NONE = 0,
    /// A reply to the user message this turn answers.
    REPLYSTREAM_REPLY_CURRENT = 1,
    /// A reply to the platform message whose id is `reply_to_id`.
    REPLYSTREAM_REPLY_ID = 2,
}

/// Why the engine stopped streaming.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum replystream_abort_reason {
    /// Not an abort.
    REPLYSTREAM_ABORT_NONE = 0,
    /// The host cancelled the turn (`replystream_engine_push_cancel`).
    REPLYSTREAM_ABORT_CANCELLED = 1,
    /// A send was not acknowledged within the delivery timeout: later block sends are
    /// skipped, and the undelivered text is sent as the final at finish.
    REPLYSTREAM_ABORT_DELIVERY_TIMEOUT = 2,
}

/// The format a send's text is in (SPEC §16): what to post it as.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum replystream_format {
    /// CommonMark with GFM tables, as written (generic, Google Chat): post as Markdown.
    REPLYSTREAM_FORMAT_MARKDOWN = 0,
    /// Discord's Markdown (tables per table mode, `@everyone`/`@here` neutralised unless
    /// allowed): post as the message content.
    REPLYSTREAM_FORMAT_DISCORD = 1,
    /// Telegram HTML: post with `parse_mode=HTML`.
    REPLYSTREAM_FORMAT_TELEGRAM_HTML = 2,
    /// Telegram plain text plus `entities` (post the text with the entities, no parse mode).
    REPLYSTREAM_FORMAT_TELEGRAM_ENTITIES = 3,
    /// Slack mrkdwn: post as `text` (mrkdwn on).
    REPLYSTREAM_FORMAT_SLACK_MRKDWN = 4,
    /// WhatsApp's markers (`*bold*`, `_italic_`, `~strike~`, monospace).
    REPLYSTREAM_FORMAT_WHATSAPP = 5,
    /// Plain text, markup removed, links as `text (url)` (Signal, iMessage).
    REPLYSTREAM_FORMAT_PLAIN = 6,
}

/// The type of a Telegram message entity (`replystream_entity.kind`); `type_name` spells it
/// as the Bot API does.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum replystream_entity_kind {
    /// A type this version of the header does not name: read `type_name`.
    REPLYSTREAM_ENTITY_UNKNOWN = 0,
    /// `bold`.
    REPLYSTREAM_ENTITY_BOLD = 1,
    /// `italic`.
    REPLYSTREAM_ENTITY_ITALIC = 2,
    /// `strikethrough`.
    REPLYSTREAM_ENTITY_STRIKETHROUGH = 3,
    /// `code` (inline).
    REPLYSTREAM_ENTITY_CODE = 4,
    /// `pre` (a code block; `language` may name its language).
    REPLYSTREAM_ENTITY_PRE = 5,
    /// `text_link` (`url` is the link).
    REPLYSTREAM_ENTITY_TEXT_LINK = 6,
    /// `blockquote`.
    REPLYSTREAM_ENTITY_BLOCKQUOTE = 7,
    /// `expandable_blockquote` (reasoning, collapsed).
    REPLYSTREAM_ENTITY_EXPANDABLE_BLOCKQUOTE = 8,
}

/// A Telegram message entity of a `telegram-entities` text: a span in UTF-16 code units,
/// as the Bot API's `MessageEntity` (`type`, `offset`, `length`, `url`, `language`). Owned
/// by whatever handed it out, with the same lifetime as that text.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct replystream_entity {
    /// One of `replystream_entity_kind`.
    pub kind: replystream_entity_kind,
    /// The entity type as the Bot API spells it (`bold`, `text_link`, …); a static string.
    pub type_name: replystream_str,
    /// Where the span starts, in UTF-16 code units from the start of the text.
    pub offset: usize,
    /// How long it is, in UTF-16 code units.
    pub length: usize,
    /// `text_link`: the URL (empty otherwise).
    pub url: replystream_str,
    /// `pre`: the code block's language (empty when none, and for other types).
    pub language: replystream_str,
}

/// One action for the host, owned by the engine handle and returned by
/// `replystream_engine_poll_action`. Only the fields of `kind` are meaningful; the others
/// are zero, false or empty views.
///
/// The library owns the record, so later versions may add fields at its end without
/// breaking programs built against this header.
///
/// Lifetime: the record and every view in it (text, markdown, media, entities and their
/// url and language, reply_to_id, message_ref) stay valid until the next
/// `replystream_engine_poll_action` or `replystream_engine_free` on that handle; pushes do
/// not invalidate them. Copy what you need longer. `format_name` and each entity's
/// `type_name` are static.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct replystream_action {
    /// One of `replystream_action_kind`.
    pub kind: replystream_action_kind,
    /// SEND: the id to echo in the ack.
    pub send_id: u64,
    /// SEND: one of `replystream_send_kind`.
    pub send_kind: replystream_send_kind,
    /// SEND: one of `replystream_send_op`.
    pub op: replystream_send_op,
    /// SEND: whether the operation names a message (`message_key` is meaningful): always
    /// for EDIT, DELETE and DRAFT, and for a CREATE the engine will edit or delete later.
    pub has_message_key: bool,
    /// SEND with `has_message_key`: the engine's name for the message.
    pub message_key: u32,
    /// SEND on a keyed message: whether the host gave a platform id when it acked the
    /// message's CREATE (`message_ref` is then that id).
    pub has_message_ref: bool,
    /// SEND with `has_message_ref`: the platform id from the CREATE's ack (empty otherwise).
    pub message_ref: replystream_str,
    /// SEND: the text to post, as is, in `format` (Telegram HTML, Slack mrkdwn, …; with
    /// `telegram-entities` the plain text the `entities` index). May be empty when there is
    /// media, and for DELETE. `markdown` is the Markdown it was rendered from.
    pub text: replystream_str,
    /// SEND: the media URLs, `media_count` views in an array (NULL when there are none).
    pub media: *const replystream_str,
    /// SEND: how many media URLs.
    pub media_count: usize,
    /// SEND: this message reports an error (the model failed).
    pub is_error: bool,
    /// SEND: audio in the media should be sent as a voice note.
    pub audio_as_voice: bool,
    /// SEND: one of `replystream_lane`.
    pub lane: replystream_lane,
    /// SEND: one of `replystream_reply_to`.
    pub reply_to: replystream_reply_to,
    /// SEND with reply_to ID: the platform message id (empty otherwise).
    pub reply_to_id: replystream_str,
    /// ARM_TIMER: whether there is a deadline (false: the earlier request is cancelled).
    pub has_deadline: bool,
    /// ARM_TIMER with `has_deadline`: when to push a timer, in the caller's milliseconds.
    pub deadline_ms: u64,
    /// ABORT: one of `replystream_abort_reason`.
    pub abort_reason: replystream_abort_reason,
    /// SEND: one of `replystream_format`, the format `text` is in (the engine's format).
    pub format: replystream_format,
    /// SEND: the format's name (`markdown`, `discord`, `telegram-html`, `telegram-entities`,
    /// `slack-mrkdwn`, `whatsapp`, `plain`); a static string. Empty for other kinds.
    pub format_name: replystream_str,
    /// SEND: the Markdown `text` was rendered from (equal to `text` in format `markdown`).
    pub markdown: replystream_str,
    /// SEND in `telegram-entities`: the message entities of `text`, `entity_count` records
    /// in an array (NULL when there are none, and in every other format).
    pub entities: *const replystream_entity,
    /// SEND: how many entities.
    pub entity_count: usize,
}

impl replystream_action {
    /// No action: every field zero, false or empty.
    pub const NONE: replystream_action = replystream_action {
        kind: replystream_action_kind::REPLYSTREAM_ACTION_NONE,
        send_id: 0,
        send_kind: replystream_send_kind::REPLYSTREAM_SEND_TOOL,
        op: replystream_send_op::REPLYSTREAM_OP_CREATE,
        has_message_key: false,
        message_key: 0,
        has_message_ref: false,
        message_ref: replystream_str::EMPTY,
        text: replystream_str::EMPTY,
        media: std::ptr::null(),
        media_count: 0,
        is_error: false,
        audio_as_voice: false,
        lane: replystream_lane::REPLYSTREAM_LANE_ANSWER,
        reply_to: replystream_reply_to::REPLYSTREAM_REPLY_NONE,
        reply_to_id: replystream_str::EMPTY,
        has_deadline: false,
        deadline_ms: 0,
        abort_reason: replystream_abort_reason::REPLYSTREAM_ABORT_NONE,
        format: replystream_format::REPLYSTREAM_FORMAT_MARKDOWN,
        format_name: replystream_str::EMPTY,
        markdown: replystream_str::EMPTY,
        entities: std::ptr::null(),
        entity_count: 0,
    };
}

/// Counters of what an engine saw and did, filled by `replystream_engine_stats`. Later
/// versions may add fields at the end: the caller passes `sizeof(replystream_stats)` so the
/// library writes only what the caller's struct holds.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct replystream_stats {
    /// Sequence-number gaps seen (events missing in between).
    pub gaps: u64,
    /// Events ignored because their sequence number was repeated or older.
    pub duplicates_ignored: u64,
    /// Snapshots that diverged from the accepted text.
    pub divergences: u64,
    /// Host payloads (tool results, media) dropped as already sent or pending.
    pub payloads_deduped: u64,
    /// Acks naming a send the engine was not waiting for.
    pub unknown_acks: u64,
    /// Sends handed to the host (retries included).
    pub sends: u64,
    /// Sends confirmed delivered (late acks included).
    pub delivered: u64,
    /// Failure acks received.
    pub failures: u64,
    /// Sends retried after a failure.
    pub retries: u64,
    /// Sends that failed for good (permanent, or out of retries).
    pub dropped: u64,
    /// Sends whose delivery timed out.
    pub timeouts: u64,
    /// Block sends skipped after an abort (their text goes to the final).
    pub skipped_blocks: u64,
    /// Live preview operations (create, edit, draft) handed to the host; the final's edit of
    /// the preview message is a FINAL send and not counted here.
    pub preview_updates: u64,
    /// Live preview updates not sent because the preview text was identical to, or a strict
    /// prefix of, what the platform already showed.
    pub preview_skips: u64,
    /// Media references written by the model that the media policy refused: a URL to a
    /// private host, of another scheme or (when refused) `http://`, left in the text; a
    /// local path outside the media roots, removed from it.
    pub media_refused: u64,
}
