"""The bench's results as a JSON document (``summarize``) and as the Markdown table
docs/performance.md shows (``table``, rendered from that document alone, so a table can be
re-rendered from any saved run). Pure: no clock, no processes; a figure that was not measured
prints "—", and every error is counted in its cell and listed under the table. Nothing here may
invent a figure.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from bench.figures import IMAGE_HEIGHT, IMAGE_WIDTH, SESSIONS
from bench.memory import KINDS
from bench.run import EIGHT, ONE, Results, Settings
from bench.servers import PEERS, SERVERS, TABWARDEN, TITLES, describe_tools
from bench.stats import median, percentile

ROWS = (
    ("light", "lightest browser call (tab list), median"),
    ("flow", "agent flow (navigate, snapshot, click by ref, read text), median"),
    ("text", "10 MB page text, median"),
    (
        "screenshot",
        f"full-page screenshot ({IMAGE_WIDTH}×{IMAGE_HEIGHT} noise, PNG inline), median",
    ),
    ("cold", "spawn → `initialize` answered, median"),
)
MB = 1024 * 1024


def _cell(samples: list[float], errors: list[str]) -> dict[str, Any]:
    return {
        "n": len(samples),
        "median_ms": median(samples),
        "p99_ms": percentile(samples, 99),
        "errors": len(errors),
        "error_kinds": dict(Counter(errors).most_common(5)),
        "samples_ms": [round(s, 3) for s in samples],
    }


def summarize(settings: Settings, results: Results, machine: dict[str, Any]) -> dict[str, Any]:
    figures: dict[str, dict[str, Any]] = {}
    for figure, by_server in results.cells.items():
        for server, cell in by_server.items():
            samples, notes = list(cell.samples_ms), cell.notes
            out: dict[str, Any]
            if figure == "screenshot":
                inline = [s for s, n in zip(samples, notes, strict=True) if n.get("inline")]
                other = [s for s, n in zip(samples, notes, strict=True) if not n.get("inline")]
                out = _cell(inline, cell.errors)
                if other:
                    out["not_inline"] = {"n": len(other), "median_ms": median(other)}
                sizes = [n["bytes"] for n in notes if n.get("inline")]
                if sizes:
                    out["png_bytes"] = max(sizes)
                    out["png_size"] = next(
                        [n["width"], n["height"]] for n in notes if n.get("inline")
                    )
            else:
                out = _cell(samples, cell.errors)
            figures.setdefault(figure, {})[server] = out
    sessions = {
        server: {
            "calls": len(c.latencies_ms) + len(c.lost),
            "lost": len(c.lost),
            "lost_kinds": dict(Counter(c.lost).most_common(5)),
            "p50_ms": percentile(c.latencies_ms, 50),
            "p99_ms": percentile(c.latencies_ms, 99),
            "wall_ms": c.wall_ms,
        }
        for server, c in results.concurrent.items()
    }
    memory: dict[str, dict[str, float | None]] = {}
    for server, peaks in results.memory.items():
        memory[server] = {}
        for kind in KINDS:  # RSS under the keys of runs before USS and PSS were measured
            suffix = "" if kind == "rss" else f"_{kind}"
            one, eight = peaks.get(ONE, {}).get(kind), peaks.get(EIGHT, {}).get(kind)
            memory[server] |= {
                f"one_session{suffix}_mb": one / MB if one else None,
                f"eight_sessions{suffix}_mb": eight / MB if eight else None,
                f"per_extra_session{suffix}_mb": (
                    (eight - one) / MB / (SESSIONS - 1) if one and eight else None
                ),
            }
    floor: dict[str, Any] | None = None
    if results.floor is not None:
        f = results.floor
        bulk = median(f.bulk_ms)
        floor = {
            "echo": _cell(f.echo_ms, []),
            "bulk": _cell(f.bulk_ms, []),
            "bulk_bytes": f.bulk_bytes,
            "chunk_bytes": f.chunk_bytes,
            "bulk_mb_per_s": f.bulk_bytes / MB / (bulk / 1000) if bulk else None,
        }
    elif results.floor_error:
        floor = {"error": results.floor_error}
    doc: dict[str, Any] = {
        "machine": machine,
        "tasks": summarize_tasks(results),
        "settings": {
            "iterations": settings.iterations,
            "servers": list(settings.servers),
            "figures": list(settings.figures),
            "rounds": {f: settings.rounds(f) for f in settings.figures},
            "session_calls": settings.session_calls,
            "sessions": EIGHT,
        },
        "tools": [{"operation": op, **cells} for op, cells in describe_tools()],
        "figures": figures,
        "sessions": sessions,
        "memory": memory,
        "floor": floor,
    }
    doc["targets"] = targets(doc)
    return doc


def summarize_tasks(results: Results) -> dict[str, Any]:
    """Per server: tasks solved of those run, the median time per task (every episode, and the
    solved ones), and each task's outcome (its failure code when not solved)."""
    out: dict[str, Any] = {}
    for server, outcomes in results.tasks.items():
        out[server] = {
            "solved": sum(o.solved for o in outcomes),
            "total": len(outcomes),
            "median_ms": median([o.ms for o in outcomes]),
            "median_solved_ms": median([o.ms for o in outcomes if o.solved]),
            "outcomes": {
                o.task: {
                    "solved": o.solved,
                    "code": o.code,
                    "ms": round(o.ms, 3),
                    "detail": o.detail,
                }
                for o in outcomes
            },
        }
    return out


def tasks_table(doc: dict[str, Any]) -> str:
    """The capability figure: tasks solved and time per task, then each task's outcome."""
    found = doc.get("tasks") or {}
    servers = [s for s in SERVERS if s in found]
    if not servers:
        return ""
    head = ["capability task", *(TITLES[s] for s in servers)]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines.append(
        "| **tasks solved** | "
        + " | ".join(f"**{found[s]['solved']}/{found[s]['total']}**" for s in servers)
        + " |"
    )
    lines.append(
        "| median time per task (all · solved) | "
        + " | ".join(
            f"{ms(found[s]['median_ms'])} · {ms(found[s]['median_solved_ms'])}" for s in servers
        )
        + " |"
    )
    names = list(dict.fromkeys(t for s in servers for t in found[s]["outcomes"]))
    for name in names:
        row = [name]
        for s in servers:
            o = found[s]["outcomes"].get(name)
            if o is None:
                row.append("—")
            elif o["solved"]:
                row.append(f"solved · {ms(o['ms'])}")
            else:
                row.append(f"not solved: `{o['code']}`")
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


# -- rendering ----------------------------------------------------------------------------


def ms(value: float | None) -> str:
    if value is None:
        return "—"
    if value >= 1000:
        return f"{value / 1000:.2f} s"
    if value >= 100:
        return f"{value:.0f} ms"
    if value >= 10:
        return f"{value:.1f} ms"
    return f"{value:.2f} ms"


def _ratio(mine: float | None, peers: list[float | None]) -> str:
    offered = [p for p in peers if p]
    if not mine or not offered:
        return "—"
    ratio = mine / min(offered)
    return f"{ratio:.2f} ({'ahead' if ratio < 1 else 'behind' if ratio > 1 else 'even'})"


def _best_ratio(doc: dict[str, Any], figure: str) -> float | None:
    cells = doc["figures"].get(figure, {})
    mine = cells.get(TABWARDEN, {}).get("median_ms")
    offered = [cells[p]["median_ms"] for p in PEERS if cells.get(p, {}).get("median_ms")]
    return mine / min(offered) if mine and offered else None


def targets(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """The performance targets (docs/performance.md), each with the figures it compares and
    whether it is met (``None``: not measured in this run)."""
    out: list[dict[str, Any]] = []
    figures, floor = doc["figures"], doc["floor"] or {}
    for figure, _label in ROWS:
        ratio = _best_ratio(doc, figure)
        out.append(
            {
                "target": f"{figure}: ≤ 1.0x the best peer",
                "value": None if ratio is None else round(ratio, 3),
                "met": None if ratio is None else ratio <= 1.0,
            }
        )
    light = figures.get("light", {}).get(TABWARDEN, {}).get("median_ms")
    echo = floor.get("echo", {}).get("median_ms")
    out.append(
        {
            "target": "light call ≤ native-messaging floor + 2 ms (medians)",
            "value": None if not (light and echo) else round(light - echo, 3),
            "met": None if not (light and echo) else light <= echo + 2,
        }
    )
    text = figures.get("text", {}).get(TABWARDEN, {})
    throughput = floor.get("bulk_mb_per_s")
    mine = None
    if text.get("median_ms"):
        mine = 10_000_000 / MB / (text["median_ms"] / 1000)
    out.append(
        {
            "target": "10 MB text ≥ 0.8x the floor's throughput",
            "value": None if not (mine and throughput) else round(mine / throughput, 3),
            "met": None if not (mine and throughput) else mine >= 0.8 * throughput,
        }
    )
    cold = figures.get("cold", {})
    mine_cold = cold.get(TABWARDEN, {}).get("median_ms")
    theirs = cold.get("playwright", {}).get("median_ms")
    out.append(
        {
            "target": "spawn → initialize ≤ @playwright/mcp's",
            "value": None if not (mine_cold and theirs) else round(mine_cold / theirs, 3),
            "met": None if not (mine_cold and theirs) else mine_cold <= theirs,
        }
    )
    s = doc["sessions"].get(TABWARDEN)
    measured = bool(s and s["p50_ms"])
    out.append(
        {
            "target": f"{EIGHT}: 0 lost, p99 ≤ 3x p50",
            "value": {k: s[k] for k in ("lost", "p50_ms", "p99_ms")} if s else None,
            "met": s["lost"] == 0 and s["p99_ms"] <= 3 * s["p50_ms"] if s and measured else None,
        }
    )
    for key, label in (("per_extra_session_mb", "RSS"), ("per_extra_session_pss_mb", "PSS")):
        per = doc["memory"].get(TABWARDEN, {}).get(key)
        out.append(
            {
                "target": f"memory per extra session ≤ 30 MB ({label})",
                "value": None if per is None else round(per, 1),
                "met": None if per is None else per <= 30,
            }
        )
    return out


def _figure_cell(cell: dict[str, Any] | None) -> str:
    if not cell:
        return "—"
    text = (
        "—" if cell["median_ms"] is None else f"{ms(cell['median_ms'])} · p99 {ms(cell['p99_ms'])}"
    )
    if cell.get("png_bytes"):
        text += f" · {cell['png_bytes'] / 1e6:.1f} MB"
    if cell.get("not_inline") and cell["median_ms"] is None:
        text = f"— (not inline: {ms(cell['not_inline']['median_ms'])} to a file)"
    if cell["errors"]:
        text += f" · **{cell['errors']} error{'s' if cell['errors'] != 1 else ''}**"
    return text


def table(doc: dict[str, Any]) -> str:
    servers = [s for s in SERVERS if s in doc["settings"]["servers"]]
    head = ["figure", *(TITLES[s] for s in servers), "tabwarden ÷ best peer"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    figures = doc["figures"]
    for figure, label in ROWS:
        if figure not in figures:
            continue
        cells = figures[figure]
        row = [label, *(_figure_cell(cells.get(s)) for s in servers)]
        mine = cells.get(TABWARDEN, {}).get("median_ms")
        row.append(_ratio(mine, [cells.get(p, {}).get("median_ms") for p in PEERS]))
        lines.append("| " + " | ".join(row) + " |")
    sessions = doc["sessions"]
    if sessions:
        calls = doc["settings"]["session_calls"]
        row = [f"{EIGHT} × {calls} calls: p50 · p99 · lost"]
        for s in servers:
            c = sessions.get(s)
            row.append(
                "—"
                if not c
                else f"{ms(c['p50_ms'])} · {ms(c['p99_ms'])} · {c['lost']}/{c['calls']}"
            )
        row.append(
            _ratio(
                sessions.get(TABWARDEN, {}).get("p50_ms"),
                [sessions.get(p, {}).get("p50_ms") for p in PEERS],
            )
        )
        lines.append("| " + " | ".join(row) + " |")
    memory = doc["memory"]
    if memory:
        for key, label in (
            ("one_session_mb", "peak RSS of the server's own processes, one session"),
            ("per_extra_session_mb", f"peak RSS per extra session ({EIGHT})"),
            ("one_session_pss_mb", "peak PSS of the server's own processes, one session"),
            ("per_extra_session_pss_mb", f"peak PSS per extra session ({EIGHT})"),
            ("one_session_uss_mb", "peak USS of the server's own processes, one session"),
            ("per_extra_session_uss_mb", f"peak USS per extra session ({EIGHT})"),
        ):
            if all(memory.get(s, {}).get(key) is None for s in servers):
                continue
            row = [label]
            for s in servers:
                value = memory.get(s, {}).get(key)
                row.append("—" if value is None else f"{value:.0f} MB")
            row.append(
                _ratio(
                    memory.get(TABWARDEN, {}).get(key), [memory.get(p, {}).get(key) for p in PEERS]
                )
            )
            lines.append("| " + " | ".join(row) + " |")
    out = ["\n".join(lines)] if len(lines) > 2 else []
    capability = tasks_table(doc)
    if capability:
        out.append(capability)
    floor = doc["floor"]
    if floor and "error" in floor:
        out.append(f"Native-messaging floor: **failed**: {floor['error']}")
    elif floor:
        out.append(
            "Native-messaging floor (bench/floor: a minimal extension and host): echo round trip "
            f"{ms(floor['echo']['median_ms'])} · p99 {ms(floor['echo']['p99_ms'])} "
            f"(n={floor['echo']['n']}); {floor['bulk_bytes'] / 1e6:.0f} MB in "
            f"{floor['chunk_bytes'] / 1e6:.0f} MB messages {ms(floor['bulk']['median_ms'])} "
            f"({floor['bulk_mb_per_s']:.0f} MiB/s)."
        )
    marks = {True: "met", False: "**not met**", None: "not measured"}
    measured = [t for t in doc["targets"] if t["met"] is not None]
    skipped = len(doc["targets"]) - len(measured)
    if not measured and not figures and not sessions:  # a capability-only run
        return "\n\n".join(out)
    out.append(
        "Targets: "
        + "; ".join(f"{t['target']}: {marks[t['met']]}" for t in measured)
        + (f"; {skipped} not measured in this run." if skipped else ".")
    )
    errors = [
        f"{TITLES.get(server, server)} {figure}: {count} × {kind}"
        for figure, cells in figures.items()
        for server, cell in cells.items()
        for kind, count in cell.get("error_kinds", {}).items()
    ] + [
        f"{TITLES[server]} sessions: {count} lost × {kind}"
        for server, c in sessions.items()
        for kind, count in c["lost_kinds"].items()
    ]
    if errors:
        out.append("Errors:\n" + "\n".join(f"- {e}" for e in errors))
    return "\n\n".join(out)
