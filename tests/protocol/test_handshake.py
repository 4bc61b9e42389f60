"""The bridge handshake: both ends in memory, plus every way to get it wrong."""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable
from typing import Any

import pytest

from tabwarden.protocol import frames
from tabwarden.protocol import handshake as hs
from tabwarden.protocol.handshake import (
    Admitted,
    ClientHandshake,
    HandshakeFailed,
    HostHandshake,
    State,
)

K = bytes(range(32))
OTHER_K = bytes(range(1, 33))
NH = bytes.fromhex("11" * 32)
NC = bytes.fromhex("22" * 32)
NH2 = bytes.fromhex("33" * 32)
NC2 = bytes.fromhex("44" * 32)

Message = dict[str, Any]
Tamper = Callable[[str, Message], Message]


def spec_mac(secret: bytes, label: str, first: bytes, second: bytes) -> str:
    """The MAC exactly as docs/protocol.md writes it, computed without the module."""
    data = b"tabwarden/bridge/v1/" + label.encode() + b"\x00" + first + second
    return hmac.new(secret, data, hashlib.sha256).hexdigest()


def host(secret: bytes = K, nonce: bytes = NH, connected: bool = True) -> HostHandshake:
    return HostHandshake(secret, nonce, browser="chromium", extension_connected=connected)


def client(secret: bytes = K, nonce: bytes = NC, role: str = "mcp") -> ClientHandshake:
    return ClientHandshake(secret, nonce, role=role)


class ConnectionPair:
    """h11's ConnectionPair idea: pump frames between the two halves through real bridge bytes."""

    def __init__(self, host_side: HostHandshake, client_side: ClientHandshake) -> None:
        self.host = host_side
        self.client = client_side
        self.wires = {"host->client": frames.decoder(), "client->host": frames.decoder()}
        self.transcript: list[tuple[str, Message]] = []
        self.admitted: dict[str, Admitted] = {}

    def _send(self, direction: str, messages: list[Message], tamper: Tamper | None) -> None:
        for message in messages:
            if tamper is not None:
                message = tamper(direction, message)
            wire = frames.encode_frame(message)
            for byte in range(len(wire)):  # dribbled, to exercise partial reads too
                self.wires[direction].receive_data(wire[byte : byte + 1])

    def run(self, tamper: Tamper | None = None) -> None:
        self._send("host->client", [self.host.start()], tamper)
        sides = {"host->client": ("client", self.client), "client->host": ("host", self.host)}
        progressed = True
        while progressed:
            progressed = False
            for direction, decoder in self.wires.items():
                name, side = sides[direction]
                while (message := decoder.next_frame()) is not None:
                    progressed = True
                    self.transcript.append((direction, message))
                    out, admitted = side.receive(message)
                    if admitted is not None:
                        self.admitted[name] = admitted
                    back = "client->host" if direction == "host->client" else "host->client"
                    self._send(back, out, tamper)


def host_awaiting_admit() -> HostHandshake:
    h = host()
    h.start()
    h.receive({"t": "proof", "nonce": NC.hex(), "mac": spec_mac(K, "client-to-host", NH, NC)})
    assert h.state is State.AWAIT_ADMIT
    return h


def client_awaiting(state: State) -> ClientHandshake:
    c = client()
    if state is State.AWAIT_CHALLENGE:
        return c
    c.receive({"t": "challenge", "v": 1, "nonce": NH.hex()})
    if state is State.AWAIT_HOST_PROOF:
        return c
    c.receive({"t": "proof", "mac": spec_mac(K, "host-to-client", NC, NH)})
    assert c.state is State.AWAIT_ADMITTED
    return c


def assert_refused(side: hs._Machine, message: Message) -> HandshakeFailed:
    with pytest.raises(HandshakeFailed) as info:
        side.receive(message)
    assert side.state is State.FAILED
    with pytest.raises(HandshakeFailed):  # sticky
        side.receive(message)
    assert side.state is State.FAILED
    return info.value


# --- the happy path -----------------------------------------------------------------------------


@pytest.mark.parametrize("role", ["mcp", "cli"])
@pytest.mark.parametrize("connected", [True, False])
def test_pair_admits_both_sides(role: str, connected: bool) -> None:
    pair = ConnectionPair(host(connected=connected), client(role=role))
    pair.run()
    host_view, client_view = pair.admitted["host"], pair.admitted["client"]
    assert (
        host_view
        == client_view
        == Admitted(role=role, protocol=1, browser="chromium", extension_connected=connected)
    )
    assert pair.host.state is State.ADMITTED
    assert pair.client.state is State.ADMITTED


def test_transcript_matches_the_documented_wire_format() -> None:
    pair = ConnectionPair(host(), client(role="cli"))
    pair.run()
    assert pair.transcript == [
        ("host->client", {"t": "challenge", "v": 1, "nonce": NH.hex()}),
        (
            "client->host",
            {"t": "proof", "nonce": NC.hex(), "mac": spec_mac(K, "client-to-host", NH, NC)},
        ),
        ("host->client", {"t": "proof", "mac": spec_mac(K, "host-to-client", NC, NH)}),
        ("client->host", {"t": "admit", "role": "cli", "protocol": 1}),
        (
            "host->client",
            {"t": "admitted", "protocol": 1, "browser": "chromium", "extensionConnected": True},
        ),
    ]


def test_refused_constant() -> None:
    assert hs.REFUSED == {"t": "refused"}


# --- wrong secret -------------------------------------------------------------------------------


def test_client_with_wrong_secret_is_refused_by_host() -> None:
    pair = ConnectionPair(host(), client(secret=OTHER_K))
    with pytest.raises(HandshakeFailed):
        pair.run()
    assert pair.host.state is State.FAILED
    assert pair.client.state is State.AWAIT_HOST_PROOF
    assert pair.admitted == {}
    with pytest.raises(HandshakeFailed):  # sticky, even for a now-correct proof
        pair.host.receive(
            {"t": "proof", "nonce": NC.hex(), "mac": spec_mac(K, "client-to-host", NH, NC)}
        )


def test_host_with_wrong_secret_is_refused_by_client() -> None:
    # A real host with the wrong K fails first (it verifies first), so play an impostor host
    # that answers the client's proof with a MAC under its own key.
    c = client()
    c.receive({"t": "challenge", "v": 1, "nonce": NH.hex()})
    assert_refused(c, {"t": "proof", "mac": spec_mac(OTHER_K, "host-to-client", NC, NH)})


def test_host_with_wrong_secret_fails_in_pair() -> None:
    pair = ConnectionPair(host(secret=OTHER_K), client())
    with pytest.raises(HandshakeFailed):
        pair.run()
    assert pair.host.state is State.FAILED
    assert pair.admitted == {}


# --- replay, reflection, domain separation ------------------------------------------------------


@pytest.mark.promise("H2-08")
def test_replayed_client_proof_is_refused() -> None:
    first = ConnectionPair(host(nonce=NH), client(nonce=NC))
    first.run()
    recorded = next(m for d, m in first.transcript if d == "client->host" and m["t"] == "proof")
    replay_target = host(nonce=NH2)
    replay_target.start()
    assert_refused(replay_target, recorded)


@pytest.mark.promise("H2-08")
def test_replayed_host_proof_is_refused() -> None:
    first = ConnectionPair(host(nonce=NH), client(nonce=NC))
    first.run()
    recorded = next(m for d, m in first.transcript if d == "host->client" and m["t"] == "proof")
    victim = client(nonce=NC2)
    victim.receive({"t": "challenge", "v": 1, "nonce": NH.hex()})  # same host nonce replayed too
    assert_refused(victim, recorded)


@pytest.mark.promise("H2-08")
def test_client_echoing_host_nonce_is_refused() -> None:
    h = host()
    challenge = h.start()
    # Even with a MAC that is otherwise right for those nonces.
    assert_refused(
        h,
        {"t": "proof", "nonce": challenge["nonce"], "mac": spec_mac(K, "client-to-host", NH, NH)},
    )


@pytest.mark.promise("H2-08")
def test_reflected_host_proof_is_refused() -> None:
    # Session 1 gives the attacker the host's MAC("host-to-client", X, Y). In session 2 the host's
    # nonce is X and the attacker picks Y: the expected client proof covers the same bytes in the
    # same order and differs only in the label.
    first = ConnectionPair(host(nonce=NH), client(nonce=NC))
    first.run()
    host_mac = next(m for d, m in first.transcript if d == "host->client" and m["t"] == "proof")
    second = host(nonce=NC)
    second.start()
    assert_refused(second, {"t": "proof", "nonce": NH.hex(), "mac": host_mac["mac"]})


@pytest.mark.promise("H2-08")
def test_host_to_client_label_presented_as_client_proof_is_refused() -> None:
    h = host()
    h.start()
    for first, second in ((NH, NC), (NC, NH)):
        wrong = spec_mac(K, "host-to-client", first, second)
        refused = host()
        refused.start()
        assert_refused(refused, {"t": "proof", "nonce": NC.hex(), "mac": wrong})
    # Control: the right label passes, so the refusals above were about the label.
    h.receive({"t": "proof", "nonce": NC.hex(), "mac": spec_mac(K, "client-to-host", NH, NC)})
    assert h.state is State.AWAIT_ADMIT


def test_client_to_host_label_presented_as_host_proof_is_refused() -> None:
    c = client_awaiting(State.AWAIT_HOST_PROOF)
    assert_refused(c, {"t": "proof", "mac": spec_mac(K, "client-to-host", NC, NH)})
    reflected = client_awaiting(State.AWAIT_HOST_PROOF)
    # The client's own proof reflected back at it.
    assert_refused(reflected, {"t": "proof", "mac": spec_mac(K, "client-to-host", NH, NC)})


def test_client_refuses_challenge_echoing_its_nonce() -> None:
    assert_refused(client(), {"t": "challenge", "v": 1, "nonce": NC.hex()})


# --- order and shape ----------------------------------------------------------------------------


def test_host_refuses_messages_before_start() -> None:
    assert_refused(host(), {"t": "proof", "nonce": NC.hex(), "mac": "00" * 32})


def test_host_start_twice_fails() -> None:
    h = host()
    h.start()
    with pytest.raises(HandshakeFailed):
        h.start()
    assert h.state is State.FAILED


@pytest.mark.parametrize(
    "message",
    [
        {"t": "admit", "role": "mcp", "protocol": 1},  # admit before proof
        {"t": "challenge", "v": 1, "nonce": NC.hex()},
        {"t": "admitted", "protocol": 1, "browser": "x", "extensionConnected": True},
        {"t": "refused"},
        {"t": "PROOF", "nonce": NC.hex(), "mac": spec_mac(K, "client-to-host", NH, NC)},
        {"nonce": NC.hex(), "mac": spec_mac(K, "client-to-host", NH, NC)},
        {},
    ],
)
def test_host_refuses_out_of_order_before_proof(message: Message) -> None:
    h = host()
    h.start()
    assert_refused(h, message)


def test_host_refuses_second_proof() -> None:
    good = {"t": "proof", "nonce": NC.hex(), "mac": spec_mac(K, "client-to-host", NH, NC)}
    h = host()
    h.start()
    h.receive(good)
    assert_refused(h, good)


def test_host_refuses_anything_after_admission() -> None:
    h = host_awaiting_admit()
    h.receive({"t": "admit", "role": "mcp", "protocol": 1})
    assert h.state is State.ADMITTED
    assert_refused(h, {"t": "admit", "role": "mcp", "protocol": 1})


@pytest.mark.parametrize(
    ("state", "message"),
    [
        (State.AWAIT_CHALLENGE, {"t": "proof", "mac": spec_mac(K, "host-to-client", NC, NH)}),
        (
            State.AWAIT_CHALLENGE,
            {"t": "admitted", "protocol": 1, "browser": "b", "extensionConnected": True},
        ),
        (State.AWAIT_HOST_PROOF, {"t": "challenge", "v": 1, "nonce": NH.hex()}),  # double
        (
            State.AWAIT_HOST_PROOF,
            {"t": "admitted", "protocol": 1, "browser": "b", "extensionConnected": True},
        ),
        (State.AWAIT_ADMITTED, {"t": "proof", "mac": spec_mac(K, "host-to-client", NC, NH)}),
        (State.AWAIT_ADMITTED, {"t": "challenge", "v": 1, "nonce": NH.hex()}),
    ],
)
def test_client_refuses_out_of_order(state: State, message: Message) -> None:
    assert_refused(client_awaiting(state), message)


def test_client_refuses_anything_after_admission() -> None:
    c = client_awaiting(State.AWAIT_ADMITTED)
    c.receive({"t": "admitted", "protocol": 1, "browser": "b", "extensionConnected": False})
    assert c.state is State.ADMITTED
    assert_refused(c, {"t": "admitted", "protocol": 1, "browser": "b", "extensionConnected": True})


@pytest.mark.parametrize(
    "state", [State.AWAIT_CHALLENGE, State.AWAIT_HOST_PROOF, State.AWAIT_ADMITTED]
)
def test_client_receiving_refused_fails(state: State) -> None:
    c = client_awaiting(state)
    exc = assert_refused(c, {"t": "refused"})
    assert "refused" in exc.reason


@pytest.mark.parametrize("version", [0, 2, "1", 1.0, True, None, [1]])
def test_client_refuses_wrong_challenge_version(version: Any) -> None:
    assert_refused(client(), {"t": "challenge", "v": version, "nonce": NH.hex()})


def test_client_refuses_challenge_without_version() -> None:
    assert_refused(client(), {"t": "challenge", "nonce": NH.hex()})


@pytest.mark.parametrize("protocol", [0, 2, "1", 1.0, True, None])
def test_host_refuses_wrong_admit_protocol(protocol: Any) -> None:
    assert_refused(host_awaiting_admit(), {"t": "admit", "role": "mcp", "protocol": protocol})


@pytest.mark.parametrize("protocol", [0, 2, "1", 1.0, True, None])
def test_client_refuses_wrong_admitted_protocol(protocol: Any) -> None:
    assert_refused(
        client_awaiting(State.AWAIT_ADMITTED),
        {"t": "admitted", "protocol": protocol, "browser": "b", "extensionConnected": True},
    )


@pytest.mark.parametrize("role", ["admin", "", "MCP", None, 1, ["mcp"], {"mcp": 1}])
def test_host_refuses_unknown_role(role: Any) -> None:
    assert_refused(host_awaiting_admit(), {"t": "admit", "role": role, "protocol": 1})


def test_host_refuses_admit_without_role() -> None:
    assert_refused(host_awaiting_admit(), {"t": "admit", "protocol": 1})


BAD_HEX_32 = [
    pytest.param("zz" * 32, id="not-hex"),
    pytest.param(" " * 64, id="64-spaces"),  # bytes.fromhex skips whitespace: b""
    pytest.param("00 " * 21 + "0", id="spaced-21-bytes"),  # 64 characters, 21 bytes
    pytest.param("0x" + "00" * 31, id="0x-prefix"),
    pytest.param("é" * 64, id="non-ascii"),
    pytest.param("00" * 31, id="62-chars"),
    pytest.param("00" * 33, id="66-chars"),
    pytest.param("0" * 63, id="odd-length"),
    pytest.param("", id="empty"),
    pytest.param(None, id="null"),
    pytest.param(32, id="int"),
    pytest.param(["00"] * 32, id="list"),
]


@pytest.mark.parametrize("nonce", BAD_HEX_32)
def test_host_refuses_bad_client_nonce(nonce: Any) -> None:
    h = host()
    h.start()
    assert_refused(h, {"t": "proof", "nonce": nonce, "mac": spec_mac(K, "client-to-host", NH, NC)})


def test_host_refuses_empty_client_nonce_with_valid_mac() -> None:
    # Regression: 64 spaces decoded to b"" and a MAC over that empty nonce verified.
    h = host()
    h.start()
    mac = spec_mac(K, "client-to-host", NH, b"")
    assert_refused(h, {"t": "proof", "nonce": " " * 64, "mac": mac})


@pytest.mark.parametrize("mac", BAD_HEX_32)
def test_host_refuses_bad_mac_field(mac: Any) -> None:
    h = host()
    h.start()
    assert_refused(h, {"t": "proof", "nonce": NC.hex(), "mac": mac})


def test_host_accepts_uppercase_hex() -> None:
    h = host()
    h.start()
    mac = spec_mac(K, "client-to-host", NH, NC).upper()
    h.receive({"t": "proof", "nonce": NC.hex().upper(), "mac": mac})
    assert h.state is State.AWAIT_ADMIT


@pytest.mark.parametrize("missing", ["nonce", "mac"])
def test_host_refuses_proof_missing_field(missing: str) -> None:
    message = {"t": "proof", "nonce": NC.hex(), "mac": spec_mac(K, "client-to-host", NH, NC)}
    del message[missing]
    h = host()
    h.start()
    assert_refused(h, message)


@pytest.mark.parametrize("nonce", BAD_HEX_32)
def test_client_refuses_bad_challenge_nonce(nonce: Any) -> None:
    assert_refused(client(), {"t": "challenge", "v": 1, "nonce": nonce})


def test_client_refuses_challenge_missing_nonce() -> None:
    assert_refused(client(), {"t": "challenge", "v": 1})


@pytest.mark.parametrize("mac", BAD_HEX_32)
def test_client_refuses_bad_host_mac(mac: Any) -> None:
    assert_refused(client_awaiting(State.AWAIT_HOST_PROOF), {"t": "proof", "mac": mac})


@pytest.mark.parametrize(
    "message",
    [
        {"t": "admitted", "protocol": 1, "extensionConnected": True},
        {"t": "admitted", "protocol": 1, "browser": "b"},
        {"t": "admitted", "browser": "b", "extensionConnected": True},
        {"t": "admitted", "protocol": 1, "browser": 5, "extensionConnected": True},
        {"t": "admitted", "protocol": 1, "browser": "b", "extensionConnected": "yes"},
        {"t": "admitted", "protocol": 1, "browser": "b", "extensionConnected": 1},
        {"t": "admitted", "protocol": 1, "browser": None, "extensionConnected": None},
    ],
)
def test_client_refuses_malformed_admission(message: Message) -> None:
    assert_refused(client_awaiting(State.AWAIT_ADMITTED), message)


# --- secrecy of failure reasons -----------------------------------------------------------------


def _failures() -> list[HandshakeFailed]:
    good_c2h = spec_mac(K, "client-to-host", NH, NC)
    good_h2c = spec_mac(K, "host-to-client", NC, NH)
    caught: list[HandshakeFailed] = []

    def collect(side: hs._Machine, message: Message) -> None:
        with pytest.raises(HandshakeFailed) as info:
            side.receive(message)
        caught.append(info.value)
        with pytest.raises(HandshakeFailed) as again:
            side.receive(message)
        caught.append(again.value)

    host_messages: list[Message] = [
        {"t": "proof", "nonce": NC.hex(), "mac": spec_mac(OTHER_K, "client-to-host", NH, NC)},
        {"t": "proof", "nonce": NH.hex(), "mac": good_c2h},
        {"t": "proof", "nonce": NC.hex()[:-2], "mac": good_c2h},
        {"t": "proof", "nonce": "zz" + NC.hex()[2:], "mac": good_c2h},
        {"t": NH.hex()},  # the peer puts secrets where an error might echo them
        {"t": K.hex(), "nonce": NC.hex()},
        {"t": good_c2h},
        {"t": ["proof", NH.hex()]},
        {"t": "admit", "role": NH.hex(), "protocol": 1},
    ]
    for message in host_messages:
        h = host()
        h.start()
        collect(h, message)
    collect(host_awaiting_admit(), {"t": "admit", "role": K.hex(), "protocol": NC.hex()})
    client_messages: list[tuple[State, Message]] = [
        (State.AWAIT_CHALLENGE, {"t": "challenge", "v": 1, "nonce": NC.hex()}),
        (State.AWAIT_CHALLENGE, {"t": "challenge", "v": 2, "nonce": NH.hex()}),
        (State.AWAIT_CHALLENGE, {"t": NC.hex()}),
        (State.AWAIT_HOST_PROOF, {"t": "proof", "mac": good_c2h}),
        (State.AWAIT_HOST_PROOF, {"t": good_h2c}),
        (State.AWAIT_ADMITTED, {"t": "admitted", "protocol": 1, "browser": K.hex()}),
        (State.AWAIT_ADMITTED, {"t": "refused"}),
    ]
    for state, message in client_messages:
        collect(client_awaiting(state), message)
    return caught


@pytest.mark.promise("H2-09")
def test_failure_messages_never_contain_secret_nonces_or_macs() -> None:
    needles = [
        K.hex(),
        NH.hex(),
        NC.hex(),
        OTHER_K.hex(),
        spec_mac(K, "client-to-host", NH, NC),
        spec_mac(K, "host-to-client", NC, NH),
    ]
    failures = _failures()
    assert len(failures) > 20
    for exc in failures:
        for text in (str(exc), exc.reason, repr(exc)):
            for needle in needles:
                assert needle not in text.lower(), text
            assert len(text) < 200, text


# --- construction -------------------------------------------------------------------------------


@pytest.mark.parametrize("size", [0, 16, 31, 33, 64])
def test_bad_secret_size_raises_value_error(size: int) -> None:
    with pytest.raises(ValueError):
        HostHandshake(b"k" * size, NH, browser="b", extension_connected=False)
    with pytest.raises(ValueError):
        ClientHandshake(b"k" * size, NC, role="mcp")


@pytest.mark.parametrize("size", [0, 16, 31, 33, 64])
def test_bad_nonce_size_raises_value_error(size: int) -> None:
    with pytest.raises(ValueError):
        HostHandshake(K, b"n" * size, browser="b", extension_connected=False)
    with pytest.raises(ValueError):
        ClientHandshake(K, b"n" * size, role="mcp")


def test_client_unknown_role_raises_value_error() -> None:
    with pytest.raises(ValueError):
        ClientHandshake(K, NC, role="admin")


def test_module_mac_matches_documented_formula() -> None:
    assert hs.mac(K, hs.CLIENT_TO_HOST, NH, NC).hex() == spec_mac(K, "client-to-host", NH, NC)
    assert hs.mac(K, hs.HOST_TO_CLIENT, NC, NH).hex() == spec_mac(K, "host-to-client", NC, NH)
