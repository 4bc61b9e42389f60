"""The host's side of the page tools: every request names its session and carries the verified
policy; origin grants from the confirm window become signed baselines (or are refused when
nothing is paired); chunked replies are reassembled."""

from __future__ import annotations

import asyncio
import json
import os
import threading
from typing import Any

import pytest

from tabwarden.host.sessions import measure_session
from tabwarden.mcp_server.bridge_client import BridgeError
from tabwarden.trust.gate import TrustGate
from tests.fakes import FakeBrowser, connected_client
from tests.fixtures import config_of, pair_in_process_client, pair_record


def _serve_once(
    browser: FakeBrowser, respond: Any
) -> tuple[threading.Thread, list[dict[str, Any]]]:
    seen: list[dict[str, Any]] = []

    def run() -> None:
        request = browser.receive()
        seen.append(request)
        respond(request)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, seen


@pytest.mark.promise("H4-10")
def test_requests_carry_session_and_verified_policy(fake_browser: FakeBrowser) -> None:
    pair_in_process_client(config_of(fake_browser))
    fake_browser.wait_socket()
    fake_browser.hello()

    def respond(request: dict[str, Any]) -> None:
        fake_browser.send(
            {"type": "reply", "id": request["id"], "ok": True, "result": {"tabs": []}}
        )

    async def scenario() -> None:
        client = await connected_client(fake_browser.runtime)
        thread, seen = _serve_once(fake_browser, respond)
        await client.call("tab_list")
        thread.join(5)
        [request] = seen
        # The session is this process, as the host measured it (tests/host/test_sessions.py).
        assert request["session"] == measure_session(os.getpid())
        assert request["policy"]["origins"] == [] and request["policy"]["eval"] is False
        await client.close()

    asyncio.run(asyncio.wait_for(scenario(), 60))


@pytest.mark.promise("H4-02")
def test_origin_grant_without_pairing_is_refused_and_writes_nothing(
    fake_browser: FakeBrowser,
) -> None:
    fake_browser.wait_socket()
    fake_browser.hello()
    fake_browser.send(
        {"type": "grant", "id": "g1", "kind": "origin", "origin": "http://127.0.0.1:8000"}
    )
    result = fake_browser.receive()
    assert result["type"] == "grant_result" and result["id"] == "g1" and result["ok"] is False
    assert result["error"]["code"] == "not_paired"
    assert not (fake_browser.runtime.parent / "config" / "trust.json").exists()


@pytest.mark.promise("H4-02")
def test_origin_grant_is_signed_into_the_policy_and_audited(fake_browser: FakeBrowser) -> None:
    config = fake_browser.runtime.parent / "config"
    pair_record(config)
    fake_browser.wait_socket()
    fake_browser.hello()
    fake_browser.send(
        {"type": "grant", "id": "g2", "kind": "origin", "origin": "http://127.0.0.1:8000"}
    )
    assert fake_browser.receive() == {"type": "grant_result", "id": "g2", "ok": True}
    gate = TrustGate({"TABWARDEN_CONFIG_DIR": str(config)})
    assert gate.current().policy.origins == ("http://127.0.0.1:8000",)
    audit = [json.loads(line) for line in (config / "audit.jsonl").read_text().splitlines()]
    assert audit[-1]["event"] == "origin_grant" and audit[-1]["path"] == "window"
    # A non-origin ("a page asking for a path or a wildcard") is refused, nothing widened.
    for bogus in ("http://127.0.0.1:8000/admin", "*://*/*", "javascript:alert(1)"):
        fake_browser.send({"type": "grant", "id": "g3", "kind": "origin", "origin": bogus})
        answer = fake_browser.receive()
        assert answer["ok"] is False and answer["error"]["code"] == "policy_invalid"
    assert gate.current().policy.origins == ("http://127.0.0.1:8000",)


@pytest.mark.promise("H4-02")
def test_killed_record_refuses_grants(fake_browser: FakeBrowser) -> None:
    config = fake_browser.runtime.parent / "config"
    pair_record(config)
    from tabwarden.trust import store

    store.engage_kill(config / "trust.json", "test", 1_700_000_000)
    fake_browser.wait_socket()
    fake_browser.hello()
    fake_browser.send(
        {"type": "grant", "id": "g4", "kind": "origin", "origin": "http://127.0.0.1:8000"}
    )
    answer = fake_browser.receive()
    assert answer["ok"] is False and answer["error"]["code"] == "killed"
    assert TrustGate({"TABWARDEN_CONFIG_DIR": str(config)}).current().policy.origins == ()


def _chunked(reply: dict[str, Any], size: int) -> list[dict[str, Any]]:
    text = json.dumps(reply, ensure_ascii=False)
    parts = [text[i : i + size] for i in range(0, len(text), size)]
    return [
        {"type": "chunk", "id": reply["id"], "seq": i, "total": len(parts), "data": p}
        for i, p in enumerate(parts)
    ]


@pytest.mark.promise("H4-29")
def test_ten_megabyte_chunked_reply_arrives_intact(fake_browser: FakeBrowser) -> None:
    pair_in_process_client(config_of(fake_browser))
    fake_browser.wait_socket()
    fake_browser.hello()
    big = "".join(chr(0x61 + (i % 26)) for i in range(10 * 1024 * 1024 - 7)) + "ünïcødé"

    def respond(request: dict[str, Any]) -> None:
        reply = {"type": "reply", "id": request["id"], "ok": True, "result": {"text": big}}
        for message in _chunked(reply, 900_000):
            fake_browser.send(message)

    async def scenario() -> None:
        client = await connected_client(fake_browser.runtime)
        thread, _ = _serve_once(fake_browser, respond)
        result = await client.call("page_text", {"tabId": 1})
        thread.join(10)
        assert result["text"] == big
        await client.close()

    asyncio.run(asyncio.wait_for(scenario(), 120))


@pytest.mark.promise("H4-29")
def test_malformed_chunks_fail_that_call_only(fake_browser: FakeBrowser) -> None:
    pair_in_process_client(config_of(fake_browser))
    fake_browser.wait_socket()
    fake_browser.hello()

    def respond(request: dict[str, Any]) -> None:
        messages = _chunked(
            {"type": "reply", "id": request["id"], "ok": True, "result": {"t": "x" * 5000}}, 1000
        )
        del messages[2]  # a gap
        for message in messages:
            fake_browser.send(message)

    async def scenario() -> None:
        client = await connected_client(fake_browser.runtime)
        thread, _ = _serve_once(fake_browser, respond)
        with pytest.raises(BridgeError) as failed:
            await client.call("page_text", {"tabId": 1})
        thread.join(5)
        assert failed.value.code == "internal_error"
        ok_thread, _ = _serve_once(
            fake_browser,
            lambda r: fake_browser.send(
                {"type": "reply", "id": r["id"], "ok": True, "result": {"tabs": []}}
            ),
        )
        assert await client.call("tab_list") == {"tabs": []}
        ok_thread.join(5)
        await client.close()

    asyncio.run(asyncio.wait_for(scenario(), 60))
    assert fake_browser.proc.poll() is None
