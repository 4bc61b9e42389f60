"""Every input the fuzzers ever failed on, replayed through its harness's own oracle.

``inputs/<harness>/<case>.bin`` is a (minimised) input for ``fuzz/<harness>.py``'s
``test_one_input``; ``inputs/fuzz_extension_messages/<case>.jsonl`` holds lines for the Node
harness's ``--replay``. A case is added with the fix for the bug it found (``fuzz/README.md``);
``test_found_bugs.py`` spells out what each one was.
"""

from __future__ import annotations

import importlib
import shutil
import subprocess
from pathlib import Path

import pytest

from fuzz.run import ALL_HARNESSES, HARNESSES

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
INPUTS = HERE / "inputs"
PY_CASES = sorted(p for name in HARNESSES for p in (INPUTS / name).glob("*.bin"))
NODE_CASES = sorted((INPUTS / "fuzz_extension_messages").glob("*.jsonl"))


def test_every_case_names_a_harness() -> None:
    assert PY_CASES, "no regression inputs found"
    for folder in INPUTS.iterdir():
        assert folder.name in ALL_HARNESSES, folder


@pytest.mark.parametrize("case", PY_CASES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_python_case_passes_its_harness(case: Path) -> None:
    harness = importlib.import_module(f"fuzz.{case.parent.name}")
    harness.test_one_input(case.read_bytes())


def test_node_cases_pass_their_harness(tmp_path: Path) -> None:
    node = shutil.which("node")
    assert node, "Node.js is required (scripts/setup installs it)"
    # The replay path itself is checked on a known input, so an empty folder proves something too.
    canned = tmp_path / "canned.jsonl"
    canned.write_text(
        '{"target":"request","input":{"type":"request","id":"r","action":"constructor",'
        '"args":{},"session":"s","policy":{}}}\n',
        encoding="utf-8",
    )
    for case in [canned, *NODE_CASES]:
        proc = subprocess.run(
            [node, "fuzz/js/fuzz_extension_messages.mjs", "--replay", str(case)],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert proc.returncode == 0 and "ok replayed" in proc.stdout, (
            case.name + proc.stdout + proc.stderr
        )
