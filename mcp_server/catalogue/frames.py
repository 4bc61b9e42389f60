"""The frames family: the tools whose extension half is ``extension/handlers/frames.js``, each with
its arguments, result and declaration side by side. Pure declarations: no I/O."""

from __future__ import annotations

from pydantic import Field

from .arguments import Model, TabArgs
from .vocabulary import READ, RELAY, FrameOutput, Gate, Risk, ToolSpec


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
    description="The frames of one of your tabs (top first): frameId (pass it as frame to "
    "any element tool), parent, origin, and url and name only for origins the policy "
    "approves. Acting in a frame gates its origin on its own.",
    arguments=TabArgs,
    result=Frames,
    annotations=READ,
    gate=Gate.ORIGIN,
    risk=Risk.LOW,
    frames=FrameOutput.GATED,
    call=RELAY,
)


#: This family's tools, in the order they are listed.
TOOLS: tuple[ToolSpec, ...] = (PAGE_FRAMES,)
