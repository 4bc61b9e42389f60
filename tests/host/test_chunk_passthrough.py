"""A chunked reply passes through the real host to its client byte for byte: the result's JSON as
the extension wrote it, framed for the bridge without a second encode (protocol/chunking.py,
pass-through). A malformed or oversize one is still refused with its error, nothing of it
relayed, and the next call is served. The client here is a raw bridge connection of the test's
own (the real socket, peer check and handshake), reading the frames' bytes as they arrive."""

from __future__ import annotations

import asyncio
import json
import socket
import struct
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from tabwarden.bridge.admission import check_peer, handshake
from tabwarden.bridge.framestream import FrameStream
from tabwarden.paths import endpoint
from tabwarden.protocol.frames import MAX_BRIDGE_FRAME
from tabwarden.protocol.handshake import NONCE_SIZE, ClientHandshake
from tests.fakes import FakeBrowser
from tests.fixtures import config_of, pair_in_process_client

#: A result as JSON.stringify would not write it and Python's encoder would not either: escapes,
#: spacing, a trailing zero. A decode and re-encode anywhere on the way would change these bytes.
RESULT = '{"t":"caf\\u00e9 \\/ \\"x\\"","n":1.50,"k":[ ],"pad":"%s"}'


def _chunks(request_id: str, text: str, size: int) -> list[dict[str, Any]]:
    parts = [text[i : i + size] for i in range(0, len(text), size)]
    return [
        {"type": "chunk", "id": request_id, "seq": seq, "total": len(parts), "data": part}
        for seq, part in enumerate(parts)
    ]


class RawBridge:
    """One admitted bridge connection whose replies are read as raw frame bytes."""

    def __init__(self, stream: FrameStream, sock: socket.socket) -> None:
        self._stream = stream
        self._sock = sock
        self._buffer = b""
        self._ids = 0

    async def request(self, action: str) -> None:
        self._ids += 1
        await self._stream.send({"type": "request", "id": self._ids, "action": action, "args": {}})

    async def frame_body(self) -> bytes:
        """The next frame's bytes as sent, past the host's extension-state events (one follows
        every admission while the extension is connected, carrying its version)."""
        loop = asyncio.get_running_loop()
        while True:
            if len(self._buffer) >= 4:
                (size,) = struct.unpack(">I", self._buffer[:4])
                if len(self._buffer) >= 4 + size:
                    body, self._buffer = self._buffer[4 : 4 + size], self._buffer[4 + size :]
                    if body.startswith(b'{"type":"event"'):
                        continue
                    return body
            data = await loop.sock_recv(self._sock, 1 << 20)
            assert data, "the host closed the bridge connection"
            self._buffer += data


@asynccontextmanager
async def _raw_bridge(browser: FakeBrowser) -> AsyncIterator[RawBridge]:
    ep = endpoint(browser.label, browser.runtime)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.setblocking(False)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
    await asyncio.get_running_loop().sock_connect(sock, str(ep.socket))
    stream = FrameStream(sock, check_peer(sock, None))
    try:
        secret = ep.secret.read_bytes()
        machine = ClientHandshake(secret, b"\x01" * NONCE_SIZE, role="mcp", client_sha256="")
        admitted = await handshake(stream, machine)
        assert admitted.extension_connected  # so no state event comes between the frames
        yield RawBridge(stream, sock)
    finally:
        stream.close()


def _answer(browser: FakeBrowser, make: Any) -> None:
    """Answer the next request the host relays with the messages ``make(request)`` gives."""
    request = browser.receive()
    for message in make(request):
        browser.send(message)


async def _in_thread(browser: FakeBrowser, make: Any) -> asyncio.Future[None]:
    return asyncio.get_running_loop().run_in_executor(None, _answer, browser, make)


def test_a_chunked_reply_reaches_the_client_byte_identical(fake_browser: FakeBrowser) -> None:
    pair_in_process_client(config_of(fake_browser))
    fake_browser.wait_socket()
    fake_browser.hello()
    result = RESULT % ("é" * 1_500_000)  # two chunks of 1,000,000 characters, as the extension

    def reply(request: dict[str, Any]) -> list[dict[str, Any]]:
        written = f'{{"type":"reply","id":"{request["id"]}","ok":true,"result":{result}}}'
        return _chunks(request["id"], written, 1_000_000)

    async def scenario() -> bytes:
        async with _raw_bridge(fake_browser) as bridge:
            answered = await _in_thread(fake_browser, reply)
            await bridge.request("page_text")
            body = await bridge.frame_body()
            await answered
            return body

    body = asyncio.run(asyncio.wait_for(scenario(), 120))
    assert body == b'{"type":"reply","id":1,"ok":true,"result":' + result.encode() + b"}"


def test_malformed_and_oversize_chunked_replies_answer_their_error_and_relay_nothing(
    fake_browser: FakeBrowser,
) -> None:
    pair_in_process_client(config_of(fake_browser))
    fake_browser.wait_socket()
    fake_browser.hello()
    duplicate = '{"type":"reply","id":"%s","ok":true,"result":{"a":1,"a":"SECRET-ish"}}'
    broken = '{"type":"reply","id":"%s","ok":true,"result":{"a":"unterminated SECRET-ish}}'
    oversize = '{"type":"reply","id":"%%s","ok":true,"result":{"t":"%s"}}' % (
        "x" * (MAX_BRIDGE_FRAME + 10)
    )

    def chunked(written: str) -> Any:
        return lambda request: _chunks(request["id"], written % request["id"], 1_000_000)

    def tabs(request: dict[str, Any]) -> list[dict[str, Any]]:
        return [{"type": "reply", "id": request["id"], "ok": True, "result": {"tabs": []}}]

    async def scenario() -> list[dict[str, Any]]:
        frames = []
        async with _raw_bridge(fake_browser) as bridge:
            for make in (chunked(duplicate), chunked(broken), chunked(oversize), tabs):
                answered = await _in_thread(fake_browser, make)
                await bridge.request("page_text")
                frames.append(await bridge.frame_body())
                await answered
        return [json.loads(body) for body in frames]

    dup, bad, big, served = asyncio.run(asyncio.wait_for(scenario(), 180))
    for refused in (dup, bad):
        assert refused["ok"] is False and refused["error"]["code"] == "internal_error"
        assert "SECRET-ish" not in json.dumps(refused)  # nothing of the malformed reply leaked
    assert big["ok"] is False and big["error"]["code"] == "message_too_large"
    assert "result" not in big
    assert served == {"type": "reply", "id": 4, "ok": True, "result": {"tabs": []}}
    assert fake_browser.proc.poll() is None
