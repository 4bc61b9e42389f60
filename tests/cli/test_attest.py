"""Hop 2 executable attestation, with real processes on a real Unix socket (docs/adr/0001).

The test process listens like a host would; real peers connect; ``attest_peer`` judges the
kernel's ``SO_PEERCRED`` answer for the accepted connection. Only our real program — the
interpreter we run, ``-I -m tabwarden <role>``, from our environment, with the installed package
unchanged, still the same live process — passes.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tabwarden.bridge import attest as attest_mod
from tabwarden.bridge.attest import (
    PACKAGES,
    attest_peer,
    make_attestor,
    measure_self,
    package_roots,
    socket_pidfd,
)
from tabwarden.bridge.peer import PeerCredentials, PeerRefused, peer_credentials
from tabwarden.manifests import ALLOWED_ORIGIN
from tests.fixtures import pair_this_process

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux attestation")

ACCEPT_TIMEOUT = 20.0
LABEL = "attest"

# Connects to $TW_SOCK, then holds the connection until the far end closes it.
CONNECT = (
    "import os, socket\n"
    "s = socket.socket(socket.AF_UNIX)\n"
    "s.connect(os.environ['TW_SOCK'])\n"
    "s.recv(1)\n"
)

MCP_MESSAGES = [
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"},
        },
    },
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "bridge_status", "arguments": {}},
    },
]


@dataclass
class Listener:
    directory: Path
    sock: socket.socket

    @property
    def path(self) -> Path:
        return self.directory / f"{LABEL}.sock"

    def env(self, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "TABWARDEN_"))}
        env.update(
            TW_SOCK=str(self.path),
            TABWARDEN_RUNTIME_DIR=str(self.directory),
            TABWARDEN_CONFIG_DIR=str(self.directory.parent / "config"),  # never the real one
            TABWARDEN_BROWSER=LABEL,
        )
        env.update(extra)
        return env


@pytest.fixture
def listener(runtime_dir: Path) -> Iterator[Listener]:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(runtime_dir / f"{LABEL}.sock"))
    sock.listen(8)
    sock.settimeout(ACCEPT_TIMEOUT)
    try:
        yield Listener(runtime_dir, sock)
    finally:
        sock.close()


def roots_under(base: Path) -> tuple[tuple[str, str], ...]:
    return tuple((name, str(base.joinpath(*name.split(".")))) for name in PACKAGES)


@pytest.fixture(scope="session")
def installed_snapshot(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A frozen copy of our installed packages.

    The package digest check refuses peers as soon as the installed files change after start —
    which a checkout being edited while the suite runs would trigger. So "ours at start" is
    measured from this snapshot; only the digest's roots differ, every other piece is real.
    """
    base = tmp_path_factory.mktemp("installed")
    copy_package_tree(base)
    return base


@pytest.fixture(autouse=True)
def measured_at_start(
    installed_snapshot: Path, monkeypatch: pytest.MonkeyPatch
) -> attest_mod.Measurement:
    me = measure_self(roots=roots_under(installed_snapshot))
    monkeypatch.setattr(attest_mod, "_self", me)  # what measure_self() returns from now on
    return me


@pytest.fixture
def procs() -> Iterator[list[subprocess.Popen[bytes]]]:
    started: list[subprocess.Popen[bytes]] = []
    try:
        yield started
    finally:
        for proc in started:
            if proc.poll() is None:
                proc.kill()
            proc.wait(timeout=60)
            for stream in (proc.stdin, proc.stdout, proc.stderr):
                if stream is not None:
                    stream.close()


def spawn(
    procs: list[subprocess.Popen[bytes]],
    argv: list[str],
    env: dict[str, str],
    *,
    cwd: str | None = None,
) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(  # noqa: S603
        argv,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        cwd=cwd,
    )
    procs.append(proc)
    return proc


def accept(
    listener: Listener, proc: subprocess.Popen[bytes]
) -> tuple[socket.socket, PeerCredentials]:
    try:
        conn, _ = listener.sock.accept()
    except TimeoutError:
        proc.kill()
        _, err = proc.communicate(timeout=60)
        pytest.fail(f"peer never connected; its stderr:\n{err.decode(errors='replace')[-2000:]}")
    creds = peer_credentials(conn)
    assert creds.pid == proc.pid
    return conn, creds


def spawn_mcp(procs: list[subprocess.Popen[bytes]], listener: Listener) -> subprocess.Popen[bytes]:
    """Our real MCP server, asked for bridge_status so that it connects to our socket (its
    spawner, this process, paired: with no client paired it would refuse the call)."""
    if not (listener.directory.parent / "config" / "trust.json").exists():
        pair_this_process(listener.directory.parent / "config")
    proc = spawn(procs, [sys.executable, "-I", "-m", "tabwarden", "mcp"], listener.env(), cwd="/")
    assert proc.stdin is not None
    proc.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in MCP_MESSAGES))
    proc.stdin.flush()
    return proc


def refusal(creds: PeerCredentials, roles: set[str], **kw: object) -> str:
    with pytest.raises(PeerRefused) as info:
        attest_peer(creds, expected_roles=roles, **kw)  # type: ignore[arg-type]
    return str(info.value)


def copy_package_tree(dest: Path) -> Path:
    """Lay our installed packages out as a regular install would: dest/tabwarden/{host,...}."""
    for name, root in package_roots():
        target = dest.joinpath(*name.split("."))
        shutil.copytree(
            root, target, ignore=shutil.ignore_patterns("__pycache__"), dirs_exist_ok=True
        )
    return dest / "tabwarden"


def other_interpreter(tmp_path: Path) -> str:
    """An interpreter whose image differs from ours: the system one, else a patched copy."""
    ours = measure_self().exe_sha256
    system = shutil.which("python3", path="/usr/bin:/bin")
    if system:
        with open(system, "rb") as fh:
            if hashlib.sha256(fh.read()).hexdigest() != ours:
                return system
    copy = tmp_path / "python-copy"
    shutil.copy2(os.path.realpath(sys.executable), copy)
    with open(copy, "ab") as fh:
        fh.write(b"\0not the same image\0")  # trailing bytes: still a valid ELF, different sha256
    return str(copy)


# ------------------------------------------------------------------------------------ (i)


@pytest.mark.promise("H2-04")
def test_our_real_mcp_server_is_attested(
    listener: Listener, procs: list[subprocess.Popen[bytes]], caplog: pytest.LogCaptureFixture
) -> None:
    proc = spawn_mcp(procs, listener)
    conn, creds = accept(listener, proc)
    with conn, caplog.at_level(logging.INFO, logger="tabwarden.bridge.attest"):
        attest_peer(creds, expected_roles={"mcp"})
        make_attestor({"mcp"})(creds)  # the closure the bridge plugs in
    assert "role mcp" in caplog.text and "full" in caplog.text
    # ...but not as a host: the role is part of the entry.
    assert "role not one of ['host']" in refusal(creds, {"host"})


# ----------------------------------------------------------------------------------- (ii)


@pytest.mark.promise("H2-04")
def test_same_interpreter_other_script_is_refused(
    listener: Listener, procs: list[subprocess.Popen[bytes]], tmp_path: Path
) -> None:
    script = tmp_path / "x.py"
    script.write_text(CONNECT)
    proc = spawn(procs, [sys.executable, "-I", str(script)], listener.env())
    conn, creds = accept(listener, proc)
    with conn:
        reason = refusal(creds, {"mcp"})
    assert "entry is the script" in reason and "x.py" in reason


# ---------------------------------------------------------------------------------- (iii)


@pytest.mark.parametrize("flags", [["-c"], ["-I", "-c"]])
@pytest.mark.promise("H2-04")
def test_dash_c_is_refused(
    listener: Listener, procs: list[subprocess.Popen[bytes]], flags: list[str]
) -> None:
    proc = spawn(procs, [sys.executable, *flags, CONNECT], listener.env())
    conn, creds = accept(listener, proc)
    with conn:
        reason = refusal(creds, {"mcp", "host"})
    assert "entry is `-c` code" in reason


# ----------------------------------------------------------------------------------- (iv)


def _modified_copy(dest: Path) -> Path:
    pkg = copy_package_tree(dest)
    marker = dest / "ran"
    (pkg / "__main__.py").write_text(
        f"open({str(marker)!r}, 'w').write('modified copy ran')\n" + CONNECT
    )
    return marker


@pytest.mark.promise("H2-04")
def test_modified_copy_first_on_pythonpath_is_refused(
    listener: Listener, procs: list[subprocess.Popen[bytes]], tmp_path: Path
) -> None:
    marker = _modified_copy(tmp_path / "evil")
    proc = spawn(
        procs,
        [sys.executable, "-m", "tabwarden", "mcp"],
        listener.env(PYTHONPATH=str(tmp_path / "evil")),
        cwd="/",
    )
    conn, creds = accept(listener, proc)
    with conn:
        reason = refusal(creds, {"mcp"})
    assert marker.read_text() == "modified copy ran"  # the copy really is what ran
    assert "without `-I`" in reason


def test_modified_copy_shadowing_from_cwd_is_refused(
    listener: Listener, procs: list[subprocess.Popen[bytes]], tmp_path: Path
) -> None:
    marker = _modified_copy(tmp_path / "evil")
    proc = spawn(
        procs,
        [sys.executable, "-m", "tabwarden", "mcp"],
        listener.env(),
        cwd=str(tmp_path / "evil"),
    )
    conn, creds = accept(listener, proc)
    with conn:
        reason = refusal(creds, {"mcp"})
    assert marker.exists()
    assert "without `-I`" in reason


@pytest.mark.promise("H2-04")
def test_modified_copy_in_another_venv_is_refused(
    listener: Listener, procs: list[subprocess.Popen[bytes]], tmp_path: Path
) -> None:
    # Same interpreter image, the exact `-I -m tabwarden mcp` entry, but a venv elsewhere whose
    # site-packages holds a modified copy of our code.
    venv = tmp_path / "venv2"
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, capture_output=True
    )
    site = next((venv / "lib").glob("python3*/site-packages"))
    marker = _modified_copy(site)
    proc = spawn(
        procs,
        [str(venv / "bin" / "python"), "-I", "-m", "tabwarden", "mcp"],
        listener.env(),
        cwd="/",
    )
    conn, creds = accept(listener, proc)
    with conn:
        reason = refusal(creds, {"mcp"})
    assert marker.exists()
    assert "is not in our environment" in reason


# ------------------------------------------------------------------------------------ (v)


@pytest.mark.promise("H2-04")
def test_different_interpreter_image_is_refused(
    listener: Listener, procs: list[subprocess.Popen[bytes]], tmp_path: Path
) -> None:
    script = tmp_path / "x.py"
    script.write_text(CONNECT)
    proc = spawn(procs, [other_interpreter(tmp_path), "-I", str(script)], listener.env())
    conn, creds = accept(listener, proc)
    with conn:
        reason = refusal(creds, {"mcp"})
    assert "different interpreter image" in reason


# ----------------------------------------------------------------------------------- (vi)


@pytest.mark.promise("H2-04")
def test_package_modified_in_place_after_start_is_refused(
    listener: Listener, procs: list[subprocess.Popen[bytes]], tmp_path: Path
) -> None:
    # Our measurement's package roots point at a private copy, so that modifying "our installed
    # code" does not touch the checkout other tests run from.
    copy_package_tree(tmp_path / "installed")
    me = measure_self(roots=roots_under(tmp_path / "installed"))
    proc = spawn_mcp(procs, listener)
    conn, creds = accept(listener, proc)
    with conn:
        attest_peer(creds, expected_roles={"mcp"}, measurement=me)  # unchanged: fine
        with open(tmp_path / "installed/tabwarden/host/bridge.py", "a") as fh:
            fh.write("\n# an in-place edit after start\n")
        reason = refusal(creds, {"mcp"}, measurement=me)
    assert "package changed since this process started" in reason


# ---------------------------------------------------------------------------------- (vii)


@pytest.mark.promise("H2-04")
def test_peer_that_exits_after_connecting_is_refused(
    listener: Listener, procs: list[subprocess.Popen[bytes]]
) -> None:
    proc = spawn_mcp(procs, listener)  # the real program, so only its death can refuse it
    conn, creds = accept(listener, proc)
    with conn:
        os.kill(proc.pid, signal.SIGKILL)
        _wait_zombie(proc.pid)
        assert "has exited" in refusal(creds, {"mcp"})  # a zombie still holds the PID
        proc.wait(timeout=60)
        assert "is gone" in refusal(creds, {"mcp"})  # reaped: the PID is free for reuse


def test_peer_dying_during_attestation_is_refused(
    listener: Listener, procs: list[subprocess.Popen[bytes]], monkeypatch: pytest.MonkeyPatch
) -> None:
    # PID reuse simulation: the process pinned at the start is not the one that answers at the
    # end. Kill and reap the peer between measuring and the final pidfd/create-time check.
    proc = spawn_mcp(procs, listener)
    conn, creds = accept(listener, proc)
    real_check = attest_mod._check_package

    def check_then_kill(me: attest_mod.Measurement) -> None:
        real_check(me)
        proc.kill()
        proc.wait(timeout=60)

    monkeypatch.setattr(attest_mod, "_check_package", check_then_kill)
    with conn:
        assert "exited during attestation" in refusal(creds, {"mcp"})


def test_kernel_pidfd_pins_the_connecting_process(
    listener: Listener, procs: list[subprocess.Popen[bytes]], tmp_path: Path
) -> None:
    # SO_PEERPIDFD names the process that connected, so even a recycled PID cannot stand in.
    proc = spawn_mcp(procs, listener)
    conn, creds = accept(listener, proc)
    with conn:
        pidfd = socket_pidfd(conn)
        if pidfd is None:
            pytest.skip("kernel without SO_PEERPIDFD")
        try:
            attest_peer(creds, expected_roles={"mcp"}, pidfd=pidfd)
            proc.kill()
            proc.wait(timeout=60)
            reason = refusal(creds, {"mcp"}, pidfd=pidfd)
        finally:
            os.close(pidfd)
    assert "gone" in reason or "exited" in reason


def _wait_zombie(pid: int) -> None:
    """Until ``pid`` has fully exited but is not reaped (it still holds its PID)."""
    os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)


# --------------------------------------------------------------------------------- entries


@pytest.mark.parametrize(
    ("args", "roles", "expected"),
    [
        (["-I", "-m", "tabwarden", "mcp"], {"mcp"}, None),
        (["-I", "-m", "tabwarden", "host", "--browser", "x", ALLOWED_ORIGIN], {"host"}, None),
        (["-m", "tabwarden", "mcp"], {"mcp"}, "without `-I`"),
        (["-I", "-X", "dev", "-m", "tabwarden", "mcp"], {"mcp"}, "extra interpreter options"),
        (["-I", "-E", "-m", "tabwarden", "mcp"], {"mcp"}, "extra interpreter options"),
        (["-Im", "tabwarden", "mcp"], {"mcp"}, "`-m tabwarden`"),
        (["-I", "-m", "tabwarden"], {"mcp"}, "role not one of"),
        (["-I", "-m", "tabwarden", "status"], {"mcp"}, "role not one of"),
        (["-I", "-m", "evil", "mcp"], {"mcp"}, "the module `evil`"),
        (["-I", "/venv/bin/tabwarden", "mcp"], {"mcp"}, "the script"),
        (["-I", "-"], {"mcp"}, "a script on stdin"),
        (["-I"], {"mcp"}, "the interactive interpreter"),
        (["-I", "-ccode"], {"mcp"}, "`-c` code"),
    ],
)
def test_entry_shapes(args: list[str], roles: set[str], expected: str | None) -> None:
    argv = ["/venv/bin/python", *args]
    if expected is None:
        assert attest_mod._check_entry(1, argv, roles) in roles
    else:
        with pytest.raises(PeerRefused, match=expected.replace("[", r"\[")):
            attest_mod._check_entry(1, argv, roles)


def test_measure_self_covers_the_installed_packages(
    installed_snapshot: Path, measured_at_start: attest_mod.Measurement
) -> None:
    real = measure_self(refresh=True)  # the real installation, as a started process measures it
    assert [name for name, _ in real.package_roots] == list(PACKAGES)
    assert all(os.path.isfile(os.path.join(root, "__init__.py")) for _, root in real.package_roots)
    assert real.interpreter == os.path.normpath(sys.executable)
    with open("/proc/self/exe", "rb") as fh:
        assert real.exe_sha256 == hashlib.sha256(fh.read()).hexdigest()
    snap = roots_under(installed_snapshot)
    assert attest_mod.package_digest(snap) == attest_mod.package_digest(snap)
    (installed_snapshot / "tabwarden" / "__pycache__").mkdir(exist_ok=True)
    (installed_snapshot / "tabwarden" / "__pycache__" / "x.cpython.pyc").write_bytes(b"ignored")
    (installed_snapshot / "tabwarden" / "notes.txt").write_text("ignored too")
    assert attest_mod.package_digest(snap)[0] == measured_at_start.package_digest


def test_unknown_or_foreign_peers_are_refused_without_measuring() -> None:
    assert "pid unknown" in refusal(PeerCredentials(pid=None, uid=os.getuid(), gid=None), {"mcp"})
    assert "not ours" in refusal(
        PeerCredentials(pid=os.getpid(), uid=os.getuid() + 1, gid=0), {"mcp"}
    )
    with pytest.raises(ValueError):
        make_attestor(set())


def test_interpreter_must_be_ours_by_path(tmp_path: Path) -> None:
    me = measure_self()
    attest_mod._check_interpreter_path(1, me.interpreter, me)
    with pytest.raises(PeerRefused, match="not an absolute path"):
        attest_mod._check_interpreter_path(1, "python3", me)
    with pytest.raises(PeerRefused, match="not in our environment"):
        attest_mod._check_interpreter_path(1, str(tmp_path / "bin" / "python"), me)


# ---------------------------------------------------------------------- the non-dumpable host

NO_PTRACE = shutil.which("setpriv")

ATTEST_FROM_UNPRIVILEGED = textwrap.dedent(
    """
    import json, logging, os, socket, sys
    from tabwarden.bridge.attest import PACKAGES, attest_peer, measure_self
    from tabwarden.bridge.peer import PeerRefused, peer_credentials
    base = sys.argv[2]  # the suite's frozen snapshot of our package (see installed_snapshot)
    me = measure_self(roots=tuple((n, os.path.join(base, *n.split("."))) for n in PACKAGES))
    logging.basicConfig(level=logging.INFO, stream=sys.stderr)
    out = {}
    s = socket.socket(socket.AF_UNIX)
    s.connect(sys.argv[1])
    creds = peer_credentials(s)
    try:
        os.open(f"/proc/{creds.pid}/exe", os.O_RDONLY)
        out["exe"] = "readable"
    except PermissionError:
        out["exe"] = "EACCES"
    for roles in (["host"], ["mcp"]):
        try:
            attest_peer(creds, expected_roles=set(roles), measurement=me)
            out[roles[0]] = "attested"
        except PeerRefused as exc:
            out[roles[0]] = str(exc)
    print(json.dumps(out))
    """
)


@pytest.fixture
def real_host(runtime_dir: Path, procs: list[subprocess.Popen[bytes]]) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "TABWARDEN_"))}
    env["TABWARDEN_RUNTIME_DIR"] = str(runtime_dir)
    env["TABWARDEN_CONFIG_DIR"] = str(runtime_dir.parent / "config")  # never the real one
    host = spawn(
        procs,
        [sys.executable, "-I", "-m", "tabwarden", "host", "--browser", LABEL, ALLOWED_ORIGIN],
        env,
        cwd="/",
    )
    deadline = time.monotonic() + 60
    while not (runtime_dir / f"{LABEL}.sock").exists():
        if host.poll() is not None or time.monotonic() > deadline:
            pytest.fail(
                f"host did not start: {host.communicate(timeout=5)[1].decode(errors='replace')}"
            )
        time.sleep(0.02)
    return host


def test_real_host_is_attested_in_full_when_privileged(
    real_host: subprocess.Popen[bytes], runtime_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with (
        socket.socket(socket.AF_UNIX) as s,
        caplog.at_level(logging.INFO, logger="tabwarden.bridge.attest"),
    ):
        s.connect(str(runtime_dir / f"{LABEL}.sock"))
        creds = peer_credentials(s)
        assert creds.pid == real_host.pid
        if os.getuid() != 0:
            pytest.skip("full measurement of the non-dumpable host needs CAP_SYS_PTRACE")
        attest_peer(creds, expected_roles={"host"})
    assert "full" in caplog.text


@pytest.mark.skipif(
    os.getuid() != 0 or NO_PTRACE is None, reason="needs root and setpriv to drop CAP_SYS_PTRACE"
)
def test_non_dumpable_host_falls_back_only_for_the_host_role(
    real_host: subprocess.Popen[bytes], runtime_dir: Path, installed_snapshot: Path
) -> None:
    # Without CAP_SYS_PTRACE we read the hardened host like a normal same-UID user would.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "TABWARDEN_"))}
    result = subprocess.run(  # noqa: S603
        [
            str(NO_PTRACE),
            "--bounding-set",
            "-sys_ptrace",
            "--inh-caps",
            "-sys_ptrace",
            sys.executable,
            "-I",
            "-c",
            ATTEST_FROM_UNPRIVILEGED,
            str(runtime_dir / f"{LABEL}.sock"),
            str(installed_snapshot),
        ],
        env=env,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr.decode(errors="replace")
    out = json.loads(result.stdout)
    assert out["exe"] == "EACCES"  # the hardening is real
    assert out["host"] == "attested"  # cmdline + environment + package + pidfd/create time
    assert "cannot read the interpreter image" in out["mcp"]  # never for another role
    assert "non-dumpable" in result.stderr.decode()


@pytest.mark.skipif(
    os.getuid() != 0 or NO_PTRACE is None, reason="needs root and setpriv to drop CAP_SYS_PTRACE"
)
def test_non_dumpable_impostor_still_needs_our_entry(
    runtime_dir: Path,
    procs: list[subprocess.Popen[bytes]],
    tmp_path: Path,
    installed_snapshot: Path,
) -> None:
    # An impostor that makes itself non-dumpable to dodge the image check still fails the entry.
    script = tmp_path / "impostor.py"
    script.write_text(
        "import ctypes, os, socket\n"
        "ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)\n"
        "s = socket.socket(socket.AF_UNIX); s.bind(os.environ['TW_SOCK']); s.listen()\n"
        "c, _ = s.accept(); c.recv(1)\n"
    )
    sock_path = runtime_dir / "impostor.sock"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    spawn(procs, [sys.executable, "-I", str(script)], dict(env, TW_SOCK=str(sock_path)))
    deadline = time.monotonic() + 60
    while not sock_path.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    result = subprocess.run(  # noqa: S603
        [
            str(NO_PTRACE),
            "--bounding-set",
            "-sys_ptrace",
            "--inh-caps",
            "-sys_ptrace",
            sys.executable,
            "-I",
            "-c",
            ATTEST_FROM_UNPRIVILEGED,
            str(sock_path),
            str(installed_snapshot),
        ],
        env=env,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr.decode(errors="replace")
    out = json.loads(result.stdout)
    assert out["exe"] == "EACCES"
    assert "entry is the script" in out["host"]
