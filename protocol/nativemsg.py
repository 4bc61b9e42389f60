"""Chrome's native-messaging framing (hop 3): 32-bit native-endian length + UTF-8 JSON.

Named limits live here. The host must never write a message above ``MAX_HOST_TO_BROWSER`` —
Chrome drops the port on 1,048,577 bytes (measured) — so ``encode`` refuses locally instead.
Browser->host frames above ``MAX_BROWSER_TO_HOST`` are rejected from the header, unread.
"""

from __future__ import annotations

import struct
from typing import Any, Final

from tabwarden.protocol.framing import FrameDecoder, dumps_object, encode_body

#: Chrome disconnects the port when the host sends more than this.
MAX_HOST_TO_BROWSER: Final = 1_048_576
#: Largest browser->host message the host accepts.
MAX_BROWSER_TO_HOST: Final = 16 * 1024 * 1024

HEADER: Final = struct.Struct("=I")  # native byte order, standard 4-byte size


def encode(message: dict[str, Any], *, limit: int = MAX_HOST_TO_BROWSER) -> bytes:
    """Frame one host->browser message, or raise ``FrameTooLarge`` without emitting anything."""
    return encode_body(dumps_object(message), HEADER, limit)


def decoder(*, limit: int = MAX_BROWSER_TO_HOST) -> FrameDecoder:
    """A decoder for the browser->host direction."""
    return FrameDecoder(HEADER, limit)
