"""Live updates: the real host notices the trust record, the kill latch and the audit
log changing on disk — a `tabwarden kill` or `policy restrict` typed in a terminal — and pushes a
``trust_changed`` notice to the extension that carries a counter and the record's epoch (the
rollback witness's input) and nothing else; a refused tap's
host_reply names the kind of check that failed for the person's own page, and nothing more."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tabwarden.host.notices import ChangeWatch, watched_paths
from tabwarden.trust.presence import REASON_CODES
from tests.fakes import FakeBrowser, host_env
from tests.fixtures import (
    begin_tap,
    change_detail,
    complete_tap,
    config_of,
    enrol_via_pairing,
    gate_of,
    host_call,
    paired_host,
    refused,
)


def cli(runtime: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # noqa: S603 (this interpreter, our own CLI)
        [sys.executable, "-m", "tabwarden", *args],
        capture_output=True,
        text=True,
        env=host_env(runtime),
        timeout=60,
    )


@pytest.mark.promise("H4-06")
def test_a_kill_and_a_policy_restrict_typed_in_a_terminal_are_pushed_to_the_extension(
    fake_browser: FakeBrowser,
) -> None:
    paired_host(fake_browser)
    config = config_of(fake_browser)
    assert host_call(fake_browser, "policy_get", {})["result"]["killed"] is False

    assert cli(fake_browser.runtime, "kill").returncode == 0
    killed_epoch = gate_of(config).current().epoch
    notices = fake_browser.wait_notices(1)
    # The killed record's epoch arrives with a notice (the witness needs it: no request may
    # follow), whichever of the record and the audit log the watch saw move first.
    while all(n["epoch"] != killed_epoch for n in notices):
        notices = fake_browser.wait_notices(len(notices) + 1)
    # A counter and the epoch: no record content, nothing secret.
    assert notices[0] == {"type": "trust_changed", "seq": 1, "epoch": notices[0]["epoch"]}
    assert all(n["epoch"] <= killed_epoch for n in notices)
    # The page's re-read then sees the kill (the notice itself says nothing about it).
    assert host_call(fake_browser, "policy_get", {})["result"]["killed"] is True

    before = len(fake_browser.notices)
    done = cli(fake_browser.runtime, "policy", "restrict", "confirmTimeoutSeconds=5")
    assert done.returncode == 0, done.stderr
    notices = fake_browser.wait_notices(before + 1)
    assert [n["seq"] for n in notices] == list(range(1, len(notices) + 1))
    assert all(set(n) == {"type", "seq", "epoch"} for n in notices)
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


@pytest.mark.promise("PR-10")
def test_a_cloned_authenticator_is_refused_with_its_reason_for_the_person_only(
    fake_browser: FakeBrowser,
) -> None:
    """The authenticator comes back with the counter it had before the last tap (a clone): the
    host refuses, writes nothing, and its reply names ``counter_not_increased`` — never the
    counter values, never which credential — while the message stays the opaque one."""
    _, authenticator = enrol_via_pairing(fake_browser)
    config = config_of(fake_browser)
    detail = change_detail({"eval": True})
    begun = begin_tap(fake_browser, "policy.widen", detail)
    response = authenticator.get(begun["options"])
    assert complete_tap(fake_browser, begun["challengeId"], "policy.widen", detail, response)["ok"]
    cloned_at = authenticator.counter
    before = (config / "trust.json").read_bytes()

    detail = change_detail({"upload": True})
    again = begin_tap(fake_browser, "policy.widen", detail)
    reply = complete_tap(
        fake_browser,
        again["challengeId"],
        "policy.widen",
        detail,
        authenticator.get(again["options"], counter=cloned_at),
    )
    refused(reply, "presence_refused")
    assert reply["error"] == {
        "code": "presence_refused",
        "message": "presence refused",
        "reason": "counter_not_increased",
    }
    assert (config / "trust.json").read_bytes() == before
    assert gate_of(config).current().policy["upload"] is False

    # A stale challenge id says so; every reason the host sends is one of the fixed set.
    stale = complete_tap(fake_browser, again["challengeId"], "policy.widen", detail, response)
    assert stale["error"]["reason"] == "challenge_stale"
    assert {reply["error"]["reason"], stale["error"]["reason"]} <= REASON_CODES


def test_a_new_client_starting_is_pushed_so_recently_seen_updates(
    fake_browser: FakeBrowser,
) -> None:
    """Before any client is paired, each `tabwarden mcp` start is remembered (spawners.json) for
    pairing by tap; the Clients section's "recently seen" follows without a reload."""
    paired_host(fake_browser)
    spawners = config_of(fake_browser) / "spawners.json"
    assert not spawners.exists()
    subprocess.run(  # noqa: S603 (this interpreter, our own MCP server; stdin at EOF: it stops)
        [sys.executable, "-m", "tabwarden", "mcp"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        env=host_env(fake_browser.runtime),
        timeout=60,
        check=False,
    )
    assert spawners.exists()
    assert fake_browser.wait_notices(1)[0]["type"] == "trust_changed"
    recent = host_call(fake_browser, "clients_recent", {})["result"]["recent"]
    assert len(recent) == 1, recent
