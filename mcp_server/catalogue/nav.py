"""The nav family: the tools whose extension half is ``extension/handlers/nav.js``, each with
its arguments, result and declaration side by side. Pure declarations: no I/O."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from .arguments import REF_SHAPE, Acting, Frame, TabArgs
from .results import Done, Page
from .vocabulary import ACT, RELAY, FrameOutput, Gate, Lineage, Reference, Risk, ToolSpec

TAB_FOCUS = ToolSpec(
    name="tab_focus",
    title="Bring a tab forward",
    description="Make one of your tabs the active one in its window.",
    arguments=TabArgs,
    result=Done,
    annotations=ACT,
    gate=Gate.OWN_TAB,
    risk=Risk.LOW,
    frames=FrameOutput.NONE,
    call=RELAY,
    docs=Reference(
        does="bring one of your tabs forward",
        args="`tabId`",
        result="`{tab}`",
        guard="no origin gate",
    ),
)


class HistoryArgs(Acting, TabArgs):
    steps: Annotated[
        int, Field(ge=-50, le=50, description="entries to move: negative back, positive forward")
    ] = -1


class HistoryOut(Page):
    steps: int = Field(description="how far it moved (negative: back)")


PAGE_HISTORY = ToolSpec(
    name="page_history",
    title="Go back or forward",
    description="Go back (steps < 0, default -1) or forward in a tab's history. Where it lands "
    "must be approved.",
    arguments=HistoryArgs,
    result=HistoryOut,
    annotations=ACT,
    gate=Gate.ORIGIN,
    risk=Risk.MEDIUM,
    frames=FrameOutput.GATED,
    call=RELAY,
    docs=Reference(
        listed_with="page_navigate",
        args="`tabId`, `steps?` (±1–50, default -1: back)",
        result="`{url, title, steps}`",
        guard=(
            "origin re-checked after; ±1 through Chrome, more in one jump (`history.go`); a "
            "refusal never names the blocked entry's site"
        ),
    ),
)


class ReloadArgs(Acting, TabArgs):
    bypassCache: Annotated[bool, Field(description="reload without the HTTP cache")] = False  # noqa: N815


PAGE_RELOAD = ToolSpec(
    name="page_reload",
    title="Reload",
    description="Reload one of your tabs.",
    arguments=ReloadArgs,
    result=Page,
    annotations=ACT,
    gate=Gate.ORIGIN,
    risk=Risk.MEDIUM,
    frames=FrameOutput.GATED,
    call=RELAY,
    docs=Reference(
        listed_with="page_navigate",
        args="`tabId`, `bypassCache?`",
        result="`{url, title}`",
        guard="origin re-checked after",
    ),
)


class FollowArgs(Acting, TabArgs):
    """page_follow: a link by its ref; the extension resolves its href in the page."""

    ref: Annotated[
        str,
        Field(
            pattern=REF_SHAPE,
            description='the link\'s ref from page_snapshot or page_find, e.g. "@e12": the '
            "address it points to is read in the page and followed in this tab (it never passes "
            "through you)",
        ),
        Lineage.INERT,
    ]
    frame: Frame = None

    def wire(self) -> dict[str, Any]:
        out = self.model_dump(mode="json", exclude={*self.AFTER}, exclude_none=True)
        return {**out, **self.aftermath()}


PAGE_FOLLOW = ToolSpec(
    name="page_follow",
    title="Follow a link",
    description="Follow a link by its ref and wait for the page (the address is read from the "
    "link, never typed). Another site passes page_navigate's gate.",
    arguments=FollowArgs,
    result=Page,
    annotations=ACT,
    gate=Gate.ORIGIN,
    risk=Risk.MEDIUM,
    frames=FrameOutput.GATED,
    call=RELAY,
    docs=Reference(
        does=(
            "follow a link by its `ref` (and `frame`): the address is read from the link in the "
            "page, never typed by the agent; another site passes the same gate as `page_navigate`; "
            "not a link → `wrong_element`"
        ),
        args="`tabId`, `ref` (a link's), `frame?`",
        result="`{url, title}`",
        guard=(
            "the link's href is resolved in the page (never through the model); origin gate on its "
            "target as `page_navigate`; not a link (no href, `javascript:`, another scheme) → "
            "`wrong_element`"
        ),
    ),
)


#: This family's tools, in the order they are listed.
TOOLS: tuple[ToolSpec, ...] = (
    TAB_FOCUS,
    PAGE_HISTORY,
    PAGE_RELOAD,
    PAGE_FOLLOW,
)
