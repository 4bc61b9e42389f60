"""``audit_tail`` against the real host process: read-only, newest last, ``limit`` respected and
validated; an unsafe audit log is refused ``trust_unreadable``."""

from __future__ import annotations

import os

import pytest

from tests.fakes import FakeBrowser
from tests.fixtures import audit_entries, config_of, host_call, paired_host, refused


def test_audit_tail_returns_the_audited_actions_newest_last(fake_browser: FakeBrowser) -> None:
    paired_host(fake_browser)
    config = config_of(fake_browser)
    assert host_call(fake_browser, "kill", {})["ok"] is True
    assert host_call(fake_browser, "policy_get", {})["ok"] is True
    before = audit_entries(config)

    reply = host_call(fake_browser, "audit_tail", {})
    assert reply["ok"] is True, reply
    entries = reply["result"]["entries"]
    assert reply["result"]["truncated"] is False
    assert entries == before  # everything there is (fewer than the default 200), newest last
    assert entries[-1]["event"] == "kill" and entries[-1]["decision"] == "narrowed"
    assert all("event" in e and "decision" in e for e in entries)
    assert audit_entries(config) == before  # read-only: nothing appended

    one = host_call(fake_browser, "audit_tail", {"limit": 1})
    assert one["ok"] is True and one["result"]["entries"] == before[-1:]


@pytest.mark.parametrize("limit", [0, -1, 1001, 2.5, "10", True, [], {}])
def test_audit_tail_bad_limit_is_bad_request(fake_browser: FakeBrowser, limit: object) -> None:
    paired_host(fake_browser)
    refused(host_call(fake_browser, "audit_tail", {"limit": limit}), "bad_request")


def test_audit_tail_unsafe_log_is_trust_unreadable(fake_browser: FakeBrowser) -> None:
    paired_host(fake_browser)
    config = config_of(fake_browser)
    assert host_call(fake_browser, "kill", {})["ok"] is True
    os.chmod(config / "audit.jsonl", 0o644)  # not private: never read
    reply = host_call(fake_browser, "audit_tail", {"limit": 5})
    refused(reply, "trust_unreadable")
    assert "audit" in reply["error"]["message"]
