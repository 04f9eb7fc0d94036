"""The text core over a whole text: split to a platform's limit, or chunk as a stream."""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import Any, List, Tuple, Union

from . import _args, _native
from ._config import METRICS, Options, channel_bytes
from ._errors import raise_for


@dataclass(frozen=True)
class Block:
    """One piece of a text.

    ``text`` is what to display: the piece's source text, plus synthetic text where code was
    cut (a fence line, see ``fence_reopened`` and ``fence_closed``; 4 spaces continuing an
    indented code line, after a quote's ``>`` markers in a quote, see ``indent_reopened``; a table's header and delimiter rows
    repeated, see ``table_header_repeated``; inline delimiters closing and reopening an
    emphasis or code span cut in its middle, see ``spans_closed`` and ``spans_reopened``). ``source_in_text`` is the ``(start, end)``
    of the source within ``text`` (character indices; :attr:`source_text` is that part).
    ``lead`` is whitespace before the piece that no earlier ``sep`` holds (the input's
    leading whitespace, on the first piece), and ``sep`` the source text between this piece
    and the next.

    ``dedent`` is the number of columns taken off the lines of ``text`` (0: none): a piece
    that starts inside a list item's code (or text) 4 or more columns deep is shown as the
    item's content reads, each line de-indented (a line that left the item, and the lines
    after it, lose at most its own indentation). ``dedent_quotes`` is the number of quote
    markers kept at each line's start before those columns (0: leading columns): a piece
    that starts inside a list item's fence in a block quote, 4 or more columns past the
    ``>``, loses the item's columns after the ``>``.

    Over all pieces, ``lead + input[start:end] + sep`` gives back the input exactly (encode
    it for ``bytes`` input); a text of only whitespace has no pieces. ``start``/``end``
    locate the source in the input: character indices for a ``str`` input, byte offsets for
    ``bytes``. Where ``dedent`` is 0, ``source_text`` is ``input[start:end]``.
    """

    text: str
    sep: str
    start: int
    end: int
    fence_reopened: bool
    fence_closed: bool
    lead: str
    indent_reopened: bool
    source_in_text: Tuple[int, int]
    table_header_repeated: bool = False
    spans_reopened: bool = False
    spans_closed: bool = False
    dedent: int = 0
    dedent_quotes: int = 0

    @property
    def source_text(self) -> str:
        """The part of ``text`` that is the input's text (``text`` without its synthetic
        start and end)."""
        start, end = self.source_in_text
        return self.text[start:end]


def _chars(data: bytes, offset: int) -> int:
    """The character index of byte ``offset`` in UTF-8 ``data``."""
    return len(data[:offset].decode("utf-8"))


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
            shown = r.text.bytes()
            blocks.append(Block(
                text=shown.decode("utf-8"),
                sep=r.sep.text(),
                start=start,
                end=end,
                fence_reopened=r.fence_reopened,
                fence_closed=r.fence_closed,
                lead=r.lead.text(),
                indent_reopened=r.indent_reopened,
                source_in_text=(_chars(shown, r.source_in_text_start),
                                _chars(shown, r.source_in_text_end)),
                table_header_repeated=r.table_header_repeated,
                spans_reopened=r.spans_reopened,
                spans_closed=r.spans_closed,
                dedent=r.dedent,
                dedent_quotes=r.dedent_quotes,
            ))
        return blocks
    finally:
        lib.replystream_blocks_free(result)


def split(text: Union[str, bytes], channel: str = "generic", **options: Any) -> List[Block]:
    """Splits a whole text (a final reply, a tool result) into pieces that fit the
    channel's text limit in its length unit, cutting at paragraph, line, sentence or word
    breaks, never inside a grapheme, closing and reopening code fences it cuts. Options as
    for :class:`Engine` (``text_limit``, ``metric``, ``max_lines``, ``chunk_mode`` apply).

    A limit below :func:`min_limit` of the metric (too small to close and reopen a code
    fence) raises :class:`ReplystreamValueError` (a ``ValueError``) naming ``text_limit``."""
    return _cut("split", text, channel, options)


def chunk(text: Union[str, bytes], channel: str = "generic", **options: Any) -> List[Block]:
    """Chunks a text as the streaming chunker would: blocks of ``chunk_min`` to
    ``chunk_max`` units cut at the preferred breaks (``break_preference``), with the same
    guarantees as :func:`split`. Options as for :class:`Engine`; a ``chunk_max`` (or
    ``text_limit``) below :func:`min_limit` raises ``ValueError`` naming it."""
    return _cut("chunk", text, channel, options)


def min_limit(metric: str = "utf16") -> int:
    """The smallest text limit (and ``chunk_max``, ``preview_limit``) accepted in ``metric``
    (``"utf16"``, ``"chars"``, ``"bytes"`` or ``"graphemes"``): room to close and reopen a
    code fence around the widest character cluster kept whole. 29 UTF-16 units, 24 chars, 49
    bytes, 15 graphemes."""
    return int(_native.load().replystream_min_limit(_args.choice("metric", metric, METRICS)))
