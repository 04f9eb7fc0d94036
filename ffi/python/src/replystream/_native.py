"""The shared library and its C declarations (ctypes mirrors of ``replystream.h``).

The library ships inside the package (``libreplystream_ffi.so`` next to this file, ``.dylib``
on macOS, ``replystream_ffi.dll`` on Windows). ``$REPLYSTREAM_LIB`` names another copy, e.g.
a development build in ``target/debug``.
"""

from __future__ import annotations

import ctypes
import os
import sys
from pathlib import Path
from typing import Any, Optional

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

#: "No value" (UINT64_MAX) in the C ABI.
NONE = 2**64 - 1


class Str(ctypes.Structure):
    """``replystream_str``: a pointer and a length in bytes."""

    _fields_ = [("ptr", ctypes.c_void_p), ("len", ctypes.c_size_t)]

    def bytes(self) -> bytes:
        if not self.len:
            return b""
        return ctypes.string_at(self.ptr, self.len)

    def text(self) -> str:
        return self.bytes().decode("utf-8")


class EntityRecord(ctypes.Structure):
    """``replystream_entity``: a Telegram message entity (UTF-16 offset and length)."""

    _fields_ = [
        ("kind", ctypes.c_uint32),
        ("type_name", Str),
        ("offset", ctypes.c_size_t),
        ("length", ctypes.c_size_t),
        ("url", Str),
        ("language", Str),
    ]


class ActionRecord(ctypes.Structure):
    """``replystream_action`` (owned by the engine handle; read, never written)."""

    _fields_ = [
        ("kind", ctypes.c_uint32),
        ("send_id", ctypes.c_uint64),
        ("send_kind", ctypes.c_uint32),
        ("op", ctypes.c_uint32),
        ("has_message_key", ctypes.c_bool),
        ("message_key", ctypes.c_uint32),
        ("has_message_ref", ctypes.c_bool),
        ("message_ref", Str),
        ("text", Str),
        ("media", ctypes.POINTER(Str)),
        ("media_count", ctypes.c_size_t),
        ("is_error", ctypes.c_bool),
        ("audio_as_voice", ctypes.c_bool),
        ("lane", ctypes.c_uint32),
        ("reply_to", ctypes.c_uint32),
        ("reply_to_id", Str),
        ("has_deadline", ctypes.c_bool),
        ("deadline_ms", ctypes.c_uint64),
        ("abort_reason", ctypes.c_uint32),
        ("format", ctypes.c_uint32),
        ("format_name", Str),
        ("markdown", Str),
        ("entities", ctypes.POINTER(EntityRecord)),
        ("entity_count", ctypes.c_size_t),
    ]


STATS_FIELDS = (
    "gaps",
    "duplicates_ignored",
    "divergences",
    "payloads_deduped",
    "unknown_acks",
    "sends",
    "delivered",
    "failures",
    "retries",
    "dropped",
    "timeouts",
    "skipped_blocks",
    "preview_updates",
    "preview_skips",
    "media_refused",
)


class StatsRecord(ctypes.Structure):
    """``replystream_stats``."""

    _fields_ = [(name, ctypes.c_uint64) for name in STATS_FIELDS]


class BlockRecord(ctypes.Structure):
    """``replystream_block``."""

    _fields_ = [
        ("text", Str),
        ("sep", Str),
        ("source_start", ctypes.c_size_t),
        ("source_end", ctypes.c_size_t),
        ("fence_reopened", ctypes.c_bool),
        ("fence_closed", ctypes.c_bool),
        ("lead", Str),
        ("indent_reopened", ctypes.c_bool),
        ("source_in_text_start", ctypes.c_size_t),
        ("source_in_text_end", ctypes.c_size_t),
        ("table_header_repeated", ctypes.c_bool),
        ("spans_reopened", ctypes.c_bool),
        ("spans_closed", ctypes.c_bool),
        ("dedent", ctypes.c_size_t),
        ("dedent_quotes", ctypes.c_size_t),
    ]


class UndeliveredRecord(ctypes.Structure):
    """``replystream_undelivered``."""

    _fields_ = [
        ("send_id", ctypes.c_uint64),
        ("send_kind", ctypes.c_uint32),
        ("reason", ctypes.c_uint32),
        ("text", Str),
        ("media", ctypes.POINTER(Str)),
        ("media_count", ctypes.c_size_t),
        ("is_error", ctypes.c_bool),
        ("lane", ctypes.c_uint32),
    ]


class OutcomeRecord(ctypes.Structure):
    """``replystream_outcome`` (owned by the caller until ``replystream_outcome_free``)."""

    _fields_ = [
        ("ending", ctypes.c_uint32),
        ("all_delivered", ctypes.c_bool),
        ("final_delivered", ctypes.c_bool),
        ("undelivered", ctypes.POINTER(UndeliveredRecord)),
        ("undelivered_count", ctypes.c_size_t),
    ]


def library_file_name() -> str:
    """The shared library's file name on this platform."""
    if sys.platform == "darwin":
        return "libreplystream_ffi.dylib"
    if os.name == "nt":
        return "replystream_ffi.dll"
    return "libreplystream_ffi.so"


def _declare(lib: ctypes.CDLL) -> None:
    """Declares every function's argument and result types."""
    P = ctypes.c_void_p
    S = ctypes.c_char_p
    Z = ctypes.c_size_t
    U32 = ctypes.c_uint32
    U64 = ctypes.c_uint64
    B = ctypes.c_bool
    R = ctypes.c_uint32
    PStr = ctypes.POINTER(Str)

    def sig(name: str, restype: Any, *argtypes: Any) -> None:
        fn = getattr(lib, name)
        fn.restype = restype
        fn.argtypes = list(argtypes)

    sig("replystream_result_str", ctypes.c_char_p, U32)
    sig("replystream_result_is_error", B, U32)
    sig("replystream_version", ctypes.c_char_p)
    sig("replystream_new_error", R, PStr)

    sig("replystream_options_new", R, ctypes.POINTER(P))
    sig("replystream_options_free", None, P)
    sig("replystream_options_last_error", R, P, PStr)
    for name in ("text_limit", "preview_limit", "max_lines", "chunk_min", "chunk_max",
                 "coalesce_min", "coalesce_max", "preview_min_initial_units",
                 "preview_block_min", "preview_block_max", "caption_limit"):
        sig(f"replystream_options_set_{name}", R, P, Z)
    for name in ("metric", "break_preference", "chunk_mode", "break_mode", "reasoning",
                 "preview", "preview_transport"):
        sig(f"replystream_options_set_{name}", R, P, U32)
    for name in ("block_streaming", "prefix_every_message", "require_final_tag",
                 "preview_expandable_quote", "media_allow_http", "allow_mass_mentions"):
        sig(f"replystream_options_set_{name}", R, P, B)
    for name in ("coalesce_idle_ms", "delivery_timeout_ms", "preview_throttle_ms"):
        sig(f"replystream_options_set_{name}", R, P, U64)
    for name in ("response_prefix", "model", "provider", "thinking_level", "identity_name",
                 "silent_token", "heartbeat_token", "preview_cursor", "format", "table_mode"):
        sig(f"replystream_options_set_{name}", R, P, S, Z)
    sig("replystream_options_set_human_delay", R, P, U32, U64, U64)
    sig("replystream_options_add_media_root", R, P, S, Z)
    sig("replystream_min_limit", Z, U32)

    sig("replystream_engine_new", R, S, Z, P, U64, ctypes.POINTER(P))
    sig("replystream_engine_free", None, P)
    sig("replystream_engine_last_error", R, P, PStr)
    sig("replystream_engine_set_seq", R, P, U64)
    for name in ("message_start", "thinking_end", "finish", "cancel", "timer"):
        sig(f"replystream_engine_push_{name}", R, P, U64)
    for name in ("text_delta", "text_snapshot", "text_end", "thinking_delta", "tool_start",
                 "message_end", "fail"):
        sig(f"replystream_engine_push_{name}", R, P, S, Z, U64)
    for name in ("tool_result", "media", "final_reply"):
        sig(f"replystream_engine_push_{name}", R, P, S, Z, PStr, Z, U64)
    sig("replystream_engine_push_delivered", R, P, U64, S, Z, U64)
    sig("replystream_engine_push_delivery_failed", R, P, U64, U64, B, U64)
    sig("replystream_engine_poll_action", R, P, ctypes.POINTER(ctypes.POINTER(ActionRecord)))
    sig("replystream_action_media", R, P, Z, PStr)
    sig("replystream_engine_next_deadline", B, P, ctypes.POINTER(U64))
    sig("replystream_engine_is_done", B, P)
    sig("replystream_engine_stats", R, P, ctypes.POINTER(StatsRecord), Z)
    sig("replystream_engine_outcome", R, P, ctypes.POINTER(ctypes.POINTER(OutcomeRecord)))
    sig("replystream_outcome_free", None, ctypes.POINTER(OutcomeRecord))

    for name in ("split", "chunk"):
        sig(f"replystream_{name}", R, S, Z, P, S, Z, ctypes.POINTER(P))
    sig("replystream_blocks_count", Z, P)
    sig("replystream_blocks_get", ctypes.POINTER(BlockRecord), P, Z)
    sig("replystream_blocks_free", None, P)

    sig("replystream_format_name", ctypes.c_char_p, U32)
    sig("replystream_render", R, S, Z, P, S, Z, ctypes.POINTER(P))
    sig("replystream_rendered_text", Str, P)
    sig("replystream_rendered_format", U32, P)
    sig("replystream_rendered_entity_count", Z, P)
    sig("replystream_rendered_entity", ctypes.POINTER(EntityRecord), P, Z)
    sig("replystream_rendered_free", None, P)


_lib: Optional[ctypes.CDLL] = None


def library_path() -> Path:
    """Where the shared library is loaded from: ``$REPLYSTREAM_LIB``, else the copy inside
    the package."""
    override = os.environ.get("REPLYSTREAM_LIB")
    if override:
        return Path(override)
    return Path(__file__).resolve().parent / library_file_name()


def load() -> ctypes.CDLL:
    """Loads (once) and returns the shared library with every function declared."""
    global _lib
    if _lib is None:
        path = library_path()
        if not path.exists():
            raise ImportError(
                f"replystream: the shared library {path} is missing; install the package "
                "with `pip install ./ffi/python` (it builds and bundles the library), or set "
                "REPLYSTREAM_LIB to a built libreplystream_ffi"
            )
        lib = ctypes.CDLL(str(path))
        _declare(lib)
        _lib = lib
    return _lib


def result_message(code: int) -> str:
    """The library's static message for a result code."""
    message: bytes = load().replystream_result_str(code)
    return message.decode("utf-8")


def version() -> str:
    """The library version, e.g. ``"0.1.0"``."""
    text: bytes = load().replystream_version()
    return text.decode("utf-8")


def new_error() -> str:
    """Why the last constructor on this thread failed."""
    detail = Str()
    load().replystream_new_error(ctypes.byref(detail))
    return detail.text()
