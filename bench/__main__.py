"""``python -m bench``: tabwarden against @playwright/mcp and chrome-devtools-mcp, interleaved,
plus the native-messaging floor; prints the table and writes the JSON (bench/README.md).

Run it with the Chromium lock other browser users on this machine share:
``flock /tmp/tabwarden-chromium.lock .venv/bin/python -m bench``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
from pathlib import Path
from typing import Any

from bench.peers import PeersUnavailable, ensure_peers, installed_version
from bench.report import summarize, table
from bench.run import FIGURES, Settings, run
from bench.servers import PEERS, SERVERS, TABWARDEN
from tabwarden.cli.browser import chrome_binary

RESULTS = Path(__file__).resolve().parent / "results"


def _names(values: list[str]) -> list[str]:
    names = [n.strip() for v in values for n in v.split(",") if n.strip()]
    unknown = [n for n in names if n not in (*SERVERS, *FIGURES)]
    if unknown:
        raise SystemExit(f"bench: unknown --only {unknown}; servers {SERVERS}, figures {FIGURES}")
    return names


def parse(argv: list[str]) -> tuple[argparse.Namespace, Settings]:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a short smoke: 3 iterations")
    parser.add_argument("--iterations", type=int, help="rounds per figure (default 10)")
    parser.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="NAME",
        help=f"only these servers {SERVERS} and/or figures {FIGURES} (repeat or comma-separate)",
    )
    parser.add_argument(
        "--json", type=Path, help="write the results here (default bench/results/<date>.json)"
    )
    parser.add_argument("--chrome", help="the Chromium binary (default Debian's)")
    parser.add_argument("--keep", action="store_true", help="keep the scratch directory (logs)")
    parser.add_argument(
        "--table", type=Path, metavar="JSON", help="print the table of a saved run and exit"
    )
    args = parser.parse_args(argv)
    only = _names(args.only)
    iterations = args.iterations or (3 if args.quick else 10)
    if iterations < 1:
        parser.error("--iterations must be at least 1")
    servers = tuple(s for s in SERVERS if s in only) or SERVERS
    figures = tuple(f for f in FIGURES if f in only) or FIGURES
    settings = Settings(
        iterations=iterations,
        servers=servers,
        figures=figures,
        chrome=chrome_binary(args.chrome),
        keep=args.keep,
    )
    return args, settings


def _output(command: list[str]) -> str:
    try:
        # Fixed argv: the Chromium binary chosen above, node, git — each asked for its version.
        done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)  # noqa: S603
    except OSError:
        return ""
    return done.stdout.strip()


def machine(settings: Settings) -> dict[str, Any]:
    cpu = ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            cpu = next(
                (line.split(":", 1)[1].strip() for line in info if line.startswith("model name")),
                "",
            )
    except OSError:
        pass
    from importlib.metadata import version

    return {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "nproc": os.cpu_count(),
        "cpu": cpu,
        "chromium": _output([settings.chrome, "--version"]),
        "python": platform.python_version(),
        "node": _output(["node", "--version"]),
        "mcp": version("mcp"),
        "tabwarden": version("tabwarden"),
        "commit": _output(
            ["git", "-C", str(RESULTS.parent.parent), "rev-parse", "--short", "HEAD"]
        ),
        "peers": {name: installed_version(name) for name in PEERS.values()},
        "loadavg_at_start": [round(x, 2) for x in os.getloadavg()],
    }


def _heading(about: dict[str, Any]) -> str:
    peers = ", ".join(f"{name} {v}" for name, v in about["peers"].items())
    load = "–".join(
        f"{about[k][0]:.1f}" for k in ("loadavg_at_start", "loadavg_at_end") if k in about
    )
    return (
        f"{about['date'][:10]} · {about['nproc']} × {about['cpu']} · {about['chromium']} · "
        f"tabwarden {about['tabwarden']} ({about['commit']}) · {peers} · load average {load}"
    )


def main(argv: list[str]) -> int:
    if argv[:1] == ["corpus"]:  # the token-cost figure on real pages (bench/corpus.py)
        from bench import corpus

        return corpus.main(argv[1:])
    args, settings = parse(argv)
    if args.table:
        doc = json.loads(args.table.read_text(encoding="utf-8"))
        print(_heading(doc["machine"]) + "\n\n" + table(doc))
        return 0
    if any(s != TABWARDEN for s in settings.servers):
        try:
            ensure_peers()
        except PeersUnavailable as exc:
            print(f"bench: {exc}", file=sys.stderr)
            return 2
    about = machine(settings)
    print(
        f"bench: {about['date']}, {about['nproc']} CPUs ({about['cpu']}), {about['chromium']}, "
        f"servers {', '.join(settings.servers)}, figures {', '.join(settings.figures)}",
        flush=True,
    )
    results = run(settings)
    about["loadavg_at_end"] = [round(x, 2) for x in os.getloadavg()]
    doc = summarize(settings, results, about)
    path = args.json or RESULTS / f"{about['date'][:10]}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    print("\n" + _heading(about) + "\n\n" + table(doc))
    print(f"\nbench: wrote {path}")
    failed = any(c["errors"] for cells in doc["figures"].values() for c in cells.values())
    return 1 if failed or (doc["floor"] or {}).get("error") else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
