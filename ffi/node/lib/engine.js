'use strict';
// The engine: one reply stream, driven by pushes (each with the caller's time) and polls.

const args = require('./args');
const native = require('./native');
const { camel, errorFor } = require('./errors');
const { channelBytes, plan, withOptions } = require('./options');

const { ResultCode, koffi } = native;

const ACTION_KINDS = ['none', 'send', 'arm_timer', 'abort', 'idle'];
const SEND_KINDS = ['tool', 'block', 'final', 'preview'];
const OPS = ['create', 'edit', 'delete', 'draft'];
const LANES = ['answer', 'reasoning', 'status'];
const REPLY_TO = ['none', 'current', 'id'];
const ABORT_REASONS = [null, 'cancelled', 'delivery_timeout'];
const ENDINGS = ['finished', 'failed', 'cancelled'];
const UNDELIVERED_REASONS = ['failed', 'timed_out'];

/** A name from `table` for a C number (a number this version does not know is named so). */
function named(table, value) {
  return table[value] ?? `unknown(${value})`;
}

// The argument a refusal concerns, by code, where the library's detail does not name it
// (it names the C function for invalid UTF-8, and the send by number).
const ACK_FIELD = { [ResultCode.UNKNOWN_SEND]: 'sendId' };
const DELIVERED_FIELDS = { ...ACK_FIELD, [ResultCode.INVALID_UTF8]: 'messageRef' };
const TEXT_FIELD = { [ResultCode.INVALID_UTF8]: 'text' };
// A payload's media argument is `media` or `urls`; the library counts its items as media[i].
const payloadFields = (urlsName) => ({
  ...TEXT_FIELD,
  [ResultCode.INVALID_ARGUMENT]: (detail) => {
    const item = /^media(\[\d+\])/.exec(detail);
    return item ? `${urlsName}${item[1]}` : urlsName;
  },
});
const PAYLOAD_FIELDS = { media: payloadFields('media'), urls: payloadFields('urls') };
const FIELDS_BY_ARGUMENT = {
  text: TEXT_FIELD,
  name: { [ResultCode.INVALID_UTF8]: 'name' },
  error: { [ResultCode.INVALID_UTF8]: 'error' },
};

// One 64-bit out-slot for the hot getters (a pointer, a deadline), read right after the
// call; calls are synchronous, so every engine can share it.
const SLOT = new BigUint64Array(1);

const STATS_SIZE = koffi.sizeof(native.StatsRecord);

/** Engines garbage-collected without close() are freed all the same. */
const registry = new FinalizationRegistry((handle) => {
  native.lib().replystream_engine_free(handle);
});

function actionOf(raw) {
  const kind = named(ACTION_KINDS, raw.kind);
  switch (kind) {
    case 'send': {
      const replyTo = named(REPLY_TO, raw.reply_to);
      const text = native.strText(raw.text);
      return {
        kind,
        sendId: Number(raw.send_id),
        sendKind: named(SEND_KINDS, raw.send_kind),
        op: named(OPS, raw.op),
        messageKey: raw.has_message_key ? raw.message_key : null,
        messageRef: raw.has_message_ref ? native.strText(raw.message_ref) : null,
        text,
        format: named(native.FORMATS, raw.format),
        // In format markdown the text to post is the Markdown itself (one view, one decode).
        markdown: raw.markdown.ptr === raw.text.ptr ? text : native.strText(raw.markdown),
        entities: native.entityArray(raw.entities, raw.entity_count),
        media: native.strArray(raw.media, raw.media_count),
        isError: raw.is_error,
        audioAsVoice: raw.audio_as_voice,
        lane: named(LANES, raw.lane),
        replyTo,
        replyToId: replyTo === 'id' ? native.strText(raw.reply_to_id) : null,
      };
    }
    case 'arm_timer':
      return { kind, deadlineMs: raw.has_deadline ? Number(raw.deadline_ms) : null };
    case 'abort':
      return { kind, reason: named(ABORT_REASONS, raw.abort_reason) };
    default:
      return { kind };
  }
}

function outcomeOf(raw) {
  const count = Number(raw.undelivered_count);
  const records = count ? koffi.decode(raw.undelivered, native.UndeliveredRecord, count) : [];
  const undelivered = records.map((u) => Object.freeze({
    sendId: Number(u.send_id),
    sendKind: named(SEND_KINDS, u.send_kind),
    reason: named(UNDELIVERED_REASONS, u.reason),
    text: native.strText(u.text),
    media: Object.freeze(native.strArray(u.media, u.media_count)),
    isError: u.is_error,
    lane: named(LANES, u.lane),
  }));
  return Object.freeze({
    ending: named(ENDINGS, raw.ending),
    allDelivered: raw.all_delivered,
    finalDelivered: raw.final_delivered,
    undelivered: Object.freeze(undelivered),
  });
}

/**
 * One reply stream (one turn). Create one per reply, push each model event with the current
 * time (`nowMs`: whole milliseconds from the caller's monotonic clock), then drain `poll()`
 * (or `actions()`) and execute the actions in order. `close()` it when done (an engine that
 * is garbage-collected is freed too). Not for use from two places at once.
 */
class Engine {
  #handle;
  #lib;

  /**
   * `channel`: a profile name ('telegram', 'discord', 'slack', 'signal', 'whatsapp',
   * 'imessage', 'googlechat', 'generic'). `options`: overrides of the channel's defaults
   * (every knob, camelCase; see index.d.ts) and `seed` (the random pauses).
   */
  constructor(channel = 'generic', options = {}) {
    const name = channelBytes(channel);
    const calls = plan(options, ['seed']);
    const seed = options?.seed === undefined ? 0 : args.count('options.seed', options.seed);
    const f = native.lib();
    const out = [null];
    const code = withOptions(calls, (handle) =>
      f.replystream_engine_new(name, name.length, handle, seed, out));
    if (code !== ResultCode.OK) {
      throw errorFor(code, native.newError(),
        code === ResultCode.UNKNOWN_CHANNEL ? 'channel' : undefined);
    }
    this.#handle = out[0];
    this.#lib = f;
    registry.register(this, this.#handle, this);
  }

  /** True after `close()`. */
  get closed() {
    return this.#handle === null;
  }

  /** Frees the engine. Calling it again does nothing; any other call then throws. */
  close() {
    if (this.#handle === null) return;
    registry.unregister(this);
    this.#lib.replystream_engine_free(this.#handle);
    this.#handle = null;
  }

  #live(method) {
    const handle = this.#handle;
    if (handle === null) {
      throw new TypeError(`Engine.${camel(method)}: the engine is closed`);
    }
    return handle;
  }

  #check(code, fields) {
    if (code === ResultCode.OK || code === ResultCode.DONE) return;
    const out = {};
    this.#lib.replystream_engine_last_error(this.#handle, out);
    throw errorFor(code, native.strText(out), fields?.[code]);
  }

  // The push helpers take the C function itself (looked up once per call site by name, never
  // built from a string per call) and the JavaScript method's name for messages.

  #time(push, method, nowMs) {
    const handle = this.#live(method);
    this.#check(push(handle, args.millis('nowMs', nowMs)));
  }

  #text(push, method, argument, text, nowMs) {
    const handle = this.#live(method);
    const bytes = args.transientText(argument, text);
    const now = args.millis('nowMs', nowMs);
    const code = push(handle, bytes.data, bytes.length, now);
    if (code !== ResultCode.OK) this.#check(code, FIELDS_BY_ARGUMENT[argument]);
  }

  #optionalText(push, method, text, nowMs) {
    if (text === null || text === undefined) {
      const handle = this.#live(method);
      const now = args.millis('nowMs', nowMs);
      this.#check(push(handle, null, 0, now), TEXT_FIELD);
    } else {
      this.#text(push, method, 'text', text, nowMs);
    }
  }

  #payload(push, method, text, urlsName, urls, nowMs) {
    const handle = this.#live(method);
    const data = args.optionalText('text', text) ?? Buffer.alloc(0);
    const list = args.textList(urlsName, urls);
    const now = args.millis('nowMs', nowMs);
    const views = list.length
      ? koffi.as(list.map((b) => ({ ptr: b, len: b.length })), 'replystream_str *')
      : null;
    this.#check(push(handle, data, data.length, views, list.length, now), PAYLOAD_FIELDS[urlsName]);
  }

  // -- inputs ------------------------------------------------------------------------------

  /** The next push carries this sequence number (repeats and older ones are ignored). */
  setSeq(seq) {
    const handle = this.#live('setSeq');
    this.#check(this.#lib.replystream_engine_set_seq(handle, args.count('seq', seq)));
  }

  /** A new assistant message begins. */
  messageStart(nowMs) {
    this.#time(this.#lib.replystream_engine_push_message_start, 'messageStart', nowMs);
  }

  /** The next piece of assistant text. A Uint8Array may end inside a UTF-8 character. */
  textDelta(text, nowMs) {
    this.#text(this.#lib.replystream_engine_push_text_delta, 'textDelta', 'text', text, nowMs);
  }

  /** The whole assistant text so far; the engine derives the new part. */
  textSnapshot(text, nowMs) {
    this.#text(this.#lib.replystream_engine_push_text_snapshot, 'textSnapshot', 'text', text, nowMs);
  }

  /** A text block ended; `text` (or null) may carry its full content. */
  textEnd(text, nowMs) {
    this.#optionalText(this.#lib.replystream_engine_push_text_end, 'textEnd', text, nowMs);
  }

  /** Reasoning text outside the answer. */
  thinkingDelta(text, nowMs) {
    this.#text(this.#lib.replystream_engine_push_thinking_delta, 'thinkingDelta', 'text', text, nowMs);
  }

  /** The reasoning block ended. */
  thinkingEnd(nowMs) {
    this.#time(this.#lib.replystream_engine_push_thinking_end, 'thinkingEnd', nowMs);
  }

  /** The model calls a tool: everything buffered is flushed first. */
  toolStart(name, nowMs) {
    this.#text(this.#lib.replystream_engine_push_tool_start, 'toolStart', 'name', name, nowMs);
  }

  /** A tool summary to show (a send of kind 'tool'), with any media URLs or paths. */
  toolResult(text, nowMs, media) {
    this.#payload(this.#lib.replystream_engine_push_tool_result, 'toolResult', text, 'media', media, nowMs);
  }

  /** A media payload: one URL/path or an array (at least one), with an optional caption. */
  media(urls, nowMs, caption) {
    this.#payload(this.#lib.replystream_engine_push_media, 'media', caption, 'urls', urls, nowMs);
  }

  /** The assistant message ended; `text` (or null) may carry its full content. */
  messageEnd(text, nowMs) {
    this.#optionalText(this.#lib.replystream_engine_push_message_end, 'messageEnd', text, nowMs);
  }

  /** The host's final reply payload, reconciled at finish against what was streamed. */
  finalReply(text, nowMs, media) {
    this.#payload(this.#lib.replystream_engine_push_final_reply, 'finalReply', text, 'media', media, nowMs);
  }

  /** The turn is complete: flush, send the finals, then go idle. */
  finish(nowMs) {
    this.#time(this.#lib.replystream_engine_push_finish, 'finish', nowMs);
  }

  /** The model failed: what was produced is delivered, then `error`. */
  fail(error, nowMs) {
    this.#text(this.#lib.replystream_engine_push_fail, 'fail', 'error', error, nowMs);
  }

  /** Stop the turn: an 'abort' action follows and nothing more is sent. */
  cancel(nowMs) {
    this.#time(this.#lib.replystream_engine_push_cancel, 'cancel', nowMs);
  }

  /** A deadline may have passed (early or repeated calls do nothing). */
  timer(nowMs) {
    this.#time(this.#lib.replystream_engine_push_timer, 'timer', nowMs);
  }

  /** The host delivered send `sendId`; `messageRef` is the platform's id of the message. */
  delivered(sendId, nowMs, messageRef) {
    const handle = this.#live('delivered');
    const id = args.count('sendId', sendId);
    const ref = args.optionalText('messageRef', messageRef);
    const now = args.millis('nowMs', nowMs);
    this.#check(this.#lib.replystream_engine_push_delivered(
      handle, id, ref, ref === null ? 0 : ref.length, now), DELIVERED_FIELDS);
  }

  /**
   * Send `sendId` failed: retry no earlier than `retryAfterMs` from now (a 429), or never
   * when `permanent`.
   */
  deliveryFailed(sendId, nowMs, failure = {}) {
    const handle = this.#live('deliveryFailed');
    const id = args.count('sendId', sendId);
    const now = args.millis('nowMs', nowMs);
    const how = args.plainObject('failure', failure);
    for (const key of Object.keys(how)) {
      if (key !== 'retryAfterMs' && key !== 'permanent') {
        throw new TypeError(`unknown failure field ${JSON.stringify(key)} (known: retryAfterMs, permanent)`);
      }
    }
    const retry = how.retryAfterMs === undefined || how.retryAfterMs === null
      ? native.NONE
      : args.millis('failure.retryAfterMs', how.retryAfterMs);
    const permanent = how.permanent === undefined ? false : args.flag('failure.permanent', how.permanent);
    this.#check(
      this.#lib.replystream_engine_push_delivery_failed(handle, id, retry, permanent, now),
      ACK_FIELD,
    );
  }

  // -- outputs -----------------------------------------------------------------------------

  /** The next pending action, or null when none is pending. */
  poll() {
    const handle = this.#live('poll');
    const code = this.#lib.replystream_engine_poll_action(handle, SLOT);
    if (code === ResultCode.DONE) return null;
    this.#check(code);
    return actionOf(koffi.decode(SLOT[0], native.ActionRecord));
  }

  /**
   * Yields every pending action, stopping when none is pending. Acks and timers pushed while
   * iterating add actions that the same iteration yields.
   */
  *actions() {
    this.#live('actions');
    for (let action = this.poll(); action !== null; action = this.poll()) yield action;
  }

  /** The earliest deadline in ms, or null. */
  nextDeadline() {
    const has = this.#lib.replystream_engine_next_deadline(this.#live('nextDeadline'), SLOT);
    return has ? Number(SLOT[0]) : null;
  }

  /** True once the turn is over (finished and acknowledged, or cancelled). */
  isDone() {
    return this.#lib.replystream_engine_is_done(this.#live('isDone'));
  }

  /** The engine's counters (camelCase of `replystream_stats`). */
  stats() {
    const raw = {};
    const handle = this.#live('stats');
    this.#check(this.#lib.replystream_engine_stats(handle, raw, STATS_SIZE));
    const stats = {};
    for (const name of native.STATS_FIELDS) {
      stats[name.replace(/_([a-z])/g, (_, c) => c.toUpperCase())] = Number(raw[name]);
    }
    return stats;
  }

  /**
   * How the turn ended, once it has (after the 'idle' action, or a cancel); null while it
   * runs. A late ack for a send whose timeout fired still counts: ask again to see it.
   */
  outcome() {
    const handle = this.#live('outcome');
    const out = [null];
    this.#check(this.#lib.replystream_engine_outcome(handle, out));
    if (!out[0]) return null;
    try {
      return outcomeOf(koffi.decode(out[0], native.OutcomeRecord));
    } finally {
      this.#lib.replystream_outcome_free(out[0]);
    }
  }
}

if (typeof Symbol.dispose === 'symbol') {
  Engine.prototype[Symbol.dispose] = function dispose() {
    this.close();
  };
}

module.exports = { Engine };
