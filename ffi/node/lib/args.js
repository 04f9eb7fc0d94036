'use strict';
// Argument checks. Every bad type is a TypeError and every bad value a RangeError, each
// naming the argument, thrown before anything reaches the library: a value the C side would
// misread (a fraction, a negative time, a string that is not valid UTF-16) never gets there.

function describe(value) {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return `an object (${value.constructor?.name ?? 'Object'})`;
  if (typeof value === 'string') return `a string (${JSON.stringify(value.slice(0, 20))})`;
  return `${typeof value} ${String(value)}`;
}

function typeError(name, expected, value) {
  return new TypeError(`${name} must be ${expected}, not ${describe(value)}`);
}

/**
 * A whole number of milliseconds from the caller's monotonic clock, or a duration: a
 * number, an integer, not negative, at most Number.MAX_SAFE_INTEGER.
 */
function millis(name, value) {
  if (typeof value !== 'number') throw typeError(name, 'a number of milliseconds', value);
  if (!Number.isInteger(value) || value < 0 || value > Number.MAX_SAFE_INTEGER) {
    throw new RangeError(
      `${name} must be a whole, non-negative number of milliseconds (at most ` +
        `Number.MAX_SAFE_INTEGER), not ${value}` +
        (Number.isFinite(value) && value >= 0 && !Number.isInteger(value)
          ? ' (round it up with Math.ceil: a deadline is then never reached early)'
          : ''),
    );
  }
  return value;
}

/** A whole number (a length, a limit, an id, a seed): an integer >= minimum, safe. */
function count(name, value, minimum = 0) {
  if (typeof value !== 'number') throw typeError(name, 'a number', value);
  if (!Number.isInteger(value) || value < minimum || value > Number.MAX_SAFE_INTEGER) {
    throw new RangeError(
      `${name} must be a whole number from ${minimum} to Number.MAX_SAFE_INTEGER, not ${value}`,
    );
  }
  return value;
}

/** A boolean (not a truthy value of another type). */
function flag(name, value) {
  if (typeof value !== 'boolean') throw typeError(name, 'a boolean', value);
  return value;
}

const isWellFormed =
  typeof String.prototype.isWellFormed === 'function'
    ? (s) => s.isWellFormed()
    : (s) => !/\p{Surrogate}/u.test(s.replace(/[\uD800-\uDBFF][\uDC00-\uDFFF]/g, ''));

/** Where a lone surrogate sits in `s` (for the error message). */
function loneSurrogateAt(s) {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const next = s.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        i++;
        continue;
      }
      return i;
    }
    if (c >= 0xdc00 && c <= 0xdfff) return i;
  }
  return -1;
}

function checkString(name, value) {
  if (!isWellFormed(value)) {
    const at = loneSurrogateAt(value);
    throw new TypeError(
      `${name} holds a lone surrogate (\\u${value.charCodeAt(at).toString(16)} at index ` +
        `${at}), which has no UTF-8 form; pass text with paired surrogates, or UTF-8 bytes in ` +
        'a Uint8Array',
    );
  }
}

/**
 * A text as UTF-8 bytes: a string (well-formed UTF-16) or a Uint8Array/Buffer of UTF-8
 * (passed as it is; invalid bytes are refused by the library).
 */
function text(name, value) {
  if (typeof value === 'string') {
    checkString(name, value);
    return Buffer.from(value, 'utf8');
  }
  if (value instanceof Uint8Array) return value;
  throw typeError(name, 'a string or a Uint8Array of UTF-8', value);
}

/** A text or null/undefined (no text). */
function optionalText(name, value) {
  return value === null || value === undefined ? null : text(name, value);
}

// The hot path (a delta at a time) encodes into one reusable block of native memory and
// hands the library its address: no allocation, and koffi passes a pointer as it is (a
// Buffer argument costs more to marshal). UTF-8 takes at most 3 bytes per UTF-16 unit.
let koffi = null;
let scratchPointer = null;
let scratchView = null;

function growScratch(size) {
  koffi ??= require('koffi');
  const pointer = koffi.alloc('uint8_t', size);
  const view = Buffer.from(koffi.view(pointer, size));
  if (scratchPointer !== null) koffi.free(scratchPointer);
  scratchPointer = pointer;
  scratchView = view;
}

/** What `transientText` returns (one object, reused). */
const transient = { data: null, length: 0 };

/**
 * `text()` for a single argument used during one call only: `data` (a pointer or the
 * caller's Uint8Array) and `length` in bytes. The pointer's memory is overwritten by the
 * next call, and the returned object is reused.
 */
function transientText(name, value) {
  if (typeof value === 'string') {
    checkString(name, value);
    const room = value.length * 3;
    if (scratchView === null || room > scratchView.length) {
      growScratch(Math.max(4096, room, scratchView === null ? 0 : scratchView.length * 2));
    }
    transient.data = scratchPointer;
    transient.length = scratchView.write(value, 0, 'utf8');
    return transient;
  }
  if (value instanceof Uint8Array) {
    transient.data = value;
    transient.length = value.length;
    return transient;
  }
  throw typeError(name, 'a string or a Uint8Array of UTF-8', value);
}

/** One text or an array of texts (null/undefined: none), as UTF-8 buffers. */
function textList(name, value) {
  if (value === null || value === undefined) return [];
  if (typeof value === 'string' || value instanceof Uint8Array) return [text(name, value)];
  if (!Array.isArray(value)) throw typeError(name, 'a string or an array of strings', value);
  return value.map((item, i) => text(`${name}[${i}]`, item));
}

/** One of the names of `table` (an object name -> number). */
function choice(name, value, table) {
  const names = Object.keys(table);
  if (typeof value !== 'string') {
    throw typeError(name, `one of ${names.map((n) => `'${n}'`).join(', ')}`, value);
  }
  if (!Object.prototype.hasOwnProperty.call(table, value)) {
    throw new RangeError(
      `${name} must be one of ${names.map((n) => `'${n}'`).join(', ')}, not ${JSON.stringify(value)}`,
    );
  }
  return table[value];
}

/** A plain object of options (undefined: none). */
function plainObject(name, value) {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw typeError(name, 'an object', value);
  }
  return value;
}

module.exports = {
  choice,
  count,
  flag,
  millis,
  optionalText,
  plainObject,
  text,
  textList,
  transientText,
  typeError,
};
