"""The interact family: the tools whose extension half is ``extension/handlers/interact.js``,
each with its arguments, result and declaration side by side. Pure declarations: no I/O."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field

from .arguments import (
    Acting,
    ElementArgs,
    ElementName,
    Frame,
    FrameArgs,
    Model,
    Selector,
    TabArgs,
    Text,
)
from .results import Done, Observation, Snapshot, _observation, _omitted_unless_set
from .vocabulary import ACT, READ, RELAY, BadArguments, FrameOutput, Gate, Lineage, Risk, ToolSpec


class SnapshotArgs(FrameArgs):
    mode: Annotated[
        Literal["auto", "a11y", "dom"],
        Field(
            description="auto: Chrome's accessibility tree, merged with the DOM walk when the "
            "tree has under half the walk's interactive elements, the walk alone when the tree "
            "cannot be read; a11y: the tree only; dom: the DOM walk only"
        ),
    ] = "auto"
    compact: Annotated[bool, Field(description="interactive elements only")] = False
    ref: Annotated[
        str | None,
        Field(description="scope: only this element and what it contains (a ref)"),
        Lineage.INERT,
    ] = None
    selector: Annotated[
        str | None,
        Field(description="scope: the first element matching this CSS selector"),
        Lineage.INERT,
    ] = None
    maxNodes: Annotated[  # noqa: N815
        int, Field(ge=1, le=5000, description="list at most this many elements (truncated)")
    ] = 1000

    def wire(self) -> dict[str, Any]:
        if self.ref and self.selector:
            raise BadArguments("scope the snapshot by ref or by selector, not both")
        return self.model_dump(mode="json", exclude_none=True)


PAGE_SNAPSHOT = ToolSpec(
    name="page_snapshot",
    title="Snapshot a page",
    description="The elements of one of your tabs from Chrome's accessibility tree (roles, "
    "names, heading levels and states as Chrome computes them; hidden nodes left out), with "
    "refs (@eN) to address them; compact for interactive elements only, scope by ref or "
    "selector, at most maxNodes. An element keeps its ref across snapshots of the same "
    "document and a ref never names another element; after a navigation old refs answer "
    "bad_ref: snapshot again. Password values never appear.",
    arguments=SnapshotArgs,
    result=Snapshot,
    annotations=READ,
    gate=Gate.ORIGIN,
    risk=Risk.MEDIUM,
    frames=FrameOutput.GATED,
    call=RELAY,
)


class FindArgs(TabArgs):
    role: Annotated[
        str | None,
        Field(max_length=2000, description='a role as Chrome computes it, e.g. "button"'),
        Lineage.INERT,
    ] = None
    name: Annotated[
        str | None,
        Field(max_length=2000, description="the accessible name (any case)"),
        Lineage.INERT,
    ] = None
    exact: Annotated[
        bool, Field(description="the whole name only (else exact, then prefix, then substring)")
    ] = False
    limit: Annotated[int, Field(ge=1, le=50, description="at most this many matches")] = 10
    frame: Frame = None

    def wire(self) -> dict[str, Any]:
        if not (self.role or self.name):
            raise BadArguments("give a role, a name or both")
        return self.model_dump(mode="json", exclude_none=True)


class FoundItem(Model):
    ref: str
    role: str
    name: str
    tag: str
    visible: bool


class Found(Model):
    url: str
    matches: list[FoundItem]
    total: int = Field(description="how many elements matched (at most limit are listed)")
    mode: Literal["a11y", "dom", "a11y+dom"]


PAGE_FIND = ToolSpec(
    name="page_find",
    title="Find elements by role and name",
    description="Elements of one of your tabs by role and/or accessible name, ranked: exact "
    "names first, then prefixes, then substrings (exact: only whole names); visible ones "
    "first. Answers refs to act on, at most limit (50).",
    arguments=FindArgs,
    result=Found,
    annotations=READ,
    gate=Gate.ORIGIN,
    risk=Risk.MEDIUM,
    frames=FrameOutput.GATED,
    call=RELAY,
)


class Box(Model):
    x: float
    y: float
    width: float
    height: float


class ElementState(Model):
    model_config = {"extra": "allow"}
    exists: bool = True
    reason: str | None = Field(default=None, description="why the element is not there")
    tag: str | None = None
    box: Box | None = Field(default=None, description="border box, viewport CSS pixels")
    inViewport: bool | None = None  # noqa: N815


PAGE_GET_STATE = ToolSpec(
    name="page_get_state",
    title="Read an element's state",
    description="Tag, type, value, checked, disabled, visible, text, box (viewport CSS "
    "pixels) and inViewport of one element (a password field's value is never returned); "
    "{exists: false, reason} when it is not there (no match, or a stale ref).",
    arguments=ElementArgs,
    result=ElementState,
    annotations=READ,
    gate=Gate.ORIGIN,
    risk=Risk.LOW,
    frames=FrameOutput.GATED,
    call=RELAY,
)


class WaitForArgs(TabArgs):
    selector: Selector = None
    text: Text = None
    state: Annotated[str, Lineage.INERT] = "visible"
    timeoutMs: Annotated[int, Field(ge=0, le=60_000)] = 10_000  # noqa: N815
    frame: Frame = None

    def wire(self) -> dict[str, Any]:
        named = {k: v for k, v in (("selector", self.selector), ("text", self.text)) if v}
        framed = {"frame": self.frame} if self.frame is not None else {}
        wait = {"state": self.state, "timeoutMs": self.timeoutMs}
        return {"tabId": self.tabId, **wait, **named, **framed}


PAGE_WAIT_FOR = ToolSpec(
    name="page_wait_for",
    title="Wait for an element",
    description='Wait until a selector or text is "visible" or "absent"; answers timeout '
    "otherwise.",
    arguments=WaitForArgs,
    result=Done,
    annotations=READ,
    gate=Gate.ORIGIN,
    risk=Risk.NONE,
    frames=FrameOutput.GATED,
    call=RELAY,
)


class ClickArgs(Acting, ElementArgs):
    newTab: Annotated[  # noqa: N815
        bool,
        Field(
            description="wait (within the call's deadline) for the tab the click opens "
            "(target=_blank, window.open) and its first load; it joins your session and is "
            "reported as newTab {id, url}"
        ),
    ] = False

    def wire(self) -> dict[str, Any]:
        sent = super().wire()
        if not self.newTab:
            sent.pop("newTab", None)  # reported anyway when one joined; only true waits
        return sent


PAGE_CLICK = ToolSpec(
    name="page_click",
    title="Click",
    description="Click an element. Submit buttons and links ask the person in the confirm "
    "window (one approval covers repeats on that tab for the grace period). A tab the click "
    "opens joins your session and is reported as newTab; newTab: true waits for it.",
    arguments=ClickArgs,
    result=Done,
    annotations=ACT,
    gate=Gate.ORIGIN,
    risk=Risk.HIGH,
    frames=FrameOutput.GATED,
    call=RELAY,
)


class FillArgs(Acting, ElementArgs):
    value: Annotated[str, Lineage.TYPED]
    method: Annotated[
        Literal["value", "insertText"],
        Field(
            description='"value" sets it in the page; "insertText" types it as trusted input '
            "(Chrome's debugger), for fields that ignore a set value"
        ),
    ] = "value"


PAGE_FILL = ToolSpec(
    name="page_fill",
    title="Fill a field",
    description="Type a value into a field (method insertText: as trusted input). Password "
    "fields are refused unless policy allows. Reports applied (yes/no/unclear) and length.",
    arguments=FillArgs,
    result=Done,
    annotations=ACT,
    gate=Gate.ORIGIN,
    risk=Risk.MEDIUM,
    frames=FrameOutput.GATED,
    call=RELAY,
)


class PressArgs(Acting, ElementArgs):
    TARGET_OPTIONAL = True
    key: Annotated[str, Lineage.KEYS]


PAGE_PRESS = ToolSpec(
    name="page_press",
    title="Press a key",
    description="Press a key (e.g. Enter) on an element or the focused one; asks the person first.",
    arguments=PressArgs,
    result=Done,
    annotations=ACT,
    gate=Gate.CONFIRM,
    risk=Risk.MEDIUM,
    frames=FrameOutput.GATED,
    call=RELAY,
)


class SelectArgs(Acting, ElementArgs):
    """Exactly one of value, values, label or optionIndex (the extension checks)."""

    value: Annotated[
        str | None, Field(description="an option's value (else its label)"), Lineage.TYPED
    ] = None
    values: Annotated[
        list[str] | None,
        Field(max_length=1000, description="several, for <select multiple>"),
        Lineage.TYPED,
    ] = None
    label: Annotated[str | None, Field(description="an option's visible label"), Lineage.TYPED] = (
        None
    )
    optionIndex: Annotated[  # noqa: N815
        int | None, Field(ge=0, description="an option by position, 0-based")
    ] = None

    def own(self) -> dict[str, Any]:
        return {k: v for k, v in super().own().items() if v is not None}


class Selected(Model):
    selected: list[str] = Field(description="the chosen options' values")
    labels: list[str] = Field(description="their labels")
    observation: Observation | None = _observation()


PAGE_SELECT = ToolSpec(
    name="page_select",
    title="Choose an option",
    description="Choose options of a native <select> by value, label or optionIndex (values: "
    "several, for <select multiple>); asks the person first. A custom combobox answers "
    "wrong_element: click it open, then click the option.",
    arguments=SelectArgs,
    result=Selected,
    annotations=ACT,
    gate=Gate.CONFIRM,
    risk=Risk.MEDIUM,
    frames=FrameOutput.GATED,
    call=RELAY,
)


class CheckArgs(Acting, ElementArgs):
    checked: bool


PAGE_CHECK = ToolSpec(
    name="page_check",
    title="Check or uncheck",
    description="Set a checkbox or radio button.",
    arguments=CheckArgs,
    result=Done,
    annotations=ACT,
    gate=Gate.ORIGIN,
    risk=Risk.LOW,
    frames=FrameOutput.GATED,
    call=RELAY,
)


class ScrollPoint(Model):
    model_config = ConfigDict(extra="forbid", frozen=True)

    x: Annotated[float, Field(ge=0, le=1e7)]
    y: Annotated[float, Field(ge=0, le=1e7)]


class ScrollArgs(Acting, ElementArgs):
    """An element (scrolled into view), or a box — ``container`` or the page — moved ``to``
    top / bottom or by ``dx`` / ``dy``; with none of these, the page to the bottom."""

    TARGET_OPTIONAL = True
    to: Annotated[
        Literal["top", "bottom"] | ScrollPoint | None,
        Field(description="the box's top or bottom, or an offset {x, y} in it"),
    ] = None
    dx: Annotated[float | None, Field(ge=-1e6, le=1e6, description="CSS pixels right")] = None
    dy: Annotated[float | None, Field(ge=-1e6, le=1e6, description="CSS pixels down")] = None
    container: Annotated[
        ElementName | None, Field(description="scroll inside this element instead of the page")
    ] = None

    def wire(self) -> dict[str, Any]:
        framed = {"frame": self.frame} if self.frame is not None else {}
        after = self.aftermath()
        moves = {k: v for k in ("to", "dx", "dy") if (v := getattr(self, k)) is not None}
        if isinstance(self.to, ScrollPoint):
            moves["to"] = self.to.model_dump(mode="json")
        if self.named():  # scrolling to an element
            if moves or self.container is not None:
                raise BadArguments("scroll to an element, or move a box with to/dx/dy, not both")
            return {"tabId": self.tabId, **self.element(), **framed, **after}
        box = {"container": self.container.wire()} if self.container is not None else {}
        return {"tabId": self.tabId, **(moves or {"to": "bottom"}), **box, **framed, **after}


class Scrolled(Model):
    scrollX: int  # noqa: N815
    scrollY: int  # noqa: N815
    atTop: bool  # noqa: N815
    atBottom: bool  # noqa: N815
    observation: Observation | None = _observation()


PAGE_SCROLL = ToolSpec(
    name="page_scroll",
    title="Scroll",
    description="Scroll an element into view, or scroll the page or a container (an "
    'element) to "top" / "bottom" or by dx / dy pixels; answers the position and atBottom.',
    arguments=ScrollArgs,
    result=Scrolled,
    annotations=ACT,
    gate=Gate.ORIGIN,
    risk=Risk.LOW,
    frames=FrameOutput.GATED,
    call=RELAY,
)


class ClearArgs(Acting, ElementArgs):
    pass


PAGE_CLEAR = ToolSpec(
    name="page_clear",
    title="Clear a field",
    description="Empty a text field. Password fields are refused unless policy allows.",
    arguments=ClearArgs,
    result=Done,
    annotations=ACT,
    gate=Gate.ORIGIN,
    risk=Risk.LOW,
    frames=FrameOutput.GATED,
    call=RELAY,
)


class SettleArgs(TabArgs):
    stableMs: Annotated[  # noqa: N815
        int, Field(ge=0, le=120_000, description="quiet (no DOM change) for this long")
    ] = 500
    timeoutMs: Annotated[  # noqa: N815
        int, Field(ge=0, le=120_000, description="give up after this many ms")
    ] = 10_000


class Settled(Model):
    settled: bool = Field(description="false: still changing when timeoutMs ran out")
    waitedMs: int = Field(description="how long it waited")  # noqa: N815
    quietMs: int = Field(description="how long the document had been quiet at the end")  # noqa: N815


PAGE_SETTLE = ToolSpec(
    name="page_settle",
    title="Wait for the page to settle",
    description="Wait until one of your tabs is quiet: loaded, no navigation in progress and "
    "no DOM change for stableMs (at most timeoutMs); says whether it settled and how long "
    "it waited.",
    arguments=SettleArgs,
    result=Settled,
    annotations=READ,
    gate=Gate.ORIGIN,
    risk=Risk.NONE,
    frames=FrameOutput.GATED,
    call=RELAY,
)


class RevealArgs(Acting, TabArgs):
    selector: Annotated[
        str | None, Field(description="CSS selector of what to reveal"), Lineage.INERT
    ] = None
    text: Annotated[
        str | None, Field(description="visible text of what to reveal"), Lineage.INERT
    ] = None
    container: Annotated[
        ElementName | None, Field(description="the scrolling list (default: the page)")
    ] = None
    maxSteps: Annotated[int, Field(ge=1, le=2000, description="most screenfuls to scroll")] = 200  # noqa: N815
    timeoutMs: Annotated[int, Field(ge=0, le=120_000)] = 20_000  # noqa: N815

    def wire(self) -> dict[str, Any]:
        out = self.model_dump(mode="json", exclude={"container", *self.AFTER}, exclude_none=True)
        box = {"container": self.container.wire()} if self.container else {}
        return {**out, **box, **self.aftermath()}


class Revealed(Model):
    found: bool
    steps: int = Field(description="screenfuls scrolled")
    scrollY: int  # noqa: N815
    atBottom: bool  # noqa: N815
    ref: str | None = _omitted_unless_set("the match's ref (found only)")
    element: str | None = _omitted_unless_set("the match's role and name")
    stopped: str | None = _omitted_unless_set(
        "not found: maxSteps, timeout, or end (the list stopped growing)"
    )
    observation: Observation | None = _observation()


PAGE_REVEAL = ToolSpec(
    name="page_reveal",
    title="Scroll until something appears",
    description="Scroll a container (or the page) a screenful at a time until an element "
    "matching selector or text shows (a virtualised or lazily loaded list), at most maxSteps "
    "and timeoutMs; stops when the list stops growing. Answers found and the match's ref.",
    arguments=RevealArgs,
    result=Revealed,
    annotations=ACT,
    gate=Gate.ORIGIN,
    risk=Risk.LOW,
    frames=FrameOutput.GATED,
    call=RELAY,
)


#: This family's tools, in the order they are listed.
TOOLS: tuple[ToolSpec, ...] = (
    PAGE_SNAPSHOT,
    PAGE_FIND,
    PAGE_GET_STATE,
    PAGE_WAIT_FOR,
    PAGE_CLICK,
    PAGE_FILL,
    PAGE_PRESS,
    PAGE_SELECT,
    PAGE_CHECK,
    PAGE_SCROLL,
    PAGE_CLEAR,
    PAGE_SETTLE,
    PAGE_REVEAL,
)
