'use strict';
// Errors: refusals by the library are ReplystreamError subclasses carrying the result code
// and the field or argument refused; bad JavaScript values never reach the library and are
// TypeError (wrong type) or RangeError (wrong value), each naming the argument.

const native = require('./native');

const { ResultCode, CODE_NAMES } = native;

/** snake_case C names (option knobs, C arguments) -> the JavaScript names. */
function camel(name) {
  return name.replace(/[_.]([a-z0-9])/g, (_, c) => c.toUpperCase());
}

/**
 * The field or argument a library detail names: its first identifier, e.g. "text_limit" in
 * "invalid configuration: text_limit must be at least 29 ..." or "media[1]" in
 * "media[1] is empty; ...", as the JavaScript name ("textLimit", "media[1]").
 */
function fieldOf(detail) {
  // A dotted path names a nested field: "media.roots[1]" is the option mediaRoots[1].
  const match =
    /^(?:invalid configuration: )?([a-z][a-z0-9_]*(?:\.[a-z][a-z0-9_]*)?(?:\[\d+\])?)(?=[\s:]|$)/
      .exec(detail);
  if (!match) return null;
  const word = match[1];
  // Only identifiers: a detail starting with an ordinary word names no field.
  if (!/[_.[]/.test(word) && !KNOWN_SINGLE_WORDS.has(word)) return null;
  return camel(word);
}

// One-word option and argument names a detail may start with.
const KNOWN_SINGLE_WORDS = new Set([
  'metric', 'preview', 'reasoning', 'model', 'provider', 'text', 'media', 'name', 'error',
  'channel', 'options', 'format',
]);

/**
 * A call refused by the library. `code` is the result number (see `ResultCode`), `codeName`
 * its name ("UNKNOWN_SEND"), `detail` the library's reason, `field` the option or argument
 * refused (JavaScript name, e.g. "textLimit", "media[1]", "sendId"), or null.
 */
class ReplystreamError extends Error {
  constructor(code, detail = '', field = null) {
    const codeName = CODE_NAMES[code] ?? `UNKNOWN(${code})`;
    const reason = detail || native.resultMessage(code);
    super(`${field && !reason.includes(snakeOf(field)) ? `${field}: ` : ''}${reason} [${codeName}]`);
    this.name = new.target.name;
    this.code = code;
    this.codeName = codeName;
    this.detail = detail;
    this.field = field;
  }
}

function snakeOf(name) {
  return name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`).replace(/\[.*/, '');
}

/** An option out of range or contradicting another (INVALID_CONFIG). */
class InvalidConfigError extends ReplystreamError {}
/** A channel name that is not a built-in profile (UNKNOWN_CHANNEL). */
class UnknownChannelError extends ReplystreamError {}
/** Bytes that are not UTF-8, or a stream ended inside a character (INVALID_UTF8). */
class InvalidUtf8Error extends ReplystreamError {}
/** An unusable argument, e.g. an empty media URL or a media push without one. */
class InvalidArgumentError extends ReplystreamError {}
/** An ack for a send the engine is not waiting for (UNKNOWN_SEND). */
class UnknownSendError extends ReplystreamError {}
/** A model event after the turn finished, failed or was cancelled (TURN_ENDED). */
class TurnEndedError extends ReplystreamError {}

const CLASSES = {
  [ResultCode.INVALID_CONFIG]: InvalidConfigError,
  [ResultCode.UNKNOWN_CHANNEL]: UnknownChannelError,
  [ResultCode.INVALID_UTF8]: InvalidUtf8Error,
  [ResultCode.INVALID_ARGUMENT]: InvalidArgumentError,
  [ResultCode.UNKNOWN_SEND]: UnknownSendError,
  [ResultCode.TURN_ENDED]: TurnEndedError,
};

/**
 * The error for a result code (never OK or DONE). `field`: the argument it concerns, a
 * function of the detail giving it, or undefined to read it from the detail.
 */
function errorFor(code, detail, field) {
  const Class = CLASSES[code] ?? ReplystreamError;
  const named = typeof field === 'function' ? field(detail) : field;
  return new Class(code, detail, named ?? fieldOf(detail));
}

/** Throws for every code but OK and DONE. */
function check(code, detail, field) {
  if (code === ResultCode.OK || code === ResultCode.DONE) return;
  throw errorFor(code, typeof detail === 'function' ? detail() : detail, field);
}

module.exports = {
  InvalidArgumentError,
  InvalidConfigError,
  InvalidUtf8Error,
  ReplystreamError,
  TurnEndedError,
  UnknownChannelError,
  UnknownSendError,
  camel,
  check,
  errorFor,
  fieldOf,
};
