"""split() and chunk(): lists of blocks that give back the text exactly, from the pieces
alone (lead, source_text, sep), under the smallest limits; limits too small are refused."""

import os
import unittest

import replystream
from replystream import Block, chunk, min_limit, split

DOC = (
    "Rivers carry sediment downstream; where the current slows it settles. "
    "\u6cb3\u6d41\u642c\u8fd0\u6ce5\u6c99\u3002 \U0001F30A and so a delta grows.\n\n"
    "```python\ndef delta(flow, load):\n    return load / max(flow, 1)\n\n"
    "print(delta(3, 12))\n```\n\n"
) * 8


def fences_balanced(text):
    """Lines opening or closing a fence (``` or ~~~, at most 3 spaces in) come in pairs."""
    def is_fence(line):
        stripped = line.lstrip(" ")
        return len(line) - len(stripped) <= 3 and stripped.startswith(("```", "~~~"))
    return sum(1 for line in text.split("\n") if is_fence(line)) % 2 == 0


def rebuild(blocks):
    """The text the pieces alone give back."""
    return "".join(b.lead + b.source_text + b.sep for b in blocks)


def check_pieces(case, blocks, text):
    """The pieces give back ``text`` exactly; each piece's source is the input's, and what
    lies outside it in ``text`` is synthetic, as the flags say."""
    case.assertEqual(rebuild(blocks), text)
    at = 0
    for b in blocks:
        start, end = b.source_in_text
        at += len(b.lead)
        case.assertEqual((b.start, b.end), (at, at + len(b.source_text)))
        case.assertEqual(text[b.start:b.end], b.source_text)
        at = b.end + len(b.sep)
        case.assertEqual(start > 0,
                         b.fence_reopened or b.indent_reopened or b.table_header_repeated)
        case.assertEqual(end < len(b.text), b.fence_closed)
        if b.indent_reopened:
            case.assertEqual((start, b.text[:4]), (4, "    "))


class Split(unittest.TestCase):
    def check(self, blocks, text, limit, units=len):
        self.assertIsInstance(blocks, list)
        self.assertTrue(all(isinstance(b, Block) for b in blocks))
        for b in blocks:
            self.assertLessEqual(units(b.text), limit)
            self.assertTrue(fences_balanced(b.text), b.text)
            if not (b.fence_reopened or b.fence_closed or b.indent_reopened):
                self.assertEqual(b.text, text[b.start:b.end])
        check_pieces(self, blocks, text)

    def test_split_str_indices_are_characters(self):
        blocks = split(DOC, "telegram", text_limit=120)
        self.assertGreater(len(blocks), 8)
        utf16 = lambda s: len(s.encode("utf-16-le")) // 2  # noqa: E731
        self.check(blocks, DOC, 120, utf16)

    def test_split_bytes_offsets_are_bytes(self):
        data = DOC.encode("utf-8")
        blocks = split(data, "generic", text_limit=200, metric="bytes")
        rebuilt = b"".join(data[b.start:b.end] + b.sep.encode() for b in blocks)
        self.assertEqual(rebuilt.rstrip(), data.rstrip())
        self.assertEqual(rebuild(blocks).encode(), data)
        self.assertTrue(all(len(b.text.encode()) <= 200 for b in blocks))

    def test_newline_mode_splits_every_paragraph(self):
        blocks = split(DOC, "telegram", chunk_mode="newline")
        self.assertEqual(len(blocks), 16)

    def test_chunk(self):
        blocks = chunk(DOC, chunk_min=60, chunk_max=100)
        self.check(blocks, DOC, 100)
        self.assertEqual(chunk(""), [])
        self.assertEqual([b.text for b in chunk("Short.")], ["Short."])

    def test_pieces_rebuild_hard_texts_at_the_smallest_limit(self):
        smallest = min_limit("chars")
        self.assertEqual(smallest, 24)
        texts = {
            "crlf": "\r\n\r\n  Rivers carry sediment downstream.\r\nWhere the current slows it "
                    "settles, and a delta grows.\r\n\r\n```\r\nlet a = 1;\r\nlet b = 2;\r\n"
                    "```\r\n\r\nThat is all.\r\n \r\n",
            "indented": "Run this:\n\n    for river in rivers: print(river.name, river.length, "
                        "river.mouth)\n    done()\n\nThen stop.\n",
            "info string": "Intro.\n\n```python title=\"a very long info string for the fence\" "
                           "linenums=1\nprint('one')\nprint('two')\nprint('three')\n```\n\n"
                           "Outro after the code.",
            "tildes and emoji": "~~~~ text\n\u6cb3\u6d41 \U0001F469\U0001F3FB\u200d\u2764"
                                "\ufe0f\u200d\U0001F48B\u200d\U0001F468\U0001F3FC one two three "
                                "four five six\n~~~~\n",
        }
        for name, text in texts.items():
            for cut in (split, chunk):
                with self.subTest(name=name, cut=cut.__name__):
                    blocks = cut(text, "discord", text_limit=smallest, chunk_min=12,
                                 chunk_max=smallest)
                    self.assertGreater(len(blocks), 1)
                    self.assertTrue(any(b.fence_reopened or b.fence_closed or
                                        b.indent_reopened for b in blocks))
                    for b in blocks:
                        self.assertLessEqual(len(b.text), smallest)
                        self.assertTrue(fences_balanced(b.text), b.text)
                    check_pieces(self, blocks, text)
                    # Bytes in, the same pieces; their byte offsets give back the bytes.
                    data = text.encode()
                    raw = cut(data, "discord", text_limit=smallest, chunk_min=12,
                              chunk_max=smallest)
                    self.assertEqual(rebuild(raw).encode(), data)
                    self.assertEqual([b.text for b in raw], [b.text for b in blocks])
        self.assertTrue(any(b.indent_reopened for b in split(texts["indented"], "discord",
                                                              text_limit=smallest)))
        self.assertEqual(split("  \n\n"), [])  # only whitespace: no pieces

    def test_a_long_table_repeats_its_header(self):
        text = "Budget:\n\n| Item | Cost |\n|---|---:|\n" + "".join(
            f"| item {i} | {i * 100} |\n" for i in range(40))
        blocks = split(text, "generic", text_limit=200)
        self.assertTrue(any(b.table_header_repeated for b in blocks))
        check_pieces(self, blocks, text)
        for b in blocks:
            if b.table_header_repeated:
                self.assertTrue(b.text.startswith("| Item | Cost |\n|---|---:|\n| item "))
                self.assertEqual(b.source_in_text[0], len("| Item | Cost |\n|---|---:|\n"))

    def test_limits_below_the_smallest_are_refused(self):
        for metric, smallest in (("utf16", 29), ("chars", 24), ("bytes", 49), ("graphemes", 15)):
            with self.subTest(metric=metric):
                self.assertEqual(min_limit(metric), smallest)
                text = "```\ncode\n```"
                for cut in (split, chunk):
                    with self.assertRaises(ValueError) as cm:
                        cut(text, metric=metric, text_limit=smallest - 1)
                    self.assertIn("text_limit", str(cm.exception))
                    self.assertEqual(cm.exception.code, replystream.INVALID_CONFIG)
                    self.assertEqual(rebuild(cut(text, metric=metric, text_limit=smallest,
                                                 chunk_max=smallest)), text)
                with self.assertRaises(ValueError) as cm:
                    chunk(text, metric=metric, chunk_min=1, chunk_max=smallest - 1)
                self.assertIn("chunk_max", str(cm.exception))
        with self.assertRaises(ValueError) as cm:
            min_limit("furlongs")
        self.assertIn("metric", str(cm.exception))
        with self.assertRaises(TypeError):
            min_limit(3)

    def test_bad_arguments(self):
        with self.assertRaises(TypeError):
            split(5)
        with self.assertRaises(ValueError) as cm:
            split("x", text_limit=3)
        self.assertIn("text_limit", str(cm.exception))
        with self.assertRaises(ValueError) as cm:
            chunk("x", "nowhere")
        self.assertEqual(cm.exception.code, replystream.UNKNOWN_CHANNEL)
        with self.assertRaises(ValueError):
            split(b"\xc3(")


class DeepListCode(unittest.TestCase):
    """Issue 16 defect 2: code 4 columns deep in a list item, cut: the pieces that start
    inside it are shown de-indented by the item's 3 columns, and say so."""

    TEXT = ("1. Install the toolchain first, it is pinned.\n\n    ```bash\n"
            + "".join(f"    echo step {i} of the setup\n" for i in range(30))
            + "    ```\n\n2. Then go on.")

    def test_pieces_inside_the_item_code_are_de_indented(self):
        blocks = split(self.TEXT, text_limit=200)
        self.assertEqual("".join(b.lead + self.TEXT[b.start:b.end] + b.sep for b in blocks),
                         self.TEXT)
        deep = [b for b in blocks if b.dedent]
        self.assertGreaterEqual(len(deep), 2, [b.text for b in blocks])
        for b in deep:
            self.assertEqual(b.dedent, 3)
            self.assertTrue(b.text.startswith(" ```bash\n"), b.text)
            # Each source line without the item's 3 columns, nothing else changed.
            lines = self.TEXT[b.start:b.end].split("\n")
            self.assertEqual(b.source_text, "\n".join(line[3:] for line in lines))
            self.assertTrue(b.text.endswith("\n ```"), b.text)
        for b in blocks:
            if not b.dedent:
                self.assertEqual(b.source_text, self.TEXT[b.start:b.end])


class QuotedItemCode(unittest.TestCase):
    """A list item in a block quote whose fence sits 4 columns past the ``>``: the piece
    that starts inside it (a 5-line cap) loses the item's 3 columns after each ``> ``, and
    says so (``dedent`` 3 after ``dedent_quotes`` 1)."""

    TEXT = ("> 1) Run:\n>     ```\n>     let first = 65;\n>     cargo build --release\n>\n"
            ">     print(1)\n>     ```\n>\n> 2) Ship it.")

    def test_the_piece_inside_the_fence_is_de_indented_after_the_quote_marker(self):
        blocks = split(self.TEXT, text_limit=300, metric="chars", max_lines=5)
        self.assertEqual([b.text for b in blocks], [
            "> 1) Run:\n>     ```\n>     let first = 65;\n>     ```",
            ">  ```\n>  cargo build --release\n>\n>  print(1)\n>  ```",
            ">\n> 2) Ship it.",
        ])
        self.assertEqual([(b.dedent, b.dedent_quotes) for b in blocks], [(0, 0), (3, 1), (0, 0)])
        self.assertEqual("".join(b.lead + self.TEXT[b.start:b.end] + b.sep for b in blocks),
                         self.TEXT)
        # Each source line with the item's 3 columns taken off after its `> `.
        lines = self.TEXT[blocks[1].start:blocks[1].end].split("\n")
        self.assertEqual(blocks[1].source_text,
                         "\n".join(line[:2] + line[5:] if len(line) > 2 else line
                                   for line in lines))


class Package(unittest.TestCase):
    def test_the_library_is_bundled(self):
        if os.environ.get("REPLYSTREAM_LIB"):
            self.skipTest("REPLYSTREAM_LIB points to another copy")
        package_dir = os.path.dirname(os.path.abspath(replystream.__file__))
        self.assertEqual(os.path.dirname(str(replystream.library_path())), package_dir)
        self.assertTrue(os.path.exists(os.path.join(package_dir, "py.typed")))


if __name__ == "__main__":
    unittest.main()
