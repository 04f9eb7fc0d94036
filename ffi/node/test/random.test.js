'use strict';
// Any call in any order with any argument: each call either works or throws a TypeError, a
// RangeError or a ReplystreamError (never anything else, never a crash of the process), and
// whatever is polled is well-formed. Seeded; REPLYSTREAM_RANDOM_SEEDS=N runs more seeds.

const test = require('node:test');
const assert = require('node:assert/strict');
const { Engine, ReplystreamError, chunk, split } = require('replystream');

const SEEDS = Number(process.env.REPLYSTREAM_RANDOM_SEEDS || 20);

function random(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const TEXTS = ['Hello. ', '```js\nlet a = 1;\n', '\u{1F469}\u200d\u{1F4BB} ', 'caf\u00e9 ', '\r\n\r\n',
  'NO_REPLY', '<think>hm</think>', '[[reply_to_current]] ', 'MEDIA: https://x.y/a.png\n', ''];
const BAD = [undefined, null, -1, 1.5, NaN, Infinity, 2 ** 60, '', 'x', '\uD800', true, {}, [],
  [1], 10n, Uint8Array.from([0xff]), Uint8Array.from([0xe2, 0x9c]), () => 1, Symbol('s')];

test('random calls never crash and only throw the documented errors', () => {
  for (let seed = 1; seed <= SEEDS; seed++) {
    const next = random(seed);
    const pick = (list) => list[Math.floor(next() * list.length)];
    const maybeBad = (good) => (next() < 0.15 ? pick(BAD) : good);
    let engine = new Engine(pick(['telegram', 'discord', 'slack', 'generic']), {
      chunkMin: 20, chunkMax: 80, preview: pick(['off', 'partial', 'block']), deliveryTimeoutMs: 500,
    });
    let now = 0;
    const pending = [];
    for (let step = 0; step < 400; step++) {
      now += Math.floor(next() * 50);
      const text = () => maybeBad(pick(TEXTS));
      const time = () => maybeBad(now);
      const calls = [
        () => engine.messageStart(time()),
        () => engine.textDelta(text(), time()),
        () => engine.textDelta(Buffer.from(pick(TEXTS)).subarray(0, 3), time()),
        () => engine.textSnapshot(text(), time()),
        () => engine.textEnd(next() < 0.5 ? null : text(), time()),
        () => engine.thinkingDelta(text(), time()),
        () => engine.thinkingEnd(time()),
        () => engine.toolStart(text(), time()),
        () => engine.toolResult(text(), time(), maybeBad(['https://x.y/1.png'])),
        () => engine.media(maybeBad(['a.png', 'b.ogg']), time(), text()),
        () => engine.messageEnd(null, time()),
        () => engine.finalReply(text(), time(), maybeBad([])),
        () => engine.finish(time()),
        () => engine.fail(text(), time()),
        () => next() < 0.2 && engine.cancel(time()),
        () => engine.timer(time()),
        () => engine.delivered(maybeBad(pending.shift() ?? 1), time(), maybeBad('m1')),
        () => engine.deliveryFailed(maybeBad(pending.shift() ?? 2), time(),
          maybeBad({ retryAfterMs: maybeBad(100), permanent: maybeBad(false) })),
        () => engine.setSeq(maybeBad(step)),
        () => engine.nextDeadline(),
        () => engine.stats(),
        () => engine.outcome(),
        () => next() < 0.02 && engine.close(),
        () => split(text(), 'generic', { textLimit: maybeBad(40) }),
        () => chunk(text(), maybeBad('discord')),
      ];
      try {
        pick(calls)();
      } catch (error) {
        assert.ok(
          error instanceof TypeError || error instanceof RangeError || error instanceof ReplystreamError,
          `seed ${seed} step ${step}: ${error?.constructor?.name}: ${error?.message}`,
        );
      }
      if (engine.closed) {
        engine = new Engine('generic', { deliveryTimeoutMs: 500 });
        pending.length = 0;
        continue;
      }
      for (const action of engine.actions()) {
        assert.ok(['send', 'arm_timer', 'abort', 'idle'].includes(action.kind), action.kind);
        if (action.kind === 'send') {
          assert.equal(typeof action.text, 'string');
          assert.ok(action.text.isWellFormed());
          assert.ok(Number.isSafeInteger(action.sendId) && action.sendId > 0);
          pending.push(action.sendId);
        }
      }
    }
    engine.close();
  }
});
