"""Hints that name the real next step, and a ``status`` that says what is missing.

A person who runs a command too early is told what comes first — before `tabwarden pair`, that
is `tabwarden pair`, never `--file-store` (which only `pair` takes) — with nothing prompted and
nothing written. `pair` points at the one-time code first, since it expires. `status` names
each missing piece (no browser paired or enrolled, no client paired, no extension connected)
and says "Ready" only when nothing is, all seen through the real CLI and a real host.
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

import pytest

from tests.cli.world import (
    CODE_RE,
    World,
    enrol,
    no_prompt,
    pair_client,
    plain_binary,
    reissue,
    self_exe,
)
from tests.fakes import FakeBrowser
from tests.trust.softauthn import SoftAuthenticator

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="pty/session semantics: Linux")

PAIR_FIRST = "run `tabwarden pair` in a terminal first"


def _says_pair_first(status: int, output: bytes) -> None:
    text = output.decode()
    assert status == 1, text
    assert "error[not_paired]" in text, text
    assert PAIR_FIRST in text, text
    assert "--file-store" not in text and "keystore_unavailable" not in text, text


@pytest.mark.parametrize(
    "argv",
    [
        ["pair-client"],
        ["pair-client", "--exe", plain_binary()],
        ["unkill"],
        ["policy", "set", "eval=true"],
    ],
    ids=lambda argv: " ".join(argv[:2]),
)
@pytest.mark.promise("PR-03")
def test_granting_before_pair_says_pair_first_at_a_real_terminal(
    world: World, argv: list[str]
) -> None:
    """At a real terminal, where a keyring is not usable (as on a headless machine): the answer
    is "pair first", before any phrase is asked, and nothing is written."""
    child = world.spawn(*argv)
    status, output = child.finish()
    _says_pair_first(status, output)
    no_prompt(output)
    assert world.snapshot() == {}


@pytest.mark.parametrize(
    "argv",
    [
        ["revoke", "client", "claude-code"],
        ["policy", "restrict", "eval=false"],
        ["policy", "rollback", "1"],
    ],
    ids=lambda argv: " ".join(argv[:2]),
)
def test_removing_power_before_pair_says_pair_first(world: World, argv: list[str]) -> None:
    proc = world.run(*argv)
    _says_pair_first(proc.returncode, proc.stderr)
    assert world.snapshot() == {}


def test_pair_points_at_the_expiring_code_first_then_pair_client(world: World) -> None:
    output = world.pair().decode()
    code = CODE_RE.search(output.split("one-time pairing code", 1)[1].encode())
    assert code is not None, output
    after = output.split("next:", 1)[1]
    options_page = after.index("options page")
    assert "10 minutes" in after[: after.index("\n", options_page)]
    assert options_page < after.index("tabwarden pair-client"), after
    assert "pair --browser LABEL" in after  # what to do when the 10 minutes have passed


def _report(world: World) -> dict[str, Any]:
    proc = world.run("status", "--json")
    assert proc.returncode == 0, proc.stderr.decode()
    report: dict[str, Any] = json.loads(proc.stdout)
    return report


def _next(world: World) -> list[str]:
    steps: list[str] = _report(world)["next"]
    return steps


def _text_next(world: World) -> str:
    proc = world.run("status")
    assert proc.returncode == 0, proc.stderr.decode()
    return proc.stdout.decode().split("\nnext:\n", 1)[1]


def _has(steps: list[str], words: str) -> bool:
    return any(words in step for step in steps)


def test_status_names_what_is_missing_and_is_ready_only_when_nothing_is(world: World) -> None:
    steps = _next(world)
    assert _has(steps, "Pair this computer: `tabwarden pair`"), steps
    assert not _has(steps, "Ready"), steps
    # The browser side first: "Register the host", or, while another test's (or the person's)
    # browser runs without our host, that browser's own `tabwarden install` line.
    order = [
        next(i for i, step in enumerate(steps) if words in step)
        for words in ("`tabwarden install --browser ", "Load the extension", "Pair this computer")
    ]
    assert order == sorted(order), steps  # the options page must be there for pair's code
    proc = world.run("status")
    assert "/trust.json (none yet;" in proc.stdout.decode()

    first = world.pair()
    code = CODE_RE.findall(first.split(b"one-time pairing code", 1)[1])[0].decode()
    steps = _next(world)
    assert _has(steps, "No browser is paired"), steps
    assert _has(steps, "No MCP client is paired, so every call is refused"), steps
    assert _has(steps, "tabwarden pair-client --program claude"), steps
    assert _has(steps, "Load the extension"), steps  # no host runs: nothing connected
    assert not _has(steps, "Ready"), steps
    text = _text_next(world)
    assert "No browser is paired" in text and "Ready" not in text, text

    exe, _sha = self_exe()
    pair_client(world, exe, "me")
    assert not _has(_next(world), "No MCP client is paired")
    assert world.run("install", "--browser", "chromium").returncode == 0

    browser = FakeBrowser(world.runtime, attested=True)  # the real host, as Chrome starts it
    try:
        browser.wait_socket()
        steps = _next(world)
        assert _has(steps, "no extension is connected"), steps  # the host runs, no hello yet
        assert not _has(steps, "Ready"), steps

        browser.hello()
        steps = _next(world)
        assert not _has(steps, "no extension is connected"), steps
        assert _has(steps, "No browser is paired"), steps  # connected, yet nothing enrolled
        assert not _has(steps, "Ready"), steps

        enrol(browser, code, SoftAuthenticator())
        report = _report(world)
        assert report["trust"]["enrolledBrowsers"] == ["test"], report["trust"]
        steps = report["next"]
        assert steps[0].startswith("Ready: "), steps
        assert not _has(steps, "No browser") and not _has(steps, "No MCP client"), steps
        assert re.search(r"^  - Ready: ", _text_next(world), re.MULTILINE)

        assert world.run("revoke", "browser", "test").returncode == 0
        steps = _next(world)
        assert _has(steps, "No browser is"), steps  # revoked: none paired or enrolled now
        assert not _has(steps, "Ready"), steps
    finally:
        browser.close()


def test_the_new_code_pair_offers_enrols_a_browser_that_never_paired(world: World) -> None:
    """What `pair` says to do once its code expired: `pair --browser LABEL` — and that code
    enrols a browser that never redeemed the first one."""
    world.pair()
    browser = FakeBrowser(world.runtime, attested=True)
    try:
        browser.wait_socket()
        browser.hello()
        code, _output = reissue(world, "test")
        enrol(browser, code, SoftAuthenticator())
    finally:
        browser.close()
    assert _report(world)["trust"]["enrolledBrowsers"] == ["test"]
    assert not _has(_next(world), "No browser is")


def _ready_report(*, connected: bool) -> dict[str, Any]:
    """A status report with everything done but, maybe, the extension's connection; and one
    other browser of this user running without our host."""
    return {
        "trust": {"tampered": None, "refused": None, "killed": False, "paired": True,
                  "browsers": ["chromium"], "enrolledBrowsers": ["chromium"],
                  "clients": [{"label": "me", "exe": "/usr/bin/claude"}]},
        "manifests": [{"ok": True}],
        "hosts": [{"label": "chromium", "hostReachable": True, "extensionConnected": connected}],
        "hostProblems": [{"line": "host_not_installed: brave is running, but no manifest is "
                          "installed for it: run `tabwarden install --browser brave`"}],
        "runtimeDir": {"state": "ok"},
    }  # fmt: skip


def test_another_browser_without_the_host_is_said_but_does_not_unready_a_working_setup() -> None:
    from tabwarden.cli.status import next_steps

    problem = "run `tabwarden install --browser brave`."
    steps = next_steps(_ready_report(connected=True))
    assert steps[0].startswith("Ready: "), steps
    assert any(step.endswith(problem) for step in steps[1:]), steps
    # With no extension connected, the running browser's install is the first thing to do.
    steps = next_steps(_ready_report(connected=False))
    assert steps[0].endswith(problem), steps
    assert not _has(steps, "Ready"), steps
