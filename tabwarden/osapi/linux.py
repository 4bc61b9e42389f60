"""The Linux implementation of every OS-specific call tabwarden makes (docs/adr/0020-macos-port.md).

Each function is one kernel question, answered from ``/proc``, a socket option, ``pidfd_open`` or
``prctl``; nothing here decides anything. Errors are ``OSError`` (``ProcessLookupError`` /
``FileNotFoundError`` when the process is gone, ``PermissionError`` when it is not ours to read),
which every caller already turns into its own refusal. ``tabwarden/osapi/unsupported.py`` has the
same names and signatures (a test holds the two together): a port is a copy of it, filled in.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import platform
import resource
import select
import socket
import struct

from tabwarden.osapi.portable import child_processes, parent_pid, user_processes

__all__ = [
    "CREDENTIALS_ANCILLARY_SIZE",
    "NAME",
    "RECVMSG_FLAGS",
    "SCM_CREDENTIALS",
    "boot_id",
    "child_processes",
    "cmdline",
    "controlling_tty",
    "create_time",
    "cwd",
    "environ",
    "exchange_paths",
    "executable",
    "executable_identity",
    "harden_process",
    "keyring_needs_dbus_session",
    "mapped_libpython",
    "native_package_triple",
    "open_executable",
    "parent_pid",
    "pass_credentials",
    "peer_credentials",
    "pin_exited",
    "pin_pid",
    "pin_process",
    "process_owner",
    "process_uids",
    "socket_pin",
    "start_ticks",
    "user_processes",
]

#: Which implementation this is (``tabwarden.osapi.NAME``).
NAME = "linux"

_PROC = "/proc"

# ----------------------------------------------------------------------------- sockets

_UCRED = struct.Struct("3i")  # struct ucred: pid, uid, gid
#: The ancillary message type the kernel stamps each chunk with once ``pass_credentials`` is on.
SCM_CREDENTIALS: int = socket.SCM_CREDENTIALS
#: Room for exactly one ``SCM_CREDENTIALS`` message (anything more arrives as ``MSG_CTRUNC``).
CREDENTIALS_ANCILLARY_SIZE: int = socket.CMSG_SPACE(_UCRED.size)

SO_PEERPIDFD = getattr(socket, "SO_PEERPIDFD", 77)  # Linux >= 6.5; asm-generic value
_ASM_GENERIC_SOCKOPTS = frozenset(
    {
        "x86_64",
        "i386",
        "i686",
        "aarch64",
        "armv7l",
        "armv8l",
        "riscv64",
        "s390x",
        "ppc64le",
        "loongarch64",
    }
)


def peer_credentials(sock: socket.socket) -> tuple[int | None, int, int | None]:
    """(pid, uid, gid) of the process at the other end of a connected Unix socket, from the
    kernel (``SO_PEERCRED``: what the peer was when it connected, or listened)."""
    raw = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _UCRED.size)
    pid, uid, gid = _UCRED.unpack(raw)
    return pid, uid, gid


def pass_credentials(sock: socket.socket) -> None:
    """Have the kernel stamp every chunk read from ``sock`` with its writer's real credentials
    (``SO_PASSCRED``: an ``SCM_CREDENTIALS`` message per ``recvmsg``)."""
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)


def socket_pin(sock: socket.socket) -> int | None:
    """A pin (pidfd) for the socket's peer straight from the kernel (``SO_PEERPIDFD``, Linux >=
    6.5): no window between ``connect()`` and ``pin_process`` in which the PID could be recycled.
    None when the kernel does not offer it. The caller closes it."""
    if platform.machine() not in _ASM_GENERIC_SOCKOPTS:
        return None  # other architectures number SO_PEERPIDFD differently
    try:
        return int(sock.getsockopt(socket.SOL_SOCKET, SO_PEERPIDFD))
    except OSError:
        return None


# --------------------------------------------------------------------- pinning a process


def pin_process(pid: int) -> int:
    """A pin on the live process ``pid`` (a pidfd): it keeps naming that process after it exits,
    whatever reuses the number. ``ProcessLookupError`` when it is gone. The caller closes it."""
    return os.pidfd_open(pid)


def pin_exited(pin: int) -> bool:
    """Whether the pinned process has exited (a pidfd polls readable then: zombie or reaped)."""
    poller = select.poll()
    poller.register(pin, select.POLLIN)
    return bool(poller.poll(0))


def pin_pid(pin: int) -> int | None:
    """The PID a pin names (``/proc/self/fdinfo``: <= 0 once it exited), None if unreadable."""
    try:
        with open(f"{_PROC}/self/fdinfo/{pin}", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Pid:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return None


# ------------------------------------------------------------------- facts about a process


def boot_id() -> str:
    """This boot's random id (with ``start_ticks``, a process identity no clock change moves)."""
    with open(f"{_PROC}/sys/kernel/random/boot_id", encoding="ascii") as fh:
        return fh.read().strip()


def start_ticks(pid: int) -> int:
    """When ``pid`` started, in clock ticks since boot (``/proc/<pid>/stat`` field 22).
    ``FileNotFoundError`` when it is gone, ``ValueError`` on a malformed line."""
    with open(f"{_PROC}/{pid}/stat", "rb") as fh:
        raw = fh.read()
    # The command name (field 2) may hold spaces and parentheses: split after the last ")".
    fields = raw[raw.rfind(b")") + 2 :].split()
    try:
        return int(fields[19])  # field 22 of the whole line
    except IndexError:
        raise ValueError(f"process {pid} has a malformed stat line") from None


_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def create_time(pid: int) -> float:
    """When ``pid`` started, in seconds since this boot: with the PID, a process's identity
    against reuse. Equal at every read, in every process, while it runs: no clock change moves
    it. It is not a wall-clock time (psutil's is, and adds a boot time that it re-reads at every
    call, so one process could show two). ``ProcessLookupError`` when it is gone."""
    try:
        ticks = start_ticks(pid)
    except FileNotFoundError:
        raise ProcessLookupError(errno.ESRCH, f"no process {pid}") from None
    except ValueError as exc:
        raise OSError(errno.EIO, str(exc)) from None
    return ticks / _CLOCK_TICKS


def executable(pid: int) -> str:
    """The path of the image ``pid`` executes, for display (it may have been replaced since)."""
    return os.readlink(f"{_PROC}/{pid}/exe")


def open_executable(pid: int) -> int:
    """An fd on the very image ``pid`` executes (the ``exe`` magic link, never a path that could
    be swapped), read-only. ``PermissionError`` for a non-dumpable process. The caller closes it."""
    return os.open(f"{_PROC}/{pid}/exe", os.O_RDONLY | os.O_CLOEXEC)


def executable_identity(pid: int) -> tuple[int, int]:
    """(st_dev, st_ino) of the image ``pid`` executes: it changes when the process execs."""
    st = os.stat(f"{_PROC}/{pid}/exe")
    return st.st_dev, st.st_ino


def cmdline(pid: int, limit: int) -> bytes:
    """Up to ``limit`` bytes of ``pid``'s argument vector, NUL-terminated words."""
    with open(f"{_PROC}/{pid}/cmdline", "rb") as fh:
        return fh.read(limit)


def environ(pid: int, limit: int) -> bytes:
    """Up to ``limit`` bytes of ``pid``'s initial environment, NUL-separated ``NAME=value``."""
    with open(f"{_PROC}/{pid}/environ", "rb") as fh:
        return fh.read(limit)


def cwd(pid: int) -> str:
    """``pid``'s working directory (``" (deleted)"`` appended when it was removed)."""
    return os.readlink(f"{_PROC}/{pid}/cwd")


def mapped_libpython(pid: int) -> set[tuple[int, int]]:
    """(dev, ino) of every libpython*.so* file ``pid`` maps: on a shared build the interpreter."""
    found: set[tuple[int, int]] = set()
    with open(f"{_PROC}/{pid}/maps", encoding="utf-8", errors="surrogateescape") as fh:
        for line in fh:
            fields = line.split(maxsplit=5)
            if len(fields) < 6:
                continue
            name = os.path.basename(fields[5].rstrip("\n").removesuffix(" (deleted)"))
            if name.startswith("libpython") and ".so" in name:
                major, minor = (int(part, 16) for part in fields[3].split(":"))
                found.add((os.makedev(major, minor), int(fields[4])))
    return found


def process_uids(pid: int) -> list[int]:
    """``pid``'s real, effective, saved and filesystem UIDs (readable even when non-dumpable)."""
    with open(f"{_PROC}/{pid}/status", encoding="utf-8", errors="replace") as fh:
        for line in fh:
            if line.startswith("Uid:"):
                return [int(v) for v in line.split()[1:]]
    return []


def process_owner(pid: int) -> int:
    """Who owns ``pid``'s per-process files: root for a non-dumpable process, else its UID.

    A file (``status``), not the ``/proc/<pid>`` directory: the kernel leaves a world-readable
    directory owned by the process's effective UID whatever its dumpable flag, so only a root
    process would look non-dumpable there."""
    return os.stat(f"{_PROC}/{pid}/status").st_uid


def controlling_tty() -> int | None:
    """This process's controlling terminal as a device number (``os.makedev`` form, comparable
    with ``st_rdev``; 0 when there is none), from ``/proc/self/stat``; None when unreadable."""
    try:
        with open(f"{_PROC}/self/stat", "rb") as fh:
            raw = fh.read()
        tty_nr = int(raw.rsplit(b")", 1)[1].split()[4])
    except (OSError, IndexError, ValueError):
        return None
    # The kernel's new_encode_dev: minor's low byte, then major, then minor's high bits.
    return os.makedev((tty_nr >> 8) & 0xFFF, (tty_nr & 0xFF) | ((tty_nr >> 12) & 0xFFF00))


# ----------------------------------------------------------------------- hardening ourselves

_PR_SET_DUMPABLE = 4
_PR_GET_DUMPABLE = 3


def harden_process() -> dict[str, bool]:
    """No core dumps (``RLIMIT_CORE`` 0) and not dumpable (``PR_SET_DUMPABLE`` 0: no same-UID
    ptrace without CAP_SYS_PTRACE, ``/proc/<pid>/mem`` and ``exe`` unreadable to others). Best
    effort: the result says what took effect."""
    applied = {"no_core_dumps": False, "not_dumpable": False}
    try:
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        applied["no_core_dumps"] = True
    except (ValueError, OSError):
        pass
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        if libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0) == 0:
            applied["not_dumpable"] = libc.prctl(_PR_GET_DUMPABLE, 0, 0, 0, 0) == 0
    except OSError:
        pass
    return applied


# ------------------------------------------------------------------------------- the keyring


def keyring_needs_dbus_session() -> bool:
    """Whether a D-Bus keyring backend (Secret Service, KWallet) needs a session bus here."""
    return True


def native_package_triple() -> str | None:
    """The target triple an npm launcher picks its native package by (Linux builds are musl:
    ``x86_64-unknown-linux-musl``), or None for an architecture without one."""
    import platform

    machine = platform.machine().lower()
    arch = {"x86_64": "x86_64", "amd64": "x86_64", "aarch64": "aarch64", "arm64": "aarch64"}
    return f"{arch[machine]}-unknown-linux-musl" if machine in arch else None


#: ``recvmsg`` flags for a credentials-stamped read: a passed descriptor never leaks into a child.
RECVMSG_FLAGS = socket.MSG_CMSG_CLOEXEC

_RENAME_EXCHANGE = 2  # linux/fs.h
_AT_FDCWD = -100


def exchange_paths(a: str, b: str) -> bool:
    """Swap the entries ``a`` and ``b`` in one step (``renameat2(RENAME_EXCHANGE)``): True when
    swapped, False where the kernel or file system cannot (the caller falls back), ``OSError``
    for any other failure."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    renameat2.argtypes = [
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.c_uint,
    ]
    renameat2.restype = ctypes.c_int
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
        return False
    raise OSError(err, os.strerror(err))
