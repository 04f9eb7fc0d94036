'use strict';
// split() and chunk(): pieces that give back the text exactly, from the pieces alone (lead,
// sourceText, sep), under the smallest limits; limits too small are refused.

const test = require('node:test');
const assert = require('node:assert/strict');
const { InvalidConfigError, ResultCode, UnknownChannelError, chunk, minLimit, split } = require('replystream');
const { bytes, chars, utf16 } = require('./helpers');

const DOC = (
  'Rivers carry sediment downstream; where the current slows it settles. ' +
  '\u6cb3\u6d41\u642c\u8fd0\u6ce5\u6c99\u3002 \u{1F30A} and so a delta grows.\n\n' +
  '```python\ndef delta(flow, load):\n    return load / max(flow, 1)\n\n' +
  'print(delta(3, 12))\n```\n\n'
).repeat(8);

/** Lines opening or closing a fence (``` or ~~~, at most 3 spaces in) come in pairs. */
function fencesBalanced(text) {
  const isFence = (line) => {
    const stripped = line.replace(/^ */, '');
    return line.length - stripped.length <= 3 && (stripped.startsWith('```') || stripped.startsWith('~~~'));
  };
  return text.split('\n').filter(isFence).length % 2 === 0;
}

/** The text the pieces alone give back. */
const rebuild = (blocks) => blocks.map((b) => b.lead + b.sourceText + b.sep).join('');

/**
 * The pieces give back `text` exactly; each piece's source is the input's, and what lies
 * outside it in `text` is synthetic, as the flags say.
 */
function checkPieces(blocks, text) {
  assert.equal(rebuild(blocks), text);
  let at = 0;
  for (const b of blocks) {
    const [start, end] = b.sourceInText;
    at += b.lead.length;
    assert.deepEqual([b.start, b.end], [at, at + b.sourceText.length]);
    assert.equal(text.slice(b.start, b.end), b.sourceText);
    assert.equal(b.text.slice(start, end), b.sourceText);
    at = b.end + b.sep.length;
    assert.equal(start > 0, b.fenceReopened || b.indentReopened || b.tableHeaderRepeated);
    assert.equal(end < b.text.length, b.fenceClosed);
    if (b.indentReopened) assert.deepEqual([start, b.text.slice(0, 4)], [4, '    ']);
  }
}

function check(blocks, text, limit, units) {
  assert.ok(Array.isArray(blocks));
  for (const b of blocks) {
    assert.ok(units(b.text) <= limit, `${units(b.text)} > ${limit}: ${JSON.stringify(b.text)}`);
    assert.ok(fencesBalanced(b.text), b.text);
    if (!(b.fenceReopened || b.fenceClosed || b.indentReopened || b.tableHeaderRepeated)) {
      assert.equal(b.text, text.slice(b.start, b.end));
    }
    assert.ok(Object.isFrozen(b));
  }
  checkPieces(blocks, text);
}

test('split: string indices are UTF-16 indices', () => {
  const blocks = split(DOC, 'telegram', { textLimit: 120 });
  assert.ok(blocks.length > 8);
  check(blocks, DOC, 120, utf16);
});

test('split: byte input gives byte offsets', () => {
  const data = Buffer.from(DOC);
  const blocks = split(data, 'generic', { textLimit: 200, metric: 'bytes' });
  const rebuilt = Buffer.concat(blocks.map((b) => Buffer.concat([
    data.subarray(b.start, b.end), Buffer.from(b.sep)])));
  assert.equal(rebuilt.toString().trimEnd(), DOC.trimEnd());
  assert.equal(rebuild(blocks), DOC);
  assert.ok(blocks.every((b) => bytes(b.text) <= 200));
  for (const b of blocks) assert.equal(data.subarray(b.start, b.end).toString(), b.sourceText);
});

test('newline mode splits every paragraph', () => {
  assert.equal(split(DOC, 'telegram', { chunkMode: 'newline' }).length, 16);
});

test('chunk', () => {
  check(chunk(DOC, 'generic', { chunkMin: 60, chunkMax: 100 }), DOC, 100, utf16);
  assert.deepEqual(chunk(''), []);
  assert.deepEqual(chunk('Short.').map((b) => b.text), ['Short.']);
});

test('pieces rebuild hard texts at the smallest limit', async (t) => {
  const smallest = minLimit('chars');
  assert.equal(smallest, 24);
  const texts = {
    crlf: '\r\n\r\n  Rivers carry sediment downstream.\r\nWhere the current slows it settles, and a ' +
      'delta grows.\r\n\r\n```\r\nlet a = 1;\r\nlet b = 2;\r\n```\r\n\r\nThat is all.\r\n \r\n',
    indented: 'Run this:\n\n    for river in rivers: print(river.name, river.length, river.mouth)\n' +
      '    done()\n\nThen stop.\n',
    'info string': 'Intro.\n\n```python title="a very long info string for the fence" linenums=1\n' +
      "print('one')\nprint('two')\nprint('three')\n```\n\nOutro after the code.",
    'tildes and emoji': '~~~~ text\n\u6cb3\u6d41 \u{1F469}\u{1F3FB}\u200d\u2764\ufe0f\u200d\u{1F48B}' +
      '\u200d\u{1F468}\u{1F3FC} one two three four five six\n~~~~\n',
    'combining marks': 'e\u0301'.repeat(40) + '\n\n' + 'Z\u0351\u0352\u0353'.repeat(30),
  };
  const options = { textLimit: smallest, chunkMin: 12, chunkMax: smallest };
  for (const [name, text] of Object.entries(texts)) {
    for (const cut of [split, chunk]) {
      await t.test(`${name} (${cut.name})`, () => {
        const blocks = cut(text, 'discord', options);
        assert.ok(blocks.length > 1);
        if (name !== 'combining marks') {
          assert.ok(blocks.some((b) => b.fenceReopened || b.fenceClosed || b.indentReopened));
        }
        for (const b of blocks) {
          assert.ok(chars(b.text) <= smallest, JSON.stringify(b.text));
          assert.ok(fencesBalanced(b.text), b.text);
          // A grapheme is never cut: no piece starts with a combining mark or a joiner.
          assert.ok(!/^[\u0300-\u036f\u200d\ufe0f]/u.test(b.sourceText), JSON.stringify(b.sourceText));
        }
        checkPieces(blocks, text);
        // Bytes in, the same pieces; their byte offsets give back the bytes.
        const data = Buffer.from(text);
        const raw = cut(data, 'discord', options);
        assert.equal(rebuild(raw), text);
        assert.deepEqual(raw.map((b) => b.text), blocks.map((b) => b.text));
        for (const b of raw) assert.equal(data.subarray(b.start, b.end).toString(), b.sourceText);
      });
    }
  }
  assert.ok(split(texts.indented, 'discord', { textLimit: smallest }).some((b) => b.indentReopened));
  assert.deepEqual(split('  \n\n'), []); // only whitespace: no pieces
});

test('limits below the smallest are refused', () => {
  for (const [metric, smallest] of [['utf16', 29], ['chars', 24], ['bytes', 49], ['graphemes', 15]]) {
    assert.equal(minLimit(metric), smallest);
    const text = '```\ncode\n```';
    for (const cut of [split, chunk]) {
      assert.throws(() => cut(text, 'generic', { metric, textLimit: smallest - 1 }), (err) =>
        err instanceof InvalidConfigError && err.field === 'textLimit' &&
        err.code === ResultCode.INVALID_CONFIG);
      assert.equal(rebuild(cut(text, 'generic', { metric, textLimit: smallest, chunkMax: smallest })), text);
    }
    assert.throws(() => chunk(text, 'generic', { metric, chunkMin: 1, chunkMax: smallest - 1 }), (err) =>
      err instanceof InvalidConfigError && err.field === 'chunkMax');
  }
  assert.throws(() => minLimit('furlongs'), (err) => err instanceof RangeError && err.message.includes('metric'));
  assert.throws(() => minLimit(3), TypeError);
});

test('bad arguments', () => {
  assert.throws(() => split(5), TypeError);
  assert.throws(() => split('x', 5), TypeError);
  assert.throws(() => split('x', 'generic', { textLimit: 3 }), (err) => err.field === 'textLimit');
  assert.throws(() => split('x', 'generic', { colour: 'red' }), TypeError);
  assert.throws(() => chunk('x', 'nowhere'), (err) =>
    err instanceof UnknownChannelError && err.code === ResultCode.UNKNOWN_CHANNEL && err.field === 'channel');
  assert.throws(() => split(Uint8Array.from([0xc3, 0x28])), (err) => err.code === ResultCode.INVALID_UTF8);
});

test('a long table is cut between rows and each part repeats its header', () => {
  const head = '| Item | Cost |\n|---|---:|\n';
  let text = `Budget:\n\n${head}`;
  for (let i = 0; i < 40; i++) text += `| item number ${i} | ${i * 100} |\n`;
  const blocks = split(text, 'generic', { textLimit: 200 });
  checkPieces(blocks, text);
  const continued = blocks.filter((b) => b.tableHeaderRepeated);
  assert.ok(continued.length >= 2, JSON.stringify(blocks.map((b) => b.text)));
  for (const b of continued) {
    assert.ok(b.text.startsWith(head), b.text);
    assert.equal(b.sourceInText[0], head.length);
  }
  for (const b of blocks) assert.ok(!b.text.startsWith('|---'), b.text);
});

test('issue 16 defect 2: pieces inside code 4 columns deep in a list item are de-indented', () => {
  let text = '1. Install the toolchain first, it is pinned.\n\n    ```bash\n';
  for (let i = 0; i < 30; i++) text += `    echo step ${i} of the setup\n`;
  text += '    ```\n\n2. Then go on.';
  const blocks = split(text, 'generic', { textLimit: 200 });
  assert.equal(blocks.map((b) => b.lead + text.slice(b.start, b.end) + b.sep).join(''), text);
  const deep = blocks.filter((b) => b.dedent > 0);
  assert.ok(deep.length >= 2, JSON.stringify(blocks.map((b) => b.text)));
  for (const b of deep) {
    assert.equal(b.dedent, 3);
    assert.ok(b.text.startsWith(' ```bash\n'), b.text);
    assert.ok(b.text.endsWith('\n ```'), b.text);
    const lines = text.slice(b.start, b.end).split('\n').map((l) => l.slice(3));
    assert.equal(b.sourceText, lines.join('\n'));
  }
  for (const b of blocks.filter((x) => x.dedent === 0)) assert.equal(b.sourceText, text.slice(b.start, b.end));
});

test('a piece inside a quoted list item\'s deep fence is de-indented after the quote marker', () => {
  const text = '> 1) Run:\n>     ```\n>     let first = 65;\n>     cargo build --release\n>\n' +
    '>     print(1)\n>     ```\n>\n> 2) Ship it.';
  const blocks = split(text, 'generic', { textLimit: 300, metric: 'chars', maxLines: 5 });
  assert.deepEqual(blocks.map((b) => [b.text, b.dedent, b.dedentQuotes]), [
    ['> 1) Run:\n>     ```\n>     let first = 65;\n>     ```', 0, 0],
    ['>  ```\n>  cargo build --release\n>\n>  print(1)\n>  ```', 3, 1],
    ['>\n> 2) Ship it.', 0, 0],
  ]);
  assert.equal(blocks.map((b) => b.lead + text.slice(b.start, b.end) + b.sep).join(''), text);
});
