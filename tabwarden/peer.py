"""Kernel peer credentials for the bridge socket — hop 2's first guard, used by both ends.

``peer_credentials`` asks the kernel (``SO_PEERCRED`` on Linux, ``LOCAL_PEERCRED`` on macOS) who is
on the other end of a connected Unix socket. ``require_same_uid`` refuses anyone but our own UID.
It must be called before a single byte is read from the peer; when the platform cannot answer,
it refuses (fail closed).

``PeerAttestor`` is the seam for executable attestation (the next step in the connection order):
a callable that receives the peer's credentials and raises ``PeerRefused`` unless the process is
our program. This module does not pretend to attest anything by itself.
"""

from __future__ import annotations

import os
import socket
import struct
import sys
from collections.abc import Callable
from dataclasses import dataclass

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


PeerAttestor = Callable[[PeerCredentials], None]


def peer_credentials(sock: socket.socket) -> PeerCredentials:
    """The connected peer's credentials, from the kernel; raises ``PeerRefused`` if unknowable."""
    try:
        if sys.platform.startswith("linux"):
            raw = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
            pid, uid, gid = struct.unpack("3i", raw)
            return PeerCredentials(pid=pid, uid=uid, gid=gid)
        if sys.platform == "darwin":
            # struct xucred { u_int cr_version; uid_t cr_uid; short cr_ngroups;
            #                 gid_t cr_groups[16]; }
            local_peercred = getattr(socket, "LOCAL_PEERCRED", 0x001)
            raw = sock.getsockopt(0, local_peercred, struct.calcsize("IIh16I"))
            _version, uid = struct.unpack_from("II", raw)
            pid_opt = getattr(socket, "LOCAL_PEERPID", 0x002)
            (pid,) = struct.unpack("i", sock.getsockopt(0, pid_opt, 4))
            return PeerCredentials(pid=pid, uid=uid, gid=None)
    except (OSError, struct.error) as exc:
        raise PeerRefused(f"cannot read peer credentials: {exc.__class__.__name__}") from None
    raise PeerRefused(f"peer credentials are not supported on {sys.platform}")


def require_same_uid(sock: socket.socket) -> PeerCredentials:
    creds = peer_credentials(sock)
    if creds.uid != os.getuid():
        raise PeerRefused(f"peer uid {creds.uid} is not ours ({os.getuid()})")
    return creds
