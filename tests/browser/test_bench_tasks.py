"""The bench's capability tasks (bench/tasks.py) through tabwarden alone, in a real headless
Chromium, without the npm peers: each page, untouched, reports a state its reward judges
unsolved (so a reward is never satisfied by a page nobody acted on); each task then runs to a
verdict; and the tasks tabwarden's tools solve today are solved. The tasks that wait on tools
still being built (actionability waits) must reach a verdict with a failure code,
or be solved once those tools land. A capability check, never a timing assertion."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench import agents, tasks
from bench.servers import TABWARDEN, Launcher
from bench.site import serve_site
from tabwarden.cli.browser import chrome_binary

pytestmark = pytest.mark.browser

#: Solved with the tools this branch had when this test was written.
SOLVED_TODAY = {
    "click-button",
    "enter-text",
    "select-option",
    "check-boxes",
    "choose-radio",
    "late-button",
    "read-frame",
    "follow-link",
    "scroll-click",
}
#: Solved once the tool each needs is listed: page_drag; a click that takes timeoutMs.
SOLVED_WITH = {"drag-reorder": "page_drag", "html5-drop": "page_drag", "enabled-later": "timeoutMs"}


async def _run(
    origin: str, root: Path
) -> tuple[dict[str, dict[str, object]], list[agents.Outcome], set[str]]:
    launcher = Launcher(root=root, chrome=chrome_binary(None), origin=origin, no_confirm=True)
    untouched: dict[str, dict[str, object]] = {}
    outcomes: list[agents.Outcome] = []
    offered: set[str] = set()
    try:
        launcher.start_tabwarden_browser()
        async with launcher.session(TABWARDEN) as session:
            agent = await agents.agent_for(session)
            offered = set(agent.tools) | set(agent.tools.get("page_click", {}))
            for task in tasks.TASKS:
                idle = f"untouched-{task.name}"
                await agent.open(f"{origin}/task/{task.name}?ep={idle}")
                report = await agents._judged(idle, 0)
                assert report is not None and "state" in report, (task.name, report)
                untouched[task.name] = report["state"]
                outcomes.append(await agents.episode(agent, task, origin, "test"))
    finally:
        launcher.close()
    return untouched, outcomes, offered


async def test_every_task_runs_to_a_verdict_through_tabwarden_and_todays_tasks_are_solved(
    tmp_path: Path,
) -> None:
    with serve_site() as origin:
        untouched, outcomes, offered = await _run(origin, tmp_path)

    for task in tasks.TASKS:
        state = untouched[task.name]
        assert set(state) == set(task.untouched), (task.name, state)
        assert task.reward(state) is False, (task.name, state)

    assert [o.task for o in outcomes] == [t.name for t in tasks.TASKS]
    verdicts = {o.task: o for o in outcomes}
    unsolved = {o.task: (o.code, o.detail) for o in outcomes if not o.solved}
    expected = SOLVED_TODAY | {task for task, needs in SOLVED_WITH.items() if needs in offered}
    assert expected <= {o.task for o in outcomes if o.solved}, unsolved
    for name, (code, _detail) in unsolved.items():
        assert code and code not in ("no_report", "unsolved"), (name, verdicts[name])
