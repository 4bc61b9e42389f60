"""Reassembling chunked extension replies (hop 3), sans-IO.

The extension splits a reply whose JSON exceeds ``CHUNK_THRESHOLD`` bytes into consecutive
``{"type": "chunk", "id", "seq", "total", "data"}`` messages, ``data`` being slices of the reply's
JSON text (docs/protocol.md). ``Reassembler`` turns them back into the reply object. It must never
hold more than ``MAX_REASSEMBLED`` bytes, never accept a gap, a reorder or an interleaved id, and
report every such case as ``ChunkError`` (the caller answers ``internal_error``) without
affecting other replies.

Pass-through (so a large result is not decoded and encoded again on its way): the reassembled
text is checked exactly as ``loads_object`` checks a
frame (one UTF-8 JSON object, no duplicate key at any depth, no NaN or infinity), but when it is
a successful reply its ``result`` member is also handed out as the very bytes the extension
serialised (``Reassembled.result_json``), so the host frames them for its client without
encoding the result again.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

from tabwarden.protocol.framing import FramingError, strict_decoder

CHUNK_THRESHOLD: Final = 1_000_000
MAX_REASSEMBLED: Final = 64 * 1024 * 1024
MAX_CHUNKS: Final = MAX_REASSEMBLED // 1024


class ChunkError(Exception):
    """A chunk sequence is malformed; the reply it belonged to is lost."""

    def __init__(self, reply_id: str, reason: str) -> None:
        super().__init__(reason)
        self.reply_id = reply_id


@dataclass(frozen=True, kw_only=True)
class Reassembled:
    """A whole chunked reply: parsed, and for a successful reply (``ok`` true, ``result`` an
    object) its result's JSON exactly as the extension sent it (else None)."""

    reply: dict[str, Any]
    result_json: bytes | None


@dataclass
class _Partial:
    total: int
    parts: list[str] = field(default_factory=list)
    size: int = 0


class Reassembler:
    """Feed every ``chunk`` message to ``add``; it returns the reply once complete, else None."""

    def __init__(self, *, limit: int = MAX_REASSEMBLED) -> None:
        self._limit = limit
        self._open: _Partial | None = None
        self._open_id: str | None = None

    def add(self, message: dict[str, Any]) -> dict[str, Any] | None:
        """The reply once its last chunk is in, else None (``add_passing`` without the bytes)."""
        whole = self.add_passing(message)
        return None if whole is None else whole.reply

    def add_passing(self, message: dict[str, Any]) -> Reassembled | None:
        reply_id = message.get("id")
        seq, total, data = message.get("seq"), message.get("total"), message.get("data")
        if not isinstance(reply_id, str) or not reply_id:
            raise ChunkError("", "chunk without an id")
        if type(seq) is not int or type(total) is not int or not isinstance(data, str):
            self._drop(reply_id)
            raise ChunkError(reply_id, "chunk with malformed fields")
        if not 2 <= total <= MAX_CHUNKS:
            self._drop(reply_id)
            raise ChunkError(reply_id, f"chunk total {total} out of range")
        if self._open is not None and self._open_id != reply_id:
            lost = self._open_id or ""
            self._open, self._open_id = None, None
            raise ChunkError(lost, "a chunk of another reply interleaved")
        if self._open is None:
            if seq != 0:
                raise ChunkError(reply_id, "chunk sequence does not start at 0")
            self._open, self._open_id = _Partial(total=total), reply_id
        partial = self._open
        if seq != len(partial.parts) or total != partial.total:
            self._drop(reply_id)
            raise ChunkError(reply_id, "chunk out of order or total changed")
        partial.size += len(data.encode("utf-8", "surrogatepass"))
        if partial.size > self._limit:
            self._drop(reply_id)
            raise ChunkError(reply_id, f"reassembled reply exceeds {self._limit} bytes")
        partial.parts.append(data)
        if len(partial.parts) < partial.total:
            return None
        self._open, self._open_id = None, None
        text = "".join(partial.parts)
        try:
            members = object_members(text)
        except FramingError as exc:
            raise ChunkError(reply_id, f"reassembled reply is not one JSON object: {exc}") from None
        reply = {key: value for key, (value, _, _) in members.items()}
        if reply.get("id") != reply_id:
            raise ChunkError(reply_id, "reassembled reply names another id")
        result_json = None
        if reply.get("ok") is True and isinstance(reply.get("result"), dict):
            _, start, end = members["result"]
            result_json = text[start:end].encode("utf-8")
        return Reassembled(reply=reply, result_json=result_json)

    def _drop(self, reply_id: str) -> None:
        if self._open_id == reply_id:
            self._open, self._open_id = None, None


_WHITESPACE = " \t\n\r"
#: The stdlib's own string scanner (C), as its decoder uses it: (text, index after the quote,
#: strict) -> (string, index after the closing quote).
_scanstring: Callable[[str, int, bool], tuple[str, int]] = json.decoder.scanstring  # type: ignore[attr-defined]


def object_members(text: str) -> dict[str, tuple[Any, int, int]]:
    """Parse ``text`` as exactly one JSON object, refusing what ``framing.loads_object`` refuses
    (``MalformedFrame``): each top-level member as ``key -> (value, start, end)``, ``text[start:
    end]`` being the value's own JSON. Values below the top level are parsed by the same strict
    decoder; only the top level's members are walked here, to learn where each one lies."""
    from tabwarden.protocol.framing import MalformedFrame

    try:
        text.encode("utf-8")  # a lone surrogate has no UTF-8 form: not a UTF-8 frame
    except UnicodeEncodeError:
        raise MalformedFrame("not UTF-8 JSON (UnicodeEncodeError)") from None
    scan: Callable[[str, int], tuple[Any, int]] = strict_decoder().scan_once  # type: ignore[attr-defined]
    members: dict[str, tuple[Any, int, int]] = {}
    end = len(text)

    def skip(i: int) -> int:
        while i < end and text[i] in _WHITESPACE:
            i += 1
        return i

    try:
        i = skip(0)
        if i >= end or text[i] != "{":
            raise MalformedFrame("expected a JSON object")
        i = skip(i + 1)
        if i < end and text[i] == "}":
            i += 1
        else:
            while True:
                if i >= end or text[i] != '"':
                    raise ValueError("expected a member name")
                key, i = _scanstring(text, i + 1, True)
                i = skip(i)
                if i >= end or text[i] != ":":
                    raise ValueError("expected ':'")
                start = skip(i + 1)
                value, i = scan(text, start)
                if key in members:
                    raise ValueError("duplicate key")
                members[key] = (value, start, i)
                i = skip(i)
                if i < end and text[i] == ",":
                    i = skip(i + 1)
                    continue
                if i < end and text[i] == "}":
                    i += 1
                    break
                raise ValueError("expected ',' or '}'")
        if skip(i) != end:
            raise ValueError("extra data")
    except MalformedFrame:
        raise
    except (StopIteration, ValueError, RecursionError) as exc:
        raise MalformedFrame(f"not UTF-8 JSON ({type(exc).__name__})") from None
    return members
