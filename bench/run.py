"""The bench's run: the floor first (its own browser), then the three servers side by side,
every figure interleaved round-robin (each round measures each server once, the order rotating
per round) so machine load falls on all alike. Results are plain data for ``report.py``.

Every failure is recorded against its figure and server and shown; a server that cannot start
is shown as failed, never left out silently. It must never touch the person's own browser
profile, trust record or HOME: every browser here is a throwaway.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
import time
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil

from bench import agents, figures, tasks
from bench.floor import Floor, measure_floor
from bench.memory import Owner, PeakSampler
from bench.servers import (
    DEVTOOLS,
    PLAYWRIGHT,
    TABWARDEN,
    Launcher,
    Session,
    one_line,
)
from bench.site import serve_site

#: Figure names, in the order they run. ``--only`` takes these and server names.
FIGURES = ("floor", "light", "flow", "text", "screenshot", "cold", "sessions", "tasks")
ONE, EIGHT = "one session", f"{figures.SESSIONS} sessions"


@dataclass(frozen=True, kw_only=True)
class Settings:
    iterations: int
    servers: tuple[str, ...]
    figures: tuple[str, ...]
    chrome: str
    keep: bool = False

    def rounds(self, figure: str) -> int:
        """Rounds per figure: ``iterations``; the light call 5x as many (it is cheap); the
        10 MB figures a quarter as many (at least one)."""
        if figure == "light":
            return self.iterations * 5
        if figure in ("text", "screenshot"):
            return max(1, self.iterations // 4)
        if figure == "tasks":
            return 1  # each task once per server: a capability figure, not a speed one
        return self.iterations

    @property
    def session_calls(self) -> int:
        return 100 if self.iterations >= 10 else 10

    @property
    def floor_echoes(self) -> int:
        return self.iterations * 50

    @property
    def floor_transfers(self) -> int:
        """How many 10 MB transfers the floor times."""
        return 10 if self.iterations >= 10 else 2


@dataclass
class Cell:
    """One figure of one server: its samples (ms), its failures, and what else was seen."""

    samples_ms: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    notes: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class Results:
    cells: dict[str, dict[str, Cell]] = field(default_factory=dict)
    concurrent: dict[str, figures.Concurrent] = field(default_factory=dict)
    #: server → phase → ``memory.KINDS`` kind → peak bytes.
    memory: dict[str, dict[str, dict[str, int]]] = field(default_factory=dict)
    floor: Floor | None = None
    floor_error: str | None = None
    #: server → the capability tasks' outcomes, in ``tasks.TASKS`` order.
    tasks: dict[str, list[agents.Outcome]] = field(default_factory=dict)

    def cell(self, figure: str, server: str) -> Cell:
        return self.cells.setdefault(figure, {}).setdefault(server, Cell())


def _say(text: str) -> None:
    print(f"bench: {text}", flush=True)


def _owner(launcher: Launcher) -> Owner:
    def owner(child: psutil.Process) -> str | None:
        if launcher.browser is not None and launcher.browser.process is not None:
            if child.pid == launcher.browser.process.pid:
                return TABWARDEN  # its non-Chromium descendants: the host Chrome launched
        line = " ".join(child.cmdline())
        if "-m tabwarden mcp" in line:
            return TABWARDEN
        if "@playwright/mcp" in line:
            return PLAYWRIGHT
        if "chrome-devtools-mcp" in line:
            return DEVTOOLS
        return None

    return owner


async def _record(results: Results, figure: str, server: str, measure: Any) -> None:
    cell = results.cell(figure, server)
    try:
        sample = await measure
    except Exception as exc:  # every failure is a counted, shown error
        cell.errors.append(one_line(exc))
    else:
        cell.samples_ms.append(sample.ms)
        if sample.notes:
            cell.notes.append(sample.notes)


def _order(servers: list[str], round_no: int) -> list[str]:
    shift = round_no % len(servers)
    return servers[shift:] + servers[:shift]


async def _servers(settings: Settings, results: Results, root: Path, origin: str) -> None:
    launcher = Launcher(
        root=root, chrome=settings.chrome, origin=origin, no_confirm="tasks" in settings.figures
    )
    try:
        if TABWARDEN in settings.servers:
            launcher.start_tabwarden_browser()
        with PeakSampler(
            _owner(launcher), os.path.dirname(os.path.realpath(settings.chrome))
        ) as sampler:
            async with AsyncExitStack() as stack:
                live: dict[str, Session] = {}
                for server in settings.servers:
                    _say(f"starting {server}")
                    try:
                        live[server] = await stack.enter_async_context(launcher.session(server))
                    except Exception as exc:  # shown against every figure of that server
                        for figure in settings.figures:
                            if figure != "floor":
                                results.cell(figure, server).errors.append(
                                    "did not start: " + one_line(exc)
                                )
                        _say(f"{server} did not start: {exc} (logs in {root})")
                order = [s for s in settings.servers if s in live]
                sampler.measure(dict.fromkeys(order, ONE))
                await _interleave(settings, results, launcher, live, order, origin, sampler)
                sampler.measure({})
        results.memory = {  # the sampler has stopped
            s: {phase: dict(kinds) for phase, kinds in p.items()} for s, p in sampler.peaks.items()
        }
    finally:
        launcher.close()


async def _interleave(
    settings: Settings,
    results: Results,
    launcher: Launcher,
    live: dict[str, Session],
    order: list[str],
    origin: str,
    sampler: PeakSampler,
) -> None:
    for figure in settings.figures:
        if figure == "floor" or not order:
            continue
        rounds = settings.rounds(figure)
        what = (
            f"{figures.SESSIONS} sessions x {settings.session_calls} calls"
            if figure == "sessions"
            else f"{rounds} round(s)"
        )
        _say(f"{figure}: {what} x {', '.join(order)}")
        started = time.monotonic()
        if figure in ("text", "screenshot"):
            opener = figures.open_text_page if figure == "text" else figures.open_image_page
            for server in order:  # untimed: the page the figure reads
                await _record(
                    results, f"{figure}:open", server, _opened(opener, live[server], origin)
                )
        if figure == "sessions":
            saved = sampler.phases
            for server in _order(order, 0):
                sampler.measure({server: EIGHT})
                results.concurrent[server] = await figures.sessions(
                    live[server], launcher, settings.session_calls
                )
            sampler.measure(saved)
            _say(f"{figure}: done in {time.monotonic() - started:.0f} s")
            continue
        if figure == "tasks":
            await _tasks(results, live, order, origin)
            _say(f"{figure}: done in {time.monotonic() - started:.0f} s")
            continue
        if figure == "cold":
            saved = sampler.phases
            sampler.measure({})  # an extra process per server: not "one session"
        for round_no in range(rounds):
            for server in _order(order, round_no):
                session = live[server]
                if figure == "light":
                    measure = figures.light(session)
                elif figure == "flow":
                    measure = figures.flow(session, origin)
                elif figure == "text":
                    measure = figures.large_text(session)
                elif figure == "screenshot":
                    measure = figures.screenshot(session)
                else:
                    measure = figures.cold_start(launcher, server)
                await _record(results, figure, server, measure)
        if figure == "cold":
            sampler.measure(saved)
        _say(f"{figure}: done in {time.monotonic() - started:.0f} s")


async def _tasks(results: Results, live: dict[str, Session], order: list[str], origin: str) -> None:
    """Each task once per server, the servers' order rotating task by task."""
    workers = {server: await agents.agent_for(live[server]) for server in order}
    for number, task in enumerate(tasks.TASKS):
        for server in _order(order, number):
            try:
                outcome = await agents.episode(workers[server], task, origin, str(number))
            except Exception as exc:  # an error outside a step: shown as the task's failure
                outcome = agents.Outcome(task.name, False, "error: " + one_line(exc, 80), 0.0)
            results.tasks.setdefault(server, []).append(outcome)
            _say(
                f"tasks: {server} {task.name}: "
                + ("solved" if outcome.solved else f"not solved ({outcome.code})")
                + f" in {outcome.ms:.0f} ms"
            )


async def _opened(opener: Any, session: Session, origin: str) -> figures.Sample:
    start = time.perf_counter()
    await opener(session, origin)
    return figures.Sample((time.perf_counter() - start) * 1000)


def run(settings: Settings) -> Results:
    results = Results()
    root = Path(tempfile.mkdtemp(prefix="tabwarden-bench-"))
    try:
        if "floor" in settings.figures:
            echoes, transfers = settings.floor_echoes, settings.floor_transfers
            _say(f"floor: {echoes} echoes, {transfers} x 10 MB (its own extension and host)")
            try:
                results.floor = measure_floor(echo=echoes, bulk=transfers, chrome=settings.chrome)
            except Exception as exc:  # shown in the report
                results.floor_error = one_line(exc, 500)
        if settings.servers and any(f != "floor" for f in settings.figures):
            with serve_site() as origin:
                asyncio.run(_servers(settings, results, root, origin))
    finally:
        if settings.keep:
            _say(f"kept {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)
    return results
