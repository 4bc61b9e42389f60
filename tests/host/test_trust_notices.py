"""Live updates (issue 15): the real host notices the trust record, the kill latch and the audit
log changing on disk — a `tabwarden kill` or `policy restrict` typed in a terminal — and pushes a
``trust_changed`` notice to the extension that carries a counter and nothing else."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tabwarden.host.notices import ChangeWatch, watched_paths
from tests.fakes import FakeBrowser, host_env
from tests.fixtures import (
    config_of,
    gate_of,
    host_call,
    paired_host,
)


def cli(runtime: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # noqa: S603 (this interpreter, our own CLI)
        [sys.executable, "-m", "tabwarden", *args],
        capture_output=True,
        text=True,
        env=host_env(runtime),
        timeout=60,
    )


def test_a_kill_and_a_policy_restrict_typed_in_a_terminal_are_pushed_to_the_extension(
    fake_browser: FakeBrowser,
) -> None:
    paired_host(fake_browser)
    config = config_of(fake_browser)
    assert host_call(fake_browser, "policy_get", {})["result"]["killed"] is False

    assert cli(fake_browser.runtime, "kill").returncode == 0
    [first, *_] = fake_browser.wait_notices(1)
    # Only a counter: no record content, no epoch, nothing secret.
    assert first == {"type": "trust_changed", "seq": 1}
    # The page's re-read then sees the kill (the notice itself says nothing about it).
    assert host_call(fake_browser, "policy_get", {})["result"]["killed"] is True

    before = len(fake_browser.notices)
    done = cli(fake_browser.runtime, "policy", "restrict", "confirmTimeoutSeconds=5")
    assert done.returncode == 0, done.stderr
    notices = fake_browser.wait_notices(before + 1)
    assert [n["seq"] for n in notices] == list(range(1, len(notices) + 1))
    assert all(set(n) == {"type", "seq"} for n in notices)
    assert gate_of(config).current().policy["confirmTimeoutSeconds"] == 5


def test_reading_the_record_moves_nothing_a_change_does(fake_browser: FakeBrowser) -> None:
    """The watch's own probe: the page's re-reads (policy_get, audit_tail) change no watched
    file, so a notice never causes another one; a kill does move one."""
    paired_host(fake_browser)
    config = config_of(fake_browser)
    gate = gate_of(config)
    watch = ChangeWatch(watched_paths(gate))
    for action in ("policy_get", "audit_tail", "clients_recent", "policy_get"):
        assert host_call(fake_browser, action, {})["ok"] is True
    gate.current()
    assert watch.moved() is False
    assert host_call(fake_browser, "kill", {})["ok"] is True
    assert watch.moved() is True
    assert watch.moved() is False  # once per change
