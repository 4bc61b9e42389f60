"""page_snapshot's line form (mcp_server/catalogue/interact/lines.py, docs/adr/0016): every field
an action needs — ref, role, name, states, href, value — comes back out of a row's line, for
generated rows with awkward names, hrefs and values; what is left out is only what the form
says it leaves out (false states, empty values, the tag); the result's text block carries every
field of its structured content; and the line form is made from the extension's masked reply,
so a masked href stays masked."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from hypothesis import given, settings
from hypothesis import strategies as st

from tabwarden.mcp_server.catalogue import BY_NAME
from tabwarden.mcp_server.catalogue.interact import lines
from tabwarden.mcp_server.catalogue.interact.reading import SnapshotAnswer
from tabwarden.mcp_server.results import ok_result

ROLES = st.sampled_from(
    ["link", "button", "textbox", "heading", "checkbox", "text", "list", "", "listitem", "code"]
)
#: Pages the answer names (the hrefs at their origin are written short), or none.
PAGES = ["https://x.test/page?y=1#top", "http://127.0.0.1:8123/corpus/a.html"]
STATES = st.dictionaries(
    st.sampled_from(["checked", "pressed", "expanded", "selected", "disabled", "focused"]),
    st.sampled_from([True, False, "mixed"]),
)
#: Any text, the line form's own punctuation included: quotes, @refs, key=value, newlines.
AWKWARD = st.one_of(
    st.text(max_size=120),
    st.sampled_from(['say "hi"', "@e5", "href=x", "a\\b", "line\nbreak", " lead", "…", "- x"]),
    # A list item's name is often its first child's, or that and a separator the page draws.
    st.sampled_from(
        ["", "modules", "modules |", "modules »", "modules |x", "modules  ·:", "modulesx"]
    ),
)
HREFS = st.one_of(
    st.none(),
    st.sampled_from(
        [
            "https://x.test/",
            "https://x.test/a?q=1&token=[masked: 32 chars, hex]",
            'https://x.test/"quoted"',
            "mailto:a@b.test",
            "https://x.test/page?y=1#frag",
            "https://x.test/page?y=1",
            "https://x.test//evil.test/x",
            "https://x.test.evil.test/x",
            "https://x.test:8443/x",
            "http://x.test/x",
            "https://x.test/a b?token=[masked: 9 chars, letters]",
            "http://127.0.0.1:8123/corpus/library/os.html#os.sep",
            "http://127.0.0.1:8123/corpus/a.html#id5",
            "http://127.0.0.1:8123/corpus/b/c.html",
            "http://127.0.0.1:8123/corpus/mailto:x",
            "http://127.0.0.1:8123/corpus/?q=1",
            "http://127.0.0.1:8123/corpus//x",
            "https://x.test/other.html",
            "http://127.0.0.1:81234/x",
        ]
    ),
    st.text(min_size=1, max_size=40),
)


@st.composite
def rows(draw: Any) -> dict[str, Any]:
    row: dict[str, Any] = {"role": draw(ROLES), "name": draw(AWKWARD)}
    if row["role"] != "text":
        row["ref"] = f"@e{draw(st.integers(1, 10**6))}"
        row["tag"] = draw(st.sampled_from(["a", "button", "input", "h2"]))
    if (d := draw(st.one_of(st.none(), st.integers(0, 12)))) is not None:
        row["depth"] = d
    if draw(st.booleans()):
        row["states"] = draw(STATES)
    if (h := draw(HREFS)) is not None:
        row["href"] = h
    if draw(st.booleans()):
        row["value"] = draw(AWKWARD)
    if draw(st.booleans()):
        row["level"] = draw(st.integers(1, 6))
    if draw(st.booleans()):
        field = draw(st.sampled_from(["name", "value"]))
        read = "page_text" if field == "name" else "page_get_state"
        row["shortened"] = {field: {"chars": draw(st.integers(201, 10**6)), "readWith": read}}
    if draw(st.booleans()):
        row["source"] = "dom"
    return row


def absolute(href: str, url: str | None) -> str:
    """``href`` as the page at ``url`` resolves it (a path at its origin, a fragment in it)."""
    if url is None:
        return href
    parts = urlsplit(url)
    origin, page = f"{parts.scheme}://{parts.netloc}", url.split("#")[0]
    folder = origin + parts.path[: parts.path.rfind("/") + 1]
    if href.startswith("#"):
        return page + href
    if href.startswith("/"):
        return origin + href if not href.startswith("//") else href
    scheme = re.match(r"[A-Za-z][A-Za-z0-9+.-]*:", href)
    return href if href == "" or href[0] == "?" or scheme else folder + href


def expected(row: Mapping[str, Any], url: str | None = None) -> dict[str, Any]:
    """What the line form promises to keep of a row."""
    out: dict[str, Any] = {"role": row["role"], "depth": row.get("depth") or 0}
    for key in ("name", "ref", "href", "source", "level"):
        if row.get(key) not in (None, ""):
            out[key] = row[key]
    if "href" in out:
        out["href"] = absolute(out["href"], url)
    states = {k: v for k, v in (row.get("states") or {}).items() if v is not False}
    if states:
        out["states"] = states
    shortened = dict(row.get("shortened") or {})
    value = row.get("value")
    if value:
        if len(value) > lines.VALUE_CHARS:
            shortened.setdefault("value", {"chars": len(value), "readWith": "page_get_state"})
            value = value[: lines.VALUE_CHARS - 1] + "…"
        out["value"] = value
    else:
        shortened.pop("value", None)
    if shortened:
        out["shortened"] = shortened
    return out


#: Roles the property draws that are structure (lines.STRUCTURE): left out when bare; from an
#: answer that was cut, only the inline ones (a bare list may be one whose items were cut).
STRUCTURAL = {"list", "listitem", "code"}
INLINE = {"code"}


def _own(row: Mapping[str, Any]) -> bool:
    """The row says something of its own (a list item's level is its nesting: not its own)."""
    keys = ("name", "states", "value", "href", "shortened", "source")
    return any(row.get(k) for k in keys) or (row["role"] != "listitem" and bool(row.get("level")))


def _shown(snapshot: list[Any], cut: bool = False) -> list[bool]:
    """Whether each row has a line: it is not structure, says something of its own, or has a
    shown row under it (its subtree: the rows after it, deeper, up to the next not deeper)."""

    def depth(i: int) -> int:
        return snapshot[i].get("depth") or 0

    def shown(i: int) -> bool:
        if snapshot[i]["role"] not in (INLINE if cut else STRUCTURAL) or _own(snapshot[i]):
            return True
        j = i + 1
        while j < len(snapshot) and depth(j) > depth(i):
            if shown(j):
                return True
            j += 1
        return False

    return [shown(i) for i in range(len(snapshot))]


def _says(name: str, childs: object) -> bool:
    if not isinstance(childs, str) or not childs:
        return False
    return name == childs or (
        name.startswith(childs)
        and re.fullmatch(r"\s+[^\w\s]{1,3}", name[len(childs) :]) is not None
    )


@settings(max_examples=600, deadline=None)
@given(st.lists(rows(), max_size=8), st.sampled_from([None, *PAGES]), st.booleans())
def test_every_field_an_action_needs_comes_back_out_of_the_lines(
    snapshot: list[Any], url: str | None, cut: bool
) -> None:
    text = lines.encode(snapshot, url, cut)
    folded_rows = lines.fold(snapshot, cut)
    assert len(text.splitlines()) == len(folded_rows)  # one line per row, whatever names hold
    assert lines.decode(text, url) == [expected(r, url) for r in folded_rows]
    # What the fold leaves out, and only that: a bare structural row with no shown row under
    # it; a list item's level; a structural row's name its first child's line says (alone or
    # with a separator); a list item of one link and nothing else (the link at its depth).
    # Every other row, every field, in order.
    flags = _shown(snapshot, cut)
    visible = [r for r, f in zip(snapshot, flags, strict=True) if f]
    for r, f in zip(snapshot, flags, strict=True):
        if not f:  # never a row a person acts on, never one with anything of its own
            assert r["role"] in (INLINE if cut else STRUCTURAL) and not _own(r)
    kept = iter(folded_rows)
    relinked: set[int] = set()
    for i, row in enumerate(visible):
        depth = row.get("depth") or 0
        if i in relinked:
            continue  # a link written at its list item's depth: checked with the list item
        folded = next(kept)
        if row["role"] == "listitem":
            row = {k: v for k, v in row.items() if k != "level"}
        if row["role"] == "listitem" and folded["role"] != "listitem":
            # A list item of one link and nothing else: its link comes at its depth instead.
            link = visible[i + 1]
            assert link["role"] == "link" and (link.get("depth") or 0) == depth + 1
            assert i + 2 >= len(visible) or (visible[i + 2].get("depth") or 0) <= depth
            assert not any(row.get(k) for k in ("states", "value", "href", "source"))
            assert not row.get("shortened")
            assert not row.get("name") or _says(row["name"], link.get("name"))
            assert dict(folded) == {**link, "depth": depth}
            relinked.add(i + 1)
            continue
        if row["role"] == "listitem" and "name" not in folded and row.get("name"):
            after = visible[i + 1]
            assert _says(row["name"], after.get("name"))
            assert (after.get("depth") or 0) == depth + 1
            folded = {**folded, "name": row["name"]}
        assert dict(folded) == row
    assert next(kept, None) is None
    # Every row with a row under it keeps its line and ref: any part can still be a scope.
    for i, row in enumerate(snapshot):
        under = i + 1 < len(snapshot) and (snapshot[i + 1].get("depth") or 0) > (
            row.get("depth") or 0
        )
        if under and flags[i + 1] and row.get("ref") and row["role"] != "listitem":
            assert any(f.get("ref") == row["ref"] for f in folded_rows)
    # An href written short is never one that reads as another origin's.
    for line in text.splitlines():
        assert "href=//" not in line and 'href="//' not in line


def test_a_bare_structural_row_is_left_out_and_a_row_with_rows_under_it_kept() -> None:
    rows_ = [
        {"ref": "@e1", "role": "list", "name": "", "tag": "ul", "depth": 0},
        {"ref": "@e2", "role": "listitem", "name": "", "tag": "li", "depth": 1, "level": 1},
        {"ref": "@e3", "role": "code", "name": "", "tag": "code", "depth": 2},
        {"ref": "@e4", "role": "listitem", "name": "x »", "tag": "li", "depth": 1, "level": 1},
        {"ref": "@e5", "role": "emphasis", "name": "", "tag": "em", "depth": 2},
        {"ref": "@e6", "role": "definition", "name": "Words", "tag": "dd", "depth": 0},
        {"ref": "@e7", "role": "code", "name": "", "tag": "code", "depth": 1},
        {"ref": "@e8", "role": "link", "name": "", "tag": "a", "depth": 1, "href": "https://y/"},
        {"ref": "@e9", "role": "textbox", "name": "", "tag": "input", "depth": 1},
        {"ref": "@e10", "role": "heading", "name": "", "tag": "h2", "depth": 0, "level": 2},
        {"ref": "@e11", "role": "paragraph", "name": "", "tag": "p", "depth": 0},
        {"ref": "@e12", "role": "strong", "name": "", "tag": "b", "depth": 1},
        {"ref": "@e13", "role": "button", "name": "Go", "tag": "button", "depth": 2},
    ]
    assert lines.encode(rows_).splitlines() == [
        "- list @e1",  # its items: one says something
        '  - listitem "x »" @e4',  # a name of its own (no child says it); its level left out
        '- definition "Words" @e6',
        "  - link @e8 href=https://y/",  # nameless, but acted on: kept
        "  - textbox @e9",
        "- heading @e10 level=2",  # a level of its own
        "- paragraph @e11",  # rows under it: still a scope
        "  - strong @e12",
        '    - button "Go" @e13',
    ]
    # From an answer that left rows out, an empty list or paragraph stays: its rows may be the
    # ones cut, its ref the scope that lists them. Inline wrappers still go.
    cut = lines.encode([*rows_[:3], {**rows_[10], "depth": 0}], cut=True).splitlines()
    assert cut == ["- list @e1", "  - listitem @e2", "- paragraph @e11"]
    # format json keeps every row.
    reply = {"url": "https://x.test/", "title": "t", "snapshot": rows_, "truncated": False}
    args = BY_NAME["page_snapshot"].arguments.model_validate({"tabId": 1, "format": "json"})
    assert args.shaped(dict(reply))["snapshot"] == rows_


def test_a_row_reads_as_the_issue_asks_and_says_only_what_is_set() -> None:
    row = {"ref": "@e5", "role": "link", "name": "Logo", "tag": "a", "value": None, "level": None}
    assert lines.encode_row({**row, "states": None, "depth": 1, "href": "https://x/"}) == (
        '  - link "Logo" @e5 href=https://x/'
    )
    box = {"ref": "@e9", "role": "checkbox", "name": "", "tag": "input"}
    assert lines.encode_row({**box, "states": {"checked": False, "disabled": True}}) == (
        "- checkbox @e9 disabled"
    )
    assert (
        lines.encode_row({**box, "states": {"checked": "mixed"}}) == "- checkbox @e9 checked=mixed"
    )


def test_json_stays_for_who_asks_and_the_default_is_lines() -> None:
    reply = {
        "url": "https://x.test/",
        "title": "T",
        "snapshot": [{"ref": "@e1", "role": "button", "name": "Go", "tag": "button"}],
        "truncated": False,
        "mode": "a11y",
    }
    args = BY_NAME["page_snapshot"].arguments
    assert args.model_validate({"tabId": 1, "format": "json"}).shaped(dict(reply)) == reply
    shaped = args.model_validate({"tabId": 1}).shaped(dict(reply))
    assert "snapshot" not in shaped and shaped["lines"] == '- button "Go" @e1'
    # The format is the server's alone: the extension is sent what it was sent before.
    assert "format" not in args.model_validate({"tabId": 1, "format": "json"}).wire()


def cut_reply(href: str) -> dict[str, Any]:
    return {
        "url": "https://x.test/",
        "title": 'A "title"',
        "snapshot": [
            {"ref": "@e1", "role": "link", "name": "Account", "tag": "a", "href": href, "depth": 0}
        ],
        "truncated": True,
        "cut": {"rows": 7, "interactive": 2, "skip": 40, "rest": "call again with skip: 40"},
        "mode": "a11y",
    }


def test_the_text_block_carries_every_field_of_the_structured_content() -> None:
    answer = SnapshotAnswer.model_validate(
        BY_NAME["page_snapshot"].arguments.model_validate({"tabId": 1}).shaped(cut_reply("h"))
    )
    result = ok_result(answer)
    data = result.structured_content
    assert data is not None and "snapshot" not in data
    text = result.content[0].text  # type: ignore[union-attr]
    head, rows = text.split("\nsnapshot:\n")
    assert rows == data["lines"]
    assert head.splitlines() == [
        "url: https://x.test/",
        f"title: {json.dumps(data['title'])}",
        "mode: a11y",
        "cut: 7 rows left out (2 interactive): call again with skip: 40",
    ]
    # format json: ADR 0006 unchanged, the text block is the structured content's JSON.
    as_json = SnapshotAnswer.model_validate(cut_reply("h"))
    plain = ok_result(as_json)
    assert json.loads(plain.content[0].text) == plain.structured_content  # type: ignore[union-attr]
    assert plain.structured_content is not None and "lines" not in plain.structured_content


def test_a_masked_href_stays_masked_in_the_line_form() -> None:
    # What the extension's mask (worker/mask.js maskHref) makes of
    # https://alice:hunter2@x.test/cb?code=SECRET123abc#access_token=eyJ… : the line form only
    # re-encodes it, so not one character of the secret can come back.
    masked = "https://x.test/cb?code=[masked: 12 chars, letters+digits]#access_token=[masked: JWT]"
    answer = SnapshotAnswer.model_validate(
        BY_NAME["page_snapshot"].arguments.model_validate({"tabId": 1}).shaped(cut_reply(masked))
    )
    result = ok_result(answer)
    text = result.content[0].text  # type: ignore[union-attr]
    assert lines.decode(text.split("\nsnapshot:\n")[1], "https://x.test/")[0]["href"] == masked
    for shown in (text, json.dumps(result.structured_content)):
        assert "SECRET123abc" not in shown and "hunter2" not in shown and "eyJ" not in shown


def test_a_footnote_link_keeps_its_subrole_ref_and_href_in_its_line() -> None:
    # DPUB-ARIA link subroles arrive under the role Chrome's tree gives them; the line keeps it.
    row = {"ref": "@e7", "role": "doc-noteref", "name": "[1]", "tag": "a", "href": "#id5"}
    line = lines.encode_row(row)
    assert line == '- doc-noteref "[1]" @e7 href=#id5'
    assert lines.decode_row(line) == {
        "depth": 0,
        "role": "doc-noteref",
        "name": "[1]",
        "ref": "@e7",
        "href": "#id5",
    }


def test_a_link_list_says_each_name_once_and_same_origin_hrefs_as_paths() -> None:
    url = "http://127.0.0.1:8123/corpus/library/index.html"
    reply: dict[str, Any] = {
        "url": url,
        "title": "The Python Standard Library",
        "snapshot": [
            {"ref": "@e1", "role": "list", "name": "", "tag": "ul", "depth": 0},
            {
                "ref": "@e2",
                "role": "listitem",
                "name": "os.path",
                "tag": "li",
                "depth": 1,
                "level": 1,
            },
            {
                "ref": "@e3",
                "role": "link",
                "name": "os.path",
                "tag": "a",
                "depth": 2,
                "href": "http://127.0.0.1:8123/corpus/library/os.path.html",
            },
            {"ref": "@e4", "role": "code", "name": "", "tag": "code", "depth": 3},
            {"ref": "@e5", "role": "listitem", "name": "Intro and more", "tag": "li", "depth": 1},
            {
                "ref": "@e6",
                "role": "link",
                "name": "Intro",
                "tag": "a",
                "depth": 2,
                "href": "http://127.0.0.1:8123/corpus/library/index.html#intro",
            },
            {"ref": "@e7", "role": "code", "name": "", "tag": "code", "depth": 1},
            {
                "ref": "@e9",
                "role": "link",
                "name": "up",
                "tag": "a",
                "depth": 1,
                "href": "http://127.0.0.1:8123/corpus/tutorial/index.html",
            },
            {
                "ref": "@e8",
                "role": "link",
                "name": "elsewhere",
                "tag": "a",
                "depth": 1,
                "href": "https://docs.python.org/3/",
            },
        ],
        "truncated": False,
        "mode": "a11y",
    }
    shaped = BY_NAME["page_snapshot"].arguments.model_validate({"tabId": 1}).shaped(dict(reply))
    assert shaped["lines"].splitlines() == [
        "- list @e1",
        '  - link "os.path" @e3 href=os.path.html',  # its list item held only it
        '  - listitem "Intro and more" @e5',
        '    - link "Intro" @e6 href=#intro',
        '  - link "up" @e9 href=/corpus/tutorial/index.html',
        '  - link "elsewhere" @e8 href=https://docs.python.org/3/',
    ]
    hrefs = [r["href"] for r in lines.decode(shaped["lines"], url) if "href" in r]
    assert hrefs == [r["href"] for r in reply["snapshot"] if "href" in r]
    # format json: the rows as the extension sent them, names, code rows and hrefs whole.
    as_json = BY_NAME["page_snapshot"].arguments.model_validate({"tabId": 1, "format": "json"})
    assert as_json.shaped(dict(reply)) == reply
