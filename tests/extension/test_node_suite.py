"""The extension's pure modules, under Node's own test runner (node --test tests/extension/)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.promise("H4-41", "H4-49", "H4-64")
def test_extension_unit_tests_pass_under_node() -> None:
    node = shutil.which("node")
    assert node, "Node.js is required for the extension's unit tests (scripts/setup installs it)"
    proc = subprocess.run(  # noqa: S603 (a fixed argv: Node and a file in this checkout)
        [node, "--test", "tests/extension/"], cwd=REPO, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, _failures(proc.stdout) + proc.stderr[-2000:]
    assert "# fail 0" in proc.stdout
    passed = next(line for line in proc.stdout.splitlines() if line.startswith("# pass "))
    assert int(passed.split()[-1]) > 0


def _failures(tap: str) -> str:
    """Each failing subtest with its diagnostics (TAP: a "not ok" line and its indented YAML),
    then the run's tail: a failure is named wherever it sits in a long run."""
    lines = tap.splitlines()
    out: list[str] = []
    for i, line in enumerate(lines):
        if line.lstrip().startswith("not ok"):
            out.extend(lines[max(0, i - 1) : i + 25])
            out.append("…")
    return "\n".join(out)[-8000:] + "\n--- tail ---\n" + tap[-1500:]


def test_extension_typechecks() -> None:
    """``tsc --noEmit`` with checkJs and strict over extension/ (tests/typecheck/tsconfig.json):
    every JSDoc type in the extension is checked. A missing compiler is a failure, not a skip:
    scripts/setup installs it with ``npm ci --prefix tests/typecheck``."""
    node = shutil.which("node")
    assert node, "Node.js is required to type-check the extension (scripts/setup installs it)"
    tsc = REPO / "tests" / "typecheck" / "node_modules" / "typescript" / "bin" / "tsc"
    assert tsc.is_file(), f"{tsc} is missing: run scripts/setup (npm ci --prefix tests/typecheck)"
    config = REPO / "tests" / "typecheck" / "tsconfig.json"
    proc = subprocess.run(  # noqa: S603 (a fixed argv: Node and a file in this checkout)
        [node, str(tsc), "--project", str(config), "--pretty", "false"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    errors = [line for line in proc.stdout.splitlines() if "error TS" in line]
    assert proc.returncode == 0 and not errors, f"tsc reported {len(errors)} error(s):\n" + (
        proc.stdout[-6000:] + proc.stderr[-2000:]
    )
