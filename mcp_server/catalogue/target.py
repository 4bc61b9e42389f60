"""What an element action acted on: ``target``, declared once. Every tool whose arguments are
``ElementArgs`` answers with a result model built on ``Targeted`` (tests/mcp_server/
test_element_pick.py checks it over the whole catalogue); the extension fills it in one place
(handlers/interact.js withAftermath, from the element page/locate.js resolved). Pure: no I/O."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from .arguments import Model
from .results import Done, _omitted_unless_set


class Target(Model):
    """The element, as page_snapshot names it."""

    ref: str | None = Field(
        default=None,
        exclude_if=lambda v: v is None,
        description="its ref (usable in your next call, as a page_snapshot ref)",
    )
    role: str = Field(description="its role, as page_snapshot gives it")
    name: str = Field(description="its accessible name, as page_snapshot gives it")
    frame: int | None = Field(
        default=None,
        exclude_if=lambda v: v is None,
        description="the frameId it is in (left out: the top frame)",
    )


def _target() -> Any:
    return _omitted_unless_set(
        "the element acted on (ref, role, name, frame): left out when no element was named"
    )


class Targeted(Model):
    """A result that names the element the action acted on."""

    target: Target | None = _target()


class Waited(Model):
    """An element action's result: how long it waited for its element to be actionable
    (filled in one place too: handlers/interact.js withAftermath, from handlers/ready.js)."""

    waitedMs: int | None = _omitted_unless_set(  # noqa: N815
        "how long the action waited for its element to be actionable (0: it was at once); "
        "left out when no element was named"
    )


class ElementDone(Targeted, Waited, Done):
    """``Done`` of an element action: what it reports, the element it acted on, and how long
    it waited for it."""
