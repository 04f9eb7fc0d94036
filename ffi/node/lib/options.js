'use strict';
// Every configuration knob as an option property (camelCase of the library's field names):
// checked here for type and obvious range, then handed to a C options handle, which the
// library checks as a whole when an engine (or split/chunk) uses it.

const args = require('./args');
const native = require('./native');
const { check } = require('./errors');

const METRICS = { utf16: 0, chars: 1, bytes: 2, graphemes: 3 };
const BREAK_PREFERENCES = { paragraph: 0, newline: 1, sentence: 2 };
const CHUNK_MODES = { length: 0, newline: 1 };
const BREAK_MODES = { text_end: 0, message_end: 1 };
const REASONING = { off: 0, on: 1, stream: 2 };
const PREVIEW = { off: 0, partial: 1, block: 2 };
const PREVIEW_TRANSPORTS = { edit: 0, draft: 1 };
const HUMAN_DELAY = { off: 0, natural: 1 };
const HUMAN_DELAY_CUSTOM = 2;

const size = (name, v) => [args.count(name, v)];
// null means "none" (no line cap, the derived default), which the C ABI spells 0.
const sizeOrNull = (name, v) => [v === null ? 0 : args.count(name, v, 1)];
const ms = (name, v) => [args.millis(name, v)];
// null means "off", which the C ABI spells 0.
const msOrNull = (name, v) => [v === null ? 0 : args.millis(name, v)];
const choice = (table) => (name, v) => [args.choice(name, v, table)];
const flag = (name, v) => [args.flag(name, v)];
const textOrNull = (name, v) => {
  const data = args.optionalText(name, v);
  return [data, data === null ? 0 : data.length];
};

/**
 * `mediaRoots`: an array of directories (strings), one `add_media_root` call each (the
 * library checks each root when an engine uses the options).
 */
function mediaRoots(name, value) {
  if (!Array.isArray(value)) throw args.typeError(name, 'an array of directory paths (strings)', value);
  return value.map((root, i) => {
    const item = `${name}[${i}]`;
    if (typeof root !== 'string') throw args.typeError(item, 'a string', root);
    const data = args.text(item, root);
    // koffi passes an empty buffer as NULL; an empty root is the library's to refuse
    // (INVALID_CONFIG, "empty"), so it gets a real pointer and a length of 0.
    return [data.length === 0 ? Buffer.alloc(1) : data, data.length];
  });
}

/**
 * A name the library reads (a format, a table mode), or null for the channel's default.
 * The library checks the name and lists the known ones when it refuses it.
 */
function nameOrNull(name, value) {
  if (value === null) return [null, 0];
  if (typeof value !== 'string') throw args.typeError(name, 'a string or null', value);
  const data = args.text(name, value);
  // koffi passes an empty buffer as NULL (the default); an empty name is refused instead.
  return [data.length === 0 ? Buffer.alloc(1) : data, data.length];
}

function humanDelay(name, value) {
  if (typeof value === 'string') return [args.choice(name, value, HUMAN_DELAY), 0, 0];
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    return [HUMAN_DELAY_CUSTOM, args.millis(`${name}.minMs`, value.minMs),
      args.millis(`${name}.maxMs`, value.maxMs)];
  }
  throw args.typeError(name, "'off', 'natural' or { minMs, maxMs }", value);
}

/**
 * option name -> [C setter suffix, converter to the setter's arguments after the handle],
 * or [C function name, converter to a list of argument lists, 'each'] for a knob set by one
 * call per item.
 */
const KNOBS = {
  textLimit: ['text_limit', size],
  metric: ['metric', choice(METRICS)],
  previewLimit: ['preview_limit', size],
  maxLines: ['max_lines', sizeOrNull],
  chunkMin: ['chunk_min', size],
  chunkMax: ['chunk_max', size],
  breakPreference: ['break_preference', choice(BREAK_PREFERENCES)],
  chunkMode: ['chunk_mode', choice(CHUNK_MODES)],
  breakMode: ['break_mode', choice(BREAK_MODES)],
  blockStreaming: ['block_streaming', flag],
  coalesceMin: ['coalesce_min', sizeOrNull],
  coalesceMax: ['coalesce_max', sizeOrNull],
  coalesceIdleMs: ['coalesce_idle_ms', msOrNull],
  humanDelay: ['human_delay', humanDelay],
  deliveryTimeoutMs: ['delivery_timeout_ms', msOrNull],
  responsePrefix: ['response_prefix', textOrNull],
  prefixEveryMessage: ['prefix_every_message', flag],
  model: ['model', textOrNull],
  provider: ['provider', textOrNull],
  thinkingLevel: ['thinking_level', textOrNull],
  identityName: ['identity_name', textOrNull],
  reasoning: ['reasoning', choice(REASONING)],
  requireFinalTag: ['require_final_tag', flag],
  silentToken: ['silent_token', textOrNull],
  heartbeatToken: ['heartbeat_token', textOrNull],
  preview: ['preview', choice(PREVIEW)],
  previewThrottleMs: ['preview_throttle_ms', ms],
  previewCursor: ['preview_cursor', textOrNull],
  previewMinInitialUnits: ['preview_min_initial_units', size],
  previewBlockMin: ['preview_block_min', size],
  previewBlockMax: ['preview_block_max', size],
  previewTransport: ['preview_transport', choice(PREVIEW_TRANSPORTS)],
  previewExpandableQuote: ['preview_expandable_quote', flag],
  mediaRoots: ['replystream_options_add_media_root', mediaRoots, 'each'],
  mediaAllowHttp: ['media_allow_http', flag],
  format: ['format', nameOrNull],
  tableMode: ['table_mode', nameOrNull],
  allowMassMentions: ['allow_mass_mentions', flag],
  captionLimit: ['caption_limit', sizeOrNull],
};

/**
 * Checks `options` (an object of knobs; `extra` names keys the caller handles itself, such
 * as the engine's `seed`) and returns the setter calls, before anything is created.
 */
function plan(options, extra = []) {
  const given = args.plainObject('options', options);
  const calls = [];
  for (const [key, value] of Object.entries(given)) {
    if (extra.includes(key) || value === undefined) continue;
    const knob = Object.prototype.hasOwnProperty.call(KNOBS, key) ? KNOBS[key] : null;
    if (!knob) {
      throw new TypeError(
        `unknown option ${JSON.stringify(key)} (known: ${[...Object.keys(KNOBS), ...extra].join(', ')})`,
      );
    }
    const [setter, convert, each] = knob;
    const fn = each ? setter : `replystream_options_set_${setter}`;
    const values = convert(`options.${key}`, value);
    if (each) for (const item of values) calls.push([fn, key, item]);
    else calls.push([fn, key, values]);
  }
  return calls;
}

/**
 * Runs `use(handle)` with a C options handle built from `calls` (NULL, i.e. the channel's
 * defaults, when there are none), and frees it afterwards.
 */
function withOptions(calls, use) {
  if (calls.length === 0) return use(null);
  const f = native.lib();
  const out = [null];
  check(f.replystream_options_new(out), '', 'options');
  const handle = out[0];
  try {
    for (const [fn, key, values] of calls) {
      const code = f[fn](handle, ...values);
      check(code, () => {
        const detail = {};
        f.replystream_options_last_error(handle, detail);
        return native.strText(detail);
      }, key);
    }
    return use(handle);
  } finally {
    f.replystream_options_free(handle);
  }
}

/** The channel name as UTF-8. */
function channelBytes(channel) {
  if (typeof channel !== 'string') throw args.typeError('channel', 'a string', channel);
  return args.text('channel', channel);
}

module.exports = { KNOBS, METRICS, channelBytes, plan, withOptions };
