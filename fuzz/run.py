"""Run every fuzz harness once: ``python -m fuzz.run [--budget N] [--seconds S] [--only NAME]``.

With atheris installed each Python harness runs under libFuzzer in its own process
(``python fuzz/fuzz_x.py -runs=N -max_len=4096 <seed corpus>``); without it (or with
``--no-atheris``) a seeded random-mutation loop calls ``test_one_input`` directly. The Node
harnesses (``fuzz/js/*.mjs``) bring their own seeded mutator and run under ``node``. Prints one
summary line per harness and exits non-zero if any harness found a failure. A failing input is
minimised (libFuzzer's ``-minimize_crash``, or the fallback's own shrinking) and kept in the
temporary directory the summary line names: copy it under ``tests/fuzz_regressions/`` once the
bug is fixed.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parent.parent
FUZZ_DIR = REPO / "fuzz"
#: Python harnesses: ``fuzz/<name>.py`` with ``SEEDS``, ``test_one_input`` and ``main``.
HARNESSES = (
    "fuzz_nativemsg",
    "fuzz_frames",
    "fuzz_handshake",
    "fuzz_trust_record",
    "fuzz_policy",
    "fuzz_webauthn",
    "fuzz_tool_args",
    "fuzz_canonical",
    "fuzz_provenance",
)
#: Node harnesses: ``fuzz/js/<name>.mjs`` (``--runs N --seed S [--seconds S] --artifact F``).
NODE_HARNESSES = ("fuzz_extension_messages", "fuzz_session")
ALL_HARNESSES = (*HARNESSES, *NODE_HARNESSES)
#: The default input size cap; a harness whose seeds are larger sets its own ``MAX_LEN``.
MAX_LEN = 4096
#: How long the fallback spends shrinking a failing input.
MINIMISE_SECONDS = 60.0
DEFAULT_RUNS = 10_000

#: Tokens the fallback mutator splices in: limits, headers, JSON edge cases, handshake syntax.
TOKENS = [
    b"\x00\x00\x00\x00",
    b"\xff\xff\xff\xff",
    b"\x00\x00\x04\x00",
    b"\x00\x04\x00\x00",
    b"\x00\x00\x04\x01",
    b"\x01\x04\x00\x00",
    b"{}",
    b"[]",
    b'{"t":',
    b'"',
    b"\\",
    b"\\ud800",
    b"\xed\xa0\x80",
    b"\xff",
    b"\xc0\xaf",
    b"NaN",
    b"Infinity",
    b"1e400",
    b"-0",
    b"null",
    b"true",
    b"\n",
    b"!",
    b"\n!\n",
    b'"proof"',
    b'"admit"',
    b'"challenge"',
    b'"admitted"',
    b'"refused"',
    b'"nonce":"',
    b'"mac":"',
    b'"role":"mcp"',
    b'"protocol":1',
    b'"v":1',
    b"00" * 32,
    b" " * 64,
]


def _load(name: str) -> ModuleType:
    if str(REPO) not in sys.path:  # also works as `python fuzz/run.py`
        sys.path.insert(0, str(REPO))
    return importlib.import_module(f"fuzz.{name}")


def _max_len(module: ModuleType) -> int:
    return int(getattr(module, "MAX_LEN", MAX_LEN))


def _mutate(rng: random.Random, data: bytes, pool: list[bytes], max_len: int = MAX_LEN) -> bytes:
    buf = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(10)
        pos = rng.randint(0, len(buf))
        if op == 0 and buf:  # flip a bit
            i = rng.randrange(len(buf))
            buf[i] ^= 1 << rng.randrange(8)
        elif op == 1 and buf:  # random byte
            buf[rng.randrange(len(buf))] = rng.randrange(256)
        elif op == 2:  # insert random bytes
            buf[pos:pos] = rng.randbytes(rng.randint(1, 8))
        elif op == 3 and buf:  # delete a range
            del buf[pos : pos + rng.randint(1, 16)]
        elif op == 4 and buf:  # duplicate a range
            start = rng.randrange(len(buf))
            buf[pos:pos] = buf[start : start + rng.randint(1, 32)]
        elif op == 5:  # splice another input
            other = rng.choice(pool)
            cut = rng.randint(0, len(other))
            buf = buf[:pos] + bytearray(other[cut:] if rng.random() < 0.5 else other[:cut])
        elif op == 6:  # insert a token
            buf[pos:pos] = rng.choice(TOKENS)
        elif op == 7 and buf:  # overwrite with a token, keeping the length (and the headers)
            token = rng.choice(TOKENS)[: len(buf) - min(pos, len(buf) - 1)]
            start = min(pos, len(buf) - 1)
            buf[start : start + len(token)] = token
        elif op == 8 and buf:  # nudge a byte (digit 3 -> 4, 'e' -> 'f', ...)
            i = rng.randrange(len(buf))
            buf[i] = (buf[i] + rng.choice((-1, 1))) % 256
        else:  # truncate
            del buf[pos:]
    return bytes(buf[:max_len])


def _failure(module: ModuleType, data: bytes) -> str | None:
    """How ``data`` fails (exception type and first line), or None when it passes."""
    try:
        module.test_one_input(data)
    except Exception as exc:  # noqa: BLE001 - any escape is a finding
        first = (str(exc).splitlines() or [""])[0][:200]
        return f"{type(exc).__name__}: {first}"
    return None


def minimise(module: ModuleType, data: bytes, seconds: float = MINIMISE_SECONDS) -> bytes:
    """A shorter input that fails the same way (delta debugging: drop chunks, then bytes)."""
    want = _failure(module, data)
    if want is None:
        return data
    deadline = time.monotonic() + seconds
    best = data
    size = max(1, len(best) // 2)
    while size >= 1 and time.monotonic() < deadline:
        start, shrunk = 0, False
        while start < len(best) and time.monotonic() < deadline:
            candidate = best[:start] + best[start + size :]
            if _failure(module, candidate) == want:
                best, shrunk = candidate, True
            else:
                start += size
        if not shrunk:
            size //= 2
    return best


def run_fallback(
    name: str, module: ModuleType, runs: int | None, seconds: float | None, seed: int
) -> tuple[bool, str]:
    rng = random.Random(f"{seed}:{name}")
    pool = list(module.SEEDS) or [b""]
    max_len = _max_len(module)
    deadline = time.monotonic() + seconds if seconds is not None else None
    limit = runs if runs is not None else (None if seconds is not None else DEFAULT_RUNS)
    done = 0
    start = time.monotonic()
    while (limit is None or done < limit) and (deadline is None or time.monotonic() < deadline):
        if done < len(module.SEEDS):
            data = module.SEEDS[done]
        else:
            data = _mutate(rng, rng.choice(pool), pool, max_len)
        try:
            module.test_one_input(data)
        except Exception:  # any escape, AssertionError included, is a finding
            traceback.print_exc()
            small = minimise(module, data)
            workdir = Path(tempfile.mkdtemp(prefix=f"tabwarden-{name}-"))
            (workdir / "crash").write_bytes(data)
            (workdir / "minimised").write_bytes(small)
            print(f"{name}: failing input ({len(data)} bytes): {data[:512]!r}", file=sys.stderr)
            print(f"{name}: minimised ({len(small)} bytes): {small[:512]!r}", file=sys.stderr)
            return False, f"fallback, failed after {done} runs, inputs in {workdir}"
        done += 1
        if rng.random() < 0.02 and len(pool) < 512:
            pool.append(data)
    return True, f"fallback, {done} runs, {time.monotonic() - start:.1f}s"


def run_atheris(
    name: str, module: ModuleType, runs: int | None, seconds: float | None, seed: int
) -> tuple[bool, str]:
    workdir = Path(tempfile.mkdtemp(prefix=f"tabwarden-{name}-"))
    corpus = workdir / "corpus"
    corpus.mkdir()
    for index, data in enumerate(module.SEEDS):
        (corpus / f"seed-{index}").write_bytes(data)
    args = [
        sys.executable,
        str(FUZZ_DIR / f"{name}.py"),
        f"-max_len={_max_len(module)}",
        f"-seed={seed}",
        f"-artifact_prefix={workdir}/",
    ]
    if runs is None and seconds is None:
        runs = DEFAULT_RUNS
    if runs is not None:
        args.append(f"-runs={runs}")
    if seconds is not None:
        args.append(f"-max_total_time={max(1, int(seconds))}")
    args.append(str(corpus))
    start = time.monotonic()
    proc = subprocess.run(  # noqa: S603 - our own interpreter and harness
        args, cwd=REPO, capture_output=True, text=True, errors="replace", check=False
    )
    elapsed = time.monotonic() - start
    output = proc.stdout + proc.stderr
    if proc.returncode != 0:
        sys.stderr.write("\n".join(output.splitlines()[-60:]) + "\n")
        for crash in sorted(workdir.glob("crash-*")):
            _minimise_atheris(name, crash, workdir / f"minimised-{crash.name}")
        return False, f"atheris, exit {proc.returncode}, {elapsed:.1f}s, artifacts in {workdir}"
    shutil.rmtree(workdir, ignore_errors=True)
    match = re.search(r"Done (\d+) runs", output)
    count = match.group(1) if match else "?"
    return True, f"atheris, {count} runs, {elapsed:.1f}s"


def _minimise_atheris(name: str, crash: Path, out: Path) -> None:
    subprocess.run(  # noqa: S603 - our own interpreter and harness
        [
            sys.executable,
            str(FUZZ_DIR / f"{name}.py"),
            "-minimize_crash=1",
            f"-max_total_time={int(MINIMISE_SECONDS)}",
            f"-exact_artifact_path={out}",
            str(crash),
        ],
        cwd=REPO,
        capture_output=True,
        check=False,
    )


def run_node(name: str, runs: int | None, seconds: float | None, seed: int) -> tuple[bool, str]:
    node = shutil.which("node")
    if node is None:
        return False, "node is not installed (scripts/setup installs it)"
    workdir = Path(tempfile.mkdtemp(prefix=f"tabwarden-{name}-"))
    if runs is None:
        runs = DEFAULT_RUNS if seconds is None else 2**31
    args = [node, str(FUZZ_DIR / "js" / f"{name}.mjs"), "--runs", str(runs), "--seed", str(seed)]
    if seconds is not None:
        args += ["--seconds", str(seconds)]
    args += ["--artifact", str(workdir / "crash.json")]
    start = time.monotonic()
    proc = subprocess.run(  # noqa: S603 - Node and a harness in this checkout
        args, cwd=REPO, capture_output=True, text=True, errors="replace", check=False
    )
    elapsed = time.monotonic() - start
    match = re.search(r"^ok (\d+) runs$", proc.stdout, re.MULTILINE)
    if proc.returncode != 0 or match is None:
        sys.stderr.write("\n".join((proc.stdout + proc.stderr).splitlines()[-40:]) + "\n")
        return False, f"node, exit {proc.returncode}, {elapsed:.1f}s, artifacts in {workdir}"
    shutil.rmtree(workdir, ignore_errors=True)
    return True, f"node, {match.group(1)} runs, {elapsed:.1f}s"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fuzz.run", description=__doc__.split("\n")[0])
    parser.add_argument(
        "--budget",
        "--runs",
        dest="runs",
        type=int,
        help=f"inputs per harness (default {DEFAULT_RUNS})",
    )
    parser.add_argument("--seconds", type=float, help="time budget per harness")
    parser.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    parser.add_argument("--no-atheris", action="store_true", help="force the fallback mutator")
    parser.add_argument("--only", choices=ALL_HARNESSES, action="append", help="run just these")
    args = parser.parse_args(argv)
    use_atheris = not args.no_atheris and importlib.util.find_spec("atheris") is not None
    runner = run_atheris if use_atheris else run_fallback
    failed = 0
    seed = max(1, args.seed)
    for name in args.only or ALL_HARNESSES:
        if name in NODE_HARNESSES:
            ok, detail = run_node(name, args.runs, args.seconds, seed)
        else:
            ok, detail = runner(name, _load(name), args.runs, args.seconds, seed)
        failed += not ok
        print(f"{name}: {'ok' if ok else 'FAILED'} ({detail})", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
