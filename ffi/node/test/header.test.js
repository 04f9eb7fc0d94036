'use strict';
// The koffi declarations against the committed C header (ffi/include/replystream.h): every
// bound function exists there with the same number of parameters, and every struct mirrored
// here lists the header's fields in the header's order (a field the header adds at the end
// of a library-owned record is fine; one in the middle would shift every later field). Header
// functions not bound yet are reported, not failed: a new C function is added by one line
// in lib/native.js.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const native = require('../lib/native');

const HEADER = path.resolve(__dirname, '..', '..', 'include', 'replystream.h');
const header = fs.readFileSync(HEADER, 'utf8').replace(/\/\*[\s\S]*?\*\//g, '');

/** C function name -> parameter count, from the header's prototypes. */
function headerFunctions() {
  const functions = new Map();
  const prototype = /\b(replystream_[a-z0-9_]+)\s*\(([^)]*)\)\s*;/g;
  for (const [, name, params] of header.matchAll(prototype)) {
    const list = params.trim();
    functions.set(name, list === '' || list === 'void' ? 0 : list.split(',').length);
  }
  return functions;
}

/** Field names of `typedef struct NAME { ... } NAME;`, in order. */
function headerFields(name) {
  const match = new RegExp(`typedef struct ${name} \\{([\\s\\S]*?)\\} ${name};`).exec(header);
  assert.ok(match, `struct ${name} not in the header`);
  return match[1].split(';').map((f) => f.trim()).filter(Boolean)
    .map((f) => /([a-z_0-9]+)$/.exec(f)[1]);
}

test('every bound function is in the header with its parameter count', (t) => {
  const functions = headerFunctions();
  assert.ok(functions.size > 50, `${functions.size} prototypes found`);
  const { fn } = native.load();
  for (const [name, bound] of Object.entries(fn)) {
    assert.ok(functions.has(name), `${name} is not in the header`);
    assert.equal(bound.info.arguments.length, functions.get(name), name);
  }
  const missing = [...functions.keys()].filter((name) => !(name in fn));
  t.diagnostic(missing.length ? `not bound yet: ${missing.join(', ')}` : 'every header function is bound');
});

test('the mirrored structs follow the header', () => {
  for (const [name, type] of [
    ['replystream_str', native.Str],
    ['replystream_action', native.ActionRecord],
    ['replystream_entity', native.EntityRecord],
    ['replystream_stats', native.StatsRecord],
    ['replystream_block', native.BlockRecord],
    ['replystream_undelivered', native.UndeliveredRecord],
    ['replystream_outcome', native.OutcomeRecord],
  ]) {
    const ours = Object.keys(type.members);
    const theirs = headerFields(name);
    assert.deepEqual(theirs.slice(0, ours.length), ours, name);
    // Records the caller allocates (stats is passed with its size) may lag; the others are
    // read from the library's memory, where a longer record is fine too.
    if (['replystream_str', 'replystream_block', 'replystream_entity'].includes(name)) assert.equal(theirs.length, ours.length, name);
  }
});
