"""An enrolled browser answers the provenance gate with a tap ("the confirm window (or
tap, for an enrolled browser)"), against the real host process: ``confirm.provenance`` names the
target origin, the sources and the SHA-256 of the value; the host verifies the tap, stores the
counter and audits it (path ``webauthn``, sources, never the value or its hash), and refuses it
unless policy ``provenance`` is ``confirm``."""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Any

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

TARGET = "http://b.test:8080"
SOURCE = "http://a.test:8080"
VALUE = "Zx81kq2PLmQ9"
SHA = hashlib.sha256(VALUE.encode()).hexdigest()


def _set_policy(config: Path, key: HostKey, changes: dict[str, Any]) -> None:
    policy = apply_set(gate_of(config).current().policy, changes)
    store.set_baseline(config / "trust.json", key, policy.to_json(), int(time.time()))


def _detail(**over: Any) -> str:
    return change_detail({"origin": TARGET, "sha256": SHA, "sources": [SOURCE]} | over)


def _record_without_browsers(config: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((config / "trust.json").read_text())
    doc.pop("browsers", None)
    doc.pop("epoch", None)
    return doc


def test_a_provenance_tap_stores_only_the_counter_and_audits_its_path(
    fake_browser: FakeBrowser,
) -> None:
    _, authenticator = enrol_via_pairing(fake_browser)
    config = config_of(fake_browser)
    before = _record_without_browsers(config)
    detail = _detail()
    begun = begin_tap(fake_browser, "confirm.provenance", detail)
    done = complete_tap(
        fake_browser,
        begun["challengeId"],
        "confirm.provenance",
        detail,
        authenticator.get(begun["options"]),
    )
    assert done["ok"] is True and done["result"] == {"done": True}, done
    assert sign_count(config) == authenticator.counter == 1
    assert _record_without_browsers(config) == before  # nothing but the counter moved

    [entry] = [e for e in audit_entries(config) if e["event"] == "confirm_provenance"]
    assert entry["decision"] == "granted" and entry["path"] == "webauthn"
    assert entry["origin"] == TARGET and entry["sources"] == [SOURCE]
    log = (config / "audit.jsonl").read_text()
    assert VALUE not in log and SHA not in log


def test_a_tap_for_one_value_cannot_confirm_another(fake_browser: FakeBrowser) -> None:
    _, authenticator = enrol_via_pairing(fake_browser)
    config = config_of(fake_browser)
    begun = begin_tap(fake_browser, "confirm.provenance", _detail())
    response = authenticator.get(begun["options"])
    raw = (config / "trust.json").read_bytes()
    other = _detail(sha256=hashlib.sha256(b"another value").hexdigest())
    refused(
        complete_tap(fake_browser, begun["challengeId"], "confirm.provenance", other, response),
        "presence_refused",
    )
    assert (config / "trust.json").read_bytes() == raw
    assert [e["decision"] for e in audit_entries(config) if e["event"] == "confirm_provenance"] == [
        "refused"
    ]


def test_a_provenance_tap_needs_policy_confirm(fake_browser: FakeBrowser) -> None:
    key, authenticator = enrol_via_pairing(fake_browser)
    config = config_of(fake_browser)
    detail = _detail()
    for mode in ("strict", "off"):
        _set_policy(config, key, {"provenance": mode})
        raw = (config / "trust.json").read_bytes()
        refused(
            host_call(
                fake_browser, "presence_begin", {"action": "confirm.provenance", "detail": detail}
            ),
            "policy_denied",
        )
        assert (config / "trust.json").read_bytes() == raw

    # A challenge minted under confirm cannot be spent once the person made it strict.
    _set_policy(config, key, {"provenance": "confirm"})
    begun = begin_tap(fake_browser, "confirm.provenance", detail)
    response = authenticator.get(begun["options"])
    _set_policy(config, key, {"provenance": "strict"})
    raw = (config / "trust.json").read_bytes()
    refused(
        complete_tap(fake_browser, begun["challengeId"], "confirm.provenance", detail, response),
        "policy_denied",
    )
    assert (config / "trust.json").read_bytes() == raw
    assert not [e for e in audit_entries(config) if e["event"] == "confirm_provenance"]


def test_provenance_details_must_be_canonical_and_exact(fake_browser: FakeBrowser) -> None:
    enrol_via_pairing(fake_browser)
    bad = [
        _detail(sources=[]),
        _detail(sources=[SOURCE, SOURCE]),
        _detail(sources=["http://z.test", SOURCE]),  # not sorted
        _detail(sources=[TARGET]),  # same origin needs no confirmation
        _detail(sources=["http://a.test/"]),
        _detail(sources=[f"http://s{i}.test" for i in range(9)]),
        _detail(sha256=SHA.upper()),
        _detail(origin="HTTP://B.test:8080"),
        change_detail({"origin": TARGET, "sha256": SHA, "sources": [SOURCE], "value": VALUE}),
        json.dumps({"origin": TARGET, "sha256": SHA, "sources": [SOURCE]}),  # not compact
    ]
    for detail in bad:
        refused(
            host_call(
                fake_browser, "presence_begin", {"action": "confirm.provenance", "detail": detail}
            ),
            "bad_request",
        )
    assert begin_tap(fake_browser, "confirm.provenance", _detail(sources=[SOURCE, "unknown"]))
