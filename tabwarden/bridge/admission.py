"""Hop 2's admission order, written once for both ends of the bridge socket.

1. the kernel's peer credentials: the peer runs as our UID — checked right after ``accept`` /
   ``connect`` and before a single byte is read — and the connection is bound to that process
   (``peer.pin_speaker``: a pidfd, its image's inode, ``SO_PASSCRED``);
2. attestation of the peer's executable (``tabwarden.bridge.attest``), when the caller has an
   attestor, of the very process pinned in step 1; from here on every chunk read must come from it
   (``FrameStream`` refuses any other writer with ``SpeakerChanged``);
3. the mutual HMAC handshake keyed by the run secret (``protocol.handshake``), driven to
   admission over a ``FrameStream``;
4. on the host, for an MCP server: the client's identity is *measured* — the process that
   spawned the peer, through wrappers, and for an interpreter what it runs (``measure_client``,
   ``tabwarden.bridge.client_identity``) — never taken from the admission frame; a claim there that
   disagrees is refused by the caller.

Each step can only refuse (``PeerRefused``; ``HandshakeFailed``, ``FramingError`` or
``ConnectionClosed`` — ``SpeakerChanged`` among them — from the handshake). The callers keep what
differs: which frames open the handshake, the deadline, and what a refusal is called on their
side. Nothing here may log or raise a secret, nonce or MAC.
"""

from __future__ import annotations

import socket
from typing import TYPE_CHECKING, Any, Protocol

from tabwarden.bridge.framestream import FrameStream
from tabwarden.bridge.peer import PeerAttestor, PeerRefused, Speaker, pin_speaker, require_same_uid
from tabwarden.protocol.handshake import Admitted

if TYPE_CHECKING:
    from tabwarden.bridge.client_identity import ClientIdentity

__all__ = ["HandshakeMachine", "check_peer", "handshake", "measure_client"]


class HandshakeMachine(Protocol):
    def receive(self, message: dict[str, Any]) -> tuple[list[dict[str, Any]], Admitted | None]: ...


def check_peer(sock: socket.socket, attest: PeerAttestor | None) -> Speaker:
    """Steps 1 and 2: the peer's UID and the pin on its process, then (with an attestor) its
    executable. The returned ``Speaker`` (the caller hands it to ``FrameStream``, which closes
    it) is the only process whose bytes the connection will accept."""
    speaker = pin_speaker(sock, require_same_uid(sock))
    try:
        if attest is not None:
            attest(speaker.credentials())
            why = speaker.changed()  # exited, or exec'd while it was being measured
            if why is not None:
                raise PeerRefused(why)
    except BaseException:
        speaker.close()
        raise
    return speaker


async def handshake(
    stream: FrameStream, machine: HandshakeMachine, opening: dict[str, Any] | None = None
) -> Admitted:
    """Step 3: send ``opening`` (the host's challenge) if any, then answer the peer's frames
    until the machine admits it."""
    if opening is not None:
        await stream.send(opening)
    while True:
        outgoing, admitted = machine.receive(await stream.receive())
        for frame in outgoing:
            await stream.send(frame)
        if admitted is not None:
            return admitted


def measure_client(peer_pid: int) -> ClientIdentity:
    """Step 4: the client of the connected MCP server ``peer_pid`` — the one measurement hop 1
    makes too (``client_identity.measure_client_of``: the server's parent through wrappers,
    every hop pidfd-pinned with its create time against PID reuse). Raises
    ``SpawnerUnmeasurable`` when it cannot be measured. Blocking: hashes files."""
    from tabwarden.bridge.client_identity import measure_client_of

    return measure_client_of(peer_pid)
