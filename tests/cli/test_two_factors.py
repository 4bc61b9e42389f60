"""Two factors where an authenticator exists: the attacker's attempt, for real.

A same-user program with no terminal of its own opens a pty, starts the CLI on it as its
controlling terminal and types the phrase correctly — exactly what ``spawn`` does here. Once a
browser in the record holds an enrolled authenticator, that is refused for every widening a
terminal can start (``unkill``, ``policy set``, ``pair-client``, ``pair --browser``): no tap comes,
so ``trust.json`` keeps its very bytes, and the audit log names the refusal. Window-only
pairings keep the phrase alone (``test_cli_ceremonies.py`` covers those paths).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable

import pytest

from tabwarden.cli import ceremony
from tabwarden.cli.commands import reenrol_phrase
from tabwarden.trust.keystore import FileStore
from tests.cli.world import CODE_RE, World, plain_binary
from tests.fixtures import enrol_direct
from tests.pty_cli import PROMPT
from tests.trust.softauthn import SoftAuthenticator

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="pty/session semantics: Linux")


def _enrolled(world: World, label: str = "chromium") -> None:
    """A browser's enrolled authenticator, as a finished options-page pairing leaves it."""
    key = FileStore(world.key_file).load()
    assert key is not None
    enrol_direct(world.config, key, label, SoftAuthenticator())


def _attempt(world: World, args: tuple[str, ...], phrase: str) -> bytes:
    """The attacker's program: its own pty, the CLI on it, the phrase typed correctly."""
    child = world.spawn(*args)
    child.expect(PROMPT)
    child.send(phrase + "\n")
    status, output = child.finish()
    assert status != 0, output
    return output


ATTEMPTS: list[tuple[str, Callable[[World], object], tuple[str, ...], str, str]] = [
    ("unkill", lambda w: w.run("kill", "--reason", "t"), ("unkill",), "unkill", "unkill"),
    (
        "policy set",
        lambda w: None,
        ("policy", "set", "eval=true"),
        "policy set",
        "policy_set",
    ),
    (
        "pair-client",
        lambda w: None,
        ("pair-client", "--exe", plain_binary(), "--label", "evil"),
        "pair-client",
        "pair_client",
    ),
    (
        "pair --browser",
        lambda w: w.run("revoke", "browser", "brave"),
        ("pair", "--browser", "brave"),
        reenrol_phrase("brave"),
        "browser_code",
    ),
]


@pytest.mark.parametrize(
    ("name", "setup", "args", "phrase", "event"), ATTEMPTS, ids=[a[0] for a in ATTEMPTS]
)
@pytest.mark.promise("PR-02")
def test_a_program_typing_the_phrase_at_its_own_pty_is_refused_without_a_tap(
    paired: World,
    name: str,
    setup: Callable[[World], object],
    args: tuple[str, ...],
    phrase: str,
    event: str,
) -> None:
    _enrolled(paired, "chromium")
    _enrolled(paired, "brave")
    setup(paired)
    typed = phrase if phrase.startswith("enrol") else ceremony.phrase_for(phrase)
    before = paired.trust_file.read_bytes()
    audited = len(paired.json_list("audit", "--json"))

    output = _attempt(paired, args, typed)

    assert b"error[presence_required]" in output, output
    assert b"tap" in output and b"Open the browser" in output  # the next step
    assert paired.trust_file.read_bytes() == before  # nothing changed in trust
    entries = paired.json_list("audit", "--json")[audited:]
    assert [(e["event"], e["decision"], e["path"]) for e in entries] == [
        (event, "refused", "terminal")
    ]
    shown = paired.json("policy", "show", "--json")
    assert shown["policy"]["eval"] is False
    assert paired.json("clients", "--json")["paired"] == []
    assert CODE_RE.search(output) is None  # no one-time code was minted


@pytest.mark.promise("PR-02")
def test_window_only_pairing_keeps_the_phrase_alone(paired: World) -> None:
    """No authenticator enrolled: the phrase typed at a terminal is the whole proof."""
    child = paired.spawn("policy", "set", "clickGraceSeconds=10")
    child.expect(PROMPT)
    child.send(ceremony.phrase_for("policy set") + "\n")
    status, output = child.finish()
    assert status == 0, output
    assert json.loads(paired.trust_file.read_bytes())["epoch"] > 0
    assert paired.json("policy", "show", "--json")["policy"]["clickGraceSeconds"] == 10
    [entry] = [e for e in paired.json_list("audit", "--json") if e["event"] == "policy_set"]
    assert (entry["decision"], entry["path"]) == ("granted", "terminal")


def test_pair_reset_at_a_programs_own_pty_takes_the_phrase_alone_and_widens_nothing(
    paired: World,
) -> None:
    """`pair --reset` is a narrowing (trust/operations.py ``pair_host``): the attacker's program
    types the phrase at its own pty while an authenticator is enrolled and a client is paired,
    the kill switch engaged. The reset goes through — and leaves a record that grants nothing to
    anyone: no client, no browser, the default locked-down policy, the kill switch still engaged,
    under a new host key that every browser paired before pinned against (so each refuses this
    host until the person pairs it again at its options page)."""
    from tabwarden.trust.gate import TrustGate
    from tabwarden.trust.policy import DEFAULT_POLICY

    exe = plain_binary()
    child = paired.spawn("pair-client", "--exe", exe, "--label", "mine")
    child.expect(PROMPT)
    child.send(ceremony.phrase_for("pair-client") + "\n")
    status, output = child.finish()
    assert status == 0, output
    child = paired.spawn("policy", "set", "clickGraceSeconds=10")
    child.expect(PROMPT)
    child.send(ceremony.phrase_for("policy set") + "\n")
    status, output = child.finish()
    assert status == 0, output
    _enrolled(paired, "chromium")
    assert paired.run("kill", "--reason", "t").returncode == 0
    old_public = json.loads(paired.run("status", "--json").stdout)["trust"]["fingerprint"]
    before = TrustGate({"TABWARDEN_CONFIG_DIR": str(paired.config)}).current()
    assert [c.label for c in before.paired_clients] == ["mine"] and before.browsers
    assert before.policy != DEFAULT_POLICY and before.killed

    child = paired.spawn("pair", "--file-store", "--reset")
    child.expect(PROMPT)
    child.send(ceremony.phrase_for("pair") + "\n")
    status, output = child.finish()
    assert status == 0, output

    after = TrustGate({"TABWARDEN_CONFIG_DIR": str(paired.config)}).current()
    assert after.refused is None
    assert (
        after.paired_clients == () and after.browsers == ()
    )  # every grant dropped, none re-signed
    assert after.policy == DEFAULT_POLICY  # no site, eval/upload/password fill off
    assert after.killed  # a reset never unkills
    assert json.loads(paired.run("status", "--json").stdout)["trust"]["fingerprint"] != old_public
    assert paired.json("clients", "--json")["paired"] == []
    [entry] = [e for e in paired.json_list("audit", "--json") if e.get("reset") is True]
    assert (entry["event"], entry["decision"], entry["path"]) == ("pair", "granted", "terminal")


LATCHED: list[tuple[str, Callable[[World], object], tuple[str, ...], str, str]] = [
    a for a in ATTEMPTS if a[0] != "pair --browser"
]


@pytest.mark.parametrize(
    ("name", "setup", "args", "phrase", "event"), LATCHED, ids=[a[0] for a in LATCHED]
)
def test_revoking_the_enrolled_browser_does_not_bring_the_phrase_alone_back(
    paired: World,
    name: str,
    setup: Callable[[World], object],
    args: tuple[str, ...],
    phrase: str,
    event: str,
) -> None:
    """The attacker's way round the rule: `revoke browser` is free and removes the only
    authenticator; a window-only browser stays paired for it to use. The record remembers that
    an authenticator was enrolled under this host key, so the phrase alone still grants nothing
    (code ``second_factor_lost``, hint `pair --reset`), nothing is written, the refusal is
    audited — and `pair --reset`, the narrowing way out, brings the phrase alone back."""
    from tabwarden.trust.gate import TrustGate

    _enrolled(paired, "chromium")
    key = FileStore(paired.key_file).load()
    assert key is not None
    from tabwarden.trust import store

    store.add_window_only_browser(paired.trust_file, key, "spare", 1)
    assert paired.run("revoke", "browser", "chromium").returncode == 0  # free, no tap
    setup(paired)
    before = paired.trust_file.read_bytes()
    audited = len(paired.json_list("audit", "--json"))

    output = _attempt(paired, args, ceremony.phrase_for(phrase))

    assert b"error[second_factor_lost]" in output, output
    assert b"tabwarden pair --reset" in output  # the real next step
    assert paired.trust_file.read_bytes() == before  # nothing changed in trust
    entries = paired.json_list("audit", "--json")[audited:]
    assert [(e["event"], e["decision"], e["path"], e["reason"]) for e in entries] == [
        (event, "refused", "terminal", "authenticator was enrolled")
    ]
    eff = TrustGate({"TABWARDEN_CONFIG_DIR": str(paired.config)}).current()
    assert eff.policy.eval is False and eff.paired_clients == ()
    assert eff.killed is (name == "unkill")

    child = paired.spawn("pair", "--file-store", "--reset")
    child.expect(PROMPT)
    child.send(ceremony.phrase_for("pair") + "\n")
    status, output = child.finish()
    assert status == 0, output
    if name == "unkill":
        setup(paired)  # kill again after the reset, so the unkill below releases something
    child = paired.spawn(*args)
    child.expect(PROMPT)
    child.send(ceremony.phrase_for(phrase) + "\n")
    status, output = child.finish()
    assert status == 0, output  # a window-only world again: the phrase alone grants
    [*_, entry] = [e for e in paired.json_list("audit", "--json") if e["event"] == event]
    assert (entry["decision"], entry["path"]) == ("granted", "terminal")
