'use strict';
// The two entry points give the same objects, and the package finds its library.

const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const cjs = require('replystream');

test('ESM and CommonJS entries export the same objects', async () => {
  const esm = await import('replystream');
  const names = Object.keys(cjs).sort();
  assert.deepEqual(Object.keys(esm).filter((n) => n !== 'default').sort(), names);
  for (const name of names) assert.equal(esm[name], cjs[name], name);
  assert.equal(esm.default, cjs);
});

test('the library is found next to the package, or through REPLYSTREAM_LIB', () => {
  const native = require('../lib/native');
  const where = cjs.libraryPath();
  if (process.env.REPLYSTREAM_LIB) {
    assert.equal(where, path.resolve(process.env.REPLYSTREAM_LIB));
  } else {
    assert.ok(native.libraryCandidates().includes(where));
    assert.equal(path.basename(where), native.libraryFileName());
  }
  const saved = process.env.REPLYSTREAM_LIB;
  try {
    process.env.REPLYSTREAM_LIB = 'some/where/libx.so';
    assert.deepEqual(native.libraryCandidates(), [path.resolve('some/where/libx.so')]);
  } finally {
    if (saved === undefined) delete process.env.REPLYSTREAM_LIB;
    else process.env.REPLYSTREAM_LIB = saved;
  }
});

test('a missing library is a clear error, not a crash', () => {
  const { spawnSync } = require('node:child_process');
  const run = spawnSync(process.execPath, ['-e', "new (require('replystream').Engine)()"], {
    cwd: path.resolve(__dirname, '..'),
    env: { ...process.env, REPLYSTREAM_LIB: path.join(__dirname, 'no-such-library.so') },
    encoding: 'utf8',
  });
  assert.equal(run.status, 1);
  assert.match(run.stderr, /the shared library is missing \(looked for .*no-such-library\.so\)/);
  assert.match(run.stderr, /cargo build -p replystream-ffi --release/);
});
