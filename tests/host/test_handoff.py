"""The socket hand-off, as a same-user attacker plays it against real
processes: a process connects to the host's bridge socket, hands the connected socket to its
child and execs the genuine ``<our python> -I -m tabwarden mcp`` in the connecting PID, so the
host's attestation of that PID passes; the child (the run secret is readable by the same user)
then runs the handshake. With ``SIGSTOP`` of the host during the switch the attestation always
sees the genuine program; without, the attacker races. Either way the child's first chunk
carries its own PID (``SCM_CREDENTIALS``), the host refuses it with the reason in its log, and
nothing reaches the extension. The other direction (an impostor host handing its accepted socket
to a child) and a second process writing on an admitted connection are refused the same way.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from tabwarden.mcp_server.bridge_client import BridgeClient, BridgeError
from tabwarden.protocol import frames
from tabwarden.protocol.codes import BRIDGE_REFUSED
from tests.fakes import FakeBrowser, host_env
from tests.fixtures import nothing_relayed, pair_this_process

DEADLINE = 30.0

#: The attacker. argv: socket, run secret, host pid, "stop" | "race", report file.
#: It connects, forks the child that will speak, and execs the genuine MCP server in its own PID.
ATTACKER = textwrap.dedent(
    """
    import json, os, secrets, signal, socket, sys, time
    from tabwarden.protocol import frames
    from tabwarden.protocol.handshake import NONCE_SIZE, ClientHandshake

    sock_path, secret_path, host_pid, mode, report = sys.argv[1:6]
    host_pid = int(host_pid)
    genuine = [sys.executable, "-I", "-m", "tabwarden", "mcp"]
    me = os.getpid()

    def shared_libpython(pid):
        with open(f"/proc/{pid}/maps") as fh:
            return "libpython" in fh.read()

    def wait_for_the_genuine_server():
        # Its command line changes at execve; on a shared build, libpython is mapped a moment
        # later by the dynamic loader. Attestation looks at both.
        want = ("\\0".join(genuine) + "\\0").encode()
        needs_libpython = shared_libpython("self")
        deadline = time.monotonic() + 30
        while True:
            with open(f"/proc/{me}/cmdline", "rb") as fh:
                if fh.read() == want and (not needs_libpython or shared_libpython(me)):
                    return
            if time.monotonic() > deadline:
                raise SystemExit("the parent never became the genuine server")
            time.sleep(0.005)

    def speak(s):
        # The child's handshake and, if admitted, a request: what the host does with it.
        secret = open(secret_path, "rb").read()
        machine = ClientHandshake(secret, secrets.token_bytes(NONCE_SIZE), role="mcp")
        decoder = frames.decoder()
        s.settimeout(20)
        said = []

        def receive():
            while True:
                frame = decoder.next_frame()
                if frame is not None:
                    return frame
                if decoder.eof:
                    raise EOFError
                try:
                    decoder.receive_data(s.recv(65536))
                except ConnectionResetError:
                    raise EOFError from None

        try:
            while True:
                outgoing, admitted = machine.receive(receive())
                for frame in outgoing:
                    s.sendall(frames.encode_frame(frame))
                    said.append(frame.get("t"))
                if admitted is not None:
                    break
            s.sendall(frames.encode_frame(
                {"type": "request", "id": 1, "action": "tab_list", "args": {}}))
            return {"outcome": "admitted", "said": said}  # the request is on its way
        except EOFError:
            return {"outcome": "closed", "said": said}
        except Exception as exc:
            return {"outcome": type(exc).__name__, "said": said}

    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    if mode == "stop":
        os.kill(host_pid, signal.SIGSTOP)  # same user: allowed
    child = os.fork()
    if child == 0:
        try:
            wait_for_the_genuine_server()
            if mode == "stop":
                os.kill(host_pid, signal.SIGCONT)
            result = speak(s)
            result.update(parent=me, child=os.getpid())
        except BaseException as exc:
            result = {"outcome": "attacker failed: " + repr(exc)}
        with open(report + ".tmp", "w") as fh:
            json.dump(result, fh)
        os.rename(report + ".tmp", report)
        os._exit(0)
    s.connect(sock_path)  # the child holds the same socket: it shares this connection
    os.execv(sys.executable, genuine)
    """
)


@pytest.fixture
def attested_browser(runtime_dir: Path) -> Iterator[FakeBrowser]:
    """The real host, attestation on (the real command), with the extension connected."""
    browser = FakeBrowser(runtime_dir, attested=True)
    try:
        browser.wait_socket()
        browser.hello()
        yield browser
    finally:
        os.kill(browser.proc.pid, signal.SIGCONT)  # never leave it stopped
        browser.close()


def _attack(browser: FakeBrowser, tmp_path: Path, mode: str) -> dict[str, object]:
    """One hand-off attempt; the child's report of what the host did with its handshake."""
    script = tmp_path / "attacker.py"
    script.write_text(ATTACKER)
    report = tmp_path / f"report-{time.monotonic_ns()}.json"
    runtime = browser.runtime
    attacker = subprocess.Popen(  # noqa: S603
        [
            sys.executable,
            str(script),
            str(runtime / f"{browser.label}.sock"),
            str(runtime / f"{browser.label}.secret"),
            str(browser.proc.pid),
            mode,
            str(report),
        ],
        stdin=subprocess.PIPE,  # held open: the genuine server it becomes waits on it
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=host_env(runtime),
    )
    try:
        deadline = time.monotonic() + DEADLINE
        while not report.exists():
            assert attacker.poll() is None, "the attacker (or the server it became) exited"
            assert time.monotonic() < deadline, "the attacker's child never reported"
            time.sleep(0.02)
        result: dict[str, object] = json.loads(report.read_text())
    finally:
        attacker.kill()
        attacker.wait(DEADLINE)
    assert result.get("parent") == attacker.pid, result
    return result


def _refused_for_handoff(browser: FakeBrowser, result: dict[str, object]) -> None:
    """The child's proof was refused: no host proof, the precise reason in the host's log."""
    assert result["outcome"] == "closed", (result, browser.stderr)
    # It answered the challenge; nothing came back.
    assert result["said"] == ["proof"], (result, browser.stderr)
    parent, child = result["parent"], result["child"]
    log = browser.wait_stderr(
        f"a frame came from pid {child}, not the attested pid {parent} "
        "(socket handed to another process)"
    )
    assert f"peer pid {parent} attested: role mcp" in log  # the exec'd PID did pass
    assert "admitted (role" not in log
    nothing_relayed(browser)


def _wait_for_refusal_naming(browser: FakeBrowser, pid: int) -> None:
    """Attestation (or the pin) refused the connecting PID before the exec: a log line says so."""
    refusal = re.compile(rf"bridge connection #\d+ refused: .*\bpid {pid}\b")
    deadline = time.monotonic() + DEADLINE
    while not refusal.search(browser.stderr):
        assert time.monotonic() < deadline, browser.stderr
        time.sleep(0.02)


@pytest.mark.promise("H2-05")
def test_handoff_with_the_host_stopped_during_the_switch_is_refused(
    attested_browser: FakeBrowser, tmp_path: Path
) -> None:
    """SIGSTOP the host, connect, fork, exec the genuine server, SIGCONT: attestation sees the
    genuine program every time, and the child that speaks is refused."""
    result = _attack(attested_browser, tmp_path, "stop")
    _refused_for_handoff(attested_browser, result)


@pytest.mark.promise("H2-05")
def test_handoff_by_race_alone_is_refused(attested_browser: FakeBrowser, tmp_path: Path) -> None:
    """No signal: the attacker races the host's accept. Every attempt fails — at attestation
    when the host measured the attacker before its exec (no challenge comes), else at the
    child's first chunk; the attempts continue until the race was won at least once."""
    won = False
    deadline = time.monotonic() + 120
    while not won:
        assert time.monotonic() < deadline, "the attacker never won the race to attestation"
        result = _attack(attested_browser, tmp_path, "race")
        assert result["outcome"] == "closed", (result, attested_browser.stderr)  # not admitted
        if result["said"] == []:  # closed before any challenge: refused at accept
            _wait_for_refusal_naming(attested_browser, int(str(result["parent"])))
            nothing_relayed(attested_browser)
            continue
        _refused_for_handoff(attested_browser, result)
        won = True


# -- a second process on an admitted connection ----------------------------------------------

#: Completes the handshake itself (it is the admitted speaker), has one request relayed, then
#: passes the connected socket over SCM_RIGHTS to a second process that sends a request.
ADMITTED_THEN_PASSES = textwrap.dedent(
    """
    import json, os, secrets, socket, subprocess, sys
    from tabwarden.protocol import frames
    from tabwarden.protocol.handshake import NONCE_SIZE, ClientHandshake

    sock_path, secret_path = sys.argv[1:3]
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(sock_path)
    s.settimeout(20)
    decoder = frames.decoder()

    def receive(sock):
        while (frame := decoder.next_frame()) is None:
            if decoder.eof:
                return None
            decoder.receive_data(sock.recv(65536))
        return frame

    machine = ClientHandshake(
        open(secret_path, "rb").read(), secrets.token_bytes(NONCE_SIZE), role="mcp")
    admitted = None
    while admitted is None:
        outgoing, admitted = machine.receive(receive(s))
        for frame in outgoing:
            s.sendall(frames.encode_frame(frame))
    s.sendall(frames.encode_frame({"type": "request", "id": 1, "action": "tab_list"}))
    while (own := receive(s))["type"] != "reply":
        pass

    SECOND = '''
    import json, os, socket, sys
    from tabwarden.protocol import frames
    carrier = socket.socket(fileno=int(sys.argv[1]))
    _, fds, _, _ = socket.recv_fds(carrier, 1, 1)
    s = socket.socket(fileno=fds[0])
    s.sendall(frames.encode_frame({"type": "request", "id": 2, "action": "tab_list"}))
    s.settimeout(20)
    print(json.dumps({"pid": os.getpid(), "got": s.recv(65536).hex()}))
    '''
    mine, theirs = socket.socketpair()
    second = subprocess.Popen(
        [sys.executable, "-c", SECOND, str(theirs.fileno())],
        pass_fds=[theirs.fileno()], stdout=subprocess.PIPE, text=True)
    socket.send_fds(mine, [b"x"], [s.fileno()])
    out = json.loads(second.communicate(timeout=30)[0])
    print(json.dumps({"pid": os.getpid(), "own": own, "second": out}))
    """
)


@pytest.mark.promise("H2-05")
def test_a_second_process_writing_on_an_admitted_connection_is_refused(
    fake_browser: FakeBrowser, tmp_path: Path
) -> None:
    """Attestation is off in this host (``FakeBrowser`` default), so the admitted speaker can be
    a script of ours: the binding does not depend on attestation — the PID the kernel gave at
    accept is the only one whose bytes the connection takes."""
    pair_this_process(fake_browser.runtime.parent / "config")  # our child script's client: us
    fake_browser.wait_socket()
    fake_browser.hello()

    def answer_the_admitted_one() -> None:
        request = fake_browser.receive()
        assert request["type"] == "request" and request["action"] == "tab_list", request
        fake_browser.send({"type": "reply", "id": request["id"], "ok": True, "result": {"t": 1}})

    answering = threading.Thread(target=answer_the_admitted_one, daemon=True)
    answering.start()
    runtime = fake_browser.runtime
    done = subprocess.run(  # noqa: S603
        [
            sys.executable,
            "-c",
            ADMITTED_THEN_PASSES,
            str(runtime / "test.sock"),
            str(runtime / "test.secret"),
        ],
        capture_output=True,
        text=True,
        env=host_env(runtime),
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    answering.join(DEADLINE)
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["own"]["ok"] is True  # the admitted speaker itself is served
    second = out["second"]
    assert second["got"] == ""  # the host closed on it: not even an error reply
    fake_browser.wait_stderr(
        f"a frame came from pid {second['pid']}, not the attested pid {out['pid']} "
        "(socket handed to another process)"
    )
    nothing_relayed(fake_browser)


def _pidfd_getfd(pid: int, target_fd: int) -> int:
    """A copy of another process's descriptor (``pidfd_getfd``, Linux 5.6; needs the right to
    ptrace it — root here)."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    pidfd = os.pidfd_open(pid)
    try:
        fd = int(libc.syscall(438, pidfd, target_fd, 0))  # SYS_pidfd_getfd, every arch
        if fd < 0:
            raise OSError(ctypes.get_errno(), "pidfd_getfd")
        return fd
    finally:
        os.close(pidfd)


def _bridge_socket_of(pid: int, sock_path: Path) -> socket.socket:
    """The genuine server's connected bridge socket, copied into this process."""
    for name in os.listdir(f"/proc/{pid}/fd"):
        if not os.readlink(f"/proc/{pid}/fd/{name}").startswith("socket:"):
            continue
        copy = socket.socket(fileno=_pidfd_getfd(pid, int(name)))
        try:
            if copy.family == socket.AF_UNIX and copy.getpeername() == str(sock_path):
                return copy
        except OSError:
            pass
        copy.close()
    raise AssertionError("the genuine server holds no bridge connection")


@pytest.mark.root
@pytest.mark.promise("H2-05")
def test_another_process_writing_on_the_genuine_servers_connection_is_refused(
    attested_browser: FakeBrowser, tmp_path: Path
) -> None:
    """The whole genuine chain — the real ``tabwarden mcp`` (spawned by the SDK's stdio client)
    admitted by the real attested host — and a second process that takes a copy of the server's
    connected socket (``pidfd_getfd``: ptrace rights, which root has) and writes a request on
    it. Its writes are refused; the genuine server is served before and after."""
    runtime = attested_browser.runtime
    pair_this_process(runtime.parent / "config")
    sock_path = runtime / f"{attested_browser.label}.sock"

    async def scenario() -> None:
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "tabwarden", "mcp"], env=host_env(runtime)
        )
        with open(tmp_path / "mcp.err", "w") as errlog:
            async with Client(stdio_client(params, errlog=errlog)) as client:
                status = await client.call_tool("bridge_status", {})
                assert status.structured_content["hostReachable"], status
                (server,) = [
                    p
                    for p in psutil.Process().children(recursive=True)
                    if p.cmdline()[1:] == ["-I", "-m", "tabwarden", "mcp"]
                ]
                stolen = _bridge_socket_of(server.pid, sock_path)
                with stolen:
                    stolen.sendall(
                        frames.encode_frame(
                            {"type": "request", "id": 99, "action": "tab_list", "args": {}}
                        )
                    )
                    attested_browser.wait_stderr(
                        f"a frame came from pid {os.getpid()}, not the attested pid {server.pid} "
                        "(socket handed to another process)"
                    )
                nothing_relayed(attested_browser)
                # The genuine server reconnects and is served.
                answering = threading.Thread(
                    target=_answer_tab_list, args=(attested_browser,), daemon=True
                )
                answering.start()
                deadline = time.monotonic() + DEADLINE
                while (result := await client.call_tool("tab_list", {})).is_error:
                    assert time.monotonic() < deadline, result
                    await asyncio.sleep(0.05)
                answering.join(DEADLINE)

    asyncio.run(asyncio.wait_for(scenario(), 120))


def _answer_tab_list(browser: FakeBrowser) -> None:
    while (request := browser.receive())["type"] == "session_end":
        pass  # the cut connection's session ending
    assert request["type"] == "request" and request["action"] == "tab_list", request
    browser.send({"type": "reply", "id": request["id"], "ok": True, "result": {"tabs": []}})


# -- the other direction: the MCP side binds the host's end ------------------------------------

#: An impostor "host": it listens (so the kernel names it as the socket's peer), accepts, and
#: hands the accepted socket to its child, which sends a well-formed challenge and then records
#: whether the client answered it.
HANDING_HOST = textwrap.dedent(
    """
    import json, os, socket, sys
    from tabwarden.protocol import frames
    runtime, report = sys.argv[1:3]
    fd = os.open(os.path.join(runtime, "test.secret"), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.write(fd, os.urandom(32))
    os.close(fd)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(os.path.join(runtime, "test.sock"))
    listener.listen(1)
    print("listening", flush=True)
    conn, _ = listener.accept()
    if os.fork() == 0:
        conn.sendall(frames.encode_frame({"t": "challenge", "v": 1, "nonce": "ab" * 32}))
        conn.settimeout(20)
        heard = b""
        try:
            while chunk := conn.recv(65536):
                heard += chunk
        except OSError:
            pass
        with open(report + ".tmp", "w") as fh:
            json.dump({"child": os.getpid(), "heard": heard.hex()}, fh)
        os.rename(report + ".tmp", report)
        os._exit(0)
    conn.close()
    sys.stdin.read()  # stay alive (the pinned listener) until the test is done
    """
)


@pytest.mark.promise("H2-05")
def test_the_mcp_side_refuses_a_host_that_handed_its_socket_on(
    runtime_dir: Path, tmp_path: Path
) -> None:
    report = tmp_path / "host-report.json"
    impostor = subprocess.Popen(  # noqa: S603
        [sys.executable, "-c", HANDING_HOST, str(runtime_dir), str(report)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=host_env(runtime_dir),
    )
    try:
        assert impostor.stdout is not None
        assert impostor.stdout.readline().strip() == "listening"
        client = BridgeClient(label="test", env={"TABWARDEN_RUNTIME_DIR": str(runtime_dir)})

        async def connect() -> BridgeError:
            try:
                await client.ensure_connected()
            except BridgeError as exc:
                return exc
            finally:
                await client.close()
            raise AssertionError("the client accepted a host that handed its socket on")

        refused = asyncio.run(connect())
        deadline = time.monotonic() + DEADLINE
        while not report.exists():
            assert time.monotonic() < deadline, "the impostor's child never reported"
            time.sleep(0.02)
        heard = json.loads(report.read_text())
    finally:
        impostor.kill()
        impostor.wait(DEADLINE)
    assert refused.code == BRIDGE_REFUSED
    assert (
        f"a frame came from pid {heard['child']}, not the attested pid {impostor.pid} "
        "(socket handed to another process)"
    ) in str(refused)
    assert heard["heard"] == ""  # the client never answered the impostor's challenge
