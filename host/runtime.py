"""The host's files in the runtime directory: lock, run secret, listening socket.

One host per browser label holds ``<label>.lock`` for its whole life, so whatever socket or
secret it finds under that label at start is stale and is replaced. The run secret is 32 fresh
bytes written to a file created with O_CREAT|O_EXCL|O_NOFOLLOW, mode 0600; the socket is bound
under umask 0177. On exit both are removed, but only if they are still the files this run made
(compared by device and inode), so a host never deletes a successor's files.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import secrets
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass

from tabwarden.errors import TabwardenError
from tabwarden.paths import HostEndpoint
from tabwarden.protocol.codes import HOST_ALREADY_RUNNING
from tabwarden.protocol.handshake import SECRET_SIZE

LOCK_WAIT_SECONDS = 5.0


class HostAlreadyRunning(TabwardenError):
    """Another tabwarden host is already serving this browser label."""

    code = HOST_ALREADY_RUNNING
    exit_status = 3
    hint = "Close the other browser using this label, or install with a different --browser label."


@dataclass(frozen=True, slots=True)
class _FileId:
    dev: int
    ino: int

    @classmethod
    def of(cls, st: os.stat_result) -> _FileId:
        return cls(st.st_dev, st.st_ino)


def _acquire_lock(path: str, wait: float) -> int:
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    deadline = time.monotonic() + wait
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except OSError as exc:
            if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN):
                os.close(fd)
                raise
        if time.monotonic() >= deadline:
            os.close(fd)
            raise HostAlreadyRunning()
        time.sleep(0.05)  # a predecessor is still shutting down; its lock is released at exit


def _unlink_if_same(path: str, ident: _FileId | None) -> None:
    if ident is None:
        return
    try:
        if _FileId.of(os.lstat(path)) == ident:
            os.unlink(path)
    except FileNotFoundError:
        pass


def _write_secret(path: str) -> tuple[bytes, _FileId]:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)  # stale: we hold the label's lock
    secret = secrets.token_bytes(SECRET_SIZE)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        os.write(fd, secret)
        os.fsync(fd)
        return secret, _FileId.of(os.fstat(fd))
    finally:
        os.close(fd)


def _bind_socket(path: str) -> tuple[socket.socket, _FileId]:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)
    try:
        sock.bind(path)
    except BaseException:
        sock.close()
        raise
    finally:
        os.umask(old)
    sock.listen(16)
    sock.setblocking(False)
    return sock, _FileId.of(os.lstat(path))


@dataclass
class HostFiles:
    endpoint: HostEndpoint
    secret: bytes
    listener: socket.socket


@contextlib.contextmanager
def host_files(
    endpoint: HostEndpoint, *, lock_wait: float = LOCK_WAIT_SECONDS
) -> Iterator[HostFiles]:
    """Hold the label's lock, create secret and socket; remove both on exit."""
    lock_fd = _acquire_lock(str(endpoint.lock), lock_wait)
    secret_id: _FileId | None = None
    socket_id: _FileId | None = None
    listener: socket.socket | None = None
    try:
        secret, secret_id = _write_secret(str(endpoint.secret))
        listener, socket_id = _bind_socket(str(endpoint.socket))
        yield HostFiles(endpoint=endpoint, secret=secret, listener=listener)
    finally:
        if listener is not None:
            listener.close()
        _unlink_if_same(str(endpoint.socket), socket_id)
        _unlink_if_same(str(endpoint.secret), secret_id)
        os.close(lock_fd)  # releases the flock
