"""The corpus bench (bench/corpus.py) runs its tabwarden part end to end on one real page of
Debian's Python documentation (package python3.11-doc, installed by scripts/setup --dev),
without the npm peers. A smoke of the instrument: it checks that every figure was computed from
real answers (counts above zero, the click reached its page), never a size, a ratio or a time."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]


def test_corpus_bench_measures_tabwarden_on_one_documentation_page(tmp_path: Path) -> None:
    out = tmp_path / "corpus.json"
    argv = [sys.executable, "-m", "bench", "corpus", "--only", "tabwarden", "--pages", "1"]
    argv += ["--json", str(out)]
    proc = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "installing the peers" not in proc.stdout  # no npm for tabwarden's own part

    doc = json.loads(out.read_text(encoding="utf-8"))
    assert doc["corpus"]["package"] == "python3.11-doc" and doc["corpus"]["pages"] == ["index.html"]
    assert list(doc["measured"]) == ["tabwarden"]
    page = doc["measured"]["tabwarden"]["index.html"]
    assert "error" not in page, page
    look = page["look"]
    assert look["bytes"] > 0 and look["tokens"] > 0 and look["wire_bytes"] > 0
    assert look["interactive"] > 0 and look["refs"] >= look["interactive"]
    assert look["bytes_per_element"] > 0
    assert look["by_role"].get("link", 0) > 0  # the front page is mostly links
    assert page["acted"]["role"] == "link" and page["acted"]["name"] == "index"
    assert page["acted"]["ref"].startswith("@e")  # clicked by the ref the read answer gave
    for step in ("navigate", "read", "act", "read_act"):
        assert page[step]["bytes"] > 0 and page[step]["tokens"] > 0, step
    assert page["read"]["bytes"] > look["bytes"]  # the read adds the page's text runs

    tools = doc["tools_list"]["tabwarden"]
    assert tools["bytes"] > 0 and tools["tools"] > 0
    # Without a peer nothing is compared, and the tables say so rather than inventing figures.
    assert doc["compared"]["summary"]["bytes"]["pages"] == 0
    written = out.with_suffix(".md").read_text(encoding="utf-8")
    assert "| `index.html` |" in written and "Errors:" not in written
    assert "tabwarden look bytes (≈ tokens)" in proc.stdout
