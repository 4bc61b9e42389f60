"""``bench/corpus.py``: each server's snapshot is read into the elements it references (excerpts of
real answers on the Python documentation), interactive ones are counted, a peer's elements are
matched against tabwarden's by role and name, and a page that failed is shown, never dropped."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bench.corpus import Element, coverage, interactive, parse_text, summarize, table, tokens
from bench.site import corpus_file

#: @playwright/mcp 0.0.83 on library/index.html and index.html (excerpts).
PLAYWRIGHT_TEXT = """### Page
- Page URL: http://127.0.0.1:1/corpus/library/index.html
### Snapshot
```yaml
- generic [active] [ref=f1e1]:
  - navigation "related navigation" [ref=f1e2]:
    - list [ref=f1e3]:
      - listitem [ref=f1e4]:
        - link "index" [ref=f1e5] [cursor=pointer]:
          - /url: genindex.html
        - text: "|"
      - listitem:
        - link:
          - /url: ""
      - listitem [ref=f1e14]:
        - search [ref=f1e15]:
          - generic [ref=f1e16]:
            - textbox "Quick search" [ref=f1e17]
            - button "Go" [ref=f1e18]
  - heading "The Python Standard Library" [level=1] [ref=f1e23]
  - link "all \\"What's new\\" documents" [ref=f1e34] [cursor=pointer]:
    - /url: whatsnew/index.html
  - listitem [ref=f1e95]:
    - link [ref=f1e96] [cursor=pointer]:
      - /url: functions.html#divmod
      - code [ref=f1e97]: divmod()
  - link [ref=f1e120] [cursor=pointer]:
    - /url: os.path.html
    - code [ref=f1e121]: os.path
    - text: — Common pathname manipulations
```"""

#: chrome-devtools-mcp 1.11.0 on index.html and reference/datamodel.html (excerpts).
DEVTOOLS_TEXT = """## Latest page snapshot
uid=1_0 RootWebArea "3.11.2 Documentation" url="http://127.0.0.1:1/corpus/index.html"
  uid=1_1 navigation "related navigation"
    uid=1_2 link "index" description="General Index" keyshortcuts="Alt+I" url="http://x/genindex.html"
    uid=1_6 " |"
    uid=1_15 link url="http://127.0.0.1:1/corpus/index.html"
    uid=1_16 search
      uid=1_17 form
        uid=1_18 textbox "Quick search"
        uid=1_19 button "Go"
    uid=1_27 LineBreak "
"
    uid=1_29 link "all "What's new" documents" url="http://127.0.0.1:1/corpus/whatsnew/index.html"
    uid=1_40 link "dbm.ndbm" description="dbm.ndbm: The standard "database" interface." url="x"
"""


def test_playwright_elements_take_their_childrens_text_when_shown_without_a_name() -> None:
    found = parse_text("playwright", PLAYWRIGHT_TEXT)
    assert [e.ref for e in found][:3] == ["f1e1", "f1e2", "f1e3"]
    links = [e for e in interactive(found) if e.role == "link"]
    assert [(e.name, e.ref) for e in links] == [
        ("index", "f1e5"),
        ('all "What\'s new" documents', "f1e34"),
        ("divmod()", "f1e96"),
        ("os.path — Common pathname manipulations", "f1e120"),
    ]  # the nameless link without a ref is not referenced, so not counted
    assert [e.role for e in interactive(found)].count("textbox") == 1
    assert "heading" not in {e.role for e in interactive(found)}
    assert interactive(
        [Element("doc-noteref", "[1]", "1_9"), Element("option", "Dark", "1_8")]
    ) == [
        Element("doc-noteref", "[1]", "1_9")
    ]  # a footnote link counts; an option is chosen through its combobox


def test_devtools_names_end_where_the_attributes_begin_though_they_hold_quotes() -> None:
    found = parse_text("devtools", DEVTOOLS_TEXT)
    acting = interactive(found)
    assert [(e.role, e.name, e.ref) for e in acting] == [
        ("link", "index", "1_2"),
        ("link", "", "1_15"),
        ("textbox", "Quick search", "1_18"),
        ("button", "Go", "1_19"),
        ("link", 'all "What\'s new" documents', "1_29"),
        ("link", "dbm.ndbm", "1_40"),
    ]


def test_coverage_matches_role_and_name_as_multisets_and_lists_what_is_missing() -> None:
    peer = [
        Element("link", "index", "a"),
        Element("link", "index", "b"),
        Element("searchbox", "Quick search", "c"),
        Element("button", "Copy", "d"),
        Element("link", "os.path — Common", "e"),
        Element("link", "[1]", "f"),  # a footnote's reference, a link to Playwright
    ]
    ours = [
        Element("link", "index", "@e1"),
        Element("textbox", "Quick search", "@e2"),
        Element("link", "Copy", "@e3"),
        Element("link", "os.path —  Common", "@e4"),
        Element("doc-noteref", "[1]", "@e5"),  # its DPUB-ARIA role, to Chrome and tabwarden
    ]
    got = coverage(peer, ours)
    assert got["referenced_by_peer"] == 6
    assert got["missing"] == 1 and got["missing_elements"] == [["link", "index"]]  # the second
    assert got["role_differs"] == 1 and got["role_differs_elements"] == [["button", "Copy"]]


def _page(look_bytes: int, count: int, names: list[str]) -> dict[str, Any]:
    return {
        "look": {
            "bytes": look_bytes,
            "claude_bytes": look_bytes,
            "interactive": count,
            "bytes_per_element": look_bytes / count,
            "claude_bytes_per_element": look_bytes / count,
        },
        "read_act": {"bytes": look_bytes + 10, "tokens": tokens(look_bytes + 10)},
        "navigate": {"bytes": 100},
        "elements": [["link", n] for n in names],
    }


def test_the_ratio_is_against_the_best_peer_and_a_failed_page_is_shown() -> None:
    measured = {
        "tabwarden": {
            "a.html": _page(100, 2, ["x", "y"]),
            "b.html": {"error": "CallFailed: page_snapshot: boom"},
        },
        "playwright": {"a.html": _page(400, 2, ["x", "y"]), "b.html": _page(50, 1, ["z"])},
        "devtools": {"a.html": _page(200, 2, ["x", "z"]), "b.html": _page(50, 1, ["z"])},
    }
    compared = summarize(measured, ["a.html", "b.html"])
    a, b = compared["pages"]
    assert a["ratio"] == 0.5  # 50 bytes per element against devtools' 100
    assert a["coverage"]["devtools"]["missing_elements"] == [["link", "z"]]
    assert a["coverage"]["playwright"]["missing"] == 0
    assert b["ratio"] is None and "coverage" not in b
    summary = compared["summary"]
    assert summary["bytes"] == {"median_ratio": 0.5, "min_ratio": 0.5, "max_ratio": 0.5, "pages": 1}
    assert summary["missing"] == {"playwright": 0, "devtools": 1}
    assert summary["every_peer_element_referenced"] is False
    doc = {
        "measured": measured,
        "corpus": {"pages": ["a.html", "b.html"]},
        "compared": compared,
        "tools_list": {"tabwarden": {"bytes": 4000, "tools": 2}},
    }
    shown = table(doc)
    assert "| tabwarden | 4,000 (≈ 1,000) | 2 |" in shown
    assert "| `a.html` | 100 (≈ 25) | 400 (≈ 100) | 200 (≈ 50) | 2 | 2 | 2 |" in shown
    assert "| 0.50× | @playwright/mcp: 0; chrome-devtools-mcp: 1 |" in shown
    assert "| `b.html` | error |" in shown
    assert "- tabwarden `b.html`: CallFailed: page_snapshot: boom" in shown
    assert "median 0.50×, range 0.50×–0.50× over 1 pages" in shown


def test_the_site_serves_the_corpus_files_and_nothing_outside_its_root(tmp_path: Path) -> None:
    root = tmp_path / "html"
    (root / "library").mkdir(parents=True)
    (root / "library" / "os.html").write_text("<title>os</title>", encoding="utf-8")
    (tmp_path / "secret.txt").write_text("not served", encoding="utf-8")
    (root / "_static").mkdir()
    (root / "_static" / "jquery.js").symlink_to(tmp_path / "secret.txt")  # as Debian links it
    assert corpus_file("/corpus/library/os.html", root) == (
        b"<title>os</title>",
        "text/html; charset=utf-8",
    )
    assert corpus_file("/corpus/_static/jquery.js", root) is not None  # a link the package made
    for path in (
        "/corpus/../secret.txt",
        "/corpus/library/../../secret.txt",
        "/corpus/library",
        "/corpus/",
        "/corpus/missing.html",
        "/elsewhere/library/os.html",
    ):
        assert corpus_file(path, root) is None, path
