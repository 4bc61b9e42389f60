"""Shared fixtures (the doubles themselves live in tests/fakes.py)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes import FakeBrowser


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
