"""page_snapshot's line form in real Chromium through the real chain (ADR 0016): every
field an action needs (ref, role, name, states, href, value, level) read back out of the lines
equals the JSON form's for the same document; a page with more rows than maxNodes lists every
interactive element before any structure, or says exactly how many it left out and how to list
them (skip), and paging with skip lists them; a link whose href holds credentials and secrets
comes back masked in the lines, in the text block and in structured content alike; text: true
adds the page's text runs. Also prints the bytes of both forms (the notes quote them)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from mcp import Client

from tabwarden.mcp_server.catalogue.interact import lines
from tests.browser.harness import Request, ok, served_pages

pytestmark = pytest.mark.browser

PASSWORD = "hunter2-pw"
CODE = "oauthcode-5e4d3c2b1a"
TOKEN_LIKE = "a1B2c3D4e5F6g7H8i9J0k1L2"
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJlMTIz"


def _controls(port: int) -> str:
    leaky = (
        f"http://alice:{PASSWORD}@127.0.0.1:{port}/cb?code={CODE}&amp;u={TOKEN_LIKE}"
        f"&amp;next=%2Fhome#access_token={JWT}"
    )
    return (
        '<!doctype html><html><head><title>Controls "quoted"</title></head><body>'
        "<h1>Settings</h1><nav><a href='/home?x=1'>Home</a> <a href='docs/a b'>Doc \"A\"</a>"
        f"<a href='{leaky}'>Account</a></nav>"
        "<h2>Form</h2><label><input type=checkbox checked> Remember me</label>"
        "<label><input type=checkbox> Newsletter</label>"
        "<label>Email <input type=email value='me@example.test'></label>"
        "<button disabled>Locked</button><button aria-pressed=true>Bold</button>"
        "<details><summary>More</summary><p>hidden</p></details>"
        "<select aria-label=Size><option>S</option><option selected>M</option></select>"
        "<p>Plain words of the page, not a control.</p></body></html>"
    )


def _many() -> str:
    headings = "".join(f"<h3>Section {i}</h3>" for i in range(30))
    buttons = "".join(f"<button>Act {i}</button>" for i in range(20))
    return f"<!doctype html><title>many</title><body>{headings}{buttons}</body>"


def _docs() -> str:
    """A documentation-like page: a nested table of contents, sections with text and links."""
    toc = "".join(
        f"<li><a href='/lib/m{i}.html'>{i}. Module {i}</a><ul>"
        + "".join(f"<li><a href='/lib/m{i}.html#s{j}'>{i}.{j} Part {j}</a></li>" for j in range(4))
        + "</ul></li>"
        for i in range(30)
    )
    body = "".join(
        f"<h2>Section {i}</h2><p>Words of section {i}, see <a href='/ref/{i}?v=3'>ref {i}</a>"
        f" and <code>x{i}</code>."
        f"</p><button aria-expanded=false>Show {i}</button>"
        for i in range(20)
    )
    search = "<form role=search><input type=search aria-label=Search><button>Go</button></form>"
    return f"<!doctype html><title>docs</title><body>{search}<nav><ul>{toc}</ul></nav>{body}</body>"


def _page(request: Request) -> str:
    if request.path == "/many":
        return _many()
    if request.path == "/docs":
        return _docs()
    return _controls(request.port or 80)


@pytest.fixture(scope="module")
def port() -> Iterator[int]:
    with served_pages(hook=_page) as served:
        yield served.port


@pytest.fixture(scope="module")
def origins(port: int) -> list[str]:
    return [f"http://127.0.0.1:{port}"]


async def _both(agent: Any, args: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The line form's text block and its structured content."""
    result = await agent.call_tool("page_snapshot", args)
    assert not result.is_error, result.content
    return result.content[0].text, result.structured_content


def _kept(row: Mapping[str, Any]) -> dict[str, Any]:
    """What an action needs of a JSON row, as the line form keeps it."""
    out = {
        k: row[k] for k in ("ref", "role", "name", "href", "level") if row.get(k) not in (None, "")
    }
    states = {k: v for k, v in (row.get("states") or {}).items() if v is not False}
    if states:
        out["states"] = states
    if row.get("value"):
        out["value"] = row["value"]
    return out


@pytest.mark.parametrize("mode", ["auto", "dom"])
async def test_every_field_an_action_needs_reads_back_out_of_the_lines(
    agent: Client, port: int, mode: str
) -> None:
    a = f"http://127.0.0.1:{port}"
    tab = (await ok(agent, "tab_open", {"url": f"{a}/"}))["tab"]["id"]
    as_json = await ok(agent, "page_snapshot", {"tabId": tab, "mode": mode, "format": "json"})
    text, data = await _both(agent, {"tabId": tab, "mode": mode})

    assert "snapshot" not in data and data["mode"] == as_json["mode"]
    head, listed = text.split("\nsnapshot:\n")
    assert listed == data["lines"]
    assert head.splitlines()[:2] == [f"url: {a}/", 'title: "Controls \\"quoted\\""']
    decoded = lines.decode(data["lines"], data["url"])
    got = [{k: v for k, v in r.items() if k not in ("depth", "source")} for r in decoded]
    # Every row the lines show (lines.fold: repeated names and bare wrappers left out), each
    # with its fields whole, same-origin hrefs resolved back against the answer's url.
    assert got == [_kept(r) for r in lines.fold(as_json["snapshot"])]
    # The controls the page has, as an agent reads them.
    by_name = {r.get("name"): r for r in decoded}
    assert by_name["Home"]["href"] == f"{a}/home?x=1"
    assert by_name['Doc "A"']["href"] == f"{a}/docs/a%20b"
    assert by_name["Remember me"]["states"].get("checked") is True
    assert "checked" not in by_name["Newsletter"].get("states", {})
    assert by_name["Locked"]["states"]["disabled"] is True
    assert by_name["Email"]["value"] == "me@example.test"
    assert any(r.get("level") == 1 and r["name"] == "Settings" for r in decoded)
    print(
        f"\nbytes ({mode}): json text block {len(json.dumps(as_json))}, lines text block "
        f"{len(text.encode())}, lines structured {len(json.dumps(data))}"
    )


@pytest.mark.parametrize("mode", ["auto", "dom"])
async def test_more_rows_than_the_limit_list_every_control_or_say_what_was_cut(
    agent: Client, port: int, mode: str
) -> None:
    a = f"http://127.0.0.1:{port}"
    tab = (await ok(agent, "tab_open", {"url": f"{a}/many"}))["tab"]["id"]
    # 30 headings come first in the document, 20 buttons after them; room for 25 rows.
    text, data = await _both(agent, {"tabId": tab, "mode": mode, "maxNodes": 25})
    rows = lines.decode(data["lines"])
    buttons = [r["name"] for r in rows if r["role"] == "button"]
    assert buttons == [f"Act {i}" for i in range(20)]  # every control, in document order
    assert len(rows) == 25 and data["truncated"] is True
    assert data["cut"]["rows"] == 25 and data["cut"]["interactive"] == 0, data["cut"]
    assert "every interactive element is listed" in data["cut"]["rest"]
    assert "cut: 25 rows left out (0 interactive)" in text

    # Room for fewer rows than controls: the cut says how many and where to go on.
    _, first = await _both(agent, {"tabId": tab, "mode": mode, "maxNodes": 12})
    listed = [r["name"] for r in lines.decode(first["lines"])]
    assert listed == [f"Act {i}" for i in range(12)]
    cut = first["cut"]
    assert cut["interactive"] == 8 and "skip" in cut and f"skip: {cut['skip']}" in cut["rest"]
    _, rest = await _both(agent, {"tabId": tab, "mode": mode, "maxNodes": 12, "skip": cut["skip"]})
    assert [r["name"] for r in lines.decode(rest["lines"])] == [f"Act {i}" for i in range(12, 20)]
    assert "cut" not in rest
    # Refs stay the element's: the rest pages on with refs that work.
    last = lines.decode(rest["lines"])[-1]["ref"]
    state = await ok(agent, "page_get_state", {"tabId": tab, "ref": last})
    assert state["text"] == "Act 19"


@pytest.mark.parametrize("mode", ["auto", "dom"])
@pytest.mark.promise("H4-74")
async def test_a_link_holding_credentials_and_secrets_stays_masked_in_the_line_form(
    agent: Client, port: int, mode: str
) -> None:
    # The attacker's page links to an address with a password, an OAuth code, a token-like
    # value and a JWT fragment: the line form shows where the link goes, none of them.
    a = f"http://127.0.0.1:{port}"
    tab = (await ok(agent, "tab_open", {"url": f"{a}/"}))["tab"]["id"]
    result = await agent.call_tool("page_snapshot", {"tabId": tab, "mode": mode})
    assert not result.is_error, result.content
    data = result.structured_content
    [account] = [r for r in lines.decode(data["lines"], data["url"]) if r.get("name") == "Account"]
    href = account["href"]
    assert href.startswith(f"{a}/cb?code=[masked"), href
    assert "u=[masked" in href and "next=%2Fhome" in href and "access_token=[masked" in href
    shown = str(getattr(result.content[0], "text", "")) + json.dumps(data)
    for secret in (PASSWORD, CODE, TOKEN_LIKE, JWT, "alice"):
        assert secret not in shown, secret


@pytest.mark.parametrize("mode", ["a11y", "dom"])
async def test_text_runs_come_only_when_asked(agent: Client, port: int, mode: str) -> None:
    """In both sources: the accessibility tree's text runs, and the DOM walk's (page/snapshot.js),
    which lists the same runs in document order and leaves out what a row already says."""
    a = f"http://127.0.0.1:{port}"
    tab = (await ok(agent, "tab_open", {"url": f"{a}/"}))["tab"]["id"]
    asked = {"tabId": tab, "mode": mode}
    plain = lines.decode((await ok(agent, "page_snapshot", asked))["lines"])
    assert not any(r["role"] == "text" for r in plain)
    answer = await ok(agent, "page_snapshot", {**asked, "text": True})
    assert answer["mode"] == mode
    worded = lines.decode(answer["lines"])
    texts = [r for r in worded if r["role"] == "text"]
    assert any("Plain words of the page" in r["name"] for r in texts), texts
    assert "Email" in [r["name"] for r in texts], texts  # a label's words
    assert all("ref" not in r for r in texts)
    # A control's own words are its name (a select's options, its value), never repeated
    # as a text row; the closed details' text is not shown, so not listed.
    names = [r["name"] for r in texts]
    for said in ("Home", "Account", "Locked", "More", "S", "M", "hidden"):
        assert said not in names, (said, names)
    assert {r["ref"] for r in worded if "ref" in r} == {r["ref"] for r in plain}
    # Document order: the page's last words come after every control.
    order = [r.get("name") for r in worded]
    assert order.index("Plain words of the page, not a control.") > order.index("Bold")


async def test_the_line_form_costs_under_half_the_json_on_a_documentation_like_page(
    agent: Client, port: int
) -> None:
    a = f"http://127.0.0.1:{port}"
    tab = (await ok(agent, "tab_open", {"url": f"{a}/docs"}))["tab"]["id"]
    as_json = await agent.call_tool("page_snapshot", {"tabId": tab, "format": "json"})
    text, data = await _both(agent, {"tabId": tab})
    rows = as_json.structured_content["snapshot"]
    controls = [r for r in rows if r["role"] in ("link", "button", "searchbox", "textbox")]
    assert len(controls) == 30 * 5 + 20 * 2 + 2  # every link, button and the search box
    assert (
        {r["ref"] for r in lines.decode(data["lines"]) if "ref" in r}
        == {r["ref"] for r in lines.fold(rows)}
        >= {r["ref"] for r in controls}
    )
    # A bare wrapper (a nameless `code`, nothing under it) has no line; the JSON lists it.
    decoded = lines.decode(data["lines"], data["url"])
    assert [r for r in rows if r["role"] == "code"]
    assert not [r for r in decoded if r["role"] == "code"]
    # A row with rows under it keeps its ref: the table of contents' list is a scope.
    toc = next(r for r in decoded if r["role"] == "list")
    _, scoped = await _both(agent, {"tabId": tab, "ref": toc["ref"]})
    links = [r for r in lines.decode(scoped["lines"], scoped["url"]) if r["role"] == "link"]
    assert len(links) == 30 * 5 and links[0]["href"] == f"{a}/lib/m0.html"
    json_text = len(str(getattr(as_json.content[0], "text", "")).encode())
    line_text = len(text.encode())
    structured = len(json.dumps(data).encode())
    print(
        f"\nbytes (docs page, {len(rows)} rows, {len(controls)} controls): json text block "
        f"{json_text} ({json_text / len(controls):.0f}/control), lines text block "
        f"{line_text} ({line_text / len(controls):.0f}/control), lines structured {structured}"
    )
    assert line_text * 2 < json_text and structured * 2 < json_text
