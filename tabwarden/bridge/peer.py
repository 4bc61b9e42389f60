"""Kernel peer credentials for the bridge socket — hop 2's first guard, used by both ends.

``peer_credentials`` asks the kernel (``SO_PEERCRED`` on Linux, ``LOCAL_PEERCRED`` on macOS) who is
on the other end of a connected Unix socket. ``require_same_uid`` refuses anyone but our own UID.
It must be called before a single byte is read from the peer; when the platform cannot answer,
it refuses (fail closed).

``PeerAttestor`` is the seam for executable attestation (the next step in the connection order):
a callable that receives the peer's credentials and raises ``PeerRefused`` unless the process is
our program. This module does not pretend to attest anything by itself.

``pin_speaker`` binds a connection to the process its credentials name (docs/adr/0001, "speaker
binding"): a pidfd taken from the socket itself (``SO_PEERPIDFD``), the ``(st_dev, st_ino)`` of
its executable, and ``SO_PASSCRED`` so that the kernel stamps every chunk the peer writes with
the sender's real PID. ``Speaker.foreign_chunk`` and ``Speaker.changed`` are the per-chunk and
per-frame checks ``FrameStream`` makes. Linux only; elsewhere pinning refuses (fail closed).
"""

from __future__ import annotations

import errno
import os
import select
import socket
import struct
from collections.abc import Callable
from dataclasses import dataclass, field

from tabwarden import osapi
from tabwarden.errors import TabwardenError
from tabwarden.protocol.codes import BRIDGE_REFUSED


class PeerRefused(TabwardenError):
    """The process at the other end of the bridge socket is not allowed."""

    code = BRIDGE_REFUSED


@dataclass(frozen=True, slots=True)
class PeerCredentials:
    pid: int | None
    uid: int
    gid: int | None
    #: A pidfd pinning ``pid`` (owned by the connection's ``Speaker``), when one was taken.
    pidfd: int | None = field(default=None, compare=False)


PeerAttestor = Callable[[PeerCredentials], None]


def peer_credentials(sock: socket.socket) -> PeerCredentials:
    """The connected peer's credentials, from the kernel; raises ``PeerRefused`` if unknowable."""
    try:
        pid, uid, gid = osapi.peer_credentials(sock)
    except osapi.Unsupported as exc:
        raise PeerRefused(str(exc), hint=exc.hint) from None
    except (OSError, struct.error) as exc:
        raise PeerRefused(f"cannot read peer credentials: {exc.__class__.__name__}") from None
    return PeerCredentials(pid=pid, uid=uid, gid=gid)


def require_same_uid(sock: socket.socket) -> PeerCredentials:
    creds = peer_credentials(sock)
    if creds.uid != os.getuid():
        raise PeerRefused(f"peer uid {creds.uid} is not ours ({os.getuid()})")
    return creds


# ---------------------------------------------------------------------------- pidfds


def socket_pidfd(sock: socket.socket) -> int | None:
    """A pidfd for the socket's peer straight from the kernel (SO_PEERPIDFD, Linux >= 6.5).

    This closes the window between ``connect()`` and ``pidfd_open`` in which the peer could exit
    and its PID be recycled. None when the kernel does not offer it. The caller closes the fd.
    """
    return osapi.socket_pin(sock)


def pidfd_exited(pidfd: int) -> bool:
    """A pidfd polls readable once its process has exited (zombie or reaped)."""
    return osapi.pin_exited(pidfd)


# ------------------------------------------------------------------------- the speaker


#: ``struct ucred`` as ``SCM_CREDENTIALS`` carries it: pid, uid, gid.
UCRED = struct.Struct("3i")
_PID_UID = struct.Struct("2i")
_SOL_SOCKET = socket.SOL_SOCKET
_MSG_CTRUNC = socket.MSG_CTRUNC
_SCM_CREDENTIALS = osapi.SCM_CREDENTIALS
#: Room for exactly one ``SCM_CREDENTIALS`` message: anything more (file descriptors the peer
#: tried to pass) does not fit and arrives as ``MSG_CTRUNC``, which the reader refuses.
CREDS_ANCILLARY_SIZE = osapi.CREDENTIALS_ANCILLARY_SIZE


class Speaker:
    """The one process allowed to write on a bridge connection: the attested peer.

    Pinned right after ``accept`` / ``connect``, before a byte is read (``pin_speaker``). Owns
    its pidfd; ``close`` releases it. The checks hold no secret and make no allocation beyond
    the log reason: ``foreign_chunk`` is an integer compare per ``recvmsg``, ``changed`` one
    ``poll`` and one ``stat`` per frame.
    """

    __slots__ = ("_poller", "_stamp", "exe", "pid", "pidfd", "uid")

    def __init__(self, pid: int, uid: int, pidfd: int, exe: tuple[int, int] | None) -> None:
        self.pid = pid
        self.uid = uid
        self.pidfd = pidfd
        #: ``(st_dev, st_ino)`` of ``pid``'s image when pinned; None where it is unreadable
        #: (a non-dumpable peer: the host seen from an unprivileged MCP server).
        self.exe = exe
        self._stamp = _PID_UID.pack(pid, uid)  # what the kernel's ucred starts with
        self._poller = select.poll()
        if pidfd >= 0:
            self._poller.register(pidfd, select.POLLIN)

    def credentials(self) -> PeerCredentials:
        return PeerCredentials(pid=self.pid, uid=self.uid, gid=None, pidfd=self.pidfd)

    def foreign_chunk(self, ancillary: list[tuple[int, int, bytes]], flags: int) -> str | None:
        """Why one chunk (one ``recvmsg``) did not come from the pinned process, or None.

        The kernel never returns bytes of two different writers from one ``recvmsg`` on a
        ``SO_PASSCRED`` socket, so the credentials it attaches describe every byte returned.
        """
        if not flags & _MSG_CTRUNC and len(ancillary) == 1:  # a good chunk's one shape
            level, kind, data = ancillary[0]
            if level == _SOL_SOCKET and kind == _SCM_CREDENTIALS and data[:8] == self._stamp:
                return None
        return self._why_foreign(ancillary, flags)

    def _why_foreign(self, ancillary: list[tuple[int, int, bytes]], flags: int) -> str | None:
        if flags & _MSG_CTRUNC:
            return "a chunk carried ancillary data beyond its credentials (file descriptors?)"
        creds = None
        for level, kind, data in ancillary:
            if level == _SOL_SOCKET and kind == _SCM_CREDENTIALS:
                if creds is not None or len(data) < UCRED.size:
                    return "a chunk carried malformed kernel credentials"
                creds = UCRED.unpack_from(data)
            else:
                return f"a chunk carried unexpected ancillary data (level {level}, type {kind})"
        if creds is None:
            return "a chunk arrived without kernel credentials (SO_PASSCRED not in effect)"
        pid, uid, _gid = creds
        if pid == 0:
            return (
                "a chunk came from a process the kernel cannot name here (pid 0: no credentials "
                "or another PID namespace)"
            )
        if pid != self.pid:
            return (
                f"a frame came from pid {pid}, not the attested pid {self.pid} "
                "(socket handed to another process)"
            )
        if uid != self.uid:
            return f"a frame came from uid {uid}, not the attested uid {self.uid}"
        return None

    def changed(self) -> str | None:
        """Why the pinned process can no longer vouch for its frames, or None: it exited (its
        PID could be recycled) or it executes another image than the one pinned (it exec'd).
        The image is read first, then the pidfd: alive afterwards means the read described the
        pinned process."""
        if self.exe is not None:
            try:
                exe = osapi.executable_identity(self.pid)
            except OSError as exc:
                if self._exited():
                    return f"the attested pid {self.pid} has exited"
                return f"cannot re-check the image of the attested pid {self.pid} ({exc.strerror})"
            if exe != self.exe:
                return (
                    f"the attested pid {self.pid} now executes another program "
                    "(it exec'd after it was attested)"
                )
        if self._exited():
            return f"the attested pid {self.pid} has exited"
        return None

    def _exited(self) -> bool:
        return self.pidfd < 0 or bool(self._poller.poll(0))

    def close(self) -> None:
        if self.pidfd >= 0:
            fd, self.pidfd = self.pidfd, -1
            self._poller.unregister(fd)
            os.close(fd)


def _exe_identity(pid: int) -> tuple[int, int] | None:
    try:
        return osapi.executable_identity(pid)
    except PermissionError as exc:
        if exc.errno in (errno.EACCES, errno.EPERM):
            return None  # non-dumpable: pid binding only
        raise


def pin_speaker(sock: socket.socket, creds: PeerCredentials) -> Speaker:
    """Bind ``sock`` to the process ``creds`` names; raises ``PeerRefused`` when it cannot.

    The pidfd comes from the socket (``SO_PEERPIDFD``: the very process that connected — or, on
    the client side, that listened), else ``pidfd_open`` right away. ``SO_PASSCRED`` is switched
    on (idempotent: the host's listener and the client's socket already have it before any byte
    can be sent, which older kernels need for early bytes to carry credentials).
    """
    if not osapi.SUPPORTED:
        raise PeerRefused(str(osapi.Unsupported("speaker binding (SO_PASSCRED)")), hint=osapi.HINT)
    pid = creds.pid
    if pid is None or pid <= 0:
        raise PeerRefused("peer pid unknown: cannot bind the connection to it")
    try:
        osapi.pass_credentials(sock)
    except OSError as exc:
        raise PeerRefused(f"cannot switch on SO_PASSCRED: {exc.strerror}") from None
    pidfd = socket_pidfd(sock)
    if pidfd is None:
        try:
            pidfd = osapi.pin_process(pid)
        except ProcessLookupError:
            raise PeerRefused(
                f"peer pid {pid} is gone (exited before it could be pinned)"
            ) from None
        except OSError as exc:
            raise PeerRefused(f"cannot pin peer pid {pid} (pidfd_open: {exc.strerror})") from None
    try:
        exe = _exe_identity(pid)
        speaker = Speaker(pid, creds.uid, pidfd, exe)
        why = speaker.changed()
        if why is not None:
            raise PeerRefused(why)
    except OSError as exc:
        os.close(pidfd)
        raise PeerRefused(f"cannot pin peer pid {pid}: {exc.strerror or exc}") from None
    except PeerRefused:
        os.close(pidfd)
        raise
    return speaker
