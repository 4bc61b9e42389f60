"""The result models several families answer with (an action's ``observation``, a page's text and
snapshot, ``Done``): their fields are the tools' output schemas. Pure: no I/O."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from .arguments import Model


def _omitted_unless_set(description: str) -> Any:
    """An optional result field left out of the result when unset (None)."""
    return Field(default=None, exclude_if=lambda v: v is None, description=description)


def _observation() -> Any:
    """An action result's ``observation`` (Observation below): left out unless observe was
    given, so a result without it reads as before."""
    return _omitted_unless_set("what observe asked for, read after the action (and its waitFor)")


def _blocked() -> Any:
    return _omitted_unless_set(
        "the unapproved origin the tab tried to leave for during the action: the request was "
        "stopped before it was sent, and the tab stayed on its page"
    )


class PageText(Model):
    text: str
    nextOffset: int | None = Field(  # noqa: N815
        description="pass as offset to read on; null at the end"
    )
    totalChars: int  # noqa: N815
    url: str
    title: str


class Shortened(Model):
    """A field the answer shortened (ending in "…"): its full length, and the tool that reads it
    whole (called with the row's ref)."""

    chars: int = Field(description="the full value's length in characters")
    readWith: Literal["page_text", "page_get_state"] = Field(  # noqa: N815
        description="the tool that reads the whole value"
    )


class SnapshotItem(Model):
    ref: str
    role: str
    name: str
    tag: str
    value: str | None = None
    href: str | None = _omitted_unless_set(
        "a link's resolved absolute address (a.href); secret-looking query values masked"
    )
    shortened: dict[Literal["name", "value", "text"], Shortened] | None = _omitted_unless_set(
        "the fields shown shortened (ending in …), each with its full length and the tool that "
        "reads it whole"
    )
    level: int | None = Field(default=None, description="a heading's level (aria-level)")
    states: dict[str, bool | str] | None = Field(
        default=None,
        description="checked / pressed (true, false or mixed), expanded, selected, disabled, "
        "required, focused, readonly, invalid, … (flags only when set)",
    )
    depth: int | None = Field(default=None, description="listed ancestors (a11y rows)")
    source: str | None = Field(default=None, description='"dom": merged in from the DOM walk')


class Cut(Model):
    """What a snapshot over its limit left out (interactive elements are listed first)."""

    rows: int = Field(description="rows left out")
    interactive: int = Field(description="of them, interactive elements")
    skip: int | None = _omitted_unless_set(
        "when interactive elements were left out: call again with this skip to list from the "
        "first one left out"
    )
    rest: str = Field(description="how to list the rest")


class Snapshot(Model):
    """A snapshot's answer (page_snapshot's, an observation's): its rows as lines (the default)
    or as objects (format json)."""

    url: str
    title: str
    snapshot: list[SnapshotItem] | None = _omitted_unless_set("format json: one object per row")
    lines: str | None = _omitted_unless_set(
        "format lines: one line per row (docs/protocol.md, page_snapshot's line form)"
    )
    cut: Cut | None = _omitted_unless_set(
        "what the limit left out, how much, and how to list the rest (never silent)"
    )
    truncated: bool
    mode: Literal["a11y", "dom", "a11y+dom"] | None = Field(
        default=None, description="where the rows came from"
    )
    fallback: str | None = Field(
        default=None, description="why mode auto answered from the DOM walk"
    )
    text: str | None = _omitted_unless_set(
        "the document's text, when it has nothing to reference (no rows, or headings only): a "
        "text-only page or frame is read, never answered with a silent empty list"
    )
    note: str | None = _omitted_unless_set("why `text` is given instead of rows")
    shortened: dict[Literal["text"], Shortened] | None = _omitted_unless_set(
        "`text` shortened (ending in …): its full length and the tool that reads it all"
    )


# Observation comes before the models whose fields name it: the families subclass them (Page,
# Done) in their own modules, where a name still unresolved here would not be found.
class Observation(Model):
    """What the tab showed after the action, or why nothing was read."""

    skipped: str | None = _omitted_unless_set(
        "why nothing was read (e.g. the tab is not on an approved site)"
    )
    snapshot: Snapshot | None = _omitted_unless_set("as page_snapshot answers")
    text: PageText | None = _omitted_unless_set("as page_text answers (its first 20,000 chars)")


class Done(Model):
    """Whatever the action reports (e.g. ``clicked``, ``navigated``, ``url``)."""

    model_config = {"extra": "allow"}
    observation: Observation | None = _observation()
    blocked: str | None = _blocked()


class NewTab(Model):
    id: int = Field(description="the tab's id: it joined your session")
    url: str


def _new_tab() -> Any:
    return _omitted_unless_set("a tab the action opened (target=_blank, window.open)")


class Page(Model):
    url: str
    title: str
    observation: Observation | None = _observation()
    blocked: str | None = _blocked()
