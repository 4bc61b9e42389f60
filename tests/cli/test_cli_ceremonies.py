"""End-to-end: the real `tabwarden` CLI's terminal ceremonies, run as subprocesses.

Every power-widening command (``pair``, ``pair-client``, ``unkill``, ``policy set``) is run twice:
the way an agent would (pipes, redirects, a session without a controlling terminal) — refused with
``not_a_terminal``, no prompt shown, nothing written — and the way a person would: in a fresh
session whose controlling terminal is a pty we hold the master of, typing the phrase only after the
prompt has appeared. Narrowing commands (``kill``, ``policy restrict``) need no terminal.

The private world each test runs in is tests/cli/world.py's ``World``.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psutil
import pytest

from tabwarden.cli import ceremony
from tabwarden.cli.commands import reenrol_phrase
from tests.cli.world import (
    CODE_RE,
    World,
    enrol,
    file_mode,
    host_call,
    host_reply,
    no_prompt,
    pair_client,
    plain_binary,
    self_exe,
)
from tests.fakes import FakeBrowser
from tests.fixtures import change_detail, refused
from tests.pty_cli import PROMPT
from tests.trust.softauthn import SoftAuthenticator

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="pty/session semantics: Linux")

# --------------------------------------------------------------------------- 1. refusals of pair


@pytest.mark.promise("PR-01")
def test_pair_refused_with_stdin_a_pipe(world: World) -> None:
    proc = world.run("pair", "--file-store", input=ceremony.phrase_for("pair").encode() + b"\n")
    assert proc.returncode == 2
    assert b"not_a_terminal" in proc.stderr
    no_prompt(proc.stdout + proc.stderr)
    assert world.snapshot() == {}
    assert not world.config.exists()


@pytest.mark.promise("PR-01")
def test_pair_refused_with_stdin_from_a_file(world: World, tmp_path: Path) -> None:
    answers = tmp_path / "answers.txt"
    answers.write_text(ceremony.phrase_for("pair") + "\n")
    with answers.open("rb") as fh:
        proc = world.run("pair", "--file-store", stdin=fh)
    assert proc.returncode == 2
    assert b"not_a_terminal" in proc.stderr
    no_prompt(proc.stdout + proc.stderr)
    assert not world.config.exists()


@pytest.mark.promise("PR-01")
def test_pair_refused_with_stdout_redirected_to_a_file(world: World, tmp_path: Path) -> None:
    out_file = tmp_path / "out.txt"
    with out_file.open("wb") as fh:
        child = world.spawn("pair", "--file-store", stdout=fh)
        status, output = child.finish()
    assert status == 2, output
    assert b"not_a_terminal" in output  # stderr is still the pty
    assert b"stdout is not a terminal" in output
    no_prompt(output + out_file.read_bytes())
    assert not world.config.exists()


@pytest.mark.promise("PR-01")
def test_pair_refused_on_a_pty_that_is_not_the_controlling_terminal(world: World) -> None:
    child = world.spawn("pair", "--file-store", ctty=False)
    status, output = child.finish()
    assert status == 2, output
    assert b"not_a_terminal" in output
    assert b"no controlling terminal" in output
    no_prompt(output)
    assert not world.config.exists()


# --------------------------------------------------------------------------- 2. pair at a terminal


def test_pair_at_a_real_terminal(world: World) -> None:
    output = world.pair()
    assert b"host key fingerprint: SHA256:" in output
    codes = CODE_RE.findall(output.split(b"one-time pairing code", 1)[1])
    assert codes, output
    code = codes[0].decode()

    assert world.key_file.is_file() and world.trust_file.is_file()
    assert file_mode(world.key_file) == 0o600
    assert file_mode(world.trust_file) == 0o600
    trust_text = world.trust_file.read_text()
    assert code not in trust_text and code.replace("-", "") not in trust_text
    doc = json.loads(trust_text)

    assert doc["pairingCode"]["sha256"] == hashlib.sha256(code.encode()).hexdigest()

    events = world.json_list("audit", "--json")
    pairs = [e for e in events if e.get("event") == "pair"]
    assert len(pairs) == 1
    assert pairs[0]["path"] == "terminal" and pairs[0]["decision"] == "granted"
    for name, data in world.snapshot().items():
        assert code.encode() not in data, name


@pytest.mark.promise("PR-01")
def test_pair_wrong_phrase_three_times_writes_nothing(world: World) -> None:
    child = world.spawn("pair", "--file-store")
    for attempt in (1, 2, 3):
        child.expect(f"phrase ({attempt}/3)> ".encode())
        child.send("pair this browser please\n")
    status, output = child.finish()
    assert status == 1, output
    assert b"ceremony_declined" in output
    assert b"fingerprint" not in output
    assert not world.key_file.exists() and not world.trust_file.exists()
    assert CODE_RE.search(output) is None


# --------------------------------------------------------------------------- 3. no second pair


def test_second_pair_is_refused_without_reset(paired: World) -> None:
    before = paired.snapshot()
    assert "host-key.pem" in before and "trust.json" in before
    child = paired.spawn("pair", "--file-store")
    status, output = child.finish()
    assert status == 1, output
    assert b"already_paired" in output
    no_prompt(output)
    after = paired.snapshot()
    assert after["host-key.pem"] == before["host-key.pem"]
    assert after["trust.json"] == before["trust.json"]


# --------------------------------------------------------------------------- 4. pair-client


def test_pair_client_at_a_terminal_and_refused_through_a_pipe(paired: World) -> None:

    exe = plain_binary()
    sha = hashlib.sha256(Path(exe).read_bytes()).hexdigest()

    before = paired.trust_file.read_bytes()
    proc = paired.run(
        "pair-client",
        "--exe",
        exe,
        "--label",
        "me",
        input=ceremony.phrase_for("pair-client").encode() + b"\n",
    )
    assert proc.returncode == 2
    assert b"not_a_terminal" in proc.stderr
    no_prompt(proc.stdout + proc.stderr)
    assert paired.trust_file.read_bytes() == before
    assert paired.json("clients", "--json")["paired"] == []

    child = paired.spawn("pair-client", "--exe", exe, "--label", "me")
    child.expect(PROMPT)
    assert sha.encode() in child.output  # the person sees what they approve
    child.send(ceremony.phrase_for("pair-client") + "\r")
    status, output = child.finish()
    assert status == 0, output
    listed = paired.json("clients", "--json")["paired"]
    assert [(c["label"], c["exe"], c["sha256"]) for c in listed] == [("me", exe, sha)]

    after = paired.trust_file.read_bytes()
    proc = paired.run(
        "pair-client",
        "--exe",
        exe,
        "--label",
        "me2",
        input=ceremony.phrase_for("pair-client").encode() + b"\n",
    )
    assert proc.returncode == 2 and b"not_a_terminal" in proc.stderr
    assert paired.trust_file.read_bytes() == after


def _running(argv: list[str], cwd: Path) -> subprocess.Popen[bytes]:
    """A long-running client process whose command line is ``argv``, measured below by PID."""
    proc = subprocess.Popen(argv, cwd=cwd, stdin=subprocess.PIPE)  # noqa: S603
    deadline = time.monotonic() + 30
    while psutil.Process(proc.pid).cmdline() != argv:  # until it has exec'd
        assert time.monotonic() < deadline, "the client never started"
        time.sleep(0.01)
    return proc


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node")
@pytest.mark.promise("PR-01")
def test_pair_client_says_it_pins_the_interpreter_and_the_script(
    paired: World, tmp_path: Path
) -> None:
    """A Node-hosted client: the ceremony names the interpreter image and the script with their
    hashes, says other scripts of that node are refused, and never claims the binary rule."""
    from tabwarden.bridge.client_identity import measure_process

    node = os.path.realpath(shutil.which("node") or "")
    script = tmp_path / "client.js"
    script.write_text("setInterval(() => {}, 1000);\n")
    client = _running([node, "client.js"], tmp_path)
    try:
        identity = measure_process(client.pid)
        child = paired.spawn("pair-client", "--pid", str(client.pid))
        child.expect(PROMPT)
        shown = child.output.decode()
        script_sha = hashlib.sha256(script.read_bytes()).hexdigest()
        assert f"the interpreter {node} (image sha256 " in shown
        assert f"running the script {script} (sha256 {script_sha[:16]}…)" in shown
        assert f"identity sha256 {identity.sha256}" in shown
        assert "other scripts of the same interpreter will be refused" in shown
        assert "any other program" not in shown and "WARNING" not in shown
        child.send(ceremony.phrase_for("pair-client") + "\n")
        status, output = child.finish()
        assert status == 0, output
    finally:
        client.kill()
        client.wait(timeout=30)
    [listed] = paired.json("clients", "--json")["paired"]
    assert (listed["label"], listed["exe"], listed["sha256"]) == (
        "client",
        f"{node} {script}",
        identity.sha256,
    )


@pytest.mark.promise("PR-01")
def test_pair_client_warns_in_words_when_the_identity_admits_more_than_one_program(
    paired: World, tmp_path: Path
) -> None:
    """python reading its program from stdin: whatever is fed to it would pass."""
    client = _running([os.path.realpath(sys.executable), "-"], tmp_path)
    try:
        child = paired.spawn("pair-client", "--pid", str(client.pid), "--label", "stdin")
        child.expect(PROMPT)
        shown = child.output.decode()
        assert "WARNING: this identity admits more than one program: python runs a program " in (
            shown
        )
        assert "read from stdin" in shown
        assert "Any program it admits can use your browser as 'stdin'" in shown
        assert "will be refused" not in shown  # no promise it cannot keep
        child.send(ceremony.phrase_for("pair-client") + "\n")
        status, output = child.finish()
        assert status == 0, output
        assert b"note: this identity admits more than one program" in output
    finally:
        client.kill()
        client.wait(timeout=30)


@pytest.mark.parametrize("program", ["interpreter", "wrapper"])
@pytest.mark.promise("PR-01")
def test_pair_client_refuses_an_interpreter_or_a_wrapper_by_path(
    paired: World, program: str
) -> None:
    exe = sys.executable if program == "interpreter" else (shutil.which("timeout") or "")
    before = paired.trust_file.read_bytes()
    child = paired.spawn("pair-client", "--exe", exe, "--label", "me")
    status, output = child.finish()
    assert status == 2, output
    assert f"is {'an interpreter' if program == 'interpreter' else 'a wrapper'}".encode() in output
    assert b"never the executable alone" in output and b"--pid" in output
    no_prompt(output)
    assert paired.trust_file.read_bytes() == before


# --------------------------------------------------------------------------- 5. kill / unkill


@pytest.mark.promise("PR-01", "PR-04")
def test_kill_is_free_unkill_needs_a_person(paired: World) -> None:
    assert paired.json("policy", "show", "--json")["killed"] is False
    proc = paired.run("kill", "--reason", "test")
    assert proc.returncode == 0, proc.stderr.decode()
    assert paired.json("policy", "show", "--json")["killed"] is True

    before = paired.trust_file.read_bytes()
    proc = paired.run("unkill", input=ceremony.phrase_for("unkill").encode() + b"\n")
    assert proc.returncode == 2
    assert b"not_a_terminal" in proc.stderr
    no_prompt(proc.stdout + proc.stderr)
    assert paired.trust_file.read_bytes() == before
    assert paired.json("policy", "show", "--json")["killed"] is True

    child = paired.spawn("unkill")
    child.expect(PROMPT)
    child.send(ceremony.phrase_for("unkill") + "\n")
    status, output = child.finish()
    assert status == 0, output
    assert b"kill switch released" in output
    assert paired.json("policy", "show", "--json")["killed"] is False


@pytest.mark.promise("BP-06")
def test_unkill_after_a_rollback_says_what_happened_and_accepts_the_record_as_it_is(
    paired: World,
) -> None:
    """Recovery from a rolled-back record without a reset: `status` says what
    happened, `unkill` at the terminal shows it and what the record grants, and on the phrase
    accepts it at a new epoch with a fresh seal and releases the latched kill switch."""
    old = paired.trust_file.read_bytes()
    assert paired.run("policy", "restrict", "clickGraceSeconds=5").returncode == 0
    assert paired.run("kill", "--reason", "test").returncode == 0
    newest = json.loads(paired.trust_file.read_bytes())["epoch"]
    temp = paired.config / "trust.json.attacker"
    temp.write_bytes(old)
    os.chmod(temp, 0o600)
    os.replace(temp, paired.trust_file)  # the older record put back

    status = paired.run("status")
    assert status.returncode == 3
    assert b"trust record rolled back" in status.stdout and b"tabwarden unkill" in status.stdout
    assert (paired.config / "kill-latch").exists()

    before = paired.trust_file.read_bytes()
    proc = paired.run("unkill", input=ceremony.phrase_for("unkill").encode() + b"\n")
    assert proc.returncode == 2 and b"not_a_terminal" in proc.stderr
    assert paired.trust_file.read_bytes() == before

    child = paired.spawn("unkill")
    child.expect(PROMPT)
    child.send(ceremony.phrase_for("unkill") + "\n")
    code, output = child.finish()
    assert code == 0, output
    assert f"trust record rolled back (epoch {json.loads(old)['epoch']}".encode() in output
    assert b"paired clients:" in output and b"accepted as it is now" in output
    assert json.loads(paired.trust_file.read_bytes())["epoch"] == newest + 1
    assert not (paired.config / "kill-latch").exists()
    shown = paired.json("policy", "show", "--json")
    assert shown["killed"] is False and shown["policy"]["clickGraceSeconds"] == 30  # as it was
    assert paired.run("status").returncode == 0
    events = [(e["event"], e.get("kind")) for e in paired.json_list("audit", "--json")]
    assert ("trust_tampered", "rolled_back") in events
    assert ("trust_accepted", "rolled_back") in events


# --------------------------------------------------------------------------- 6. policy


@pytest.mark.promise("PR-01")
def test_policy_restrict_is_free_but_never_widens_and_set_needs_a_person(paired: World) -> None:
    assert paired.json("policy", "show", "--json")["policy"]["eval"] is False
    proc = paired.run("policy", "restrict", "eval=false")
    assert proc.returncode == 0, proc.stderr.decode()

    child = paired.spawn("policy", "set", "clickGraceSeconds=10")
    child.expect(PROMPT)
    child.send(ceremony.phrase_for("policy set") + "\n")
    status, output = child.finish()
    assert status == 0, output
    assert paired.json("policy", "show", "--json")["policy"]["clickGraceSeconds"] == 10

    before = paired.trust_file.read_bytes()
    proc = paired.run("policy", "restrict", "clickGraceSeconds=20")
    assert proc.returncode != 0
    assert b"widen" in proc.stderr
    assert paired.trust_file.read_bytes() == before
    assert paired.json("policy", "show", "--json")["policy"]["clickGraceSeconds"] == 10

    proc = paired.run(
        "policy", "set", "eval=true", input=ceremony.phrase_for("policy set").encode() + b"\n"
    )
    assert proc.returncode == 2
    assert b"not_a_terminal" in proc.stderr
    no_prompt(proc.stdout + proc.stderr)
    assert paired.trust_file.read_bytes() == before
    assert paired.json("policy", "show", "--json")["policy"]["eval"] is False


# --------------------------------------------------------------------------- 7. no keyring


@pytest.mark.promise("TR-12")
def test_pair_without_file_store_and_no_keyring_fails_clearly(world: World) -> None:
    child = world.spawn("pair")
    deadline = time.monotonic() + 30
    while child.master is not None and time.monotonic() < deadline:
        if PROMPT in child.output:  # if it asks first, answer; the code must still be reported
            child.send(ceremony.phrase_for("pair") + "\n")
            break
        child._pump(0.1)
    status, output = child.finish()
    assert status != 0, output
    assert b"keystore_unavailable" in output
    assert b"--file-store" in output
    assert b"fingerprint" not in output
    assert not world.key_file.exists() and not world.trust_file.exists()
    for path in world.root.rglob("*"):
        if path.is_file():
            assert b"BEGIN PRIVATE KEY" not in path.read_bytes(), path


# --------------------------------------------------------------------------- 8. the audit trail


@pytest.mark.promise("TR-13")
def test_audit_lists_grants_with_their_path_and_no_code_in_clear(world: World) -> None:
    output = world.pair()
    code = CODE_RE.findall(output.split(b"one-time pairing code", 1)[1])[0]

    child = world.spawn("pair-client", "--exe", plain_binary(), "--label", "me")
    child.expect(PROMPT)
    child.send(ceremony.phrase_for("pair-client") + "\n")
    assert child.finish()[0] == 0
    assert world.run("kill").returncode == 0
    child = world.spawn("unkill")
    child.expect(PROMPT)
    child.send(ceremony.phrase_for("unkill") + "\n")
    assert child.finish()[0] == 0
    child = world.spawn("policy", "set", "clickGraceSeconds=10")
    child.expect(PROMPT)
    child.send(ceremony.phrase_for("policy set") + "\n")
    assert child.finish()[0] == 0
    # a refused attempt is not a grant
    assert world.run("unkill", input=b"release the kill switch\n").returncode == 2

    events = world.json_list("audit", "--json")
    granted = [(e["event"], e.get("path")) for e in events if e.get("decision") == "granted"]
    assert granted == [
        ("pair", "terminal"),
        ("pair_client", "terminal"),
        ("unkill", "terminal"),
        ("policy_set", "terminal"),
    ]
    assert [e["event"] for e in events if e.get("decision") == "narrowed"] == ["kill"]
    clients = [e for e in events if e["event"] == "pair_client"]
    assert clients[0]["label"] == "me"

    digits = code.replace(b"-", b"")
    for name, data in world.snapshot().items():
        assert code not in data and digits not in data, name


# --------------------------------------------------------------------------- 9. pair --reset


def _fingerprint(output: bytes) -> str:
    found = re.search(rb"host key fingerprint: (SHA256:\S+)", output)
    assert found, output
    return found.group(1).decode()


def test_pair_reset_rotates_key_drops_grants_and_keeps_the_kill_switch(world: World) -> None:
    old_fp = _fingerprint(world.pair())
    exe, _sha = self_exe()
    pair_client(world, exe, "me")
    assert [c["label"] for c in world.json("clients", "--json")["paired"]] == ["me"]
    assert world.run("kill", "--reason", "before reset").returncode == 0
    old_key = world.key_file.read_bytes()

    child = world.spawn("pair", "--file-store", "--reset")
    child.expect(PROMPT)
    assert b"--reset" in child.output  # the person is told what a reset costs
    child.send(ceremony.phrase_for("pair") + "\n")
    status, output = child.finish()
    assert status == 0, output
    new_fp = _fingerprint(output)
    assert new_fp != old_fp
    assert world.key_file.read_bytes() != old_key
    assert file_mode(world.key_file) == 0o600 and file_mode(world.trust_file) == 0o600

    assert world.json("clients", "--json")["paired"] == []  # ADR 0002: grants dropped
    shown = world.json("policy", "show", "--json")
    assert shown["killed"] is True  # a reset never unkills
    assert shown["ignored"] == []
    status_report = json.loads(world.run("status", "--json").stdout)
    assert status_report["trust"]["fingerprint"] == new_fp
    assert status_report["trust"]["refused"] is None

    pairs = [e for e in world.json_list("audit", "--json") if e.get("event") == "pair"]
    assert [e.get("reset") for e in pairs] == [False, True]
    assert pairs[1]["decision"] == "granted" and pairs[1]["path"] == "terminal"
    assert pairs[1]["fingerprint"] == new_fp


def test_pair_reset_refused_with_stdin_a_pipe(paired: World) -> None:
    before = paired.snapshot()
    proc = paired.run(
        "pair", "--file-store", "--reset", input=ceremony.phrase_for("pair").encode() + b"\n"
    )
    assert proc.returncode == 2
    assert b"not_a_terminal" in proc.stderr
    no_prompt(proc.stdout + proc.stderr)
    after = paired.snapshot()
    assert after["host-key.pem"] == before["host-key.pem"]
    assert after["trust.json"] == before["trust.json"]
    assert [
        e.get("reset") for e in paired.json_list("audit", "--json") if e.get("event") == "pair"
    ] == [False]


# --------------------------------------------------------------------------- 10. the picker


def _remember_self(world: World) -> tuple[str, str]:
    from tabwarden.bridge.spawner import Spawner, remember_spawner

    exe, sha = self_exe()
    remember_spawner(
        world.config, Spawner(pid=1, exe=exe, sha256=sha, create_time=0.0), time.time()
    )
    return exe, sha


def test_pair_client_picker_pairs_the_chosen_spawner(paired: World) -> None:
    exe, sha = _remember_self(paired)
    child = paired.spawn("pair-client")
    child.expect(b"number: ")
    assert f"[1] {exe}".encode() in child.output
    assert PROMPT not in child.output  # nothing to approve before a choice is made
    child.send("1\n")
    child.expect(PROMPT)
    shown = child.output.split(b"number: ", 1)[1]
    assert sha.encode() in shown
    assert b"the list is only a hint" in shown or b"only a hint" in shown
    assert b"It admits only this exact executable" in shown
    child.send(ceremony.phrase_for("pair-client") + "\n")
    status, output = child.finish()
    assert status == 0, output
    listed = paired.json("clients", "--json")["paired"]
    assert [(c["exe"], c["sha256"]) for c in listed] == [(exe, sha)]
    assert listed[0]["label"] == re.sub(r"[^a-z0-9_-]+", "-", Path(exe).name.lower()).strip("-_")


def test_pair_client_picker_refuses_a_number_not_listed(paired: World) -> None:
    _remember_self(paired)
    before = paired.trust_file.read_bytes()
    child = paired.spawn("pair-client")
    child.expect(b"number: ")
    child.send("7\n")
    status, output = child.finish()
    assert status == 2, output
    assert b"usage" in output and b"'7'" in output
    no_prompt(output.split(b"number: ", 1)[1])
    assert paired.trust_file.read_bytes() == before
    assert paired.json("clients", "--json")["paired"] == []


def test_pair_client_picker_with_no_spawners_seen_is_a_usage_error(paired: World) -> None:
    child = paired.spawn("pair-client")
    status, output = child.finish()
    assert status == 2, output
    assert b"no MCP client has started" in output
    no_prompt(output)
    assert paired.json("clients", "--json")["paired"] == []


# --------------------------------------------------------------------------- 11. status


def test_status_reports_pairing_kill_and_a_refused_record(world: World) -> None:
    fp = _fingerprint(world.pair())
    exe, _sha = self_exe()
    pair_client(world, exe, "me")

    proc = world.run("status", "--json")
    assert proc.returncode == 0, proc.stderr.decode()
    trust = json.loads(proc.stdout)["trust"]
    assert trust["paired"] is True and trust["refused"] is None and trust["killed"] is False
    assert trust["fingerprint"].startswith("SHA256:") and trust["fingerprint"] == fp
    assert trust["keyStore"] == "file"
    assert trust["clients"] == [{"label": "me", "exe": exe}]

    proc = world.run("status")
    assert proc.returncode == 0, proc.stderr.decode()
    lines = proc.stdout.decode().splitlines()
    claude = [ln.strip() for ln in lines if ln.strip().startswith("- Claude Code: ")]
    assert len(claude) == 1, lines
    found = re.fullmatch(r"- Claude Code: claude mcp add tabwarden -- (\S+) mcp", claude[0])
    assert found, claude
    assert os.path.isabs(found.group(1))
    assert f"host key: {fp}" in lines

    assert world.run("kill").returncode == 0
    proc = world.run("status", "--json")
    assert proc.returncode == 1
    report = json.loads(proc.stdout)
    assert report["trust"]["killed"] is True
    assert any("kill switch is engaged" in step for step in report["next"])
    assert world.run("status").returncode == 1

    world.trust_file.chmod(0o640)
    proc = world.run("status", "--json")
    assert proc.returncode == 3
    report = json.loads(proc.stdout)
    assert report["trust"]["refused"]
    assert any("trust record is refused" in step for step in report["next"])
    proc = world.run("status")
    assert proc.returncode == 3
    assert b"REFUSED" in proc.stdout


# --------------------------------------------------------------------------- 12. revoke


def test_revoke_needs_no_terminal(world: World) -> None:
    world.pair()
    exe, _sha = self_exe()
    pair_client(world, exe, "somelabel")
    for kind in ("browser", "client"):
        proc = world.run("revoke", kind, "somelabel", input=b"")
        assert proc.returncode == 0, proc.stderr.decode()
        assert b"not_a_terminal" not in proc.stderr
        assert f"revoked {kind} 'somelabel'".encode() in proc.stdout
    assert world.json("clients", "--json")["paired"] == []
    proc = world.run("clients")
    assert proc.returncode == 0, proc.stderr.decode()
    assert b"no MCP clients paired" in proc.stdout
    revokes = [e for e in world.json_list("audit", "--json") if e.get("event") == "revoke"]
    assert [(e["kind"], e["decision"]) for e in revokes] == [
        ("browser", "narrowed"),
        ("client", "narrowed"),
    ]


def test_pair_client_bad_label_refused_before_the_phrase(paired: World) -> None:
    exe, _sha = self_exe()
    before = paired.trust_file.read_bytes()
    child = paired.spawn("pair-client", "--exe", exe, "--label", "Not A Label")
    status, output = child.finish()
    assert status == 2, output
    assert b"bad_label" in output
    no_prompt(output)
    assert paired.trust_file.read_bytes() == before


# --------------------------------------------------------------------------- 13. re-enrol a browser


def _widen_by_tap(browser: FakeBrowser, authenticator: SoftAuthenticator, origin: str) -> Any:
    """A policy.widen tap adding ``origin``: the host's reply (ok or refused)."""
    approved = host_reply(browser, "policy_get", {})["policy"]["origins"]
    detail = change_detail({"origins": [*approved, origin]})
    begun = host_reply(browser, "presence_begin", {"action": "policy.widen", "detail": detail})
    return host_call(
        browser,
        "presence_complete",
        {
            "challengeId": begun["challengeId"],
            "action": "policy.widen",
            "detail": detail,
            "response": authenticator.get(begun["options"]),
        },
    )


def _status_text(world: World) -> str:
    proc = world.run("status")
    assert proc.returncode == 0, proc.stderr.decode()
    return proc.stdout.decode()


NO_BROWSER_ENROLLED = "enrolled browsers: none — no browser is enrolled with an authenticator"


@pytest.mark.promise("PR-06")
def test_pair_browser_after_revoking_the_only_authenticator_is_refused_until_a_reset(
    world: World,
) -> None:
    """The person lost the only authenticator, of browser "test": `revoke browser test` is free,
    and until it re-enrols the browser confirms in software. `pair --browser test` with the
    phrase alone is refused (`second_factor_lost`): a same-user program could type that phrase
    at its own pty, so once an authenticator was enrolled under this host key only
    `pair --reset` starts over. The host key and the paired client survive the refusal; no tap is
    asked of the old credential. (With another authenticator enrolled, `pair --browser`
    takes its tap: tests/browser/test_terminal_taps.py.)"""
    first = world.pair()
    fingerprint = _fingerprint(first)
    exe, _sha = self_exe()
    pair_client(world, exe, "me")
    code = CODE_RE.findall(first.split(b"one-time pairing code", 1)[1])[0].decode()
    key_before = world.key_file.read_bytes()
    browser = FakeBrowser(world.runtime, label="test", attested=True)
    other = FakeBrowser(world.runtime, label="other", attested=True)
    try:
        for b in (browser, other):
            b.wait_socket()
            b.hello()
        old = SoftAuthenticator()
        enrol(browser, code, old)
        assert _widen_by_tap(browser, old, "https://a.example")["ok"] is True
        assert len(json.loads(world.trust_file.read_text())["browsers"]) == 1
        assert NO_BROWSER_ENROLLED not in _status_text(world)

        assert world.run("revoke", "browser", "test").returncode == 0
        # Until it re-enrols: software confirmation, and `status` says no browser is enrolled.
        assert NO_BROWSER_ENROLLED in _status_text(world)
        report = world.json("status", "--json")["trust"]
        assert report["enrolledBrowsers"] == [] and report["browsers"] == []
        info = host_reply(browser, "policy_get", {})
        assert info["enrolled"] is False and info["credentials"] == []
        assert host_reply(browser, "origin_decide", {"origin": "https://b.example"})["ask"] == (
            "click"
        )

        # An agent cannot get the code: piped stdin is refused before any prompt, nothing written.
        before = world.snapshot()
        proc = world.run("pair", "--browser", "test", input=reenrol_phrase("test").encode() + b"\n")
        assert proc.returncode == 2 and b"not_a_terminal" in proc.stderr
        no_prompt(proc.stdout + proc.stderr)
        assert reenrol_phrase("test").encode() not in proc.stdout + proc.stderr
        assert world.snapshot() == before

        # A person at the terminal: with the only authenticator revoked, the record stays
        # latched (an authenticator was enrolled under this host key), so the phrase alone mints
        # no code — whoever typed it. The way on is `pair --reset`; nothing is written.
        trust_before = world.trust_file.read_bytes()
        child = world.spawn("pair", "--browser", "test")
        child.expect(PROMPT)
        child.send(reenrol_phrase("test") + "\n")
        status, output = child.finish()
        assert status == 1 and b"error[second_factor_lost]" in output, output
        assert b"tabwarden pair --reset" in output
        assert CODE_RE.search(output) is None
        assert world.trust_file.read_bytes() == trust_before
        # Nothing else moved: same key, same client; the old credential's taps stay refused.
        ask = {
            "action": "policy.widen",
            "detail": change_detail({"origins": ["https://c.example"]}),
        }
        refused(host_call(browser, "presence_begin", ask), "presence_refused")
        assert world.trust_file.read_bytes() == trust_before
        assert world.key_file.read_bytes() == key_before
        assert [c["label"] for c in world.json("clients", "--json")["paired"]] == ["me"]
        report = world.json("status", "--json")["trust"]
        assert report["fingerprint"] == fingerprint and report["enrolledBrowsers"] == []
        codes = [e for e in world.json_list("audit", "--json") if e["event"] == "browser_code"]
        assert [(e["decision"], e["path"], e["reason"]) for e in codes] == [
            ("refused", "terminal", "authenticator was enrolled")
        ]
    finally:
        browser.close()
        other.close()


@pytest.mark.promise("PR-06")
def test_pair_browser_is_refused_for_an_enrolled_browser_and_before_pairing(world: World) -> None:
    child = world.spawn("pair", "--browser", "test")
    status, output = child.finish()
    assert status == 1 and b"not_paired" in output, output
    no_prompt(output)
    assert world.snapshot() == {}

    first = world.pair()
    code = CODE_RE.findall(first.split(b"one-time pairing code", 1)[1])[0].decode()
    browser = FakeBrowser(world.runtime, label="test")
    try:
        browser.wait_socket()
        browser.hello()
        enrol(browser, code, SoftAuthenticator())
    finally:
        browser.close()
    before = world.snapshot()
    child = world.spawn("pair", "--browser", "test")
    status, output = child.finish()
    assert status == 1 and b"already_paired" in output, output
    assert b"`tabwarden revoke browser LABEL` first" in output
    no_prompt(output)
    assert world.snapshot() == before

    assert world.run("kill").returncode == 0
    assert world.run("revoke", "browser", "test").returncode == 0
    before = world.snapshot()
    child = world.spawn("pair", "--browser", "test")
    status, output = child.finish()
    assert b"killed" in output and status != 0, output
    no_prompt(output)
    assert world.snapshot() == before

    child = world.spawn("pair", "--browser", "test", "--reset")
    status, output = child.finish()
    assert status == 2 and b"cannot be combined" in output, output
    assert world.snapshot() == before
