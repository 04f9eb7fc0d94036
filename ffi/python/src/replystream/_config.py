"""Every configuration knob as a keyword argument: checked here for type and obvious range,
then handed to the library's options handle (which checks the rest when the options are
used)."""

from __future__ import annotations

import ctypes
from typing import Any, Callable, Dict, List, Mapping, Tuple

from . import _args, _native
from ._errors import ReplystreamError, raise_for

METRICS = {"utf16": 0, "utf-16": 0, "chars": 1, "bytes": 2, "graphemes": 3}
BREAK_PREFERENCES = {"paragraph": 0, "newline": 1, "sentence": 2}
CHUNK_MODES = {"length": 0, "newline": 1, "paragraph": 1}
BREAK_MODES = {"text_end": 0, "text-end": 0, "message_end": 1, "message-end": 1}
REASONING = {"off": 0, "on": 1, "stream": 2}
PREVIEW = {"off": 0, "partial": 1, "block": 2}
PREVIEW_TRANSPORTS = {"edit": 0, "message": 0, "draft": 1}
HUMAN_DELAY = {"off": 0, "natural": 1}
HUMAN_DELAY_CUSTOM = 2


def _size(minimum: int = 0) -> Callable[[str, Any], Tuple[Any, ...]]:
    return lambda name, v: (_args.count(name, v, minimum),)


def _size_or_none(name: str, value: Any) -> Tuple[Any, ...]:
    # 0 means "none" (no cap, or the derived default) in the C ABI.
    return (0 if value is None else _args.count(name, value, 1),)


def _ms(name: str, value: Any) -> Tuple[Any, ...]:
    return (_args.millis(name, value),)


def _ms_or_none(name: str, value: Any) -> Tuple[Any, ...]:
    # None (and the old NONE sentinel) mean "off", which the C ABI spells 0.
    if value is None or (_args.is_time(value) and value == _native.NONE):
        return (0,)
    return (_args.millis(name, value),)


def _choice(table: Mapping[str, int]) -> Callable[[str, Any], Tuple[Any, ...]]:
    return lambda name, v: (_args.choice(name, v, table),)


def _flag(name: str, value: Any) -> Tuple[Any, ...]:
    return (_args.flag(name, value),)


def _text_or_none(name: str, value: Any) -> Tuple[Any, ...]:
    data = _args.optional_text(name, value)
    return (data, 0 if data is None else len(data))


def _human_delay(name: str, value: Any) -> Tuple[Any, ...]:
    if isinstance(value, tuple):
        if len(value) != 2:
            raise ValueError(f"{name} must be 'off', 'natural' or (min_ms, max_ms), "
                             f"got a tuple of {len(value)}")
        low = _args.millis(f"{name}[0]", value[0])
        high = _args.millis(f"{name}[1]", value[1])
        return (HUMAN_DELAY_CUSTOM, low, high)
    if value is None:
        return (HUMAN_DELAY["off"], 0, 0)
    if not isinstance(value, str):
        raise TypeError(f"{name} must be 'off', 'natural' or a (min_ms, max_ms) tuple, "
                        f"not {type(value).__name__}")
    return (_args.choice(name, value, HUMAN_DELAY), 0, 0)


#: keyword -> (C setter suffix, converter to the setter's arguments). Names are the
#: library's field names; see the README for what each does.
KNOBS: Dict[str, Tuple[str, Callable[[str, Any], Tuple[Any, ...]]]] = {
    "text_limit": ("text_limit", _size()),
    "metric": ("metric", _choice(METRICS)),
    "preview_limit": ("preview_limit", _size()),
    "max_lines": ("max_lines", _size_or_none),
    "chunk_min": ("chunk_min", _size()),
    "chunk_max": ("chunk_max", _size()),
    "break_preference": ("break_preference", _choice(BREAK_PREFERENCES)),
    "chunk_mode": ("chunk_mode", _choice(CHUNK_MODES)),
    "break_mode": ("break_mode", _choice(BREAK_MODES)),
    "block_streaming": ("block_streaming", _flag),
    "coalesce_min": ("coalesce_min", _size_or_none),
    "coalesce_max": ("coalesce_max", _size_or_none),
    "coalesce_idle_ms": ("coalesce_idle_ms", _ms_or_none),
    "human_delay": ("human_delay", _human_delay),
    "delivery_timeout_ms": ("delivery_timeout_ms", _ms_or_none),
    "response_prefix": ("response_prefix", _text_or_none),
    "prefix_every_message": ("prefix_every_message", _flag),
    "model": ("model", _text_or_none),
    "provider": ("provider", _text_or_none),
    "thinking_level": ("thinking_level", _text_or_none),
    "identity_name": ("identity_name", _text_or_none),
    "reasoning": ("reasoning", _choice(REASONING)),
    "require_final_tag": ("require_final_tag", _flag),
    "silent_token": ("silent_token", _text_or_none),
    "heartbeat_token": ("heartbeat_token", _text_or_none),
    "preview": ("preview", _choice(PREVIEW)),
    "preview_throttle_ms": ("preview_throttle_ms", _ms),
    "preview_cursor": ("preview_cursor", _text_or_none),
    "preview_min_initial_units": ("preview_min_initial_units", _size()),
    "preview_block_min": ("preview_block_min", _size()),
    "preview_block_max": ("preview_block_max", _size()),
    "preview_transport": ("preview_transport", _choice(PREVIEW_TRANSPORTS)),
    "preview_expandable_quote": ("preview_expandable_quote", _flag),
    "media_allow_http": ("media_allow_http", _flag),
    # Platform formats (the names are checked by the library, which lists the known ones).
    "format": ("format", _text_or_none),
    "table_mode": ("table_mode", _text_or_none),
    "allow_mass_mentions": ("allow_mass_mentions", _flag),
    "caption_limit": ("caption_limit", _size_or_none),
}

#: keyword -> C adder called once per item of the list given (``media_roots=["/srv/m"]``).
LIST_KNOBS: Dict[str, str] = {
    "media_roots": "add_media_root",
}


def _roots(name: str, value: Any) -> List[bytes]:
    # One path is a common slip for a list of one: refuse it rather than split a str.
    if isinstance(value, (str, bytes, bytearray, memoryview)):
        raise TypeError(f"{name} must be a list of paths, not a single {type(value).__name__}")
    return _args.text_list(name, value)


class Options:
    """A C options handle built from keyword arguments; use as a context manager."""

    def __init__(self, options: Mapping[str, Any]):
        known = list(KNOBS) + list(LIST_KNOBS)
        unknown = sorted(set(options) - set(known))
        if unknown:
            raise TypeError(f"unknown option{'s' if len(unknown) > 1 else ''}: "
                            f"{', '.join(unknown)} (known: {', '.join(known)})")
        # Check every value before creating anything.
        calls = []
        for k, v in options.items():
            if k in LIST_KNOBS:
                calls += [(LIST_KNOBS[k], f"{k}[{i}]", (item, len(item)))
                          for i, item in enumerate(_roots(k, v))]
            else:
                calls.append((f"set_{KNOBS[k][0]}", k, KNOBS[k][1](k, v)))
        self._lib = _native.load()
        self.handle = ctypes.c_void_p()
        raise_for(self._lib.replystream_options_new(ctypes.byref(self.handle)), "options")
        try:
            for setter, name, args in calls:
                code = getattr(self._lib, f"replystream_options_{setter}")(self.handle, *args)
                if code != _native.OK:
                    detail = _native.Str()
                    self._lib.replystream_options_last_error(self.handle, ctypes.byref(detail))
                    # The library's detail names the field too: say it once.
                    text = detail.text()
                    if text.startswith(f"{name}: "):
                        text = text[len(name) + 2:]
                    raise_for(code, name, text)
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        if self.handle:
            self._lib.replystream_options_free(self.handle)
            self.handle = ctypes.c_void_p()

    def __enter__(self) -> "Options":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def channel_bytes(channel: Any) -> bytes:
    """The channel name argument."""
    if not isinstance(channel, str):
        raise TypeError(f"channel must be a str, not {type(channel).__name__}")
    return channel.encode("utf-8")


__all__ = ["KNOBS", "LIST_KNOBS", "Options", "ReplystreamError", "channel_bytes"]
