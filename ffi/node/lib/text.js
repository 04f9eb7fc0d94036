'use strict';
// The text core over a whole text: split to a platform's limit, or chunk as a stream.

const args = require('./args');
const native = require('./native');
const { errorFor } = require('./errors');
const { METRICS, channelBytes, plan, withOptions } = require('./options');

const { ResultCode, koffi } = native;

/** A counter of UTF-16 indices along UTF-8 bytes, for offsets that only grow. */
function utf16Walker(bytes) {
  let byteAt = 0;
  let unitAt = 0;
  return (offset) => {
    // UTF-8 lead bytes: 1 unit each, 2 for a 4-byte sequence (a surrogate pair).
    for (; byteAt < offset; byteAt++) {
      const b = bytes[byteAt];
      if ((b & 0xc0) !== 0x80) unitAt += b >= 0xf0 ? 2 : 1;
    }
    return unitAt;
  };
}

/** The UTF-16 index of byte `offset` within the UTF-8 `bytes` of a string. */
function utf16Index(bytes, offset) {
  return utf16Walker(bytes)(offset);
}

function cut(func, text, channel, options) {
  const isString = typeof text === 'string';
  const data = args.text('text', text);
  const name = channelBytes(channel);
  const calls = plan(options);
  const f = native.lib();
  const out = [null];
  const code = withOptions(calls, (handle) =>
    f[`replystream_${func}`](name, name.length, handle, data, data.length, out));
  if (code !== ResultCode.OK) {
    throw errorFor(code, native.newError(),
      code === ResultCode.UNKNOWN_CHANNEL ? 'channel' : undefined);
  }
  const result = out[0];
  try {
    const count = Number(f.replystream_blocks_count(result));
    if (count === 0) return [];
    const records = koffi.decode(f.replystream_blocks_get(result, 0), native.BlockRecord, count);
    // Byte offsets become UTF-16 indices for string input (they only grow: one pass).
    const index = isString ? utf16Walker(data) : (offset) => offset;
    return records.map((r) => {
      const start = index(Number(r.source_start));
      const end = index(Number(r.source_end));
      const shownLength = Number(r.text.len);
      const shown = shownLength ? Buffer.from(koffi.view(r.text.ptr, shownLength)) : Buffer.alloc(0);
      const shownText = shown.toString('utf8');
      const inStart = utf16Index(shown, Number(r.source_in_text_start));
      const inEnd = utf16Index(shown, Number(r.source_in_text_end));
      return Object.freeze({
        text: shownText,
        sep: native.strText(r.sep),
        lead: native.strText(r.lead),
        start,
        end,
        fenceReopened: r.fence_reopened,
        fenceClosed: r.fence_closed,
        indentReopened: r.indent_reopened,
        tableHeaderRepeated: r.table_header_repeated,
        spansReopened: r.spans_reopened,
        spansClosed: r.spans_closed,
        dedent: Number(r.dedent),
        dedentQuotes: Number(r.dedent_quotes),
        sourceInText: Object.freeze([inStart, inEnd]),
        sourceText: shownText.slice(inStart, inEnd),
      });
    });
  } finally {
    f.replystream_blocks_free(result);
  }
}

/**
 * Splits a whole text (a final reply, a tool result) into pieces that fit the channel's text
 * limit in its length unit. Options as for Engine (textLimit, metric, maxLines, chunkMode
 * apply).
 */
function split(text, channel = 'generic', options = {}) {
  return cut('split', text, channel, options);
}

/** Chunks a text as the streaming chunker would (chunkMin..chunkMax, breakPreference). */
function chunk(text, channel = 'generic', options = {}) {
  return cut('chunk', text, channel, options);
}

/**
 * Renders a whole Markdown text into the channel's format, as the engine renders each send:
 * `{ text, format, entities }` (entities only with `telegram-entities`). Options as for
 * Engine (`format`, `tableMode`, `allowMassMentions` apply).
 */
function render(text, channel = 'generic', options = {}) {
  const data = args.text('text', text);
  const name = channelBytes(channel);
  const calls = plan(options);
  const f = native.lib();
  const out = [null];
  const code = withOptions(calls, (handle) =>
    f.replystream_render(name, name.length, handle, data, data.length, out));
  if (code !== ResultCode.OK) {
    throw errorFor(code, native.newError(),
      code === ResultCode.UNKNOWN_CHANNEL ? 'channel' : undefined);
  }
  const result = out[0];
  try {
    const count = f.replystream_rendered_entity_count(result);
    return Object.freeze({
      text: native.strText(f.replystream_rendered_text(result)),
      format: native.FORMATS[f.replystream_rendered_format(result)] ?? 'markdown',
      entities: Object.freeze(native.entityArray(
        Number(count) ? f.replystream_rendered_entity(result, 0) : null, count)),
    });
  } finally {
    f.replystream_rendered_free(result);
  }
}

/** The smallest text limit (and chunkMax, previewLimit) accepted in `metric`. */
function minLimit(metric = 'utf16') {
  return Number(native.lib().replystream_min_limit(args.choice('metric', metric, METRICS)));
}

module.exports = { chunk, minLimit, render, split };
