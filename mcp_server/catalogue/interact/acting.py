"""The interact family's actions on elements: click, fill, press, select, check, scroll, clear
and reveal, each taking the optional ``waitFor`` / ``observe``. Pure declarations: no I/O."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field

from ..arguments import (
    Acting,
    ElementArgs,
    ElementName,
    Model,
    Selector,
    TabArgs,
    Text,
)
from ..results import Observation, _observation, _omitted_unless_set
from ..target import ElementDone, Targeted, Waited
from ..vocabulary import (
    ACT,
    RELAY,
    Asks,
    BadArguments,
    FrameOutput,
    Gate,
    Lineage,
    Reference,
    Risk,
    ToolSpec,
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
    description="Click an element with the real mouse. Submit buttons and links ask the person "
    "first. newTab: true waits for a tab the click opens.",
    arguments=ClickArgs,
    result=ElementDone,
    annotations=ACT,
    gate=Gate.ORIGIN,
    asks=Asks.GRACE,
    risk=Risk.HIGH,
    frames=FrameOutput.GATED,
    call=RELAY,
    docs=Reference(
        does=(
            "a person's click (**trusted input** at the element's centre, so Chrome's pop-up "
            "blocker lets its window through); **submit buttons and links ask you**, one approval "
            "covers repeats on that tab for the grace period; a tab the click opens "
            "(`target=_blank`, `window.open`) joins the session and is reported as `newTab` "
            "(`newTab: true` waits for it); a window Chrome still blocks answers `popup_blocked`; "
            "**never clicks what covers the element** (`element_covered`)"
        ),
        gate="origin (+ **confirm** for submits and links)",
        risk="high for submits",
        args="`tabId`, element, `waitFor?`, `newTab?`",
        result="`{clicked: true, navigated: bool, url, newTab?: {id, url}}`",
        guard=(
            "submit buttons and links: confirm, then grace period per tab and origin; CDP "
            "`Input.dispatchMouseEvent` (debugger) at the element's point, refused "
            "(`element_covered`) when another element is there or the click lands on one; "
            "`newTab: true` waits (within the deadline) for the tab the click opens and its first "
            "load, or answers `popup_blocked`"
        ),
    ),
)


class FillArgs(Acting, ElementArgs):
    value: Annotated[str, Field(max_length=100_000), Lineage.TYPED]
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
    description="Set a field's value. Password fields are refused unless policy allows.",
    arguments=FillArgs,
    result=ElementDone,
    annotations=ACT,
    gate=Gate.ORIGIN,
    risk=Risk.MEDIUM,
    frames=FrameOutput.GATED,
    call=RELAY,
    docs=Reference(
        does=(
            "fill a field (`insertText`: trusted typing) or 50 at once (text, select, "
            "checkbox, radio; one question; each one's outcome); says if it took (`applied`, "
            "`length`), never the content; **password fields refused** unless policy allows; a "
            "value from another site **asks you, naming both** (policy `provenance`)"
        ),
        args='`tabId`, element, `value`, `method?` (`"value"` \\| `"insertText"`)',
        result=(
            '`{filled: true, applied: "yes"\\|"no"\\|"unclear", length}` (read back and '
            "compared in the page; never the content)"
        ),
        guard=(
            "password field (resolved node or focused node, through open shadow roots and "
            "same-origin frames): refused unless `passwordFill`; `insertText`: CDP "
            "`Input.insertText` (debugger) after selecting the content"
        ),
    ),
)


class PressArgs(Acting, ElementArgs):
    TARGET_OPTIONAL = True
    key: Annotated[
        str,
        Field(min_length=1, max_length=32, description='a key name such as "Enter" or "a"'),
        Lineage.KEYS,
    ]


PAGE_PRESS = ToolSpec(
    name="page_press",
    title="Press a key",
    description="Press a key (e.g. Enter) on an element or the focused one; asks the person first.",
    arguments=PressArgs,
    result=ElementDone,
    annotations=ACT,
    gate=Gate.CONFIRM,
    asks=Asks.GRACE,
    risk=Risk.MEDIUM,
    frames=FrameOutput.GATED,
    call=RELAY,
    docs=Reference(
        does=(
            "key press / choose options of a `<select>` by value, label or index (`values` for "
            "`multiple`; a custom combobox answers `wrong_element`); a select value or label "
            "another site's page supplied **asks you, naming both sites** (policy `provenance`)"
        ),
        args="`tabId`, `key`, element?",
        result="`{pressed: true}`",
        guard="confirm; `Enter`: CDP `Input.dispatchKeyEvent` (debugger) on the focused element",
    ),
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


class Selected(Targeted, Waited):
    selected: list[str] = Field(description="the chosen options' values")
    labels: list[str] = Field(description="their labels")
    observation: Observation | None = _observation()


PAGE_SELECT = ToolSpec(
    name="page_select",
    title="Choose an option",
    description="Choose options of a native <select> by value, label or optionIndex; asks the "
    "person first.",
    arguments=SelectArgs,
    result=Selected,
    annotations=ACT,
    gate=Gate.CONFIRM,
    asks=Asks.GRACE,
    risk=Risk.MEDIUM,
    frames=FrameOutput.GATED,
    call=RELAY,
    docs=Reference(
        listed_with="page_press",
        args=(
            "`tabId`, element, one of `value` (string, or array), `values`, `label`, `optionIndex`"
        ),
        result="`{selected: [values], labels: [...]}`",
        guard="confirm; not a `<select>` (a custom combobox) → `wrong_element`",
    ),
)


class CheckArgs(Acting, ElementArgs):
    checked: bool


PAGE_CHECK = ToolSpec(
    name="page_check",
    title="Check or uncheck",
    description="Set a checkbox or radio button.",
    arguments=CheckArgs,
    result=ElementDone,
    annotations=ACT,
    gate=Gate.ORIGIN,
    risk=Risk.LOW,
    frames=FrameOutput.GATED,
    call=RELAY,
    docs=Reference(
        does=(
            "checkbox/radio; scroll an element into view, or the page or a container `to` "
            "top/bottom or by `dx`/`dy` (answers the position and `atBottom`)"
        ),
        args="`tabId`, element, `checked`",
        result="`{checked: bool}`",
    ),
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


class Scrolled(Targeted, Waited):
    scrollX: int  # noqa: N815
    scrollY: int  # noqa: N815
    atTop: bool  # noqa: N815
    atBottom: bool  # noqa: N815
    observation: Observation | None = _observation()


PAGE_SCROLL = ToolSpec(
    name="page_scroll",
    title="Scroll",
    description="Scroll an element into view, or the page or a container to top / bottom or by dx"
    " / dy.",
    arguments=ScrollArgs,
    result=Scrolled,
    annotations=ACT,
    gate=Gate.ORIGIN,
    risk=Risk.LOW,
    frames=FrameOutput.GATED,
    call=RELAY,
    docs=Reference(
        listed_with="page_check",
        args=(
            '`tabId`; an element (into view), or `to`: `"top"|"bottom"|{x,y}` or `dx`/`dy`, '
            "with `container?` (element; default the page)"
        ),
        result="`{scrollX, scrollY, atTop, atBottom}` (of the container when given)",
    ),
)


class ClearArgs(Acting, ElementArgs):
    pass


PAGE_CLEAR = ToolSpec(
    name="page_clear",
    title="Clear a field",
    description="Empty a text field. Password fields are refused unless policy allows.",
    arguments=ClearArgs,
    result=ElementDone,
    annotations=ACT,
    gate=Gate.ORIGIN,
    risk=Risk.LOW,
    frames=FrameOutput.GATED,
    call=RELAY,
    docs=Reference(
        does="empty a text field; **password fields refused** unless policy allows",
        args="`tabId`, element",
        result="`{cleared: true}`",
        guard="password field as `page_fill`; not a text field → `wrong_element`",
    ),
)


class RevealArgs(Acting, TabArgs):
    selector: Annotated[Selector, Field(description="CSS selector of what to reveal")] = None
    text: Annotated[Text, Field(description="visible text of what to reveal")] = None
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
    description="Scroll a container (or the page) until an element matching selector or text "
    "shows; answers its ref.",
    arguments=RevealArgs,
    result=Revealed,
    annotations=ACT,
    gate=Gate.ORIGIN,
    risk=Risk.LOW,
    frames=FrameOutput.GATED,
    call=RELAY,
    docs=Reference(
        does=(
            "scroll a list (or the page) until a match appears, bounded; stops when the list stops "
            "growing; answers its ref"
        ),
        args=(
            "`tabId`, `selector`\\|`text`, `container?` (element), `maxSteps?` (200), `timeoutMs?` "
            "(20000)"
        ),
        result=(
            "`{found, steps, scrollY, atBottom, ref?, element?, stopped?}` (`stopped`: `maxSteps`, "
            "`timeout` or `end`)"
        ),
        guard="the match's ref is of that document, as a snapshot's",
    ),
)


#: This family's tools, in the order they are listed.


#: These tools, in the order they are listed.
TOOLS: tuple[ToolSpec, ...] = (
    PAGE_CLICK,
    PAGE_FILL,
    PAGE_PRESS,
    PAGE_SELECT,
    PAGE_CHECK,
    PAGE_SCROLL,
    PAGE_CLEAR,
    PAGE_REVEAL,
)
