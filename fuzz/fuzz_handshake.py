# Invariant: any sequence of frames fed to a HostHandshake or a ClientHandshake (fixed secret and nonces) only ever raises HandshakeFailed, accepts exactly the messages an independent model of docs/protocol.md accepts (so no admission without a valid MAC), stays FAILED once failed, and never puts the secret or a nonce in an error.  # noqa: E501
"""Atheris harness for the bridge handshake (tabwarden.protocol.handshake).

The input is split on b"\\n" into frames. A line starting with ``{`` is JSON (skipped if the
framing layer would refuse it); a line starting with ``!`` is the *correct* next message for the
current state, optionally damaged by the following byte, so the fuzzer can reach every state
without knowing the secret; any other line is a structured message built from its bytes.

Run: ``python fuzz/fuzz_handshake.py -runs=100000 -max_len=4096`` (or ``python -m fuzz.run``).
"""

from __future__ import annotations

import hashlib
import hmac
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fuzz.preamble import instrumented, run_libfuzzer
else:
    try:  # `python -m fuzz.run`, pytest
        from fuzz.preamble import instrumented, run_libfuzzer
    except ImportError:  # `python fuzz/fuzz_handshake.py`: this directory is sys.path[0]
        from preamble import instrumented, run_libfuzzer

with instrumented(__name__):
    from tabwarden.protocol import frames
    from tabwarden.protocol.framing import FramingError, loads_object
    from tabwarden.protocol.handshake import (
        ClientHandshake,
        HandshakeFailed,
        HostHandshake,
        State,
    )

K = bytes(range(32))
NH = bytes.fromhex("a1" * 32)
NC = bytes.fromhex("c2" * 32)
SECRETS = (K.hex(), NH.hex(), NC.hex())
HEX = frozenset("0123456789abcdefABCDEF")
KINDS = ("challenge", "proof", "admit", "admitted", "refused", "", "PROOF")

Message = dict[str, Any]


def spec_mac(label: str, first: bytes, second: bytes) -> bytes:
    """MAC(label, a, b) exactly as docs/protocol.md writes it, not via the module."""
    data = b"tabwarden/bridge/v1/" + label.encode() + b"\x00" + first + second
    return hmac.new(K, data, hashlib.sha256).digest()


def hex32(value: Any) -> bytes | None:
    if isinstance(value, str) and len(value) == 64 and set(value) <= HEX:
        return bytes.fromhex(value)
    return None


# --- turning bytes into messages ----------------------------------------------------------------


def structured(line: bytes) -> Message:
    kind = KINDS[line[0] % len(KINDS)]
    flags = line[1] if len(line) > 1 else 0
    body = line[2:]
    message: Message = {"t": kind}
    if flags & 1:
        message["v"] = message["protocol"] = flags >> 6
    if flags & 2:
        message["nonce"] = (NH, NC, body[:32], body)[(flags >> 4) & 3].hex()
    if flags & 4:
        message["mac"] = body[-32:].hex()
    if flags & 8:
        message["role"] = ("mcp", "cli", "root", "")[(flags >> 4) & 3]
        message["browser"] = body[:8].decode("latin-1")
        message["extensionConnected"] = bool(flags & 32)
    return message


def damage(message: Message, how: int) -> Message:
    message = dict(message)
    key = sorted(message)[how % len(message)]
    mode = (how >> 4) % 4
    if mode == 0:
        del message[key]
    elif mode == 1 and isinstance(message[key], str) and message[key]:
        text = message[key]
        message[key] = ("0" if text[-1] != "0" else "1") + text[1:]  # one nibble off
    elif mode == 2:
        message[key] = [message[key]]
    else:
        message[key] = None
    return message


def host_oracle(state: State) -> Message:
    if state is State.AWAIT_CLIENT_PROOF:
        return {"t": "proof", "nonce": NC.hex(), "mac": spec_mac("client-to-host", NH, NC).hex()}
    return {"t": "admit", "role": "mcp", "protocol": 1}


def client_oracle(state: State, host_nonce: bytes) -> Message:
    if state is State.AWAIT_CHALLENGE:
        return {"t": "challenge", "v": 1, "nonce": NH.hex()}
    if state is State.AWAIT_HOST_PROOF:
        return {"t": "proof", "mac": spec_mac("host-to-client", NC, host_nonce).hex()}
    return {"t": "admitted", "protocol": 1, "browser": "chromium", "extensionConnected": True}


def messages(data: bytes, oracle: Any) -> Any:
    """Yield one message per line; ``oracle()`` gives the correct next message for ``!`` lines."""
    for line in data.split(b"\n"):
        if not line:
            continue
        if line[:1] == b"{":
            try:
                yield loads_object(line)
            except FramingError:
                continue
        elif line[:1] == b"!":
            message = oracle()
            yield damage(message, line[1]) if len(line) > 1 else message
        else:
            yield structured(line)


# --- the independent model ----------------------------------------------------------------------


def host_accepts(state: State, m: Message) -> bool:
    if state is State.AWAIT_CLIENT_PROOF:
        nonce, proof = hex32(m.get("nonce")), hex32(m.get("mac"))
        return (
            m.get("t") == "proof"
            and nonce is not None
            and nonce != NH
            and proof == spec_mac("client-to-host", NH, nonce)
        )
    if state is State.AWAIT_ADMIT:
        role, protocol = m.get("role"), m.get("protocol")
        return (
            m.get("t") == "admit"
            and isinstance(role, str)
            and role in ("mcp", "cli")
            and type(protocol) is int
            and protocol == 1
        )
    return False


def client_accepts(state: State, m: Message, host_nonce: bytes) -> bool:
    if state is State.AWAIT_CHALLENGE:
        v, nonce = m.get("v"), hex32(m.get("nonce"))
        return m.get("t") == "challenge" and type(v) is int and v == 1 and nonce not in (None, NC)
    if state is State.AWAIT_HOST_PROOF:
        proof = hex32(m.get("mac"))
        return m.get("t") == "proof" and proof == spec_mac("host-to-client", NC, host_nonce)
    if state is State.AWAIT_ADMITTED:
        protocol = m.get("protocol")
        return (
            m.get("t") == "admitted"
            and type(protocol) is int
            and protocol == 1
            and isinstance(m.get("browser"), str)
            and type(m.get("extensionConnected")) is bool
        )
    return False


def check_failure(exc: HandshakeFailed, side: Any) -> None:
    assert side.state is State.FAILED
    for text in (str(exc), exc.reason):
        for secret in SECRETS:
            assert secret not in text.lower(), "an error message leaks a secret or nonce"


# --- the two runs -------------------------------------------------------------------------------


def run_host(data: bytes) -> None:
    host = HostHandshake(K, NH, browser="chromium", extension_connected=True)
    assert host.start() == {"t": "challenge", "v": 1, "nonce": NH.hex()}
    proven = False
    for message in messages(data, lambda: host_oracle(host.state)):
        before = host.state
        accept = host_accepts(before, message)
        try:
            out, admitted = host.receive(message)
        except HandshakeFailed as exc:
            assert not accept, f"host refused a valid message in {before}"
            check_failure(exc, host)
            continue
        assert accept, f"host accepted an invalid message in {before}"
        for reply in out:
            frames.encode_frame(reply)
        if before is State.AWAIT_CLIENT_PROOF:
            proven = True
            nonce = bytes.fromhex(message["nonce"])
            assert host.state is State.AWAIT_ADMIT and admitted is None
            assert out == [{"t": "proof", "mac": spec_mac("host-to-client", nonce, NH).hex()}]
        else:
            assert proven, "host admitted a client that never proved the secret"
            assert host.state is State.ADMITTED and admitted is not None
            assert admitted.role == message["role"] and admitted.protocol == 1


def run_client(data: bytes) -> None:
    client = ClientHandshake(K, NC, role="cli")
    host_nonce = NH
    proven = False
    # Late binding on purpose: the oracle must see the nonce of the challenge accepted so far
    # (host_nonce is rebound in the loop), so a default argument would freeze it at NH.
    for message in messages(data, lambda: client_oracle(client.state, host_nonce)):  # noqa: B023
        before = client.state
        accept = client_accepts(before, message, host_nonce)
        try:
            out, admitted = client.receive(message)
        except HandshakeFailed as exc:
            assert not accept, f"client refused a valid message in {before}"
            check_failure(exc, client)
            continue
        assert accept, f"client accepted an invalid message in {before}"
        for reply in out:
            frames.encode_frame(reply)
        if before is State.AWAIT_CHALLENGE:
            host_nonce = bytes.fromhex(message["nonce"])
            mac = spec_mac("client-to-host", host_nonce, NC).hex()
            assert out == [{"t": "proof", "nonce": NC.hex(), "mac": mac}]
        elif before is State.AWAIT_HOST_PROOF:
            proven = True
            assert out == [{"t": "admit", "role": "cli", "protocol": 1}]
        else:
            assert proven, "client accepted admission from a host that never proved the secret"
            assert client.state is State.ADMITTED and admitted is not None
            assert admitted.browser == message["browser"]


def test_one_input(data: bytes) -> None:
    run_host(data)
    run_client(data)


SEEDS: list[bytes] = [
    b"!\n!\n",  # a complete, valid session on both sides
    b"!\n!\n!\n",
    b'{"t":"proof","nonce":"' + NC.hex().encode() + b'","mac":"' + b"00" * 32 + b'"}\n!\n',
    b'{"t":"admit","role":"mcp","protocol":1}\n!\n',
    b'{"t":"refused"}\n',
    b"!\x11\n!\n",
    b"\x01\x0f" + bytes(range(64)) + b"\n!\n",
    # Regressions: an unhashable role, whitespace "hex", the peer's own nonce as a type name.
    b'!\n{"t":"admit","role":["mcp"],"protocol":1}\n',
    b'{"t":"challenge","v":1,"nonce":"' + b" " * 64 + b'"}\n',
    b'{"t":"' + NH.hex().encode() + b'"}\n{"t":"' + NC.hex().encode() + b'"}\n',
]


def main() -> None:
    run_libfuzzer(test_one_input)


if __name__ == "__main__":
    main()
