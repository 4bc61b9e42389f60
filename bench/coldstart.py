"""A focused micro-bench of ``tabwarden mcp``'s start without a browser: spawn → ``initialize``
answered, and → ``tools/list`` answered, as the bench's client spawns it (``python -m tabwarden
mcp``, re-executed isolated), against a throwaway trust record (a file-store host key, this
process paired: the path a paired client takes), wall time and the server's CPU at each answer;
then, untimed, the process's memory (RSS, USS, PSS: ``bench/memory.py`` says which counts what)
after ``tools/list`` and after ``CALLS`` local tool calls.

``--against PYTHON`` runs another checkout's interpreter (its venv's ``python``) interleaved
with this one, round by round, so a before/after pair shares the machine's load. The CPU figure
moves far less than wall time on a loaded machine. Figures, never pass/fail::

    .venv/bin/python -m bench.coldstart --rounds 12 --against ../main/.venv/bin/python
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import psutil

from bench.jsonrpc import INITIALIZED, TOOLS_LIST, initialize
from bench.jsonrpc import line as _line
from tabwarden.cli.demo import provision_throwaway_trust

#: The handshake's first request, as this bench's client says it.
INITIALIZE = initialize("bench.coldstart")

#: The calls made after the timed part, before memory is read again: local ones (no browser).
CALLS = 5
MIB = 1024 * 1024


def _call(id_: int) -> dict[str, object]:
    params = {"name": "bridge_status", "arguments": {}}
    return {"jsonrpc": "2.0", "id": id_, "method": "tools/call", "params": params}


def _cpu_ms(pid: int) -> float:
    times = psutil.Process(pid).cpu_times()
    return (times.user + times.system) * 1000


def _memory(pid: int, when: str) -> dict[str, float]:
    """The process's RSS, USS and PSS in MiB (``memory.full_info``)."""
    info = psutil.Process(pid).memory_full_info()
    return {f"{when}_{kind}": getattr(info, kind) / MIB for kind in ("rss", "uss", "pss")}


def _spawn(python: str, env: dict[str, str], errlog: IO[str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(  # noqa: S603 (an interpreter the operator named, fixed arguments)
        [python, "-m", "tabwarden", "mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=errlog,
        env=env,
        cwd="/",
    )


@contextlib.contextmanager
def companion(python: str, env: dict[str, str], errlog: IO[str]) -> Iterator[None]:
    """A session of ``python``'s checkout kept open (initialized, idle) around the rounds, so
    the measured one is an *extra* session: the libraries it maps are mapped by another session
    too, and its USS is what it adds (``bench/memory.py``). Without one, the checkout measured
    from the bench's own venv would share its libraries with the bench process and the other
    would not."""
    proc = _spawn(python, env, errlog)
    assert proc.stdin is not None and proc.stdout is not None  # noqa: S101 (PIPE above)
    try:
        proc.stdin.write(_line(INITIALIZE))
        proc.stdin.flush()
        if b'"serverInfo"' not in proc.stdout.readline():
            raise SystemExit(f"{python}: the companion session did not initialize")
        yield
    finally:
        proc.stdin.close()
        proc.wait(timeout=60)


def one_start(python: str, env: dict[str, str], errlog: IO[str]) -> dict[str, float]:
    """One spawn: wall ms and the server's CPU ms when ``initialize`` and ``tools/list`` were
    answered (the reply is checked after the clock stops); then, untimed, its memory, and again
    after ``CALLS`` tool calls."""
    start = time.perf_counter()
    proc = _spawn(python, env, errlog)
    assert proc.stdin is not None and proc.stdout is not None  # noqa: S101 (PIPE above)
    try:
        proc.stdin.write(_line(INITIALIZE))
        proc.stdin.flush()
        first = proc.stdout.readline()
        out = {"init_ms": (time.perf_counter() - start) * 1000, "init_cpu": _cpu_ms(proc.pid)}
        proc.stdin.write(_line(INITIALIZED) + _line(TOOLS_LIST))
        proc.stdin.flush()
        second = proc.stdout.readline()
        out |= {"list_ms": (time.perf_counter() - start) * 1000, "list_cpu": _cpu_ms(proc.pid)}
        out |= _memory(proc.pid, "listed")
        for id_ in range(3, 3 + CALLS):
            proc.stdin.write(_line(_call(id_)))
            proc.stdin.flush()
            if b'"result"' not in proc.stdout.readline():
                raise SystemExit(f"{python}: bridge_status was not answered")
        out |= _memory(proc.pid, "called")
    finally:
        proc.stdin.close()
        proc.wait(timeout=60)
    if b'"serverInfo"' not in first or b'"tools"' not in second:
        raise SystemExit(f"{python}: a wrong answer: {first[:200]!r} {second[:200]!r}")
    return out


def _throwaway_env(root: Path) -> dict[str, str]:
    """A config and runtime dir of its own under ``root`` for one interpreter: two checkouts'
    catalogues have different schema-cache keys, and a shared config dir would make each start
    regenerate the other's cache (``mcp_server/schema_cache.py``)."""
    config, runtime = root / "config", root / "run"
    for directory in (root, config, runtime):
        directory.mkdir(mode=0o700)
    provision_throwaway_trust(config, client_exe=sys.executable, origins=[])
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(root),
        "TABWARDEN_CONFIG_DIR": str(config),
        "TABWARDEN_RUNTIME_DIR": str(runtime),
        "XDG_RUNTIME_DIR": str(runtime),
    }


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.coldstart", description=__doc__)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--against", help="another checkout's python, run interleaved")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="tw-coldstart-"))
    pythons = {"this": sys.executable} | ({"against": args.against} if args.against else {})
    envs = {name: _throwaway_env(root / name) for name in pythons}
    samples: dict[str, list[dict[str, float]]] = {name: [] for name in pythons}
    with open(root / "mcp.err", "w") as errlog, contextlib.ExitStack() as stack:
        for name, python in pythons.items():  # untimed: fills each one's tool-schema cache
            one_start(python, envs[name], errlog)
            stack.enter_context(companion(python, envs[name], errlog))
        for round_ in range(args.rounds):
            order = list(pythons.items())
            for name, python in order if round_ % 2 == 0 else reversed(order):
                samples[name].append(one_start(python, envs[name], errlog))
    for name, runs in samples.items():
        median = {key: statistics.median(run[key] for run in runs) for key in runs[0]}
        print(
            f"{name} ({pythons[name]}), median of {len(runs)}: initialize {median['init_ms']:.0f} "
            f"ms (CPU {median['init_cpu']:.0f} ms); tools/list {median['list_ms']:.0f} ms "
            f"(CPU {median['list_cpu']:.0f} ms)"
        )
        for when, label in (("listed", "after tools/list"), ("called", f"after {CALLS} calls")):
            print(
                f"  memory {label}: RSS {median[f'{when}_rss']:.1f} MiB, USS "
                f"{median[f'{when}_uss']:.1f}, PSS {median[f'{when}_pss']:.1f}"
            )
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
