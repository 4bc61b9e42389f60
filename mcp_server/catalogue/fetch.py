"""The fetch family: the tools whose extension half is ``extension/handlers/fetch.js``, each with
its arguments, result and declaration side by side. Pure declarations: no I/O."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from .arguments import Model, TabArgs
from .results import _omitted_unless_set
from .vocabulary import RISKY, Asks, FrameOutput, Gate, Lineage, Reference, Relay, Risk, ToolSpec

#: The request headers page_fetch may set (the extension refuses any other; never Cookie,
#: Authorization or anything the browser computes).
FETCH_HEADERS: tuple[str, ...] = (
    "accept",
    "accept-language",
    "cache-control",
    "content-type",
    "if-match",
    "if-modified-since",
    "if-none-match",
    "x-requested-with",
)

#: One header's value: one line (no CR, LF or NUL) of at most 1000 characters. Which names may be
#: set (case-insensitively, each once) is the extension's check.
HeaderValue = Annotated[str, Field(max_length=1000, pattern=r"^[^\r\n\x00]*$")]

#: Most bytes of a text body returned (``bodyTruncated`` beyond); what ``saveAs`` may write is
#: the extension's hard cap (``handlers/fetch.js`` ``MAX_SAVE_BYTES``: 10 MiB, refused above).
MAX_FETCH_TEXT = 1_000_000


class FetchArgs(TabArgs):
    url: Annotated[
        str,
        Field(
            min_length=1,
            max_length=8192,
            description="an absolute http(s) URL on the tab's site or another approved site",
        ),
        Lineage.REQUEST_TARGET,
    ]
    method: Literal["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"] = "GET"
    body: Annotated[
        str | None,
        Field(max_length=1_000_000, description="a text body (not with GET or HEAD)"),
        Lineage.REQUEST_BODY,
    ] = None
    headers: Annotated[
        dict[str, HeaderValue] | None,
        Field(description="request headers, only: " + ", ".join(FETCH_HEADERS)),
        Lineage.REQUEST_BODY,
    ] = None
    maxBytes: Annotated[  # noqa: N815
        int,
        Field(ge=1, le=MAX_FETCH_TEXT, description="return at most this many bytes of the body"),
    ] = 100_000
    saveAs: Annotated[  # noqa: N815
        str | None,
        Field(
            min_length=1,
            max_length=255,
            # Letters, digits, ". _ -" and spaces, never two dots running (every dot but a last
            # one is followed by another character).
            pattern=r"^[A-Za-z0-9](?:[A-Za-z0-9_ -]|\.[A-Za-z0-9_ -])*\.?$",
            description="write the body (up to 10 MiB) into the download sandbox under this file "
            "name instead of returning it",
        ),
        Lineage.INERT,
    ] = None


class Fetched(Model):
    url: str = Field(description="the URL requested")
    method: str
    delivery: Literal["answered", "sent_unreadable", "unknown"] = Field(
        default="answered",
        description="answered: the page read the answer below; sent_unreadable: the server "
        "received the request and answered, but this page may not read the answer (CORS), so "
        "status and body are empty; unknown: it is not known whether it reached the server. "
        "A request Chrome never sent is the error fetch_failed instead",
    )
    hint: str | None = _omitted_unless_set(
        "unless answered: what to do before repeating the request (never repeat a POST, PUT, "
        "PATCH or DELETE that may have reached the server without checking)"
    )
    status: int = Field(description="the HTTP status; 0 for a redirect (never followed)")
    statusText: str  # noqa: N815
    ok: bool
    redirected: bool = Field(description="the server answered with a redirect, not followed")
    contentType: str | None = Field(description="the response's Content-Type")  # noqa: N815
    bytes: int = Field(description="body bytes read (all of them unless bodyTruncated)")
    bodyTruncated: bool = Field(description="the body was longer than maxBytes")  # noqa: N815
    body: str | None = _omitted_unless_set(
        "the body as text, card-like numbers masked (left out with saveAs and for HEAD)"
    )
    savedTo: str | None = _omitted_unless_set(  # noqa: N815
        "with saveAs: the file in the download sandbox the body was written to"
    )


PAGE_FETCH = ToolSpec(
    name="page_fetch",
    title="Send a request from a page",
    description="fetch() from a tab with its cookies to an approved site. Off unless policy "
    "enables it; the person confirms every call. Redirects are not followed.",
    arguments=FetchArgs,
    result=Fetched,
    annotations=RISKY,
    gate=Gate.OFF_BY_DEFAULT,
    asks=Asks.EVERY_CALL,
    risk=Risk.HIGH,
    frames=FrameOutput.GATED,
    call=Relay(save_file="saveAs"),
    docs=Reference(
        does=(
            "send one HTTP request (GET, POST, PUT, PATCH, DELETE, HEAD) from one of your tabs "
            "**with the page's cookies**, to that site or another approved one; a text body and a "
            "few safe headers (never Cookie or Authorization); the answer's text masked and capped "
            "(`bodyTruncated`), redirects never followed; `saveAs` writes the body into the "
            "download sandbox (`<config>/downloads`) instead of returning it"
        ),
        gate=(
            "**off-by-default** (policy `pageFetch`: `tabwarden policy set pageFetch=true`); then "
            "**confirmed every call, showing the method and URL** (in the window: "
            "`presenceConfirm`'s tap covers `page_eval` and `page_upload` only)"
        ),
        args=(
            "`tabId`, `url`, `method?` (GET\\|POST\\|PUT\\|PATCH\\|DELETE\\|HEAD), `body?` (text; "
            "not with GET/HEAD), `headers?` (only accept, accept-language, cache-control, "
            "content-type, if-match, if-modified-since, if-none-match, x-requested-with), "
            "`maxBytes?` (1–1,000,000, default 100,000), `saveAs?` (a plain file name)"
        ),
        result=(
            "`{url, method, delivery, status, statusText, ok, redirected, contentType, bytes, "
            "bodyTruncated, body? (masked), hint?}`; with `saveAs` the extension answers base64 "
            "`data` (≤ 10 MiB, else `message_too_large`) which the MCP server writes into the "
            "download sandbox and answers `savedTo` instead"
        ),
        guard=(
            "off unless `pageFetch` (else `fetch_off`); the target must be the tab's origin or "
            "another approved one; confirm **every** call showing method and URL; runs in the "
            'isolated world with the page\'s credentials, `redirect: "manual"` (a redirect is '
            "reported, never followed); when fetch() rejects, the tab's CDP Network events decide "
            "(`extension/worker/fetch-delivery.js`): answered but unreadable (CORS) → `delivery: "
            '"sent_unreadable"`, no word either way → `delivery: "unknown"` (both results, '
            "empty status and body, a `hint` not to repeat a non-idempotent method); only a "
            "request Chrome never sent (connection refused, name not resolved, a refused "
            "preflight, blocked) → `fetch_failed`"
        ),
    ),
)


#: This family's tools, in the order they are listed.
TOOLS: tuple[ToolSpec, ...] = (PAGE_FETCH,)
