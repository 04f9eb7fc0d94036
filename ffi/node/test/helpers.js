'use strict';
// Shared by the tests: a turn driven to the end on a virtual clock (acking every send).

const TEXT =
  'Good question. The short answer is yes, and here is why.\n\n' +
  'Rivers carry sediment downstream, and where the current slows the sediment settles. ' +
  'Over centuries that builds a delta, caf\u00e9 and \u{1F30A} included.\n\n' +
  'So the town really is standing on ground the river made.';

/**
 * Polls and executes every action (acking sends with a message id), firing deadlines, until
 * idle or nothing is left to wait for. Returns the clock.
 */
function drive(engine, now, log, limit = 10_000) {
  for (let i = 0; i < limit; i++) {
    for (const action of engine.actions()) {
      log.push(action);
      if (action.kind === 'send') {
        now += 5;
        engine.delivered(action.sendId, now, `m${action.sendId}`);
      }
    }
    if (log.some((a) => a.kind === 'idle')) return now;
    const deadline = engine.nextDeadline();
    if (deadline === null) return now;
    now = Math.max(now, deadline);
    engine.timer(now);
  }
  throw new Error('engine did not settle');
}

const sends = (log) => log.filter((a) => a.kind === 'send');

/** UTF-16 units of a string (its length). */
const utf16 = (s) => s.length;
/** Unicode scalar values. */
const chars = (s) => [...s].length;
/** UTF-8 bytes. */
const bytes = (s) => Buffer.byteLength(s, 'utf8');

module.exports = { TEXT, bytes, chars, drive, sends, utf16 };
