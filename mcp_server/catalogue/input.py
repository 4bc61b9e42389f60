"""The input family: the tools whose extension half is ``extension/handlers/input.js``, each with
its arguments, result and declaration side by side. Pure declarations: no I/O."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field

from .arguments import (
    Acting,
    ElementArgs,
    ElementName,
    Frame,
    Model,
    TabArgs,
    _pick,
)
from .results import NewTab, Observation, _blocked, _new_tab, _observation
from .target import Targeted, Waited
from .vocabulary import (
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

Coordinate = Annotated[
    float | None,
    Field(
        ge=0,
        le=100_000,
        description="viewport CSS pixels (instead of an element); with frame, the frame's viewport",
    ),
]


class PointArgs(Acting, ElementArgs):
    """Where the real pointer goes: exactly one element (its visible centre) or viewport x and y."""

    WIRE_FORMS = (("x", "y"),)

    x: Coordinate = None
    y: Coordinate = None

    def wire(self) -> dict[str, Any]:
        named = self.named()
        point = self.x is not None or self.y is not None
        if point == bool(named) or (point and (self.x is None or self.y is None)):
            raise BadArguments("give exactly one of ref, selector, text or xpath, or both x and y")
        where = {"x": self.x, "y": self.y} if point else self.element()
        skip = ("x", "y", *self.AFTER)
        own = {k: v for k, v in self.own().items() if k not in skip and v is not None}
        return {"tabId": self.tabId, **where, **own, **self.aftermath()}


class Pointed(Model):
    x: float = Field(description="where the pointer went, viewport CSS pixels")
    y: float
    covered: bool = Field(description="another element is on top of the target at that point")
    hitTarget: str = Field(description="what is really at that point (role and name)")  # noqa: N815
    hitRef: str | None = Field(  # noqa: N815
        default=None, description="its ref, usable with every element tool"
    )


class HoverOut(Targeted, Waited, Pointed):
    hovered: bool
    observation: Observation | None = _observation()


PAGE_HOVER = ToolSpec(
    name="page_hover",
    title="Hover",
    description="Move the real pointer over an element or a viewport point (CSS :hover applies).",
    arguments=PointArgs,
    result=HoverOut,
    annotations=ACT,
    gate=Gate.ORIGIN,
    risk=Risk.LOW,
    frames=FrameOutput.GATED,
    call=RELAY,
    docs=Reference(
        does=(
            "move the **real pointer** (Chrome's debugger) over an element or a point, so CSS "
            "`:hover` applies; says when something covers it"
        ),
        args="`tabId`, element or `x`, `y`, `waitFor?`",
        result="`{hovered: true, x, y, covered, hitTarget, hitRef?}`",
        guard="CDP `Input` (debugger)",
    ),
)


class MouseArgs(PointArgs):
    button: Literal["left", "right", "middle"] = "left"
    clickCount: Annotated[int, Field(ge=1, le=3)] = 1  # noqa: N815
    modifiers: Annotated[
        list[Literal["Alt", "Control", "Meta", "Shift", "Mod"]] | None,
        Field(max_length=5, description="keys held: Mod is Meta on macOS, Control elsewhere"),
    ] = None
    force: Annotated[
        bool, Field(description="click even when another element covers the point")
    ] = False


class MouseOut(Targeted, Waited, Pointed):
    observation: Observation | None = _observation()
    newTab: NewTab | None = _new_tab()  # noqa: N815
    blocked: str | None = _blocked()
    clicked: bool = Field(description="false when the point was covered and force was not set")
    navigated: bool
    url: str


#: What page_mouse and page_drag declare alike: a real mouse press on a tab of an approved
#: origin, asking the person (then a grace period) when what it lands on submits or navigates.
REAL_MOUSE: dict[str, Any] = {
    "annotations": ACT,
    "gate": Gate.ORIGIN,
    "asks": Asks.GRACE,
    "risk": Risk.HIGH,
    "frames": FrameOutput.GATED,
    "call": RELAY,
}


PAGE_MOUSE = ToolSpec(
    name="page_mouse",
    title="Click with the real mouse",
    description="A trusted mouse click at an element or a viewport point: button, clickCount, "
    "modifiers. Refuses a covered point unless force. Submits and links ask the "
    "person.",
    arguments=MouseArgs,
    result=MouseOut,
    **REAL_MOUSE,
    docs=Reference(
        does=(
            "a **trusted click** (`event.isTrusted`) through Chrome's debugger: button, 1–3 "
            "clicks, modifiers; a covered point is reported (`covered`, `hitTarget`, `hitRef`) and "
            "not clicked unless `force`; **submit buttons and links ask you**, as `page_click`"
        ),
        gate="origin (+ **confirm** for submits and links)",
        risk="high for submits",
        args=(
            "`tabId`, element or `x`, `y`, `button?`, `clickCount?` (1–3), `modifiers?`, `force?`, "
            "`waitFor?`"
        ),
        result=(
            "`{clicked, navigated, url, x, y, covered, hitTarget, hitRef?}` (covered and not "
            "`force`: `clicked: false`, nothing dispatched)"
        ),
        guard=(
            "CDP `Input` (debugger); what receives the click decides: submit buttons and links "
            "confirm, then grace period per tab and origin"
        ),
    ),
)


class DragEnd(ElementName):
    """Where a drag ends: exactly one element (its visible centre) or a viewport point, in the
    drag's frame unless ``frame`` names another."""

    WIRE_FORMS: ClassVar[tuple[tuple[str, ...], ...]] = (("x", "y"),)

    x: Coordinate = None
    y: Coordinate = None
    frame: Annotated[
        Frame,
        Field(
            description="a frameId from page_frames: drop inside that frame (default: the "
            "frame the drag starts in)"
        ),
    ] = None

    def wire(self) -> dict[str, Any]:
        named = {k: v for k in self.TARGET if (v := getattr(self, k))}
        point = self.x is not None or self.y is not None
        if point == bool(named) or len(named) > 1 or (point and (self.x is None or self.y is None)):
            raise BadArguments(
                "to: give exactly one of ref, selector, text or xpath, or both x and y"
            )
        where = {"x": self.x, "y": self.y} if point else {**named, **_pick(self)}
        return {**where, **({"frame": self.frame} if self.frame is not None else {})}


class DragArgs(PointArgs):
    """The drag's start (an element or x and y, as page_mouse) and its end (``to``)."""

    to: Annotated[
        DragEnd,
        Field(
            description='where to drop: {"selector": ...} (or ref, text, xpath; index, match, '
            "ignoreCase as for the start) or "
            '{"x": ..., "y": ...}; frame: another frame than the start\'s'
        ),
    ]
    steps: Annotated[
        int,
        Field(ge=1, le=50, description="pointer moves between press and release (default 10)"),
    ] = 10

    def wire(self) -> dict[str, Any]:
        base = {k: v for k, v in super().wire().items() if k != "to"}
        return {**base, "to": self.to.wire()}


class DragPoint(Pointed):
    element: str | None = Field(
        default=None, description="the element named for this end (role and name)"
    )
    frame: int = Field(description="the frame this end is in (0: the top page)")


class DragOut(Targeted, Waited, Model):
    observation: Observation | None = _observation()
    dragged: bool
    start: DragPoint = Field(description="where the button was pressed")
    end: DragPoint = Field(description="where it was released")
    navigated: bool
    url: str


PAGE_DRAG = ToolSpec(
    name="page_drag",
    title="Drag and drop with the real mouse",
    description="Drag with the real mouse from an element or point to `to` (an element or point)."
    " Dragging or dropping on a submit or link asks the person.",
    arguments=DragArgs,
    result=DragOut,
    **REAL_MOUSE,
    docs=Reference(
        does=(
            "**drag and drop** with the real mouse (Chrome's debugger): press on an element or "
            "point, move in `steps`, release over `to`; HTML5 drop zones and pointer-event "
            "sortable lists; a covered end is refused; **a submit button or link at either end "
            "asks you**, naming both ends"
        ),
        gate="origin of both ends' frames (+ **confirm** for submits and links)",
        risk="high",
        args=(
            "`tabId`, element or `x`, `y`, `frame?`, `to: {ref|selector|text|xpath, index?} | "
            "{x, y}` (+ `frame?`), `steps?` (1–50), `waitFor?`"
        ),
        result=(
            "`{dragged, navigated, url, start, end}`; each end `{x, y, covered, hitTarget, "
            "hitRef?, element?, frame}`"
        ),
        guard=(
            "CDP `Input` (debugger); both ends located and checked as clicks are (covered: "
            "`element_covered`, nothing pressed); submit buttons and links confirm"
        ),
    ),
)


class DialogArgs(TabArgs):
    action: Annotated[
        Literal["accept", "dismiss"] | None,
        Field(description="answer the dialog open now (calls answer dialog_open meanwhile)"),
    ] = None
    arm: Annotated[
        Literal["accept", "dismiss", "off"] | None,
        Field(
            description="answer the NEXT dialog this page opens, once (policy dialogArming; "
            'cleared by any navigation); "off" clears it'
        ),
    ] = None
    promptText: Annotated[  # noqa: N815
        str | None,
        Field(
            max_length=10_000, description="the answer to a prompt() (accept only; never echoed)"
        ),
        Lineage.TYPED,
    ] = None

    def wire(self) -> dict[str, Any]:
        out: dict[str, Any] = {"tabId": self.tabId}
        if self.action is not None:
            out["action"] = self.action
        if self.arm is not None:
            out["arm"] = self.arm
        if self.promptText is not None:
            out["promptText"] = self.promptText
        return out


class RecentDialog(Model):
    type: str = Field(description="alert, confirm, prompt or beforeunload")
    message: str = Field(description="card-like numbers masked; empty from an unapproved site")
    origin: str = Field(description="the origin of the frame that opened it")
    answered: str = Field(description="accepted, dismissed, auto-dismissed, or open")
    by: str = Field(description="agent, arm, tabwarden (nothing armed), or page or person")


class ArmedAnswer(Model):
    answer: str = Field(description="accept or dismiss")
    origin: str = Field(description="only a dialog from this origin uses it")


class DialogOut(Model):
    handled: bool = Field(description="true when an open dialog was answered by this call")
    type: str | None = Field(None, description="alert, confirm, prompt or beforeunload")
    accepted: bool | None = None
    message: str | None = Field(None, description="the dialog's text, card-like numbers masked")
    armed: ArmedAnswer | None = Field(None, description="the answer armed for the next dialog")
    recent: list[RecentDialog] = Field(default_factory=list, description="oldest first, at most 10")


PAGE_DIALOG = ToolSpec(
    name="page_dialog",
    title="Answer, arm or list JavaScript dialogs",
    description="Accept or dismiss the dialog blocking a tab (other calls answer dialog_open "
    "meanwhile), or arm an answer for the next one. Accepting may ask the person.",
    arguments=DialogArgs,
    result=DialogOut,
    annotations=ACT,
    gate=Gate.ORIGIN,
    asks=Asks.EVERY_CALL,
    risk=Risk.MEDIUM,
    frames=FrameOutput.GATED,
    call=RELAY,
    docs=Reference(
        does=(
            "accept or dismiss the alert/confirm/prompt/leave-page dialog blocking a tab "
            "(meanwhile every call on it answers `dialog_open`); with policy `dialogArming` on "
            "(**a widening**: `tabwarden policy set dialogArming=true`), dialogs never block — "
            "each is dismissed and logged unless the agent **armed** a one-shot answer for that "
            "page (bound to its document and origin, gone at any navigation); lists the last 10 "
            "dialogs (masked) and how each was answered; **OK on a `confirm()`/`prompt()`, or "
            "arming an accept, asks you** when policy confirms submits; a `promptText` another "
            "site's page supplied **asks you, naming both sites** (policy `provenance`)"
        ),
        gate="origin (+ **confirm** to accept or arm an accept; arming needs `dialogArming`)",
        args=(
            '`tabId`, `action?: "accept"|"dismiss"` (the open dialog) or `arm?: '
            '"accept"|"dismiss"|"off"` (the next one), `promptText?` (accept only); neither: '
            "list"
        ),
        result=(
            "`{handled, type?, accepted?, message? (masked), armed: {answer, origin} \\| null, "
            "recent: [{type, message (masked; empty from an unapproved site), origin, answered: "
            "accepted\\|dismissed\\|auto-dismissed\\|open, by: agent\\|arm\\|tabwarden\\|page or "
            "person}]}` (last 10; the prompt answer never)"
        ),
        guard=(
            "runs at once, outside the tab queue; accepting a confirm()/prompt(), or arming an "
            "accept: confirm when policy `confirm` lists `submit`; `arm` accept/dismiss: "
            '`policy_denied` unless `dialogArming`; `arm: "off"` free'
        ),
    ),
)


#: This family's tools, in the order they are listed.
TOOLS: tuple[ToolSpec, ...] = (
    PAGE_HOVER,
    PAGE_MOUSE,
    PAGE_DRAG,
    PAGE_DIALOG,
)
