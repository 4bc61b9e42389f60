"""Every OS-specific call on an OS tabwarden has no implementation for: the security calls fail
closed with ``Unsupported`` (an ``OSError``, so each caller's refusal path takes it, and a
``TabwardenError`` with a stable code and a hint where it reaches a person).

The shape of a port: the same names and signatures as ``linux.py`` (tests/test_platform_module.py
holds them together). docs/adr/0020-macos-port.md names each call's macOS counterpart. Nothing is
claimed for an OS until a real run there tests it.
"""

from __future__ import annotations

import socket
import sys

from tabwarden.errors import TabwardenError
from tabwarden.osapi.portable import child_processes, create_time, parent_pid, user_processes
from tabwarden.protocol.codes import BRIDGE_REFUSED

__all__ = [
    "CREDENTIALS_ANCILLARY_SIZE",
    "NAME",
    "RECVMSG_FLAGS",
    "SCM_CREDENTIALS",
    "Unsupported",
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

NAME = "unsupported"
SCM_CREDENTIALS = -1  # no ancillary message ever matches: every chunk is foreign
CREDENTIALS_ANCILLARY_SIZE = 0

HINT = (
    "tabwarden's bridge runs on Linux only for now: nothing is claimed for another OS until a "
    "real run there tests it (docs/adr/0020-macos-port.md)."
)


class Unsupported(TabwardenError, OSError):
    """An OS-specific call has no implementation on this OS: refused (fail closed)."""

    code = BRIDGE_REFUSED
    hint = HINT

    def __new__(cls, what: str, platform: str = sys.platform) -> Unsupported:
        return super().__new__(cls)  # not OSError's (errno, strerror) reading of the arguments

    def __init__(self, what: str, platform: str = sys.platform) -> None:
        message = f"{what} is implemented for Linux only, not {platform}"
        TabwardenError.__init__(self, message, hint=HINT)
        self.strerror = message  # what an OSError handler reports (errno stays None)
        self.args = (message,)

    def __str__(self) -> str:
        return str(self.strerror)


def peer_credentials(sock: socket.socket) -> tuple[int | None, int, int | None]:
    raise Unsupported("reading a socket peer's credentials")


def pass_credentials(sock: socket.socket) -> None:
    raise Unsupported("per-chunk sender credentials (SO_PASSCRED)")


def socket_pin(sock: socket.socket) -> int | None:
    return None  # not offered: the caller falls back to pin_process, which refuses


def pin_process(pid: int) -> int:
    raise Unsupported("pinning a process (pidfd)")


def pin_exited(pin: int) -> bool:
    raise Unsupported("watching a pinned process")


def pin_pid(pin: int) -> int | None:
    raise Unsupported("reading the PID a pin names")


def boot_id() -> str:
    raise Unsupported("reading the boot id")


def start_ticks(pid: int) -> int:
    raise Unsupported("reading a process's start time in ticks")


def executable(pid: int) -> str:
    raise Unsupported("reading a process's executable path")


def open_executable(pid: int) -> int:
    raise Unsupported("opening a process's executable image")


def executable_identity(pid: int) -> tuple[int, int]:
    raise Unsupported("identifying a process's executable image")


def cmdline(pid: int, limit: int) -> bytes:
    raise Unsupported("reading a process's command line")


def environ(pid: int, limit: int) -> bytes:
    raise Unsupported("reading a process's environment")


def cwd(pid: int) -> str:
    raise Unsupported("reading a process's working directory")


def mapped_libpython(pid: int) -> set[tuple[int, int]]:
    raise Unsupported("reading a process's memory map")


def process_uids(pid: int) -> list[int]:
    raise Unsupported("reading a process's UIDs")


def process_owner(pid: int) -> int:
    raise Unsupported("reading who owns a process entry")


def controlling_tty() -> int | None:
    return None  # an extra check on top of the POSIX ones (tcgetpgrp): skipped, as unreadable


def harden_process() -> dict[str, bool]:
    """Only the POSIX part (no core dumps); ``not_dumpable`` stays False, and says so."""
    applied = {"no_core_dumps": False, "not_dumpable": False}
    try:
        import resource  # POSIX only: this module must import on every OS (install's hints)

        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        applied["no_core_dumps"] = True
    except (ImportError, ValueError, OSError):
        pass
    return applied


def keyring_needs_dbus_session() -> bool:
    return False  # D-Bus keyrings are the Linux desktop's; elsewhere the backend's own check


def native_package_triple() -> str | None:
    """No native package is known here: a launcher that needs one cannot be pinned before it
    runs (``client_identity.program_identity`` refuses)."""
    return None


RECVMSG_FLAGS = 0


def exchange_paths(a: str, b: str) -> bool:
    """No one-step swap known here: the caller replaces in two steps."""
    return False
