"""The token-cost figure on a corpus of real pages nobody here wrote: eight pages of Debian's
Python 3.11 HTML documentation (package ``python3.11-doc``, served as installed by
``bench/site.py`` under ``/corpus/``), each server on its own, one after the other::

    flock /tmp/tabwarden-chromium.lock .venv/bin/python -m bench corpus
    .venv/bin/python -m bench corpus --table bench/results/<date>-corpus.json

Per page and server: one navigation, then the server's "look at the page" call whose refs its
action tools take (``servers.TOOLS["snapshot"]``); the interactive elements that answer
references; then a read-and-act step: the look with the page's text
(``servers.TOOLS["read"]``: tabwarden's ``page_snapshot`` with ``text: true``, the peers' own
snapshots, which carry the text already) and a click, by the ref that answer gave, on the link
"index" (the related bar's link to the general index, on every page), checked afterwards by
the server's own tab list showing ``genindex.html``. tabwarden runs with its throwaway record's
confirm list emptied, as for the capability tasks (nobody approves in a bench; the peers ask
no one), and on a desktop-sized headless screen (``SCREEN``). Plus each server's
``tools/list`` bytes (``bench/toolslist.py``).

Byte counts, never times: nothing here is timed or asserted. What the figures mean is in
``METHOD`` (also written into every result document) and bench/README.md.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from mcp_types import CallToolResult

from bench.servers import (
    PEERS,
    PLAYWRIGHT,
    SERVERS,
    TABWARDEN,
    TITLES,
    CallFailed,
    Launcher,
    Session,
    _text_parts,
    one_line,
    snapshot_rows,
)
from bench.site import CORPUS, DOC_PACKAGE, DOC_ROOT
from bench.stats import median

RESULTS = Path(__file__).resolve().parent / "results"

#: The eight pages, from the smallest to the largest: the front page, the search page, two of
#: the tutorial, the library's index, two library pages and the data model reference.
PAGES: Final = (
    "index.html",
    "search.html",
    "tutorial/index.html",
    "tutorial/controlflow.html",
    "library/index.html",
    "library/os.path.html",
    "library/functions.html",
    "reference/datamodel.html",
)

#: The roles an action tool takes as its target. An ``option`` of a ``<select>`` is chosen
#: through its combobox's ref (page_select, browser_select_option, fill), so it is not counted.
INTERACTIVE: Final = frozenset(
    {
        "button",
        "checkbox",
        "combobox",
        "doc-backlink",
        "doc-biblioref",
        "doc-glossref",
        "doc-noteref",
        "link",
        "listbox",
        "menuitem",
        "menuitemcheckbox",
        "menuitemradio",
        "radio",
        "searchbox",
        "slider",
        "spinbutton",
        "switch",
        "tab",
        "textbox",
        "treeitem",
    }
)
#: Roles one engine names differently from another for the same kind of control.
ROLE_CLASS: Final = {
    # DPUB-ARIA's link roles (a footnote's reference and its way back): links to
    # @playwright/mcp, their own roles to Chrome's tree and to tabwarden.
    "doc-backlink": "link",
    "doc-biblioref": "link",
    "doc-glossref": "link",
    "doc-noteref": "link",
    "searchbox": "textbox",
    "menuitemcheckbox": "menuitem",
    "menuitemradio": "menuitem",
}

#: The read-and-act step clicks this link (the related bar's "index", present on every page).
ACT_LINK: Final = "index"
ACT_LANDS: Final = "genindex.html"
#: How long the click's navigation may take to show in the tab list (a bound, never a figure).
LAND_S: Final = 30.0
#: tabwarden's headless Chromium gets a desktop's screen (``servers.Launcher.screen``), so its
#: 1280x800 agent window is not clamped to headless Chromium's 800x600 screen.
SCREEN: Final = "1600x900"
#: At most this many missing elements are listed per page and peer in the results.
LIST_MISSING: Final = 40

METHOD: Final = {
    "bytes": "content bytes: the UTF-8 bytes of the answer's text parts, what an MCP client "
    "that reads content (the SDK's, Codex, the Inspector) gives its model",
    "claude_bytes": "what Claude Code gives its model: the compact JSON of structuredContent "
    "when the answer has one (docs/adr/0016), else the content bytes",
    "wire_bytes": "the whole CallToolResult re-serialized as compact JSON (content and "
    "structuredContent): about what crosses the stdio pipe",
    "tokens": "estimated as ceil(bytes / 4)",
    "interactive": "refs in the answer on rows whose role is one of INTERACTIVE "
    "(" + ", ".join(sorted(INTERACTIVE)) + "); options are chosen through their combobox",
    "matching": "a peer's interactive element is referenced by tabwarden when tabwarden's "
    "answer has an interactive element with the same role class (searchbox=textbox, "
    "doc-noteref=doc-backlink=link) and the "
    "same name (compared without whitespace: @playwright/mcp shows a name equal to its children's "
    "texts as those texts, one per line), counted as multisets; an element matched by name "
    "alone (roles differ) counts as referenced and is reported as such",
    "ratio": "tabwarden's bytes per interactive element referenced / the best peer's (the "
    "lowest of the peers that reference any), per page; the median and range over pages",
    "read_act": "bytes of the read call (the look with the page's text) plus the click's "
    "answer; tabwarden's read is page_snapshot text:true, the peers' their snapshot again",
}


@dataclass(frozen=True)
class Element:
    role: str
    name: str
    ref: str


# -- reading each server's answer ---------------------------------------------------------

_QUOTED = r'"(?P<name>(?:[^"\\]|\\.)*)"'
#: @playwright/mcp: ``- link "Name \"quoted\"" [ref=f1e5] [cursor=pointer]:`` (JSON escapes).
#: A node whose name equals its children's text is shown without the name (``- link
#: [ref=f1e99]:`` over ``- code [ref=f1e100]: divmod()``): its name is then those texts.
PLAYWRIGHT_NODE: Final = re.compile(
    r"^(?P<indent>\s*)- (?P<role>[\w-]+)(?: " + _QUOTED + r")?(?P<attrs>(?: \[[^\]]*\])*)"
    r"(?::(?: (?P<text>.*))?)?$"
)
PLAYWRIGHT_REF: Final = re.compile(r"\[ref=(?P<ref>[\w-]+)\]")
#: chrome-devtools-mcp: ``uid=1_29 link "all "What's new" documents" url="…"`` (no escapes: the
#: name ends at the first quote after which the rest of the line is attributes, ``key`` or
#: ``key="…"``).
DEVTOOLS_LINE: Final = re.compile(
    r"^\s*uid=(?P<ref>\S+) (?P<role>[\w-]+)(?P<rest>[^\n]*)$", re.MULTILINE
)
DEVTOOLS_NAME: Final = re.compile(r' "(?P<name>.*?)"(?=(?: [\w-]+(?:=".*")?)*$)')


def _unquote(raw: str | None) -> str:
    if not raw:
        return ""
    try:
        value = json.loads(f'"{raw}"')
    except ValueError:
        return raw
    return value if isinstance(value, str) else raw


def elements(server: str, result: CallToolResult) -> list[Element]:
    """Every element the answer gives a ref (or uid), in its order, role lowercased."""
    if server == TABWARDEN:
        return [
            Element(str(r.get("role") or "").lower(), str(r.get("name") or ""), str(r["ref"]))
            for r in snapshot_rows(result)
            if r.get("ref")
        ]
    return parse_text(server, _text_parts(result))


def _devtools_name(rest: str) -> str:
    if not rest.startswith(' "'):
        return ""
    found = DEVTOOLS_NAME.match(rest)
    return found.group("name") if found else rest[2 : rest.rfind('"')]


def parse_text(server: str, text: str) -> list[Element]:
    """A peer's snapshot text as its referenced elements."""
    if server == PLAYWRIGHT:
        return _playwright(text)
    return [
        Element(m.group("role").lower(), _devtools_name(m.group("rest")), m.group("ref"))
        for m in DEVTOOLS_LINE.finditer(text)
    ]


def _yaml_text(raw: str) -> str:
    raw = raw.strip()
    return _unquote(raw[1:-1]) if len(raw) > 1 and raw[0] == raw[-1] == '"' else raw


def _playwright(text: str) -> list[Element]:
    nodes = []  # (indent, role, name or None, ref, own text)
    for line in text.splitlines():
        m = PLAYWRIGHT_NODE.match(line)
        if m is None:
            continue
        ref = PLAYWRIGHT_REF.search(m.group("attrs") or "")
        name = _unquote(m.group("name")) if m.group("name") is not None else None
        own = _yaml_text(m.group("text")) if m.group("text") else ""
        nodes.append((len(m.group("indent")), m.group("role"), name, ref, own))
    out = []
    for i, (indent, role, name, ref, own) in enumerate(nodes):
        if ref is None or role == "text":
            continue
        if name is None:
            parts = [own] if own else []
            for deeper, _, child_name, _, child_own in nodes[i + 1 :]:
                if deeper <= indent:
                    break
                parts.append(child_own or child_name or "")
            name = " ".join(p for p in parts if p)
        out.append(Element(role.lower(), name, ref.group("ref")))
    return out


def interactive(found: Iterable[Element]) -> list[Element]:
    return [e for e in found if e.role in INTERACTIVE]


def _key(e: Element) -> tuple[str, str]:
    return ROLE_CLASS.get(e.role, e.role), "".join(e.name.split())


def coverage(peer: Sequence[Element], ours: Sequence[Element]) -> dict[str, Any]:
    """Which of ``peer``'s interactive elements ``ours`` references (``METHOD["matching"]``)."""
    have = Counter(_key(e) for e in ours)
    unmatched: list[Element] = []
    for e in peer:
        key = _key(e)
        if have[key] > 0:
            have[key] -= 1
        else:
            unmatched.append(e)
    by_name = Counter(name for (_, name), n in have.items() for _ in range(n))
    role_differs, missing = [], []
    for e in unmatched:
        name = _key(e)[1]
        if by_name[name] > 0:
            by_name[name] -= 1
            role_differs.append(e)
        else:
            missing.append(e)
    return {
        "referenced_by_peer": len(peer),
        "missing": len(missing),
        "role_differs": len(role_differs),
        "missing_by_role": dict(Counter(e.role for e in missing)),
        "missing_elements": [[e.role, e.name] for e in missing[:LIST_MISSING]],
        "role_differs_elements": [[e.role, e.name] for e in role_differs[:LIST_MISSING]],
    }


def sizes(result: CallToolResult) -> dict[str, int]:
    content = len(_text_parts(result).encode("utf-8"))
    structured = result.structured_content
    claude = len(_compact(structured).encode("utf-8")) if structured is not None else content
    wire = len(_compact(result.model_dump(mode="json", by_alias=True, exclude_none=True)))
    return {"bytes": content, "tokens": tokens(content), "claude_bytes": claude, "wire_bytes": wire}


def _compact(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def tokens(size: int) -> int:
    return math.ceil(size / 4)


def _per(size: int, count: int) -> float | None:
    return round(size / count, 1) if count else None


# -- measuring ----------------------------------------------------------------------------


async def _landed(session: Session) -> None:
    """Wait (bounded) until the session's tab list shows the click's destination."""
    end = time.monotonic() + LAND_S
    while True:
        listed = session.everything(await session.call("light"))
        if ACT_LANDS in listed:
            return
        if time.monotonic() > end:
            raise CallFailed(f"the click on {ACT_LINK!r} did not reach {ACT_LANDS}")
        await asyncio.sleep(0.1)  # polling the server's own tab list, bounded by ``end``


async def measure_page(session: Session, origin: str, page: str, out: dict[str, Any]) -> None:
    """One page on one server: navigate, look, read, click "index" (``ACT_LINK``); each
    figure goes into ``out`` as soon as it is measured (a later failure keeps it)."""
    navigated = await session.call("navigate", url=f"{origin}{CORPUS}{page}")
    out["navigate"] = sizes(navigated)
    look = await session.call("snapshot")
    found = elements(session.server, look)
    acting = interactive(found)
    out["look"] = {
        **sizes(look),
        "refs": len(found),
        "interactive": len(acting),
        "by_role": dict(Counter(e.role for e in acting).most_common()),
    }
    out["look"]["bytes_per_element"] = _per(out["look"]["bytes"], len(acting))
    out["look"]["claude_bytes_per_element"] = _per(out["look"]["claude_bytes"], len(acting))
    if session.server == TABWARDEN:
        data = look.structured_content or {}
        out["look"]["truncated"] = bool(data.get("truncated"))
        if data.get("cut"):
            out["look"]["cut"] = data["cut"]
    out["elements"] = [[e.role, e.name] for e in acting]
    read = await session.call("read")
    out["read"] = sizes(read)
    link = next(
        (
            e
            for e in interactive(elements(session.server, read))
            if e.role == "link" and " ".join(e.name.split()) == ACT_LINK
        ),
        None,
    )
    if link is None:
        raise CallFailed(f"{session.server}: the read answer names no link {ACT_LINK!r}")
    clicked = await session.call("click", ref=link.ref, element=f'link "{ACT_LINK}"')
    out["act"] = sizes(clicked)
    out["acted"] = {"role": link.role, "name": link.name, "ref": link.ref}
    await _landed(session)  # after the measured calls: the check, not the step
    out["read_act"] = {
        k: out["read"][k] + out["act"][k] for k in ("bytes", "claude_bytes", "wire_bytes")
    }
    out["read_act"]["tokens"] = tokens(out["read_act"]["bytes"])


async def _server_pages(
    launcher: Launcher, server: str, origin: str, pages: Sequence[str]
) -> dict[str, dict[str, Any]]:
    results: dict[str, dict[str, Any]] = {}
    try:
        if server == TABWARDEN:
            launcher.start_tabwarden_browser()
        async with launcher.session(server) as session:
            for page in pages:
                print(f"bench corpus: {server} {page}", flush=True)
                results[page] = {}
                try:
                    await measure_page(session, origin, page, results[page])
                except Exception as exc:  # shown in the table, never dropped
                    results[page]["error"] = one_line(exc)
    except Exception as exc:
        for page in pages:
            results.setdefault(page, {"error": "session failed: " + one_line(exc)})
    return results


def run(
    servers: Sequence[str], pages: Sequence[str], chrome: str, keep: bool = False
) -> dict[str, dict[str, dict[str, Any]]]:
    """server → page → figures; each server on its own browser, one after the other."""
    from bench.site import serve_site

    root = Path(tempfile.mkdtemp(prefix="tabwarden-bench-corpus-"))
    out: dict[str, dict[str, dict[str, Any]]] = {}
    try:
        with serve_site() as origin:
            for server in servers:
                launcher = Launcher(
                    root=root, chrome=chrome, origin=origin, screen=SCREEN, no_confirm=True
                )
                try:
                    out[server] = asyncio.run(_server_pages(launcher, server, origin, pages))
                finally:
                    launcher.close()
    finally:
        if keep:
            print(f"bench corpus: kept {root}", flush=True)
        else:
            shutil.rmtree(root, ignore_errors=True)
    return out


def tools_list(servers: Sequence[str], chrome: str) -> dict[str, dict[str, int]]:
    """``tools/list`` bytes and tool count (bench/toolslist.py); tabwarden's alone without the
    peers, so a tabwarden-only run installs nothing."""
    from bench import toolslist

    if any(s in PEERS for s in servers):
        return toolslist.run(chrome)
    with tempfile.TemporaryDirectory(prefix="tabwarden-bench-corpus-tl-") as scratch:
        base = Path(scratch)
        for sub in ("run", "config"):
            (base / sub).mkdir(mode=0o700)
        env = {k: v for k, v in os.environ.items() if k != "XDG_RUNTIME_DIR"}
        env["TABWARDEN_RUNTIME_DIR"] = str(base / "run")
        env["TABWARDEN_CONFIG_DIR"] = str(base / "config")
        size, count = toolslist.measure([sys.executable, "-m", "tabwarden", "mcp"], env, base)
    return {"tabwarden": {"bytes": size, "tools": count}}


# -- the document and its table -----------------------------------------------------------


def summarize(
    measured: Mapping[str, Mapping[str, Mapping[str, Any]]], pages: Sequence[str]
) -> dict[str, Any]:
    """Per page: coverage of each peer's interactive elements by tabwarden's, and the ratio of
    bytes per element; over pages: medians and ranges. Pure."""
    rows = []
    ratios: dict[str, list[float]] = {"bytes": [], "claude_bytes": []}
    missing_total: dict[str, int] = {}
    for page in pages:
        row: dict[str, Any] = {"page": page}
        ours = measured.get(TABWARDEN, {}).get(page, {})
        for basis in ratios:
            key = "bytes_per_element" if basis == "bytes" else "claude_bytes_per_element"
            mine = (ours.get("look") or {}).get(key)
            theirs = [
                (measured[p].get(page, {}).get("look") or {}).get(key)
                for p in PEERS
                if p in measured
            ]
            best = min((t for t in theirs if t), default=None)
            ratio = round(mine / best, 3) if mine and best else None
            row["ratio" if basis == "bytes" else "claude_ratio"] = ratio
            if ratio is not None:
                ratios[basis].append(ratio)
        if "elements" in ours:
            mine_els = [Element(r, n, "") for r, n in ours["elements"]]
            row["coverage"] = {}
            for peer in PEERS:
                theirs_page = measured.get(peer, {}).get(page, {})
                if "elements" in theirs_page:
                    peer_els = [Element(r, n, "") for r, n in theirs_page["elements"]]
                    row["coverage"][peer] = coverage(peer_els, mine_els)
                    missing_total[peer] = (
                        missing_total.get(peer, 0) + row["coverage"][peer]["missing"]
                    )
        rows.append(row)
    summary: dict[str, Any] = {}
    for basis, values in ratios.items():
        summary[basis] = {
            "median_ratio": round(m, 3) if (m := median(values)) is not None else None,
            "min_ratio": min(values, default=None),
            "max_ratio": max(values, default=None),
            "pages": len(values),
        }
    summary["missing"] = missing_total
    summary["every_peer_element_referenced"] = (
        all(v == 0 for v in missing_total.values()) if missing_total else None
    )
    return {"pages": rows, "summary": summary}


def _n(value: Any, suffix: str = "") -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:,.1f}{suffix}" if value < 100 else f"{value:,.0f}{suffix}"
    return f"{value:,}{suffix}"


def _x(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}×"


def _servers_in(doc: Mapping[str, Any]) -> list[str]:
    return [s for s in SERVERS if s in doc["measured"]]


def table(doc: Mapping[str, Any]) -> str:
    """The Markdown tables of a corpus document (from the document alone)."""
    servers = _servers_in(doc)
    names = [TITLES[s] for s in servers]
    measured, pages = doc["measured"], doc["corpus"]["pages"]
    by_page = {row["page"]: row for row in doc["compared"]["pages"]}
    lines = []
    if doc.get("tools_list"):
        lines += ["| `tools/list` | bytes (≈ tokens) | tools |", "|---|---|---|"]
        for name, fig in doc["tools_list"].items():
            lines.append(
                f"| {name} | {fig['bytes']:,} (≈ {tokens(fig['bytes']):,}) | {fig['tools']} |"
            )
        lines.append("")

    def cell(server: str, page: str, step: str, field: str) -> Any:
        return (measured[server].get(page, {}).get(step) or {}).get(field)

    head = (
        ["page"]
        + [f"{n} look bytes (≈ tokens)" for n in names]
        + [f"{n} interactive refs" for n in names]
        + [f"{n} bytes / element" for n in names]
        + ["ratio vs best peer", "peer elements tabwarden misses"]
    )
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for page in pages:
        row = by_page.get(page, {})
        looks = []
        for s in servers:
            b = cell(s, page, "look", "bytes")
            looks.append(f"{_n(b)} (≈ {_n(tokens(b))})" if b is not None else "error")
        refs = [_n(cell(s, page, "look", "interactive")) for s in servers]
        per = [_n(cell(s, page, "look", "bytes_per_element")) for s in servers]
        cov = row.get("coverage") or {}
        misses = "; ".join(f"{TITLES[p]}: {c['missing']}" for p, c in cov.items()) or "—"
        ratio = row.get("ratio")
        lines.append(
            "| " + " | ".join([f"`{page}`", *looks, *refs, *per, _x(ratio), misses]) + " |"
        )
    lines.append("")
    head = (
        ["page"]
        + [f"{n} read + act bytes (≈ tokens)" for n in names]
        + [f"{n} navigate bytes" for n in names]
    )
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for page in pages:
        acts, navs = [], []
        for s in servers:
            b = cell(s, page, "read_act", "bytes")
            shown = f"{_n(b)} (≈ {_n(tokens(b))})" if b is not None else None
            acts.append(shown or ("error" if measured[s].get(page, {}).get("error") else "—"))
            navs.append(_n(cell(s, page, "navigate", "bytes")))
        lines.append("| " + " | ".join([f"`{page}`", *acts, *navs]) + " |")
    summary = doc["compared"]["summary"]
    lines.append("")
    for basis, label in (("bytes", "content"), ("claude_bytes", "Claude Code's (structured)")):
        s = summary[basis]
        lines.append(
            f"Bytes per interactive element referenced ({label} bytes), tabwarden ÷ best peer: "
            f"median {_x(s['median_ratio'])}, range {_x(s['min_ratio'])}–"
            f"{_x(s['max_ratio'])} over {s['pages']} pages."
        )
    if summary["missing"]:
        every = summary["every_peer_element_referenced"]
        lines.append(
            "Every interactive element a peer references is referenced by tabwarden: "
            + (
                "yes."
                if every
                else "no ("
                + ", ".join(f"{TITLES[p]}: {n} missing" for p, n in summary["missing"].items())
                + ")."
            )
        )
    errors = [
        f"- {TITLES[s]} `{p}`: {measured[s][p]['error']}"
        for s in servers
        for p in pages
        if measured[s].get(p, {}).get("error")
    ]
    if errors:
        lines += ["", "Errors:", *errors]
    return "\n".join(lines)


def _output(command: list[str]) -> str:
    try:
        # Fixed argv: dpkg-query, the Chromium binary, git — each asked for a version.
        done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)  # noqa: S603
    except OSError:
        return ""
    return done.stdout.strip()


def about(chrome: str) -> dict[str, Any]:
    from importlib.metadata import version

    from bench.peers import installed_version

    return {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "nproc": os.cpu_count(),
        "loadavg_at_start": [round(x, 2) for x in os.getloadavg()],
        "chromium": _output([chrome, "--version"]),
        "tabwarden": version("tabwarden"),
        "commit": _output(
            ["git", "-C", str(RESULTS.parent.parent), "rev-parse", "--short", "HEAD"]
        ),
        "peers": {name: installed_version(name) for name in PEERS.values()},
    }


class CorpusUnavailable(RuntimeError):
    """The documentation package is not installed."""


def corpus_version() -> str:
    if not (DOC_ROOT / PAGES[0]).is_file():
        raise CorpusUnavailable(
            f"no {DOC_ROOT / PAGES[0]}: install Debian's {DOC_PACKAGE} "
            f"(scripts/setup --dev does, or: apt-get install {DOC_PACKAGE})"
        )
    return _output(["dpkg-query", "-W", "-f=${Version}", DOC_PACKAGE]) or "unknown"


def _pages(values: list[str]) -> list[str]:
    if not values:
        return list(PAGES)
    chosen = [p.strip() for v in values for p in v.split(",") if p.strip()]
    out = []
    for p in chosen:
        if p.isdigit():
            out += list(PAGES[: int(p)])
        elif (DOC_ROOT / p).is_file() and ".." not in p.split("/"):
            out.append(p)
        else:
            raise SystemExit(f"bench corpus: no page {p!r} under {DOC_ROOT}")
    return list(dict.fromkeys(out))


def main(argv: Sequence[str]) -> int:
    from bench.peers import PeersUnavailable, ensure_peers
    from tabwarden.cli.browser import chrome_binary

    parser = argparse.ArgumentParser(
        prog="python -m bench corpus", description=__doc__.splitlines()[0]
    )
    parser.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="SERVER",
        help=f"only these servers {SERVERS} (repeat or comma-separate)",
    )
    parser.add_argument(
        "--pages",
        action="append",
        default=[],
        metavar="PAGE",
        help="these pages (paths under the documentation, or N: the first N "
        "of the corpus); default all eight",
    )
    parser.add_argument("--json", type=Path, help="default bench/results/<date>-corpus.json")
    parser.add_argument("--chrome", help="the Chromium binary (default Debian's)")
    parser.add_argument("--no-tools-list", action="store_true", help="skip the tools/list bytes")
    parser.add_argument("--keep", action="store_true", help="keep the scratch directory (logs)")
    parser.add_argument("--table", type=Path, metavar="JSON", help="print a saved run's tables")
    args = parser.parse_args(list(argv))
    if args.table:
        print(table(json.loads(args.table.read_text(encoding="utf-8"))))
        return 0
    only = [n.strip() for v in args.only for n in v.split(",") if n.strip()]
    unknown = [n for n in only if n not in SERVERS]
    if unknown:
        parser.error(f"unknown server(s) {unknown}; servers {SERVERS}")
    servers = [s for s in SERVERS if s in only] or list(SERVERS)
    try:
        version = corpus_version()
    except CorpusUnavailable as exc:
        print(f"bench corpus: {exc}", file=sys.stderr)
        return 2
    pages = _pages(args.pages)
    chrome = chrome_binary(args.chrome)
    if any(s in PEERS for s in servers):
        try:
            ensure_peers()
        except PeersUnavailable as exc:
            print(f"bench corpus: {exc}", file=sys.stderr)
            return 2
    doc: dict[str, Any] = {"machine": about(chrome)}
    doc["corpus"] = {
        "package": DOC_PACKAGE,
        "version": version,
        "root": str(DOC_ROOT),
        "pages": pages,
    }
    doc["method"] = METHOD
    doc["measured"] = run(servers, pages, chrome, keep=args.keep)
    doc["tools_list"] = None if args.no_tools_list else tools_list(servers, chrome)
    doc["compared"] = summarize(doc["measured"], pages)
    for by_page in doc["measured"].values():  # compared above; the lists would make it 200 kB
        for figures in by_page.values():
            figures.pop("elements", None)
    path = args.json or RESULTS / f"{doc['machine']['date'][:10]}-corpus.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    text = table(doc)
    path.with_suffix(".md").write_text(text + "\n", encoding="utf-8")
    print("\n" + text + f"\n\nbench corpus: wrote {path} and {path.with_suffix('.md')}")
    failed = any("error" in p for by_page in doc["measured"].values() for p in by_page.values())
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
