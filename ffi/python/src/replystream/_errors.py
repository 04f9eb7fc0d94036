"""Exceptions for the library's result codes."""

from __future__ import annotations

from typing import NoReturn

from . import _native


class ReplystreamError(Exception):
    """A call was refused by the library. ``code`` is the result number, ``name`` its name
    (e.g. ``"UNKNOWN_SEND"``), ``message`` the library's static message, ``detail`` the
    specific reason, and ``argument`` the argument it concerns (or ``""``)."""

    def __init__(self, code: int, message: str, detail: str = "", argument: str = ""):
        self.code = code
        self.name = _native.CODE_NAMES.get(code, f"UNKNOWN({code})")
        self.message = message
        self.detail = detail
        self.argument = argument
        text = f"{argument}: " if argument else ""
        text += detail or message
        text += f" [{self.name}]"
        super().__init__(text)


class ReplystreamValueError(ReplystreamError, ValueError):
    """A bad value refused by the library (invalid UTF-8, an out-of-range or contradictory
    option, an unknown channel, an unusable argument): both a ``ReplystreamError`` and a
    ``ValueError``."""


_VALUE_CODES = {
    _native.INVALID_UTF8,
    _native.UNKNOWN_CHANNEL,
    _native.INVALID_CONFIG,
    _native.INVALID_ARGUMENT,
}


def raise_for(code: int, argument: str = "", detail: str = "") -> None:
    """Raises the exception for ``code`` unless it is OK or DONE."""
    if code in (_native.OK, _native.DONE):
        return
    fail(code, argument, detail)


def fail(code: int, argument: str, detail: str) -> NoReturn:
    cls = ReplystreamValueError if code in _VALUE_CODES else ReplystreamError
    raise cls(code, _native.result_message(code), detail, argument)
