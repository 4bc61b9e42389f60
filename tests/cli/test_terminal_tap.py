"""``tabwarden.cli.terminal_tap.grant`` in process: which proof reaches the trust operation, and
what the person is told when no tap comes (the real window and key:
tests/browser/test_terminal_taps.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tabwarden.cli import terminal_tap
from tabwarden.cli.terminal_tap import TapNotGiven, TapRequest, tap_refusal
from tabwarden.trust import operations, store
from tabwarden.trust.operations import TerminalAndTap, TerminalPhrase, VerifiedTap
from tabwarden.trust.record import Credential
from tests.fixtures import TrustWorld, trust_world
from tests.trust import NOW

PHRASE = TerminalPhrase(action="unkill")
REQUEST = TapRequest(command="unkill", params={}, summary="Release the kill switch.")
CRED = Credential(
    credential_id="cred-1", public_key="pk", sign_count=5, enrolled_at=NOW, path="webauthn"
)


def _killed(tmp_path: Path, *, enrolled: bool) -> TrustWorld:
    world = trust_world(tmp_path)
    assert world.key is not None
    if enrolled:
        store.add_browser_credential(world.ctx.trust_path, world.key, "chromium", CRED, NOW)
    operations.kill(world.ctx, "test", NOW)
    return world


def _release(world: TrustWorld) -> Any:
    return lambda proof: operations.release_kill(world.ctx, proof, NOW)


@pytest.mark.parametrize(
    ("code", "expected", "words"),
    [
        ("confirm_timeout", "confirm_timeout", "in time"),
        ("confirm_denied", "confirm_denied", "closed without a tap"),
        ("extension_not_connected", "presence_required", "could not ask"),
    ],
)
def test_no_tap_refuses_with_what_happened_audits_and_changes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: str, expected: str, words: str
) -> None:
    world = _killed(tmp_path, enrolled=True)

    async def no_tap(*_: Any) -> VerifiedTap:
        raise tap_refusal(code, "the window said no")

    monkeypatch.setattr(terminal_tap, "_ask_tap", no_tap)
    before = world.record_bytes()
    with pytest.raises(TapNotGiven) as refused:
        terminal_tap.grant(world.ctx, PHRASE, REQUEST, _release(world))
    assert refused.value.code == expected and words in str(refused.value)
    assert "nothing was changed" in str(refused.value) and refused.value.hint
    assert world.record_bytes() == before and world.ctx.effective().killed
    last = world.audit()[-1]
    assert (last["event"], last["decision"], last["path"]) == ("unkill", "refused", "terminal")


def test_a_verified_tap_goes_with_the_phrase_to_the_operation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    world = _killed(tmp_path, enrolled=True)
    asked: list[Any] = []

    async def tapped(_key: Any, enrolled: Any, request: TapRequest) -> VerifiedTap:
        asked.append((dict(enrolled), request))
        return VerifiedTap(
            browser="chromium", owner="chromium", credential=CRED, new_sign_count=6,
            user_verified=True,
        )  # fmt: skip

    monkeypatch.setattr(terminal_tap, "_ask_tap", tapped)
    seen: list[Any] = []

    def release(proof: Any) -> int:
        seen.append(proof)
        return operations.release_kill(world.ctx, proof, NOW)

    terminal_tap.grant(world.ctx, PHRASE, REQUEST, release)
    [(enrolled, request)] = asked
    assert list(enrolled) == ["chromium"] and request is REQUEST
    [proof] = seen
    assert isinstance(proof, TerminalAndTap) and proof.phrase is PHRASE
    assert not world.ctx.effective().killed
    assert world.audit()[-1]["paths"] == ["terminal", "webauthn"]


def test_window_only_asks_no_tap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    world = _killed(tmp_path, enrolled=False)

    async def never(*_: Any) -> VerifiedTap:
        raise AssertionError("no tap is asked where no authenticator is enrolled")

    monkeypatch.setattr(terminal_tap, "_ask_tap", never)
    terminal_tap.grant(world.ctx, PHRASE, REQUEST, _release(world))
    assert not world.ctx.effective().killed
    assert world.audit()[-1]["path"] == "terminal"


def test_the_challenge_detail_names_the_command_and_its_exact_parameters() -> None:
    request = TapRequest(
        command="policy set", params={"changes": {"origins": ["https://a.example"]}}, summary="s"
    )
    assert request.detail() == (
        '{"command":"policy set","params":{"changes":{"origins":["https://a.example"]}}}'
    )
