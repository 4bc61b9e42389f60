"""``tabwarden tabs`` end to end over the real bridge: the real command (attested by the real
host as ``tabwarden tabs``) on a pty that is its controlling terminal, the real host, a fake
extension on its stdio. The terminal's two requests reach the extension under the reserved
terminal session; the listing prints what the extension sent; ``--close-orphans`` closes first,
then lists. Without a real terminal, or while killed, nothing is listed or closed."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tabwarden.host.sessions import TERMINAL_SESSION
from tests.fakes import FakeBrowser, host_env
from tests.fixtures import config_of, nothing_relayed, pair_record
from tests.pty_cli import Pty, spawn_cli

ROWS = [
    {"id": 11, "session": "s-4242-0123456789abcdef0123", "origin": "https://a.test",
     "title": "Statement [card]", "orphaned": True, "orphanedAt": 5, "viewed": False},
    {"id": 12, "session": "s-77-fedcba98765432100123", "origin": "https://b.test",
     "title": "Inbox", "orphaned": False, "orphanedAt": None, "viewed": True},
]  # fmt: skip


def _tabs(runtime: Path, *args: str) -> Pty:
    """``tabwarden tabs ARGS`` as a person runs it: on a pty that is its controlling terminal."""
    return spawn_cli(host_env(runtime), "tabs", *args)


def _piped_tabs(runtime: Path, *args: str) -> subprocess.Popen[str]:
    """``tabwarden tabs ARGS`` as a program runs it: pipes, no terminal."""
    return subprocess.Popen(
        [sys.executable, "-I", "-m", "tabwarden", "tabs", *args],
        stdin=subprocess.PIPE,
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
    status, raw = child.finish()
    out = raw.decode()
    assert status == 0, out
    assert "orphaned" in out and "in use (seen)" in out
    assert "s-4242-0123456789abcdef0123" in out and "https://a.test  Statement [card]" in out
    assert "1 orphaned" in out and "tabwarden tabs --close-orphans" in out


def test_tabs_close_orphans_then_json(attested_browser: FakeBrowser) -> None:
    child = _tabs(attested_browser.runtime, "--close-orphans", "--json")
    _answer(attested_browser, "agent_tabs_close", {"closed": 1})
    _answer(attested_browser, "agent_tabs", {"tabs": ROWS[1:]})
    status, raw = child.finish()
    assert status == 0, raw
    assert json.loads(raw.decode()) == {"tabs": ROWS[1:], "closed": 1, "terminalSessions": []}


def test_tabs_without_a_host_says_so(runtime_dir: Path) -> None:
    status, raw = _tabs(runtime_dir).finish()
    assert status != 0 and b"error[extension_not_connected]" in raw


@pytest.mark.parametrize("args", [(), ("--close-orphans",), ("--json",)])
@pytest.mark.promise("H4-25")
def test_tabs_without_a_terminal_lists_and_closes_nothing(
    attested_browser: FakeBrowser, args: tuple[str, ...]
) -> None:
    """A program with pipes for stdin and stdout (an agent's shell tool) is refused before the
    bridge is reached: the extension is asked for nothing, and nothing is printed but the
    refusal."""
    child = _piped_tabs(attested_browser.runtime, *args)
    out, err = child.communicate("", timeout=60)
    assert child.returncode == 2 and out == ""
    assert "error[not_a_terminal]" in err and "s-4242" not in err
    nothing_relayed(attested_browser)


@pytest.mark.promise("H4-25")
def test_tabs_on_a_pty_that_is_not_its_controlling_terminal_is_refused(
    attested_browser: FakeBrowser,
) -> None:
    """A program that holds a pty's master but did not make it the command's controlling
    terminal is not a person at a terminal either."""
    child = spawn_cli(host_env(attested_browser.runtime), "tabs", ctty=False)
    status, raw = child.finish()
    assert status == 2 and b"error[not_a_terminal]" in raw and b"TAB" not in raw, raw
    nothing_relayed(attested_browser)


@pytest.fixture
def killed_browser(runtime_dir: Path) -> Any:
    """A paired record with the kill switch engaged (the free `tabwarden kill`), then the host."""
    env = host_env(runtime_dir)
    pair_record(Path(env["TABWARDEN_CONFIG_DIR"]))
    killed = subprocess.run(  # noqa: S603 (our interpreter and our CLI)
        [sys.executable, "-m", "tabwarden", "kill", "--reason", "test"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert killed.returncode == 0, killed.stderr
    browser = FakeBrowser(runtime_dir, attested=True)
    try:
        assert config_of(browser) == Path(env["TABWARDEN_CONFIG_DIR"])
        browser.wait_socket()
        browser.hello()
        yield browser
    finally:
        browser.close()


@pytest.mark.parametrize("args", [(), ("--close-orphans",)])
@pytest.mark.promise("H4-25")
def test_tabs_while_killed_lists_and_closes_nothing(
    killed_browser: FakeBrowser, args: tuple[str, ...]
) -> None:
    """At a real terminal, while the kill switch is engaged: the host refuses the terminal's
    request (`killed`, with its hint) and relays nothing to the extension."""
    status, raw = _tabs(killed_browser.runtime, *args).finish()
    assert status != 0 and b"error[killed]" in raw and b"tabwarden unkill" in raw, raw
    assert b"TAB" not in raw and b"closed" not in raw
    nothing_relayed(killed_browser)
