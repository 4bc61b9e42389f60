"""The bridge handshake (hop 2): mutual HMAC-SHA256 challenge-response, then admission. Sans-IO.

Theory of operation. Both ends hold K, the host's 32-byte per-run secret (read from a 0600 file
in the private runtime directory; it never crosses the wire). Each end contributes a fresh 32-byte
nonce *passed in by the caller* — this module draws no randomness and reads no clock.

    host   -> client   {"t": "challenge", "v": 1, "nonce": Nh}
    client -> host     {"t": "proof", "nonce": Nc, "mac": MAC("client-to-host", Nh, Nc)}
    host   -> client   {"t": "proof", "mac": MAC("host-to-client", Nc, Nh)}
    client -> host     {"t": "admit", "role": "mcp" | "cli", "protocol": 1, "client": SHA256-or-""}
    host   -> client   {"t": "admitted", "protocol": 1, "browser": ..., "extensionConnected": ...}

    MAC(label, a, b) = HMAC-SHA256(K, b"tabwarden/bridge/v1/" + label + b"\\x00" + a + b)

The label binds role and direction, so a proof reflected back at its sender is wrong; each side's
own fresh nonce is inside the MAC it checks, so a recorded proof replayed later is wrong. MACs are
compared with ``hmac.compare_digest`` only. The state machine is a table: a message that is not
the one expected in the current state fails the handshake. Failure is sticky (``FAILED``): every
later call raises. The peer only ever learns one opaque ``{"t": "refused"}``; the precise reason
is in ``HandshakeFailed.reason`` for the local log. Nothing here may put K, a nonce or a MAC into
an exception message.
"""

from __future__ import annotations

import enum
import hashlib
import hmac
import re
from dataclasses import dataclass
from typing import Any, Final

PROTOCOL_VERSION: Final = 1
NONCE_SIZE: Final = 32
SECRET_SIZE: Final = 32
ROLES: Final = frozenset({"mcp", "cli"})
REFUSED: Final[dict[str, Any]] = {"t": "refused"}

_KNOWN_TYPES: Final = ("challenge", "proof", "admit", "admitted", "refused")
_DOMAIN: Final = b"tabwarden/bridge/v1/"
_SHA256_HEX: Final = re.compile(r"^[0-9a-f]{64}$")
CLIENT_TO_HOST: Final = b"client-to-host"
HOST_TO_CLIENT: Final = b"host-to-client"


class HandshakeFailed(Exception):
    """The bridge handshake failed; the connection must close.

    ``reason`` is for the local log only; never send it to the peer.
    """

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class State(enum.Enum):
    AWAIT_CHALLENGE = "await_challenge"
    AWAIT_CLIENT_PROOF = "await_client_proof"
    AWAIT_HOST_PROOF = "await_host_proof"
    AWAIT_ADMIT = "await_admit"
    AWAIT_ADMITTED = "await_admitted"
    ADMITTED = "admitted"
    FAILED = "failed"


@dataclass(frozen=True, slots=True, kw_only=True)
class Admitted:
    """The handshake completed; what each side learned about the other."""

    role: str
    protocol: int
    browser: str = ""
    extension_connected: bool = False
    #: SHA-256 (hex) of the MCP client program that spawned the connecting MCP server, as that
    #: (attested) server measured it; "" for the CLI or when unmeasured.
    client_sha256: str = ""


def mac(secret: bytes, label: bytes, first: bytes, second: bytes) -> bytes:
    return hmac.new(secret, _DOMAIN + label + b"\x00" + first + second, hashlib.sha256).digest()


def _hex_field(message: dict[str, Any], key: str, size: int) -> bytes:
    value = message.get(key)
    if not isinstance(value, str) or len(value) != 2 * size:
        raise HandshakeFailed(f"field {key!r} missing or wrong length")
    try:
        raw = bytes.fromhex(value)
    except ValueError:
        raise HandshakeFailed(f"field {key!r} is not hex") from None
    if len(raw) != size:  # bytes.fromhex skips whitespace: 64 spaces would decode to b""
        raise HandshakeFailed(f"field {key!r} missing or wrong length")
    return raw


def _check_inputs(secret: bytes, nonce: bytes) -> None:
    if len(secret) != SECRET_SIZE:
        raise ValueError("run secret must be 32 bytes")
    if len(nonce) != NONCE_SIZE:
        raise ValueError("nonce must be 32 bytes")


class _Machine:
    state: State
    _expected: dict[State, str]

    def _take(self, message: dict[str, Any]) -> None:
        if self.state is State.FAILED:
            raise HandshakeFailed("handshake already failed")
        expected = self._expected.get(self.state)
        kind = message.get("t")
        if expected is None or kind != expected:
            # Never echo the peer's value: it could be a nonce or MAC, or megabytes long.
            shown = repr(kind) if kind in _KNOWN_TYPES else f"<{type(kind).__name__}>"
            self._fail(f"unexpected message {shown} in state {self.state.value}")

    def _fail(self, reason: str) -> None:
        self.state = State.FAILED
        raise HandshakeFailed(reason)

    def receive(self, message: dict[str, Any]) -> tuple[list[dict[str, Any]], Admitted | None]:
        """Feed one decoded frame; returns (frames to send, Admitted once complete)."""
        self._take(message)
        try:
            return self._step(message)
        except HandshakeFailed as exc:
            self.state = State.FAILED
            raise exc

    def _step(self, message: dict[str, Any]) -> tuple[list[dict[str, Any]], Admitted | None]:
        raise NotImplementedError


class HostHandshake(_Machine):
    """The host's half. Call ``start()`` for the challenge, then ``receive()`` each frame."""

    _expected = {State.AWAIT_CLIENT_PROOF: "proof", State.AWAIT_ADMIT: "admit"}

    def __init__(
        self, secret: bytes, nonce: bytes, *, browser: str, extension_connected: bool
    ) -> None:
        _check_inputs(secret, nonce)
        self._secret = secret
        self._nonce = nonce
        self._browser = browser
        self._extension_connected = extension_connected
        self.state = State.AWAIT_CHALLENGE

    def start(self) -> dict[str, Any]:
        if self.state is not State.AWAIT_CHALLENGE:
            self._fail("start() called twice")
        self.state = State.AWAIT_CLIENT_PROOF
        return {"t": "challenge", "v": PROTOCOL_VERSION, "nonce": self._nonce.hex()}

    def _step(self, message: dict[str, Any]) -> tuple[list[dict[str, Any]], Admitted | None]:
        if self.state is State.AWAIT_CLIENT_PROOF:
            client_nonce = _hex_field(message, "nonce", NONCE_SIZE)
            if hmac.compare_digest(client_nonce, self._nonce):
                self._fail("client echoed the host's nonce")
            proof = _hex_field(message, "mac", 32)
            expected = mac(self._secret, CLIENT_TO_HOST, self._nonce, client_nonce)
            if not hmac.compare_digest(proof, expected):
                self._fail("client proof does not verify")
            self.state = State.AWAIT_ADMIT
            reply = mac(self._secret, HOST_TO_CLIENT, client_nonce, self._nonce)
            return [{"t": "proof", "mac": reply.hex()}], None
        # AWAIT_ADMIT
        role = message.get("role")
        protocol = message.get("protocol")
        if not isinstance(role, str) or role not in ROLES:  # a list is unhashable: TypeError
            self._fail("unknown role")
        if type(protocol) is not int or protocol != PROTOCOL_VERSION:
            self._fail("unsupported protocol version")
        client = message.get("client", "")
        if not isinstance(client, str) or (client and not _SHA256_HEX.match(client)):
            self._fail("malformed client identity")
        self.state = State.ADMITTED
        admitted = {
            "t": "admitted",
            "protocol": PROTOCOL_VERSION,
            "browser": self._browser,
            "extensionConnected": self._extension_connected,
        }
        return [admitted], Admitted(
            role=str(role),
            protocol=PROTOCOL_VERSION,
            browser=self._browser,
            extension_connected=self._extension_connected,
            client_sha256=client,
        )


class ClientHandshake(_Machine):
    """The MCP server's (or CLI's) half. ``receive()`` each frame from the host."""

    _expected = {
        State.AWAIT_CHALLENGE: "challenge",
        State.AWAIT_HOST_PROOF: "proof",
        State.AWAIT_ADMITTED: "admitted",
    }

    def __init__(self, secret: bytes, nonce: bytes, *, role: str, client_sha256: str = "") -> None:
        _check_inputs(secret, nonce)
        if role not in ROLES:
            raise ValueError(f"unknown role {role!r}")
        if client_sha256 and not _SHA256_HEX.match(client_sha256):
            raise ValueError("client_sha256 must be 64 lower-case hex digits")
        self._client_sha256 = client_sha256
        self._secret = secret
        self._nonce = nonce
        self._role = role
        self._host_nonce = b""
        self.state = State.AWAIT_CHALLENGE

    def receive(self, message: dict[str, Any]) -> tuple[list[dict[str, Any]], Admitted | None]:
        if message.get("t") == "refused" and self.state is not State.FAILED:
            self._fail("host refused the handshake")
        return super().receive(message)

    def _step(self, message: dict[str, Any]) -> tuple[list[dict[str, Any]], Admitted | None]:
        if self.state is State.AWAIT_CHALLENGE:
            version = message.get("v")
            if type(version) is not int or version != PROTOCOL_VERSION:
                self._fail("host speaks an unsupported protocol version")
            self._host_nonce = _hex_field(message, "nonce", NONCE_SIZE)
            if hmac.compare_digest(self._host_nonce, self._nonce):
                self._fail("host echoed the client's nonce")
            proof = mac(self._secret, CLIENT_TO_HOST, self._host_nonce, self._nonce)
            self.state = State.AWAIT_HOST_PROOF
            return [{"t": "proof", "nonce": self._nonce.hex(), "mac": proof.hex()}], None
        if self.state is State.AWAIT_HOST_PROOF:
            proof = _hex_field(message, "mac", 32)
            expected = mac(self._secret, HOST_TO_CLIENT, self._nonce, self._host_nonce)
            if not hmac.compare_digest(proof, expected):
                self._fail("host proof does not verify")
            self.state = State.AWAIT_ADMITTED
            admit = {"t": "admit", "role": self._role, "protocol": PROTOCOL_VERSION}
            if self._client_sha256:
                admit["client"] = self._client_sha256
            return [admit], None
        # AWAIT_ADMITTED
        protocol = message.get("protocol")
        browser = message.get("browser")
        connected = message.get("extensionConnected")
        if type(protocol) is not int or protocol != PROTOCOL_VERSION:
            self._fail("host admitted with an unsupported protocol version")
        if not isinstance(browser, str) or not isinstance(connected, bool):
            self._fail("malformed admission")
        self.state = State.ADMITTED
        return [], Admitted(
            role=self._role,
            protocol=PROTOCOL_VERSION,
            browser=str(browser),
            extension_connected=bool(connected),
            client_sha256=self._client_sha256,
        )
