'use strict';
// Bad input: a TypeError or RangeError naming the argument, never a crash, a silent wrong
// value, or text lost; library refusals as ReplystreamError subclasses with code and field.

const test = require('node:test');
const assert = require('node:assert/strict');
const replystream = require('replystream');
const {
  Engine, InvalidArgumentError, InvalidConfigError, InvalidUtf8Error, ReplystreamError,
  ResultCode, TurnEndedError, UnknownChannelError, UnknownSendError,
} = replystream;

/** Asserts `fn` throws an instance of `Class` whose message mentions `argument`. */
function throwsNaming(fn, Class, argument) {
  assert.throws(fn, (err) => {
    assert.ok(err instanceof Class, `${err?.constructor?.name}: ${err?.message}`);
    assert.ok(err.message.includes(argument), `${JSON.stringify(argument)} not in ${err.message}`);
    return true;
  });
}

test('bad option names', () => {
  for (const [key, value] of [
    ['humanDelay', 'sometimes'], ['breakMode', 'whenever'], ['reasoning', 'loud'],
    ['metric', 'inches'], ['preview', 'full'], ['chunkMode', 'words'],
    ['breakPreference', 'comma'], ['previewTransport', 'bubble'],
  ]) {
    throwsNaming(() => new Engine('generic', { [key]: value }), RangeError, `options.${key}`);
  }
});

test('bad option numbers', () => {
  for (const [key, value, named] of [
    ['textLimit', -1], ['chunkMin', -5], ['coalesceIdleMs', -1], ['coalesceIdleMs', NaN],
    ['coalesceIdleMs', 2.5], ['textLimit', 40.5], ['maxLines', 0], ['textLimit', 2 ** 64],
    ['textLimit', Infinity], ['humanDelay', { minMs: 10, maxMs: -1 }, 'options.humanDelay.maxMs'],
  ]) {
    throwsNaming(() => new Engine('generic', { [key]: value }), RangeError, named ?? `options.${key}`);
  }
});

test('values the library refuses name their field', () => {
  for (const [field, options] of [
    ['textLimit', { textLimit: 3 }],
    ['maxLines', { maxLines: 2 }],
    ['humanDelay', { humanDelay: { minMs: 10, maxMs: 600_000 } }],
    ['silentToken', { silentToken: ' ' }],
    ['responsePrefix', { textLimit: 40, responsePrefix: '[a very long prefix]' }],
    ['chunkMax', { chunkMin: 1, chunkMax: 5 }],
  ]) {
    assert.throws(() => new Engine('generic', options), (err) => {
      assert.ok(err instanceof InvalidConfigError, String(err));
      assert.ok(err instanceof ReplystreamError);
      assert.equal(err.code, ResultCode.INVALID_CONFIG);
      assert.equal(err.codeName, 'INVALID_CONFIG');
      assert.equal(err.field, field);
      assert.ok(err.detail.length > 0);
      assert.ok(err.message.endsWith('[INVALID_CONFIG]'), err.message);
      return true;
    });
  }
});

test('bad option types', () => {
  for (const [key, value] of [
    ['textLimit', '4000'], ['textLimit', true], ['textLimit', 4000n], ['blockStreaming', 'yes'],
    ['blockStreaming', 1], ['model', 5], ['humanDelay', 5], ['humanDelay', [1, 2]],
    ['reasoning', 1], ['seed', 'x'], ['responsePrefix', {}],
  ]) {
    throwsNaming(() => new Engine('generic', { [key]: value }), TypeError, `options.${key}`);
  }
  throwsNaming(() => new Engine('slack', { colour: 'blue' }), TypeError, 'colour');
  throwsNaming(() => new Engine(5), TypeError, 'channel');
  throwsNaming(() => new Engine('generic', 'fast'), TypeError, 'options');
  throwsNaming(() => new Engine('generic', { seed: -1 }), RangeError, 'options.seed');
});

test('unknown channel', () => {
  assert.throws(() => new Engine('myspace'), (err) => {
    assert.ok(err instanceof UnknownChannelError);
    assert.equal(err.code, ResultCode.UNKNOWN_CHANNEL);
    assert.equal(err.field, 'channel');
    assert.ok(err.message.includes('myspace'));
    return true;
  });
});

test('texts must be text', () => {
  const e = new Engine();
  throwsNaming(() => e.textDelta(5, 0), TypeError, 'text');
  throwsNaming(() => e.textDelta(null, 0), TypeError, 'text');
  throwsNaming(() => e.toolStart(undefined, 0), TypeError, 'name');
  throwsNaming(() => e.media([Buffer.from('ok'), 3], 0), TypeError, 'urls[1]');
  throwsNaming(() => e.toolResult('x', 0, 'a.png'.length), TypeError, 'media');
  throwsNaming(() => e.delivered('7', 0), TypeError, 'sendId');
  throwsNaming(() => e.delivered(1.5, 0), RangeError, 'sendId');
  throwsNaming(() => e.delivered(1, 0, 42), TypeError, 'messageRef');
  throwsNaming(() => e.deliveryFailed(1, 0, { permanent: 'no' }), TypeError, 'failure.permanent');
  throwsNaming(() => e.deliveryFailed(1, 0, { retry: 5 }), TypeError, 'retry');
  throwsNaming(() => e.fail({ message: 'x' }, 0), TypeError, 'error');
  throwsNaming(() => e.setSeq(-1), RangeError, 'seq');
  assert.equal(e.stats().sends, 0); // nothing reached the engine
  e.close();
});

test('times are whole, non-negative, safe numbers', () => {
  const e = new Engine();
  e.textDelta('int', 1);
  for (const bad of [-1, -0.5, 0.5, 519.2, Infinity, NaN, 2 ** 53]) {
    throwsNaming(() => e.timer(bad), RangeError, 'nowMs');
    throwsNaming(() => e.textDelta('x', bad), RangeError, 'nowMs');
  }
  for (const bad of ['10', null, undefined, true, [1], 10n]) {
    throwsNaming(() => e.timer(bad), TypeError, 'nowMs');
  }
  throwsNaming(() => e.deliveryFailed(1, 0, { retryAfterMs: -3 }), RangeError, 'retryAfterMs');
  throwsNaming(() => e.deliveryFailed(1, 0, { retryAfterMs: 1.5 }), RangeError, 'retryAfterMs');
  e.textDelta(' more', Number.MAX_SAFE_INTEGER); // the largest time is fine
  e.finish(Number.MAX_SAFE_INTEGER);
  assert.deepEqual([...e.actions()].filter((a) => a.kind === 'send').map((a) => a.text), ['int more']);
  e.close();
});

test('lone surrogates are refused, paired ones go through', () => {
  const e = new Engine('generic');
  for (const bad of ['a\uD800', '\uDC00b', 'x\uDBFF\uDBFF\uDC00', '\uD83C']) {
    throwsNaming(() => e.textDelta(bad, 0), TypeError, 'lone surrogate');
    throwsNaming(() => e.media(['ok.png', bad], 0), TypeError, 'urls[1]');
    throwsNaming(() => e.toolStart(bad, 0), TypeError, 'name');
  }
  throwsNaming(() => new Engine('generic', { responsePrefix: '\uD800' }), TypeError, 'options.responsePrefix');
  throwsNaming(() => replystream.split('\uDFFF'), TypeError, 'text');
  // A surrogate pair split across two string deltas is two lone surrogates: refused, and
  // the text is sent as bytes instead (a Uint8Array may end inside a character).
  const wave = Buffer.from('\u{1F30A}');
  e.textDelta(wave.subarray(0, 2), 1);
  e.textDelta(wave.subarray(2), 2);
  e.textDelta(' \u{1F30A} ok', 3);
  e.finish(4);
  assert.deepEqual([...e.actions()].filter((a) => a.kind === 'send').map((a) => a.text),
    ['\u{1F30A} \u{1F30A} ok']);
  e.close();
});

test('invalid UTF-8 bytes', () => {
  const e = new Engine('generic');
  assert.throws(() => e.textDelta(Buffer.from([0x61, 0x62, 0x63, 0xff]), 0), (err) => {
    assert.ok(err instanceof InvalidUtf8Error);
    assert.equal(err.code, ResultCode.INVALID_UTF8);
    assert.equal(err.codeName, 'INVALID_UTF8');
    assert.equal(err.field, 'text');
    assert.ok(err.detail.includes('UTF-8'));
    return true;
  });
  e.textDelta(Buffer.from('na\u00efve \u2713'), 1);
  // A character split across two deltas is fine.
  e.textDelta(Uint8Array.from([0x20, 0x63, 0x61, 0x66, 0xc3]), 2);
  e.textDelta(Uint8Array.from([0xa9, 0x2e]), 3);
  e.finish(4);
  assert.deepEqual([...e.actions()].filter((a) => a.kind === 'send').map((a) => a.text),
    ['na\u00efve \u2713 caf\u00e9.']);
  e.close();
  // A stream that ends inside a character: refused once, the bytes dropped.
  const cut = new Engine('generic');
  cut.textDelta(Uint8Array.from([0x61, 0xe2, 0x9c]), 0);
  assert.throws(() => cut.finish(1), InvalidUtf8Error);
  cut.finish(2);
  assert.deepEqual([...cut.actions()].filter((a) => a.kind === 'send').map((a) => a.text), ['a']);
  cut.close();
  assert.throws(() => new Engine('generic', { model: Uint8Array.from([0xc3]) }), (err) =>
    err instanceof InvalidUtf8Error && err.field === 'model');
});

test('media need a URL', () => {
  const e = new Engine();
  assert.throws(() => e.media([], 0), (err) =>
    err instanceof InvalidArgumentError && err.code === ResultCode.INVALID_ARGUMENT && err.field === 'urls');
  assert.throws(() => e.media(['a.png', ''], 0), (err) =>
    err instanceof InvalidArgumentError && err.field === 'urls[1]' && err.message.includes('media[1]'));
  assert.throws(() => e.toolResult('x', 0, ['', 'b']), (err) =>
    err instanceof InvalidArgumentError && err.field === 'media[0]');
  e.close();
});

test('unknown send and turn ended', () => {
  const e = new Engine();
  assert.throws(() => e.delivered(42, 0), (err) => {
    assert.ok(err instanceof UnknownSendError);
    assert.ok(!(err instanceof TypeError) && !(err instanceof RangeError));
    assert.equal(err.code, ResultCode.UNKNOWN_SEND);
    return true;
  });
  assert.throws(() => e.deliveryFailed(42, 0), UnknownSendError);
  e.finish(1);
  assert.throws(() => e.textDelta('late', 2), (err) => {
    assert.ok(err instanceof TurnEndedError);
    assert.equal(err.code, ResultCode.TURN_ENDED);
    assert.ok(err.message.includes('text_delta after the turn ended'), err.message);
    return true;
  });
  e.close();
});

test('a closed engine says so', () => {
  const e = new Engine();
  assert.equal(e.closed, false);
  e.close();
  e.close();
  assert.equal(e.closed, true);
  const calls = {
    finish: () => e.finish(0), textDelta: () => e.textDelta('x', 0), poll: () => e.poll(),
    actions: () => [...e.actions()], nextDeadline: () => e.nextDeadline(), isDone: () => e.isDone(),
    stats: () => e.stats(), outcome: () => e.outcome(), setSeq: () => e.setSeq(1),
    delivered: () => e.delivered(1, 0), deliveryFailed: () => e.deliveryFailed(1, 0),
    media: () => e.media('a.png', 0), textEnd: () => e.textEnd(null, 0),
  };
  for (const [name, call] of Object.entries(calls)) {
    throwsNaming(call, TypeError, 'closed');
    throwsNaming(call, TypeError, name);
  }
});

test('messages and version', () => {
  for (let code = 0; code < 13; code++) assert.ok(replystream.resultMessage(code).length > 0);
  assert.equal(replystream.resultMessage(999), 'unknown result code');
  throwsNaming(() => replystream.resultMessage(-1), TypeError, 'code');
  assert.match(replystream.version(), /^\d+\.\d+\.\d+/);
  assert.equal(replystream.version(), require('../package.json').version);
  assert.deepEqual(Object.keys(ResultCode).length, 13);
});
