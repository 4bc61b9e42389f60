"""``bench/tasks.py`` and ``bench/agents.py`` without a browser: every task has its page, its
reward and a plan; each reward says unsolved for the state its page reports untouched and for
near misses, and solved for the state a correct episode leaves; the site stores what a page
reports; the agents read each server's snapshot text as the servers print it; the report shows
the capability figure."""

from __future__ import annotations

import json
import urllib.request
from typing import Any

import pytest

from bench import agents, tasks
from bench.agents import Element, Outcome, StepFailed, error_code, pick
from bench.report import summarize, table
from bench.run import Results, Settings
from bench.site import serve_site

#: A state a careless episode leaves, per task: each must be judged unsolved.
NEAR_MISSES: dict[str, dict[str, Any]] = {
    "click-button": {"clicked": ["Save draft"]},
    "enter-text": {"first": "Ada", "last": "Ada", "again": ""},
    "select-option": {"colour": "gd", "size": "Small"},
    "check-boxes": {"checked": ["Apples", "Pears", "Pineapples"]},
    "choose-radio": {"size": "Medium-large"},
    "late-button": {"clicked": ["Continue", "Continue"]},
    "enabled-later": {"clicked": [], "enabled": True},
    "drag-reorder": {"order": ["Alpha", "Bravo", "Delta", "Charlie"]},
    "html5-drop": {"dropped": ["other"]},
    "read-frame": {"code": "K7-4Q"},
    "follow-link": {"arrived": "twenty"},
    "scroll-click": {"clicked": ["Scroll down"]},
}


def test_every_task_has_a_page_a_reward_a_plan_and_a_near_miss() -> None:
    names = [t.name for t in tasks.TASKS]
    assert len(names) == len(set(names)) >= 12
    assert set(agents.PLANS) == set(names) == set(NEAR_MISSES)
    for task in tasks.TASKS:
        page = task.page().decode()
        assert "function state()" in page and "/state?ep=" in page, task.name
        assert tasks.route(f"/task/{task.name}") == task.page()
        for extra in task.extra or {}:
            served = tasks.route(f"/task/{task.name}/{extra}")
            assert served is not None and b"function state()" in served
    assert tasks.route("/task/nonesuch") is None
    assert tasks.route("/task/follow-link/three") is None


@pytest.mark.parametrize("task", tasks.TASKS, ids=lambda t: t.name)
def test_the_reward_judges_untouched_and_near_misses_unsolved_and_a_correct_end_solved(
    task: tasks.Task,
) -> None:
    assert task.reward(task.untouched) is False
    assert task.reward(NEAR_MISSES[task.name]) is False
    assert task.reward({}) is False
    assert task.reward(task.solved) is True


def test_the_site_keeps_each_episodes_latest_report_and_refuses_a_malformed_one() -> None:
    def post(origin: str, episode: str, body: bytes) -> int:
        url = f"{origin}/state?ep={episode}"
        request = urllib.request.Request(url, data=body, method="POST")  # noqa: S310 (loopback)
        try:
            with urllib.request.urlopen(request, timeout=10) as reply:  # noqa: S310 (loopback)
                return int(reply.status)
        except urllib.error.HTTPError as err:
            return int(err.code)

    with serve_site() as origin:
        with urllib.request.urlopen(f"{origin}/task/click-button", timeout=10) as page:  # noqa: S310
            assert b"Save draft" in page.read()
        first = {"seq": 2, "at": "/task/follow-link", "state": {"arrived": None}}
        stale = {"seq": 1, "at": "/task/follow-link", "state": {"arrived": "stale"}}
        landed = {"seq": 1, "at": "/task/follow-link/two", "state": {"arrived": "two"}}
        for report in (first, stale):
            assert post(origin, "unit-a", json.dumps(report).encode()) == 204
        assert tasks.REPORTS.latest("unit-a") == first  # an older report never wins
        assert post(origin, "unit-a", json.dumps(landed).encode()) == 204
        assert tasks.REPORTS.latest("unit-a") == landed  # a new page (navigation) does
        assert tasks.REPORTS.count("unit-a") == 3
        assert post(origin, "unit-b", b"not json") == 400
        assert post(origin, "", json.dumps(first).encode()) == 400
        assert tasks.REPORTS.latest("unit-b") is None


PLAYWRIGHT_SNAPSHOT = """### Snapshot
```yaml
- generic [active] [ref=f2e1]:
  - iframe [ref=f2e2]:
    - paragraph [ref=f3e2]: "Your code: K7-4Q2"
  - button "Save draft" [ref=f1e3]
  - button "Save" [ref=f1e6]
  - textbox "Code" [ref=f2e4]
  - listitem [ref=f4e6]: Delta
```"""

DEVTOOLS_SNAPSHOT = """## Latest page snapshot
uid=2_0 RootWebArea "read-frame" url="http://127.0.0.1:1/task/read-frame?ep=x"
  uid=1_2 button "Save draft"
  uid=1_5 button "Save"
  uid=2_7 textbox "Code"
  uid=3_4 "Delta"
"""


def test_each_agent_reads_elements_from_its_servers_snapshot_text() -> None:
    seen = agents._yaml_elements(PLAYWRIGHT_SNAPSHOT, agents.Playwright.LINE.pattern)
    assert Element("button", "Save", "f1e6") in seen
    assert Element("textbox", "Code", "f2e4") in seen
    assert Element("listitem", "Delta", "f4e6") in seen
    found = [
        Element(m.group("role") or "text", m.group("name"), m.group("ref"))
        for m in agents.DevTools.LINE.finditer(DEVTOOLS_SNAPSHOT)
    ]
    assert Element("button", "Save", "1_5") in found
    assert Element("text", "Delta", "3_4") in found


def test_the_policy_picks_the_exact_accessible_name_never_a_prefix() -> None:
    elements = [
        Element("button", "Save draft", "a"),
        Element("link", "Save", "b"),
        Element("button", "Save", "c"),
    ]
    assert pick(elements, "button", "Save").ref == "c"
    assert pick(elements, None, "Save").ref == "b"
    with pytest.raises(StepFailed) as missing:
        pick(elements, "button", "Sav")
    assert missing.value.code == "not_found"


def test_a_failed_call_is_reported_by_tabwardens_code_or_the_peers_first_words() -> None:
    text = 'bad_request: button "Continue" is disabled\nhint: check the tool\'s input schema'
    assert error_code("tabwarden", text) == "bad_request"
    assert error_code("tabwarden", '{"code": "element_covered", "x": 1}') == "element_covered"
    assert error_code("playwright", "### Error\nTimeout 5000ms exceeded.") == (
        "error: Error Timeout 5000ms exceeded."
    )


def test_the_report_gives_tasks_solved_time_per_task_and_each_failure_code() -> None:
    settings = Settings(iterations=1, servers=("tabwarden",), figures=("tasks",), chrome="/x")
    results = Results()
    results.tasks["tabwarden"] = [
        Outcome("click-button", True, "", 100.0),
        Outcome("drag-reorder", False, "tool_missing", 20.0, "tool_missing: page_drag"),
        Outcome("late-button", True, "", 300.0),
    ]
    doc = summarize(settings, results, machine={})
    mine = doc["tasks"]["tabwarden"]
    assert (mine["solved"], mine["total"]) == (2, 3)
    assert mine["median_ms"] == 100.0 and mine["median_solved_ms"] == 200.0
    assert mine["outcomes"]["drag-reorder"] == {
        "solved": False,
        "code": "tool_missing",
        "ms": 20.0,
        "detail": "tool_missing: page_drag",
    }
    shown = table(json.loads(json.dumps(doc)))
    assert "| **tasks solved** | **2/3** |" in shown
    assert "| median time per task (all · solved) | 100 ms · 200 ms |" in shown
    assert "| drag-reorder | not solved: `tool_missing` |" in shown
    assert "Targets" not in shown  # a capability-only run measured none of them
