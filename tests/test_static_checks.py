"""The checks the project configures, run as part of the suite (so `.ci/run` runs them): ruff's
lint and format check over the whole tree, and mypy --strict over every package under its import
name (``scripts/typecheck``). A missing tool fails: it is installed by ``scripts/setup``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def _run(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv, cwd=ROOT, capture_output=True, text=True, timeout=600, env={**os.environ}
    )


def test_ruff_lint_is_clean() -> None:
    done = _run(str(BIN / "ruff"), "check", "--no-cache", "--output-format", "concise", ".")
    assert done.returncode == 0, done.stdout + done.stderr


def test_ruff_format_is_clean() -> None:
    done = _run(str(BIN / "ruff"), "format", "--no-cache", "--check", ".")
    assert done.returncode == 0, done.stdout + done.stderr


def test_mypy_strict_is_clean() -> None:
    done = _run("bash", str(ROOT / "scripts" / "typecheck"))
    assert done.returncode == 0, done.stdout + done.stderr
