"""Argument checks: every bad type is a ``TypeError`` and every bad value a ``ValueError``,
each naming the argument, before anything reaches the library."""

from __future__ import annotations

import math
from typing import Any, Iterable, List, Mapping, Optional, TypeVar, Union

from . import _native

TextArg = Union[str, bytes, bytearray, memoryview]
TimeArg = Union[int, float]

U64_MAX = 2**64 - 1

T = TypeVar("T")


def _type_name(value: Any) -> str:
    return type(value).__name__


def is_time(value: Any) -> bool:
    """Whether ``value`` can be a time (an int or float, not a bool)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def millis(name: str, value: Any) -> int:
    """A time or duration in ms: an int or a float (rounded up, so a deadline is never
    reached early), finite, not negative, at most 2**64 - 1."""
    if not is_time(value):
        raise TypeError(f"{name} must be an int or float number of milliseconds, "
                        f"not {_type_name(value)}")
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{name} must be finite, not {value}")
    if value < 0:
        raise ValueError(f"{name} must not be negative (got {value})")
    if isinstance(value, float):
        value = math.ceil(value)
    if value > U64_MAX:
        raise ValueError(f"{name} is too large (got {value}, at most 2**64 - 1)")
    return int(value)


def count(name: str, value: Any, minimum: int = 0) -> int:
    """A whole number (a length, a limit, an id): an int, not a bool, at least ``minimum``,
    at most 2**64 - 1."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, not {_type_name(value)}")
    if value < minimum:
        raise ValueError(f"{name} must be at least {minimum} (got {value})")
    if value > U64_MAX:
        raise ValueError(f"{name} is too large (got {value}, at most 2**64 - 1)")
    return value


def flag(name: str, value: Any) -> bool:
    """A bool (not a truthy value of another type)."""
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be a bool, not {_type_name(value)}")
    return value


def text(name: str, value: Any) -> bytes:
    """A text: ``str`` (sent as UTF-8) or bytes-like (sent as they are; invalid UTF-8 is
    refused by the library)."""
    if isinstance(value, str):
        return value.encode("utf-8", "surrogatepass")
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    raise TypeError(f"{name} must be str or bytes, not {_type_name(value)}")


def optional_text(name: str, value: Any) -> Optional[bytes]:
    """A text or ``None``."""
    return None if value is None else text(name, value)


def text_list(name: str, value: Any) -> List[bytes]:
    """One text or a sequence of texts (``None`` is the empty list)."""
    if value is None:
        return []
    if isinstance(value, (str, bytes, bytearray, memoryview)):
        return [text(name, value)]
    if not isinstance(value, Iterable):
        raise TypeError(f"{name} must be a str or a list of str, not {_type_name(value)}")
    return [text(f"{name}[{i}]", item) for i, item in enumerate(value)]


def choice(name: str, value: Any, table: Mapping[str, T]) -> T:
    """One of the names in ``table`` (case-insensitive)."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str (one of {', '.join(map(repr, table))}), "
                        f"not {_type_name(value)}")
    key = value.strip().lower()
    if key not in table:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, table))} (got {value!r})")
    return table[key]


def media_array(urls: List[bytes]) -> Any:
    """A C array of ``replystream_str`` over ``urls`` (which must stay alive during the
    call), or ``None`` for an empty list."""
    if not urls:
        return None
    array = (_native.Str * len(urls))()
    for slot, url in zip(array, urls):
        slot.ptr = ctypes_address(url)
        slot.len = len(url)
    return array


def ctypes_address(data: bytes) -> int:
    """The address of the bytes of ``data`` (kept alive by the caller)."""
    import ctypes

    return ctypes.cast(ctypes.c_char_p(data), ctypes.c_void_p).value or 0
