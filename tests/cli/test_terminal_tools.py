"""``tabwarden tools`` (the catalogue, offline) and ``tabwarden call`` (one call through the whole
chain) at a real terminal: the real command on a pty we hold the master of, spawning the real
``tabwarden mcp``, the real attested host, a fake extension on its stdio. ``call`` is an MCP
client like any other: refused unpaired once a client is paired, served once the person pairs
the spawner it was remembered as, and it needs a terminal."""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tabwarden.bridge.spawner import recent_spawners
from tabwarden.cli.terminal_tools import parse_arguments
from tabwarden.errors import UsageError
from tabwarden.mcp_server.catalogue import BY_NAME, CATALOGUE
from tabwarden.trust import store
from tests.fakes import FakeBrowser, host_env
from tests.fixtures import nothing_relayed, pair_record, pair_terminal_call
from tests.pty_cli import spawn_cli

#: A 1x1 PNG.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


@pytest.fixture
def browser(runtime_dir: Path) -> Iterator[FakeBrowser]:
    fake = FakeBrowser(runtime_dir, attested=True)
    try:
        fake.wait_socket()
        fake.hello()
        yield fake
    finally:
        fake.close()


def _play(browser: FakeBrowser, action: str, result: dict[str, Any]) -> threading.Thread:
    """Answer the next relayed ``action`` as the extension would, in the background."""
    seen: list[dict[str, Any]] = []

    def run() -> None:
        while (request := browser.receive())["type"] != "request":
            pass
        seen.append(request)
        assert request["action"] == action, request
        browser.send({"type": "reply", "id": request["id"], "ok": True, "result": result})

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


@pytest.mark.promise("H1-10")
def test_parse_arguments_reads_json_values_else_text() -> None:
    assert parse_arguments(["tabId=3", "fullPage=true", "url=https://a.test/?q=1", "x="], None) == {
        "tabId": 3,
        "fullPage": True,
        "url": "https://a.test/?q=1",
        "x": "",
    }
    assert parse_arguments(["tabId=4"], '{"tabId": 1, "text": "Sign in"}') == {
        "tabId": 4,
        "text": "Sign in",
    }
    for bad in (["novalue"], ["=1"]):
        with pytest.raises(UsageError):
            parse_arguments(bad, None)
    with pytest.raises(UsageError):
        parse_arguments([], "[1]")


@pytest.mark.promise("H1-10")
def test_tools_prints_the_catalogue_offline(tmp_path: Path) -> None:
    env = host_env(tmp_path / "run")  # neither directory exists: nothing may be created
    table = subprocess.run(
        [sys.executable, "-m", "tabwarden", "tools"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert table.returncode == 0, table.stderr
    for spec in CATALOGUE:
        row = next(line for line in table.stdout.splitlines() if line.startswith(spec.name + " "))
        assert re.search(rf"\s{re.escape(spec.gate.value)}\s+{spec.risk.value}\s", row), row
        assert row.endswith(spec.title)
    listed = subprocess.run(
        [sys.executable, "-m", "tabwarden", "tools", "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    tools = json.loads(listed.stdout)["tools"]
    assert [t["name"] for t in tools] == [s.name for s in CATALOGUE]
    fetch = next(t for t in tools if t["name"] == "page_fetch")
    assert fetch["gate"] == "off-by-default" and "url" in fetch["inputSchema"]["properties"]
    assert list(tmp_path.iterdir()) == []


@pytest.mark.promise("H1-10")
def test_call_round_trip_from_a_real_terminal_as_a_paired_client(
    browser: FakeBrowser, tmp_path: Path
) -> None:
    config = browser.runtime.parent / "config"
    key = pair_record(config, client_exe="/bin/sh", label="someone-else")
    env = host_env(browser.runtime)

    # Another client is paired: the call is refused like any unpaired client, nothing relayed.
    refused = spawn_cli(env, "call", "tab_list")
    status, output = refused.finish()
    assert status == 1, output
    assert b"error[client_not_paired]" in output
    nothing_relayed(browser)

    # The person pairs the spawner the refused call was remembered as (what pair-client offers).
    seen = next(s for s in recent_spawners(config) if "-m tabwarden" in s.path)
    store.add_client(config / "trust.json", key, "terminal", seen.path, seen.sha256, 1)

    tabs = [{"id": 7, "url": "https://a.test/", "title": "A", "active": True, "windowId": 1}]
    answering = _play(browser, "tab_list", {"tabs": tabs})
    served = spawn_cli(env, "call", "tab_list")
    status, output = served.finish()
    answering.join(30)
    assert status == 0, output
    text = output.decode().replace("\r\n", "\n")
    assert json.loads(text[text.index("{") : text.rindex("}") + 1]) == {"tabs": tabs}


@pytest.mark.promise("H1-10")
def test_call_saves_image_content_to_the_file_it_names(
    browser: FakeBrowser, tmp_path: Path
) -> None:
    env = host_env(browser.runtime)
    pair_terminal_call(browser.runtime.parent / "config", env)
    shots = tmp_path / "shots"
    shots.mkdir()
    data = base64.b64encode(PNG).decode()
    answering = _play(
        browser, "page_screenshot", {"mimeType": "image/png", "data": data, "width": 1, "height": 1}
    )
    call = spawn_cli(env, "call", "page_screenshot", "tabId=7", "--image-dir", str(shots))
    status, output = call.finish()
    answering.join(30)
    assert status == 0, output
    named = re.search(rb"image/png saved to (\S+\.png)", output)
    assert named is not None, output
    saved = Path(named.group(1).decode())
    assert saved.parent == shots and saved.read_bytes() == PNG
    assert os.stat(saved).st_mode & 0o777 == 0o600
    text = output.decode().replace("\r\n", "\n")
    meta = json.loads(text[text.index("{") : text.rindex("}") + 1])
    assert meta == {"mimeType": "image/png", "width": 1, "height": 1, "bytes": len(PNG)}
    assert data not in text  # the image went to the file, not the terminal


@pytest.mark.promise("H1-10")
def test_call_needs_a_terminal_and_reaches_nothing_without_one(browser: FakeBrowser) -> None:
    piped = subprocess.run(
        [sys.executable, "-m", "tabwarden", "call", "tab_list"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=host_env(browser.runtime),
        timeout=60,
        check=False,
    )
    assert piped.returncode == 2 and "error[not_a_terminal]" in piped.stderr
    assert piped.stdout == ""
    nothing_relayed(browser)
    assert "tab_list" in BY_NAME  # the refusal is the terminal's, not an unknown tool's
