"""The interact family's reads: the accessibility snapshot, finding elements, an element's
state, waiting for one and for the page to settle. Pure declarations: no I/O."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field, model_validator

from ..arguments import (
    ElementNamed,
    Frame,
    FrameArgs,
    Model,
    Ref,
    Selector,
    SnapshotFormat,
    TabArgs,
    Text,
)
from ..results import Done, Snapshot, SnapshotItem, _omitted_unless_set
from ..target import Targeted
from ..vocabulary import (
    READ,
    RELAY,
    BadArguments,
    FrameOutput,
    Gate,
    Lineage,
    Reference,
    Risk,
    ToolSpec,
)
from . import lines as snapshot_lines


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
        Ref, Field(description="scope: only this element and what it contains (a ref)")
    ] = None
    selector: Annotated[
        Selector, Field(description="scope: the first element matching this CSS selector")
    ] = None
    maxNodes: Annotated[  # noqa: N815
        int,
        Field(
            ge=1,
            le=5000,
            description="list at most this many rows, interactive elements first (a cut says "
            "what was left out)",
        ),
    ] = 1000
    skip: Annotated[
        int, Field(ge=0, le=1_000_000, description="start at this row (a cut's skip)")
    ] = 0
    text: Annotated[
        bool, Field(description="also list the page's text runs (text rows, no ref)")
    ] = False
    format: SnapshotFormat = "lines"

    def wire(self) -> dict[str, Any]:
        if self.ref and self.selector:
            raise BadArguments("scope the snapshot by ref or by selector, not both")
        # The format is the server's: it re-encodes the extension's (masked) rows.
        sent = self.model_dump(mode="json", exclude_none=True, exclude={"format"})
        return {k: v for k, v in sent.items() if not (k in ("skip", "text") and not v)}

    def shaped(self, reply: dict[str, Any]) -> dict[str, Any]:
        return snapshot_lines.in_format(reply, self.format)


class SnapshotRow(SnapshotItem):
    """A row of page_snapshot's own answer: a text row (text: true) has no ref and no tag."""

    ref: str | None = _omitted_unless_set(  # type: ignore[assignment]
        "the element's ref; a text row has none"
    )
    tag: str | None = _omitted_unless_set("the element's tag")  # type: ignore[assignment]


class SnapshotAnswer(Snapshot):
    """page_snapshot's result: the rows as lines (default) or as objects (format json)."""

    snapshot: list[SnapshotRow] | None = _omitted_unless_set(  # type: ignore[assignment]
        "format json: one object per row"
    )

    def text_block(self) -> str | None:
        """The line form's text block: its header and lines (ADR 0016); JSON otherwise."""
        if self.lines is None:
            return None
        return snapshot_lines.text_block(self.model_dump(mode="json"))


PAGE_SNAPSHOT = ToolSpec(
    name="page_snapshot",
    title="Snapshot a page",
    description="The elements of one of your tabs from Chrome's accessibility tree (roles, "
    "names, heading levels and states as Chrome computes them; hidden nodes left out), with "
    'refs (@eN) to address them: by default one line per row (`- link "Logo" @e5 '
    "href=https://x/`, indented by depth, only the states that are set; format json: one "
    "object per row); text: true adds the page's text runs. compact for interactive elements "
    "only, scope by ref or selector, at most maxNodes rows, interactive elements first: when "
    "rows are left out, `cut` says how many and how to list the rest (skip, maxNodes, scope). "
    "An element keeps its ref across snapshots of the same document and a ref never names "
    "another element; after a navigation old refs answer bad_ref: snapshot again. A name or "
    "value cut short says so (name.chars / value.chars: the full length). A document with "
    "nothing to reference (a text-only frame) answers its text. Password values never appear.",
    arguments=SnapshotArgs,
    result=SnapshotAnswer,
    annotations=READ,
    gate=Gate.ORIGIN,
    risk=Risk.MEDIUM,
    frames=FrameOutput.GATED,
    call=RELAY,
    docs=Reference(
        does=(
            "the elements from Chrome's **accessibility tree** with stable refs, one line "
            "per row (`format: json`: objects); `mode`, `compact`, `text`, scope by `ref` or "
            "`selector`, `maxNodes` (controls first; a `cut` says what was left out), `skip`; "
            "password values never included"
        ),
        args=(
            "`tabId`, `mode?` (`auto` \\| `a11y` \\| `dom`), `compact?`, `ref?` \\| `selector?` "
            "(scope), `maxNodes?` (1–5000, default 1000), `skip?`, `text?`, `format?` "
            "(`lines` \\| `json`)"
        ),
        result=(
            "`{url, title, lines \\| snapshot: [{ref, role, name, tag, value?, href?, level?, "
            "states?, depth?, source?, shortened?}], truncated, cut?: {rows, interactive, "
            "skip?, rest}, mode, fallback?, text?, note?}`: `lines` (default) is one line per "
            "row, grammar below the catalogue (ADR 0016); a name or value cut at 200 chars ends "
            "in … and says its full length (`name.chars` / `shortened`; `page_text` / "
            "`page_get_state` with the row's ref read it whole); a link row carries its `href` "
            "(lines: a path or `#fragment` when at the page's origin; secret query values "
            "masked); a document with nothing to reference answers "
            "its `text` and a `note`"
        ),
        guard="— (password values never; names masked; link hrefs URL-masked; ignored/hidden "
        "AX nodes left out)",
    ),
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
    description="Find elements by role and/or accessible name, best matches first; answers refs "
    "to act on.",
    arguments=FindArgs,
    result=Found,
    annotations=READ,
    gate=Gate.ORIGIN,
    risk=Risk.MEDIUM,
    frames=FrameOutput.GATED,
    call=RELAY,
    docs=Reference(
        does=(
            "elements by role and/or accessible name, ranked (exact, prefix, substring; visible "
            "first), at most 50 refs"
        ),
        args="`tabId`, `role?`, `name?` (at least one), `exact?`, `limit?` (1–50, default 10)",
        result="`{url, matches: [{ref, role, name, tag, visible}], total, mode}`",
        guard="as `page_snapshot`",
    ),
)


class Box(Model):
    x: float
    y: float
    width: float
    height: float


class ElementState(Targeted):
    model_config = {"extra": "allow"}
    exists: bool = True
    reason: str | None = Field(default=None, description="why the element is not there")
    tag: str | None = None
    box: Box | None = Field(default=None, description="border box, viewport CSS pixels")
    inViewport: bool | None = None  # noqa: N815


PAGE_GET_STATE = ToolSpec(
    name="page_get_state",
    title="Read an element's state",
    description="One element's tag, type, value, checked, disabled, visible, text and box; "
    "exists: false when it is not there.",
    arguments=ElementNamed,
    result=ElementState,
    annotations=READ,
    gate=Gate.ORIGIN,
    risk=Risk.LOW,
    frames=FrameOutput.GATED,
    call=RELAY,
    docs=Reference(
        does=(
            "one element's state, its `box` and `inViewport`; `{exists: false, reason}` when it is "
            "not there; a password's value is never returned"
        ),
        args="`tabId`, element",
        result=(
            "`{exists: true, tag, type, value?, checked?, disabled, visible, text, box: {x, y, "
            "width, height}, inViewport, shortened?}` (value and text whole up to 100,000 "
            "chars; `shortened: {value?\\|text?: {chars}}` past that), or `{exists: false, "
            "reason}` (no match, stale ref)"
        ),
        guard="password value never returned",
    ),
)


class WaitForArgs(TabArgs):
    #: What is waited for: exactly one of them, non-empty (the wire schema's ``oneOf``).
    TARGET: ClassVar[tuple[str, ...]] = ("ref", "selector", "text")

    ref: Ref = None
    selector: Selector = None
    text: Text = None
    state: Annotated[Literal["visible", "absent"], Lineage.INERT] = "visible"
    timeoutMs: Annotated[int, Field(ge=0, le=60_000)] = 10_000  # noqa: N815
    frame: Frame = None

    @model_validator(mode="after")
    def _exactly_one(self) -> WaitForArgs:
        if len([k for k in self.TARGET if getattr(self, k)]) != 1:
            raise ValueError("wait for exactly one of ref, selector or text")
        return self

    def wire(self) -> dict[str, Any]:
        named = {k: v for k in self.TARGET if (v := getattr(self, k))}
        framed = {"frame": self.frame} if self.frame is not None else {}
        wait = {"state": self.state, "timeoutMs": self.timeoutMs}
        return {"tabId": self.tabId, **wait, **named, **framed}


PAGE_WAIT_FOR = ToolSpec(
    name="page_wait_for",
    title="Wait for an element",
    description="Wait until a ref, selector or text is visible or absent (wait_not_met otherwise).",
    arguments=WaitForArgs,
    result=Done,
    annotations=READ,
    gate=Gate.ORIGIN,
    risk=Risk.NONE,
    frames=FrameOutput.GATED,
    call=RELAY,
    docs=Reference(
        does="wait for a ref/selector/text to be visible or absent",
        args="`tabId`, `ref?|selector?|text?`, `state`, `timeoutMs`",
        result="`{matched: true}` (not met in time → error `wait_not_met`)",
    ),
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
    description="Wait until a tab is loaded and its DOM is still for stableMs.",
    arguments=SettleArgs,
    result=Settled,
    annotations=READ,
    gate=Gate.ORIGIN,
    risk=Risk.NONE,
    frames=FrameOutput.GATED,
    call=RELAY,
    docs=Reference(
        does=(
            "wait until the page is quiet (loaded, no DOM change for `stableMs`), bounded by "
            "`timeoutMs`"
        ),
        args="`tabId`, `stableMs?` (500), `timeoutMs?` (10000)",
        result="`{settled, waitedMs, quietMs}`",
    ),
)


#: These tools, in the order they are listed.
TOOLS: tuple[ToolSpec, ...] = (
    PAGE_SNAPSHOT,
    PAGE_FIND,
    PAGE_GET_STATE,
    PAGE_WAIT_FOR,
    PAGE_SETTLE,
)
