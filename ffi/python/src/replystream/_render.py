"""Platform formats: the Telegram entity records of a send, and :func:`render` for a whole
text."""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import Any, Optional, Tuple, Union

from . import _args, _native
from ._config import Options, channel_bytes
from ._errors import raise_for

#: Every format name, in the C ABI's order (``replystream_format``).
FORMATS = ("markdown", "discord", "telegram-html", "telegram-entities", "slack-mrkdwn",
           "whatsapp", "plain")


@dataclass(frozen=True)
class Entity:
    """A Telegram message entity of a ``telegram-entities`` text, as the Bot API's
    ``MessageEntity``: ``type`` (``"bold"``, ``"italic"``, ``"strikethrough"``, ``"code"``,
    ``"pre"``, ``"text_link"``, ``"blockquote"``, ``"expandable_blockquote"``), ``offset``
    and ``length`` in **UTF-16 code units** (as Telegram counts; not Python ``str``
    indices), ``url`` for ``text_link`` and ``language`` for a ``pre`` that names one
    (``None`` otherwise). :meth:`to_dict` gives the Bot API's JSON object."""

    type: str
    offset: int
    length: int
    url: Optional[str] = None
    language: Optional[str] = None

    def to_dict(self) -> dict:
        """The entity as the Bot API takes it in ``entities`` (no ``None`` fields)."""
        out: dict = {"type": self.type, "offset": self.offset, "length": self.length}
        if self.url is not None:
            out["url"] = self.url
        if self.language is not None:
            out["language"] = self.language
        return out


def entity_of(raw: _native.EntityRecord) -> Entity:
    """An :class:`Entity` copied from a C record."""
    return Entity(
        type=raw.type_name.text(),
        offset=raw.offset,
        length=raw.length,
        url=raw.url.text() if raw.url.len else None,
        language=raw.language.text() if raw.language.len else None,
    )


def format_name(number: int) -> str:
    """The name of C format number ``number``."""
    return FORMATS[number] if number < len(FORMATS) else f"unknown({number})"


@dataclass(frozen=True)
class Rendered:
    """A text rendered for a platform by :func:`render`: ``text`` to post as is, in
    ``format``, and with ``telegram-entities`` its ``entities``."""

    text: str
    format: str
    entities: Tuple[Entity, ...] = ()


def render(text: Union[str, bytes], channel: str = "generic", **options: Any) -> Rendered:
    """Renders a whole Markdown text into the channel's format, as the engine renders each
    send: Telegram HTML (``parse_mode=HTML``) on ``"telegram"``, Slack mrkdwn on
    ``"slack"``, WhatsApp markers, Discord's Markdown (``@everyone``/``@here``
    neutralised), plain text on ``"signal"`` and ``"imessage"``, Markdown on ``"generic"``.
    ``format=`` picks another one (``"telegram-entities"`` gives plain text plus
    :class:`Entity` records); ``table_mode=`` (``"code"``, ``"bullets"``, ``"off"``,
    ``"native"``) and ``allow_mass_mentions=`` apply; other options as for
    :class:`Engine` are accepted and checked.

    Markdown that is not well-formed renders as the visible text it is, escaped. An
    unknown format, or one the channel cannot show (``slack-mrkdwn`` on ``"telegram"``),
    raises :class:`ReplystreamValueError` naming ``format``."""
    data = _args.text("text", text)
    name = channel_bytes(channel)
    lib = _native.load()
    result = ctypes.c_void_p()
    with Options(options) as opts:
        code = lib.replystream_render(name, len(name), opts.handle, data, len(data),
                                      ctypes.byref(result))
    if code != _native.OK:
        raise_for(code, "channel" if code == _native.UNKNOWN_CHANNEL else "",
                  _native.new_error())
    try:
        count = lib.replystream_rendered_entity_count(result)
        return Rendered(
            text=lib.replystream_rendered_text(result).text(),
            format=format_name(lib.replystream_rendered_format(result)),
            entities=tuple(entity_of(lib.replystream_rendered_entity(result, i).contents)
                           for i in range(count)),
        )
    finally:
        lib.replystream_rendered_free(result)
