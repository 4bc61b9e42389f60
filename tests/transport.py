"""Breaking a real transport from outside, for the chaos and retry tests: no test hook in the
program under test, only what an operating system can do to a running process.

``drop_bridge_connections`` shuts down, from this (root) test process, every connection the host
process accepted on its bridge socket: it borrows the host's socket descriptors with
``pidfd_getfd(2)`` and calls ``shutdown(SHUT_RDWR)`` on them, which ends the connection for both
ends exactly as a network fault would. Linux only (5.6+), and ptrace rights over the host.
"""

from __future__ import annotations

import ctypes
import os
import socket
from pathlib import Path

_SYS_PIDFD_GETFD = 438  # the same number on x86-64 and arm64
_SS_CONNECTED = "03"


def _connected_inodes(socket_path: Path) -> set[str]:
    """Inodes of the connected sockets bound to ``socket_path`` (the host's accepted ends)."""
    inodes = set()
    for line in Path("/proc/net/unix").read_text().splitlines()[1:]:
        # Num RefCount Protocol Flags Type St Inode Path
        parts = line.split()
        if len(parts) >= 8 and parts[7] == str(socket_path) and parts[5] == _SS_CONNECTED:
            inodes.add(parts[6])
    return inodes


def drop_bridge_connections(host_pid: int, socket_path: Path) -> int:
    """Shut down every bridge connection the host ``host_pid`` holds; how many it dropped."""
    names = {f"socket:[{inode}]" for inode in _connected_inodes(socket_path)}
    fds = []
    for entry in Path(f"/proc/{host_pid}/fd").iterdir():
        try:
            if os.readlink(entry) in names:
                fds.append(int(entry.name))
        except OSError:
            continue
    libc = ctypes.CDLL(None, use_errno=True)
    pidfd = os.pidfd_open(host_pid)
    try:
        for fd in fds:
            borrowed = libc.syscall(_SYS_PIDFD_GETFD, pidfd, fd, 0)
            if borrowed < 0:
                raise OSError(ctypes.get_errno(), "pidfd_getfd failed")
            sock = socket.socket(fileno=borrowed)
            try:
                sock.shutdown(socket.SHUT_RDWR)
            finally:
                sock.close()
    finally:
        os.close(pidfd)
    return len(fds)


def listener_pid(socket_path: Path) -> int | None:
    """The PID of the process listening on ``socket_path`` (the host), or None."""
    names = set()
    for line in Path("/proc/net/unix").read_text().splitlines()[1:]:
        parts = line.split()
        if len(parts) >= 8 and parts[7] == str(socket_path) and parts[5] == "01":
            names.add(f"socket:[{parts[6]}]")
    if not names:
        return None
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            for entry in (proc / "fd").iterdir():
                if os.readlink(entry) in names:
                    return int(proc.name)
        except OSError:
            continue
    return None
