"""A pytest session of its own over a sample module: how a guard test of the suite's own
browser sharing (``test_shared_chain.py``, ``test_pool.py``) watches tests leave things behind
and the next one meet them, without doing it in the suite's own session."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from tests.deadline import TEST_S

REPO = Path(__file__).resolve().parents[2]


def run_sample(
    where: Path,
    files: Mapping[str, str],
    *,
    ini: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
) -> tuple[int, str]:
    """Write ``files`` (relative path: text; a ``conftest.py`` and the sample modules) into
    ``where`` and run pytest there in-process (``-n0``), every outcome reported (``-rA``), none
    of this checkout's options but anyio's plugin and ``ini`` (``-o`` values). Returns the exit
    code and output."""
    for name, text in files.items():
        (where / name).parent.mkdir(parents=True, exist_ok=True)
        (where / name).write_text(text)
    options = [arg for value in ("addopts=", "anyio_mode=auto", *ini) for arg in ("-o", value)]
    run = subprocess.run(  # noqa: S603 (this interpreter, pytest, a directory of the test's)
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-n0", "-rA", *options,
         "--rootdir", str(where), str(where)],
        cwd=where, env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})},
        capture_output=True, text=True, timeout=TEST_S,
    )  # fmt: skip
    return run.returncode, run.stdout + run.stderr
