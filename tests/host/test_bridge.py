"""The real host process: origin check, runtime-dir guard, handshake over a real socket, relay,
and clean shutdown. Chrome is played by ``FakeBrowser`` (real pipes, real framing)."""

from __future__ import annotations

import asyncio
import os
import socket
import stat
import subprocess
import sys
import threading
import weakref
from pathlib import Path

import pytest

from tabwarden.mcp_server.bridge_client import BridgeClient, BridgeError
from tabwarden.protocol import frames
from tabwarden.protocol.framing import FrameDecoder
from tabwarden.protocol.handshake import NONCE_SIZE, ClientHandshake
from tests.fakes import FakeBrowser, host_env, wait_until_extension_connected
from tests.fixtures import config_of, pair_in_process_client


def _client(runtime: Path, label: str = "test", **kw: object) -> BridgeClient:
    return BridgeClient(label=label, env={"TABWARDEN_RUNTIME_DIR": str(runtime)}, **kw)  # type: ignore[arg-type]


def _answer_in_background(
    browser: FakeBrowser, result: dict[str, object], count: int = 1
) -> threading.Thread:
    def run() -> None:
        for _ in range(count):
            request = browser.receive()
            browser.send({"type": "reply", "id": request["id"], "ok": True, "result": result})

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


# -- hop 3: the caller origin ----------------------------------------------------------------


@pytest.mark.parametrize(
    "origin_args",
    [
        [],
        ["chrome-extension://aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/"],
        ["chrome-extension://jlmldlloenidkbhnlcdhogbbeefcjhmf"],  # slash-less
        ["chrome-extension://jlmldlloenidkbhnlcdhogbbeefcjhmf/x"],
        ["CHROME-EXTENSION://JLMLDLLOENIDKBHNLCDHOGBBEEFCJHMF/"],
    ],
    ids=["missing", "other-extension", "slash-less", "path-suffix", "case-changed"],
)
@pytest.mark.promise("H3-01")
def test_host_refuses_wrong_origin_and_creates_nothing(
    runtime_dir: Path, origin_args: list[str]
) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "tabwarden", "host", "--browser", "test", *origin_args],
        input=b"",
        capture_output=True,
        env=host_env(runtime_dir),
        timeout=60,
    )
    assert proc.returncode == 4
    assert b"error[origin_refused]" in proc.stderr
    assert proc.stdout == b""
    assert list(runtime_dir.iterdir()) == []


# -- hop 2: the runtime directory guard ------------------------------------------------------


def _run_host(runtime: Path) -> subprocess.CompletedProcess[bytes]:
    from tabwarden.manifests import ALLOWED_ORIGIN

    return subprocess.run(
        [sys.executable, "-m", "tabwarden", "host", "--browser", "test", ALLOWED_ORIGIN],
        input=b"",
        capture_output=True,
        env=host_env(runtime),
        timeout=60,
    )


@pytest.mark.promise("H2-01")
def test_host_refuses_group_readable_runtime_dir(tmp_path: Path) -> None:
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    os.chmod(runtime, 0o750)
    proc = _run_host(runtime)
    assert proc.returncode == 3
    assert b"error[unsafe_runtime_dir]" in proc.stderr and b"0750" in proc.stderr
    assert list(runtime.iterdir()) == []


@pytest.mark.promise("H2-01")
def test_host_refuses_symlinked_runtime_dir(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    link = tmp_path / "run"
    link.symlink_to(real)
    proc = _run_host(link)
    assert proc.returncode == 3
    assert b"symlink" in proc.stderr
    assert list(real.iterdir()) == []


@pytest.mark.root  # chown to another owner
@pytest.mark.promise("H2-01")
def test_host_refuses_runtime_dir_owned_by_someone_else(tmp_path: Path) -> None:
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    os.chown(runtime, 65534, 65534)
    proc = _run_host(runtime)
    assert proc.returncode == 3
    assert b"owned by uid 65534" in proc.stderr
    assert list(runtime.iterdir()) == []


# -- the working path ------------------------------------------------------------------------


@pytest.mark.promise("H2-01")
def test_host_files_are_private_and_removed_at_eof(fake_browser: FakeBrowser) -> None:
    sock = fake_browser.wait_socket()
    secret = fake_browser.runtime / "test.secret"
    assert stat.S_IMODE(os.lstat(secret).st_mode) == 0o600
    assert os.lstat(secret).st_size == 32
    assert stat.S_IMODE(os.lstat(sock).st_mode) & 0o077 == 0
    assert fake_browser.close() == 0
    assert not sock.exists() and not secret.exists()


@pytest.mark.promise("H3-04")
def test_relay_round_trip_and_extension_state(fake_browser: FakeBrowser) -> None:
    pair_in_process_client(config_of(fake_browser))
    fake_browser.wait_socket()

    async def scenario() -> None:
        client = _client(fake_browser.runtime)
        status = await client.status()
        assert status.host_reachable and not status.extension_connected
        with pytest.raises(BridgeError) as refused:
            await client.call("tab_list")
        assert refused.value.code == "extension_not_connected"

        welcome = await asyncio.to_thread(fake_browser.hello)
        assert welcome["type"] == "welcome" and welcome["protocol"] == 1
        await wait_until_extension_connected(client.status)
        assert (await client.status()).extension_connected

        tabs: dict[str, object] = {
            "tabs": [{"id": 1, "url": "http://x/", "title": "X", "active": True, "windowId": 1}]
        }
        answerer = _answer_in_background(fake_browser, tabs)
        assert await client.call("tab_list") == tabs
        answerer.join(5)

        def answer_error() -> None:
            request = fake_browser.receive()
            fake_browser.send(
                {
                    "type": "reply",
                    "id": request["id"],
                    "ok": False,
                    "error": {"code": "tab_not_found", "message": "gone"},
                }
            )

        thread = threading.Thread(target=answer_error, daemon=True)
        thread.start()
        with pytest.raises(BridgeError) as failed:
            await client.call("tab_list")
        assert failed.value.code == "tab_not_found"
        await client.close()

    asyncio.run(scenario())


@pytest.mark.promise("H3-06")
def test_browser_exit_fails_pending_call_and_next_call_fast(fake_browser: FakeBrowser) -> None:
    pair_in_process_client(config_of(fake_browser))
    fake_browser.wait_socket()
    fake_browser.hello()

    async def scenario() -> None:
        client = _client(fake_browser.runtime)
        await client.ensure_connected()
        await wait_until_extension_connected(client.status)
        call = asyncio.create_task(client.call("tab_list", timeout=3.0))
        await asyncio.to_thread(fake_browser.receive)  # the request reached the "browser"
        await asyncio.to_thread(fake_browser.close)  # the browser goes away mid-call
        with pytest.raises(BridgeError) as pending:
            await call
        # It had reached the browser, which never came back within the call's deadline: the
        # outcome is unknown (the server retried it until then; bridge_client "exactly once").
        assert pending.value.code == "command_lost"
        with pytest.raises(BridgeError) as after:
            await client.call("tab_list")
        # The "browser" (this test process) lives on, so the host's last-seen record says the
        # extension is away and coming back (tabwarden/bridge/away.py); a browser that exited is
        # extension_not_connected (tests/browser/test_chain.py).
        assert after.value.code == "extension_away"
        await client.close()

    asyncio.run(scenario())


# -- hop 2: attackers on the socket ----------------------------------------------------------


def _raw_connect(sock_path: Path) -> socket.socket:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(10)
    s.connect(str(sock_path))
    return s


_DECODERS: weakref.WeakKeyDictionary[socket.socket, FrameDecoder] = weakref.WeakKeyDictionary()


def _recv_frame(s: socket.socket) -> dict[str, object] | None:
    """The next frame on ``s``; one decoder per socket, so two frames in one read are both kept."""
    decoder = _DECODERS.setdefault(s, frames.decoder())
    while True:
        frame = decoder.next_frame()
        if frame is not None:
            return frame
        data = s.recv(65536)
        decoder.receive_data(data)
        if not data:
            return decoder.next_frame()


@pytest.mark.promise("H2-06", "H2-09")
def test_wrong_secret_is_refused_and_learns_nothing(fake_browser: FakeBrowser) -> None:
    sock_path = fake_browser.wait_socket()
    fake_browser.hello()
    s = _raw_connect(sock_path)
    challenge = _recv_frame(s)
    assert challenge is not None and challenge["t"] == "challenge"
    attacker = ClientHandshake(b"\x00" * 32, os.urandom(NONCE_SIZE), role="mcp")
    outgoing, _ = attacker.receive(challenge)
    s.sendall(frames.encode_frame(outgoing[0]))
    assert _recv_frame(s) == {"t": "refused"}
    assert _recv_frame(s) is None  # then the host closes
    s.close()
    real_secret = (fake_browser.runtime / "test.secret").read_bytes().hex()
    log = fake_browser.wait_stderr("client proof does not verify")
    assert real_secret not in log


@pytest.mark.promise("H2-08")
def test_replayed_proof_is_refused(fake_browser: FakeBrowser) -> None:
    sock_path = fake_browser.wait_socket()
    secret = (fake_browser.runtime / "test.secret").read_bytes()
    # Session 1: a legitimate client; the attacker records its proof frame.
    s1 = _raw_connect(sock_path)
    c1 = _recv_frame(s1)
    assert c1 is not None
    honest = ClientHandshake(secret, os.urandom(NONCE_SIZE), role="mcp")
    recorded, _ = honest.receive(c1)
    s1.sendall(frames.encode_frame(recorded[0]))
    assert (_recv_frame(s1) or {}).get("t") == "proof"
    s1.close()
    # Session 2: replay the recorded proof against a fresh challenge.
    s2 = _raw_connect(sock_path)
    c2 = _recv_frame(s2)
    assert c2 is not None and c2["nonce"] != c1["nonce"]
    s2.sendall(frames.encode_frame(recorded[0]))
    assert _recv_frame(s2) == {"t": "refused"}
    s2.close()


@pytest.mark.promise("H2-08")
def test_reflected_challenge_is_refused(fake_browser: FakeBrowser) -> None:
    """An attacker without the secret opens two connections and feeds each the other's data."""
    sock_path = fake_browser.wait_socket()
    s = _raw_connect(sock_path)
    challenge = _recv_frame(s)
    assert challenge is not None
    # Reflect the host's own nonce back as the client nonce, with a MAC-shaped value.
    s.sendall(
        frames.encode_frame({"t": "proof", "nonce": challenge["nonce"], "mac": challenge["nonce"]})
    )
    assert _recv_frame(s) == {"t": "refused"}
    s.close()


@pytest.mark.promise("H2-10")
def test_garbage_and_oversize_frames_do_not_hurt_other_clients(fake_browser: FakeBrowser) -> None:
    pair_in_process_client(config_of(fake_browser))
    sock_path = fake_browser.wait_socket()
    fake_browser.hello()
    bad = _raw_connect(sock_path)
    _recv_frame(bad)
    bad.sendall(b"\xff\xff\xff\xff" + b"x" * 100)  # 4 GiB header: refused before allocation
    assert _recv_frame(bad) == {"t": "refused"}
    bad.close()
    silent = _raw_connect(sock_path)  # a stalled client holds nothing up

    async def scenario() -> None:
        client = _client(fake_browser.runtime)
        answerer = _answer_in_background(fake_browser, {"tabs": []})
        await wait_until_extension_connected(client.status)
        assert await client.call("tab_list") == {"tabs": []}
        answerer.join(5)
        await client.close()

    asyncio.run(scenario())
    silent.close()
    assert fake_browser.proc.poll() is None


@pytest.mark.promise("H2-11")
def test_second_host_for_same_label_refuses(fake_browser: FakeBrowser) -> None:
    fake_browser.wait_socket()
    proc = _run_host(fake_browser.runtime)
    assert proc.returncode == 3
    assert b"error[host_already_running]" in proc.stderr
    assert (fake_browser.runtime / "test.sock").exists()  # the first host's socket is untouched


# -- process hardening -----------------------------------------------------------------------


@pytest.mark.promise("H3-05")
def test_host_runs_without_core_dumps_and_non_dumpable(fake_browser: FakeBrowser) -> None:
    fake_browser.wait_socket()
    limits = Path(f"/proc/{fake_browser.proc.pid}/limits").read_text()
    core = next(line for line in limits.splitlines() if line.startswith("Max core file size"))
    assert core.split()[4:6] == ["0", "0"]
    fake_browser.wait_stderr("hardening: no_core_dumps, not_dumpable")


@pytest.mark.promise("H3-05")
def test_harden_process_really_clears_dumpable() -> None:
    code = (
        "import ctypes, ctypes.util\n"
        "from tabwarden.host.hardening import harden_process, PR_GET_DUMPABLE\n"
        "libc = ctypes.CDLL(ctypes.util.find_library('c'))\n"
        "before = libc.prctl(PR_GET_DUMPABLE, 0, 0, 0, 0)\n"
        "applied = harden_process()\n"
        "print(before, libc.prctl(PR_GET_DUMPABLE, 0, 0, 0, 0), applied['not_dumpable'])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.split() == ["1", "0", "True"], out.stderr


def test_extension_connecting_mid_handshake_is_still_announced(fake_browser: FakeBrowser) -> None:
    """Regression: a hello processed while a client was mid-handshake was never announced to it,
    so its bridge_status said 'extension not connected' forever."""
    sock_path = fake_browser.wait_socket()
    secret = (fake_browser.runtime / "test.secret").read_bytes()
    s = _raw_connect(sock_path)
    challenge = _recv_frame(s)  # the host captured "extension not connected" for this client
    assert challenge is not None
    fake_browser.hello()  # ...and now the extension connects, mid-handshake
    machine = ClientHandshake(secret, os.urandom(NONCE_SIZE), role="mcp")
    frames_out, _ = machine.receive(challenge)
    s.sendall(frames.encode_frame(frames_out[0]))
    frames_out, _ = machine.receive(_recv_frame(s) or {})
    s.sendall(frames.encode_frame(frames_out[0]))
    admitted = _recv_frame(s)
    assert admitted is not None and admitted["t"] == "admitted"
    assert admitted["extensionConnected"] is False
    assert _recv_frame(s) == {
        "type": "event",
        "event": "extension",
        "connected": True,
        "version": "test",
    }
    s.close()
