"""The tools answered in this process, never relayed: ``bridge_status`` and ``browser_list``."""

from __future__ import annotations

from pydantic import Field

from .arguments import Model, NoArgs
from .vocabulary import LOCAL_READ, FrameOutput, Gate, Local, Reference, Risk, ToolSpec


class BridgeStatusOut(Model):
    hostReachable: bool  # noqa: N815
    extensionConnected: bool  # noqa: N815
    extensionVersion: str | None = Field(  # noqa: N815
        default=None,
        description="the connected extension's version (its manifest's), as its hello said",
    )
    protocolVersion: int | None  # noqa: N815
    browser: str | None
    socket: str | None
    lastHandshakeError: str | None  # noqa: N815
    # How the extension was last seen (the host's last-seen record, tabwarden/bridge/away.py):
    # wording.
    connectedSince: float | None = None  # noqa: N815 — Unix seconds
    lastDisconnectAt: float | None = None  # noqa: N815
    lastDisconnectReason: str | None = None  # noqa: N815
    extensionAway: bool = False  # noqa: N815 — reconnecting by itself
    expectedBackWithinS: int | None = None  # noqa: N815
    hostProblems: list[HostProblem] = Field(  # noqa: N815
        default_factory=list,
        description="while no host answers: each running browser that cannot start the host "
        "(not registered for it, or its registration is broken), with the command that fixes it",
    )
    # This session's own calls (tools.CallLog): names and outcomes, never arguments.
    killed: bool = Field(
        default=False, description="the kill switch is engaged: every other tool is refused"
    )
    recent: list[RecentCall] = Field(
        default_factory=list, description="this session's last calls, newest last"
    )
    lastError: LastError | None = Field(  # noqa: N815
        default=None, description="this session's last failed call"
    )


class HostProblem(Model):
    code: str = Field(description="host_not_installed or host_cannot_start")
    browser: str = Field(description="the running browser's install label")
    cause: str
    command: str = Field(description="the exact `tabwarden install` that fixes it")


class RecentCall(Model):
    tool: str
    ok: bool
    ms: int = Field(description="how long the call took, in milliseconds")
    code: str | None = Field(description="the error code when it failed")


class LastError(Model):
    tool: str
    code: str
    at: float = Field(description="when, in Unix seconds")


BRIDGE_STATUS = ToolSpec(
    name="bridge_status",
    title="Bridge status",
    description="Is the host reachable and the extension connected (and its version); if not, "
    "why and the command that fixes it; this session's recent calls and last error. Answers "
    "even while killed.",
    arguments=NoArgs,
    result=BridgeStatusOut,
    annotations=LOCAL_READ,
    gate=Gate.LOCAL,
    risk=Risk.NONE,
    frames=FrameOutput.NONE,
    call=Local.BRIDGE_STATUS,
    docs=Reference(
        does=(
            "host reachable, extension connected (since when), protocol, last handshake error, "
            "last disconnect and reason, away and expected back within N s; with no host, "
            "`hostProblems` (the running browser and its `tabwarden install` command); this "
            "session's last 20 "
            "calls (`{tool, ok, ms, code}`, never arguments) and `lastError`; answers **while "
            "killed**, saying so (`killed: true`; every other tool is refused)"
        ),
    ),
)


class BrowserEntry(Model):
    label: str
    current: bool


class BrowserList(Model):
    browsers: list[BrowserEntry]


BROWSER_LIST = ToolSpec(
    name="browser_list",
    title="List connected browsers",
    description="The browsers with a running tabwarden host, and which one this session uses.",
    arguments=NoArgs,
    result=BrowserList,
    annotations=LOCAL_READ,
    gate=Gate.LOCAL,
    risk=Risk.NONE,
    frames=FrameOutput.NONE,
    call=Local.LIVE_BROWSERS,
    docs=Reference(
        does="browsers with a running host, and which one this session uses",
    ),
)


#: This family's tools, in the order they are listed.
TOOLS: tuple[ToolSpec, ...] = (
    BRIDGE_STATUS,
    BROWSER_LIST,
)
