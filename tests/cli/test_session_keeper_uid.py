"""A ``tabwarden call --session`` keeper under a real second UID (ADR 0015).

A throwaway user is created for the test (CI runs as root). The 0700 sessions directory normally
keeps that user out; the test opens that door (as a misconfiguration would) to show the keeper's
own check holds: a peer of another UID is refused before the keeper reads or writes a byte. The
keeper still serves its own user afterwards, and a stop ends it with its record for the next call.
"""

from __future__ import annotations

import os
import pwd
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.test_peer_uid import INTRUDER_CLIENT, _as, intruder, shared_tmp  # noqa: F401
from tests.deadline import until_sync

pytestmark = pytest.mark.root  # creating a throwaway user needs root (tests/conftest.py)


def test_a_session_keeper_refuses_another_uid_before_a_byte(
    shared_tmp: Path,  # noqa: F811
    intruder: pwd.struct_passwd,  # noqa: F811
    tmp_path: Path,
) -> None:
    runtime = shared_tmp / "run"
    runtime.mkdir(mode=0o700)
    config = tmp_path / "config"
    config.mkdir(mode=0o700)
    env = dict(os.environ, TABWARDEN_RUNTIME_DIR=str(runtime), TABWARDEN_CONFIG_DIR=str(config))
    keeper = subprocess.Popen(  # noqa: S603 (this interpreter, our own CLI)
        [sys.executable, "-I", "-m", "tabwarden", "session-keeper", "uid", "--idle-timeout", "600"],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
    )  # fmt: skip
    try:
        assert keeper.stdout is not None
        assert keeper.stdout.readline() == b"ready\n"
        sessions = runtime / "sessions"
        sock = sessions / "uid.sock"
        assert sock.exists() and (sessions / "uid.json").exists()
        # Open the door the filesystem normally keeps shut.
        os.chmod(runtime, 0o711)
        os.chmod(sessions, 0o711)
        os.chmod(sock, 0o666)
        proc = _as(intruder, INTRUDER_CLIENT, str(sock))
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err
        assert out.strip() == "0"  # not even the challenge
        os.chmod(sessions, 0o700)
        os.chmod(runtime, 0o700)
        # Nothing changed: the keeper still runs, its files are all there.
        assert keeper.poll() is None
        assert {p.name for p in sessions.iterdir()} >= {"uid.sock", "uid.secret", "uid.json"}
        keeper.send_signal(signal.SIGTERM)
        assert keeper.wait(timeout=60) == 0
        until_sync("the keeper left its record", (sessions / "uid.ended").exists)
        assert not sock.exists() and not (sessions / "uid.secret").exists()
        assert keeper.stderr is not None
        log = keeper.stderr.read().decode(errors="replace")
        assert f"peer uid {intruder.pw_uid} is not ours" in log, log[-3000:]
    finally:
        if keeper.poll() is None:
            keeper.kill()
            keeper.wait(timeout=30)
