"""The tabs family: the tools whose extension half is ``extension/handlers/tabs.js``, each with
its arguments, result and declaration side by side. Pure declarations: no I/O."""

from __future__ import annotations

from pydantic import Field

from .arguments import Arguments, Model, NoArgs, TabArgs, Url
from .vocabulary import (
    ACT,
    CLOSE,
    LOCAL_READ,
    RELAY,
    Asks,
    FrameOutput,
    Gate,
    Reference,
    Risk,
    ToolSpec,
)


class Tab(Model):
    id: int = Field(description="Chrome's tab id")
    url: str
    title: str
    active: bool
    windowId: int  # noqa: N815 — wire name


class TabList(Model):
    tabs: list[Tab]


TAB_LIST = ToolSpec(
    name="tab_list",
    title="List your tabs",
    description="List this session's tabs: id, URL, title, active.",
    arguments=NoArgs,
    result=TabList,
    annotations=LOCAL_READ,
    gate=Gate.OWN_TAB,
    risk=Risk.LOW,
    frames=FrameOutput.NONE,
    call=RELAY,
    docs=Reference(
        does="the tabs **this session** opened",
        args="—",
        result="`{tabs: [{id, url, title, active, windowId}]}`",
        guard="only the session's own tabs",
    ),
)


class OpenArgs(Arguments):
    url: Url


class TabOut(Model):
    tab: Tab


TAB_OPEN = ToolSpec(
    name="tab_open",
    title="Open a tab",
    description="Open url in a new tab of this session and wait for it to load. An unapproved "
    "site asks the person first (origin_not_approved if denied).",
    arguments=OpenArgs,
    result=TabOut,
    annotations=ACT,
    gate=Gate.ORIGIN,
    risk=Risk.MEDIUM,
    frames=FrameOutput.GATED,
    call=RELAY,
    docs=Reference(
        does=(
            "open a URL in the session's own window, wait for load; a URL carrying what another "
            "site's page said **asks you, naming that page** (policy `provenance`)"
        ),
        gate="origin (the confirm window asks for a new site)",
        risk="medium: visits a site as you",
        args="`url`",
        result="`{tab}`",
        guard="origin gate on `url` (confirm window for a new site)",
    ),
)


class Closed(Model):
    closed: int = Field(description="how many tabs were closed")


TAB_CLOSE = ToolSpec(
    name="tab_close",
    title="Close a tab",
    description="Close one of this session's tabs.",
    arguments=TabArgs,
    result=Closed,
    annotations=CLOSE,
    gate=Gate.CONFIRM,
    asks=Asks.EVERY_CALL,
    risk=Risk.LOW,
    frames=FrameOutput.NONE,
    call=RELAY,
    docs=Reference(
        does="close one of your tabs",
        gate="**confirm** (in the default policy)",
        args="`tabId`",
        result="`{closed}`",
        guard="confirm when policy `confirm` lists `tab_close`; no origin gate",
    ),
)


TAB_CLOSE_ALL = ToolSpec(
    name="tab_close_all",
    title="Close all your tabs",
    description="Close every tab this session opened.",
    arguments=NoArgs,
    result=Closed,
    annotations=CLOSE,
    gate=Gate.OWN_TAB,
    risk=Risk.LOW,
    frames=FrameOutput.NONE,
    call=RELAY,
    docs=Reference(
        does="close every tab this session opened",
        args="—",
        result="`{closed}`",
        guard="the session's own tabs only",
    ),
)


#: This family's tools, in the order they are listed.
TOOLS: tuple[ToolSpec, ...] = (
    TAB_LIST,
    TAB_OPEN,
    TAB_CLOSE,
    TAB_CLOSE_ALL,
)
