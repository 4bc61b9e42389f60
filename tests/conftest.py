"""Shared fixtures (the doubles themselves live in tests/fakes.py)."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes import FakeBrowser

# Every process the suite starts that builds its environment from ours finds a throwaway config
# directory, never the person's real ~/.config/tabwarden (their trust record, audit log and
# spawner list). Tests that need a particular one set TABWARDEN_CONFIG_DIR themselves; tests of a
# fresh HOME strip every TABWARDEN_ variable (tests/cli/test_readme_first_steps.py).
if "TABWARDEN_CONFIG_DIR" not in os.environ:
    _THROWAWAY_CONFIG = tempfile.mkdtemp(prefix="tabwarden-test-config-")
    os.environ["TABWARDEN_CONFIG_DIR"] = _THROWAWAY_CONFIG
    atexit.register(shutil.rmtree, _THROWAWAY_CONFIG, ignore_errors=True)


@pytest.fixture
def runtime_dir(tmp_path: Path) -> Path:
    path = tmp_path / "run"
    path.mkdir(mode=0o700)
    return path


@pytest.fixture
def fake_browser(runtime_dir: Path) -> Iterator[FakeBrowser]:
    browser = FakeBrowser(runtime_dir)
    try:
        yield browser
    finally:
        browser.close()


def pytest_runtest_setup(item: pytest.Item) -> None:
    """``@pytest.mark.root`` tests need root (a throwaway user, chown to another owner). Off CI
    they are skipped without it; with ``CI=true`` a missing root is a failure, never a skip
    counted as a pass."""
    if item.get_closest_marker("root") is None or os.geteuid() == 0:
        return
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail("this test needs root, and CI=true: run the suite as root", pytrace=False)
    pytest.skip("needs root (CI runs it as root)")
