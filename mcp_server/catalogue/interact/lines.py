"""page_snapshot's line form (docs/adr/0016): one line per row, indented by depth, only what is
set. The extension's reply arrives masked (worker/mask.js masks every reply, a link's ``href``
by key, before it leaves the extension); this module only re-encodes that masked reply, so a
line can hold nothing the JSON did not. Pure: no I/O.

A row's line (grammar in docs/protocol.md, "page_snapshot's line form")::

    <2·depth spaces>- <role>[ "<name>"][ @eN][ <attr>]…

- ``<name>`` is a JSON string literal, left out when empty;
- the ref (``@eN``) is left out only for a text row (role ``text``, ``text: true``);
- each ``<attr>`` is ``key`` (a state that is true), or ``key=value``: ``level=2``,
  ``checked=mixed``, ``href=…``, ``value=…``, ``source=dom``, and ``name.chars=N`` /
  ``value.chars=N`` (the field is shortened, ending in …; N is its full length: page_text /
  page_get_state with the ref read it whole). A value is bare when it holds no space, quote
  or backslash, else a JSON string literal.

States that are false are left out (an absent state is false or does not apply); an empty value
is left out; a value over ``VALUE_CHARS`` is cut (ending in …) with ``value.chars``.

Fewer bytes per row, nothing an action needs lost (``fold``):

- an ``href`` at the page's origin (when the answer says its ``url``) is written as its path
  from the page's directory when under it (``href=os.path.html``), else as its path
  (``href=/docs/a.html``), one into the page itself as its fragment (``href=#intro``); an
  ``href`` that would read as another origin's (``//host/…``) or as a scheme (``a:b``) stays
  as it was. ``decode`` with the page's url resolves them back;
- a bare structural row is left out: one whose role is structure (``STRUCTURE``: inline
  wrappers such as ``code`` or ``emphasis``, lists and list items, terms, definitions, layout
  tables, separators, …; never a role a person acts on) with nothing of its own (no name,
  state, value, href, shortened field or source) and no row under it once its own bare rows
  are out. Its line would say only a ref to an empty element; ``format: "json"`` lists it.
  When the answer left rows out (``cut``, ``truncated``) only inline wrappers and separators
  are left out so: an empty list or table may be one whose rows were cut, its ref their scope;
- a list item's ``level`` is left out: it is the list's nesting, which the indentation says;
- a structural row (list item, table row or cell, term, definition) leaves out its name when the
  row right under it (its first child) has the same name, or that name followed by a separator
  (one to three punctuation or symbol characters after a space: ``modules |``, ``Python »``):
  a list item of one link says it once;
- then a list item holding one link and nothing else (no name, state or other row) is left out,
  its link written at the list item's depth: a list of links reads as its links.

Every row that has a row under it keeps its ref, so any part of the page can still be the scope
of ``page_snapshot {ref}``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

#: Longest value a line shows; longer values end in … and say their length (``value.chars``).
VALUE_CHARS = 80
#: Indentation per depth.
INDENT = "  "
#: What reads a shortened field whole, with the row's ref (as the extension's rows say).
READ_WITH = {"name": "page_text", "value": "page_get_state", "text": "page_text"}

_BARE = re.compile(r'[^\s"\\]+')
_KEY = re.compile(r"[A-Za-z][A-Za-z0-9_.-]*")
_REF = re.compile(r"@[A-Za-z0-9_-]+")
_DECODER = json.JSONDecoder()
#: Rows whose name is their content's: left out when their first child's line says it.
_SAYS_CHILDS_NAME = frozenset({"listitem", "row", "cell", "gridcell", "term", "definition"})
#: Inline wrappers (text styling): nothing to act on.
_INLINE = frozenset(
    {"code", "emphasis", "strong", "subscript", "superscript", "mark", "deletion", "insertion"}
)
#: Structural roles: a row of one of these with nothing of its own and no row under it is left
#: out (``fold``). Never a role a person acts on (links, buttons, fields, options, tabs, menu
#: items, tree items, grid rows and cells, column headers that may sort, …).
STRUCTURE = _INLINE | frozenset(
    {
        "listitem", "list", "term", "definition", "DescriptionList", "separator", "paragraph",
        "blockquote", "note", "figure", "caption", "group", "generic", "LayoutTable",
        "LayoutTableRow", "LayoutTableCell", "cell", "rowgroup", "table",
    }
)  # fmt: skip
#: Structural rows that hold no rows a cut could have left out: bare, they go even when cut.
_NEVER_SCOPES = _INLINE | frozenset({"separator"})
#: Fields that make a row more than a wrapper.
_OWN = ("name", "states", "value", "href", "level", "shortened", "source")
#: What may follow a child's name in its structural parent's name: a separator the page draws
#: between items (`` |``, `` »``, `` ·``).
_SEPARATOR = re.compile(r"\s+[^\w\s]{1,3}")


#: Characters some readers take for a line break (Python's splitlines, JavaScript's U+2028/9):
#: escaped inside a quoted string, so a row is always one line however it is split.
_BREAKS = {c: f"\\u{ord(c):04x}" for c in "\x85\u2028\u2029"}


def _quoted(s: str) -> str:
    out = json.dumps(s, ensure_ascii=False)
    return "".join(_BREAKS.get(c, c) for c in out) if any(c in out for c in _BREAKS) else out


def _attr(value: str) -> str:
    return value if _BARE.fullmatch(value) else _quoted(value)


def _chars(row: Mapping[str, Any], field: str) -> int | None:
    shortened = row.get("shortened")
    if isinstance(shortened, Mapping) and isinstance(shortened.get(field), Mapping):
        chars = shortened[field].get("chars")
        if isinstance(chars, int):
            return chars
    return None


def _bases(url: object) -> tuple[str, str, str] | None:
    """The page's origin, its directory (the origin and its path to the last ``/``) and its
    address without fragment, when ``url`` is an http(s) URL."""
    if not isinstance(url, str):
        return None
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.netloc or "@" in parts.netloc:
        return None
    origin = f"{parts.scheme}://{parts.netloc}"
    return origin, origin + (parts.path or "/").rsplit("/", 1)[0] + "/", url.split("#", 1)[0]


#: What an href starts with when it is not a path relative to the page's directory.
_NOT_RELATIVE = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:|[/?#]")


def short_href(href: str, url: object) -> str:
    """``href`` as the line writes it on the page at ``url``: its fragment when it points into
    the page, its path from the page's directory when under it (one that would read as a scheme
    or another form is not), its path when at the page's origin, else whole."""
    bases = _bases(url)
    if bases is None:
        return href
    origin, folder, page = bases
    if href.startswith(page + "#"):
        return href[len(page) :]
    rest = href[len(folder) :]
    if href.startswith(folder) and rest and not _NOT_RELATIVE.match(rest):
        return rest
    if href.startswith(origin + "/") and not href.startswith(origin + "//"):
        return href[len(origin) :]
    return href


def full_href(href: str, url: object) -> str:
    """What ``short_href`` wrote, back as the absolute href, on the page at ``url``."""
    bases = _bases(url)
    if bases is None:
        return href
    origin, folder, page = bases
    if href.startswith("#"):
        return page + href
    if href.startswith("/") and not href.startswith("//"):
        return origin + href
    return href if not href or _NOT_RELATIVE.match(href) else folder + href


def fold(rows: Sequence[Mapping[str, Any]], cut: bool = False) -> list[Mapping[str, Any]]:
    """The rows the lines show (module docstring): bare structure, list items' levels and
    repeated names out, lone links at their list item's depth. ``cut``: the answer left rows
    out, so a bare container (a list, a table, …: anything but an inline wrapper or a
    separator) may be empty only because its rows were cut, and its ref is the scope that lists
    them: it stays."""
    out: list[Mapping[str, Any]] = []
    shown = _unbare(rows, _NEVER_SCOPES if cut else STRUCTURE)
    for i, row in enumerate(shown):
        depth = _depth(row)
        after = shown[i + 1] if i + 1 < len(shown) else None
        if row.get("role") == "listitem" and "level" in row:
            row = {k: v for k, v in row.items() if k != "level"}
        name = row.get("name")
        if (
            name
            and row.get("role") in _SAYS_CHILDS_NAME
            and after is not None
            and _depth(after) == depth + 1
            and _says(name, after.get("name"))
            and not _chars(row, "name")
        ):
            row = {k: v for k, v in row.items() if k != "name"}
        out.append(row)
    return _lone_links(out)


def _says(name: str, childs: object) -> bool:
    """The child's name says ``name``: it is ``name``, or ``name`` is it and a separator."""
    if not isinstance(childs, str) or not childs or not name.startswith(childs):
        return False
    rest = name[len(childs) :]
    return not rest or _SEPARATOR.fullmatch(rest) is not None


def bare(row: Mapping[str, Any], roles: frozenset[str] = STRUCTURE) -> bool:
    """A structural row (of ``roles``) with nothing of its own (a list item's level aside:
    ``fold``)."""
    return row.get("role") in roles and not any(
        row.get(k) for k in _OWN if not (k == "level" and row.get("role") == "listitem")
    )


def _unbare(rows: Sequence[Mapping[str, Any]], roles: frozenset[str]) -> list[Mapping[str, Any]]:
    """``rows`` without their bare rows that have no row under them once their own are out."""
    keep = [True] * len(rows)
    next_depth = -1  # the depth of the nearest row kept after this one (-1: none)
    for i in range(len(rows) - 1, -1, -1):
        depth = _depth(rows[i])
        if bare(rows[i], roles) and next_depth <= depth:
            keep[i] = False
        else:
            next_depth = depth
    return [r for r, k in zip(rows, keep, strict=True) if k]


def _lone_links(rows: list[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """A list item holding one link and nothing else (no name, state or row of its own; its
    ``level``, the list's nesting, is what the link's depth then says) left out, its link
    written at its depth."""
    out: list[Mapping[str, Any]] = []
    skip = False
    for i, row in enumerate(rows):
        if skip:
            skip = False
            out.append({**row, "depth": _depth(row) - 1})
            continue
        depth = _depth(row)
        link = rows[i + 1] if i + 1 < len(rows) else None
        after = rows[i + 2] if i + 2 < len(rows) else None
        if (
            row.get("role") == "listitem"
            and not any(row.get(k) for k in _OWN if k != "level")
            and link is not None
            and link.get("role") == "link"
            and _depth(link) == depth + 1
            and (after is None or _depth(after) <= depth)
        ):
            skip = True
            continue
        out.append(row)
    return out


def _depth(row: Mapping[str, Any]) -> int:
    depth = row.get("depth")
    return depth if isinstance(depth, int) and depth > 0 else 0


def encode_row(row: Mapping[str, Any], url: object = None) -> str:
    """One snapshot row (the JSON form's item) as its line (hrefs shortened against ``url``,
    the page's, when given)."""
    depth = row.get("depth")
    indent = INDENT * (depth if isinstance(depth, int) and depth > 0 else 0)
    parts = [indent + "-", _attr(str(row.get("role") or "")) if row.get("role") else '""']
    name = row.get("name") or ""
    if name:
        parts.append(_quoted(name))
    if row.get("ref"):
        parts.append(str(row["ref"]))
    if isinstance(row.get("level"), int):
        parts.append(f"level={row['level']}")
    states = row.get("states") or {}
    for key, v in states.items():
        if v is True:
            parts.append(key)
        elif isinstance(v, str) and v:
            parts.append(f"{key}={_attr(v)}")
    if row.get("href"):
        parts.append(f"href={_attr(short_href(str(row['href']), url))}")
    value = row.get("value")
    value_chars = _chars(row, "value")
    if isinstance(value, str) and value:
        if len(value) > VALUE_CHARS:
            value_chars = value_chars or len(value)
            value = value[: VALUE_CHARS - 1] + "…"
        parts.append(f"value={_attr(value)}")
        if value_chars is not None:
            parts.append(f"value.chars={value_chars}")
    name_chars = _chars(row, "name")
    if name_chars is not None:
        parts.append(f"name.chars={name_chars}")
    if row.get("source"):
        parts.append(f"source={_attr(str(row['source']))}")
    return " ".join(parts)


def encode(rows: Iterable[Mapping[str, Any]], url: object = None, cut: bool = False) -> str:
    """The rows' lines, folded (``fold``; ``cut``: the answer left rows out), joined by
    newlines (no trailing newline); hrefs shortened against ``url``, the page's, when given."""
    return "\n".join(encode_row(r, url) for r in fold(list(rows), cut))


def in_format(answer: Mapping[str, Any], fmt: str) -> dict[str, Any]:
    """A snapshot answer (the extension's masked reply: page_snapshot's, or an action's
    observation) in the form asked for: ``json`` as it came; ``lines`` (the default) with its
    rows re-encoded under ``lines`` instead of ``snapshot``."""
    if fmt == "json":
        return dict(answer)
    rows = answer.get("snapshot")
    out = {k: v for k, v in answer.items() if k != "snapshot"}
    cut = bool(answer.get("cut") or answer.get("truncated"))
    out["lines"] = encode(rows if isinstance(rows, list) else [], answer.get("url"), cut)
    return out


class LineError(ValueError):
    """A line that is not of the form above."""


def _token(line: str, i: int) -> tuple[str, int, bool]:
    """The token at ``i`` (a JSON string when it starts with a quote), where the next one
    starts, and whether it was quoted."""
    if line[i] == '"':
        s, end = _DECODER.raw_decode(line, i)
        return s, end, True
    m = _BARE.match(line, i)
    if m is None:
        raise LineError(f"no token at {i}: {line!r}")
    return m.group(), m.end(), False


def decode_row(line: str, url: object = None) -> dict[str, Any]:
    """A line back into the fields it carries: ``role``, ``depth``, and those set of ``name``,
    ``ref``, ``level``, ``states``, ``href`` (absolute again against ``url``, the page's),
    ``value``, ``source``, ``shortened``."""
    stripped = line.lstrip(" ")
    indent = len(line) - len(stripped)
    if not stripped.startswith("- ") or indent % len(INDENT):
        raise LineError(f"not a row line: {line!r}")
    row: dict[str, Any] = {"depth": indent // len(INDENT)}
    i = indent + 2
    tokens: list[tuple[str, bool, str | None]] = []  # (text, quoted, key for key=value)
    while i < len(line):
        if line[i] == " ":
            i += 1
            continue
        key = None
        m = _KEY.match(line, i)
        if m is not None and m.end() < len(line) and line[m.end()] == "=" and line[i] != '"':
            key, i = m.group(), m.end() + 1
        text, i, quoted = _token(line, i)
        tokens.append((text, quoted, key))
    if not tokens or tokens[0][2] is not None:
        raise LineError(f"a row line starts with its role: {line!r}")
    row["role"] = tokens[0][0]
    rest = tokens[1:]
    if rest and rest[0][1] and rest[0][2] is None:
        row["name"] = rest[0][0]
        rest = rest[1:]
    if rest and rest[0][2] is None and not rest[0][1] and _REF.fullmatch(rest[0][0]):
        row["ref"] = rest[0][0]
        rest = rest[1:]
    states: dict[str, bool | str] = {}
    shortened: dict[str, dict[str, Any]] = {}
    for text, quoted, key in rest:
        if key is None:
            if quoted:
                raise LineError(f"a quoted word out of place: {line!r}")
            states[text] = True
        elif key == "level":
            row["level"] = int(text)
        elif key == "href":
            row[key] = full_href(text, url)
        elif key in ("value", "source"):
            row[key] = text
        elif key in ("name.chars", "value.chars"):
            field = key.split(".", 1)[0]
            shortened[field] = {"chars": int(text), "readWith": READ_WITH[field]}
        else:
            states[key] = text
    if states:
        row["states"] = states
    if shortened:
        row["shortened"] = shortened
    return row


def decode(lines: str, url: object = None) -> list[dict[str, Any]]:
    """Every row line of ``lines`` (blank lines skipped); hrefs resolved against ``url``."""
    return [decode_row(line, url) for line in lines.split("\n") if line.strip()]


def text_block(answer: Mapping[str, Any]) -> str:
    """The result's text block in the line form: a header line per field the structured content
    carries beside its lines (url, title, mode, fallback, cut, note, text), then ``snapshot:``
    and the lines. Every field of the structured content is in it (ADR 0016)."""
    out = [f"url: {answer.get('url', '')}", f"title: {_quoted(str(answer.get('title', '')))}"]
    if answer.get("mode"):
        out.append(f"mode: {answer['mode']}")
    if answer.get("fallback"):
        out.append(f"fallback: {answer['fallback']}")
    cut = answer.get("cut")
    if isinstance(cut, Mapping):
        out.append(f"cut: {cut_sentence(cut)}")
    elif answer.get("truncated"):
        out.append("cut: the listing stopped early (truncated)")
    if answer.get("note"):
        out.append(f"note: {answer['note']}")
    if isinstance(answer.get("text"), str):
        chars = _chars(answer, "text")
        out.append(f"text: {_quoted(answer['text'])}")
        if chars is not None:
            out.append(f"text.chars: {chars}")
    out.append("snapshot:")
    lines = answer.get("lines") or ""
    return "\n".join(out) + ("\n" + lines if lines else "")


def cut_sentence(cut: Mapping[str, Any]) -> str:
    """What a cut left out, in one line: how many rows, how many interactive, and the rest."""
    rows, inter = cut.get("rows", 0), cut.get("interactive", 0)
    return f"{rows} rows left out ({inter} interactive): {cut.get('rest', '')}"
