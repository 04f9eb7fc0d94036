'use strict';
// The media policy for what the model writes (the Python package's MediaPolicy tests): a
// local path is media only inside `mediaRoots`; `http://` can be refused; every refusal is
// counted in `stats().mediaRefused`.

const test = require('node:test');
const assert = require('node:assert/strict');
const { Engine, InvalidConfigError, ReplystreamError } = require('replystream');
const { drive, sends } = require('./helpers');

const REPLY = "Here:\nMEDIA: ~/.ssh/id_rsa\nMEDIA: /etc/shadow\n" +
  "MEDIA: '/srv/media/../../etc/passwd' /srv/media/chart.png\nDone.";

/** [texts sent, media sent, refused count] for `reply` in 3-character deltas. */
function runReply(reply, options = {}) {
  const log = [];
  const e = new Engine('generic', options);
  let refused;
  try {
    for (let i = 0; i < reply.length; i += 3) e.textDelta(reply.slice(i, i + 3), 0);
    e.finish(0);
    drive(e, 0, log);
    refused = e.stats().mediaRefused;
  } finally {
    e.close();
  }
  const sent = sends(log);
  return [sent.map((s) => s.text).filter((t) => t), sent.flatMap((s) => s.media), refused];
}

test('no local path is media by default', () => {
  assert.deepEqual(runReply(REPLY), [['Here:\nDone.'], [], 4]);
  assert.deepEqual(runReply(REPLY, { mediaRoots: [] }), [['Here:\nDone.'], [], 4]);
});

test('paths inside a root are sent resolved', () => {
  assert.deepEqual(runReply(REPLY, { mediaRoots: ['/srv/media/'] }),
    [['Here:', 'Done.'], ['/srv/media/chart.png'], 3]);
  assert.deepEqual(
    runReply('MEDIA: file:///srv/media/a%20b.png /srv/media2/x.png /srv/other/x/../y.jpg\nok',
      { mediaRoots: ['/srv/media', '/srv/other'] }),
    [['ok'], ['/srv/media/a b.png', '/srv/other/y.jpg'], 1]);
  // A root with characters beyond ASCII reaches the library intact.
  assert.deepEqual(runReply('MEDIA: /srv/médias/漢字 👩‍👩‍👧.png\nok', { mediaRoots: ['/srv/médias'] }),
    [['ok'], ['/srv/médias/漢字 👩‍👩‍👧.png'], 0]);
});

test('http can be refused', () => {
  const reply = 'See:\nMEDIA: http://example.com/a.png\nok';
  assert.deepEqual(runReply(reply), [['See:', 'ok'], ['http://example.com/a.png'], 0]);
  assert.deepEqual(runReply(reply, { mediaAllowHttp: true }),
    [['See:', 'ok'], ['http://example.com/a.png'], 0]);
  assert.deepEqual(runReply(reply, { mediaAllowHttp: false }), [[reply], [], 1]);
  const line = 'MEDIA: https://[::ffff:127.0.0.1]/a.png';
  assert.deepEqual(runReply(line), [[line], [], 1]);
});

test('bad roots are refused, naming the root', () => {
  for (const [root, why] of [
    ['media', 'absolute'], ['~/m', 'absolute'], ['/srv/../etc', '..'],
    ['/', 'top of the file system'], ['', 'empty'],
  ]) {
    assert.throws(() => new Engine('generic', { mediaRoots: ['/srv/ok', root] }), (err) => {
      assert.ok(err instanceof InvalidConfigError && err instanceof ReplystreamError, String(err));
      assert.equal(err.field, 'mediaRoots[1]', err.message);
      assert.ok(err.message.includes(why), err.message);
      return true;
    });
  }
});

test('bad media option types are TypeErrors naming the option', () => {
  for (const [options, name] of [
    [{ mediaRoots: '/srv/media' }, 'options.mediaRoots'],
    [{ mediaRoots: [3] }, 'options.mediaRoots[0]'],
    [{ mediaRoots: ['/srv/ok', null] }, 'options.mediaRoots[1]'],
    [{ mediaRoots: ['/srv/\ud800'] }, 'options.mediaRoots[0]'],
    [{ mediaAllowHttp: 'no' }, 'options.mediaAllowHttp'],
    [{ mediaAllowHttp: 0 }, 'options.mediaAllowHttp'],
  ]) {
    assert.throws(() => new Engine('generic', options), (err) => {
      assert.ok(err instanceof TypeError, String(err));
      assert.ok(err.message.startsWith(name), err.message);
      return true;
    });
  }
});
