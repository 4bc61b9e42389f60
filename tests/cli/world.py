"""A private tabwarden world under a test's tmp_path, and the person's moves in it.

Shared by the CLI tests (tests/cli/conftest.py makes the ``world`` and ``paired`` fixtures):
config, runtime dir, HOME and XDG dirs all live under ``tmp_path``; D-Bus and any keyring
redirection are removed from the environment, so the OS keyring is never touched.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import IO, Any

from tabwarden.cli import ceremony, commands
from tests.fakes import FakeBrowser
from tests.pty_cli import PROMPT, Pty, Stream, spawn_cli
from tests.trust.softauthn import SoftAuthenticator

PROMPT_MARKERS = (b"type exactly", b"phrase (")
CODE_RE = re.compile(rb"\b(\d{4}-\d{4})\b")


class World:
    """A private tabwarden world under tmp_path."""

    def __init__(self, tmp_path: Path) -> None:
        self.root = tmp_path
        self.config = tmp_path / "config"
        self.runtime = tmp_path / "run"
        self.home = tmp_path / "home"
        self.runtime.mkdir(mode=0o700)
        self.home.mkdir()
        env = dict(os.environ)
        for var in ("DBUS_SESSION_BUS_ADDRESS", "PYTHON_KEYRING_BACKEND", "XDG_RUNTIME_DIR"):
            env.pop(var, None)
        env.update(
            TABWARDEN_CONFIG_DIR=str(self.config),
            TABWARDEN_RUNTIME_DIR=str(self.runtime),
            HOME=str(self.home),
            XDG_CONFIG_HOME=str(tmp_path / "xdg-config"),
            XDG_DATA_HOME=str(tmp_path / "xdg-data"),
        )
        self.env = env

    @property
    def key_file(self) -> Path:
        return self.config / "host-key.pem"

    @property
    def trust_file(self) -> Path:
        return self.config / "trust.json"

    def run(
        self, *args: str, stdin: int | IO[Any] = subprocess.DEVNULL, input: bytes | None = None
    ) -> subprocess.CompletedProcess[bytes]:
        """Plain subprocess: stdin/stdout/stderr are not terminals (what an agent does)."""
        return subprocess.run(
            [sys.executable, "-m", "tabwarden", *args],
            env=self.env,
            stdin=None if input is not None else stdin,
            input=input,
            capture_output=True,
            timeout=60,
        )

    def json(self, *args: str) -> dict[str, Any]:
        """A command's ``--json`` output that is an object."""
        proc = self.run(*args)
        assert proc.returncode == 0, proc.stderr.decode()
        doc: dict[str, Any] = json.loads(proc.stdout)
        return doc

    def json_list(self, *args: str) -> list[dict[str, Any]]:
        """A command's ``--json`` output that is a list of objects (``audit``)."""
        proc = self.run(*args)
        assert proc.returncode == 0, proc.stderr.decode()
        entries: list[dict[str, Any]] = json.loads(proc.stdout)
        return entries

    def spawn(
        self, *args: str, ctty: bool = True, stdin: Stream = "pty", stdout: Stream = "pty"
    ) -> Pty:
        """The CLI in a new session on a pty; ``ctty`` makes the pty its controlling terminal."""
        return spawn_cli(self.env, *args, ctty=ctty, stdin=stdin, stdout=stdout)

    def snapshot(self) -> dict[str, bytes]:
        """Every file under the config dir with its bytes."""
        if not self.config.exists():
            return {}
        return {
            str(p.relative_to(self.config)): p.read_bytes()
            for p in sorted(self.config.rglob("*"))
            if p.is_file()
        }

    def pair(self) -> bytes:
        """Pair with the file store, as a person would; returns the terminal output."""
        child = self.spawn("pair", "--file-store")
        child.expect(PROMPT)
        child.send(ceremony.phrase_for("pair") + "\n")
        status, out = child.finish()
        assert status == 0, out
        return out


def no_prompt(output: bytes) -> None:
    for marker in PROMPT_MARKERS:
        assert marker not in output, output
    for action in ("pair", "pair-client", "unkill", "policy set"):
        assert ceremony.phrase_for(action).encode() not in output, output


def file_mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def plain_binary() -> str:
    """A program that is neither an interpreter nor a wrapper: pinned by its image alone."""
    found = shutil.which("sleep")
    assert found is not None
    return os.path.realpath(found)


def self_exe() -> tuple[str, str]:
    exe = plain_binary()
    return exe, hashlib.sha256(Path(exe).read_bytes()).hexdigest()


def pair_client(world: World, exe: str, label: str) -> None:
    child = world.spawn("pair-client", "--exe", exe, "--label", label)
    child.expect(PROMPT)
    child.send(ceremony.phrase_for("pair-client") + "\n")
    status, output = child.finish()
    assert status == 0, output


_CALL_IDS = iter(range(1, 1_000_000))


def host_call(browser: FakeBrowser, action: str, args: dict[str, Any]) -> dict[str, Any]:
    """A host call from the extension; the ``session_end`` of a `tabwarden status` probe that
    ended meanwhile is passed over (the host tells the extension about every session)."""
    call_id = f"r{next(_CALL_IDS)}"
    browser.send({"type": "host_call", "id": call_id, "action": action, "args": args})
    while (reply := browser.receive())["type"] == "session_end":
        pass
    assert reply["type"] == "host_reply" and reply["id"] == call_id, reply
    return reply


def host_reply(browser: FakeBrowser, action: str, args: dict[str, Any]) -> dict[str, Any]:
    reply = host_call(browser, action, args)
    assert reply["ok"] is True, reply
    result: dict[str, Any] = reply["result"]
    return result


def enrol(browser: FakeBrowser, code: str, authenticator: SoftAuthenticator) -> str:
    begun = host_reply(browser, "pair_begin", {"code": code})
    assert begun["approval"] is None
    done = host_reply(
        browser,
        "pair_complete",
        {"challengeId": begun["challengeId"], "response": authenticator.create(begun["options"])},
    )
    credential_id: str = done["credentialId"]
    return credential_id


def reissue(world: World, label: str) -> tuple[str, bytes]:
    """`pair --browser LABEL` typed by a person: the one-time code and the terminal output."""
    child = world.spawn("pair", "--browser", label)
    child.expect(PROMPT)
    child.send(commands.reenrol_phrase(label) + "\n")
    status, output = child.finish()
    assert status == 0, output
    found = re.search(
        rb"one-time code for browser '" + label.encode() + rb"': (\d{4}-\d{4})", output
    )
    assert found, output
    return found.group(1).decode(), output
