'use strict';
// replystream: turns a streaming LLM reply into well-formed, well-paced chat messages.
// A binding of the replystream C library through koffi (see README.md); types in index.d.ts.

const native = require('./lib/native');
const errors = require('./lib/errors');
const { Engine } = require('./lib/engine');
const { chunk, minLimit, render, split } = require('./lib/text');
const { DeliveryError, Driver, Turn } = require('./lib/driver');

/** The version of the loaded library, e.g. "0.1.0". */
function version() {
  return native.lib().replystream_version();
}

/** The path the shared library was loaded from (loading it if needed). */
function libraryPath() {
  return native.load().path;
}

/** The library's static message for a result code. */
function resultMessage(code) {
  if (typeof code !== 'number' || !Number.isInteger(code) || code < 0 || code > 0xffffffff) {
    throw new TypeError(`code must be a whole number from 0 to 2**32 - 1, not ${String(code)}`);
  }
  return native.resultMessage(code);
}

module.exports = {
  DeliveryError,
  Driver,
  Engine,
  InvalidArgumentError: errors.InvalidArgumentError,
  InvalidConfigError: errors.InvalidConfigError,
  InvalidUtf8Error: errors.InvalidUtf8Error,
  ReplystreamError: errors.ReplystreamError,
  FORMATS: native.FORMATS,
  ResultCode: native.ResultCode,
  Turn,
  TurnEndedError: errors.TurnEndedError,
  UnknownChannelError: errors.UnknownChannelError,
  UnknownSendError: errors.UnknownSendError,
  chunk,
  libraryPath,
  minLimit,
  render,
  resultMessage,
  split,
  version,
};
