"""ns per 4-byte push through the Python package, as ``ffi/node/bench/push.mjs`` measures the
Node binding and ``benches/engine.rs`` the Rust engine: the same text (tests/data: prose,
code, lists), 4-byte deltas cut at character boundaries, each send acked at once ("blocks
emitted"), or 2 KB of it into an engine whose blocks are larger ("nothing emitted", each push
followed by a poll that finds no send). Each figure is the median of 7 rounds of about 60 000
pushes, in CPU time of this process. Not part of the tests or the package:

    python3 ffi/python/bench/push.py      (with the package installed, or REPLYSTREAM_LIB
                                           and PYTHONPATH=ffi/python/src)
"""

import time
from pathlib import Path

from replystream import Engine

DATA = Path(__file__).resolve().parents[3] / "tests" / "data"
TEXT = "".join((DATA / name).read_text(encoding="utf-8")
               for name in ("prose-paragraphs.md", "code-heavy.md", "lists-tables.md"))


def deltas(text, size):
    """``text`` in deltas of ``size`` UTF-8 bytes, each moved forward to a character
    boundary."""
    data = text.encode("utf-8")
    out, start = [], 0
    while start < len(data):
        end = min(start + size, len(data))
        while end < len(data) and data[end] & 0xC0 == 0x80:
            end += 1
        out.append(data[start:end].decode("utf-8"))
        start = end
    return out


def drain(engine, now):
    action = engine.poll_action()
    while action is not None:
        if action.kind == "send":
            engine.delivered(action.send_id, now)
        action = engine.poll_action()


def with_emission(channel, pieces):
    """A whole turn, every send acked at once."""
    with Engine(channel, seed=1) as engine:
        now = 0
        for piece in pieces:
            now += 1
            engine.text_delta(piece, now)
            drain(engine, now)
        engine.finish(now)
        drain(engine, now)


def without_emission(channel, pieces, poll):
    """Pushes absorbed without a send (a timer request may come out of the first)."""
    with Engine(channel, seed=1, chunk_min=3000, chunk_max=3500) as engine:
        for i, piece in enumerate(pieces):
            engine.text_delta(piece, i)
            if poll:
                action = engine.poll_action()
                while action is not None:
                    if action.kind == "send":
                        raise AssertionError("a send")
                    action = engine.poll_action()


def measure(run, pushes):
    """ns per push: the median over 7 rounds of enough runs for about 60 000 pushes."""
    repeat = -(-60_000 // pushes)
    for _ in range(repeat):
        run()  # warm-up
    rounds = []
    for _ in range(7):
        start = time.process_time()
        for _ in range(repeat):
            run()
        rounds.append((time.process_time() - start) * 1e9 / (repeat * pushes))
    return f"{sorted(rounds)[3]:.0f}"


def main():
    every = deltas(TEXT, 4)
    quiet = deltas(TEXT[:2000], 4)
    quiet_bytes = [piece.encode("utf-8") for piece in quiet]
    print(f"{len(every)} pushes per turn (blocks emitted), {len(quiet)} (nothing emitted)")
    print("channel | blocks emitted | nothing emitted: push + poll | push alone | "
          "bytes deltas, push + poll")
    for channel in ("telegram", "discord", "generic"):
        print(" | ".join([
            channel,
            measure(lambda: with_emission(channel, every), len(every)),
            measure(lambda: without_emission(channel, quiet, True), len(quiet)),
            measure(lambda: without_emission(channel, quiet, False), len(quiet)),
            measure(lambda: without_emission(channel, quiet_bytes, True), len(quiet)),
        ]) + " ns")


if __name__ == "__main__":
    main()
