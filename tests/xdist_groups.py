"""Which tests must not overlap when the suite runs on several workers, and the grouping that
keeps them apart. A pytest plugin (loaded by tests/conftest.py): a test that uses one of the
fixtures in ``SERIAL_BY_FIXTURE`` joins that fixture's group (one of
``ONE_WORKER_PER_MODULE_BY_FIXTURE``, its module's), and ``--dist loadgroup`` runs one group's
tests on one worker, one after another.

pytest-xdist marks a group by appending ``@group`` to the test's node id, which it does by
setting ``item._nodeid``; pytest 9 builds ``nodeid`` from ``item._id`` and ignores that, so
every group would silently be spread over the workers again. This plugin sets the grouped id
itself, after xdist's own hook, and leaves an id that already carries its group alone (an xdist
that does it right). tests/test_xdist_groups.py runs a real two-worker session to prove the
groups hold."""

from __future__ import annotations

import os

import pytest
from _pytest.nodeid import NodeId

#: Tests that must not overlap each other, by a fixture they use: what they share.
SERIAL_BY_FIXTURE = {
    # Chrome's permission dialog, found in screenshots of a headful Chromium on Xvfb and clicked
    # with XTEST input: one such window at a time keeps the machine quiet enough for it.
    "x_display": "x-display",
    # useradd/userdel take /etc/passwd's lock.
    "intruder": "system-users",
    "ordinary_user": "system-users",
}

#: Tests that must run on one worker with the rest of their module, by a fixture they use: the
#: modules of tests/browser/shared/, whose tests share one browser (a module spread over three
#: workers would launch three).
ONE_WORKER_PER_MODULE_BY_FIXTURE = {"leaves_nothing": "one-chain"}


def group_of(item: pytest.Item) -> str | None:
    """The group an item runs in (its xdist_group marks and fixtures joined as xdist joins
    them), or None."""
    names = {
        str(m.args[0] if m.args else m.kwargs.get("name", "default"))
        for m in item.iter_markers("xdist_group")
    }
    fixtures = getattr(item, "fixturenames", ())
    names.update(group for fixture, group in SERIAL_BY_FIXTURE.items() if fixture in fixtures)
    names.update(
        f"{group}-{item.path.stem}"
        for fixture, group in ONE_WORKER_PER_MODULE_BY_FIXTURE.items()
        if fixture in fixtures
    )
    return "_".join(sorted(names)) if names else None


@pytest.hookimpl(trylast=True)  # after xdist's worker hook, which pytest 9 ignores
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not getattr(config.option, "loadgroup", False):
        return
    for item in items:
        group = group_of(item)
        if group is None or item.nodeid.endswith(f"@{group}"):
            continue
        item._id = NodeId.parse(f"{item.nodeid}@{group}")


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto`` (pyproject's addopts): one worker more than the machine has cores. A browser
    test spends much of its time waiting on Chromium, the extension and the host, so two workers
    left a 2-core machine partly idle: 49 browser tests took 318 s on 2 workers and 264 s on 3,
    on a machine busier than CI's (load 15-18, other jobs running). The whole suite from a fresh
    clone on an idle machine: 963 s on 2 workers, 936 s on 3 (tests/README.md: it is bound by
    CPU). Groups still run one test at a time (``SERIAL_BY_FIXTURE``)."""
    return (os.cpu_count() or 1) + 1
