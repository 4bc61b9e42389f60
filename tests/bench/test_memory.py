"""``bench/memory.py``: the sampler sums RSS, USS and PSS over a server's own processes only,
read from real processes (a child that holds private memory, one that belongs to no server)."""

from __future__ import annotations

import subprocess
import sys

import psutil

from bench.memory import KINDS, PeakSampler

#: Holds ~64 MiB of written (so private, resident) memory until its stdin closes.
HOLDER = "import sys\nheld = bytearray(64 << 20)\nheld[::4096] = b'x' * (len(held) // 4096)\n"
HOLDER += "print('ready', flush=True)\nsys.stdin.read()\n"
MIB = 1 << 20


def _holder() -> subprocess.Popen[str]:
    proc = subprocess.Popen(  # noqa: S603 (this interpreter and a fixed script)
        [sys.executable, "-c", HOLDER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
    return proc


def test_each_kind_is_summed_over_the_servers_own_processes_and_peaked_per_phase() -> None:
    mine, other = _holder(), _holder()
    try:

        def owner(child: psutil.Process) -> str | None:
            return "server" if child.pid == mine.pid else None  # ``other`` is no server's

        with PeakSampler(owner, chromium_dir="/nonexistent-chromium") as sampler:
            now = sampler.sample()
            sampler.measure({"server": "one"})
            peak = {kind: sampler.peak("server", "one", kind) for kind in KINDS}
            sampler.measure({})
        assert list(now) == ["server"]  # the unowned child is never counted
        sums = now["server"]
        own = psutil.Process(mine.pid).memory_full_info()
        assert sums["uss"] >= 64 * MIB and own.uss >= 64 * MIB
        assert sums["rss"] >= sums["pss"] >= sums["uss"]  # shared pages: all, shared out, none
        assert sums["rss"] < 2 * 64 * MIB  # one process's figure, not two
        for kind in KINDS:
            value = peak[kind]
            assert value is not None and value >= 64 * MIB
        assert sampler.peak("server", "never measured") is None
    finally:
        for proc in (mine, other):
            assert proc.stdin is not None
            proc.stdin.close()
            proc.wait(timeout=60)
