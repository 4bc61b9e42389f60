"""The fuzz harnesses run, pass on the current code, and keep their h11-style contract."""

from __future__ import annotations

import contextlib
import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from fuzz import codec_oracle
from fuzz.run import HARNESSES, NODE_HARNESSES

REPO = Path(__file__).resolve().parent.parent
#: CI's budget per harness: small, and smaller for the ones that verify signatures on every input
#: (the long run in fuzz/README.md is where the million inputs are).
CI_RUNS = {
    "fuzz_trust_record": 200,
    "fuzz_webauthn": 100,
    "fuzz_policy": 500,
    "fuzz_canonical": 500,
    "fuzz_tool_args": 1000,
    "fuzz_provenance": 500,
}
DEFAULT_CI_RUNS = 2000


def load(name: str) -> ModuleType:
    # By path, so the repo root never goes on sys.path (tests/protocol is also called "protocol").
    spec = importlib.util.spec_from_file_location(f"_harness_{name}", REPO / "fuzz" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
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


@pytest.mark.parametrize("name", [*HARNESSES, *NODE_HARNESSES])
def test_fuzz_run_bounded_budget(name: str) -> None:
    # One harness per test, so the workers share the fuzzing instead of one worker running all.
    proc = run_fuzz("--budget", str(CI_RUNS.get(name, DEFAULT_CI_RUNS)), f"--only={name}")
    assert proc.returncode == 0, proc.stdout + proc.stderr[-4000:]
    assert any(line.startswith(f"{name}: ok (") for line in proc.stdout.splitlines()), proc.stdout


def test_fuzz_run_fallback_mutator() -> None:
    proc = run_fuzz("--runs", "100", "--no-atheris", *(f"--only={name}" for name in HARNESSES))
    assert proc.returncode == 0, proc.stdout + proc.stderr[-4000:]
    for name in HARNESSES:
        assert f"{name}: ok (fallback, 100 runs" in proc.stdout, proc.stdout


def test_fallback_keeps_a_minimised_failing_input(tmp_path: Path) -> None:
    # A harness that fails on any input holding b"!" must end with a one-byte minimised input.
    from fuzz import run

    class Harness:
        SEEDS = [b"abc", b"x" * 50 + b"!" + b"y" * 50]

        @staticmethod
        def test_one_input(data: bytes) -> None:
            assert b"!" not in data, "found it"

    ok, detail = run.run_fallback("fake", Harness, 100, None, 1)  # type: ignore[arg-type]
    assert not ok and "inputs in " in detail
    workdir = Path(detail.rsplit("inputs in ", 1)[1])
    assert (workdir / "minimised").read_bytes() == b"!"
    assert b"!" in (workdir / "crash").read_bytes()


@pytest.mark.parametrize("name", NODE_HARNESSES)
def test_node_harness_contract(name: str) -> None:
    source = (REPO / "fuzz" / "js" / f"{name}.mjs").read_text(encoding="utf-8")
    assert source.splitlines()[0].startswith("// Invariant: ")


@pytest.mark.parametrize("name", HARNESSES)
def test_harness_contract(name: str) -> None:
    source = (REPO / "fuzz" / f"{name}.py").read_text(encoding="utf-8")
    assert source.splitlines()[0].startswith("# Invariant: ")
    # fuzz/preamble.py: the code under test imported instrumented, main() is libFuzzer's entry.
    assert "\nwith instrumented(__name__):\n    from tabwarden." in source
    assert "\ndef main() -> None:\n    run_libfuzzer(test_one_input)\n" in source
    assert "import atheris" not in source
    module = load(name)
    assert callable(module.test_one_input) and callable(module.main)
    assert module.SEEDS


def test_the_preamble_instruments_only_a_script_under_atheris() -> None:
    from fuzz import preamble

    source = (REPO / "fuzz" / "preamble.py").read_text(encoding="utf-8")
    assert "atheris.instrument_imports()" in source
    assert "atheris.Setup(sys.argv, test_one_input)" in source
    # Imported (pytest, fuzz.run's fallback), a harness's imports are plain ones.
    assert isinstance(preamble.instrumented("fuzz.fuzz_frames"), contextlib.nullcontext)
    if preamble.atheris is None:
        assert isinstance(preamble.instrumented("__main__"), contextlib.nullcontext)
        with pytest.raises(SystemExit, match="atheris is not installed"):
            preamble.run_libfuzzer(lambda data: None)
    else:
        assert not isinstance(preamble.instrumented("__main__"), contextlib.nullcontext)


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


def test_trust_record_harness_flags_a_widening_verifier(monkeypatch: pytest.MonkeyPatch) -> None:
    # Honesty check: a verifier that lets an unsigned baseline through must be caught.
    from dataclasses import replace

    from tabwarden.trust.policy import DEFAULT_POLICY

    module = load("fuzz_trust_record")
    real = module.effective

    def widening(doc: object, public: object, now: int) -> object:
        eff = real(doc, public, now)
        return replace(eff, policy=replace(DEFAULT_POLICY, eval=True))

    monkeypatch.setattr(module, "effective", widening)
    with pytest.raises(AssertionError):
        module.test_one_input(module.SEEDS[0])


def test_webauthn_harness_flags_a_verifier_that_accepts_a_bent_assertion(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    module = load("fuzz_webauthn")
    tap = next(i for i, c in enumerate(module.CEREMONIES) if c.stored is not None)
    outcome = module._assert(module.CEREMONIES[tap], module.CEREMONIES[tap].response)
    monkeypatch.setattr(module.presence, "complete_assertion", lambda *a, **k: outcome)
    with pytest.raises(AssertionError, match="bent assertion verified"):
        module.test_one_input(bytes([tap, 2, 0, 1, 0, 5, 0, 0]))  # flip a signature byte


def test_canonical_harness_flags_a_disagreeing_peer(monkeypatch: pytest.MonkeyPatch) -> None:
    module = load("fuzz_canonical")
    monkeypatch.setattr(module, "canonical", lambda value: b"[]")
    with pytest.raises(AssertionError):
        module.test_one_input(b'\x00{"a":1}')
