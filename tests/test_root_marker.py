"""``@pytest.mark.root`` without root: a skip on a developer's machine, a failure under CI=true
(a skip there would count as a pass)."""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]

PROBE = """
import pytest

@pytest.mark.root
def test_needs_root():
    assert True
"""


def _run(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, ci: str | None) -> object:
    pytester.makeconftest("from tests.conftest import pytest_runtest_setup  # noqa: F401\n")
    pytester.makeini("[pytest]\nmarkers =\n    root: needs root\n")
    pytester.makepyfile(PROBE)
    monkeypatch.setattr("os.geteuid", lambda: 1000)
    if ci is None:
        monkeypatch.delenv("CI", raising=False)
    else:
        monkeypatch.setenv("CI", ci)
    return pytester.runpytest_inprocess("-p", "no:cacheprovider")


def test_without_root_under_ci_it_fails(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = _run(pytester, monkeypatch, "true")
    result.assert_outcomes(errors=1)  # type: ignore[attr-defined]  # fails the run at setup


def test_without_root_off_ci_it_skips(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = _run(pytester, monkeypatch, None)
    result.assert_outcomes(skipped=1)  # type: ignore[attr-defined]
