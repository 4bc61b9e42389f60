"""Shared fixtures (the doubles themselves live in tests/fakes.py)."""

from __future__ import annotations

import atexit
import functools
import inspect
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

from tests.deadline import TEST_S, within
from tests.fakes import FakeBrowser
from tests.xdist_groups import (  # noqa: F401 — the suite's groups and its worker count
    pytest_collection_modifyitems,
    pytest_xdist_auto_num_workers,
)

# No Hypothesis example has a time limit: a deadline is a timed assertion, which fails on a busy
# machine (a 251 ms example against the default 200 ms). A hang is still caught: async tests by
# the hang guard below, every test by faulthandler_timeout (pyproject.toml).
settings.register_profile("suite", deadline=None)
settings.load_profile("suite")

# Every process the suite starts that builds its environment from ours finds a throwaway config
# directory, never the person's real ~/.config/tabwarden (their trust record, audit log and
# spawner list). Tests that need a particular one set TABWARDEN_CONFIG_DIR themselves; tests of a
# fresh HOME strip every TABWARDEN_ variable (tests/cli/test_readme_first_steps.py).
# Each worker process of a parallel run (tests/README.md) makes its own: it inherits the
# controller's environment, and so the controller's directory, marked as ours.
_OURS = "TABWARDEN_TEST_THROWAWAY_CONFIG"
if os.environ.get("TABWARDEN_CONFIG_DIR", _OURS) == os.environ.get(_OURS, _OURS):
    _THROWAWAY_CONFIG = tempfile.mkdtemp(prefix="tabwarden-test-config-")
    os.environ["TABWARDEN_CONFIG_DIR"] = os.environ[_OURS] = _THROWAWAY_CONFIG
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


@pytest.fixture
def attested_browser(runtime_dir: Path) -> Iterator[FakeBrowser]:
    """The browser's end of a real host that attests its peers (``tabwarden host`` itself, not
    the unattested stand-in), connected and greeted."""
    browser = FakeBrowser(runtime_dir, attested=True)
    try:
        browser.wait_socket()
        browser.hello()
        yield browser
    finally:
        browser.close()


def pytest_runtest_setup(item: pytest.Item) -> None:
    """``@pytest.mark.root`` tests need root (a throwaway user, chown to another owner). Off CI
    they are skipped without it; with ``CI=true`` a missing root is a failure, never a skip
    counted as a pass. A test outside ``tests/browser/`` first retires the browser tests' idle
    Chromium, if this worker holds one (``tests.browser.pool.retire``)."""
    pool = sys.modules.get("tests.browser.pool")  # imported once a browser test has run here
    if pool is not None and not item.nodeid.startswith("tests/browser/"):
        pool.retire()
    if item.get_closest_marker("root") is None or os.geteuid() == 0:
        return
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail("this test needs root, and CI=true: run the suite as root", pytrace=False)
    pytest.skip("needs root (CI runs it as root)")


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    """Async tests (``async def test_…``) and async fixtures run on asyncio, the loop the product
    runs on; anyio's pytest plugin (installed with the MCP SDK) drives them. Session-wide, so a
    session-wide async fixture (the browser tests' Playwright driver) may hold one loop open."""
    return "asyncio"


@pytest.hookimpl(wrapper=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> Any:
    """Every async test body runs under one hang guard: ``TEST_S``, or the seconds of the
    closest ``@pytest.mark.deadline(seconds)`` (a module's ``pytestmark``). Its fixtures wait
    under their own deadlines (tests/deadline.py)."""
    test = pyfuncitem.obj
    if not inspect.iscoroutinefunction(test):
        return (yield)
    marker = pyfuncitem.get_closest_marker("deadline")
    seconds = float(marker.args[0]) if marker is not None else TEST_S

    @functools.wraps(test)
    async def guarded(**kwargs: Any) -> None:
        await within(
            f"{pyfuncitem.name} finished (its hang guard)", test(**kwargs), timeout_s=seconds
        )

    pyfuncitem.obj = guarded
    try:
        return (yield)
    finally:
        pyfuncitem.obj = test
