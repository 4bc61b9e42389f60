"""The MCP tool catalogue as data: every tool ``tabwarden mcp`` serves, declared once.

A ``ToolSpec`` says all a client, a reviewer and the README need about one tool: its name, title
and one-line description; its argument model (whose fields are the tool's input schema) and its
result model (the output schema); its annotations; the gate that guards it and its risk; and how
a call is made — relayed to the extension as the action of the same name (docs/protocol.md: the
action names are the MCP tool names' browser halves), or answered locally in this process.

Each tool is declared in the module of its family, which mirrors the extension's handler family
(``capture.py`` ↔ ``extension/handlers/capture.js``; ``local.py`` holds the tools answered in this
process); the vocabulary, shared argument and result models and the lineage readers have their
own modules. This package gathers the families' ``TOOLS`` into ``CATALOGUE``. ``tools.py``
registers the MCP tools from it in one loop, each behind the hop-1 gate; ``generate.py`` writes
every reference derived from it (the tools snapshot, the README's Tools table, docs/protocol.md's
catalogue, the extension's ``worker/catalogue.js``) and a test holds them to it. Tool and action
names are string literals here and nowhere else in the server.

Pure declarations: no I/O, no bridge, no trust record. Nothing here may make a policy decision
(the trust record, the host and the extension make them), and nothing here may read a file.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType, ModuleType

from . import (
    capture,
    emulate,
    fetch,
    files,
    frames,
    interact,
    keyboard,
    local,
    nav,
    page,
    read,
    tabs,
)
from . import input as input_family
from .arguments import (
    Acting as Acting,
)
from .arguments import (
    Arguments as Arguments,
)
from .arguments import (
    ElementArgs as ElementArgs,
)
from .arguments import (
    ElementNamed as ElementNamed,
)
from .arguments import (
    Model as Model,
)
from .arguments import (
    Observe as Observe,
)
from .arguments import (
    TabArgs as TabArgs,
)
from .arguments import (
    WaitFor as WaitFor,
)
from .files import ViewportArgs as ViewportArgs
from .interact.reading import FindArgs as FindArgs
from .lineage import _nested_models as _nested_models
from .lineage import declared_texts, undeclared_lineage
from .results import Done as Done
from .vocabulary import (
    ACT as ACT,
)
from .vocabulary import (
    Asks,
    BadArguments,
    FrameOutput,
    Gate,
    Lineage,
    Local,
    Reference,
    Relay,
    Risk,
    Save,
    ToolSpec,
)

__all__ = [
    "BY_NAME",
    "CATALOGUE",
    "FAMILIES",
    "FAMILY",
    "RELAYED_ACTIONS",
    "Arguments",
    "Asks",
    "BadArguments",
    "FrameOutput",
    "Gate",
    "Lineage",
    "Local",
    "Reference",
    "Relay",
    "Risk",
    "Save",
    "ToolSpec",
    "declared_texts",
    "family_of",
    "undeclared_lineage",
]

#: The tool families, each a module with its ``TOOLS``; a relayed tool's family names the
#: extension's handler module that serves it (``extension/handlers/<family>.js``).
FAMILIES: tuple[ModuleType, ...] = (
    local,
    tabs,
    page,
    nav,
    read,
    interact,
    input_family,
    frames,
    keyboard,
    fetch,
    capture,
    files,
    emulate,
)

#: The order ``tools/list`` has always listed these tools in; a tool not named here follows
#: them, in its family's order.
LISTED_FIRST: tuple[str, ...] = (
    "bridge_status",
    "browser_list",
    "tab_list",
    "tab_open",
    "tab_focus",
    "tab_close",
    "tab_close_all",
    "page_navigate",
    "page_history",
    "page_reload",
    "page_follow",
    "page_text",
    "page_markdown",
    "page_snapshot",
    "page_find",
    "page_scrape",
    "page_screenshot",
    "page_get_state",
    "page_wait_for",
    "page_click",
    "page_fill",
    "page_press",
    "page_select",
    "page_check",
    "page_hover",
    "page_mouse",
    "page_dialog",
    "page_type",
    "page_keys",
    "page_scroll",
    "page_clear",
    "page_settle",
    "page_reveal",
    "cookie_get",
    "storage_get",
    "page_eval",
    "page_upload",
    "page_frames",
    "page_fetch",
    "page_console",
    "page_network",
    "page_pdf",
    "page_wait_download",
    "page_viewport",
)


def family_of(module: ModuleType) -> str:
    """A family module's name: its extension handler module's (``handlers/<family>.js``)."""
    return module.__name__.rsplit(".", 1)[1]


def _gather(families: tuple[ModuleType, ...]) -> tuple[ToolSpec, ...]:
    specs: list[ToolSpec] = [spec for module in families for spec in module.TOOLS]
    rank = {name: i for i, name in enumerate(LISTED_FIRST)}
    unknown = sorted(set(rank) - {spec.name for spec in specs})
    if unknown:
        raise ValueError(f"LISTED_FIRST names tools no family declares: {', '.join(unknown)}")
    indexed = sorted(enumerate(specs), key=lambda p: (rank.get(p[1].name, len(rank)), p[0]))
    return tuple(spec for _, spec in indexed)


CATALOGUE: tuple[ToolSpec, ...] = _gather(FAMILIES)

#: Each tool's family (``family_of``), by tool name.
FAMILY: Mapping[str, str] = MappingProxyType(
    {spec.name: family_of(module) for module in FAMILIES for spec in module.TOOLS}
)


def _index(specs: tuple[ToolSpec, ...]) -> dict[str, ToolSpec]:
    index: dict[str, ToolSpec] = {}
    for spec in specs:
        if spec.name in index:
            raise ValueError(f"the catalogue declares {spec.name} twice")
        undeclared = undeclared_lineage(spec.arguments)
        if undeclared:
            raise TypeError(
                f"{spec.name}: every argument that can carry text declares its Lineage "
                f"(catalogue.Lineage); these do not: {', '.join(undeclared)}"
            )
        file_arg = spec.call.sandbox_file if isinstance(spec.call, Relay) else None
        if file_arg is not None and file_arg not in spec.arguments.model_fields:
            raise ValueError(f"{spec.name}: sandbox_file {file_arg!r} is not one of its arguments")
        save_arg = spec.call.save_file if isinstance(spec.call, Relay) else None
        if save_arg is not None and save_arg not in spec.arguments.model_fields:
            raise ValueError(f"{spec.name}: save_file {save_arg!r} is not one of its arguments")
        docs = spec.docs
        if (docs.listed_with is None) == (not docs.does):
            raise ValueError(f"{spec.name}: docs say what it does, or which row it is listed with")
        if spec.action is not None and (docs.args is None or docs.result is None):
            raise ValueError(f"{spec.name}: docs give a relayed tool's args and result")
        index[spec.name] = spec
    for spec in index.values():
        row = index.get(spec.docs.listed_with or spec.name)
        if row is None or row.docs.listed_with is not None:
            raise ValueError(f"{spec.name}: listed with {spec.docs.listed_with}, which has no row")
    return index


#: Every tool by name (read-only).
BY_NAME: Mapping[str, ToolSpec] = MappingProxyType(_index(CATALOGUE))
#: The extension actions the server relays (the extension must have a handler for each).
RELAYED_ACTIONS: frozenset[str] = frozenset(s.action for s in CATALOGUE if s.action is not None)
