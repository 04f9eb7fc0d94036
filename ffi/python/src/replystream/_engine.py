"""The engine: one reply stream, driven by pushes and a poll loop."""

from __future__ import annotations

import ctypes
import warnings
from dataclasses import dataclass, field
from typing import Any, Dict, Iterator, List, Literal, Optional, Sequence, Tuple, Union

from . import _args, _native
from ._args import TextArg, TimeArg
from ._config import Options, channel_bytes
from ._errors import raise_for
from ._render import Entity, entity_of, format_name

_ACTION_KINDS = {0: "none", 1: "send", 2: "arm_timer", 3: "abort", 4: "idle"}
_SEND_KINDS = {0: "tool", 1: "block", 2: "final", 3: "preview"}
_OPS = {0: "create", 1: "edit", 2: "delete", 3: "draft"}
_LANES = {0: "answer", 1: "reasoning", 2: "status"}
_ABORT_REASONS = {0: None, 1: "cancelled", 2: "delivery_timeout"}
_ENDINGS = {0: "finished", 1: "failed", 2: "cancelled"}
_UNDELIVERED_REASONS = {0: "failed", 1: "timed_out"}

MediaArg = Union[TextArg, Sequence[TextArg], None]


@dataclass
class Action:
    """One action for the host. ``kind`` is ``"send"``, ``"arm_timer"``, ``"abort"`` or
    ``"idle"``; the other fields are meaningful for their kind only. Strings are copies.

    A send: deliver ``text`` (and ``media``) as ``op`` says (``"create"``, ``"edit"``,
    ``"delete"``, ``"draft"``), then ack it with :meth:`Engine.delivered` or
    :meth:`Engine.delivery_failed` and its ``send_id``. ``text`` is what to post, as is, in
    ``format`` (``"telegram-html"``: send with ``parse_mode="HTML"``; ``"slack-mrkdwn"``,
    ``"discord"``, ``"whatsapp"``, ``"plain"``, ``"markdown"``: as the message text;
    ``"telegram-entities"``: plain text with ``entities``, a list of :class:`Entity`, sent
    as the Bot API's ``entities`` and no parse mode). ``markdown`` is the Markdown it was
    rendered from. ``message_key`` names the message
    for keyed operations (``None`` for a plain create); ``message_ref`` is the platform id
    the host gave when it acked that message's create.
    """

    kind: str
    send_id: int = 0
    send_kind: Optional[str] = None
    op: Optional[str] = None
    message_key: Optional[int] = None
    message_ref: Optional[str] = None
    text: str = ""
    media: List[str] = field(default_factory=list)
    is_error: bool = False
    audio_as_voice: bool = False
    lane: Optional[str] = None
    reply_to: Optional[str] = None  # None, "current", or a platform message id
    deadline_ms: Optional[int] = None  # arm_timer: None cancels the earlier request
    abort_reason: Optional[str] = None
    format: Optional[str] = None  # send: the format ``text`` is in
    markdown: str = ""  # send: the Markdown ``text`` was rendered from
    entities: List[Entity] = field(default_factory=list)  # send, telegram-entities only


@dataclass(frozen=True)
class Undelivered:
    """A send that did not reach the user, in a :class:`TurnOutcome`. ``reason`` is
    ``"failed"`` (a permanent failure, or out of retries) or ``"timed_out"`` (no ack within
    the delivery timeout; a late ack removes it from a later outcome). ``text`` and
    ``media`` are what did not arrive (a streamed block lists only its media: its text goes
    out again in the final). Strings are copies."""

    send_id: int
    send_kind: str  # "tool", "block" or "final"
    reason: Literal["failed", "timed_out"]
    text: str
    media: Tuple[str, ...]
    is_error: bool
    lane: str


@dataclass(frozen=True)
class TurnOutcome:
    """How a turn ended, from :meth:`Engine.outcome`: ``ending`` is ``"finished"``,
    ``"failed"`` or ``"cancelled"``; ``all_delivered`` says the user got the whole reply
    (not cancelled, nothing undelivered); ``final_delivered`` says no final message is
    undelivered; ``undelivered`` lists what never reached the user, in send order."""

    ending: Literal["finished", "failed", "cancelled"]
    all_delivered: bool
    final_delivered: bool
    undelivered: Tuple[Undelivered, ...]


def _outcome_of(raw: _native.OutcomeRecord) -> TurnOutcome:
    undelivered = []
    for i in range(raw.undelivered_count):
        u = raw.undelivered[i]
        undelivered.append(Undelivered(
            send_id=u.send_id,
            send_kind=_SEND_KINDS.get(u.send_kind, f"unknown({u.send_kind})"),
            reason=_UNDELIVERED_REASONS.get(u.reason, f"unknown({u.reason})"),  # type: ignore[arg-type]
            text=u.text.text(),
            media=tuple(u.media[m].text() for m in range(u.media_count)),
            is_error=u.is_error,
            lane=_LANES.get(u.lane, f"unknown({u.lane})"),
        ))
    return TurnOutcome(
        ending=_ENDINGS.get(raw.ending, f"unknown({raw.ending})"),  # type: ignore[arg-type]
        all_delivered=raw.all_delivered,
        final_delivered=raw.final_delivered,
        undelivered=tuple(undelivered),
    )


def _action_of(raw: _native.ActionRecord) -> Action:
    kind = _ACTION_KINDS.get(raw.kind, f"unknown({raw.kind})")
    if kind == "send":
        reply_to = {0: None, 1: "current"}.get(raw.reply_to)
        if raw.reply_to == 2:
            reply_to = raw.reply_to_id.text()
        return Action(
            kind=kind,
            send_id=raw.send_id,
            send_kind=_SEND_KINDS.get(raw.send_kind, f"unknown({raw.send_kind})"),
            op=_OPS.get(raw.op, f"unknown({raw.op})"),
            message_key=raw.message_key if raw.has_message_key else None,
            message_ref=raw.message_ref.text() if raw.has_message_ref else None,
            text=raw.text.text(),
            media=[raw.media[i].text() for i in range(raw.media_count)],
            is_error=raw.is_error,
            audio_as_voice=raw.audio_as_voice,
            lane=_LANES.get(raw.lane, f"unknown({raw.lane})"),
            reply_to=reply_to,
            format=format_name(raw.format),
            markdown=raw.markdown.text(),
            entities=[entity_of(raw.entities[i]) for i in range(raw.entity_count)],
        )
    if kind == "arm_timer":
        return Action(kind=kind, deadline_ms=raw.deadline_ms if raw.has_deadline else None)
    if kind == "abort":
        return Action(kind=kind, abort_reason=_ABORT_REASONS.get(raw.abort_reason))
    return Action(kind=kind)


def _text_then_time(
    method: str, text: Any, now_ms: Any, keywords: Dict[str, Any]
) -> Tuple[Any, Any]:
    """``text_end`` and ``message_end`` take ``(text, now_ms)`` like every push (``text`` may
    be ``None``, or given as ``text=``). Until the next release the old order
    ``(now_ms)``, ``(now_ms, text)`` and ``(now_ms, text=...)`` still works, with a
    ``DeprecationWarning``."""
    old = False
    if "text" in keywords:
        keyword = keywords.pop("text")
        if _args.is_time(text) and now_ms is None:
            old, text, now_ms = True, keyword, text
        elif text is not None:
            raise TypeError(f"{method}() got multiple values for argument 'text'")
        else:
            text = keyword
    if keywords:
        raise TypeError(f"{method}() got an unexpected keyword argument {next(iter(keywords))!r}")
    if not old and _args.is_time(text) and not _args.is_time(now_ms):
        old, text, now_ms = True, now_ms, text
    if old:
        warnings.warn(
            f"{method}(now_ms, text) is deprecated: pass {method}(text, now_ms) "
            f"(or {method}(now_ms=...)) like the other pushes",
            DeprecationWarning,
            stacklevel=3,
        )
    if now_ms is None:
        raise TypeError(f"{method}() missing required argument: 'now_ms'")
    return text, now_ms


class Engine:
    """One reply stream (one turn). Create one per reply, push each model event with the
    current time (``now_ms``, milliseconds from the caller's monotonic clock, int or float),
    then drain :meth:`actions` and execute them in order. Close it (or use ``with``) when
    done. Not thread-safe: use an engine from one thread at a time.

    ``channel`` is a profile name (``"telegram"``, ``"discord"``, ``"slack"``, ``"signal"``,
    ``"whatsapp"``, ``"imessage"``, ``"googlechat"``, ``"generic"``). Keyword options
    override the channel's defaults (every knob of the library's configuration; see the
    README): ``text_limit``, ``metric``, ``preview_limit``, ``max_lines``, ``chunk_min``,
    ``chunk_max``, ``break_preference``, ``chunk_mode``, ``break_mode``, ``block_streaming``,
    ``coalesce_min``, ``coalesce_max``, ``coalesce_idle_ms``, ``human_delay``,
    ``delivery_timeout_ms``, ``response_prefix``, ``prefix_every_message``, ``model``,
    ``provider``, ``thinking_level``, ``identity_name``, ``reasoning``,
    ``require_final_tag``, ``silent_token``, ``heartbeat_token``, ``preview``,
    ``preview_throttle_ms``, ``preview_cursor``, ``preview_min_initial_units``,
    ``preview_block_min``, ``preview_block_max``, ``preview_transport`` (``"edit"`` or
    ``"draft"``), ``preview_expandable_quote``, ``media_roots`` (a list of absolute
    directories: a local path the model writes in ``MEDIA:`` is media only inside one;
    none by default), ``media_allow_http`` (``True``: ``http://`` URLs are media too),
    ``format`` (the format sends are rendered in: ``"markdown"``, ``"discord"``,
    ``"telegram-html"``, ``"telegram-entities"``, ``"slack-mrkdwn"``, ``"whatsapp"``,
    ``"plain"``; default the channel's), ``table_mode`` (``"code"``, ``"bullets"``,
    ``"off"``, ``"native"``), ``allow_mass_mentions`` (Discord) and ``caption_limit``
    (``None`` for none).

    A bad type raises ``TypeError`` and a bad value ``ValueError`` (a
    :class:`ReplystreamValueError` when the library refuses it), naming the argument.
    """

    def __init__(self, channel: str = "generic", *, seed: int = 0, **options: Any):
        seed = _args.count("seed", seed)
        name = channel_bytes(channel)
        self._lib = _native.load()
        self._handle = ctypes.c_void_p()
        with Options(options) as opts:
            code = self._lib.replystream_engine_new(
                name, len(name), opts.handle, seed, ctypes.byref(self._handle)
            )
        if code != _native.OK:
            raise_for(code, "channel" if code == _native.UNKNOWN_CHANNEL else "",
                      _native.new_error())

    # -- lifecycle ------------------------------------------------------------------------

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
        return not self._handle

    def close(self) -> None:
        """Frees the engine. Safe to call twice; any other call afterwards raises
        ``ValueError``."""
        if getattr(self, "_handle", None):
            self._lib.replystream_engine_free(self._handle)
            self._handle = ctypes.c_void_p()

    def __enter__(self) -> "Engine":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    def _live(self, method: str) -> ctypes.c_void_p:
        if not self._handle:
            raise ValueError(f"{method}: the engine is closed")
        return self._handle

    def _check(self, code: int, argument: str = "") -> None:
        if code in (_native.OK, _native.DONE):
            return
        detail = _native.Str()
        self._lib.replystream_engine_last_error(self._handle, ctypes.byref(detail))
        raise_for(code, argument, detail.text())

    def _push(self, method: str, *args: Any) -> None:
        handle = self._live(method)
        self._check(getattr(self._lib, f"replystream_engine_push_{method}")(handle, *args))

    def _payload(self, method: str, text: Any, media: MediaArg, now_ms: Any) -> None:
        data = _args.text("text", text) if text is not None else b""
        urls = _args.text_list("media", media)
        now = _args.millis("now_ms", now_ms)
        array = _args.media_array(urls)
        self._push(method, data, len(data), array, len(urls), now)

    # -- inputs ---------------------------------------------------------------------------

    def set_seq(self, seq: int) -> None:
        """The next push carries this sequence number (repeats and older ones are ignored,
        a gap is counted)."""
        seq = _args.count("seq", seq)
        self._check(self._lib.replystream_engine_set_seq(self._live("set_seq"), seq))

    def message_start(self, now_ms: TimeArg) -> None:
        """A new assistant message begins."""
        self._push("message_start", _args.millis("now_ms", now_ms))

    def text_delta(self, text: TextArg, now_ms: TimeArg) -> None:
        """The next piece of assistant text. Bytes may end inside a UTF-8 character: the
        rest is expected in the next delta."""
        data = _args.text("text", text)
        self._push("text_delta", data, len(data), _args.millis("now_ms", now_ms))

    def text_snapshot(self, text: TextArg, now_ms: TimeArg) -> None:
        """The whole assistant text so far; the engine derives the new part."""
        data = _args.text("text", text)
        self._push("text_snapshot", data, len(data), _args.millis("now_ms", now_ms))

    def text_end(self, text: Optional[TextArg] = None, /, now_ms: Optional[TimeArg] = None,
                 **keywords: Any) -> None:
        """A text block ended; ``text`` may carry its full content (nothing is sent
        twice). Also accepts ``text=`` by keyword."""
        text, now_ms = _text_then_time("text_end", text, now_ms, keywords)
        data = _args.optional_text("text", text)
        self._push("text_end", data, 0 if data is None else len(data),
                   _args.millis("now_ms", now_ms))

    def thinking_delta(self, text: TextArg, now_ms: TimeArg) -> None:
        """Reasoning text outside the answer."""
        data = _args.text("text", text)
        self._push("thinking_delta", data, len(data), _args.millis("now_ms", now_ms))

    def thinking_end(self, now_ms: TimeArg) -> None:
        """The reasoning block ended."""
        self._push("thinking_end", _args.millis("now_ms", now_ms))

    def tool_start(self, name: TextArg, now_ms: TimeArg) -> None:
        """The model calls a tool: everything buffered is flushed first."""
        data = _args.text("name", name)
        self._push("tool_start", data, len(data), _args.millis("now_ms", now_ms))

    def tool_result(self, text: Optional[TextArg], now_ms: TimeArg, media: MediaArg = None) -> None:
        """A tool summary to show (a send of kind ``"tool"``), with any number of media
        URLs or paths."""
        self._payload("tool_result", text, media, now_ms)

    def media(self, urls: MediaArg, now_ms: TimeArg, text: Optional[TextArg] = None) -> None:
        """A media payload: one URL/path or a list (at least one), with an optional
        caption."""
        self._payload("media", text, urls, now_ms)

    def message_end(self, text: Optional[TextArg] = None, /, now_ms: Optional[TimeArg] = None,
                    **keywords: Any) -> None:
        """The assistant message ended; ``text`` may carry its full content. Also accepts
        ``text=`` by keyword."""
        text, now_ms = _text_then_time("message_end", text, now_ms, keywords)
        data = _args.optional_text("text", text)
        self._push("message_end", data, 0 if data is None else len(data),
                   _args.millis("now_ms", now_ms))

    def final_reply(self, text: Optional[TextArg], now_ms: TimeArg, media: MediaArg = None) -> None:
        """The host's final reply payload, reconciled at finish against what was
        streamed."""
        self._payload("final_reply", text, media, now_ms)

    def finish(self, now_ms: TimeArg) -> None:
        """The turn is complete: flush, send the finals, then go idle."""
        self._push("finish", _args.millis("now_ms", now_ms))

    def fail(self, error: TextArg, now_ms: TimeArg) -> None:
        """The model failed: what was produced is delivered, then ``error``."""
        data = _args.text("error", error)
        self._push("fail", data, len(data), _args.millis("now_ms", now_ms))

    def cancel(self, now_ms: TimeArg) -> None:
        """Stop the turn: an ``abort`` action follows and nothing more is sent."""
        self._push("cancel", _args.millis("now_ms", now_ms))

    def timer(self, now_ms: TimeArg) -> None:
        """A deadline may have passed (early or repeated calls do nothing)."""
        self._push("timer", _args.millis("now_ms", now_ms))

    def delivered(self, send_id: int, now_ms: TimeArg,
                  message_ref: Optional[TextArg] = None) -> None:
        """The host delivered send ``send_id``; ``message_ref`` is the platform's id of the
        message (it comes back on later edits and deletes)."""
        send_id = _args.count("send_id", send_id)
        data = _args.optional_text("message_ref", message_ref)
        self._push("delivered", send_id, data, 0 if data is None else len(data),
                   _args.millis("now_ms", now_ms))

    def delivery_failed(self, send_id: int, now_ms: TimeArg,
                        retry_after_ms: Optional[TimeArg] = None,
                        permanent: bool = False) -> None:
        """Send ``send_id`` failed; retry no earlier than ``retry_after_ms`` from now (a
        429), or never if ``permanent``."""
        send_id = _args.count("send_id", send_id)
        retry = _native.NONE if retry_after_ms is None else _args.millis(
            "retry_after_ms", retry_after_ms)
        if retry == _native.NONE and retry_after_ms is not None:
            retry -= 1  # the largest wait that is not "none"
        self._push("delivery_failed", send_id, retry, _args.flag("permanent", permanent),
                   _args.millis("now_ms", now_ms))

    # -- outputs --------------------------------------------------------------------------

    def poll_action(self) -> Optional[Action]:
        """The next pending action, or ``None`` when none is pending."""
        handle = self._live("poll_action")
        record = ctypes.POINTER(_native.ActionRecord)()
        code = self._lib.replystream_engine_poll_action(handle, ctypes.byref(record))
        self._check(code)
        if code == _native.DONE:
            return None
        return _action_of(record.contents)

    def actions(self) -> Iterator[Action]:
        """Yields every pending action, stopping when none is pending. Acks and timers
        pushed while iterating add actions that the same iteration yields."""
        while True:
            action = self.poll_action()
            if action is None:
                return
            yield action

    def next_deadline(self) -> Optional[int]:
        """The earliest deadline in ms, or ``None``."""
        deadline = ctypes.c_uint64()
        has = self._lib.replystream_engine_next_deadline(self._live("next_deadline"),
                                                         ctypes.byref(deadline))
        return deadline.value if has else None

    def is_done(self) -> bool:
        """True once the turn is over (finished and every send answered or given up on after
        its delivery timeout, or cancelled)."""
        return bool(self._lib.replystream_engine_is_done(self._live("is_done")))

    def stats(self) -> Dict[str, int]:
        """The engine's counters: ``gaps``, ``duplicates_ignored``, ``divergences``,
        ``payloads_deduped``, ``unknown_acks``, ``sends``, ``delivered``, ``failures``,
        ``retries``, ``dropped``, ``timeouts``, ``skipped_blocks``, and for a live preview
        ``preview_updates`` (operations sent) and ``preview_skips`` (updates not sent because
        the platform already showed that text), and ``media_refused`` (media references
        written by the model that the media policy refused)."""
        raw = _native.StatsRecord()
        self._check(self._lib.replystream_engine_stats(self._live("stats"), ctypes.byref(raw),
                                                       ctypes.sizeof(raw)))
        return {name: getattr(raw, name) for name in _native.STATS_FIELDS}

    def outcome(self) -> Optional[TurnOutcome]:
        """How the turn ended, once it has (after the ``idle`` action, or a cancel); ``None``
        while it runs. A late ack for a send whose timeout fired still counts: ask again to
        see it."""
        handle = self._live("outcome")
        record = ctypes.POINTER(_native.OutcomeRecord)()
        self._check(self._lib.replystream_engine_outcome(handle, ctypes.byref(record)))
        if not record:
            return None
        try:
            return _outcome_of(record.contents)
        finally:
            self._lib.replystream_outcome_free(record)
