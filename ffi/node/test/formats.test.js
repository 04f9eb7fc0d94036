'use strict';
// Platform formats through the Node package: each send's text to post, its format, the
// Markdown it came from and (telegram-entities) its entities, judged here by slicing the
// text at the entities' UTF-16 offsets (JavaScript's own string indices); render(); the
// format options and their refusals.

const test = require('node:test');
const assert = require('node:assert/strict');
const {
  Engine, FORMATS, InvalidConfigError, InvalidUtf8Error, UnknownChannelError, render, split,
} = require('replystream');

const MD =
  '# Title\n\n' +
  '\u{1F600} **Bold** and _it_ [link](https://e.com/a?b=1&c=2) `x<y` & ~~gone~~ @everyone\n\n' +
  '- one\n- two\n\n' +
  '```py\nprint(1 < 2)\n```\n\n' +
  '> quoted';

// What each format posts for MD (reviewed by hand; the same table as the C and Python tests).
const WANT = {
  markdown: MD,
  discord: MD.replace('@everyone', '@\u200beveryone'),
  'telegram-html':
    '<b>Title</b>\n\n' +
    '\u{1F600} <b>Bold</b> and <i>it</i> <a href="https://e.com/a?b=1&amp;c=2">link</a> ' +
    '<code>x&lt;y</code> &amp; <s>gone</s> @everyone\n\n' +
    '\u2022 one\n\u2022 two\n\n' +
    '<pre><code class="language-py">print(1 &lt; 2)</code></pre>\n\n' +
    '<blockquote>quoted</blockquote>',
  'telegram-entities':
    'Title\n\n\u{1F600} Bold and it link x<y & gone @everyone\n\n' +
    '\u2022 one\n\u2022 two\n\nprint(1 < 2)\n\nquoted',
  'slack-mrkdwn':
    '*Title*\n\n' +
    '\u{1F600} *Bold* and _it_ <https://e.com/a?b=1&amp;c=2|link> `x&lt;y` &amp; ~gone~ ' +
    '@everyone\n\n\u2022 one\n\u2022 two\n\n```print(1 &lt; 2)```\n\n> quoted',
  whatsapp:
    '*Title*\n\n' +
    '\u{1F600} *Bold* and _it_ link (https://e.com/a?b=1&c=2) `x<y` & ~gone~ @everyone\n\n' +
    '\u2022 one\n\u2022 two\n\n```print(1 < 2)```\n\n> quoted',
  plain:
    'Title\n\n' +
    '\u{1F600} Bold and it link (https://e.com/a?b=1&c=2) x<y & gone @everyone\n\n' +
    '\u2022 one\n\u2022 two\n\nprint(1 < 2)\n\n> quoted',
};

/** Each entity as [type, the text it covers, url, language]: JS strings are UTF-16. */
const covered = (text, entities) => entities.map((e) =>
  [e.type, text.slice(e.offset, e.offset + e.length), e.url ?? null, e.language ?? null]);

const WANT_ENTITIES = [
  ['bold', 'Title', null, null],
  ['bold', 'Bold', null, null],
  ['italic', 'it', null, null],
  ['text_link', 'link', 'https://e.com/a?b=1&c=2', null],
  ['code', 'x<y', null, null],
  ['strikethrough', 'gone', null, null],
  ['pre', 'print(1 < 2)', null, 'py'],
  ['blockquote', 'quoted', null, null],
];

/** Every send of a turn, acked at once, until the engine is done. */
function sends(engine, now = 0) {
  const out = [];
  for (let i = 0; i < 1000; i++) {
    for (const a of engine.actions()) {
      if (a.kind !== 'send') continue;
      out.push(a);
      engine.delivered(a.sendId, now);
    }
    if (engine.isDone()) return out;
    const deadline = engine.nextDeadline();
    if (deadline === null) return out;
    now = Math.max(now, deadline);
    engine.timer(now);
  }
  throw new Error('engine did not settle');
}

function turn(channel, options, feed) {
  const e = new Engine(channel, options);
  try {
    feed(e);
    e.finish(0);
    return sends(e);
  } finally {
    e.close();
  }
}

test('every format: the send carries the text to post, its format, the Markdown, entities', () => {
  assert.deepEqual(FORMATS, Object.keys(WANT));
  for (const format of FORMATS) {
    const got = turn('generic', { format }, (e) => e.textDelta(MD, 0));
    assert.equal(got.length, 1, format);
    const [send] = got;
    assert.deepEqual([send.format, send.text, send.markdown], [format, WANT[format], MD]);
    if (format === 'telegram-entities') {
      assert.deepEqual(covered(send.text, send.entities), WANT_ENTITIES);
      // The emoji before "Bold" is two UTF-16 units: offset 10.
      assert.equal(send.entities[1].offset, 10);
    } else {
      assert.deepEqual(send.entities, [], format);
    }
  }
});

test('render() agrees with the engine; entities are Bot API objects as they are', () => {
  for (const format of FORMATS) {
    const r = render(MD, 'generic', { format });
    assert.deepEqual([r.format, r.text], [format, WANT[format]]);
    assert.deepEqual(covered(r.text, r.entities),
      format === 'telegram-entities' ? WANT_ENTITIES : []);
  }
  const r = render('[a](https://x.y)\n\n```rs\nfn\n```', 'telegram', { format: 'telegram-entities' });
  assert.equal(JSON.stringify(r.entities),
    '[{"type":"text_link","offset":0,"length":1,"url":"https://x.y"},' +
    '{"type":"pre","offset":3,"length":2,"language":"rs"}]');
  // Bytes in, the same text out.
  assert.equal(render(Buffer.from('**b**'), 'slack').text, '*b*');
});

test('each channel renders in its own format unless told otherwise', () => {
  for (const [channel, format] of [['telegram', 'telegram-html'], ['slack', 'slack-mrkdwn'],
    ['discord', 'discord'], ['whatsapp', 'whatsapp'], ['signal', 'plain'],
    ['imessage', 'plain'], ['generic', 'markdown']]) {
    assert.equal(render(MD, channel).format, format, channel);
    const got = turn(channel, {}, (e) => e.textDelta('**hi**', 0));
    assert.deepEqual(got.map((s) => s.format), [format], channel);
  }
  assert.equal(render(MD, 'slack', { format: null }).format, 'slack-mrkdwn');
});

test('Telegram reasoning goes in an expandable quote', () => {
  const got = turn('telegram', { reasoning: 'on' }, (e) => {
    e.thinkingDelta('Plan **it** <now>', 0);
    e.textDelta('Done.', 0);
  });
  assert.deepEqual(got.map((s) => [s.lane, s.text, s.markdown]), [
    ['reasoning',
      '<blockquote expandable>Reasoning:\n<i>Plan <b>it</b> &lt;now&gt;</i></blockquote>',
      'Reasoning:\n_Plan **it** <now>_'],
    ['answer', 'Done.', 'Done.'],
  ]);
});

test('table modes, mass mentions, captions, and the span flags of split()', () => {
  const table = '| a | bb |\n|---|---|\n| 1 | 2 |\n| 33 | 4 |';
  const code = '<pre>a  | bb\n---|---\n1  | 2\n33 | 4</pre>';
  assert.equal(render(table, 'telegram').text, code);
  assert.equal(render(table, 'telegram', { tableMode: 'block' }).text, code);
  assert.equal(render(table, 'slack', { tableMode: 'bullets' }).text,
    '\u2022 a: 1; bb: 2\n\u2022 a: 33; bb: 4');
  assert.equal(render(table, 'whatsapp', { tableMode: 'off' }).text, table);
  assert.equal(render('hi @here', 'discord').text, 'hi @\u200bhere');
  assert.equal(render('hi @here', 'discord', { allowMassMentions: true }).text, 'hi @here');

  const caption = 'This caption is longer than forty characters, by a lot.';
  const reply = `${caption}\nMEDIA: https://example.com/chart.png`;
  const shown = (options) => turn('generic', options, (e) => e.textDelta(reply, 0))
    .map((s) => [s.text, s.media]);
  assert.deepEqual(shown({ captionLimit: 40 }),
    [[caption, []], ['', ['https://example.com/chart.png']]]);
  assert.deepEqual(shown({ captionLimit: null }), [[caption, ['https://example.com/chart.png']]]);

  const pieces = split(`**${Array(40).fill('word').join(' ')}**`, 'generic',
    { textLimit: 60, metric: 'chars' });
  assert.ok(pieces.length >= 2);
  pieces.forEach((p, i) => {
    assert.equal(p.spansClosed, i + 1 < pieces.length);
    assert.equal(p.spansReopened, i > 0);
    assert.ok(p.text.startsWith('**') && p.text.endsWith('**'), p.text);
  });
});

test('refusals: unknown names, a format the channel cannot show, bad types and text', () => {
  for (const [option, value] of [['format', 'markdownv2'], ['format', ''], ['tableMode', 'grid']]) {
    assert.throws(() => new Engine('generic', { [option]: value }), (error) => {
      assert.ok(error instanceof InvalidConfigError, String(error));
      assert.equal(error.field, option);
      assert.ok(error.message.includes(JSON.stringify(value)), error.message);
      return true;
    });
  }
  assert.throws(() => render('x', 'generic', { format: 'markdownv2' }), /telegram-entities/);
  for (const call of [
    () => new Engine('telegram', { format: 'slack-mrkdwn' }),
    () => render('x', 'telegram', { format: 'slack-mrkdwn' }),
    () => split('x', 'telegram', { format: 'slack-mrkdwn' }),
  ]) {
    assert.throws(call, (error) => error instanceof InvalidConfigError && error.field === 'format' &&
      error.message.includes('format slack-mrkdwn cannot be shown on channel telegram'));
  }
  assert.throws(() => new Engine('telegram', { tableMode: 'native' }),
    (error) => error instanceof InvalidConfigError && error.field === 'tableMode');
  assert.throws(() => new Engine('generic', { format: 3 }), TypeError);
  assert.throws(() => new Engine('generic', { allowMassMentions: 'yes' }), TypeError);
  assert.throws(() => new Engine('generic', { captionLimit: -1 }), RangeError);
  assert.throws(() => new Engine('generic', { captionLimit: 1.5 }), RangeError);
  assert.throws(() => render(null), TypeError);
  assert.throws(() => render('lone \ud800 surrogate', 'telegram'), TypeError);
  assert.throws(() => new Engine('generic', { format: 'pl\udc00' }), TypeError);
  assert.throws(() => render(Buffer.from([0x6f, 0x6b, 0x20, 0x80]), 'telegram'),
    (error) => error instanceof InvalidUtf8Error && error.field === 'text');
  assert.throws(() => render('x', 'nowhere'),
    (error) => error instanceof UnknownChannelError && error.field === 'channel');
});

/**
 * Telegram's HTML rules, written here: only its tags, each closed in order, `<`, `>` and `&`
 * escaped in the text. Returns the visible text (entities decoded), or throws.
 */
function telegramVisible(html) {
  const allowed = new Set(['b', 'strong', 'i', 'em', 'u', 'ins', 's', 'strike', 'del', 'a', 'code',
    'pre', 'tg-spoiler', 'blockquote', 'span']);
  const open = [];
  let visible = '';
  let at = 0;
  for (const m of html.matchAll(/<(\/?)([a-z-]+)((?: [a-z-]+(?:="[^"<>]*")?)*)>/g)) {
    visible += html.slice(at, m.index);
    at = m.index + m[0].length;
    const [, closing, name] = m;
    assert.ok(allowed.has(name), `tag <${name}> in ${html}`);
    if (closing) assert.equal(open.pop(), name, `</${name}> closes another tag in ${html}`);
    else open.push(name);
  }
  visible += html.slice(at);
  assert.deepEqual(open, [], `unclosed ${open} in ${html}`);
  assert.ok(!/[<>]/.test(visible), `a bare < or > in ${html}`);
  assert.ok(!/&(?!amp;|lt;|gt;|quot;)/.test(visible), `a bare & in ${html}`);
  return visible.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"')
    .replace(/&amp;/g, '&');
}

test('Telegram previews: every create and edit is well-formed HTML, the cursor after every tag', () => {
  const md = 'Here is **bold text that goes on** and a [link](https://x.y?a=1&b=2) then `code <x>` ' +
    'and more words to pass the first threshold.\n\n```py\nprint(1 < 2)\n```\nDone & dusted.';
  const e = new Engine('telegram', { preview: 'partial', previewThrottleMs: 250 });
  const previews = [];
  const finals = [];
  let now = 0;
  const drain = () => {
    for (const a of e.actions()) {
      if (a.kind !== 'send') continue;
      (a.sendKind === 'preview' ? previews : finals).push(a);
      e.delivered(a.sendId, now, `m${a.sendId}`);
    }
  };
  for (let i = 0; i < md.length; i += 7) {
    now += 100;
    e.textDelta(md.slice(i, i + 7), now);
    drain();
    const deadline = e.nextDeadline();
    if (deadline !== null && deadline <= now) e.timer(now);
  }
  e.finish(now);
  for (let i = 0; i < 100 && !e.isDone(); i++) {
    drain();
    const deadline = e.nextDeadline();
    if (deadline === null) break;
    now = Math.max(now, deadline);
    e.timer(now);
  }
  drain();
  e.close();
  assert.ok(previews.length >= 3, `${previews.length} previews`);
  for (const p of previews) {
    assert.equal(p.format, 'telegram-html');
    assert.ok(p.text.endsWith('\u2588'), p.text);
    telegramVisible(p.text.slice(0, -1));
    assert.ok(p.markdown.includes('\u2588'), p.markdown); // the cursor, in the Markdown too
  }
  // The final edits the preview into the whole reply, rendered as render() renders it.
  assert.equal(finals.length, 1);
  assert.equal(finals[0].op, 'edit');
  assert.equal(finals[0].markdown, md);
  assert.equal(finals[0].text, render(md, 'telegram').text);
  assert.equal(telegramVisible(finals[0].text),
    'Here is bold text that goes on and a link then code <x> and more words to pass the first ' +
    'threshold.\n\nprint(1 < 2)\n\nDone & dusted.');
});
