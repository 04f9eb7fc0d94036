"""Tests of the ctypes wrapper (standard library only).

Run after ``cargo build -p replystream-ffi``:

    python3 ffi/python/test_replystream.py
"""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import replystream  # noqa: E402
from replystream import Engine, ReplystreamError  # noqa: E402

TEXT = (
    "Good question. The short answer is yes, and here is why.\n\n"
    "Rivers carry sediment downstream, and where the current slows the sediment settles. "
    "Over centuries that builds a delta.\n\n"
    "So the town really is standing on ground the river made."
)


def drive(engine, now, log, limit=10_000):
    """Polls and executes every action (acking sends), firing deadlines, until idle or
    nothing is left to wait for. Returns the clock."""
    for _ in range(limit):
        for action in engine.actions():
            log.append(action)
            if action.kind == "send":
                now += 5
                engine.delivered(action.send_id, now, message_ref=f"m{action.send_id}")
        if any(a.kind == "idle" for a in log):
            return now
        deadline = engine.next_deadline()
        if deadline is None:
            return now
        now = max(now, deadline)
        engine.timer(now)
    raise AssertionError("engine did not settle")


def squeeze(text):
    return "".join(text.split())


class FullTurn(unittest.TestCase):
    def run_turn(self):
        log = []
        with Engine("discord", seed=3, chunk_min=40, chunk_max=120, coalesce_idle_ms=300) as e:
            now = 0
            e.message_start(now)
            for i in range(0, len(TEXT), 11):
                now += 25
                e.text_delta(TEXT[i:i + 11], now)
                log.extend(self.ack_all(e, now))
            e.text_end(now)
            e.message_end(now, text=TEXT)  # a full-content resend must not duplicate
            e.finish(now)
            now = drive(e, now, log)
            self.assertTrue(e.is_done())
            self.assertIsNone(e.poll_action())
        return log

    @staticmethod
    def ack_all(engine, now):
        seen = []
        for action in engine.actions():
            seen.append(action)
            if action.kind == "send":
                engine.delivered(action.send_id, now)
        return seen

    def test_full_turn(self):
        log = self.run_turn()
        sends = [a for a in log if a.kind == "send"]
        self.assertGreaterEqual(len(sends), 1)
        self.assertEqual([a.kind for a in log].count("idle"), 1)
        self.assertEqual([a.kind for a in log if a.kind != "arm_timer"][-1], "idle")
        self.assertEqual(squeeze("".join(s.text for s in sends)), squeeze(TEXT))
        for s in sends:
            self.assertIn(s.send_kind, ("block", "final"))
            self.assertEqual(s.op, "create")
            self.assertEqual(s.lane, "answer")
            self.assertFalse(s.is_error)
            self.assertLessEqual(len(s.text), 2000)
        ids = [s.send_id for s in sends]
        self.assertEqual(len(ids), len(set(ids)))
        # Determinism.
        again = [a for a in self.run_turn() if a.kind == "send"]
        self.assertEqual([s.text for s in sends], [s.text for s in again])

    def test_tool_result_with_media(self):
        log = []
        with Engine("telegram") as e:
            e.message_start(0)
            e.text_delta("Let me check.", 1)
            e.tool_start("search", 2)
            e.tool_result("Found 2 results", 3, media="https://example.com/a.png")
            e.finish(4)
            drive(e, 4, log)
        sends = [a for a in log if a.kind == "send"]
        tools = [s for s in sends if s.send_kind == "tool"]
        self.assertEqual(len(tools), 1)
        self.assertIn("Found 2 results", tools[0].text)
        self.assertEqual(tools[0].media, ["https://example.com/a.png"])
        self.assertEqual(sum(s.text.count("Let me check.") for s in sends), 1)
        # Text before the tool call leaves before the tool's output.
        first_text = next(i for i, s in enumerate(sends) if "Let me check." in s.text)
        self.assertLess(first_text, sends.index(tools[0]))


class Errors(unittest.TestCase):
    def test_invalid_utf8_bytes(self):
        with Engine("generic") as e:
            with self.assertRaises(ReplystreamError) as cm:
                e.text_delta(b"abc\xff", 0)
            self.assertEqual(cm.exception.code, replystream.INVALID_UTF8)
            self.assertEqual(cm.exception.name, "INVALID_UTF8")
            self.assertIn("UTF-8", cm.exception.detail)
            # Valid bytes are fine, and the engine still works.
            e.text_delta("naïve ✓".encode("utf-8"), 1)

    def test_unknown_channel(self):
        with self.assertRaises(ReplystreamError) as cm:
            Engine("myspace")
        self.assertEqual(cm.exception.code, replystream.UNKNOWN_CHANNEL)
        self.assertIn("myspace", cm.exception.detail)

    def test_invalid_config(self):
        with self.assertRaises(ReplystreamError) as cm:
            Engine("slack", text_limit=3)
        self.assertEqual(cm.exception.code, replystream.INVALID_CONFIG)
        with self.assertRaises(TypeError):
            Engine("slack", colour="blue")

    def test_unknown_send_and_turn_ended(self):
        with Engine() as e:
            with self.assertRaises(ReplystreamError) as cm:
                e.delivered(42, 0)
            self.assertEqual(cm.exception.code, replystream.UNKNOWN_SEND)
            e.cancel(1)
            actions = list(e.actions())
            self.assertEqual([a.kind for a in actions if a.kind != "arm_timer"], ["abort"])
            self.assertEqual(actions[-1].abort_reason, "cancelled")
            with self.assertRaises(ReplystreamError) as cm:
                e.text_delta("late", 2)
            self.assertEqual(cm.exception.code, replystream.TURN_ENDED)

    def test_closed_engine(self):
        e = Engine()
        e.close()
        e.close()
        with self.assertRaises(ReplystreamError) as cm:
            e.finish(0)
        self.assertEqual(cm.exception.code, replystream.NULL_POINTER)

    def test_messages(self):
        for code in range(13):
            self.assertTrue(replystream.result_message(code))
        self.assertEqual(replystream.result_message(999), "unknown result code")
        self.assertIn(".", replystream.version())


class Timers(unittest.TestCase):
    def start_turn(self, engine):
        engine.message_start(0)
        engine.text_delta("Ready when you are.", 0)
        engine.finish(10)
        actions = list(engine.actions())
        sends = [a for a in actions if a.kind == "send"]
        self.assertEqual(len(sends), 1)
        return actions, sends[0]

    def test_retry_after_waits_for_its_deadline(self):
        with Engine("generic", delivery_timeout_ms=2000) as e:
            actions, send = self.start_turn(e)
            armed = [a.deadline_ms for a in actions if a.kind == "arm_timer"]
            self.assertEqual(armed[-1], 2010)
            self.assertEqual(e.next_deadline(), 2010)
            e.delivery_failed(send.send_id, 20, retry_after_ms=500)
            self.assertFalse([a for a in e.actions() if a.kind == "send"])
            self.assertEqual(e.next_deadline(), 520)
            e.timer(519)  # early: nothing
            self.assertFalse([a for a in e.actions() if a.kind == "send"])
            e.timer(520)
            retried = [a for a in e.actions() if a.kind == "send"]
            self.assertEqual([a.text for a in retried], ["Ready when you are."])
            e.delivered(retried[0].send_id, 530, message_ref="m1")
            self.assertIn("idle", [a.kind for a in e.actions()])
            self.assertTrue(e.is_done())
            stats = e.stats()
            self.assertEqual((stats["failures"], stats["retries"], stats["delivered"]), (1, 1, 1))

    def test_delivery_timeout_aborts(self):
        with Engine("generic", delivery_timeout_ms=1000) as e:
            _, send = self.start_turn(e)
            deadline = e.next_deadline()
            self.assertEqual(deadline, 1010)
            e.timer(deadline)
            aborts = [a for a in e.actions() if a.kind == "abort"]
            self.assertEqual([a.abort_reason for a in aborts], ["delivery_timeout"])
            e.delivered(send.send_id, 1500)  # a late ack is accepted

    def test_idle_timer_flushes_a_block(self):
        with Engine("generic", chunk_min=20, chunk_max=200, coalesce_idle_ms=500) as e:
            e.message_start(0)
            e.text_delta("A first sentence that is long enough.\n\nAnd a second one ", 10)
            list(e.actions())
            deadline = e.next_deadline()
            self.assertIsNotNone(deadline)
            self.assertGreater(deadline, 10)
            e.timer(deadline - 1)  # early: nothing
            self.assertFalse([a for a in e.actions() if a.kind == "send"])
            e.timer(deadline)
            sends = [a for a in e.actions() if a.kind == "send"]
            self.assertEqual([s.send_kind for s in sends], ["block"])
            self.assertIn("A first sentence", sends[0].text)

    def test_no_delivery_timeout_when_off(self):
        with Engine("generic", delivery_timeout_ms=replystream.NONE) as e:
            self.start_turn(e)
            self.assertIsNone(e.next_deadline())


if __name__ == "__main__":
    unittest.main()
