"""More tap-authorised actions, against the real host process (docs/protocol.md, "More
tap-authorised actions"): ``confirm.eval`` / ``confirm.upload`` need the signed policy to enable
the feature with ``presenceConfirm`` and only store the sign count; ``pair_client`` adds a client
grant by tap (path ``webauthn``); ``clients_recent`` is read-only."""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Any

import pytest

from tabwarden.bridge.spawner import Spawner, remember_spawner
from tabwarden.trust import store
from tabwarden.trust.keys import HostKey
from tabwarden.trust.policy import apply_set
from tests.fakes import FakeBrowser
from tests.fixtures import (
    audit_entries,
    begin_tap,
    change_detail,
    complete_tap,
    config_of,
    enrol_via_pairing,
    gate_of,
    host_call,
    refused,
    sign_count,
)

ORIGIN = "https://app.example.test"
SHA_A = "a" * 64
SHA_B = "b" * 64


def _set_policy(config: Path, key: HostKey, changes: dict[str, Any]) -> None:
    policy = apply_set(gate_of(config).current().policy, changes)
    store.set_baseline(config / "trust.json", key, policy.to_json(), int(time.time()))


def _eval_detail(code: str, origin: str = ORIGIN) -> str:
    return change_detail({"code": code, "origin": origin})


def _record_without_browsers(config: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((config / "trust.json").read_text())
    doc.pop("browsers", None)
    doc.pop("epoch", None)
    return doc


def test_confirm_eval_with_a_tap_stores_only_the_counter(fake_browser: FakeBrowser) -> None:
    key, authenticator = enrol_via_pairing(fake_browser)
    config = config_of(fake_browser)
    _set_policy(config, key, {"eval": True, "presenceConfirm": True})
    before = _record_without_browsers(config)
    policy_before = gate_of(config).current().policy.to_json()
    code = "document.title = 'secret-marker-42'"
    detail = _eval_detail(code)
    begun = begin_tap(fake_browser, "confirm.eval", detail)
    response = authenticator.get(begun["options"])
    done = complete_tap(fake_browser, begun["challengeId"], "confirm.eval", detail, response)
    assert done["ok"] is True and done["result"] == {"done": True}, done
    assert sign_count(config) == authenticator.counter == 1
    assert _record_without_browsers(config) == before
    assert gate_of(config).current().policy.to_json() == policy_before

    [entry] = [e for e in audit_entries(config) if e["event"] == "confirm_eval"]
    assert entry["decision"] == "granted" and entry["path"] == "webauthn"
    assert entry["origin"] == ORIGIN
    assert entry["evalSha256"] == hashlib.sha256(code.encode()).hexdigest()
    assert "secret-marker-42" not in (config / "audit.jsonl").read_text()

    # Replay: same challenge id or a fresh one; nothing written.
    raw = (config / "trust.json").read_bytes()
    refused(
        complete_tap(fake_browser, begun["challengeId"], "confirm.eval", detail, response),
        "presence_refused",
    )
    fresh = begin_tap(fake_browser, "confirm.eval", detail)
    refused(
        complete_tap(fake_browser, fresh["challengeId"], "confirm.eval", detail, response),
        "presence_refused",
    )
    assert (config / "trust.json").read_bytes() == raw


def test_confirm_eval_needs_eval_and_presence_confirm(fake_browser: FakeBrowser) -> None:
    key, authenticator = enrol_via_pairing(fake_browser)
    config = config_of(fake_browser)
    detail = _eval_detail("1 + 1")
    for changes in (
        {"eval": True, "presenceConfirm": False},
        {"eval": False, "presenceConfirm": True},
    ):
        _set_policy(config, key, changes)
        raw = (config / "trust.json").read_bytes()
        refused(
            host_call(fake_browser, "presence_begin", {"action": "confirm.eval", "detail": detail}),
            "policy_denied",
        )
        refused(
            host_call(
                fake_browser,
                "presence_begin",
                {
                    "action": "confirm.upload",
                    "detail": change_detail({"origin": ORIGIN, "path": "a.txt"}),
                },
            ),
            "policy_denied",
        )
        assert (config / "trust.json").read_bytes() == raw

    # A challenge minted while allowed cannot be spent once the policy turned it off.
    _set_policy(config, key, {"eval": True, "presenceConfirm": True})
    begun = begin_tap(fake_browser, "confirm.eval", detail)
    response = authenticator.get(begun["options"])
    _set_policy(config, key, {"presenceConfirm": False})
    raw = (config / "trust.json").read_bytes()
    refused(
        complete_tap(fake_browser, begun["challengeId"], "confirm.eval", detail, response),
        "policy_denied",
    )
    assert (config / "trust.json").read_bytes() == raw
    assert not [e for e in audit_entries(config) if e["event"] == "confirm_eval"]


def test_assertion_for_one_code_cannot_confirm_another(fake_browser: FakeBrowser) -> None:
    key, authenticator = enrol_via_pairing(fake_browser)
    config = config_of(fake_browser)
    _set_policy(config, key, {"eval": True, "presenceConfirm": True})
    begun = begin_tap(fake_browser, "confirm.eval", _eval_detail("code_a()"))
    response = authenticator.get(begun["options"])
    raw = (config / "trust.json").read_bytes()
    refused(
        complete_tap(
            fake_browser, begun["challengeId"], "confirm.eval", _eval_detail("code_b()"), response
        ),
        "presence_refused",
    )
    assert (config / "trust.json").read_bytes() == raw
    assert [e["decision"] for e in audit_entries(config) if e["event"] == "confirm_eval"] == [
        "refused"
    ]


def test_confirm_details_must_be_canonical_and_exact(fake_browser: FakeBrowser) -> None:
    key, _ = enrol_via_pairing(fake_browser)
    _set_policy(
        config_of(fake_browser), key, {"eval": True, "upload": True, "presenceConfirm": True}
    )
    bad = [
        ("confirm.eval", '{"code": "1", "origin": "https://a.test"}'),  # not compact
        ("confirm.eval", change_detail({"code": "", "origin": ORIGIN})),
        ("confirm.eval", change_detail({"code": "x" * 100_001, "origin": ORIGIN})),
        ("confirm.eval", change_detail({"code": "1", "origin": "https://a.test/"})),
        ("confirm.eval", change_detail({"code": "1", "origin": "HTTPS://A.test"})),
        ("confirm.eval", change_detail({"code": "1", "origin": ORIGIN, "extra": 1})),
        ("confirm.upload", change_detail({"origin": ORIGIN, "path": ""})),
        ("confirm.upload", change_detail({"origin": "*", "path": "a.txt"})),
        ("pair_client", change_detail({"exe": "relative/bin", "label": "cli", "sha256": SHA_A})),
        (
            "pair_client",
            change_detail({"exe": "/usr/bin/x", "label": "Bad Label", "sha256": SHA_A}),
        ),
        (
            "pair_client",
            change_detail({"exe": "/usr/bin/x", "label": "cli", "sha256": SHA_A.upper()}),
        ),
    ]
    for action, detail in bad:
        refused(
            host_call(fake_browser, "presence_begin", {"action": action, "detail": detail}),
            "bad_request",
        )
    ok = begin_tap(
        fake_browser, "confirm.upload", change_detail({"origin": ORIGIN, "path": "report.pdf"})
    )
    assert ok["challengeId"]
    assert begin_tap(
        fake_browser, "confirm.eval", change_detail({"code": "x" * 100_000, "origin": ORIGIN})
    )


def test_confirm_upload_with_a_tap(fake_browser: FakeBrowser) -> None:
    key, authenticator = enrol_via_pairing(fake_browser)
    config = config_of(fake_browser)
    _set_policy(config, key, {"upload": True, "presenceConfirm": True})
    detail = change_detail({"origin": ORIGIN, "path": "report.pdf"})
    begun = begin_tap(fake_browser, "confirm.upload", detail)
    done = complete_tap(
        fake_browser,
        begun["challengeId"],
        "confirm.upload",
        detail,
        authenticator.get(begun["options"]),
    )
    assert done["ok"] is True and done["result"] == {"done": True}, done
    [entry] = [e for e in audit_entries(config) if e["event"] == "confirm_upload"]
    assert (
        entry["decision"] == "granted" and entry["path"] == "webauthn" and entry["origin"] == ORIGIN
    )


def test_pair_client_by_tap(fake_browser: FakeBrowser) -> None:
    _, authenticator = enrol_via_pairing(fake_browser)
    config = config_of(fake_browser)
    client = {"exe": "/usr/bin/claude", "label": "claude", "sha256": SHA_A}
    detail = change_detail(client)
    begun = begin_tap(fake_browser, "pair_client", detail)
    done = complete_tap(
        fake_browser,
        begun["challengeId"],
        "pair_client",
        detail,
        authenticator.get(begun["options"]),
    )
    assert done["ok"] is True and done["result"]["done"] is True, done
    eff = gate_of(config).current()
    assert done["result"]["epoch"] == eff.epoch
    [grant] = [c for c in eff.paired_clients if c.label == "claude"]
    assert (grant.exe, grant.sha256, grant.path) == ("/usr/bin/claude", SHA_A, "webauthn")
    assert sign_count(config) == 1
    [entry] = [e for e in audit_entries(config) if e["event"] == "pair_client"]
    assert entry["decision"] == "granted" and entry["path"] == "webauthn"

    reply = host_call(fake_browser, "clients_recent", {})
    assert reply["ok"] is True, reply
    assert reply["result"]["clients"] == [
        {"label": "claude", "exe": "/usr/bin/claude", "sha256": SHA_A, "pairedAt": grant.paired_at}
    ]


def test_pair_client_detail_mismatch_is_refused(fake_browser: FakeBrowser) -> None:
    _, authenticator = enrol_via_pairing(fake_browser)
    config = config_of(fake_browser)
    client = {"exe": "/usr/bin/claude", "label": "claude", "sha256": SHA_A}
    begun = begin_tap(fake_browser, "pair_client", change_detail(client))
    response = authenticator.get(begun["options"])
    raw = (config / "trust.json").read_bytes()
    refused(
        complete_tap(
            fake_browser,
            begun["challengeId"],
            "pair_client",
            change_detail({**client, "sha256": SHA_B}),
            response,
        ),
        "presence_refused",
    )
    assert (config / "trust.json").read_bytes() == raw
    assert not gate_of(config).current().paired_clients
    assert [e["decision"] for e in audit_entries(config) if e["event"] == "pair_client"] == [
        "refused"
    ]


def test_clients_recent_shape(fake_browser: FakeBrowser) -> None:
    enrol_via_pairing(fake_browser)
    config = config_of(fake_browser)
    now = time.time()
    remember_spawner(
        config, Spawner(pid=4242, exe="/usr/bin/agent", sha256=SHA_B, create_time=now), now
    )
    reply = host_call(fake_browser, "clients_recent", {})
    assert reply["ok"] is True, reply
    result = reply["result"]
    assert set(result) == {"clients", "recent"}
    assert result["clients"] == []
    [seen] = result["recent"]
    assert seen["path"] == "/usr/bin/agent" and seen["sha256"] == SHA_B
    assert {"path", "sha256", "firstSeen", "lastSeen"} <= set(seen)
    assert isinstance(seen["firstSeen"], int) and isinstance(seen["lastSeen"], int)


@pytest.mark.promise("PR-04")
def test_client_revoke_is_free_and_only_for_a_paired_label(fake_browser: FakeBrowser) -> None:
    key, _ = enrol_via_pairing(fake_browser)
    config = config_of(fake_browser)
    store.add_client(
        config / "trust.json", key, "claude", "/usr/bin/claude", SHA_A, int(time.time())
    )
    before = (config / "trust.json").read_bytes()
    # Malformed or unknown labels: refused, nothing written.
    for bad in ({}, {"label": ""}, {"label": "UPPER"}, {"label": 7}, {"label": "nobody"}):
        refused(host_call(fake_browser, "client_revoke", bad), "bad_request")
    assert (config / "trust.json").read_bytes() == before
    # No tap needed: removing power is free.
    done = host_call(fake_browser, "client_revoke", {"label": "claude"})
    assert done["ok"] is True and done["result"]["done"] is True, done
    eff = gate_of(config).current()
    assert [c.label for c in eff.paired_clients] == []
    [entry] = [e for e in audit_entries(config) if e["event"] == "revoke"]
    assert (
        entry["decision"] == "narrowed" and entry["kind"] == "client" and entry["label"] == "claude"
    )
