'use strict';
// The engine through the package: whole turns, timers, acks, every option, outcomes, live
// previews (the scenarios of the Python package's tests, in JavaScript).

const test = require('node:test');
const assert = require('node:assert/strict');
const { Engine, ResultCode, UnknownSendError } = require('replystream');
const { TEXT, drive, sends } = require('./helpers');

test('a whole turn', async (t) => {
  function runTurn(piece) {
    const log = [];
    const data = Buffer.from(TEXT, 'utf8');
    const e = new Engine('discord', {
      seed: 3, chunkMin: 40, chunkMax: 120, coalesceMin: 40, coalesceMax: 200, coalesceIdleMs: 300,
    });
    try {
      let now = 0;
      e.messageStart(now);
      // Bytes cut anywhere: characters split across deltas wait for their end.
      for (let i = 0; i < data.length; i += piece) {
        now += 25;
        e.textDelta(data.subarray(i, i + piece), now);
        for (const action of e.actions()) {
          log.push(action);
          if (action.kind === 'send') e.delivered(action.sendId, now);
        }
      }
      e.textEnd(null, now);
      e.messageEnd(TEXT, now); // a full-content resend must not duplicate
      e.finish(now);
      drive(e, now, log);
      assert.equal(e.isDone(), true);
      assert.equal(e.poll(), null);
    } finally {
      e.close();
    }
    return log;
  }

  await t.test('sends every character once, in order', () => {
    const log = runTurn(11);
    const sent = sends(log);
    assert.ok(sent.length >= 2, `${sent.length} sends`);
    assert.equal(log.filter((a) => a.kind === 'idle').length, 1);
    // The sends are the text in order, exactly, with only whitespace between them left out.
    let at = 0;
    for (const s of sent) {
      const found = TEXT.indexOf(s.text, at);
      assert.ok(found >= 0, `${JSON.stringify(s.text)} not found after ${at}`);
      assert.equal(TEXT.slice(at, found).trim(), '', JSON.stringify(TEXT.slice(at, found)));
      at = found + s.text.length;
    }
    assert.equal(TEXT.slice(at).trim(), '');
    for (const s of sent) {
      assert.ok(['block', 'final'].includes(s.sendKind));
      assert.equal(s.op, 'create');
      assert.equal(s.messageKey, null);
      assert.equal(s.lane, 'answer');
      assert.equal(s.isError, false);
      assert.equal(s.replyTo, 'none');
      assert.ok([...s.text].length <= 2000);
    }
    const ids = sent.map((s) => s.sendId);
    assert.equal(new Set(ids).size, ids.length);
  });

  await t.test('is deterministic whatever the delta size', () => {
    const texts = (piece) => sends(runTurn(piece)).map((a) => a.text);
    const first = texts(11);
    assert.deepEqual(texts(1), first);
    assert.deepEqual(texts(7), first);
  });
});

test('a tool result with several media', () => {
  const log = [];
  const e = new Engine('telegram');
  e.messageStart(0);
  e.textDelta('Let me check.', 1);
  e.toolStart('search', 2);
  e.toolResult('Found 2 results', 3, ['https://example.com/a.png', 'https://example.com/b.png']);
  e.media('https://example.com/c.ogg', 4, 'a caption');
  e.finalReply('Here you go.', 5, ['/tmp/report.pdf']);
  e.finish(6);
  drive(e, 6, log);
  e.close();
  const sent = sends(log);
  const tools = sent.filter((s) => s.sendKind === 'tool');
  assert.equal(tools.length, 1);
  assert.ok(tools[0].text.includes('Found 2 results'));
  assert.deepEqual(tools[0].media, ['https://example.com/a.png', 'https://example.com/b.png']);
  const allMedia = sent.flatMap((s) => s.media);
  assert.ok(allMedia.includes('https://example.com/c.ogg'));
  assert.ok(allMedia.includes('/tmp/report.pdf'));
  assert.equal(sent.filter((s) => s.text.includes('Let me check.')).length, 1);
  const firstText = sent.findIndex((s) => s.text.includes('Let me check.'));
  assert.ok(firstText < sent.indexOf(tools[0]));
});

test('every option is accepted', () => {
  const { KNOBS } = require('../lib/options');
  const options = {
    textLimit: 3000, metric: 'utf16', previewLimit: 2000, maxLines: 40, chunkMin: 100,
    chunkMax: 900, breakPreference: 'sentence', chunkMode: 'newline', breakMode: 'message_end',
    blockStreaming: true, coalesceMin: 200, coalesceMax: 1500, coalesceIdleMs: 700,
    humanDelay: { minMs: 100, maxMs: 200 }, deliveryTimeoutMs: 9000, responsePrefix: '[{model}]',
    prefixEveryMessage: true, model: 'acme/m-1', provider: 'acme', thinkingLevel: 'low',
    identityName: 'Ada', reasoning: 'stream', requireFinalTag: false, silentToken: 'SHH',
    heartbeatToken: null, preview: 'partial', previewThrottleMs: 400, previewCursor: null,
    previewMinInitialUnits: 10, previewBlockMin: 50, previewBlockMax: 300,
    previewTransport: 'draft', previewExpandableQuote: false, mediaRoots: ['/srv/media'],
    mediaAllowHttp: false, format: 'telegram-entities', tableMode: 'bullets',
    allowMassMentions: true, captionLimit: 500,
  };
  assert.deepEqual(Object.keys(options).sort(), Object.keys(KNOBS).sort());
  const e = new Engine('telegram', { ...options, seed: 9 });
  e.textDelta('Hello.', 0);
  e.close();
});

test('options change behaviour', () => {
  function sent(reply, options = {}) {
    const log = [];
    const e = new Engine('generic', options);
    e.textDelta(reply, 0);
    e.finish(0);
    drive(e, 0, log);
    e.close();
    return sends(log).map((a) => a.text);
  }
  assert.deepEqual(sent('NO_REPLY'), []);
  assert.deepEqual(sent('NO_REPLY', { silentToken: null }), ['NO_REPLY']);
  assert.deepEqual(sent('Hi.', { responsePrefix: '[{model}]', model: 'acme/large-2' }), ['[large-2] Hi.']);
  // 49 bytes is the smallest limit in bytes (room for a code fence around an emoji).
  const pieces = sent('word '.repeat(40), { blockStreaming: false, textLimit: 49, metric: 'bytes' });
  assert.ok(pieces.length > 3);
  assert.ok(pieces.every((p) => Buffer.byteLength(p) <= 49));
  assert.deepEqual(sent('plan <final>Only this.</final>', { requireFinalTag: true }), ['Only this.']);
});

test('timers', async (t) => {
  function startTurn(engine) {
    engine.messageStart(0);
    engine.textDelta('Ready when you are.', 0);
    engine.finish(10);
    const actions = [...engine.actions()];
    const sent = sends(actions);
    assert.equal(sent.length, 1);
    return [actions, sent[0]];
  }

  await t.test("a 429's retry-after waits for its deadline", () => {
    const e = new Engine('generic', { deliveryTimeoutMs: 2000 });
    const [actions, send] = startTurn(e);
    const armed = actions.filter((a) => a.kind === 'arm_timer').map((a) => a.deadlineMs);
    assert.equal(armed.at(-1), 2010);
    assert.equal(e.nextDeadline(), 2010);
    e.deliveryFailed(send.sendId, 20, { retryAfterMs: 500 });
    assert.deepEqual(sends([...e.actions()]), []);
    assert.equal(e.nextDeadline(), 520);
    e.timer(519); // early: nothing
    assert.deepEqual(sends([...e.actions()]), []);
    e.timer(520);
    const retried = sends([...e.actions()]);
    assert.deepEqual(retried.map((a) => a.text), ['Ready when you are.']);
    e.delivered(retried[0].sendId, 530, 'm1');
    assert.ok([...e.actions()].some((a) => a.kind === 'idle'));
    const stats = e.stats();
    assert.deepEqual([stats.failures, stats.retries, stats.delivered], [1, 1, 1]);
    e.close();
  });

  await t.test('a delivery timeout aborts, and a late ack is accepted', () => {
    const e = new Engine('generic', { deliveryTimeoutMs: 1000 });
    const [, send] = startTurn(e);
    const deadline = e.nextDeadline();
    assert.equal(deadline, 1010);
    e.timer(deadline);
    const aborts = [...e.actions()].filter((a) => a.kind === 'abort');
    assert.deepEqual(aborts.map((a) => a.reason), ['delivery_timeout']);
    e.delivered(send.sendId, 1500);
    e.close();
  });

  await t.test('no delivery timeout when off', () => {
    for (const off of [null, 0]) {
      const e = new Engine('generic', { deliveryTimeoutMs: off });
      startTurn(e);
      assert.equal(e.nextDeadline(), null);
      e.close();
    }
  });

  await t.test('cancel', () => {
    const e = new Engine();
    e.textDelta('Some text. '.repeat(100), 0);
    e.cancel(1);
    const kinds = [...e.actions()].filter((a) => a.kind !== 'arm_timer');
    assert.deepEqual(kinds.at(-1), { kind: 'abort', reason: 'cancelled' });
    assert.equal(e.isDone(), true);
    e.cancel(2); // a second cancel: nothing more
    assert.deepEqual([...e.actions()].filter((a) => a.kind === 'abort'), []);
    assert.throws(() => e.delivered(42, 3), (err) => {
      assert.ok(err instanceof UnknownSendError);
      assert.equal(err.code, ResultCode.UNKNOWN_SEND);
      assert.equal(err.field, 'sendId');
      return true;
    });
    e.close();
  });
});

test('outcome', async (t) => {
  /**
   * Answers every send as `fate(action)` says ('deliver', 'fail' or 'hang') and fires
   * deadlines until idle. Returns [clock, hung send ids].
   */
  function settle(e, now, fate) {
    const hung = [];
    for (let i = 0; i < 1000; i++) {
      let idle = false;
      for (const a of e.actions()) {
        idle ||= a.kind === 'idle';
        if (a.kind !== 'send') continue;
        now += 10;
        const what = fate(a);
        if (what === 'deliver') e.delivered(a.sendId, now);
        else if (what === 'fail') e.deliveryFailed(a.sendId, now, { permanent: true });
        else hung.push(a.sendId);
      }
      const deadline = e.nextDeadline();
      if (idle || deadline === null) return [now, hung];
      now = Math.max(now, deadline);
      e.timer(now);
    }
    throw new Error('engine did not settle');
  }
  const finalsOnly = () => new Engine('generic', { blockStreaming: false, deliveryTimeoutMs: 1000 });

  await t.test('null while running, then all delivered', () => {
    const e = finalsOnly();
    assert.equal(e.outcome(), null);
    e.textDelta('All good.', 0);
    assert.equal(e.outcome(), null);
    e.finish(0);
    settle(e, 0, () => 'deliver');
    assert.deepEqual(e.outcome(), {
      ending: 'finished', allDelivered: true, finalDelivered: true, undelivered: [],
    });
    e.close();
  });

  await t.test('a final that fails for good is listed with its text', () => {
    const e = finalsOnly();
    e.textDelta('The answer is 42.', 0);
    e.finish(0);
    settle(e, 0, (a) => (a.sendKind === 'final' ? 'fail' : 'deliver'));
    const outcome = e.outcome();
    assert.deepEqual(e.outcome(), outcome); // asking again changes nothing
    e.close();
    assert.equal(outcome.ending, 'finished');
    assert.equal(outcome.allDelivered, false);
    assert.equal(outcome.finalDelivered, false);
    assert.equal(outcome.undelivered.length, 1);
    const lost = outcome.undelivered[0];
    assert.deepEqual(
      [lost.sendKind, lost.reason, lost.text, lost.media, lost.lane, lost.isError],
      ['final', 'failed', 'The answer is 42.', [], 'answer', false],
    );
    assert.ok(Object.isFrozen(outcome) && Object.isFrozen(lost));
  });

  await t.test("a tool result's media that fails is listed", () => {
    const media = ['https://example.com/chart.png', '/tmp/b.ogg'];
    const e = finalsOnly();
    e.toolResult('ran 3 tests', 0, media);
    e.textDelta('Done.', 0);
    e.finish(0);
    settle(e, 0, (a) => (a.sendKind === 'tool' ? 'fail' : 'deliver'));
    const outcome = e.outcome();
    e.close();
    assert.equal(outcome.finalDelivered, true);
    assert.equal(outcome.allDelivered, false);
    assert.deepEqual(new Set(outcome.undelivered.map((u) => u.sendKind)), new Set(['tool']));
    assert.ok(outcome.undelivered.map((u) => u.text).includes('ran 3 tests'));
    assert.deepEqual(outcome.undelivered.flatMap((u) => u.media).sort(), [...media].sort());
  });

  await t.test('a final that times out is listed until a late ack', () => {
    const e = finalsOnly();
    e.textDelta('Slow platform.', 0);
    e.finish(0);
    const [now, hung] = settle(e, 0, (a) => (a.sendKind === 'final' ? 'hang' : 'deliver'));
    assert.equal(hung.length, 1);
    assert.deepEqual(
      e.outcome().undelivered.map((u) => [u.sendId, u.reason, u.text]),
      [[hung[0], 'timed_out', 'Slow platform.']],
    );
    e.delivered(hung[0], now + 5000);
    assert.equal(e.outcome().allDelivered, true);
    e.close();
  });

  await t.test('failed and cancelled turns say so', () => {
    let e = finalsOnly();
    e.textDelta('Partial answer', 0);
    e.fail('model overloaded', 0);
    const log = [];
    settle(e, 0, (a) => {
      log.push(a);
      return 'deliver';
    });
    assert.equal(e.outcome().ending, 'failed');
    assert.equal(e.outcome().allDelivered, true);
    assert.ok(log.some((a) => a.isError && a.text.includes('model overloaded')));
    e.close();
    e = finalsOnly();
    e.textDelta('Never sent', 0);
    e.cancel(0);
    const outcome = e.outcome();
    assert.deepEqual([outcome.ending, outcome.allDelivered], ['cancelled', false]);
    e.close();
  });
});

test('live preview', async (t) => {
  /**
   * A live preview against a chat written here: created under a key, acked with the
   * platform's id, edited with that id as messageRef, and edited into the final.
   */
  function runTurn(transport) {
    const chat = new Map(); // messageRef -> text
    let draft = [];
    const ops = [];
    const e = new Engine('telegram', {
      preview: 'partial', previewThrottleMs: 250, previewTransport: transport,
    });
    let now = 0;
    e.messageStart(now);
    const execute = () => {
      for (const a of e.actions()) {
        if (a.kind !== 'send') continue;
        ops.push([now, a.sendKind, a.op, a.messageKey, a.messageRef]);
        let ref = null;
        if (a.op === 'create') {
          ref = `m${chat.size + 1}`;
          chat.set(ref, a.text);
          draft = [];
        } else if (a.op === 'edit') {
          assert.ok(chat.has(a.messageRef), `edit of unknown ${a.messageRef}`);
          chat.set(a.messageRef, a.text);
        } else if (a.op === 'draft') {
          draft = [a.text];
        } else if (a.op === 'delete') {
          chat.delete(a.messageRef);
        }
        e.delivered(a.sendId, now, ref);
      }
    };
    for (const word of TEXT.split(' ')) {
      now += 40;
      const deadline = e.nextDeadline();
      if (deadline !== null && deadline <= now) {
        e.timer(now);
        execute();
      }
      e.textDelta(`${word} `, now);
      execute();
    }
    e.messageEnd(null, now);
    e.finish(now);
    for (let i = 0; i < 100; i++) {
      execute();
      if (e.isDone()) break;
      now = Math.max(now, e.nextDeadline());
      e.timer(now);
    }
    assert.equal(e.isDone(), true);
    const stats = e.stats();
    e.close();
    return { chat, draft, ops, stats };
  }

  await t.test("edits carry the create's ref and the final replaces the preview", () => {
    const { chat, ops, stats } = runTurn('edit');
    assert.deepEqual([...chat.values()], [TEXT]);
    assert.deepEqual(ops[0].slice(1, 4), ['preview', 'create', 1]);
    assert.equal(ops[0][4], null);
    for (const [, , op, key, ref] of ops.slice(1)) assert.deepEqual([op, key, ref], ['edit', 1, 'm1']);
    assert.deepEqual(ops.at(-1).slice(1, 3), ['final', 'edit']);
    const previews = ops.filter(([, kind]) => kind === 'preview').map(([time]) => time);
    assert.ok(previews.length >= 3);
    for (let i = 1; i < previews.length; i++) assert.ok(previews[i] - previews[i - 1] >= 250);
    assert.equal(stats.previewUpdates, previews.length);
    assert.equal(stats.sends, ops.length);
  });

  await t.test('drafts, then a new message', () => {
    const { chat, draft, ops, stats } = runTurn('draft');
    assert.deepEqual([...chat.values()], [TEXT]);
    assert.deepEqual(draft, []);
    assert.ok(ops.slice(0, -1).every(([, , op]) => op === 'draft'));
    assert.deepEqual(ops.at(-1).slice(1, 3), ['final', 'create']);
    assert.equal(stats.previewUpdates, ops.length - 1);
  });

  await t.test('an update showing nothing new is skipped', () => {
    const e = new Engine('telegram', {
      preview: 'partial', previewThrottleMs: 250, previewMinInitialUnits: 1, reasoning: 'stream',
    });
    const texts = [];
    const advance = (now) => {
      for (let i = 0; i < 100; i++) {
        for (const a of e.actions()) {
          if (a.kind === 'send') {
            texts.push(a.text);
            e.delivered(a.sendId, now, 'm1');
          }
        }
        const deadline = e.nextDeadline();
        if (deadline === null || deadline > now) return;
        e.timer(deadline);
      }
    };
    const counters = () => {
      const s = e.stats();
      return [s.previewUpdates, s.previewSkips];
    };
    e.messageStart(0);
    e.thinkingDelta('Measure the river first.', 0);
    advance(1000);
    assert.deepEqual(counters(), [1, 0]);
    e.thinkingDelta('  \n', 1000);
    advance(2000);
    assert.deepEqual(counters(), [1, 1]);
    e.thinkingDelta('Then cross.', 2000);
    advance(3000);
    assert.deepEqual(counters(), [2, 1]);
    assert.equal(texts.length, 2);
    assert.ok(texts.at(-1).includes('Then cross.'));
    e.close();
  });

  await t.test('a bad transport is a RangeError', () => {
    assert.throws(() => new Engine('telegram', { previewTransport: 'bubble' }), RangeError);
  });
});

test('sequence numbers: repeats are ignored, gaps counted', () => {
  const e = new Engine('generic', { blockStreaming: false });
  e.setSeq(1);
  e.textDelta('one ', 0);
  e.setSeq(1);
  e.textDelta('again ', 1); // a repeat: ignored
  e.setSeq(3);
  e.textDelta('three', 2); // a gap
  e.finish(3);
  const log = [];
  drive(e, 3, log);
  assert.deepEqual(sends(log).map((a) => a.text), ['one three']);
  const stats = e.stats();
  assert.deepEqual([stats.duplicatesIgnored, stats.gaps], [1, 1]);
  e.close();
});
