"""Platform formats through the Python package: each send's text to post, its format, the
Markdown it came from and (telegram-entities) its entities, judged here by cutting the text
at UTF-16 offsets; render(); the format options and their refusals."""

import unittest

from replystream import FORMATS, Engine, Entity, Rendered, ReplystreamValueError, render, split

MD = (
    "# Title\n\n"
    "\U0001F600 **Bold** and _it_ [link](https://e.com/a?b=1&c=2) `x<y` & ~~gone~~ @everyone\n\n"
    "- one\n- two\n\n"
    "```py\nprint(1 < 2)\n```\n\n"
    "> quoted"
)

# What each format posts for MD (reviewed by hand; the same table as the C test).
WANT = {
    "markdown": MD,
    "discord": MD.replace("@everyone", "@\u200beveryone"),
    "telegram-html": (
        "<b>Title</b>\n\n"
        "\U0001F600 <b>Bold</b> and <i>it</i> <a href=\"https://e.com/a?b=1&amp;c=2\">link</a> "
        "<code>x&lt;y</code> &amp; <s>gone</s> @everyone\n\n"
        "\u2022 one\n\u2022 two\n\n"
        "<pre><code class=\"language-py\">print(1 &lt; 2)</code></pre>\n\n"
        "<blockquote>quoted</blockquote>"
    ),
    "telegram-entities": (
        "Title\n\n\U0001F600 Bold and it link x<y & gone @everyone\n\n"
        "\u2022 one\n\u2022 two\n\nprint(1 < 2)\n\nquoted"
    ),
    "slack-mrkdwn": (
        "*Title*\n\n"
        "\U0001F600 *Bold* and _it_ <https://e.com/a?b=1&amp;c=2|link> `x&lt;y` &amp; ~gone~ "
        "@everyone\n\n\u2022 one\n\u2022 two\n\n```print(1 &lt; 2)```\n\n> quoted"
    ),
    "whatsapp": (
        "*Title*\n\n"
        "\U0001F600 *Bold* and _it_ link (https://e.com/a?b=1&c=2) `x<y` & ~gone~ @everyone\n\n"
        "\u2022 one\n\u2022 two\n\n```print(1 < 2)```\n\n> quoted"
    ),
    "plain": (
        "Title\n\n"
        "\U0001F600 Bold and it link (https://e.com/a?b=1&c=2) x<y & gone @everyone\n\n"
        "\u2022 one\n\u2022 two\n\nprint(1 < 2)\n\n> quoted"
    ),
}


def utf16_slice(text, offset, length):
    """The part of ``text`` at a UTF-16 offset and length, as Telegram reads an entity."""
    units = text.encode("utf-16-le")
    return units[2 * offset:2 * (offset + length)].decode("utf-16-le")


def covered(text, entities):
    """Each entity as (type, the text it covers, url, language)."""
    return [(e.type, utf16_slice(text, e.offset, e.length), e.url, e.language)
            for e in entities]


WANT_ENTITIES = [
    ("bold", "Title", None, None),
    ("bold", "Bold", None, None),
    ("italic", "it", None, None),
    ("text_link", "link", "https://e.com/a?b=1&c=2", None),
    ("code", "x<y", None, None),
    ("strikethrough", "gone", None, None),
    ("pre", "print(1 < 2)", None, "py"),
    ("blockquote", "quoted", None, None),
]


def sends(engine, now=0):
    """Every send of a turn, acked at once, until the engine is done."""
    out = []
    for _ in range(1000):
        for action in engine.actions():
            if action.kind == "send":
                out.append(action)
                engine.delivered(action.send_id, now)
        if engine.is_done():
            return out
        deadline = engine.next_deadline()
        if deadline is None:
            return out
        now = max(now, deadline)
        engine.timer(now)
    raise AssertionError("engine did not settle")


class EveryFormat(unittest.TestCase):
    def test_engine_sends_carry_text_format_markdown_and_entities(self):
        self.assertEqual(FORMATS, tuple(WANT))
        for name in FORMATS:
            with self.subTest(format=name), Engine("generic", format=name) as e:
                e.text_delta(MD, 0)
                e.finish(0)
                got = sends(e)
                self.assertEqual(len(got), 1)
                send = got[0]
                self.assertEqual((send.format, send.text, send.markdown),
                                 (name, WANT[name], MD))
                if name == "telegram-entities":
                    self.assertEqual(covered(send.text, send.entities), WANT_ENTITIES)
                    # The emoji before "Bold" is two UTF-16 units: offset 10, not 9.
                    self.assertEqual(send.entities[1].offset, 10)
                    self.assertIsInstance(send.entities[0], Entity)
                else:
                    self.assertEqual(send.entities, [])

    def test_render_agrees_with_the_engine(self):
        for name in FORMATS:
            with self.subTest(format=name):
                r = render(MD, "generic", format=name)
                self.assertIsInstance(r, Rendered)
                self.assertEqual((r.format, r.text), (name, WANT[name]))
                entities = covered(r.text, r.entities) if r.entities else []
                self.assertEqual(entities,
                                 WANT_ENTITIES if name == "telegram-entities" else [])

    def test_entity_to_dict_is_the_bot_api_object(self):
        r = render("[a](https://x.y)\n\n```rs\nfn\n```", "telegram", format="telegram_entities")
        self.assertEqual([e.to_dict() for e in r.entities], [
            {"type": "text_link", "offset": 0, "length": 1, "url": "https://x.y"},
            {"type": "pre", "offset": 3, "length": 2, "language": "rs"},
        ])

    def test_channel_defaults(self):
        for channel, name in [("telegram", "telegram-html"), ("slack", "slack-mrkdwn"),
                              ("discord", "discord"), ("whatsapp", "whatsapp"),
                              ("signal", "plain"), ("imessage", "plain"),
                              ("generic", "markdown")]:
            with self.subTest(channel=channel):
                self.assertEqual(render(MD, channel).format, name)
                with Engine(channel) as e:
                    e.text_delta("**hi**", 0)
                    e.finish(0)
                    self.assertEqual({s.format for s in sends(e)}, {name})

    def test_reasoning_is_an_expandable_quote_on_telegram(self):
        with Engine("telegram", reasoning="on") as e:
            e.thinking_delta("Plan **it** <now>", 0)
            e.text_delta("Done.", 0)
            e.finish(0)
            got = [(s.lane, s.text, s.markdown) for s in sends(e)]
        self.assertEqual(got, [
            ("reasoning",
             "<blockquote expandable>Reasoning:\n<i>Plan <b>it</b> &lt;now&gt;</i></blockquote>",
             "Reasoning:\n_Plan **it** <now>_"),
            ("answer", "Done.", "Done."),
        ])

    def test_table_modes_and_mass_mentions(self):
        table = "| a | bb |\n|---|---|\n| 1 | 2 |\n| 33 | 4 |"
        code = "<pre>a  | bb\n---|---\n1  | 2\n33 | 4</pre>"
        self.assertEqual(render(table, "telegram").text, code)
        self.assertEqual(render(table, "telegram", table_mode="block").text, code)
        self.assertEqual(render(table, "slack", table_mode="bullets").text,
                         "\u2022 a: 1; bb: 2\n\u2022 a: 33; bb: 4")
        self.assertEqual(render(table, "whatsapp", table_mode="off").text, table)
        self.assertEqual(render(table, "generic").text, table)
        self.assertEqual(render("hi @here", "discord").text, "hi @\u200bhere")
        self.assertEqual(render("hi @here", "discord", allow_mass_mentions=True).text,
                         "hi @here")

    def test_caption_limit(self):
        caption = "This caption is longer than forty characters, by a lot."
        reply = caption + "\nMEDIA: https://example.com/chart.png"
        for limit, want in [(40, [(caption, []), ("", ["https://example.com/chart.png"])]),
                            (None, [(caption, ["https://example.com/chart.png"])])]:
            with self.subTest(limit=limit), Engine("generic", caption_limit=limit) as e:
                e.text_delta(reply, 0)
                e.finish(0)
                self.assertEqual([(s.text, s.media) for s in sends(e)], want)

    def test_blocks_say_where_spans_were_closed_and_reopened(self):
        words = " ".join(["word"] * 40)
        pieces = split(f"**{words}**", text_limit=60, metric="chars")
        self.assertGreaterEqual(len(pieces), 2)
        for i, p in enumerate(pieces):
            self.assertEqual(p.spans_closed, i + 1 < len(pieces))
            self.assertEqual(p.spans_reopened, i > 0)
            self.assertTrue(p.text.startswith("**") and p.text.endswith("**"), p.text)


class Refusals(unittest.TestCase):
    def test_unknown_names(self):
        for option, value in [("format", "markdownv2"), ("format", ""),
                              ("table_mode", "grid")]:
            with self.subTest(option=option, value=value):
                with self.assertRaises(ReplystreamValueError) as cm:
                    Engine("generic", **{option: value})
                self.assertEqual(cm.exception.argument, option)
                self.assertEqual(cm.exception.name, "INVALID_CONFIG")
                self.assertIn(repr(value).strip("'"), str(cm.exception))
        with self.assertRaises(ReplystreamValueError) as cm:
            render("x", format="markdownv2")
        self.assertIn("telegram-entities", str(cm.exception))  # the known names listed

    def test_a_format_the_channel_cannot_show(self):
        for call in (lambda: Engine("telegram", format="slack-mrkdwn"),
                     lambda: render("x", "telegram", format="slack-mrkdwn"),
                     lambda: split("x", "telegram", format="slack-mrkdwn")):
            with self.assertRaises(ReplystreamValueError) as cm:
                call()
            self.assertIn("format slack-mrkdwn cannot be shown on channel telegram",
                          str(cm.exception))
        with self.assertRaises(ReplystreamValueError) as cm:
            Engine("telegram", table_mode="native")
        self.assertIn("table_mode", str(cm.exception))

    def test_bad_types_and_text(self):
        with self.assertRaises(TypeError):
            Engine("generic", format=3)
        with self.assertRaises(TypeError):
            Engine("generic", allow_mass_mentions="yes")
        with self.assertRaises(ValueError):
            Engine("generic", caption_limit=-1)
        with self.assertRaises(TypeError):
            render(None)
        with self.assertRaises(ReplystreamValueError) as cm:
            render(b"ok \x80", "telegram")
        self.assertEqual(cm.exception.name, "INVALID_UTF8")
        with self.assertRaises(ReplystreamValueError) as cm:
            render("lone \ud800 surrogate", "telegram")
        self.assertEqual(cm.exception.name, "INVALID_UTF8")
        with self.assertRaises(ReplystreamValueError) as cm:
            Engine("generic", format=b"pl\xff")
        self.assertEqual(cm.exception.name, "INVALID_UTF8")
        with self.assertRaises(ReplystreamValueError) as cm:
            render("x", "nowhere")
        self.assertEqual(cm.exception.argument, "channel")


if __name__ == "__main__":
    unittest.main()
