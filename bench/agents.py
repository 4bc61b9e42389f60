"""The scripted policy that solves the capability tasks (bench/tasks.py), and one agent per
server that carries it out with that server's own tool vocabulary.

The policy is the same for every server (``PLANS``: per task, steps such as "click the button
named X"); each step is what a reasonable agent does: look (the server's snapshot), pick the
element by its role and exact accessible name, act on it by its ref. An agent never evaluates
script in the page and never reads the page's state behind the tools. A step a server has no
tool for fails with ``tool_missing: <what>``; a call that errors fails with the server's error
(for tabwarden its stable code); nothing retries an action.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from dataclasses import dataclass
from typing import Any, Final

from mcp_types import CallToolResult

from bench.servers import (
    CALL_TIMEOUT_S,
    DEVTOOLS,
    PLAYWRIGHT,
    TABWARDEN,
    Session,
    _text_parts,
    snapshot_rows,
)
from bench.tasks import REPORTS, Task

#: How long the policy waits for a late element (the pages show theirs after 1.5 s).
WAIT_MS: Final = 10_000
#: How long the judge waits for the page's state after an episode (it reports every 200 ms).
JUDGE_S: Final = 10.0


class StepFailed(RuntimeError):
    """A step could not be carried out; ``code`` is the task's failure code."""

    def __init__(self, code: str, detail: str = "") -> None:
        super().__init__(f"{code}: {detail}" if detail else code)
        self.code = code


@dataclass(frozen=True)
class Element:
    role: str
    name: str
    ref: str
    frame: int | None = None


#: The policy: task → steps. ("click", role, name), ("fill", role, name, text),
#: ("select", name, option label), ("check", role, name), ("wait", text) then act,
#: ("drag", source name, target name), ("copy", pattern in a frame, field name),
#: ("follow", link name).
PLANS: Final[dict[str, tuple[tuple[str, ...], ...]]] = {
    "click-button": (("click", "button", "Save"),),
    "enter-text": (("fill", "textbox", "First name", "Ada"),),
    "select-option": (("select", "Colour", "Green"),),
    "check-boxes": (("check", "checkbox", "Apples"), ("check", "checkbox", "Pears")),
    "choose-radio": (("check", "radio", "Medium"),),
    "late-button": (("wait", "Continue"), ("click", "button", "Continue")),
    "enabled-later": (("click", "button", "Continue"),),
    "drag-reorder": (("drag", "Delta", "Alpha"),),
    "html5-drop": (("drag", "Parcel", "Drop zone"),),
    "read-frame": (("copy", r"[A-Z0-9]{2}-[A-Z0-9]{3}", "Code"),),
    "follow-link": (("follow", "link", "Page two"),),
    "scroll-click": (("click", "button", "Far away"),),
}


def error_code(server: str, text: str) -> str:
    """A failed call's code: tabwarden's stable code, else the peer's first words."""
    if server == TABWARDEN:
        match = re.search(r'"code"\s*:\s*"([a-z_]+)"', text) or re.search(
            r"\b([a-z]+(?:_[a-z]+)+)\b", text
        )
        if match:
            return match.group(1)
    words = " ".join(re.sub(r"[#`*]", " ", text).split())
    return "error: " + words[:80]


class Agent:
    """One server's tool vocabulary for the policy's steps."""

    server: str = ""

    def __init__(self, session: Session, tools: dict[str, dict[str, Any]]) -> None:
        self.session = session
        self.tools = tools  # name → input schema's properties

    async def call(self, tool: str, args: dict[str, Any]) -> CallToolResult:
        if tool not in self.tools:
            raise StepFailed("tool_missing", tool)
        try:
            result = await self.session.client.call_tool(
                tool, args, read_timeout_seconds=CALL_TIMEOUT_S
            )
        except Exception as exc:  # a timeout or a broken pipe: the step failed
            raise StepFailed("call_lost", f"{tool}: {type(exc).__name__}") from exc
        if result.is_error:
            body = _text_parts(result) + json.dumps(result.structured_content or {})
            raise StepFailed(error_code(self.server, body), f"{tool}: {body[:200]}")
        return result

    # -- what each server implements ------------------------------------------------------
    async def open(self, url: str) -> None:
        raise NotImplementedError

    async def look(self) -> list[Element]:
        raise NotImplementedError

    async def click(self, el: Element) -> None:
        raise NotImplementedError

    async def fill(self, el: Element, text: str) -> None:
        raise NotImplementedError

    async def select(self, el: Element, label: str) -> None:
        raise NotImplementedError

    async def check(self, el: Element) -> None:
        raise NotImplementedError

    async def drag(self, source: Element, target: Element) -> None:
        raise NotImplementedError

    async def wait_text(self, text: str) -> None:
        raise NotImplementedError

    async def follow(self, el: Element) -> None:
        await self.click(el)

    async def frame_text(self) -> str:
        """What the page's frames show, as the agent can read it."""
        raise NotImplementedError


def _yaml_elements(text: str, pattern: str) -> list[Element]:
    out = []
    for line in text.splitlines():
        match = re.search(pattern, line)
        if match:
            role, name, ref = match.group("role"), match.group("name"), match.group("ref")
            out.append(Element(role, name or (match.groupdict().get("text") or ""), ref))
    return out


class Playwright(Agent):
    server = PLAYWRIGHT
    LINE = re.compile(
        r'- (?P<role>[\w-]+)(?: "(?P<name>(?:[^"\\]|\\.)*)")?[^\n]*?\[ref=(?P<ref>[\w-]+)\]'
        r'(?:: "?(?P<text>[^"\n]*)"?)?'
    )

    async def open(self, url: str) -> None:
        await self.call("browser_navigate", {"url": url})

    async def look(self) -> list[Element]:
        text = _text_parts(await self.call("browser_snapshot", {}))
        self._last = text
        return _yaml_elements(text, self.LINE.pattern)

    async def click(self, el: Element) -> None:
        await self.call("browser_click", {"target": el.ref, "element": el.name})

    async def fill(self, el: Element, text: str) -> None:
        await self.call("browser_type", {"target": el.ref, "element": el.name, "text": text})

    async def select(self, el: Element, label: str) -> None:
        await self.call(
            "browser_select_option", {"target": el.ref, "element": el.name, "values": [label]}
        )

    async def check(self, el: Element) -> None:
        await self.click(el)

    async def drag(self, source: Element, target: Element) -> None:
        await self.call(
            "browser_drag",
            {
                "startTarget": source.ref,
                "startElement": source.name,
                "endTarget": target.ref,
                "endElement": target.name,
            },
        )

    async def wait_text(self, text: str) -> None:
        await self.call("browser_wait_for", {"text": text})

    async def frame_text(self) -> str:
        await self.look()
        return self._last


class DevTools(Agent):
    server = DEVTOOLS
    LINE = re.compile(r'uid=(?P<ref>\S+) (?:(?P<role>\w+) )?"(?P<name>(?:[^"\\]|\\.)*)"')

    async def open(self, url: str) -> None:
        await self.call("navigate_page", {"pageId": self.session.page, "type": "url", "url": url})

    async def look(self) -> list[Element]:
        text = _text_parts(await self.call("take_snapshot", {"pageId": self.session.page}))
        self._last = text
        return [
            Element(m.group("role") or "text", m.group("name"), m.group("ref"))
            for m in self.LINE.finditer(text)
        ]

    def _page(self, **args: Any) -> dict[str, Any]:
        return {"pageId": self.session.page, **args}

    async def click(self, el: Element) -> None:
        await self.call("click", self._page(uid=el.ref))

    async def fill(self, el: Element, text: str) -> None:
        await self.call("fill", self._page(uid=el.ref, value=text))

    async def select(self, el: Element, label: str) -> None:
        await self.call("fill", self._page(uid=el.ref, value=label))

    async def check(self, el: Element) -> None:
        await self.call("fill", self._page(uid=el.ref, value="true"))

    async def drag(self, source: Element, target: Element) -> None:
        await self.call("drag", self._page(from_uid=source.ref, to_uid=target.ref))

    async def wait_text(self, text: str) -> None:
        await self.call("wait_for", self._page(text=[text], timeout=WAIT_MS))

    async def frame_text(self) -> str:
        await self.look()
        return self._last


class Tabwarden(Agent):
    server = TABWARDEN
    #: Where page_drag (when it exists) takes its drop target, by the name its schema uses.
    DROP_KEYS: Final = ("toRef", "targetRef", "dropRef", "to", "target", "toElement")

    def _tab(self, **args: Any) -> dict[str, Any]:
        return {"tabId": self.session.page, **args}

    def _element(self, el: Element, tool: str, **args: Any) -> dict[str, Any]:
        out = self._tab(ref=el.ref, **args)
        if el.frame is not None:
            out["frame"] = el.frame
        if "timeoutMs" in self.tools.get(tool, {}):  # actionability waits, where main has them
            out["timeoutMs"] = WAIT_MS
        return out

    async def open(self, url: str) -> None:
        await self.call("page_navigate", self._tab(url=url))

    async def look(self) -> list[Element]:
        items = snapshot_rows(await self.call("page_snapshot", self._tab()))
        return [
            Element(str(i.get("role")), str(i.get("name") or ""), str(i["ref"]))
            for i in items
            if i.get("ref")
        ]

    async def click(self, el: Element) -> None:
        await self.call("page_click", self._element(el, "page_click"))

    async def fill(self, el: Element, text: str) -> None:
        await self.call("page_fill", self._element(el, "page_fill", value=text))

    async def select(self, el: Element, label: str) -> None:
        await self.call("page_select", self._element(el, "page_select", label=label))

    async def check(self, el: Element) -> None:
        await self.call("page_check", self._element(el, "page_check", checked=True))

    async def follow(self, el: Element) -> None:
        await self.call("page_follow", self._tab(ref=el.ref))

    async def drag(self, source: Element, target: Element) -> None:
        props = self.tools.get("page_drag")
        if props is None:
            raise StepFailed("tool_missing", "page_drag")
        key = next((k for k in self.DROP_KEYS if k in props), None)
        if key is None:
            raise StepFailed("tool_missing", f"page_drag takes none of {self.DROP_KEYS}")
        drop: Any = target.ref if props[key].get("type") == "string" else {"ref": target.ref}
        await self.call("page_drag", self._tab(ref=source.ref, **{key: drop}))

    async def wait_text(self, text: str) -> None:
        await self.call("page_wait_for", self._tab(text=text, timeoutMs=WAIT_MS))

    async def frame_text(self) -> str:
        frames = (await self.call("page_frames", self._tab())).structured_content or {}
        texts = []
        for frame in frames.get("frames", [])[1:]:  # the top frame first: the rest are frames
            fid = frame.get("frameId")
            got = await self.call("page_text", self._tab(frame=fid))
            texts.append(str((got.structured_content or {}).get("text", "")))
        return "\n".join(texts)


AGENTS: Final = {PLAYWRIGHT: Playwright, DEVTOOLS: DevTools, TABWARDEN: Tabwarden}


async def agent_for(session: Session) -> Agent:
    listed = await session.client.list_tools()
    tools = {t.name: dict((t.input_schema or {}).get("properties") or {}) for t in listed.tools}
    return AGENTS[session.server](session, tools)


def pick(elements: list[Element], role: str | None, name: str) -> Element:
    """The element whose accessible name is exactly ``name`` (and role, when given): the
    first such, as an agent reading the snapshot top-down takes it."""
    for el in elements:
        if el.name == name and (role is None or el.role.lower() == role):
            return el
    raise StepFailed("not_found", f"{role or 'element'} {name!r}")


async def run_plan(agent: Agent, task: str) -> None:
    """Carry out ``task``'s plan; raises ``StepFailed`` at the first step that fails."""
    for step in PLANS[task]:
        kind = step[0]
        if kind == "wait":
            await agent.wait_text(step[1])
            continue
        if kind == "copy":
            found = re.search(step[1], await agent.frame_text())
            if not found:
                raise StepFailed("not_found", "the frame's code")
            await agent.fill(pick(await agent.look(), "textbox", step[2]), found.group(0))
            continue
        elements = await agent.look()
        if kind == "click":
            await agent.click(pick(elements, step[1], step[2]))
        elif kind == "fill":
            await agent.fill(pick(elements, step[1], step[2]), step[3])
        elif kind == "select":
            await agent.select(pick(elements, "combobox", step[1]), step[2])
        elif kind == "check":
            await agent.check(pick(elements, step[1], step[2]))
        elif kind == "drag":
            await agent.drag(pick(elements, None, step[1]), pick(elements, None, step[2]))
        elif kind == "follow":
            await agent.follow(pick(elements, step[1], step[2]))
        else:  # pragma: no cover — PLANS is checked by tests/bench/test_tasks.py
            raise ValueError(kind)


def deadline(seconds: float) -> float:
    return time.monotonic() + seconds


@dataclass(frozen=True)
class Outcome:
    """One task on one server: solved (by the page's reported state), the failure code when
    not (``unsolved``: every step ran but the page says not done), and the episode's time."""

    task: str
    solved: bool
    code: str
    ms: float
    #: The failed step's message (its first 300 characters), for the report's reader.
    detail: str = ""


async def _judged(episode: str, after: int) -> dict[str, Any] | None:
    """The page's state reported after the episode ended: wait (bounded) until two more
    reports arrived than ``after`` (the page reports every 200 ms), then read the latest."""
    end = deadline(JUDGE_S)
    while REPORTS.count(episode) < after + 2 and time.monotonic() < end:
        await asyncio.sleep(0.02)  # polling the site's store, bounded by ``end``
    return REPORTS.latest(episode)


async def episode(agent: Agent, task: Task, origin: str, tag: str) -> Outcome:
    """Open the task's page, carry out the plan (timed), then judge the page's state."""
    name = f"{agent.server}-{task.name}-{tag}"
    failure = detail = ""
    start = time.perf_counter()
    try:
        await agent.open(f"{origin}/task/{task.name}?ep={name}")
        await run_plan(agent, task.name)
    except StepFailed as exc:
        failure, detail = exc.code, str(exc)[:300]
    ms = (time.perf_counter() - start) * 1000
    report = await _judged(name, REPORTS.count(name))
    if report is None or "state" not in report:
        return Outcome(task.name, False, failure or "no_report", ms, detail)
    solved = bool(task.reward(report["state"]))
    return Outcome(task.name, solved, "" if solved else failure or "unsolved", ms, detail)
