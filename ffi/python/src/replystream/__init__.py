"""replystream: turns a streaming LLM reply into well-formed, well-paced chat messages.

A Python binding of the replystream C library (bundled in this package, called through
``ctypes``; no other dependency)::

    from replystream import Engine, split

    with Engine("telegram", chunk_min=60) as engine:
        engine.message_start(0)
        engine.text_delta("Hello there.", 10)
        engine.finish(20)
        for action in engine.actions():
            if action.kind == "send":
                print(action.text)                      # deliver it
                engine.delivered(action.send_id, 30)    # then ack it
        print(engine.outcome())                         # TurnOutcome(ending='finished', ...)

    pieces = split(long_text, "discord")                # [Block(text=..., ...), ...]
    html = render("**Done.**", "telegram").text         # '<b>Done.</b>'

Each send's ``text`` is what to post, in the channel's format (``action.format``: Telegram
HTML, Slack mrkdwn, ...); ``action.markdown`` is the Markdown it came from.
    assert "".join(b.lead + b.source_text + b.sep for b in pieces) == long_text

Times are milliseconds from the caller's monotonic clock (int or float, never negative).
Text arguments are ``str`` or UTF-8 ``bytes``. A bad type raises ``TypeError`` and a bad
value ``ValueError``, naming the argument; other refusals raise :class:`ReplystreamError`.
"""

from __future__ import annotations

from ._engine import Action, Engine, TurnOutcome, Undelivered
from ._errors import ReplystreamError, ReplystreamValueError
from ._native import (
    DONE,
    ERROR,
    INVALID_ARGUMENT,
    INVALID_CONFIG,
    INVALID_UTF8,
    NONE,
    NULL_POINTER,
    OK,
    OUT_OF_RANGE,
    PANIC,
    POISONED,
    TURN_ENDED,
    UNKNOWN_CHANNEL,
    UNKNOWN_SEND,
    library_path,
    result_message,
    version,
)
from ._render import FORMATS, Entity, Rendered, render
from ._text import Block, chunk, min_limit, split

#: The version of the bundled library.
__version__ = version()

__all__ = [
    "Action",
    "Block",
    "Engine",
    "Entity",
    "FORMATS",
    "Rendered",
    "ReplystreamError",
    "ReplystreamValueError",
    "TurnOutcome",
    "Undelivered",
    "chunk",
    "min_limit",
    "split",
    "render",
    "library_path",
    "result_message",
    "version",
    "NONE",
    "OK",
    "DONE",
    "NULL_POINTER",
    "INVALID_UTF8",
    "UNKNOWN_CHANNEL",
    "INVALID_CONFIG",
    "UNKNOWN_SEND",
    "TURN_ENDED",
    "OUT_OF_RANGE",
    "INVALID_ARGUMENT",
    "PANIC",
    "POISONED",
    "ERROR",
]
