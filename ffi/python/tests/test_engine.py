"""The engine through the Python package: whole turns, timers, acks, every option.

Run from any directory once the package is installed:

    python -m unittest discover -s ffi/python/tests
"""

import unittest

import replystream
from replystream import Engine, ReplystreamError

TEXT = (
    "Good question. The short answer is yes, and here is why.\n\n"
    "Rivers carry sediment downstream, and where the current slows the sediment settles. "
    "Over centuries that builds a delta, caf\u00e9 and \U0001F30A included.\n\n"
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


class FullTurn(unittest.TestCase):
    def run_turn(self, piece=11):
        log = []
        data = TEXT.encode("utf-8")
        with Engine("discord", seed=3, chunk_min=40, chunk_max=120, coalesce_min=40,
                    coalesce_max=200, coalesce_idle_ms=300) as e:
            now = 0
            e.message_start(now)
            # Bytes cut anywhere: characters split across deltas wait for their end.
            for i in range(0, len(data), piece):
                now += 25
                e.text_delta(data[i:i + piece], now)
                for action in e.actions():
                    log.append(action)
                    if action.kind == "send":
                        e.delivered(action.send_id, now)
            e.text_end(None, now)
            e.message_end(TEXT, now)  # a full-content resend must not duplicate
            e.finish(now)
            now = drive(e, now, log)
            self.assertTrue(e.is_done())
            self.assertIsNone(e.poll_action())
        return log

    def test_full_turn_sends_every_character_once_in_order(self):
        log = self.run_turn()
        sends = [a for a in log if a.kind == "send"]
        self.assertGreaterEqual(len(sends), 2)
        self.assertEqual([a.kind for a in log].count("idle"), 1)
        # The sends are the text in order, exactly, with only the separators (whitespace)
        # between them left out.
        at = 0
        for s in sends:
            found = TEXT.index(s.text, at)
            self.assertEqual(TEXT[at:found].strip(), "", repr(TEXT[at:found]))
            at = found + len(s.text)
        self.assertEqual(TEXT[at:].strip(), "")
        for s in sends:
            self.assertIn(s.send_kind, ("block", "final"))
            self.assertEqual(s.op, "create")
            self.assertIsNone(s.message_key)
            self.assertEqual(s.lane, "answer")
            self.assertFalse(s.is_error)
            self.assertLessEqual(len(s.text), 2000)
        ids = [s.send_id for s in sends]
        self.assertEqual(len(ids), len(set(ids)))
        # Determinism, whatever the delta size.
        for piece in (11, 1, 7):
            again = [a.text for a in self.run_turn(piece) if a.kind == "send"]
            self.assertEqual([s.text for s in sends], again)

    def test_tool_result_with_several_media(self):
        log = []
        with Engine("telegram") as e:
            e.message_start(0)
            e.text_delta("Let me check.", 1)
            e.tool_start("search", 2)
            e.tool_result("Found 2 results", 3,
                          media=["https://example.com/a.png", "https://example.com/b.png"])
            e.media("https://example.com/c.ogg", 4, text="a caption")
            e.final_reply("Here you go.", 5, media=("/tmp/report.pdf",))
            e.finish(6)
            drive(e, 6, log)
        sends = [a for a in log if a.kind == "send"]
        tools = [s for s in sends if s.send_kind == "tool"]
        self.assertEqual(len(tools), 1)
        self.assertIn("Found 2 results", tools[0].text)
        self.assertEqual(tools[0].media, ["https://example.com/a.png", "https://example.com/b.png"])
        all_media = [m for s in sends for m in s.media]
        self.assertIn("https://example.com/c.ogg", all_media)
        self.assertIn("/tmp/report.pdf", all_media)
        self.assertEqual(sum(s.text.count("Let me check.") for s in sends), 1)
        first_text = next(i for i, s in enumerate(sends) if "Let me check." in s.text)
        self.assertLess(first_text, sends.index(tools[0]))

    def test_every_option_is_accepted(self):
        options = dict(
            text_limit=3000, metric="utf16", preview_limit=2000, max_lines=40, chunk_min=100,
            chunk_max=900, break_preference="sentence", chunk_mode="newline",
            break_mode="message_end", block_streaming=True, coalesce_min=200,
            coalesce_max=1500, coalesce_idle_ms=700.5, human_delay=(100, 200),
            delivery_timeout_ms=9000, response_prefix="[{model}]", prefix_every_message=True,
            model="acme/m-1", provider="acme", thinking_level="low", identity_name="Ada",
            reasoning="stream", require_final_tag=False, silent_token="SHH",
            heartbeat_token=None, preview="partial", preview_throttle_ms=400,
            preview_cursor=None, preview_min_initial_units=10, preview_block_min=50,
            preview_block_max=300, preview_transport="draft", preview_expandable_quote=False,
            media_roots=["/srv/media", "C:\\Bot Media"], media_allow_http=False,
            format="telegram-entities", table_mode="bullets", allow_mass_mentions=True,
            caption_limit=500,
        )
        self.assertEqual(set(options),
                         set(replystream._config.KNOBS) | set(replystream._config.LIST_KNOBS))
        with Engine("telegram", **options) as e:
            e.text_delta("Hello.", 0)

    def test_options_change_behaviour(self):
        def sent(reply, **options):
            log = []
            with Engine("generic", **options) as e:
                e.text_delta(reply, 0)
                e.finish(0)
                drive(e, 0, log)
            return [a.text for a in log if a.kind == "send"]

        self.assertEqual(sent("NO_REPLY"), [])
        self.assertEqual(sent("NO_REPLY", silent_token=None), ["NO_REPLY"])
        self.assertEqual(sent("Hi.", response_prefix="[{model}]", model="acme/large-2"),
                         ["[large-2] Hi."])
        # 49 bytes is the smallest limit in bytes (room for a code fence around an emoji).
        pieces = sent("word " * 40, block_streaming=False, text_limit=49, metric="bytes")
        self.assertGreater(len(pieces), 3)
        self.assertTrue(all(len(p.encode()) <= 49 for p in pieces))
        self.assertEqual(sent("plan <final>Only this.</final>", require_final_tag=True),
                         ["Only this."])


class MediaPolicy(unittest.TestCase):
    """Media written by the model: a local path is media only inside ``media_roots``;
    ``http://`` can be refused; every refusal is counted in ``stats()["media_refused"]``."""

    REPLY = ("Here:\nMEDIA: ~/.ssh/id_rsa\nMEDIA: /etc/shadow\n"
             "MEDIA: '/srv/media/../../etc/passwd' /srv/media/chart.png\nDone.")

    def run_reply(self, reply, **options):
        """(texts sent, media sent, refused count) for ``reply`` in 3-char deltas."""
        log = []
        with Engine("generic", **options) as e:
            for i in range(0, len(reply), 3):
                e.text_delta(reply[i:i + 3], 0)
            e.finish(0)
            drive(e, 0, log)
            refused = e.stats()["media_refused"]
        sends = [a for a in log if a.kind == "send"]
        texts = [s.text for s in sends if s.text]
        media = [m for s in sends for m in s.media]
        return texts, media, refused

    def test_no_local_path_is_media_by_default(self):
        self.assertEqual(self.run_reply(self.REPLY), (["Here:\nDone."], [], 4))

    def test_paths_inside_a_root_are_sent_resolved(self):
        self.assertEqual(self.run_reply(self.REPLY, media_roots=["/srv/media/"]),
                         (["Here:", "Done."], ["/srv/media/chart.png"], 3))
        texts, media, refused = self.run_reply(
            "MEDIA: file:///srv/media/a%20b.png /srv/media2/x.png /srv/other/x/../y.jpg\nok",
            media_roots=["/srv/media", "/srv/other"])
        self.assertEqual((texts, media, refused),
                         (["ok"], ["/srv/media/a b.png", "/srv/other/y.jpg"], 1))

    def test_http_can_be_refused(self):
        reply = "See:\nMEDIA: http://example.com/a.png\nok"
        self.assertEqual(self.run_reply(reply),
                         (["See:", "ok"], ["http://example.com/a.png"], 0))
        self.assertEqual(self.run_reply(reply, media_allow_http=False), ([reply], [], 1))
        line = "MEDIA: https://[::ffff:127.0.0.1]/a.png"
        self.assertEqual(self.run_reply(line), ([line], [], 1))

    def test_bad_roots_are_refused(self):
        for root, why in [("media", "absolute"), ("~/m", "absolute"),
                          ("/srv/../etc", ".."), ("/", "top of the file system"),
                          ("", "empty")]:
            with self.assertRaises(replystream.ReplystreamValueError) as caught:
                Engine("generic", media_roots=["/srv/ok", root])
            self.assertIn("media.roots[1]", str(caught.exception))
            self.assertIn(why, str(caught.exception))
        with self.assertRaises(TypeError):
            Engine("generic", media_roots="/srv/media")
        with self.assertRaises(TypeError):
            Engine("generic", media_roots=[3])
        with self.assertRaises(TypeError):
            Engine("generic", media_allow_http="no")


class ReasoningAndTokens(unittest.TestCase):
    @staticmethod
    def sent(deltas, **options):
        log = []
        with Engine("generic", **options) as e:
            for d in deltas:
                e.text_delta(d, 0)
            e.finish(0)
            drive(e, 0, log)
        return [(a.lane, a.text) for a in log if a.kind == "send"]

    def test_reasoning_on_goes_before_the_answer_it_belongs_to(self):
        text = ("<think>first</think>Here is the chart.\n\n"
                "<think>Also the CSV? Yes.</think>The raw numbers are attached.")
        expected = [("reasoning", "Reasoning:\n_first_"), ("answer", "Here is the chart."),
                    ("reasoning", "Reasoning:\n_Also the CSV? Yes._"),
                    ("answer", "The raw numbers are attached.")]
        self.assertEqual(self.sent([text], reasoning="on"), expected)
        cut = len(text) // 2
        self.assertEqual(self.sent([text[:cut], text[cut:]], reasoning="on"), expected)
        self.assertEqual(self.sent(list(text), reasoning="on"), expected)

    def test_a_silent_token_glued_into_a_word_is_part_of_it(self):
        self.assertEqual(self.sent(["NO_REPLYX"]), [("answer", "NO_REPLYX")])
        self.assertEqual(self.sent(["NO_REPL", "YING"]), [("answer", "NO_REPLYING")])
        self.assertEqual(self.sent(["NO_REPLYThe user"]), [("answer", "The user")])


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
            e.timer(519.2)  # a float clock is rounded up: 520 is not reached early
            self.assertTrue([a for a in e.actions() if a.kind == "send"])

    def test_early_timer_does_nothing(self):
        with Engine("generic", delivery_timeout_ms=2000) as e:
            _, send = self.start_turn(e)
            e.delivery_failed(send.send_id, 20, 500)
            list(e.actions())
            e.timer(519)
            self.assertFalse([a for a in e.actions() if a.kind == "send"])
            e.timer(520)
            retried = [a for a in e.actions() if a.kind == "send"]
            self.assertEqual([a.text for a in retried], ["Ready when you are."])
            e.delivered(retried[0].send_id, 530, message_ref="m1")
            self.assertIn("idle", [a.kind for a in e.actions()])
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

    def test_no_delivery_timeout_when_off(self):
        for off in (None, 0, replystream.NONE):
            with Engine("generic", delivery_timeout_ms=off) as e:
                self.start_turn(e)
                self.assertIsNone(e.next_deadline())

    def test_cancel(self):
        with Engine() as e:
            e.text_delta("Some text. " * 100, 0)
            e.cancel(1)
            kinds = [a.kind for a in e.actions() if a.kind != "arm_timer"]
            self.assertEqual(kinds[-1], "abort")
            self.assertTrue(e.is_done())
            e.cancel(2)  # a second cancel: nothing more
            self.assertEqual([a.kind for a in e.actions() if a.kind == "abort"], [])
            with self.assertRaises(ReplystreamError) as cm:
                e.delivered(42, 3)
            self.assertEqual(cm.exception.code, replystream.UNKNOWN_SEND)


class Outcome(unittest.TestCase):
    """How the turn ended (``Engine.outcome()``): ``None`` while it runs, then whether
    everything reached the user and what did not."""

    @staticmethod
    def settle(e, now, fate):
        """Answers every send as ``fate(action)`` says ("deliver", "fail" or "hang") and
        fires deadlines until idle. Returns the clock and the hung send ids."""
        hung = []
        for _ in range(1000):
            idle = False
            for a in e.actions():
                idle |= a.kind == "idle"
                if a.kind != "send":
                    continue
                now += 10
                what = fate(a)
                if what == "deliver":
                    e.delivered(a.send_id, now)
                elif what == "fail":
                    e.delivery_failed(a.send_id, now, permanent=True)
                else:
                    hung.append(a.send_id)
            deadline = e.next_deadline()
            if idle or deadline is None:
                return now, hung
            now = max(now, deadline)
            e.timer(now)
        raise AssertionError("engine did not settle")

    @staticmethod
    def finals_only():
        return Engine("generic", block_streaming=False, delivery_timeout_ms=1000)

    def test_none_while_running_then_all_delivered(self):
        with self.finals_only() as e:
            self.assertIsNone(e.outcome())
            e.text_delta("All good.", 0)
            self.assertIsNone(e.outcome())
            e.finish(0)
            self.settle(e, 0, lambda a: "deliver")
            outcome = e.outcome()
        self.assertIsInstance(outcome, replystream.TurnOutcome)
        self.assertEqual(outcome, replystream.TurnOutcome("finished", True, True, ()))

    def test_a_final_that_fails_for_good_is_listed_with_its_text(self):
        with self.finals_only() as e:
            e.text_delta("The answer is 42.", 0)
            e.finish(0)
            self.settle(e, 0, lambda a: "fail" if a.send_kind == "final" else "deliver")
            outcome = e.outcome()
            self.assertEqual(outcome, e.outcome())  # asking again changes nothing
        self.assertEqual(outcome.ending, "finished")
        self.assertFalse(outcome.all_delivered)
        self.assertFalse(outcome.final_delivered)
        self.assertEqual(len(outcome.undelivered), 1)
        lost = outcome.undelivered[0]
        self.assertIsInstance(lost, replystream.Undelivered)
        self.assertEqual((lost.send_kind, lost.reason, lost.text, lost.media, lost.lane),
                         ("final", "failed", "The answer is 42.", (), "answer"))

    def test_a_tool_result_s_media_that_fails_is_listed(self):
        media = ["https://example.com/chart.png", "/tmp/b.ogg"]
        with self.finals_only() as e:
            e.tool_result("ran 3 tests", 0, media=media)
            e.text_delta("Done.", 0)
            e.finish(0)
            self.settle(e, 0, lambda a: "fail" if a.send_kind == "tool" else "deliver")
            outcome = e.outcome()
        self.assertTrue(outcome.final_delivered)
        self.assertFalse(outcome.all_delivered)
        self.assertEqual({u.send_kind for u in outcome.undelivered}, {"tool"})
        self.assertIn("ran 3 tests", [u.text for u in outcome.undelivered])
        self.assertEqual(sorted(m for u in outcome.undelivered for m in u.media), sorted(media))

    def test_a_final_that_times_out_is_listed_until_a_late_ack(self):
        with self.finals_only() as e:
            e.text_delta("Slow platform.", 0)
            e.finish(0)
            now, hung = self.settle(e, 0, lambda a: "hang" if a.send_kind == "final" else "deliver")
            self.assertEqual(len(hung), 1)
            outcome = e.outcome()
            self.assertEqual([(u.send_id, u.reason, u.text) for u in outcome.undelivered],
                             [(hung[0], "timed_out", "Slow platform.")])
            e.delivered(hung[0], now + 5000)
            self.assertTrue(e.outcome().all_delivered)

    def test_failed_and_cancelled_turns_say_so(self):
        with self.finals_only() as e:
            e.text_delta("Partial answer", 0)
            e.fail("model overloaded", 0)
            self.settle(e, 0, lambda a: "deliver")
            self.assertEqual(e.outcome().ending, "failed")
            self.assertTrue(e.outcome().all_delivered)
        with self.finals_only() as e:
            e.text_delta("Never sent", 0)
            e.cancel(0)
            outcome = e.outcome()
            self.assertEqual((outcome.ending, outcome.all_delivered), ("cancelled", False))


class LivePreview(unittest.TestCase):
    """A live preview through the package: created under a key, acked with the platform's
    id, edited with that id as ``message_ref``, and edited into the final; the chat written
    here ends showing exactly the reply, with no cursor."""

    def run_turn(self, transport, channel="telegram"):
        chat = {}  # message_ref -> text
        draft = []
        ops = []
        with Engine(channel, preview="partial", preview_throttle_ms=250,
                    preview_transport=transport) as e:
            now = 0
            e.message_start(now)

            def execute():
                for a in e.actions():
                    if a.kind != "send":
                        continue
                    ops.append((now, a.send_kind, a.op, a.message_key, a.message_ref))
                    ref = None
                    if a.op == "create":
                        ref = f"m{len(chat) + 1}"
                        chat[ref] = a.text
                        draft.clear()
                    elif a.op == "edit":
                        self.assertIn(a.message_ref, chat)
                        chat[a.message_ref] = a.text
                    elif a.op == "draft":
                        draft[:] = [a.text]
                    elif a.op == "delete":
                        chat.pop(a.message_ref, None)
                    e.delivered(a.send_id, now, message_ref=ref)

            for word in TEXT.split(" "):
                now += 40
                deadline = e.next_deadline()
                if deadline is not None and deadline <= now:
                    e.timer(now)
                    execute()
                e.text_delta(word + " ", now)
                execute()
            e.message_end(None, now)
            e.finish(now)
            for _ in range(100):
                execute()
                if e.is_done():
                    break
                deadline = e.next_deadline()
                now = max(now, deadline)
                e.timer(now)
            self.assertTrue(e.is_done())
            self.stats = e.stats()
        return chat, draft, ops

    def test_edits_carry_the_create_s_ref_and_the_final_replaces_the_preview(self):
        chat, _, ops = self.run_turn("edit")
        self.assertEqual(list(chat.values()), [TEXT])
        self.assertEqual(ops[0][1:4], ("preview", "create", 1))
        self.assertIsNone(ops[0][4])
        for _, kind, op, key, ref in ops[1:]:
            self.assertEqual((op, key, ref), ("edit", 1, "m1"))
        self.assertEqual(ops[-1][1:3], ("final", "edit"))
        previews = [t for t, kind, *_ in ops if kind == "preview"]
        self.assertGreaterEqual(len(previews), 3)
        self.assertTrue(all(b - a >= 250 for a, b in zip(previews, previews[1:])))
        # Every preview operation is counted; the final's edit is a final, not counted.
        self.assertEqual(self.stats["preview_updates"], len(previews))
        self.assertEqual(self.stats["sends"], len(ops))

    def test_a_preview_runs_on_discord_too(self):
        # No channel profile forbids previews: Discord edits messages as Telegram does.
        chat, _, ops = self.run_turn("edit", channel="discord")
        self.assertEqual(list(chat.values()), [TEXT])
        self.assertEqual(ops[0][1:4], ("preview", "create", 1))
        self.assertEqual(ops[-1][1:3], ("final", "edit"))

    def test_drafts_then_a_new_message(self):
        chat, draft, ops = self.run_turn("draft")
        self.assertEqual(list(chat.values()), [TEXT])
        self.assertEqual(draft, [])
        self.assertTrue(all(op == "draft" for _, kind, op, *_ in ops[:-1]))
        self.assertEqual(ops[-1][1:3], ("final", "create"))
        self.assertEqual(self.stats["preview_updates"], len(ops) - 1)

    def test_an_update_showing_nothing_new_is_skipped(self):
        # The reasoning quote is trimmed: whitespace at its end changes nothing shown.
        with Engine("telegram", preview="partial", preview_throttle_ms=250,
                    preview_min_initial_units=1, reasoning="stream") as e:
            texts = []

            def advance(now):
                for _ in range(100):
                    for a in e.actions():
                        if a.kind == "send":
                            texts.append(a.text)
                            e.delivered(a.send_id, now, message_ref="m1")
                    deadline = e.next_deadline()
                    if deadline is None or deadline > now:
                        return
                    e.timer(deadline)

            def counters():
                stats = e.stats()
                return stats["preview_updates"], stats["preview_skips"]

            e.message_start(0)
            e.thinking_delta("Measure the river first.", 0)
            advance(1000)
            self.assertEqual(counters(), (1, 0))
            e.thinking_delta("  \n", 1000)
            advance(2000)
            self.assertEqual(counters(), (1, 1))
            e.thinking_delta("Then cross.", 2000)
            advance(3000)
            self.assertEqual(counters(), (2, 1))
            self.assertEqual(len(texts), 2)
            self.assertIn("Then cross.", texts[-1])

    def test_a_bad_transport_is_a_value_error(self):
        with self.assertRaises(ValueError):
            Engine("telegram", preview_transport="bubble")


if __name__ == "__main__":
    unittest.main()
