// ns per 4-byte push through the binding, as benches/engine.rs measures the Rust engine:
// the same text (tests/data: prose, code, lists), 4-byte deltas cut at character
// boundaries, each send acked at once ("blocks emitted"), or 2 KB of it into an engine whose
// blocks are larger ("nothing emitted", each push followed by a poll that finds no send).
// Each figure is the median of 7 rounds of about 60 000 pushes, in CPU time (user + system)
// of this process, so that other processes on a busy machine count less. Not part of the
// tests or the package:   node bench/push.mjs   (from ffi/node, after the release build)
import { readFileSync } from 'node:fs';
import { Engine } from 'replystream';

const data = new URL('../../../tests/data/', import.meta.url);
const TEXT = ['prose-paragraphs.md', 'code-heavy.md', 'lists-tables.md']
  .map((name) => readFileSync(new URL(name, data), 'utf8'))
  .join('');

/** `text` in deltas of `size` UTF-8 bytes, each moved forward to a character boundary. */
function deltas(text, size) {
  const bytes = Buffer.from(text);
  const out = [];
  for (let start = 0; start < bytes.length;) {
    let end = Math.min(start + size, bytes.length);
    while (end < bytes.length && (bytes[end] & 0xc0) === 0x80) end++;
    out.push(bytes.toString('utf8', start, end));
    start = end;
  }
  return out;
}

/** CPU time of this process in ms. */
function cpuMs() {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

function drain(engine, now) {
  for (let a = engine.poll(); a !== null; a = engine.poll()) {
    if (a.kind === 'send') engine.delivered(a.sendId, now);
  }
}

/** A whole turn, every send acked at once. */
function withEmission(channel, pieces) {
  const engine = new Engine(channel, { seed: 1 });
  let now = 0;
  for (const piece of pieces) {
    now += 1;
    engine.textDelta(piece, now);
    drain(engine, now);
  }
  engine.finish(now);
  drain(engine, now);
  engine.close();
}

/** Pushes absorbed without a send (a timer request may come out of the first). */
function withoutEmission(channel, pieces, poll) {
  const engine = new Engine(channel, { seed: 1, chunkMin: 3000, chunkMax: 3500 });
  for (let i = 0; i < pieces.length; i++) {
    engine.textDelta(pieces[i], i);
    if (poll) {
      for (let a = engine.poll(); a !== null; a = engine.poll()) {
        if (a.kind === 'send') throw new Error('a send');
      }
    }
  }
  engine.close();
}

/** ns per push: the median over rounds of `repeat` runs of `pushes` pushes each. */
function measure(run, pushes) {
  const repeat = Math.ceil(60_000 / pushes);
  for (let i = 0; i < repeat; i++) run(); // warm-up
  const rounds = [];
  for (let r = 0; r < 7; r++) {
    const start = cpuMs();
    for (let i = 0; i < repeat; i++) run();
    rounds.push(((cpuMs() - start) * 1e6) / (repeat * pushes));
  }
  return rounds.sort((a, b) => a - b)[3].toFixed(0);
}

const all = deltas(TEXT, 4);
const quiet = deltas(TEXT.slice(0, 2000), 4);
const quietBytes = quiet.map((s) => Buffer.from(s));
console.log(`${all.length} pushes per turn (blocks emitted), ${quiet.length} (nothing emitted)`);
console.log('channel | blocks emitted | nothing emitted: push + poll | push alone | Uint8Array deltas, push + poll');
for (const channel of ['telegram', 'discord', 'generic']) {
  console.log([
    channel,
    measure(() => withEmission(channel, all), all.length),
    measure(() => withoutEmission(channel, quiet, true), quiet.length),
    measure(() => withoutEmission(channel, quiet, false), quiet.length),
    measure(() => withoutEmission(channel, quietBytes, true), quiet.length),
  ].join(' | ') + ' ns');
}
