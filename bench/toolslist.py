"""What each server's ``tools/list`` costs a client: the bytes of the JSON-RPC line it writes on
stdout, and how many tools it lists (docs/adr/0012). tabwarden as an agent starts it
(``tabwarden mcp``: the default list) and with ``--caps all`` (every tool); the peers as the
bench runs them (``bench/servers.py``: pinned in ``bench/package.json``, installed on first use).
No browser is started: every server answers ``tools/list`` before it launches one. Figures,
never pass/fail::

    .venv/bin/python -m bench.toolslist            # a table
    .venv/bin/python -m bench.toolslist --json     # one JSON document
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from bench.jsonrpc import INITIALIZED, TOOLS_LIST, initialize, line
from bench.peers import NODE_MODULES, ensure_peers

#: How long one server may take to answer (a generous deadline, never a figure).
DEADLINE_S = 120


def _commands(chrome: str) -> dict[str, list[str]]:
    python = [sys.executable, "-m", "tabwarden", "mcp"]
    return {
        "tabwarden": python,
        "tabwarden --caps all": [*python, "--caps", "all"],
        "@playwright/mcp": [
            "node",
            str(NODE_MODULES / "@playwright/mcp/cli.js"),
            "--headless",
            "--isolated",
            f"--executable-path={chrome}",
        ],
        "chrome-devtools-mcp": [
            "node",
            str(NODE_MODULES / "chrome-devtools-mcp/build/src/bin/chrome-devtools-mcp.js"),
            "--headless",
            "--isolated",
            f"--executablePath={chrome}",
            "--no-usage-statistics",
            "--no-performance-crux",
        ],
    }


def measure(argv: Sequence[str], env: dict[str, str], cwd: Path) -> tuple[int, int]:
    """``(bytes, tools)`` of the ``tools/list`` answer ``argv`` writes on stdout."""
    lines = line(initialize("bench.toolslist")) + line(INITIALIZED) + line(TOOLS_LIST)
    proc = subprocess.Popen(  # noqa: S603 (our own servers, fixed arguments)
        list(argv),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
        cwd=cwd,
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(lines)
        proc.stdin.flush()
        while True:
            answer = proc.stdout.readline()
            if not answer:
                raise RuntimeError(f"{argv[0]} closed stdout before answering tools/list")
            if json.loads(answer).get("id") == TOOLS_LIST["id"]:
                return len(answer.rstrip(b"\n")), len(json.loads(answer)["result"]["tools"])
    finally:
        proc.kill()
        proc.wait(timeout=DEADLINE_S)


def run(chrome: str) -> dict[str, dict[str, int]]:
    ensure_peers()
    with tempfile.TemporaryDirectory(prefix="tabwarden-bench-toolslist-") as scratch:
        root = Path(scratch)
        for sub in ("run", "config"):
            (root / sub).mkdir(mode=0o700)
        env = dict(os.environ)
        env.pop("XDG_RUNTIME_DIR", None)
        env["TABWARDEN_RUNTIME_DIR"] = str(root / "run")
        env["TABWARDEN_CONFIG_DIR"] = str(root / "config")
        env["CHROME_DEVTOOLS_MCP_NO_USAGE_STATISTICS"] = "1"
        out: dict[str, dict[str, int]] = {}
        for name, argv in _commands(chrome).items():
            size, tools = measure(argv, env, root)
            out[name] = {"bytes": size, "tools": tools}
        return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.toolslist", description=__doc__)
    parser.add_argument("--chrome", default=os.environ.get("CHROME_BIN", "/usr/bin/chromium"))
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    args = parser.parse_args(argv)
    figures = run(args.chrome)
    if args.json:
        print(json.dumps(figures, indent=1))
        return 0
    print("| server | tools/list bytes | tools |\n|---|---|---|")
    for name, figure in figures.items():
        print(f"| {name} | {figure['bytes']:,} | {figure['tools']} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
