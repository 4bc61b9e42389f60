"""The files family: the tools whose extension half is ``extension/handlers/files.js``, each with
its arguments, result and declaration side by side. Pure declarations: no I/O."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from .arguments import Model, TabArgs
from .results import _omitted_unless_set
from .vocabulary import (
    ACT,
    RELAY,
    BadArguments,
    FrameOutput,
    Gate,
    Lineage,
    Reference,
    Relay,
    Risk,
    Save,
    ToolSpec,
)


class PdfArgs(TabArgs):
    landscape: bool = False
    printBackground: Annotated[  # noqa: N815
        bool, Field(description="print background colours and images")
    ] = False
    scale: Annotated[float, Field(ge=0.1, le=2, description="0.1-2 (default 1)")] = 1
    pageRanges: Annotated[  # noqa: N815
        str | None,
        Field(
            max_length=200,
            pattern=r"^[0-9][0-9 ,\-]*$",
            description='pages to print, e.g. "1-3, 5" (default all)',
        ),
        Lineage.INERT,
    ] = None
    name: Annotated[
        str | None,
        Field(
            min_length=1,
            max_length=200,
            description="file name in the download sandbox (sanitised; never overwrites)",
        ),
        Lineage.INERT,
    ] = None


class Saved(Model):
    path: str = Field(description="the file in the download sandbox")
    size: int = Field(description="its size in bytes")


PAGE_PDF = ToolSpec(
    name="page_pdf",
    title="Save a tab as PDF",
    description="Print a tab to a PDF in the download sandbox; answers its path.",
    arguments=PdfArgs,
    result=Saved,
    annotations=ACT,
    gate=Gate.ORIGIN,
    risk=Risk.MEDIUM,
    frames=FrameOutput.RENDERS,
    call=Relay(save=Save.BYTES),
    docs=Reference(
        does=(
            "print a tab to a PDF in the **download sandbox** (`TABWARDEN_DOWNLOAD_DIR`, default "
            "`<config>/downloads`; names sanitised, never overwriting); answers `{path, size}`, "
            "never the PDF; `landscape`, `printBackground`, `scale` 0.1–2, `pageRanges`"
        ),
        args="`tabId`, `landscape?`, `printBackground?`, `scale?` (0.1–2), `pageRanges?`, `name?`",
        result=(
            "extension → server `{data: base64 PDF, name}`; the MCP server writes it into the "
            "download sandbox and answers `{path, size}` (the bytes never reach the client)"
        ),
        guard=(
            "CDP `Page.printToPDF` (debugger); over `MAX_RETURNED_BASE64` → `bad_request` (fewer "
            "pages); chunked over hop 3 like any large reply; Declared `RENDERS` (ADR 0007): "
            "before and after the capture every frame's origin must pass the origin gate (an "
            "unapproved one is asked about; refused → `origin_not_approved` naming it) and no "
            "frame's text may show a full card number (→ `policy_denied`); nothing rendered leaves "
            "the extension otherwise"
        ),
    ),
)


class WaitDownloadArgs(TabArgs):
    filename: Annotated[
        str | None,
        Field(min_length=1, max_length=500, description="substring of the file name"),
        Lineage.INERT,
    ] = None
    url: Annotated[
        str | None,
        Field(min_length=1, max_length=2000, description="substring of its URL"),
        Lineage.INERT,
    ] = None
    timeoutMs: Annotated[  # noqa: N815
        int, Field(ge=100, le=40_000, description="how long to wait for it to finish")
    ] = 30_000


class DownloadOut(Model):
    state: Literal["started", "complete", "failed"] = Field(
        description="started: still downloading when timeoutMs ran out"
    )
    filename: str = Field(description="the name the page suggested (as Chrome sanitised it)")
    url: str | None = Field(description="its URL; null unless its site is approved")
    receivedBytes: int  # noqa: N815
    totalBytes: int | None = None  # noqa: N815
    path: str | None = _omitted_unless_set("complete: the copy in the download sandbox")
    size: int | None = _omitted_unless_set("complete: its size in bytes")
    reason: str | None = _omitted_unless_set("failed: why (Chrome's interrupt reason)")


PAGE_WAIT_DOWNLOAD = ToolSpec(
    name="page_wait_download",
    title="Wait for a download",
    description="Wait for a tab's download to finish; answers its path in the download sandbox.",
    arguments=WaitDownloadArgs,
    result=DownloadOut,
    annotations=ACT,
    gate=Gate.ORIGIN,
    risk=Risk.MEDIUM,
    frames=FrameOutput.SAVES,
    call=Relay(save=Save.COPY),
    docs=Reference(
        does=(
            "wait for a download **your tab** started (file name / URL substring, `timeoutMs`): "
            "`started`, `complete` (copied into the download sandbox: `path`, `size`) or `failed` "
            "(`reason`); observes only — Chrome's file and download history are left alone"
        ),
        args="`tabId`, `filename?`, `url?` (substrings), `timeoutMs?` (100–40,000)",
        result=(
            'extension → server `{state: "started"|"complete"|"failed", filename, url (null '
            "unless approved), receivedBytes, totalBytes, reason? (failed), file? {source, size} "
            "(complete: where Chrome saved it)}`; the server copies `file` into the download "
            "sandbox and answers `path`, `size` in its place"
        ),
        guard=(
            "the tab's own debugger events (`Page.downloadWillBegin` / `Page.downloadProgress`, "
            "worker/downloads.js) say which tab started it; `chrome.downloads.search` (permission "
            "`downloads`, read only) where Chrome saved it and why it failed; a download that "
            "began before the call counts, each finished one is answered once; none began → "
            "`timeout`. Declared `SAVES` (ADR 0007): a download is attributed to the frame "
            "`Page.downloadWillBegin` names, by the origin that frame's last `Page.frameNavigated` "
            "stated; one from a frame of an unapproved site (or an unknown frame) is never "
            "matched, never ends a wait and is never copied; `url` matches only a URL the answer "
            "shows, `filename` only the masked name"
        ),
    ),
)


class ViewportArgs(TabArgs):
    preset: Annotated[
        Literal["mobile", "tablet", "desktop"] | None,
        Field(description="mobile 390x844 @3, tablet 820x1180 @2 (both touch), desktop 1280x800"),
    ] = None
    width: Annotated[int | None, Field(ge=100, le=4096, description="CSS pixels")] = None
    height: Annotated[int | None, Field(ge=100, le=4096, description="CSS pixels")] = None
    deviceScaleFactor: Annotated[  # noqa: N815
        float | None, Field(gt=0, le=3, description="device pixel ratio, at most 3")
    ] = None
    mobile: Annotated[
        bool | None,
        Field(
            description="mobile viewport rules (a page without <meta name=viewport> is 980 wide)"
        ),
    ] = None
    touch: Annotated[bool | None, Field(description="touch input (coarse pointer)")] = None
    reset: Annotated[bool, Field(description="end the emulation (nothing else may be given)")] = (
        False
    )

    def wire(self) -> dict[str, Any]:
        wired = self.model_dump(mode="json", exclude_none=True, exclude={"reset"})
        if self.reset:
            if len(wired) > 1:
                raise BadArguments("reset takes no other setting")
            return {"tabId": self.tabId, "reset": True}
        return wired  # only tabId: read the current viewport, nothing changed


class ViewportSettings(Model):
    width: int
    height: int
    deviceScaleFactor: float  # noqa: N815
    mobile: bool
    touch: bool


class PageView(Model):
    """What the page itself reports."""

    innerWidth: int  # noqa: N815
    innerHeight: int  # noqa: N815
    devicePixelRatio: float  # noqa: N815
    coarsePointer: bool = Field(description="matchMedia('(pointer: coarse)')")  # noqa: N815
    maxTouchPoints: int  # noqa: N815


class ViewportOut(Model):
    emulating: ViewportSettings | None = Field(
        description="the emulation now on (as page_viewport set it in this session); null: none, "
        "the window's own size"
    )
    page: PageView


PAGE_VIEWPORT = ToolSpec(
    name="page_viewport",
    title="Emulate a device",
    description="Emulate a screen size (preset or width/height) on a tab; reset ends it; none "
    "given reads the current one.",
    arguments=ViewportArgs,
    result=ViewportOut,
    annotations=ACT,
    gate=Gate.ORIGIN,
    risk=Risk.LOW,
    frames=FrameOutput.GATED,
    call=RELAY,
    docs=Reference(
        does=(
            "a screen: `preset`, or `width`/`height`, `deviceScaleFactor`, `mobile`, `touch`; "
            "`reset`; none: read; answers what the page sees"
        ),
        args=(
            '`tabId`; `preset?: "mobile"|"tablet"|"desktop"`, `width?`, `height?`, '
            "`deviceScaleFactor?` (≤ 3), `mobile?`, `touch?`; or `reset: true`; or nothing: the "
            "current viewport (the page's `innerWidth`, `innerHeight`, `devicePixelRatio`; "
            "`emulating`'s `mobile`), nothing changed"
        ),
        result=(
            "`{emulating: {width, height, deviceScaleFactor, mobile, touch} \\| null, page: "
            "{innerWidth, innerHeight, devicePixelRatio, coarsePointer, maxTouchPoints}}`"
        ),
        guard=(
            "CDP `Emulation.setDeviceMetricsOverride`, `setTouchEmulationEnabled`, "
            "`setEmitTouchEventsForMouse` (debugger); the read-back runs in the page's isolated "
            "world"
        ),
    ),
)


#: This family's tools, in the order they are listed.
TOOLS: tuple[ToolSpec, ...] = (
    PAGE_PDF,
    PAGE_WAIT_DOWNLOAD,
    PAGE_VIEWPORT,
)
