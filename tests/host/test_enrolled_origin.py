"""An enrolled browser is never downgraded to the window (docs/protocol.md, "What a tap
authorises"): once this host's browser label holds a credential, a confirm-window ``grant`` is
refused (``presence_refused``) and a new origin is approved only by a tap (``policy.widen``).
Against the real host process."""

from __future__ import annotations

from typing import Any

from tests.fakes import FakeBrowser
from tests.fixtures import (
    audit_entries,
    begin_tap,
    change_detail,
    complete_tap,
    config_of,
    enrol_direct,
    enrol_via_pairing,
    gate_of,
    host_call,
    paired_host,
    refused,
    sign_count,
)
from tests.trust.softauthn import SoftAuthenticator

OLD = "https://old.example.test"
NEW = "http://127.0.0.1:8000"


def _grant(browser: FakeBrowser, grant_id: str, origin: str) -> dict[str, Any]:
    browser.send({"type": "grant", "id": grant_id, "kind": "origin", "origin": origin})
    answer = browser.receive()
    assert answer["type"] == "grant_result" and answer["id"] == grant_id, answer
    return answer


def test_enrolled_browser_window_grant_is_refused_and_writes_nothing(
    fake_browser: FakeBrowser,
) -> None:
    enrol_via_pairing(fake_browser)
    config = config_of(fake_browser)
    assert host_call(fake_browser, "policy_get", {})["result"]["enrolled"] is True
    raw = (config / "trust.json").read_bytes()
    answer = _grant(fake_browser, "g1", NEW)
    assert answer["ok"] is False
    assert answer["error"] == {
        "code": "presence_refused",
        "message": "this browser is enrolled: approve with a tap",
    }
    assert (config / "trust.json").read_bytes() == raw
    assert NEW not in gate_of(config).current().policy.origins
    assert not [e for e in audit_entries(config) if e["event"] == "origin_grant"]


def test_enrolled_browser_approves_an_origin_with_a_tap(fake_browser: FakeBrowser) -> None:
    _, authenticator = enrol_via_pairing(fake_browser)
    config = config_of(fake_browser)
    # First origin, then a second one: the detail names every approved origin plus the new one.
    for origins in ([OLD], [OLD, NEW]):
        detail = change_detail({"origins": origins})
        begun = begin_tap(fake_browser, "policy.widen", detail)
        done = complete_tap(
            fake_browser,
            begun["challengeId"],
            "policy.widen",
            detail,
            authenticator.get(begun["options"]),
        )
        assert done["ok"] is True and done["result"]["done"] is True, done
    assert set(gate_of(config).current().policy.origins) == {OLD, NEW}
    assert sign_count(config) == authenticator.counter == 2
    widen = [
        e
        for e in audit_entries(config)
        if e["event"] == "policy_set" and e["decision"] == "granted"
    ]
    assert len(widen) == 2 and all(e["path"] == "webauthn" for e in widen)
    # Still no window path afterwards.
    assert (
        _grant(fake_browser, "g2", "https://third.example.test")["error"]["code"]
        == "presence_refused"
    )


def test_another_browser_enrolled_leaves_this_one_on_the_window(fake_browser: FakeBrowser) -> None:
    key = paired_host(fake_browser)
    config = config_of(fake_browser)
    enrol_direct(config, key, "other", SoftAuthenticator())
    reply = host_call(fake_browser, "policy_get", {})["result"]
    assert reply["enrolled"] is False and "other" in reply["browsers"]
    assert _grant(fake_browser, "g3", NEW) == {"type": "grant_result", "id": "g3", "ok": True}
    assert gate_of(config).current().policy.origins == (NEW,)
    audit = [e for e in audit_entries(config) if e["event"] == "origin_grant"]
    assert audit[-1]["path"] == "window"


def test_the_host_decides_what_an_origin_needs_in_one_call(fake_browser: FakeBrowser) -> None:
    """``origin_decide``: the click for a window browser, the exact tap detail once enrolled,
    nothing once approved; refused while killed; an origin with a path is a bad request."""
    _, authenticator = enrol_via_pairing(fake_browser)  # pairs, then enrols a credential
    config = config_of(fake_browser)
    raw = (config / "trust.json").read_bytes()
    decided = host_call(fake_browser, "origin_decide", {"origin": NEW})["result"]
    assert decided == {
        "origin": NEW,
        "ask": "tap",
        "action": "policy.widen",
        "detail": change_detail({"origins": [NEW]}),
    }
    begun = begin_tap(fake_browser, "policy.widen", decided["detail"])
    done = complete_tap(
        fake_browser,
        begun["challengeId"],
        "policy.widen",
        decided["detail"],
        authenticator.get(begun["options"]),
    )
    assert done["ok"] is True, done
    assert host_call(fake_browser, "origin_decide", {"origin": NEW})["result"]["ask"] == "none"
    refused(host_call(fake_browser, "origin_decide", {"origin": NEW + "/admin"}), "bad_request")
    host_call(fake_browser, "kill", {})
    refused(host_call(fake_browser, "origin_decide", {"origin": OLD}), "killed")
    assert (config / "trust.json").read_bytes() != raw  # only the tap and the kill wrote


def test_a_window_browser_is_told_to_click(fake_browser: FakeBrowser) -> None:
    paired_host(fake_browser)
    config = config_of(fake_browser)
    raw = (config / "trust.json").read_bytes()
    decided = host_call(fake_browser, "origin_decide", {"origin": NEW})["result"]
    assert decided == {"origin": NEW, "ask": "click"}
    assert (config / "trust.json").read_bytes() == raw
