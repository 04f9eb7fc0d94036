'use strict';
// The shared library and its C declarations: koffi mirrors of `ffi/include/replystream.h`.
//
// Every C function is declared once, in FUNCTIONS below, as a C-like prototype string; a new
// function in the header (media roots, the formats) is one more line there, then
// a method where it belongs. Pointers are BigInts (koffi 3); handles are
// kept inside the classes that own them and never handed to user code.

const fs = require('node:fs');
const path = require('node:path');
const koffi = require('koffi');
const { libraryFileName } = require('./native-file');

/** Result codes (replystream_result); the numbers are fixed by the C ABI. */
const ResultCode = Object.freeze({
  OK: 0,
  DONE: 1,
  NULL_POINTER: 2,
  INVALID_UTF8: 3,
  UNKNOWN_CHANNEL: 4,
  INVALID_CONFIG: 5,
  UNKNOWN_SEND: 6,
  TURN_ENDED: 7,
  OUT_OF_RANGE: 8,
  INVALID_ARGUMENT: 9,
  PANIC: 10,
  POISONED: 11,
  ERROR: 12,
});

const CODE_NAMES = Object.freeze(
  Object.fromEntries(Object.entries(ResultCode).map(([name, code]) => [code, name])),
);

/** REPLYSTREAM_NONE (UINT64_MAX): "no value" for the 64-bit arguments that document it. */
const NONE = 0xffff_ffff_ffff_ffffn;

const Str = koffi.struct('replystream_str', { ptr: 'const void *', len: 'size_t' });

const EntityRecord = koffi.struct('replystream_entity', {
  kind: 'uint32_t',
  type_name: Str,
  offset: 'size_t',
  length: 'size_t',
  url: Str,
  language: Str,
});

const ActionRecord = koffi.struct('replystream_action', {
  kind: 'uint32_t',
  send_id: 'uint64_t',
  send_kind: 'uint32_t',
  op: 'uint32_t',
  has_message_key: 'bool',
  message_key: 'uint32_t',
  has_message_ref: 'bool',
  message_ref: Str,
  text: Str,
  media: 'const void *',
  media_count: 'size_t',
  is_error: 'bool',
  audio_as_voice: 'bool',
  lane: 'uint32_t',
  reply_to: 'uint32_t',
  reply_to_id: Str,
  has_deadline: 'bool',
  deadline_ms: 'uint64_t',
  abort_reason: 'uint32_t',
  format: 'uint32_t',
  format_name: Str,
  markdown: Str,
  entities: 'const void *',
  entity_count: 'size_t',
});

/** The counters of `replystream_stats`, in field order (C names). */
const STATS_FIELDS = Object.freeze([
  'gaps',
  'duplicates_ignored',
  'divergences',
  'payloads_deduped',
  'unknown_acks',
  'sends',
  'delivered',
  'failures',
  'retries',
  'dropped',
  'timeouts',
  'skipped_blocks',
  'preview_updates',
  'preview_skips',
  'media_refused',
]);

const StatsRecord = koffi.struct(
  'replystream_stats',
  Object.fromEntries(STATS_FIELDS.map((name) => [name, 'uint64_t'])),
);

const BlockRecord = koffi.struct('replystream_block', {
  text: Str,
  sep: Str,
  source_start: 'size_t',
  source_end: 'size_t',
  fence_reopened: 'bool',
  fence_closed: 'bool',
  lead: Str,
  indent_reopened: 'bool',
  source_in_text_start: 'size_t',
  source_in_text_end: 'size_t',
  table_header_repeated: 'bool',
  spans_reopened: 'bool',
  spans_closed: 'bool',
  dedent: 'size_t',
  dedent_quotes: 'size_t',
});

const UndeliveredRecord = koffi.struct('replystream_undelivered', {
  send_id: 'uint64_t',
  send_kind: 'uint32_t',
  reason: 'uint32_t',
  text: Str,
  media: 'const void *',
  media_count: 'size_t',
  is_error: 'bool',
  lane: 'uint32_t',
});

const OutcomeRecord = koffi.struct('replystream_outcome', {
  ending: 'uint32_t',
  all_delivered: 'bool',
  final_delivered: 'bool',
  undelivered: 'const void *',
  undelivered_count: 'size_t',
});

// Type aliases used by the prototypes below: handles are untyped pointers (koffi 3 gives
// BigInts); text is `const void *` so a Buffer goes through without a copy.
const R = 'uint32_t';

/** name -> prototype. The C names, argument types and order are the header's. */
const FUNCTIONS = {
  replystream_result_str: 'const char *replystream_result_str(uint32_t result)',
  replystream_result_is_error: 'bool replystream_result_is_error(uint32_t result)',
  replystream_version: 'const char *replystream_version(void)',
  replystream_new_error: `${R} replystream_new_error(_Out_ replystream_str *out)`,
  replystream_min_limit: 'size_t replystream_min_limit(uint32_t metric)',

  replystream_options_new: `${R} replystream_options_new(_Out_ void **out)`,
  replystream_options_free: 'void replystream_options_free(void *options)',
  replystream_options_last_error: `${R} replystream_options_last_error(void *options, _Out_ replystream_str *out)`,
  replystream_options_set_human_delay: `${R} replystream_options_set_human_delay(void *o, uint32_t mode, uint64_t min_ms, uint64_t max_ms)`,
  replystream_options_add_media_root: `${R} replystream_options_add_media_root(void *options, const void *root, size_t len)`,

  replystream_engine_new: `${R} replystream_engine_new(const void *channel, size_t len, void *options, uint64_t seed, _Out_ void **out)`,
  replystream_engine_free: 'void replystream_engine_free(void *engine)',
  replystream_engine_last_error: `${R} replystream_engine_last_error(void *engine, _Out_ replystream_str *out)`,
  replystream_engine_set_seq: `${R} replystream_engine_set_seq(void *engine, uint64_t seq)`,
  replystream_engine_push_delivered: `${R} replystream_engine_push_delivered(void *e, uint64_t send_id, const void *ref, size_t len, uint64_t now_ms)`,
  replystream_engine_push_delivery_failed: `${R} replystream_engine_push_delivery_failed(void *e, uint64_t send_id, uint64_t retry_after_ms, bool permanent, uint64_t now_ms)`,
  // Hot out-pointers are plain pointers to a caller's BigUint64Array (read in JS without a
  // second call); koffi's _Out_ marshalling costs about a microsecond per call.
  replystream_engine_poll_action: `${R} replystream_engine_poll_action(void *engine, void *out)`,
  // Not used by this package (it reads the action's media array directly), bound so that
  // the header test sees every function and a new one stands out.
  replystream_action_media: `${R} replystream_action_media(void *engine, size_t index, _Out_ replystream_str *out)`,
  replystream_engine_next_deadline: 'bool replystream_engine_next_deadline(void *engine, void *deadline_ms)',
  replystream_engine_is_done: 'bool replystream_engine_is_done(void *engine)',
  replystream_engine_stats: `${R} replystream_engine_stats(void *engine, _Out_ replystream_stats *out, size_t size)`,
  replystream_engine_outcome: `${R} replystream_engine_outcome(void *engine, _Out_ void **out)`,
  replystream_outcome_free: 'void replystream_outcome_free(void *outcome)',

  replystream_split: `${R} replystream_split(const void *ch, size_t ch_len, void *options, const void *text, size_t len, _Out_ void **out)`,
  replystream_chunk: `${R} replystream_chunk(const void *ch, size_t ch_len, void *options, const void *text, size_t len, _Out_ void **out)`,
  replystream_blocks_count: 'size_t replystream_blocks_count(void *blocks)',
  replystream_blocks_get: 'void *replystream_blocks_get(void *blocks, size_t index)',
  replystream_blocks_free: 'void replystream_blocks_free(void *blocks)',

  replystream_format_name: 'const char *replystream_format_name(uint32_t format)',
  replystream_render: `${R} replystream_render(const void *ch, size_t ch_len, void *options, const void *text, size_t len, _Out_ void **out)`,
  replystream_rendered_text: 'replystream_str replystream_rendered_text(void *rendered)',
  replystream_rendered_format: 'uint32_t replystream_rendered_format(void *rendered)',
  replystream_rendered_entity_count: 'size_t replystream_rendered_entity_count(void *rendered)',
  replystream_rendered_entity: 'void *replystream_rendered_entity(void *rendered, size_t index)',
  replystream_rendered_free: 'void replystream_rendered_free(void *rendered)',
};

// The option setters, by argument shape (`replystream_options_set_<name>`).
const SETTERS = {
  size_t: ['text_limit', 'preview_limit', 'max_lines', 'chunk_min', 'chunk_max', 'coalesce_min',
    'coalesce_max', 'preview_min_initial_units', 'preview_block_min', 'preview_block_max',
    'caption_limit'],
  uint32_t: ['metric', 'break_preference', 'chunk_mode', 'break_mode', 'reasoning', 'preview',
    'preview_transport'],
  bool: ['block_streaming', 'prefix_every_message', 'require_final_tag',
    'preview_expandable_quote', 'media_allow_http', 'allow_mass_mentions'],
  uint64_t: ['coalesce_idle_ms', 'delivery_timeout_ms', 'preview_throttle_ms'],
  text: ['response_prefix', 'model', 'provider', 'thinking_level', 'identity_name',
    'silent_token', 'heartbeat_token', 'preview_cursor', 'format', 'table_mode'],
};
for (const [shape, names] of Object.entries(SETTERS)) {
  for (const name of names) {
    const args = shape === 'text' ? 'const void *value, size_t len' : `${shape} value`;
    FUNCTIONS[`replystream_options_set_${name}`] =
      `${R} replystream_options_set_${name}(void *options, ${args})`;
  }
}

// The pushes, by argument shape (`replystream_engine_push_<name>`).
const PUSHES = {
  time: ['message_start', 'thinking_end', 'finish', 'cancel', 'timer'],
  text: ['text_delta', 'text_snapshot', 'text_end', 'thinking_delta', 'tool_start',
    'message_end', 'fail'],
  payload: ['tool_result', 'media', 'final_reply'],
};
const PUSH_ARGS = {
  time: 'uint64_t now_ms',
  text: 'const void *text, size_t len, uint64_t now_ms',
  payload: 'const void *text, size_t len, const void *media, size_t count, uint64_t now_ms',
};
for (const [shape, names] of Object.entries(PUSHES)) {
  for (const name of names) {
    FUNCTIONS[`replystream_engine_push_${name}`] =
      `${R} replystream_engine_push_${name}(void *engine, ${PUSH_ARGS[shape]})`;
  }
}


/** The package's own directory (ffi/node in a clone, node_modules/replystream installed). */
const PACKAGE_DIR = path.resolve(__dirname, '..');

/**
 * Where the library is looked for, in order: `$REPLYSTREAM_LIB`; the copy bundled in the
 * package (`native/`, put there by `npm pack` or `npm run build-native`); in a clone of the
 * repository, cargo's release build (`$CARGO_TARGET_DIR` or `target/` at the root).
 */
function libraryCandidates() {
  const override = process.env.REPLYSTREAM_LIB;
  if (override) return [path.resolve(override)];
  const file = libraryFileName();
  const candidates = [path.join(PACKAGE_DIR, 'native', file)];
  const root = path.resolve(PACKAGE_DIR, '..', '..');
  if (fs.existsSync(path.join(root, 'ffi', 'Cargo.toml'))) {
    const target = process.env.CARGO_TARGET_DIR
      ? path.resolve(root, process.env.CARGO_TARGET_DIR)
      : path.join(root, 'target');
    candidates.push(path.join(target, 'release', file));
  }
  return candidates;
}

let loaded = null;

/** Loads the library once and returns `{ path, fn }` with every function declared. */
function load() {
  if (loaded) return loaded;
  const candidates = libraryCandidates();
  const found = candidates.find((candidate) => fs.existsSync(candidate));
  if (!found) {
    throw new Error(
      `replystream: the shared library is missing (looked for ${candidates.join(', ')}). ` +
        'Build it with `cargo build -p replystream-ffi --release` in the repository, or ' +
        '`npm run build-native` in ffi/node, or set REPLYSTREAM_LIB to a built ' +
        libraryFileName(),
    );
  }
  const lib = koffi.load(found);
  const fn = {};
  for (const [name, prototype] of Object.entries(FUNCTIONS)) {
    fn[name] = lib.func(prototype);
  }
  loaded = { path: found, fn };
  return loaded;
}

/** The C functions, loaded on first use. */
function lib() {
  return load().fn;
}

/** Decodes a `replystream_str` view (a copy, as a JS string). */
function strText(view) {
  const len = Number(view.len);
  return len === 0 ? '' : koffi.decode(view.ptr, 'char', len);
}

/** Decodes `count` views from a C array of `replystream_str`. */
function strArray(ptr, count) {
  const n = Number(count);
  if (n === 0 || !ptr) return [];
  return koffi.decode(ptr, Str, n).map(strText);
}

/** The format names, in the C ABI's order (`replystream_format`). */
const FORMATS = Object.freeze(['markdown', 'discord', 'telegram-html', 'telegram-entities',
  'slack-mrkdwn', 'whatsapp', 'plain']);

/**
 * Decodes `count` entity records from a C array into Bot API `MessageEntity` objects (`url`
 * and `language` only where they apply, so `JSON.stringify` gives what Telegram takes).
 */
function entityArray(ptr, count) {
  const n = Number(count);
  if (n === 0 || !ptr) return [];
  return koffi.decode(ptr, EntityRecord, n).map((e) => {
    const entity = { type: strText(e.type_name), offset: Number(e.offset), length: Number(e.length) };
    if (Number(e.url.len)) entity.url = strText(e.url);
    if (Number(e.language.len)) entity.language = strText(e.language);
    return entity;
  });
}

/** The library's static message for a result code. */
function resultMessage(code) {
  return lib().replystream_result_str(code >>> 0);
}

/** Why the last constructor (engine, split, chunk) on this thread failed. */
function newError() {
  const out = {};
  lib().replystream_new_error(out);
  return strText(out);
}

module.exports = {
  ActionRecord,
  BlockRecord,
  CODE_NAMES,
  EntityRecord,
  FORMATS,
  NONE,
  OutcomeRecord,
  ResultCode,
  STATS_FIELDS,
  StatsRecord,
  Str,
  UndeliveredRecord,
  koffi,
  lib,
  libraryCandidates,
  libraryFileName,
  load,
  newError,
  entityArray,
  resultMessage,
  strArray,
  strText,
};
