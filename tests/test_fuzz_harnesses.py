"""The fuzz harnesses run, pass on the current code, and keep their h11-style contract."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from fuzz import codec_oracle

REPO = Path(__file__).resolve().parent.parent
HARNESSES = ("fuzz_nativemsg", "fuzz_frames", "fuzz_handshake")


def load(name: str) -> ModuleType:
    # By path, so the repo root never goes on sys.path (tests/protocol is also called "protocol").
    spec = importlib.util.spec_from_file_location(f"_harness_{name}", REPO / "fuzz" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_fuzz(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # noqa: S603
        [sys.executable, "-m", "fuzz.run", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_fuzz_run_bounded_budget() -> None:
    proc = run_fuzz("--runs", "2000")
    assert proc.returncode == 0, proc.stdout + proc.stderr[-4000:]
    lines = proc.stdout.splitlines()
    for name in HARNESSES:
        assert any(line.startswith(f"{name}: ok (") for line in lines), proc.stdout


def test_fuzz_run_fallback_mutator() -> None:
    proc = run_fuzz("--runs", "500", "--no-atheris")
    assert proc.returncode == 0, proc.stdout + proc.stderr[-4000:]
    for name in HARNESSES:
        assert f"{name}: ok (fallback, 500 runs" in proc.stdout, proc.stdout


@pytest.mark.parametrize("name", HARNESSES)
def test_harness_contract(name: str) -> None:
    source = (REPO / "fuzz" / f"{name}.py").read_text(encoding="utf-8")
    assert source.splitlines()[0].startswith("# Invariant: ")
    assert "atheris.instrument_imports()" in source
    assert "atheris.Setup(sys.argv, test_one_input)" in source
    module = load(name)
    assert callable(module.test_one_input) and callable(module.main)
    assert module.SEEDS


@pytest.mark.parametrize("name", HARNESSES)
def test_seeds_and_junk_pass(name: str) -> None:
    module = load(name)
    junk = [b"", b"\x00", b"\xff" * 4, b"\xff" * 9, b"\n\n", b"{", b"!", b"!\x00\n!"]
    junk.append(bytes(range(256)))
    for data in [*module.SEEDS, *junk]:
        module.test_one_input(data)


def test_codec_harnesses_check_a_known_good_stream() -> None:
    for name in ("fuzz_nativemsg", "fuzz_frames"):
        module = load(name)
        good = module.SEEDS[0] + module.SEEDS[1]
        frames, ending = codec_oracle.reference(good, module.HEADER, module.LIMIT)
        assert ending is None and len(frames) == 3
        assert codec_oracle.decode(good, 1, module.make_decoder, module.LIMIT) == (frames, None)
        bad = module.HEADER.pack(0xFFFFFFFF) + b"{}"
        assert codec_oracle.decode(bad, 1, module.make_decoder, module.LIMIT) == (
            [],
            "FrameTooLarge",
        )


def test_handshake_harness_reaches_admission() -> None:
    module = load("fuzz_handshake")
    from tabwarden.protocol.handshake import ClientHandshake, HostHandshake, State

    host = HostHandshake(module.K, module.NH, browser="b", extension_connected=True)
    host.start()
    for message in module.messages(b"!\n!\n", lambda: module.host_oracle(host.state)):
        host.receive(message)
    assert host.state is State.ADMITTED
    client = ClientHandshake(module.K, module.NC, role="cli")
    oracle = lambda: module.client_oracle(client.state, module.NH)  # noqa: E731
    for message in module.messages(b"!\n!\n!\n", oracle):
        client.receive(message)
    assert client.state is State.ADMITTED


def test_handshake_harness_model_rejects_forged_proof() -> None:
    from tabwarden.protocol.handshake import State

    module = load("fuzz_handshake")
    forged = {"t": "proof", "nonce": module.NC.hex(), "mac": "00" * 32}
    assert not module.host_accepts(State.AWAIT_CLIENT_PROOF, forged)
    valid = module.host_oracle(State.AWAIT_CLIENT_PROOF)
    assert module.host_accepts(State.AWAIT_CLIENT_PROOF, valid)


def test_harness_flags_a_broken_decoder(monkeypatch: pytest.MonkeyPatch) -> None:
    # Honesty check: the harness must notice a decoder that lets a non-FramingError escape.
    module = load("fuzz_nativemsg")

    def broken(*args: object, **kwargs: object) -> object:
        raise KeyError("boom")

    monkeypatch.setattr(module.nativemsg, "decoder", broken)
    with pytest.raises(KeyError):
        module.test_one_input(module.SEEDS[0])
