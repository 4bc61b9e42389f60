"""The relay's in-flight limit, in process: at most N browser calls pending across all sessions,
the rest queue and answer ``busy`` past the deadline; replies are never misrouted."""

from __future__ import annotations

import asyncio
from typing import Any

from tabwarden.host.bridge import Relay, _Client
from tests.fixtures import AGENT_MEASURED, PAIRED


class RecordingStream:
    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []

    async def send(self, message: dict[str, Any]) -> None:
        self.sent.append(message)

    def close(self) -> None:
        pass


def test_ninth_call_queues_then_is_busy_and_replies_are_never_misrouted() -> None:
    async def scenario() -> None:
        to_browser: list[dict[str, Any]] = []

        async def send_native(message: dict[str, Any]) -> None:
            to_browser.append(message)

        relay = Relay(send_native, lambda: PAIRED, max_in_flight=8, queue_deadline=0.3)
        relay.extension_connected = True
        clients = [
            _Client(number=i, role="mcp", stream=RecordingStream(), measured=AGENT_MEASURED)  # type: ignore[arg-type]
            for i in range(9)
        ]
        for c in clients:
            relay.add(c)
        for i, c in enumerate(clients[:8]):
            assert await relay.on_client_request(
                c, {"type": "request", "id": 100 + i, "action": "tab_list", "args": {}}
            )
        assert len(to_browser) == 8
        # The ninth waits for a slot, then gives up with busy: nothing reached the browser.
        assert await relay.on_client_request(
            clients[8], {"type": "request", "id": 999, "action": "tab_list", "args": {}}
        )
        assert clients[8].stream.sent[-1]["error"]["code"] == "busy"  # type: ignore[attr-defined]
        assert len(to_browser) == 8
        # Answer in reverse order: each reply reaches exactly the client that asked, with its id.
        for message in reversed(to_browser):
            await relay.on_native_message(
                {
                    "type": "reply",
                    "id": message["id"],
                    "ok": True,
                    "result": {"echo": message["session"]},
                },
                browser="t",
            )
        for i, c in enumerate(clients[:8]):
            [reply] = c.stream.sent  # type: ignore[attr-defined]
            assert reply["id"] == 100 + i and reply["result"] == {"echo": c.session}
        # A freed slot lets a queued call through before its deadline.
        waiting = asyncio.create_task(
            relay.on_client_request(
                clients[8], {"type": "request", "id": 1000, "action": "tab_list", "args": {}}
            )
        )
        await asyncio.sleep(0)
        assert len(to_browser) == 9 and waiting.done()

    asyncio.run(scenario())


def test_a_slot_freed_while_queued_admits_the_waiter() -> None:
    async def scenario() -> None:
        sent: list[dict[str, Any]] = []

        async def send_native(message: dict[str, Any]) -> None:
            sent.append(message)

        relay = Relay(send_native, lambda: PAIRED, max_in_flight=1, queue_deadline=5)
        relay.extension_connected = True
        a, b = (
            _Client(number=n, role="mcp", stream=RecordingStream(), measured=AGENT_MEASURED)  # type: ignore[arg-type]
            for n in (1, 2)
        )
        await relay.on_client_request(
            a, {"type": "request", "id": 1, "action": "tab_list", "args": {}}
        )
        queued = asyncio.create_task(
            relay.on_client_request(
                b, {"type": "request", "id": 2, "action": "tab_list", "args": {}}
            )
        )
        for _ in range(50):  # let it run to where it waits for a slot: no clock involved
            await asyncio.sleep(0)
        assert not queued.done() and len(sent) == 1
        await relay.on_native_message(
            {"type": "reply", "id": sent[0]["id"], "ok": True, "result": {}}, browser="t"
        )
        await asyncio.wait_for(queued, 2)
        assert len(sent) == 2 and sent[1]["session"] == b.session

    asyncio.run(scenario())
