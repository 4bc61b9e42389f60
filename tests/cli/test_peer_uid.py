"""Hop 2's first guard with real processes under a real second UID.

A throwaway user is created for the test (CI runs as root). The filesystem would normally keep
that user out of our 0700 runtime directory; these tests deliberately open that door (as a
misconfiguration or a leaked path would) to prove the kernel-credential check holds on its own:
the host refuses a foreign UID before reading a byte, and the MCP side refuses a host listening
under a foreign UID before sending a byte.
"""

from __future__ import annotations

import asyncio
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tabwarden.mcp_server.bridge_client import BridgeClient, BridgeError
from tests.fakes import FakeBrowser
from tests.fixtures import SYSTEM_PYTHON, throwaway_user

pytestmark = pytest.mark.root  # creating a throwaway user needs root (tests/conftest.py)


@pytest.fixture
def shared_tmp() -> Iterator[Path]:
    """A directory under /tmp (pytest's own tmp root is 0700, which the intruder cannot cross)."""
    path = Path(tempfile.mkdtemp(prefix="tabwarden-uid-test-"))
    os.chmod(path, 0o755)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def intruder() -> Iterator[pwd.struct_passwd]:
    with throwaway_user("twi") as user:
        yield user


def _as(user: pwd.struct_passwd, code: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [SYSTEM_PYTHON, "-I", "-c", code, *args],
        user=user.pw_uid,
        group=user.pw_gid,
        extra_groups=[],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd="/",
    )


INTRUDER_CLIENT = """
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(10)
s.connect(sys.argv[1])
try:
    s.sendall(b"\\x00\\x00\\x00\\x02{}")
except OSError:
    pass
received = b""
try:
    while True:
        chunk = s.recv(4096)
        if not chunk:
            break
        received += chunk
except OSError:
    pass
print(len(received))
"""


@pytest.mark.promise("H2-02")
def test_host_refuses_other_uid_before_reading(
    shared_tmp: Path, intruder: pwd.struct_passwd
) -> None:
    runtime = shared_tmp / "run"
    runtime.mkdir(mode=0o700)
    fake_browser = FakeBrowser(runtime)
    try:
        _host_refuses_other_uid(fake_browser, intruder)
    finally:
        fake_browser.close()


def _host_refuses_other_uid(fake_browser: FakeBrowser, intruder: pwd.struct_passwd) -> None:
    sock = fake_browser.wait_socket()
    fake_browser.hello()
    # Open the door the filesystem normally keeps shut.
    os.chmod(fake_browser.runtime, 0o711)
    os.chmod(sock, 0o666)
    proc = _as(intruder, INTRUDER_CLIENT, str(sock))
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert out.strip() == "0"  # not even the challenge: closed before the host read or wrote
    fake_browser.wait_stderr(f"peer uid {intruder.pw_uid} is not ours")
    assert "failed the handshake" not in fake_browser.stderr  # it never got that far
    # The host is unharmed and still serves its own user.
    os.chmod(fake_browser.runtime, 0o700)

    async def own_user() -> None:
        client = BridgeClient(
            label="test", env={"TABWARDEN_RUNTIME_DIR": str(fake_browser.runtime)}
        )
        status = await client.status()
        assert status.host_reachable and status.extension_connected
        await client.close()

    asyncio.run(own_user())


IMPOSTOR_HOST = """
import os, socket, sys
path = sys.argv[1]
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(path)
os.chmod(path, 0o666)
s.listen(1)
print("listening", flush=True)
conn, _ = s.accept()
conn.settimeout(10)
received = b""
try:
    while True:
        chunk = conn.recv(4096)
        if not chunk:
            break
        received += chunk
except OSError:
    pass
print(len(received), flush=True)
"""


@pytest.mark.promise("H2-03")
def test_client_refuses_host_of_other_uid(
    shared_tmp: Path, runtime_dir: Path, intruder: pwd.struct_passwd
) -> None:
    lair = shared_tmp / "lair"
    lair.mkdir()
    os.chmod(lair, 0o777)
    impostor = _as(intruder, IMPOSTOR_HOST, str(lair / "s.sock"))
    assert impostor.stdout is not None
    assert impostor.stdout.readline().strip() == "listening"
    # The impostor's socket appears in our runtime dir (e.g. a planted link), with a secret file.
    os.link(lair / "s.sock", runtime_dir / "test.sock")
    (runtime_dir / "test.secret").write_bytes(os.urandom(32))
    os.chmod(runtime_dir / "test.secret", 0o600)

    async def scenario() -> None:
        client = BridgeClient(label="test", env={"TABWARDEN_RUNTIME_DIR": str(runtime_dir)})
        with pytest.raises(BridgeError) as refused:
            await client.call("tab_list")
        assert refused.value.code == "bridge_refused"
        assert f"peer uid {intruder.pw_uid} is not ours" in str(refused.value)
        await client.close()

    asyncio.run(scenario())
    out, _ = impostor.communicate(timeout=30)
    assert out.strip() == "0"  # we sent the impostor nothing, not even a frame header


@pytest.mark.promise("H2-03")
def test_unix_socket_peer_credentials_report_real_uid(
    intruder: pwd.struct_passwd, shared_tmp: Path
) -> None:
    """The kernel answer the guard relies on, checked directly."""
    from tabwarden.bridge.peer import peer_credentials

    tmp_path = shared_tmp
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    path = tmp_path / "l.sock"
    listener.bind(str(path))
    os.chmod(path, 0o666)
    listener.listen(1)
    proc = _as(intruder, INTRUDER_CLIENT, str(path))
    conn, _ = listener.accept()
    creds = peer_credentials(conn)
    conn.close()
    listener.close()
    proc.communicate(timeout=30)
    assert creds.uid == intruder.pw_uid
    assert creds.pid == proc.pid
