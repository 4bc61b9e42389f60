"""Every OS-specific call behind one door: ``tabwarden/osapi/`` (docs/adr/0020-macos-port.md).

The static check reads every module of the package with ``ast`` and fails on an OS-specific call
outside ``tabwarden/osapi/``: a ``/proc`` path, a Linux socket option or ancillary type, a pidfd,
``prctl``, ``renameat2``, ``sys.platform`` / ``platform.system()``, or importing ``psutil`` or
``ctypes``. The Linux implementation is then tested against the real kernel (real child
processes, real sockets, nothing of the kernel mocked), and an OS with no implementation is shown
to refuse every security call with a stable code and a hint (fail closed).
"""

from __future__ import annotations

import ast
import hashlib
import inspect
import json
import os
import pty
import socket
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import tabwarden.osapi as osapi
from tabwarden.osapi import linux, portable, unsupported
from tests.deadline import until_sync
from tests.test_layout import FOLDERS, REPO

#: Attribute or name → what it is. Any use outside the platform module is one finding.
OS_NAMES = {
    "SO_PEERCRED": "Linux peer credentials",
    "SO_PASSCRED": "Linux per-chunk credentials",
    "SO_PEERPIDFD": "Linux peer pidfd",
    "SCM_CREDENTIALS": "Linux credentials message",
    "MSG_CMSG_CLOEXEC": "Linux recvmsg flag",
    "LOCAL_PEERCRED": "BSD peer credentials",
    "LOCAL_PEERPID": "macOS peer pid",
    "pidfd_open": "Linux pidfd",
    "prctl": "Linux prctl",
    "renameat2": "Linux renameat2",
}
#: Modules whose import is an OS-specific call by itself.
OS_MODULES = {"psutil": "the process table", "ctypes": "a C call"}
#: ``module.attr`` reads that pick an OS.
OS_ATTRIBUTES = {
    ("sys", "platform"): "an OS test",
    ("platform", "system"): "an OS test",
    ("platform", "machine"): "an architecture test",
    ("os", "uname"): "an OS test",
}
PLATFORM_MODULE = REPO / "tabwarden" / "osapi"


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the string constants that are docstrings (prose may name /proc)."""
    found = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            value = body[0].value
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                found.add(id(value))
    return found


def os_calls(source: str) -> list[tuple[int, str]]:
    """(line, what) for every OS-specific call in ``source``."""
    tree = ast.parse(source)
    docs = _docstrings(tree)
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names.append(node.module)
                names += [a.name for a in node.names if a.name in OS_NAMES]
            for name in names:
                root = name.split(".")[0]
                if root in OS_MODULES:
                    found.append((node.lineno, f"imports {root} ({OS_MODULES[root]})"))
                elif name in OS_NAMES:
                    found.append((node.lineno, f"{name} ({OS_NAMES[name]})"))
        elif isinstance(node, ast.Attribute):
            if isinstance(node.value, ast.Name) and node.value.id == "osapi":
                continue  # through the door: what it is for
            if node.attr in OS_NAMES:
                found.append((node.lineno, f"{node.attr} ({OS_NAMES[node.attr]})"))
            elif isinstance(node.value, ast.Name) and (node.value.id, node.attr) in OS_ATTRIBUTES:
                what = OS_ATTRIBUTES[(node.value.id, node.attr)]
                found.append((node.lineno, f"{node.value.id}.{node.attr} ({what})"))
        elif isinstance(node, ast.Name) and node.id in OS_NAMES:
            found.append((node.lineno, f"{node.id} ({OS_NAMES[node.id]})"))
        elif (
            isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs
        ):
            if node.value == "/proc" or node.value.startswith("/proc/"):
                found.append((node.lineno, f"a /proc path ({node.value!r})"))
    return sorted(found)


def _our_files() -> Iterator[Path]:
    for folder in FOLDERS:
        for path in sorted((REPO / folder).rglob("*.py")):
            if PLATFORM_MODULE not in path.parents:
                yield path


def test_no_os_specific_call_outside_the_platform_module() -> None:
    found: dict[str, list[str]] = {}
    for path in _our_files():
        calls = os_calls(path.read_text())
        if calls:
            found[str(path.relative_to(REPO))] = [f"{line}: {what}" for line, what in calls]
    assert not found, f"OS-specific calls belong in tabwarden/osapi/: {found}"


def test_the_check_finds_each_kind_of_os_call() -> None:
    sample = textwrap.dedent(
        '''\
        """Reads /proc/self/stat in prose: not a call."""
        import ctypes.util
        import psutil
        import socket, sys, os, platform
        from socket import SO_PEERCRED
        def f(pid):
            """/proc/<pid> in a docstring."""
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
            os.pidfd_open(pid)
            if sys.platform == "darwin" or platform.system() == "Darwin":
                return open(f"/proc/{pid}/exe")
            return "/proc"
        message = "cannot read /proc/1/status"  # prose inside a message: not a path
        '''
    )
    assert [line for line, _ in os_calls(sample)] == [2, 3, 5, 8, 9, 10, 10, 11, 12]


# ------------------------------------------------------------------------------ the interface


def _public(module: ModuleType) -> dict[str, Any]:
    return {name: getattr(module, name) for name in module.__all__}


def test_every_implementation_offers_the_same_calls_with_the_same_signatures() -> None:
    ours, fallback = _public(linux), _public(unsupported)
    fallback.pop("Unsupported")
    assert set(ours) == set(fallback)
    for name, value in ours.items():
        if callable(value):
            assert inspect.signature(value) == inspect.signature(fallback[name]), name
    # The door re-exports exactly one implementation's calls: this OS's.
    assert osapi.NAME == "linux" and osapi.SUPPORTED
    for name, value in ours.items():
        assert getattr(osapi, name) is value, name
    assert set(ours) <= set(osapi.__all__), "the door lists every call it re-exports"


#: The calls an OS without an implementation answers without refusing, and why it may.
NOT_REFUSED = {
    "socket_pin": None,  # "not offered": the caller pins with pin_process, which refuses
    "controlling_tty": None,  # an extra check on top of POSIX tcgetpgrp ones: skipped
    "keyring_needs_dbus_session": False,  # a Linux desktop's D-Bus keyrings only
    "native_package_triple": None,  # no native package known: pinning before run refuses
    "exchange_paths": False,  # no one-step swap: the extension copy is replaced in two steps
}


def test_an_os_without_an_implementation_refuses_every_security_call() -> None:
    a, b = socket.socketpair()
    with a, b:
        args = {"sock": a, "pid": os.getpid(), "pin": 0, "limit": 10, "a": "/x", "b": "/y"}
        for name, value in _public(unsupported).items():
            if not inspect.isfunction(value) or getattr(portable, name, None) is value:
                continue  # the psutil calls are the same everywhere psutil runs
            if name == "harden_process":
                assert value()["not_dumpable"] is False  # says it did not take effect
                continue
            params = inspect.signature(value).parameters
            call = {p: args[p] for p in params}
            if name in NOT_REFUSED:
                assert value(**call) == NOT_REFUSED[name], name
                continue
            with pytest.raises(unsupported.Unsupported) as refused:
                value(**call)
            assert isinstance(refused.value, OSError)  # every caller's refusal path takes it
            assert refused.value.code == "bridge_refused"
            assert "Linux only" in str(refused.value) and "0020-macos-port" in refused.value.hint


def test_on_another_os_the_bridge_refuses_and_says_why() -> None:
    """As a macOS process would, minus the kernel: the door picks no implementation, and peer
    credentials, speaker binding, attestation, client pinning and session naming all refuse."""
    code = textwrap.dedent(
        """
        import json, os, socket, sys
        import psutil  # (psutil picks its own implementation by sys.platform: load it first)
        sys.platform = "darwin"
        from tabwarden import osapi
        from tabwarden.bridge import attest, client_identity, peer
        from tabwarden.host import sessions
        assert osapi.NAME == "unsupported" and not osapi.SUPPORTED
        a, b = socket.socketpair()
        out = {}
        creds = peer.PeerCredentials(pid=os.getpid(), uid=os.getuid(), gid=None)
        attempts = {
            "peer_credentials": lambda: peer.peer_credentials(a),
            "pin_speaker": lambda: peer.pin_speaker(a, creds),
            "attest_peer": lambda: attest.attest_peer(creds, expected_roles={"mcp"}),
            "measure_self": lambda: attest.measure_self(refresh=True),
            "spawner": lambda: client_identity._Pin(os.getppid()),
            "session": lambda: sessions.measure_session(os.getpid()),
        }
        for name, attempt in attempts.items():
            try:
                attempt()
                out[name] = "allowed"
            except Exception as exc:
                out[name] = [getattr(exc, "code", type(exc).__name__), str(exc), exc.hint]
        print(json.dumps(out))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    codes = {name: code for name, (code, _, _) in out.items()}
    assert codes == {
        "peer_credentials": "bridge_refused",
        "pin_speaker": "bridge_refused",
        "attest_peer": "bridge_refused",
        "measure_self": "internal_error",  # our own start: the process stops, saying why
        "spawner": "client_not_paired",  # no client can be measured, so none is paired
        "session": "bridge_refused",
    }
    for name, (code, message, hint) in out.items():
        assert "is implemented for Linux only, not darwin" in message, (name, message)
        if code == "bridge_refused":
            assert "docs/adr/0020-macos-port.md" in hint, (name, hint)


def test_the_door_opens_on_an_os_without_posix_resource_limits() -> None:
    """Windows has no ``resource`` module: the door still imports there (install's hints need it)
    and hardening says it did nothing."""
    code = (
        "import sys\n"
        "import psutil\n"
        "sys.modules['resource'] = None\n"
        "sys.platform = 'win32'\n"
        "from tabwarden import osapi\n"
        "print(osapi.NAME, osapi.harden_process())\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[0] == (
        "unsupported {'no_core_dumps': False, 'not_dumpable': False}"
    )


# ---------------------------------------------------------------- the Linux implementation


def _child(*argv: str, **kw: object) -> subprocess.Popen[bytes]:
    """A Python child; with ``WAIT_FOR_STDIN`` it runs (its libraries mapped) until stdin closes."""
    child: subprocess.Popen[bytes] = subprocess.Popen([sys.executable, "-c", *argv], **kw)  # type: ignore[call-overload]
    if argv[0] == WAIT_FOR_STDIN:
        assert child.stdout is not None and child.stdout.readline() == b"ready\n"
    return child


WAIT_FOR_STDIN = "import sys; print('ready', flush=True); sys.stdin.read()"


def test_peer_credentials_name_the_process_at_the_other_end(tmp_path: Path) -> None:
    path = str(tmp_path / "s")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(1)
    connect = f"import socket, sys; s = socket.socket(socket.AF_UNIX); s.connect({path!r}); "
    child = _child(
        connect + "s.sendall(b'x'); sys.stdin.read()", stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    try:
        conn, _ = listener.accept()
        with conn:
            assert linux.peer_credentials(conn) == (child.pid, os.getuid(), os.getgid())
            pin = linux.socket_pin(conn)  # Linux >= 6.5 offers it on the architectures we know
            major, minor = (int(n) for n in os.uname().release.split(".")[:2])
            assert (pin is not None) == ((major, minor) >= (6, 5))
            if pin is not None:
                try:
                    assert linux.pin_pid(pin) == child.pid
                finally:
                    os.close(pin)
    finally:
        assert child.stdin is not None
        child.stdin.close()
        child.wait(timeout=60)
        listener.close()


def test_pass_credentials_stamps_each_chunk_with_its_writer() -> None:
    a, b = socket.socketpair()
    with a, b:
        linux.pass_credentials(a)
        writer = subprocess.Popen(
            [sys.executable, "-c", "import os; os.write(int(os.environ['FD']), b'hi')"],
            pass_fds=[b.fileno()],
            env={**os.environ, "FD": str(b.fileno())},
        )
        data, ancillary, flags, _ = a.recvmsg(16, linux.CREDENTIALS_ANCILLARY_SIZE)
        writer.wait(timeout=60)
    assert data == b"hi" and not flags & socket.MSG_CTRUNC
    [(level, kind, raw)] = ancillary
    assert (level, kind) == (socket.SOL_SOCKET, linux.SCM_CREDENTIALS)
    assert raw[:8] == writer.pid.to_bytes(4, sys.byteorder) + os.getuid().to_bytes(4, sys.byteorder)


def test_a_pin_names_its_process_until_it_exits() -> None:
    child = _child(WAIT_FOR_STDIN, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    pin = linux.pin_process(child.pid)
    try:
        assert linux.pin_pid(pin) == child.pid and not linux.pin_exited(pin)
        started = linux.create_time(child.pid)
        assert linux.create_time(child.pid) == started > 0
        assert linux.parent_pid(child.pid) == os.getpid()
        child.kill()
        until_sync("the pin says its process exited", lambda: linux.pin_exited(pin))
        child.wait(timeout=60)  # reaped: the PID is free for anyone now
        assert (linux.pin_pid(pin) or 0) <= 0
        with pytest.raises(ProcessLookupError):
            linux.create_time(child.pid)
        with pytest.raises(ProcessLookupError):
            linux.pin_process(child.pid)
    finally:
        os.close(pin)


def test_a_process_start_does_not_move_with_the_boot_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """/proc/stat's boot time is the wall clock less the uptime, in whole seconds: it can read one
    second apart from one call to the next. psutil's create time adds it, so one living process
    once read as "replaced (PID reused)" at hop 1. Ours must not read it at all."""
    import psutil._pslinux

    boot = iter(range(1_700_000_000, 1_800_000_000))
    monkeypatch.setattr(psutil._pslinux, "boot_time", lambda: float(next(boot)))
    monkeypatch.setattr(psutil, "boot_time", lambda: float(next(boot)))
    child = _child(WAIT_FOR_STDIN, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        started = linux.create_time(child.pid)
        assert all(linux.create_time(child.pid) == started for _ in range(3))
        assert started == linux.start_ticks(child.pid) / os.sysconf("SC_CLK_TCK")
        assert osapi.create_time(child.pid) == started
    finally:
        child.kill()
        child.wait(timeout=60)


def test_start_ticks_and_boot_id_identify_a_process_within_a_boot() -> None:
    boot = linux.boot_id()
    assert boot == linux.boot_id() and len(boot) == 36
    child = _child(WAIT_FOR_STDIN, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        ticks = linux.start_ticks(child.pid)
        assert ticks == linux.start_ticks(child.pid) >= linux.start_ticks(os.getpid())
    finally:
        child.kill()
        child.wait(timeout=60)
    with pytest.raises(FileNotFoundError):
        linux.start_ticks(child.pid)


def test_what_a_process_executes_where_and_with_what(tmp_path: Path) -> None:
    child = _child(
        WAIT_FOR_STDIN,
        "the-marker",
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        cwd=tmp_path,
        env={"TW_MARK": "here", "PATH": os.environ.get("PATH", "")},
    )
    try:
        image = os.path.realpath(sys.executable)
        assert linux.executable(child.pid) == image
        st = os.stat(image)
        assert linux.executable_identity(child.pid) == (st.st_dev, st.st_ino)
        fd = linux.open_executable(child.pid)
        try:
            whole = b""
            while chunk := os.read(fd, 1 << 20):
                whole += chunk
        finally:
            os.close(fd)
        assert hashlib.sha256(whole).digest() == hashlib.sha256(Path(image).read_bytes()).digest()
        assert linux.cmdline(child.pid, 1 << 16) == b"\0".join(
            os.fsencode(a) for a in (sys.executable, "-c", WAIT_FOR_STDIN, "the-marker", "")
        )
        assert linux.cmdline(child.pid, 4) == os.fsencode(sys.executable)[:4]
        assert b"TW_MARK=here\0" in linux.environ(child.pid, 1 << 16)
        assert linux.cwd(child.pid) == str(tmp_path.resolve())
        assert linux.mapped_libpython(child.pid) == linux.mapped_libpython(os.getpid())
        assert linux.process_uids(child.pid) == [os.getuid()] * 4
        assert linux.process_owner(child.pid) == os.getuid()  # dumpable: its own entries
        assert (child.pid, [sys.executable, "-c", WAIT_FOR_STDIN, "the-marker"]) in (
            linux.child_processes(os.getpid())
        )
        assert (child.pid, [sys.executable, "-c", WAIT_FOR_STDIN, "the-marker"]) in (
            linux.user_processes(os.getuid())
        )
    finally:
        child.kill()
        child.wait(timeout=60)
    with pytest.raises(FileNotFoundError):
        linux.cmdline(child.pid, 10)


def test_a_zombie_is_no_users_process() -> None:
    child = _child("pass")
    try:
        until_sync(
            "the child is a zombie",
            lambda: b") Z " in Path(f"/proc/{child.pid}/stat").read_bytes(),
        )
        assert child.pid not in [pid for pid, _ in linux.user_processes(os.getuid())]
    finally:
        child.wait(timeout=60)


HARDEN = """
import ctypes, json, os, resource, sys
from tabwarden.osapi import linux
libc = ctypes.CDLL(None)
if os.getuid() == 0:  # as root every /proc entry is root's: become a plain user to tell
    os.setresgid(65534, 65534, 65534)
    os.setresuid(65534, 65534, 65534)
    libc.prctl(4, 1, 0, 0, 0)  # the credential change cleared the flag: a plain process again
print(json.dumps({"uid": os.getuid(), "dumpable": libc.prctl(3, 0, 0, 0, 0)}), flush=True)
sys.stdin.readline()
applied = linux.harden_process()
print(json.dumps({"applied": applied, "core": resource.getrlimit(resource.RLIMIT_CORE),
                  "dumpable": libc.prctl(3, 0, 0, 0, 0)}), flush=True)
sys.stdin.read()
"""


def test_hardening_takes_effect_and_hides_the_process_from_its_own_user() -> None:
    child = _child(HARDEN, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert child.stdin is not None and child.stdout is not None
        before = json.loads(child.stdout.readline())
        assert before["dumpable"] == 1 and before["uid"] != 0
        child.stdin.write(b"harden\n")
        child.stdin.flush()
        after = json.loads(child.stdout.readline())
        assert after == {
            "applied": {"no_core_dumps": True, "not_dumpable": True},
            "core": [0, 0],
            "dumpable": 0,
        }
        # Its /proc entries are root's now, not its user's. (Looked up only now: the kernel keeps
        # the owner a first lookup of /proc/<pid> saw, and does not revise it when dumpable drops.)
        assert linux.process_owner(child.pid) == 0
        assert linux.process_uids(child.pid) == [before["uid"]] * 4  # still readable
    finally:
        child.kill()
        child.wait(timeout=60)


#: Become a plain user when run as root (after every import: the interpreter's own files may be
#: root's), and be dumpable again, as a plain process is (the credential change cleared the flag).
AS_A_PLAIN_USER = """
import ctypes, os
if os.getuid() == 0:
    os.setresgid(65534, 65534, 65534)
    os.setresuid(65534, 65534, 65534)
    ctypes.CDLL(None).prctl(4, 1, 0, 0, 0)
"""
HARDENED = (
    """
import json, sys
from tabwarden.osapi import linux
"""
    + AS_A_PLAIN_USER
    + """
print(json.dumps(linux.harden_process()), flush=True)
sys.stdin.read()
"""
)
READER = (
    """
import json, sys
from tabwarden.bridge import attest
"""
    + AS_A_PLAIN_USER
    + """
pid = int(sys.argv[1])
try:
    os.close(os.open(f"/proc/{pid}/exe", os.O_RDONLY))
    exe = "readable"
except PermissionError:
    exe = "EACCES"
print(json.dumps({
    "exe": exe,
    "hardened": attest._non_dumpable_signature(pid, os.getuid()),
    "itself": attest._non_dumpable_signature(os.getpid(), os.getuid()),
}))
"""
)


def test_the_hardened_host_shows_its_own_user_the_non_dumpable_signature() -> None:
    """What attestation's fallback reads when a plain user's MCP server meets the hardened host:
    the image unreadable, every UID its own, its per-process files root's."""
    host = _child(HARDENED, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert host.stdout is not None
        assert json.loads(host.stdout.readline()) == {"no_core_dumps": True, "not_dumpable": True}
        read = subprocess.run(
            [sys.executable, "-c", READER, str(host.pid)],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    finally:
        host.kill()
        host.wait(timeout=60)
    assert read.returncode == 0, read.stderr
    assert json.loads(read.stdout) == {
        "exe": "EACCES",  # the hardening is real, for a reader without CAP_SYS_PTRACE
        "hardened": None,  # ... and it is recognised as ours, hardened
        "itself": "image unreadable although the process is dumpable "
        "(its /proc entries are not root-owned)",  # a dumpable process never is
    }


TTY = """
import fcntl, json, os, termios
from tabwarden.osapi import linux
before = linux.controlling_tty()
fcntl.ioctl(0, termios.TIOCSCTTY, 0)
print(json.dumps([before, linux.controlling_tty(), os.fstat(0).st_rdev]), flush=True)
"""


def test_the_controlling_terminal_is_the_device_stdin_is() -> None:
    main, secondary = pty.openpty()
    try:
        child = subprocess.Popen(
            [sys.executable, "-c", TTY],
            stdin=secondary,
            stdout=subprocess.PIPE,
            start_new_session=True,  # no terminal until it takes this one
        )
        assert child.stdout is not None
        before, after, rdev = json.loads(child.stdout.readline())
        child.wait(timeout=60)
    finally:
        os.close(secondary)
        os.close(main)
    assert before == 0 and after == rdev != 0


def test_a_process_that_does_not_exist_is_an_error_not_an_answer() -> None:
    never = 2**22 + 1  # above pid_max's ceiling: never a process
    for call in (linux.open_executable, linux.executable, linux.cwd, linux.process_owner):
        with pytest.raises(FileNotFoundError):
            call(never)
    with pytest.raises(ProcessLookupError):
        linux.create_time(never)
    with pytest.raises(ProcessLookupError):
        linux.pin_process(never)
