"""Peak memory of each server's own processes (never Chromium's), sampled with psutil.

Every server runs as a child of the bench (the MCP client spawns it) or, for tabwarden's host, as
a descendant of the throwaway Chromium the bench started. A process belongs to a server when
``owner`` maps its top-level ancestor among the bench's children to that server's name; any
process whose executable lives in Chromium's directory is Chromium's and never counted. A figure
is a sum over a server's processes at one instant, its peak over a phase, of each of ``KINDS``
(``memory_full_info``, from ``/proc/PID/smaps_rollup``):

- ``rss``: every page the process maps, shared ones included, so a shared library (the
  interpreter, pydantic-core, cryptography; node and V8) counts once *per process*: summed over
  eight sessions it bills the same pages eight times.
- ``uss``: the pages only this process maps: what its exit would free.
- ``pss``: each page divided by the number of processes mapping it. Summed over a set of
  processes it is the memory they take together, each shared page once; the growth of that sum
  from one session to eight, over seven, is what an extra session costs the machine.

It must never signal or otherwise touch the processes it reads.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable

import psutil

INTERVAL_S = 0.2  # the sampler costs CPU the servers share; 5 Hz catches a phase's peak
#: What is summed and peaked: bytes of each (see above).
KINDS = ("rss", "uss", "pss")

#: ``owner(child)`` → the server a direct child of the bench (and all below it) belongs to.
Owner = Callable[[psutil.Process], "str | None"]


class PeakSampler:
    """A background thread; ``phases`` maps a server to what is being measured of it now
    (a server missing from it is not sampled)."""

    def __init__(self, owner: Owner, chromium_dir: str) -> None:
        self._owner = owner
        self._chromium_dir = chromium_dir.rstrip("/") + "/"
        self._me = psutil.Process(os.getpid())
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self.phases: dict[str, str] = {}
        #: server → phase → kind → the peak of the sum (each kind peaked on its own).
        self.peaks: dict[str, dict[str, dict[str, int]]] = {}
        self._thread = threading.Thread(target=self._run, name="memory-sampler", daemon=True)

    def __enter__(self) -> PeakSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def measure(self, phases: dict[str, str]) -> None:
        """From now on sample ``phases`` (server → phase); the first sample is taken at once,
        so a phase shorter than the interval still has one."""
        self.phases = dict(phases)
        self._record(self.phases)

    def peak(self, server: str, phase: str, kind: str = "rss") -> int | None:
        with self._lock:
            return self.peaks.get(server, {}).get(phase, {}).get(kind)

    def _is_chromium(self, proc: psutil.Process) -> bool:
        try:
            return os.path.realpath(proc.exe()).startswith(self._chromium_dir)
        except (psutil.Error, OSError):
            return False

    def sample(self) -> dict[str, dict[str, int]]:
        """Each of ``KINDS`` summed per server right now."""
        totals: dict[str, dict[str, int]] = {}
        for child in self._me.children():
            with contextlib.suppress(psutil.Error):
                server = self._owner(child)
                if server is None:
                    continue
                for proc in [child, *child.children(recursive=True)]:
                    with contextlib.suppress(psutil.Error):
                        if self._is_chromium(proc):
                            continue
                        info = proc.memory_full_info()
                        sums = totals.setdefault(server, dict.fromkeys(KINDS, 0))
                        for kind in KINDS:
                            sums[kind] += getattr(info, kind)
        return totals

    def _run(self) -> None:
        while not self._stop.wait(INTERVAL_S):
            self._record(dict(self.phases))

    def _record(self, phases: dict[str, str]) -> None:
        if phases:
            totals = self.sample()
            with self._lock:
                for server, sums in totals.items():
                    phase = phases.get(server)
                    if phase is None:
                        continue
                    slot = self.peaks.setdefault(server, {}).setdefault(phase, {})
                    for kind, value in sums.items():
                        slot[kind] = max(slot.get(kind, 0), value)
