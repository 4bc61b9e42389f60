"""The bench runs its tabwarden part end to end, the way CI may smoke it: a quick run
of the floor, the light call, the agent flow and cold start against a real headless Chromium,
without the npm peers. A smoke of the instrument, never a timing assertion: it checks that each
figure was measured with no error, not how fast."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]


def test_quick_bench_measures_tabwarden_and_the_floor_without_the_peers(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    argv = [sys.executable, "-m", "bench", "--quick", "--iterations", "1", "--json", str(out)]
    argv += ["--only", "tabwarden", "--only", "floor,light,flow,cold"]
    proc = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "installing the peers" not in proc.stdout  # no npm for tabwarden's own part

    doc = json.loads(out.read_text(encoding="utf-8"))
    assert doc["settings"]["servers"] == ["tabwarden"]
    for figure in ("light", "flow", "cold"):
        cell = doc["figures"][figure]["tabwarden"]
        assert cell["errors"] == 0, cell["error_kinds"]
        assert cell["n"] == doc["settings"]["rounds"][figure] and cell["median_ms"] > 0
    memory = doc["memory"]["tabwarden"]
    assert memory["one_session_mb"] >= memory["one_session_pss_mb"] >= memory["one_session_uss_mb"]
    assert memory["one_session_uss_mb"] > 0
    floor = doc["floor"]
    assert floor["echo"]["n"] == 50 and floor["bulk"]["n"] == 2, floor
    assert floor["bulk_bytes"] == 10_000_000

    assert "| lightest browser call (tab list), median |" in proc.stdout
    assert "Native-messaging floor" in proc.stdout and "Errors:" not in proc.stdout
