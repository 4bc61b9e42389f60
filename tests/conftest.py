"""Shared fixtures (the doubles themselves live in tests/fakes.py)."""

from __future__ import annotations

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
