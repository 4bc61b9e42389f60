"""Reassembling chunked extension replies (hop 3), sans-IO.

The extension splits a reply whose JSON exceeds ``CHUNK_THRESHOLD`` bytes into consecutive
``{"type": "chunk", "id", "seq", "total", "data"}`` messages, ``data`` being slices of the reply's
JSON text (docs/protocol.md). ``Reassembler`` turns them back into the reply object. It must never
hold more than ``MAX_REASSEMBLED`` bytes, never accept a gap, a reorder or an interleaved id, and
report every such case as ``ChunkError`` (the caller answers ``internal_error``) without
affecting other replies.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

from tabwarden.protocol.framing import FramingError, loads_object

CHUNK_THRESHOLD: Final = 1_000_000
MAX_REASSEMBLED: Final = 64 * 1024 * 1024
MAX_CHUNKS: Final = MAX_REASSEMBLED // 1024


class ChunkError(Exception):
    """A chunk sequence is malformed; the reply it belonged to is lost."""

    def __init__(self, reply_id: str, reason: str) -> None:
        super().__init__(reason)
        self.reply_id = reply_id


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
            reply = loads_object(text.encode("utf-8", "surrogatepass"))
        except FramingError as exc:
            raise ChunkError(reply_id, f"reassembled reply is not one JSON object: {exc}") from None
        if reply.get("id") != reply_id:
            raise ChunkError(reply_id, "reassembled reply names another id")
        return reply

    def _drop(self, reply_id: str) -> None:
        if self._open_id == reply_id:
            self._open, self._open_id = None, None
