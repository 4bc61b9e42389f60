"""A stale challenge, through the host's real host_call dispatcher (``host/host_calls.py``
``host_calls``: the challenge book, the worker threads, the trust record on disk) with the host's
clock moved forward instead of waiting two minutes: an answer after the TTL is refused and
nothing is written — for a pairing registration, an enrolment approval and a tap."""

from __future__ import annotations

import asyncio
import hashlib
import time
from pathlib import Path
from typing import Any

import pytest

from tabwarden.errors import TabwardenError
from tabwarden.host import host_calls as host_calls_mod
from tabwarden.trust import store
from tabwarden.trust.gate import TrustGate
from tabwarden.trust.presence import CHALLENGE_TTL
from tests.fixtures import pair_record
from tests.trust.softauthn import SoftAuthenticator


class Clock:
    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    config = tmp_path / "config"
    monkeypatch.setenv("TABWARDEN_CONFIG_DIR", str(config))
    key = pair_record(config)
    clock = Clock()
    monkeypatch.setattr(time, "time", clock)  # the module host_calls reads its clock from
    gate = TrustGate({"TABWARDEN_CONFIG_DIR": str(config)})
    calls = host_calls_mod.host_calls(gate, "chromium")
    return config, key, clock, calls


def _code(config: Path, code: str) -> None:
    store.set_pairing_code(
        config / "trust.json", hashlib.sha256(code.encode()).hexdigest(), int(time.time()) + 3600
    )


def _refused(calls: Any, action: str, args: dict[str, Any]) -> str:
    with pytest.raises(TabwardenError) as info:
        asyncio.run(calls(action, args))
    return info.value.code


def test_stale_registration_and_stale_tap_are_refused_with_nothing_written(host: Any) -> None:
    config, _, clock, calls = host
    _code(config, "c1")
    begun = asyncio.run(calls("pair_begin", {"code": "c1"}))
    a = SoftAuthenticator()
    registration = a.create(begun["options"])
    before = (config / "trust.json").read_bytes()
    clock.now += CHALLENGE_TTL + 1
    assert (
        _refused(
            calls, "pair_complete", {"challengeId": begun["challengeId"], "response": registration}
        )
        == "presence_refused"
    )
    assert (config / "trust.json").read_bytes() == before

    # Pair for real, then let a tap's challenge go stale.
    _code(config, "c2")
    begun = asyncio.run(calls("pair_begin", {"code": "c2"}))
    assert asyncio.run(
        calls(
            "pair_complete",
            {"challengeId": begun["challengeId"], "response": a.create(begun["options"])},
        )
    )["credentialId"]
    tap = asyncio.run(
        calls("presence_begin", {"action": "policy.widen", "detail": '{"eval":true}'})
    )
    response = a.get(tap["options"])
    before = (config / "trust.json").read_bytes()
    clock.now += CHALLENGE_TTL + 1
    assert (
        _refused(
            calls,
            "presence_complete",
            {
                "challengeId": tap["challengeId"],
                "action": "policy.widen",
                "detail": '{"eval":true}',
                "response": response,
            },
        )
        == "presence_refused"
    )
    assert (config / "trust.json").read_bytes() == before
    assert TrustGate({"TABWARDEN_CONFIG_DIR": str(config)}).current().policy.eval is False


def test_a_stale_enrolment_approval_is_refused(host: Any) -> None:
    config, _, clock, calls = host
    _code(config, "c1")
    begun = asyncio.run(calls("pair_begin", {"code": "c1"}))
    a = SoftAuthenticator()
    asyncio.run(
        calls(
            "pair_complete",
            {"challengeId": begun["challengeId"], "response": a.create(begun["options"])},
        )
    )
    # A second enrolment for this label (a new authenticator) needs the first one's approval.
    _code(config, "c2")
    begun = asyncio.run(calls("pair_begin", {"code": "c2"}))
    assert begun["approval"] is not None
    b = SoftAuthenticator()
    registration, approval = b.create(begun["options"]), a.get(begun["approval"]["options"])
    before = (config / "trust.json").read_bytes()
    clock.now += CHALLENGE_TTL + 1
    assert (
        _refused(
            calls,
            "pair_complete",
            {
                "challengeId": begun["challengeId"],
                "response": registration,
                "approval": {"challengeId": begun["approval"]["challengeId"], "response": approval},
            },
        )
        == "presence_refused"
    )
    assert (config / "trust.json").read_bytes() == before


@pytest.mark.parametrize(
    ("raw", "ttl"),
    [
        (None, CHALLENGE_TTL),
        ("30", 30),
        ("1", 1),
        (str(CHALLENGE_TTL), CHALLENGE_TTL),
        ("121", CHALLENGE_TTL),
        ("0", CHALLENGE_TTL),
        ("-5", CHALLENGE_TTL),
        ("9" * 30, CHALLENGE_TTL),
        ("ten", CHALLENGE_TTL),
        ("", CHALLENGE_TTL),
    ],
)
def test_the_environment_may_shorten_the_challenge_ttl_never_lengthen_it(
    raw: str | None, ttl: int
) -> None:
    env = {} if raw is None else {"TABWARDEN_CHALLENGE_TTL": raw}
    assert host_calls_mod.challenge_ttl(env) == ttl


def test_presence_refuses_a_ttl_longer_than_the_maximum() -> None:
    from tabwarden.trust.presence import begin_registration

    with pytest.raises(ValueError):
        begin_registration("chromium", user_name="me", now=0, ttl=CHALLENGE_TTL + 1)
    _, challenge = begin_registration("chromium", user_name="me", now=0, ttl=5)
    assert challenge.expires_at == 5
