"""The text core over a whole text: split to a platform's limit, or chunk as a stream."""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import Any, List, Union

from . import _args, _native
from ._config import Options, channel_bytes
from ._errors import raise_for


@dataclass(frozen=True)
class Block:
    """One piece of a text.

    ``text`` is what to display (the source text, plus a synthetic fence line where a code
    fence was cut: see ``fence_reopened`` and ``fence_closed``); ``sep`` is the source text
    between this piece and the next. ``start``/``end`` locate the piece's source in the
    input: character indices for a ``str`` input (``text[start:end]``), byte offsets for
    ``bytes``. Over all pieces, ``source + sep`` gives back the input (blank lines at the
    start and whitespace at the end aside).
    """

    text: str
    sep: str
    start: int
    end: int
    fence_reopened: bool
    fence_closed: bool


def _cut(function: str, text: Any, channel: str, options: Any) -> List[Block]:
    is_str = isinstance(text, str)
    data = _args.text("text", text)
    name = channel_bytes(channel)
    lib = _native.load()
    result = ctypes.c_void_p()
    with Options(options) as opts:
        code = getattr(lib, f"replystream_{function}")(
            name, len(name), opts.handle, data, len(data), ctypes.byref(result)
        )
    if code != _native.OK:
        raise_for(code, "channel" if code == _native.UNKNOWN_CHANNEL else "",
                  _native.new_error())
    try:
        records = [lib.replystream_blocks_get(result, i).contents
                   for i in range(lib.replystream_blocks_count(result))]
        # Byte offsets become character offsets for str input (the ranges only grow, so one
        # pass over the gaps between them is enough).
        byte_at, char_at = 0, 0

        def index(offset: int) -> int:
            nonlocal byte_at, char_at
            if not is_str:
                return offset
            char_at += len(data[byte_at:offset].decode("utf-8"))
            byte_at = offset
            return char_at

        blocks = []
        for r in records:
            start = index(r.source_start)
            end = index(r.source_end)
            blocks.append(Block(r.text.text(), r.sep.text(), start, end, r.fence_reopened,
                                r.fence_closed))
        return blocks
    finally:
        lib.replystream_blocks_free(result)


def split(text: Union[str, bytes], channel: str = "generic", **options: Any) -> List[Block]:
    """Splits a whole text (a final reply, a tool result) into pieces that fit the
    channel's text limit in its length unit, cutting at paragraph, line, sentence or word
    breaks, never inside a grapheme, closing and reopening code fences it cuts. Options as
    for :class:`Engine` (``text_limit``, ``metric``, ``max_lines``, ``chunk_mode`` apply)."""
    return _cut("split", text, channel, options)


def chunk(text: Union[str, bytes], channel: str = "generic", **options: Any) -> List[Block]:
    """Chunks a text as the streaming chunker would: blocks of ``chunk_min`` to
    ``chunk_max`` units cut at the preferred breaks (``break_preference``), with the same
    guarantees as :func:`split`. Options as for :class:`Engine`."""
    return _cut("chunk", text, channel, options)
