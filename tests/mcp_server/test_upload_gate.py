"""An unpaired or killed client learns nothing about the upload sandbox from ``page_upload``.

The attacker's probe: with the kill switch engaged, and separately as a spawner that is not a
paired client, ask to upload (a) a file the sandbox does not hold, (b) a file outside it and
(c) a file it does hold. A server that looked at the file before the hop-1 gate would answer
"no such file" for (a), "outside the upload sandbox" for (b) and only then the refusal for (c):
an existence oracle. Every probe must get the same refusal, and no file may be opened or even
resolved (a spy on the sandbox's opener, plus Python's ``open`` audit events under tmp_path).
"""

from __future__ import annotations

import asyncio
import os
import sys
import threading
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp_types import TextContent

from tabwarden.bridge.spawner import Spawner
from tabwarden.mcp_server import uploads
from tabwarden.mcp_server.bridge_client import BridgeClient
from tabwarden.mcp_server.server import ToolGuard, build_server
from tabwarden.trust.verify import ClientGrant, Effective
from tests.fakes import FakeBrowser, tool_error, wait_until_extension_connected
from tests.fixtures import config_of, pair_in_process_client, paired_guard

#: Paths under this prefix that Python opened while a probe ran (``None``: not watching).
_watch: dict[str, list[str]] = {}


def _audit(event: str, args: tuple[Any, ...]) -> None:
    # An audit hook that raises would break the open it observes: keep this trivially safe.
    if event != "open" or not _watch or not args:
        return
    target = args[0]
    if isinstance(target, (str, bytes, os.PathLike)):
        path = os.fsdecode(target)
        for prefix, seen in _watch.items():
            if path.startswith(prefix):
                seen.append(path)


sys.addaudithook(_audit)


@pytest.fixture
def opened(tmp_path: Path) -> Iterator[list[str]]:
    seen: list[str] = []
    _watch[str(tmp_path)] = seen
    try:
        yield seen
    finally:
        _watch.pop(str(tmp_path), None)


KILLED = replace(Effective.unpaired(), killed=True)
PAIRED_OTHER = replace(
    Effective.unpaired(),
    clients_pinned=True,
    paired_clients=(ClientGrant(label="theirs", exe="/usr/bin/x", sha256="a" * 64, paired_at=0),),
)
INTRUDER = Spawner(pid=1, exe="/home/mallory/agent", sha256="b" * 64, create_time=0.0)


@pytest.mark.parametrize(
    ("eff", "spawner", "code"),
    [
        (KILLED, None, "killed"),
        (KILLED, INTRUDER, "killed"),
        (PAIRED_OTHER, INTRUDER, "client_not_paired"),
        (PAIRED_OTHER, None, "client_not_paired"),
    ],
    ids=["killed", "killed-with-spawner", "unpaired-spawner", "unmeasured-spawner"],
)
@pytest.mark.promise("H4-17")
def test_refused_client_cannot_probe_the_sandbox(
    eff: Effective,
    spawner: Spawner | None,
    code: str,
    runtime_dir: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    opened: list[str],
) -> None:
    box = tmp_path / "box"
    box.mkdir()
    (box / "real.txt").write_text("inside the sandbox")
    (tmp_path / "secret.txt").write_text("outside the sandbox")
    monkeypatch.setenv("TABWARDEN_UPLOAD_DIR", str(box))
    resolved: list[str] = []
    real_open = uploads.open_upload

    def open_spy(sandbox: Path, requested: str) -> tuple[Path, int]:
        resolved.append(requested)
        return real_open(sandbox, requested)

    monkeypatch.setattr(uploads, "open_upload", open_spy)
    bridge = BridgeClient(label="test", env={"TABWARDEN_RUNTIME_DIR": str(runtime_dir)})
    server = build_server(bridge, ToolGuard(lambda: eff, spawner, "not measurable"))
    probes = {
        "missing": "missing.txt",
        "outside-relative": "../secret.txt",
        "outside-absolute": str(tmp_path / "secret.txt"),
        "real": "real.txt",
    }

    async def scenario() -> dict[str, tuple[Any, ...]]:
        answers: dict[str, tuple[Any, ...]] = {}
        async with Client(server, raise_exceptions=True) as client:
            for name, path in probes.items():
                result = await client.call_tool(
                    "page_upload", {"tabId": 1, "path": path, "selector": "input"}
                )
                error = tool_error(result)
                assert error is not None, f"{name}: not refused"
                first = result.content[0]
                assert isinstance(first, TextContent)
                answers[name] = (error["code"], error["message"], first.text)
        return answers

    opened.clear()  # the files this test wrote above
    answers = asyncio.run(scenario())
    assert {a[0] for a in answers.values()} == {code}, answers
    assert len(set(answers.values())) == 1, answers  # same code, message and text for every probe
    assert not any("sandbox" in a[1] or "inside" in a[2] for a in answers.values())
    assert resolved == [], "the sandbox was consulted before the gate refused"
    assert opened == [], f"files were opened for a refused client: {opened}"


UPLOADED = {"uploaded": True, "files": [{"name": "real.txt", "size": 18}]}


def test_allowed_upload_checks_the_sandbox_file_after_the_gate_and_relays_its_path(
    fake_browser: FakeBrowser,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    opened: list[str],
) -> None:
    """The control for the test above: the same detectors see the check when the gate allows it,
    and the browser receives the file's real path, name and size (never the agent's path, never
    a byte of the file: Chrome reads it)."""
    pair_in_process_client(config_of(fake_browser))
    box = tmp_path / "box"
    box.mkdir()
    (box / "real.txt").write_bytes(b"inside the sandbox")
    monkeypatch.setenv("TABWARDEN_UPLOAD_DIR", str(box))
    resolved: list[str] = []
    real_open = uploads.open_upload

    def open_spy(sandbox: Path, requested: str) -> tuple[Path, int]:
        resolved.append(requested)
        return real_open(sandbox, requested)

    monkeypatch.setattr(uploads, "open_upload", open_spy)
    fake_browser.wait_socket()
    fake_browser.hello()
    bridge = BridgeClient(label="test", env={"TABWARDEN_RUNTIME_DIR": str(fake_browser.runtime)})
    server = build_server(bridge, paired_guard())
    received: list[dict[str, Any]] = []

    def answer() -> None:
        request = fake_browser.receive()
        received.append(request)
        fake_browser.send({"type": "reply", "id": request["id"], "ok": True, "result": UPLOADED})

    async def scenario() -> Any:
        async with Client(server, raise_exceptions=True) as client:
            await wait_until_extension_connected(bridge.status)
            thread = threading.Thread(target=answer, daemon=True)
            thread.start()
            opened.clear()
            result = await client.call_tool(
                "page_upload", {"tabId": 4, "path": "./real.txt", "selector": "input"}
            )
            thread.join(10)
            return result

    result = asyncio.run(scenario())
    assert tool_error(result) is None and result.structured_content == UPLOADED
    assert resolved == ["./real.txt"]
    # The walk opens the sandbox by its path, then each component relative to its parent's
    # descriptor (never a path that could be swapped): the detector sees the sandbox opened.
    assert opened == [str(box)]
    [request] = received
    assert request["action"] == "page_upload"
    assert request["args"] == {
        "tabId": 4,
        "selector": "input",
        "paths": [str((box / "real.txt").resolve())],
        "files": [{"name": "real.txt", "size": len(b"inside the sandbox")}],
    }
