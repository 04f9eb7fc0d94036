'use strict';
// A property test: every sample reply of the repository (tests/data) streamed in random
// deltas, cut at random bytes (characters split across deltas), at random times, with every
// send acked. Judged by code written here: the sends are the same whatever the cuts, each
// posted text fits the channel's limit and balances its fences, and for replies without
// markup the engine rewrites (fences, directives, tags, tokens), the sends' Markdown is the
// text in order with only whitespace between them.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { Engine } = require('replystream');
const { chars, drive, sends } = require('./helpers');

const CORPUS = path.resolve(__dirname, '..', '..', '..', 'tests', 'data');
const PLAIN = new Set(['prose-paragraphs.md', 'unicode-mix.md', 'no-breaks.md', 'lists-tables.md']);
const SEEDS = Number(process.env.REPLYSTREAM_PROPERTY_SEEDS || 6);

/** A small seeded generator (mulberry32), so a failure names a seed that repeats it. */
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

const OPTIONS = { seed: 1, chunkMin: 200, chunkMax: 600, coalesceIdleMs: 0, deliveryTimeoutMs: 0 };

/** Streams `data` cut into deltas by `cuts` (byte lengths), acking each send at once. */
function stream(data, nextCut, nextGap) {
  const log = [];
  const e = new Engine('discord', OPTIONS);
  let now = 0;
  e.messageStart(now);
  for (let at = 0; at < data.length;) {
    const end = Math.min(data.length, at + nextCut());
    now += nextGap();
    e.textDelta(data.subarray(at, end), now);
    at = end;
    for (const a of e.actions()) {
      log.push(a);
      if (a.kind === 'send') e.delivered(a.sendId, now);
    }
    const deadline = e.nextDeadline();
    if (deadline !== null && deadline <= now) e.timer(now);
  }
  e.messageEnd(null, now);
  e.finish(now);
  drive(e, now, log);
  assert.equal(e.isDone(), true);
  e.close();
  // What is posted (Discord's Markdown) and the Markdown it was rendered from.
  return sends(log).map((a) => ({ text: a.text, markdown: a.markdown }));
}

function fencesBalanced(text) {
  return text.split('\n').filter((line) => /^ {0,3}(```|~~~)/.test(line)).length % 2 === 0;
}

const files = fs.readdirSync(CORPUS).filter((name) => name.endsWith('.md') && name !== 'README.md');

test('the corpus has samples', () => {
  assert.ok(files.length >= 10, files.join(', '));
});

// SPEC §16: the limit holds for what is posted, counted on the rendered text: rendering can
// grow a send (a table laid out as a code block), and the engine budgets for it.
test('corpus: every posted (rendered) send fits the limit', () => {
  for (const name of files) {
    const data = fs.readFileSync(path.join(CORPUS, name));
    for (const { text: posted } of stream(data, () => data.length, () => 1)) {
      assert.ok(chars(posted) <= 2000, `${name}: ${chars(posted)} chars posted`);
    }
  }
});

for (const name of files) {
  test(`corpus: ${name} in random deltas`, () => {
    const text = fs.readFileSync(path.join(CORPUS, name), 'utf8');
    const data = Buffer.from(text);
    // The reference: the whole text in one delta.
    const whole = stream(data, () => data.length, () => 1);
    assert.ok(whole.length > 0 || /NO_REPLY|HEARTBEAT_OK/.test(text), 'nothing sent');
    for (const { text: posted, markdown } of whole) {
      assert.ok(chars(markdown) <= 2000, `${chars(markdown)} chars of Markdown`);
      assert.ok(fencesBalanced(posted), posted);
      assert.ok(fencesBalanced(markdown), markdown);
    }
    if (PLAIN.has(name)) {
      // The Markdown of the sends is the text in order (what is posted may differ: Discord
      // shows a table as a code block).
      let at = 0;
      for (const { markdown: sent } of whole) {
        const found = text.indexOf(sent, at);
        assert.ok(found >= 0, `send not found in order: ${JSON.stringify(sent.slice(0, 60))}`);
        assert.equal(text.slice(at, found).trim(), '');
        at = found + sent.length;
      }
      assert.equal(text.slice(at).trim(), '');
    }
    for (let seed = 1; seed <= SEEDS; seed++) {
      const next = random(seed * 7919 + name.length);
      const biggest = [2, 8, 64, 512][seed % 4];
      const cut = () => 1 + Math.floor(next() * biggest);
      const gap = () => Math.floor(next() * 40);
      assert.deepEqual(stream(data, cut, gap), whole, `seed ${seed}`);
    }
  });
}
