'use strict';
// The Driver on Node's real event loop (real timers, short delays): acks as promises, a
// 429's retry-after, permanent failures, one timer per turn, the async iterator, cancel,
// errors in the host's send function, and no timer left behind.

const test = require('node:test');
const assert = require('node:assert/strict');
const { DeliveryError, Driver, Engine, TurnEndedError } = require('replystream');
const { TEXT } = require('./helpers');

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Timers this process has pending (Node's own resource list). */
const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;

test('a turn streams into a chat: acks resolve with message ids, the outcome comes at the end', async () => {
  const driver = new Driver();
  const chat = [];
  const seen = [];
  const turn = driver.open('discord', { chunkMin: 40, chunkMax: 120, coalesceMin: 40, coalesceMax: 120 }, {
    send: async (action) => {
      await sleep(5);
      chat.push(action.text);
      return `m${chat.length}`;
    },
    onAction: (action) => seen.push(action.kind),
  });
  assert.equal(driver.size, 1);
  turn.messageStart();
  for (const word of TEXT.split(/(?<= )/)) {
    turn.textDelta(word);
    await sleep(1);
  }
  const outcome = await turn.finish();
  assert.deepEqual(outcome, { ending: 'finished', allDelivered: true, finalDelivered: true, undelivered: [] });
  assert.equal(chat.join(' ').replace(/\s+/g, ' '), TEXT.replace(/\s+/g, ' '));
  assert.ok(chat.length >= 2, `${chat.length} messages`);
  assert.equal(seen.filter((k) => k === 'idle').length, 1);
  assert.ok(!seen.includes('arm_timer'));
  assert.equal(turn.finished, true);
  assert.equal(turn.engine.closed, true); // freed once done
  assert.deepEqual(turn.outcome(), outcome);
  assert.equal(driver.size, 0);
  assert.throws(() => turn.textDelta('late'), (err) => err instanceof TypeError && /closed/.test(err.message));
});

test("a 429's retry-after is kept, then the send goes through", async () => {
  const driver = new Driver();
  const attempts = [];
  const turn = driver.open('generic', { blockStreaming: false }, {
    send: async (action) => {
      attempts.push([driver.now(), action.text]);
      if (attempts.length === 1) throw new DeliveryError('429', { retryAfterMs: 120 });
      return 'm1';
    },
  });
  turn.textDelta('Hello after a pause.');
  const outcome = await turn.finish();
  assert.equal(outcome.allDelivered, true);
  assert.equal(attempts.length, 2);
  assert.deepEqual(attempts.map(([, text]) => text), ['Hello after a pause.', 'Hello after a pause.']);
  assert.ok(attempts[1][0] - attempts[0][0] >= 120, `retried after ${attempts[1][0] - attempts[0][0]} ms`);
  assert.equal(turn.engine.closed, true);
});

test('a permanent failure is in the outcome; a plain error counts as a failure', async () => {
  const driver = new Driver();
  const turn = driver.open('generic', { blockStreaming: false }, {
    send: async (action) => {
      if (action.sendKind === 'tool') throw new Error('network down');
      throw new DeliveryError('403 Forbidden', { permanent: true });
    },
  });
  turn.toolResult('ran 3 tests', ['https://example.com/a.png']);
  turn.textDelta('The answer is 42.');
  const outcome = await turn.finish();
  assert.equal(outcome.allDelivered, false);
  assert.equal(outcome.finalDelivered, false);
  const finals = outcome.undelivered.filter((u) => u.sendKind === 'final');
  assert.deepEqual(finals.map((u) => [u.reason, u.text]), [['failed', 'The answer is 42.']]);
  assert.ok(outcome.undelivered.some((u) => u.sendKind === 'tool'));
});

test('one timer per turn, none left when the turns are over', async () => {
  const before = timers();
  const driver = new Driver();
  const acks = [];
  // Sends that wait for the test to ack them: each turn arms its delivery timeout.
  const turns = [0, 1, 2].map(() => driver.open('generic', { blockStreaming: false, deliveryTimeoutMs: 5000 }, {
    send: () => new Promise((resolve) => acks.push(resolve)),
  }));
  for (const turn of turns) {
    turn.textDelta('Waiting.');
    void turn.finish();
  }
  await sleep(5);
  assert.equal(acks.length, 3);
  assert.equal(timers() - before, 3); // one each
  for (const ack of acks) ack('m');
  const outcomes = await Promise.all(turns.map((t) => t.done));
  assert.ok(outcomes.every((o) => o.allDelivered));
  assert.equal(timers(), before);
  assert.equal(driver.size, 0);
});

test('a delivery timeout fires on the real clock, and a late ack still counts', async () => {
  const driver = new Driver();
  let late;
  const turn = driver.open('generic', { blockStreaming: false, deliveryTimeoutMs: 60 }, {
    send: () => new Promise((resolve) => { late = resolve; }),
  });
  turn.textDelta('Slow platform.');
  const started = driver.now();
  const outcome = await turn.finish();
  assert.ok(driver.now() - started >= 60);
  assert.deepEqual(outcome.undelivered.map((u) => [u.reason, u.text]), [['timed_out', 'Slow platform.']]);
  assert.equal(turn.engine.closed, false); // kept open for the late ack
  late('m1');
  await sleep(1);
  assert.equal(turn.engine.closed, true);
  assert.equal(turn.outcome().allDelivered, true);
});

test('without a send function, the turn is an async iterator of actions', async () => {
  const driver = new Driver();
  const turn = driver.open('telegram', { preview: 'partial', previewThrottleMs: 250, previewMinInitialUnits: 1 });
  const shown = new Map();
  const streaming = (async () => {
    for (const word of TEXT.split(/(?<= )/)) {
      turn.textDelta(word);
      await sleep(2);
    }
    return turn.finish();
  })();
  const kinds = [];
  for await (const action of turn) {
    kinds.push(action.kind);
    if (action.kind !== 'send') continue;
    let ref = null;
    if (action.op === 'create') {
      ref = `m${shown.size + 1}`;
      shown.set(ref, action.text);
    } else if (action.op === 'edit') {
      shown.set(action.messageRef, action.text);
    }
    turn.delivered(action.sendId, ref);
  }
  const outcome = await streaming;
  assert.equal(outcome.allDelivered, true);
  assert.deepEqual([...shown.values()], [TEXT]);
  assert.equal(kinds.at(-1), 'idle');
  assert.ok(kinds.filter((k) => k === 'send').length >= 2);
  assert.throws(() => driver.open('generic', {}, { send: async () => 'm' }).delivered(1), TypeError);
  driver.close();
});

test('cancel stops a turn; Driver.close() cancels the rest and frees them', async () => {
  const driver = new Driver();
  const pending = [];
  const send = () => new Promise((resolve) => pending.push(resolve));
  const a = driver.open('generic', { blockStreaming: false }, { send });
  a.textDelta('Never mind.');
  const outcome = await a.cancel();
  assert.equal(outcome.ending, 'cancelled');
  assert.throws(() => a.textDelta('more'), (err) => err instanceof TypeError);
  const b = driver.open('generic', { deliveryTimeoutMs: 10_000 }, { send });
  b.textDelta('Some text. '.repeat(200));
  await sleep(1);
  assert.equal(driver.size, 1);
  driver.close();
  assert.equal(driver.size, 0);
  assert.equal(b.engine.closed, true);
  assert.equal((await b.done).ending, 'cancelled');
  for (const resolve of pending) resolve('m'); // acks after close are dropped quietly
  await sleep(1);
});

test("errors: a refused push throws at the caller; a bad send() result rejects done", async () => {
  const driver = new Driver();
  const turn = driver.open('generic', { blockStreaming: false }, { send: async () => 42 });
  assert.throws(() => turn.textDelta(5), TypeError);
  turn.textDelta('x');
  await assert.rejects(turn.finish(), (err) => err instanceof TypeError && /send\(\)/.test(err.message));
  assert.equal(turn.engine.closed, true);
  // A model event after finish (the final not yet acked) is refused by the library.
  const ended = driver.open('generic', { blockStreaming: false }, { send: async () => 'm' });
  ended.textDelta('y');
  const done = ended.finish();
  assert.throws(() => ended.textDelta('late'), TurnEndedError);
  assert.equal((await done).allDelivered, true);
  assert.throws(() => new Driver({ now: 5 }), TypeError);
  const badClock = new Driver({ now: () => 1.5 });
  assert.throws(() => badClock.open('generic').textDelta('x'), RangeError);
  badClock.close();
  assert.throws(() => driver.open('generic', {}, { send: 'post' }), TypeError);
  driver.close();
});

test('thousands of engines are created and closed without leaking', async (t) => {
  const v8 = require('node:v8');
  const vm = require('node:vm');
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc');
  const churn = (n, close) => {
    for (let i = 0; i < n; i++) {
      const e = new Engine('telegram', { chunkMin: 10, preview: 'partial' });
      e.textDelta(`Message ${i}: `.repeat(20), 0);
      e.finish(1);
      for (const a of e.actions()) if (a.kind === 'send') e.delivered(a.sendId, 2, 'm');
      if (close) e.close();
    }
  };
  const settle = async () => {
    for (let i = 0; i < 5; i++) {
      gc();
      await sleep(10); // FinalizationRegistry callbacks run after a collection
    }
  };
  churn(2000, true);
  await settle();
  const before = process.memoryUsage();
  churn(20_000, true);
  await settle();
  const closed = process.memoryUsage();
  // Engines dropped without close() are freed by the finalizer. Many are alive at once
  // before a collection, so the first round raises the peak (the allocator keeps it); a
  // second round reuses that memory if, and only if, the first round's engines were freed.
  churn(20_000, false);
  await settle();
  const dropped = process.memoryUsage();
  churn(20_000, false);
  await settle();
  const again = process.memoryUsage();
  const mb = (n) => (n / 1024 / 1024).toFixed(1);
  const report = `rss ${mb(before.rss)} -> ${mb(closed.rss)} (closed) -> ${mb(dropped.rss)} -> ` +
    `${mb(again.rss)} (dropped) MB; heap ${mb(before.heapUsed)} -> ${mb(closed.heapUsed)} -> ` +
    `${mb(dropped.heapUsed)} -> ${mb(again.heapUsed)} MB`;
  // 20 000 leaked engines would hold over 80 MB (about 4 KiB each, plus their text).
  assert.ok(closed.rss - before.rss < 24 * 1024 * 1024, report);
  assert.ok(again.rss - dropped.rss < 40 * 1024 * 1024, report);
  assert.ok(closed.heapUsed - before.heapUsed < 8 * 1024 * 1024, report);
  assert.ok(again.heapUsed - before.heapUsed < 8 * 1024 * 1024, report);
  t.diagnostic(report);
  assert.equal(timers(), 0);
});
