"""The two documents every reader opens first stay sized for their readers: SECURITY.md and the
README at most 20 KiB each. Detail has a home of its own: a promise's guard and tests in
docs/security/<area>.md, a residual risk in full in docs/security/residual-risks.md, error codes in
docs/troubleshooting.md, the tools' finer points in docs/using-the-tools.md, figures in
docs/performance.md."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
BUDGET = 20 * 1024


@pytest.mark.parametrize("name", ["SECURITY.md", "README.md"])
def test_the_front_documents_stay_within_their_budget(name: str) -> None:
    size = len((REPO / name).read_bytes())
    assert size <= BUDGET, (
        f"{name} is {size} bytes, over {BUDGET}: move detail into docs/ (see this test's docstring)"
    )
