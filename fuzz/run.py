"""Run every fuzz harness once: ``python -m fuzz.run [--runs N] [--seconds S]``.

With atheris installed each harness runs under libFuzzer in its own process
(``python fuzz/fuzz_x.py -runs=N -max_len=4096 <seed corpus>``); without it (or with
``--no-atheris``) a seeded random-mutation loop calls ``test_one_input`` directly. Prints one
summary line per harness and exits non-zero if any harness found a failure. Crash inputs are kept
in the temporary directory the summary line names.
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
HARNESSES = ("fuzz_nativemsg", "fuzz_frames", "fuzz_handshake")
MAX_LEN = 4096
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


def _mutate(rng: random.Random, data: bytes, pool: list[bytes]) -> bytes:
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
    return bytes(buf[:MAX_LEN])


def run_fallback(
    name: str, module: ModuleType, runs: int | None, seconds: float | None, seed: int
) -> tuple[bool, str]:
    rng = random.Random(f"{seed}:{name}")
    pool = list(module.SEEDS) or [b""]
    deadline = time.monotonic() + seconds if seconds is not None else None
    limit = runs if runs is not None else (None if seconds is not None else DEFAULT_RUNS)
    done = 0
    start = time.monotonic()
    while (limit is None or done < limit) and (deadline is None or time.monotonic() < deadline):
        if done < len(module.SEEDS):
            data = module.SEEDS[done]
        else:
            data = _mutate(rng, rng.choice(pool), pool)
        try:
            module.test_one_input(data)
        except Exception:  # any escape, AssertionError included, is a finding
            traceback.print_exc()
            print(f"{name}: failing input ({len(data)} bytes): {data[:512]!r}", file=sys.stderr)
            return False, f"fallback, failed after {done} runs"
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
        f"-max_len={MAX_LEN}",
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
        return False, f"atheris, exit {proc.returncode}, {elapsed:.1f}s, artifacts in {workdir}"
    shutil.rmtree(workdir, ignore_errors=True)
    match = re.search(r"Done (\d+) runs", output)
    count = match.group(1) if match else "?"
    return True, f"atheris, {count} runs, {elapsed:.1f}s"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m fuzz.run", description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, help=f"inputs per harness (default {DEFAULT_RUNS})")
    parser.add_argument("--seconds", type=float, help="time budget per harness")
    parser.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    parser.add_argument("--no-atheris", action="store_true", help="force the fallback mutator")
    parser.add_argument("--only", choices=HARNESSES, action="append", help="run just these")
    args = parser.parse_args(argv)
    use_atheris = not args.no_atheris and importlib.util.find_spec("atheris") is not None
    runner = run_atheris if use_atheris else run_fallback
    failed = 0
    for name in args.only or HARNESSES:
        ok, detail = runner(name, _load(name), args.runs, args.seconds, max(1, args.seed))
        failed += not ok
        print(f"{name}: {'ok' if ok else 'FAILED'} ({detail})", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
