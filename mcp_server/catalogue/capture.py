"""The capture family: the tools whose extension half is ``extension/handlers/capture.js``,
each with its arguments, result and declaration side by side. Pure declarations: no I/O."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from .arguments import Model, TabArgs
from .results import _omitted_unless_set
from .vocabulary import READ, RELAY, FrameOutput, Gate, Lineage, Reference, Risk, ToolSpec

CaptureLimit = Annotated[
    int, Field(ge=1, le=200, description="at most this many entries, the newest (oldest first)")
]


CaptureClear = Annotated[
    bool, Field(description="empty this tab's recorded entries after answering")
]


class ConsoleArgs(TabArgs):
    level: Literal["error", "warning", "all"] = "all"
    levels: Annotated[
        list[Literal["log", "info", "debug"]],
        Field(
            max_length=3,
            description="also these levels (opt-in; by default errors and warnings only)",
        ),
    ] = []
    limit: CaptureLimit = 50
    clear: CaptureClear = False


class ConsoleEntry(Model):
    ts: int = Field(description="when the page logged it (ms since the epoch)")
    level: str = Field(description="error or warning; log, info or debug when asked (levels)")
    text: str = Field(description="masked: card-like numbers, tokens, secret-named values")
    source: str = Field(description="console (console.error/warn/assert), exception (uncaught), "
                        "or browser (Chrome's own message about the page)")  # fmt: skip
    origin: str = Field(description="the origin of the document that logged it (approved)")


class ConsoleOut(Model):
    enabled: bool = Field(description="false while policy consoleCapture is off: nothing recorded")
    entries: list[ConsoleEntry]
    withheld: int = Field(description="entries from origins the policy does not approve (left out)")
    more: int = Field(description="older shown-able entries beyond limit")
    hint: str | None = _omitted_unless_set("what to do while capture is off")


PAGE_CONSOLE = ToolSpec(
    name="page_console",
    title="Read a tab's console errors",
    description="Console errors, warnings and exceptions of a tab (log, info and debug when asked "
    "with levels), when policy enables capture.",
    arguments=ConsoleArgs,
    result=ConsoleOut,
    annotations=READ,
    gate=Gate.ORIGIN,
    risk=Risk.MEDIUM,
    frames=FrameOutput.GATED,
    call=RELAY,
    docs=Reference(
        does=(
            "console errors and warnings and uncaught exceptions of a tab since capture began "
            "(`level`, `limit`, `clear`), **masked** (card numbers, tokens, secret-named values), "
            "only from **approved origins** (the rest counted as `withheld`); recorded only while "
            "policy `consoleCapture` is on (**a widening**: `tabwarden policy set "
            "consoleCapture=true`; turning it off is free and drops what was recorded at once), "
            "otherwise `enabled: false`"
        ),
        args=(
            "`tabId`, `level?` (`error` \\| `warning` \\| `all`), `levels?` (opt-in: `log`, "
            "`info`, `debug`), `limit?` (1–200, default 50), `clear?`"
        ),
        result=(
            "`{enabled, entries: [{ts, level, text (masked), source: "
            "console\\|exception\\|browser, origin}], withheld, more, hint?}` (oldest first; "
            "`enabled: false` and nothing while `consoleCapture` is off)"
        ),
        guard=(
            "recorded only under `consoleCapture` (off drops every buffer when the extension next "
            "sees the policy); entries of unapproved origins withheld (counted)"
        ),
    ),
)


#: The request types page_network lists (Chrome's names, CDP Network.ResourceType).
NetworkType = Literal[
    "Document", "Stylesheet", "Image", "Media", "Font", "Script", "TextTrack", "XHR", "Fetch",
    "Prefetch", "EventSource", "WebSocket", "Manifest", "SignedExchange", "Ping",
    "CSPViolationReport", "Preflight", "FedCM", "Other",
]  # fmt: skip

#: Most requests kept per tab (extension/worker/capture.js NETWORK_RING): the oldest go first.
NETWORK_RING = 500


class NetworkArgs(TabArgs):
    url: Annotated[
        str | None,
        Field(min_length=1, max_length=2048, description="only requests whose URL contains this"),
        Lineage.INERT,
    ] = None
    types: Annotated[
        list[NetworkType],
        Field(max_length=19, description="only requests of these types (default: every type)"),
    ] = []
    failedOnly: Annotated[  # noqa: N815
        bool, Field(description="only failed requests: no response (failed), or status 400 and up")
    ] = False
    sinceId: Annotated[  # noqa: N815
        int | None,
        Field(
            ge=0,
            description="only entries after this id, the oldest first (page on from the last "
            "id answered)",
        ),
    ] = None
    bodies: Annotated[
        bool,
        Field(
            description="also XHR/fetch text response bodies (masked) or why one is missing; "
            "default: request metadata only"
        ),
    ] = False
    limit: CaptureLimit = 20
    clear: CaptureClear = False


class NetworkEntry(Model):
    """One request: never a request or response header, a cookie, an auth value or a request
    body."""

    id: int = Field(description="this tab's entry number, rising (for sinceId)")
    ts: int = Field(description="when the request was sent (ms since the epoch)")
    method: str
    url: str = Field(description="secret-looking query values masked; no fragment, no userinfo")
    status: int = Field(description="HTTP status (0: no response)")
    type: str = Field(description="Document, Script, Stylesheet, Image, Font, XHR, Fetch, "
                      "WebSocket, ... (Chrome's resource type)")  # fmt: skip
    mimeType: str  # noqa: N815
    size: int = Field(description="body bytes received")
    origin: str = Field(description="the origin of the document that made the request")
    durationMs: int | None = _omitted_unless_set(  # noqa: N815
        "ms from sending the request until it finished or failed"
    )
    ttfbMs: int | None = _omitted_unless_set(  # noqa: N815
        "ms from sending the request until its response headers began to arrive"
    )
    failed: str | None = _omitted_unless_set(
        "why the request failed: Chrome's net error (net::ERR_...), canceled, or closed"
    )
    blocked: str | None = _omitted_unless_set(
        "why Chrome blocked it: its blocked reason (csp, mixed-content, ...) or cors:<error>"
    )
    fromCache: bool | None = _omitted_unless_set("true: served from the browser's cache")  # noqa: N815
    body: str | None = _omitted_unless_set(
        "with bodies, XHR/Fetch only: the text body (masked), when kept"
    )
    bodyOmitted: str | None = _omitted_unless_set(  # noqa: N815
        "with bodies, XHR/Fetch only: why there is no body: too_large, budget, binary, origin "
        "(the URL's site is not approved) or unavailable"
    )


class NetworkOut(Model):
    enabled: bool = Field(description="false while policy networkCapture is off: nothing recorded")
    entries: list[NetworkEntry]
    withheld: int = Field(description="requests of documents of unapproved origins (left out)")
    more: int = Field(
        description="matching entries beyond limit: older ones, or with sinceId newer ones"
    )
    dropped: int = Field(
        description=f"entries this tab's buffer dropped, oldest first (it keeps {NETWORK_RING})"
        ", since capture began or the last clear"
    )
    hint: str | None = _omitted_unless_set("what to do while capture is off")


PAGE_NETWORK = ToolSpec(
    name="page_network",
    title="Read a tab's network requests",
    description="Recent requests of a tab of every type, with status, failure and timing (when "
    "policy enables capture); no headers or cookies.",
    arguments=NetworkArgs,
    result=NetworkOut,
    annotations=READ,
    gate=Gate.ORIGIN,
    risk=Risk.MEDIUM,
    frames=FrameOutput.GATED,
    call=RELAY,
    docs=Reference(
        does=(
            "a tab's recent requests of every type: method, URL (masked), status, size, "
            "timing, failure; metadata only unless `bodies` (XHR/fetch text ≤256 KB); **never a "
            "header, cookie or auth value**; filters `url`, `types`, `failedOnly`, `sinceId`; "
            f"last {NETWORK_RING} per tab (`dropped` counted); unapproved documents withheld; "
            "only while policy `networkCapture` is on (**a widening**; off drops all), else "
            "`enabled: false`"
        ),
        args=(
            "`tabId`, `url?` (substring), `types?` (`Document`, `Script`, `Stylesheet`, `Image`, "
            "`Font`, `XHR`, `Fetch`, `WebSocket`, ...), `failedOnly?`, `sinceId?`, `bodies?`, "
            "`limit?` (1–200, default 20), `clear?`"
        ),
        result=(
            "`{enabled, entries: [{id, ts, method, url (masked), status, type, mimeType, size, "
            "origin, durationMs?, ttfbMs?, failed?, blocked?, fromCache?, with `bodies`: body? "
            "(masked) \\| bodyOmitted?}], withheld, more, dropped, hint?}` (never a header or "
            "cookie)"
        ),
        guard=(
            "recorded only under `networkCapture`; documents of unapproved origins withheld; a "
            "body only when asked (`bodies`), only for XHR/fetch, only when its URL's origin is "
            "approved"
        ),
    ),
)


#: This family's tools, in the order they are listed.
TOOLS: tuple[ToolSpec, ...] = (
    PAGE_CONSOLE,
    PAGE_NETWORK,
)
