"""The bridge socket's framing (hop 2): 4-byte big-endian length + UTF-8 JSON object.

Both the host and the MCP server use exactly this; neither writes its own framing.
"""

from __future__ import annotations

import struct
from typing import Any, Final

from tabwarden.protocol.framing import FrameDecoder, dumps_object, encode_body

#: Largest frame either end of the bridge accepts or sends.
MAX_BRIDGE_FRAME: Final = 32 * 1024 * 1024

HEADER: Final = struct.Struct(">I")


def encode_frame(message: dict[str, Any], *, limit: int = MAX_BRIDGE_FRAME) -> bytes:
    return encode_body(dumps_object(message), HEADER, limit)


def encode_body_frame(body: bytes, *, limit: int = MAX_BRIDGE_FRAME) -> bytes:
    """Frame a body that is already one serialised JSON object."""
    return encode_body(body, HEADER, limit)


def decoder(*, limit: int = MAX_BRIDGE_FRAME) -> FrameDecoder:
    return FrameDecoder(HEADER, limit)
