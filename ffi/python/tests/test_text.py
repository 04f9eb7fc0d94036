"""split() and chunk(): lists of blocks whose source ranges give back the text."""

import os
import unittest

import replystream
from replystream import Block, chunk, split

DOC = (
    "Rivers carry sediment downstream; where the current slows it settles. "
    "\u6cb3\u6d41\u642c\u8fd0\u6ce5\u6c99\u3002 \U0001F30A and so a delta grows.\n\n"
    "```python\ndef delta(flow, load):\n    return load / max(flow, 1)\n\n"
    "print(delta(3, 12))\n```\n\n"
) * 8


def fences_balanced(text):
    return sum(1 for line in text.split("\n") if line.lstrip(" ").startswith("```")) % 2 == 0


class Split(unittest.TestCase):
    def check(self, blocks, text, limit, units=len):
        self.assertIsInstance(blocks, list)
        self.assertTrue(all(isinstance(b, Block) for b in blocks))
        rebuilt = ""
        for b in blocks:
            self.assertLessEqual(units(b.text), limit)
            self.assertTrue(fences_balanced(b.text), b.text)
            rebuilt += text[b.start:b.end] + b.sep
            if not (b.fence_reopened or b.fence_closed):
                self.assertEqual(b.text, text[b.start:b.end])
        self.assertEqual(rebuilt.rstrip(), text.rstrip())

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
        self.assertTrue(all(len(b.text.encode()) <= 200 for b in blocks))

    def test_newline_mode_splits_every_paragraph(self):
        blocks = split(DOC, "telegram", chunk_mode="newline")
        self.assertEqual(len(blocks), 16)

    def test_chunk(self):
        blocks = chunk(DOC, chunk_min=60, chunk_max=100)
        self.check(blocks, DOC, 100)
        self.assertEqual(chunk(""), [])
        self.assertEqual([b.text for b in chunk("Short.")], ["Short."])

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


class Package(unittest.TestCase):
    def test_the_library_is_bundled(self):
        if os.environ.get("REPLYSTREAM_LIB"):
            self.skipTest("REPLYSTREAM_LIB points to another copy")
        package_dir = os.path.dirname(os.path.abspath(replystream.__file__))
        self.assertEqual(os.path.dirname(str(replystream.library_path())), package_dir)
        self.assertTrue(os.path.exists(os.path.join(package_dir, "py.typed")))


if __name__ == "__main__":
    unittest.main()
