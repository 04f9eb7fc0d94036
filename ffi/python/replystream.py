"""A small ctypes wrapper over the replystream C ABI.

The shared library is loaded from ``$REPLYSTREAM_LIB`` if set, else from
``target/debug/libreplystream_ffi.so`` (``.dylib`` on macOS, ``.dll`` on Windows) under the
repository root; build it with ``cargo build -p replystream-ffi``.

Example::

    from replystream import Engine

    with Engine("telegram", chunk_min=60) as engine:
        engine.message_start(now_ms=0)
        engine.text_delta("Hello there.", now_ms=10)
        engine.finish(now_ms=20)
        for action in engine.actions():
            if action.kind == "send":
                deliver(action.text)
                engine.delivered(action.send_id, now_ms=30)

Text arguments are ``str`` (encoded as UTF-8) or ``bytes`` (passed as they are, so invalid
UTF-8 raises ``ReplystreamError`` with code ``INVALID_UTF8``). Times are integers in
milliseconds from the caller's monotonic clock.
"""

from __future__ import annotations

import ctypes
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, List, Optional, Union

__all__ = [
    "Action",
    "Engine",
    "ReplystreamError",
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
    "load_library",
]

# Result codes (replystream_result); the numbers are fixed.
OK = 0
DONE = 1
NULL_POINTER = 2
INVALID_UTF8 = 3
UNKNOWN_CHANNEL = 4
INVALID_CONFIG = 5
UNKNOWN_SEND = 6
TURN_ENDED = 7
OUT_OF_RANGE = 8
INVALID_ARGUMENT = 9
PANIC = 10
POISONED = 11
ERROR = 12

CODE_NAMES = {
    OK: "OK",
    DONE: "DONE",
    NULL_POINTER: "NULL_POINTER",
    INVALID_UTF8: "INVALID_UTF8",
    UNKNOWN_CHANNEL: "UNKNOWN_CHANNEL",
    INVALID_CONFIG: "INVALID_CONFIG",
    UNKNOWN_SEND: "UNKNOWN_SEND",
    TURN_ENDED: "TURN_ENDED",
    OUT_OF_RANGE: "OUT_OF_RANGE",
    INVALID_ARGUMENT: "INVALID_ARGUMENT",
    PANIC: "PANIC",
    POISONED: "POISONED",
    ERROR: "ERROR",
}

#: "No value" (UINT64_MAX): no deadline, no retry_after, or "off" in the options.
NONE = 2**64 - 1

_ACTION_KINDS = {0: "none", 1: "send", 2: "arm_timer", 3: "abort", 4: "idle"}
_SEND_KINDS = {0: "tool", 1: "block", 2: "final"}
_OPS = {0: "create", 1: "edit", 2: "delete"}
_LANES = {0: "answer", 1: "reasoning", 2: "status"}
_ABORT_REASONS = {0: None, 1: "cancelled", 2: "delivery_timeout"}

_HUMAN_DELAY = {None: 0, "off": 1, "natural": 2, "custom": 3}
_BREAK_MODE = {None: 0, "text_end": 1, "message_end": 2}
_REASONING = {None: 0, "off": 1, "on": 2, "stream": 3}
_TOGGLE = {None: 0, True: 1, False: 2}


class _Str(ctypes.Structure):
    _fields_ = [("ptr", ctypes.c_void_p), ("len", ctypes.c_size_t)]

    def text(self) -> str:
        if not self.len:
            return ""
        return ctypes.string_at(self.ptr, self.len).decode("utf-8")


class _Options(ctypes.Structure):
    _fields_ = [
        ("text_limit", ctypes.c_size_t),
        ("chunk_min", ctypes.c_size_t),
        ("chunk_max", ctypes.c_size_t),
        ("coalesce_idle_ms", ctypes.c_uint64),
        ("delivery_timeout_ms", ctypes.c_uint64),
        ("human_delay_min_ms", ctypes.c_uint64),
        ("human_delay_max_ms", ctypes.c_uint64),
        ("human_delay", ctypes.c_uint32),
        ("break_mode", ctypes.c_uint32),
        ("reasoning", ctypes.c_uint32),
        ("block_streaming", ctypes.c_uint32),
    ]


_STATS_FIELDS = (
    "gaps", "duplicates_ignored", "divergences", "payloads_deduped", "unknown_acks", "sends",
    "delivered", "failures", "retries", "dropped", "timeouts", "skipped_blocks",
)


class _Stats(ctypes.Structure):
    _fields_ = [(name, ctypes.c_uint64) for name in _STATS_FIELDS]


class _Action(ctypes.Structure):
    _fields_ = [
        ("kind", ctypes.c_uint32),
        ("send_id", ctypes.c_uint64),
        ("send_kind", ctypes.c_uint32),
        ("op", ctypes.c_uint32),
        ("message_key", ctypes.c_uint32),
        ("text", _Str),
        ("is_error", ctypes.c_bool),
        ("audio_as_voice", ctypes.c_bool),
        ("lane", ctypes.c_uint32),
        ("reply_to", ctypes.c_uint32),
        ("reply_to_id", _Str),
        ("media_count", ctypes.c_size_t),
        ("deadline_ms", ctypes.c_uint64),
        ("abort_reason", ctypes.c_uint32),
    ]


class ReplystreamError(Exception):
    """A call failed. ``code`` is the result number, ``name`` its name (e.g.
    ``"INVALID_UTF8"``), ``message`` the library's static message and ``detail`` the
    specific reason when the library gave one."""

    def __init__(self, code: int, message: str, detail: str = ""):
        self.code = code
        self.name = CODE_NAMES.get(code, f"UNKNOWN({code})")
        self.message = message
        self.detail = detail
        text = f"{self.name}: {message}"
        if detail:
            text += f" ({detail})"
        super().__init__(text)


@dataclass
class Action:
    """One action for the host. ``kind`` is ``"send"``, ``"arm_timer"``, ``"abort"`` or
    ``"idle"``; the other fields are meaningful for their kind only. Strings are copies."""

    kind: str
    send_id: int = 0
    send_kind: Optional[str] = None
    op: Optional[str] = None
    message_key: Optional[int] = None
    text: str = ""
    media: List[str] = field(default_factory=list)
    is_error: bool = False
    audio_as_voice: bool = False
    lane: Optional[str] = None
    reply_to: Optional[str] = None  # None, "current", or a platform message id
    deadline_ms: Optional[int] = None  # None: the earlier timer request is cancelled
    abort_reason: Optional[str] = None


def _default_library_path() -> Path:
    root = Path(__file__).resolve().parents[2]
    if sys.platform == "darwin":
        name = "libreplystream_ffi.dylib"
    elif os.name == "nt":
        name = "replystream_ffi.dll"
    else:
        name = "libreplystream_ffi.so"
    return root / "target" / "debug" / name


_lib = None


def load_library(path: Union[str, os.PathLike, None] = None) -> ctypes.CDLL:
    """Loads (once) and returns the shared library, declaring every function's types."""
    global _lib
    if _lib is not None and path is None:
        return _lib
    explicit = path is not None
    path = path or os.environ.get("REPLYSTREAM_LIB") or _default_library_path()
    lib = ctypes.CDLL(str(path))

    P = ctypes.c_void_p
    S = ctypes.c_char_p
    Z = ctypes.c_size_t
    U64 = ctypes.c_uint64
    R = ctypes.c_uint32

    def sig(name, restype, *argtypes):
        fn = getattr(lib, name)
        fn.restype = restype
        fn.argtypes = list(argtypes)

    sig("replystream_result_str", ctypes.c_char_p, ctypes.c_uint32)
    sig("replystream_version", ctypes.c_char_p)
    sig("replystream_options_default", _Options)
    sig("replystream_engine_new", R, S, Z, ctypes.POINTER(_Options), U64, ctypes.POINTER(P))
    sig("replystream_new_error", R, ctypes.POINTER(_Str))
    sig("replystream_engine_free", None, P)
    sig("replystream_engine_set_seq", R, P, U64)
    for name in ("message_start", "thinking_end", "finish", "cancel", "timer"):
        sig(f"replystream_engine_push_{name}", R, P, U64)
    for name in ("text_delta", "text_snapshot", "text_end", "thinking_delta", "tool_start",
                 "media", "message_end", "fail"):
        sig(f"replystream_engine_push_{name}", R, P, S, Z, U64)
    for name in ("tool_result", "final_reply"):
        sig(f"replystream_engine_push_{name}", R, P, S, Z, S, Z, U64)
    sig("replystream_engine_push_delivered", R, P, U64, S, Z, U64)
    sig("replystream_engine_push_delivery_failed", R, P, U64, U64, ctypes.c_bool, U64)
    sig("replystream_engine_poll_action", R, P, ctypes.POINTER(_Action))
    sig("replystream_action_media", R, P, Z, ctypes.POINTER(_Str))
    sig("replystream_engine_next_deadline", U64, P)
    sig("replystream_engine_is_done", ctypes.c_bool, P)
    sig("replystream_engine_last_error", R, P, ctypes.POINTER(_Str))
    sig("replystream_engine_stats", R, P, ctypes.POINTER(_Stats))
    if not explicit:
        _lib = lib
    return lib


def result_message(code: int) -> str:
    """The library's static message for a result code."""
    return load_library().replystream_result_str(code).decode("utf-8")


def version() -> str:
    """The library version."""
    return load_library().replystream_version().decode("utf-8")


def _bytes(text: Union[str, bytes, None]) -> Optional[bytes]:
    if text is None:
        return None
    if isinstance(text, str):
        return text.encode("utf-8")
    return bytes(text)


class Engine:
    """One reply stream (one turn). Create it per reply; call :meth:`close` (or use it as a
    context manager) when done. Not thread-safe: use one engine from one thread at a time.

    ``channel`` is a channel profile name (``"telegram"``, ``"discord"``, ``"slack"``,
    ``"signal"``, ``"whatsapp"``, ``"imessage"``, ``"googlechat"``, ``"generic"``). Keyword
    options override the channel's defaults: ``text_limit``, ``chunk_min``, ``chunk_max``,
    ``coalesce_idle_ms`` and ``delivery_timeout_ms`` (``NONE`` turns the timer off),
    ``human_delay`` (``"off"``, ``"natural"`` or ``(min_ms, max_ms)``), ``break_mode``
    (``"text_end"``, ``"message_end"``), ``reasoning`` (``"off"``, ``"on"``, ``"stream"``),
    ``block_streaming`` (bool).
    """

    def __init__(self, channel: str = "generic", *, seed: int = 0, lib=None, **options):
        self._lib = lib or load_library()
        self._handle = ctypes.c_void_p()
        opts = self._options(options)
        name = channel.encode("utf-8")
        code = self._lib.replystream_engine_new(
            name, len(name), ctypes.byref(opts), seed, ctypes.byref(self._handle)
        )
        if code != OK:
            detail = _Str()
            self._lib.replystream_new_error(ctypes.byref(detail))
            raise ReplystreamError(code, result_message(code), detail.text())

    @staticmethod
    def _options(options) -> _Options:
        opts = _Options()
        for key in ("text_limit", "chunk_min", "chunk_max", "coalesce_idle_ms",
                    "delivery_timeout_ms"):
            if options.get(key) is not None:
                setattr(opts, key, options.pop(key))
            else:
                options.pop(key, None)
        delay = options.pop("human_delay", None)
        if isinstance(delay, tuple):
            opts.human_delay = _HUMAN_DELAY["custom"]
            opts.human_delay_min_ms, opts.human_delay_max_ms = delay
        else:
            opts.human_delay = _HUMAN_DELAY[delay]
        opts.break_mode = _BREAK_MODE[options.pop("break_mode", None)]
        opts.reasoning = _REASONING[options.pop("reasoning", None)]
        opts.block_streaming = _TOGGLE[options.pop("block_streaming", None)]
        if options:
            raise TypeError(f"unknown options: {', '.join(sorted(options))}")
        return opts

    # -- lifecycle ------------------------------------------------------------------------

    def close(self) -> None:
        """Frees the engine. Safe to call twice."""
        if self._handle:
            self._lib.replystream_engine_free(self._handle)
            self._handle = ctypes.c_void_p()

    def __enter__(self) -> "Engine":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def _check(self, code: int) -> None:
        if code in (OK, DONE):
            return
        detail = _Str()
        if self._handle:
            self._lib.replystream_engine_last_error(self._handle, ctypes.byref(detail))
        raise ReplystreamError(code, result_message(code), detail.text())

    def _text_call(self, name: str, text, now_ms: int) -> None:
        data = _bytes(text)
        size = 0 if data is None else len(data)
        self._check(getattr(self._lib, name)(self._handle, data, size, now_ms))

    def _payload_call(self, name: str, text, media, now_ms: int) -> None:
        data, url = _bytes(text) or b"", _bytes(media)
        self._check(
            getattr(self._lib, name)(
                self._handle, data, len(data), url, 0 if url is None else len(url), now_ms
            )
        )

    # -- inputs ---------------------------------------------------------------------------

    def set_seq(self, seq: int) -> None:
        """The next push carries this sequence number (repeats and older ones are ignored)."""
        self._check(self._lib.replystream_engine_set_seq(self._handle, seq))

    def message_start(self, now_ms: int) -> None:
        self._check(self._lib.replystream_engine_push_message_start(self._handle, now_ms))

    def text_delta(self, text, now_ms: int) -> None:
        self._text_call("replystream_engine_push_text_delta", text, now_ms)

    def text_snapshot(self, text, now_ms: int) -> None:
        self._text_call("replystream_engine_push_text_snapshot", text, now_ms)

    def text_end(self, now_ms: int, text=None) -> None:
        self._text_call("replystream_engine_push_text_end", text, now_ms)

    def thinking_delta(self, text, now_ms: int) -> None:
        self._text_call("replystream_engine_push_thinking_delta", text, now_ms)

    def thinking_end(self, now_ms: int) -> None:
        self._check(self._lib.replystream_engine_push_thinking_end(self._handle, now_ms))

    def tool_start(self, name, now_ms: int) -> None:
        self._text_call("replystream_engine_push_tool_start", name, now_ms)

    def tool_result(self, text, now_ms: int, media=None) -> None:
        self._payload_call("replystream_engine_push_tool_result", text, media, now_ms)

    def media(self, url, now_ms: int) -> None:
        self._text_call("replystream_engine_push_media", url, now_ms)

    def message_end(self, now_ms: int, text=None) -> None:
        self._text_call("replystream_engine_push_message_end", text, now_ms)

    def final_reply(self, text, now_ms: int, media=None) -> None:
        self._payload_call("replystream_engine_push_final_reply", text, media, now_ms)

    def finish(self, now_ms: int) -> None:
        self._check(self._lib.replystream_engine_push_finish(self._handle, now_ms))

    def fail(self, error, now_ms: int) -> None:
        self._text_call("replystream_engine_push_fail", error, now_ms)

    def cancel(self, now_ms: int) -> None:
        self._check(self._lib.replystream_engine_push_cancel(self._handle, now_ms))

    def timer(self, now_ms: int) -> None:
        self._check(self._lib.replystream_engine_push_timer(self._handle, now_ms))

    def delivered(self, send_id: int, now_ms: int, message_ref=None) -> None:
        data = _bytes(message_ref)
        size = 0 if data is None else len(data)
        self._check(
            self._lib.replystream_engine_push_delivered(self._handle, send_id, data, size, now_ms)
        )

    def delivery_failed(self, send_id: int, now_ms: int, retry_after_ms: Optional[int] = None,
                        permanent: bool = False) -> None:
        retry = NONE if retry_after_ms is None else retry_after_ms
        self._check(
            self._lib.replystream_engine_push_delivery_failed(
                self._handle, send_id, retry, permanent, now_ms
            )
        )

    # -- outputs --------------------------------------------------------------------------

    def poll_action(self) -> Optional[Action]:
        """The next pending action, or ``None`` when none is pending."""
        raw = _Action()
        code = self._lib.replystream_engine_poll_action(self._handle, ctypes.byref(raw))
        self._check(code)
        if code == DONE:
            return None
        kind = _ACTION_KINDS.get(raw.kind, f"unknown({raw.kind})")
        if kind == "send":
            media = []
            for i in range(raw.media_count):
                url = _Str()
                self._check(self._lib.replystream_action_media(self._handle, i, ctypes.byref(url)))
                media.append(url.text())
            reply_to = {0: None, 1: "current"}.get(raw.reply_to) if raw.reply_to != 2 \
                else raw.reply_to_id.text()
            op = _OPS[raw.op]
            return Action(
                kind=kind,
                send_id=raw.send_id,
                send_kind=_SEND_KINDS[raw.send_kind],
                op=op,
                message_key=raw.message_key if op != "create" else None,
                text=raw.text.text(),
                media=media,
                is_error=raw.is_error,
                audio_as_voice=raw.audio_as_voice,
                lane=_LANES[raw.lane],
                reply_to=reply_to,
            )
        if kind == "arm_timer":
            return Action(kind=kind, deadline_ms=None if raw.deadline_ms == NONE
                          else raw.deadline_ms)
        if kind == "abort":
            return Action(kind=kind, abort_reason=_ABORT_REASONS.get(raw.abort_reason))
        return Action(kind=kind)

    def actions(self) -> Iterator[Action]:
        """Yields every pending action (stops when none is pending). Acks and timers pushed
        while iterating add actions that the same iteration yields."""
        while True:
            action = self.poll_action()
            if action is None:
                return
            yield action

    def next_deadline(self) -> Optional[int]:
        """The earliest deadline in ms, or ``None``."""
        deadline = self._lib.replystream_engine_next_deadline(self._handle)
        return None if deadline == NONE else deadline

    def stats(self) -> dict:
        """The engine's counters (gaps, duplicates_ignored, sends, delivered, retries, ...)."""
        raw = _Stats()
        self._check(self._lib.replystream_engine_stats(self._handle, ctypes.byref(raw)))
        return {name: getattr(raw, name) for name in _STATS_FIELDS}

    def is_done(self) -> bool:
        """True once the turn is over (finished and acknowledged, or cancelled)."""
        return bool(self._lib.replystream_engine_is_done(self._handle))
