"""Bad arguments: a TypeError or ValueError naming the argument, never a crash, a silent
wrong value, or a bare KeyError; library refusals as ReplystreamError."""

import math
import unittest
import warnings

import replystream
from replystream import Engine, ReplystreamError, ReplystreamValueError


class BadOptions(unittest.TestCase):
    def assert_value_error(self, argument, **options):
        with self.assertRaises(ValueError) as cm:
            Engine("generic", **options)
        self.assertIn(argument, str(cm.exception))

    def assert_type_error(self, argument, **options):
        with self.assertRaises(TypeError) as cm:
            Engine("generic", **options)
        self.assertIn(argument, str(cm.exception))

    def test_bad_names(self):
        self.assert_value_error("human_delay", human_delay="sometimes")
        self.assert_value_error("break_mode", break_mode="whenever")
        self.assert_value_error("reasoning", reasoning="loud")
        self.assert_value_error("metric", metric="inches")
        self.assert_value_error("preview", preview="full")
        self.assert_value_error("chunk_mode", chunk_mode="words")
        self.assert_value_error("break_preference", break_preference="comma")
        self.assert_value_error("human_delay", human_delay=(1, 2, 3))

    def test_bad_numbers(self):
        self.assert_value_error("text_limit", text_limit=-1)
        self.assert_value_error("chunk_min", chunk_min=-5)
        self.assert_value_error("coalesce_idle_ms", coalesce_idle_ms=-1)
        self.assert_value_error("coalesce_idle_ms", coalesce_idle_ms=math.nan)
        self.assert_value_error("max_lines", max_lines=0)
        self.assert_value_error("text_limit", text_limit=2**64)
        self.assert_value_error("human_delay[1]", human_delay=(10, -1))

    def test_values_the_library_refuses(self):
        # Checked by the library itself, with its reason, and still a ValueError.
        for argument, options in [
            ("text_limit", dict(text_limit=3)),
            ("max_lines", dict(max_lines=2)),
            ("human_delay", dict(human_delay=(10, 600_000))),
            ("silent_token", dict(silent_token=" ")),
            ("response_prefix", dict(text_limit=40, response_prefix="[a very long prefix]")),
        ]:
            with self.assertRaises(ReplystreamValueError) as cm:
                Engine("generic", **options)
            self.assertEqual(cm.exception.code, replystream.INVALID_CONFIG)
            self.assertIn(argument, str(cm.exception))
            self.assertIsInstance(cm.exception, ValueError)

    def test_bad_types(self):
        self.assert_type_error("text_limit", text_limit="4000")
        self.assert_type_error("text_limit", text_limit=40.0)
        self.assert_type_error("text_limit", text_limit=True)
        self.assert_type_error("block_streaming", block_streaming="yes")
        self.assert_type_error("model", model=5)
        self.assert_type_error("human_delay", human_delay=5)
        self.assert_type_error("reasoning", reasoning=1)
        self.assert_type_error("seed", seed="x")
        with self.assertRaises(TypeError) as cm:
            Engine("slack", colour="blue")
        self.assertIn("colour", str(cm.exception))
        with self.assertRaises(TypeError) as cm:
            Engine(5)
        self.assertIn("channel", str(cm.exception))

    def test_unknown_channel(self):
        with self.assertRaises(ValueError) as cm:
            Engine("myspace")
        self.assertEqual(cm.exception.code, replystream.UNKNOWN_CHANNEL)
        self.assertIn("myspace", str(cm.exception))


class BadPushes(unittest.TestCase):
    def test_text_must_be_text(self):
        with Engine() as e:
            with self.assertRaises(TypeError) as cm:
                e.text_delta(5, 0)
            self.assertIn("text", str(cm.exception))
            with self.assertRaises(TypeError):
                e.tool_start(None, 0)
            with self.assertRaises(TypeError) as cm:
                e.media([b"ok", 3], 0)
            self.assertIn("media[1]", str(cm.exception))
            with self.assertRaises(TypeError) as cm:
                e.delivered("7", 0)
            self.assertIn("send_id", str(cm.exception))
            with self.assertRaises(TypeError) as cm:
                e.delivery_failed(1, 0, permanent="no")
            self.assertIn("permanent", str(cm.exception))
            self.assertEqual(e.stats()["sends"], 0)  # nothing reached the engine

    def test_times(self):
        with Engine() as e:
            e.text_delta("int", 1)
            e.text_delta(" float", 2.5)
            for bad in (-1, -0.5, math.inf, math.nan, 2**64):
                with self.assertRaises(ValueError) as cm:
                    e.timer(bad)
                self.assertIn("now_ms", str(cm.exception))
            for bad in ("10", None, True, [1]):
                with self.assertRaises(TypeError) as cm:
                    e.timer(bad)
                self.assertIn("now_ms", str(cm.exception))
            with self.assertRaises(ValueError) as cm:
                e.delivery_failed(1, 0, retry_after_ms=-3)
            self.assertIn("retry_after_ms", str(cm.exception))

    def test_invalid_utf8_bytes(self):
        with Engine("generic") as e:
            with self.assertRaises(ReplystreamValueError) as cm:
                e.text_delta(b"abc\xff", 0)
            self.assertEqual(cm.exception.code, replystream.INVALID_UTF8)
            self.assertEqual(cm.exception.name, "INVALID_UTF8")
            self.assertIn("UTF-8", cm.exception.detail)
            e.text_delta("na\u00efve \u2713".encode("utf-8"), 1)
            # A character split across two deltas is fine.
            e.text_delta(b" caf\xc3", 2)
            e.text_delta(b"\xa9.", 3)
            e.finish(4)
            texts = [a.text for a in e.actions() if a.kind == "send"]
            self.assertEqual(texts, ["na\u00efve \u2713 caf\u00e9."])

    def test_media_needs_a_url(self):
        with Engine() as e:
            with self.assertRaises(ValueError) as cm:
                e.media([], 0)
            self.assertEqual(cm.exception.code, replystream.INVALID_ARGUMENT)
            with self.assertRaises(ValueError) as cm:
                e.media(["a.png", ""], 0)
            self.assertIn("media[1]", str(cm.exception))

    def test_unknown_send_and_turn_ended(self):
        with Engine() as e:
            with self.assertRaises(ReplystreamError) as cm:
                e.delivered(42, 0)
            self.assertEqual(cm.exception.code, replystream.UNKNOWN_SEND)
            self.assertNotIsInstance(cm.exception, ValueError)
            e.finish(1)
            with self.assertRaises(ReplystreamError) as cm:
                e.text_delta("late", 2)
            self.assertEqual(cm.exception.code, replystream.TURN_ENDED)
            self.assertIn("text_delta after the turn ended", str(cm.exception))


class Lifecycle(unittest.TestCase):
    def test_closed_engine_says_so(self):
        e = Engine()
        self.assertFalse(e.closed)
        e.close()
        e.close()
        self.assertTrue(e.closed)
        for call in (lambda: e.finish(0), lambda: e.text_delta("x", 0), e.poll_action,
                     e.next_deadline, e.is_done, e.stats, e.outcome, lambda: e.set_seq(1)):
            with self.assertRaises(ValueError) as cm:
                call()
            self.assertIn("closed", str(cm.exception))

    def test_with_closes(self):
        with Engine() as e:
            e.text_delta("x", 0)
        self.assertTrue(e.closed)

    def test_old_argument_order_warns(self):
        with Engine() as e:
            e.text_delta("Hello.", 0)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                e.text_end(1)                     # old: text_end(now_ms)
                e.text_end(2, "Hello.")           # old: text_end(now_ms, text)
                e.message_end(3, text="Hello.")   # old: message_end(now_ms, text=...)
            self.assertEqual(len(caught), 3)
            for w in caught:
                self.assertIs(w.category, DeprecationWarning)
                self.assertIn("(text, now_ms)", str(w.message))
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                e.text_end("Hello.", 4)           # new
                e.text_end(now_ms=5)
                e.message_end(None, 6)
                e.message_end(text="Hello.", now_ms=7)
            with self.assertRaises(TypeError):
                e.text_end("Hello.")              # now_ms missing
            e.finish(8)
            texts = [a.text for a in e.actions() if a.kind == "send"]
            self.assertEqual(texts, ["Hello."])

    def test_messages_and_version(self):
        for code in range(13):
            self.assertTrue(replystream.result_message(code))
        self.assertEqual(replystream.result_message(999), "unknown result code")
        self.assertRegex(replystream.__version__, r"^\d+\.\d+\.\d+")


if __name__ == "__main__":
    unittest.main()
