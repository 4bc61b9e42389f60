"""The frames family: the tools whose extension half is ``extension/handlers/frames.js``, each with
its arguments, result and declaration side by side. Pure declarations: no I/O."""

from __future__ import annotations

from pydantic import Field

from .arguments import Model, TabArgs
from .vocabulary import READ, RELAY, FrameOutput, Gate, Reference, Risk, ToolSpec


class FrameRow(Model):
    index: int
    frameId: int  # noqa: N815
    parentFrameId: int | None  # noqa: N815
    origin: str
    approved: bool
    url: str | None = Field(description="withheld (null) unless the policy approves the origin")
    name: str | None


class Frames(Model):
    frames: list[FrameRow]
    truncated: bool


PAGE_FRAMES = ToolSpec(
    name="page_frames",
    title="List a tab's frames",
    description="The frames of a tab: frameId (the frame argument of element tools), parent, "
    "origin.",
    arguments=TabArgs,
    result=Frames,
    annotations=READ,
    gate=Gate.ORIGIN,
    risk=Risk.LOW,
    frames=FrameOutput.GATED,
    call=RELAY,
    docs=Reference(
        does=(
            "the frames of a tab (top first): `frameId`, parent, origin; url and name only for "
            "approved origins. Every element tool takes `frame` (a `frameId`): that frame's "
            "origin, and each enclosing frame's, is gated **on its own**, as a navigation to it "
            "would be. That includes trusted input (`page_mouse`, `page_hover`: the point is found "
            "in the frame and placed in the tab's viewport; an element of the enclosing page over "
            "the frame is reported `covered` and never clicked), `page_upload`, and the "
            "accessibility snapshot and `page_find` (the frame's own tree), in same-site and "
            "cross-site (out-of-process) frames alike"
        ),
        gate="origin (each frame's)",
        args="`tabId`",
        result=(
            "`{frames: [{index, frameId, parentFrameId, origin, approved, url (null unless "
            "approved), name (null unless approved; masked)}], truncated}`"
        ),
        guard="top frame's origin gated; nothing runs in an unapproved frame",
    ),
)


#: This family's tools, in the order they are listed.
TOOLS: tuple[ToolSpec, ...] = (PAGE_FRAMES,)
