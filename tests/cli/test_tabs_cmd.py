"""``tabwarden tabs`` end to end over the real bridge: the real command (attested by the real
host as ``tabwarden tabs``), the real host, a fake extension on its stdio. The terminal's two
requests reach the extension under the reserved terminal session; the listing prints what the
extension sent; ``--close-orphans`` closes first, then lists."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tabwarden.host.sessions import TERMINAL_SESSION
from tests.fakes import FakeBrowser, host_env

ROWS = [
    {"id": 11, "session": "s-4242-0123456789abcdef0123", "origin": "https://a.test",
     "title": "Statement [card]", "orphaned": True, "orphanedAt": 5, "viewed": False},
    {"id": 12, "session": "s-77-fedcba98765432100123", "origin": "https://b.test",
     "title": "Inbox", "orphaned": False, "orphanedAt": None, "viewed": True},
]  # fmt: skip


@pytest.fixture
def attested_browser(runtime_dir: Path) -> Any:
    browser = FakeBrowser(runtime_dir, attested=True)
    try:
        browser.wait_socket()
        browser.hello()
        yield browser
    finally:
        browser.close()


def _tabs(runtime: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-I", "-m", "tabwarden", "tabs", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=host_env(runtime),
    )


def _answer(browser: FakeBrowser, action: str, result: dict[str, Any]) -> None:
    request = browser.receive()
    assert request["type"] == "request" and request["action"] == action, request
    assert request["session"] == TERMINAL_SESSION
    browser.send({"type": "reply", "id": request["id"], "ok": True, "result": result})


def test_tabs_lists_every_sessions_agent_tabs(attested_browser: FakeBrowser) -> None:
    child = _tabs(attested_browser.runtime)
    _answer(attested_browser, "agent_tabs", {"tabs": ROWS})
    out, err = child.communicate(timeout=60)
    assert child.returncode == 0, err
    assert "orphaned" in out and "in use (seen)" in out
    assert "s-4242-0123456789abcdef0123" in out and "https://a.test  Statement [card]" in out
    assert "1 orphaned" in out and "tabwarden tabs --close-orphans" in out


def test_tabs_close_orphans_then_json(attested_browser: FakeBrowser) -> None:
    child = _tabs(attested_browser.runtime, "--close-orphans", "--json")
    _answer(attested_browser, "agent_tabs_close", {"closed": 1})
    _answer(attested_browser, "agent_tabs", {"tabs": ROWS[1:]})
    out, err = child.communicate(timeout=60)
    assert child.returncode == 0, err
    assert json.loads(out) == {"tabs": ROWS[1:], "closed": 1}


def test_tabs_without_a_host_says_so(runtime_dir: Path) -> None:
    child = _tabs(runtime_dir)
    out, err = child.communicate(timeout=60)
    assert child.returncode != 0 and out == ""
    assert "error[extension_not_connected]" in err
