"""The extension's pure modules, under Node's own test runner (node --test tests/extension/)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def test_extension_unit_tests_pass_under_node() -> None:
    node = shutil.which("node")
    assert node, "Node.js is required for the extension's unit tests (scripts/setup installs it)"
    proc = subprocess.run(
        [node, "--test", "tests/extension/"], cwd=REPO, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert "# fail 0" in proc.stdout
    passed = next(line for line in proc.stdout.splitlines() if line.startswith("# pass "))
    assert int(passed.split()[-1]) > 0
