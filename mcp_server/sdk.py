"""Import the MCP SDK's server half without its package initialisers.

``import mcp.server.mcpserver`` first runs ``mcp/__init__.py``, which imports the SDK's client
(``Client``, ``ClientSession``, the stdio client …), and ``mcp/server/__init__.py``, which
imports response caching and the low-level server's re-exports — none of which ``tabwarden
mcp`` uses, all of it paid on every agent start. ``defer_package_inits`` puts those two
packages in ``sys.modules`` as modules whose submodules import normally but whose own
``__init__`` runs only when something asks the package for a name it defines (``mcp.Client``,
``from mcp.server import Server``): then it runs in full, so nothing ever sees a package with
names missing. Only ``tabwarden mcp``'s process calls it, before its first SDK import; it must
never be called after ``mcp`` was imported (it then does nothing).

It also keeps ``uvicorn`` out (``NEVER_IMPORTED``): only the SDK's HTTP transports run it, and
``sse_starlette`` (which the SDK's server imports) merely patches it when it is importable —
48 modules, ~3 MB of every session's memory and tens of milliseconds of its start, for a
server that speaks stdio alone. Importing it in that process then fails (``ImportError``).

``defer_argument_models`` (called by ``server.build_server``) makes the SDK build each tool's
argument model (``func_metadata``'s ``ArgModelBase`` subclass, one per tool, made at every start)
on that tool's first call instead of at start, as the catalogue's own models are
(``catalogue.Model``): a session pays only for the tools it calls. Pydantic's ``defer_build``
changes when a validator is built, never what it accepts.

And it runs ``httpx2``'s ``__init__`` only when something asks it for a name (``LAZY``, deferred
the same way): the SDK's resource types import it at their top for ``HttpResource.read`` alone,
which tabwarden never serves — ~45 ms of CPU at every start. (``importlib.util.LazyLoader`` does
not do here: the import statement itself reads the module's ``__spec__``, which loads it.)
"""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType

#: The packages whose ``__init__`` is deferred, parents first.
DEFERRED = ("mcp", "mcp.server")
#: What ``tabwarden mcp`` (stdio only) never imports: the SDK's HTTP transports' server.
NEVER_IMPORTED = ("uvicorn",)
#: Imported at the top of SDK modules ``tabwarden mcp`` loads, used only in calls it never makes.
LAZY = ("httpx2",)


def defer_package_inits() -> bool:
    """Install the deferred packages; False (and nothing changed) when the SDK is already
    imported or its layout is not the expected one."""
    if any(name in sys.modules for name in (*DEFERRED, *NEVER_IMPORTED, *LAZY)):
        return False
    staged: list[tuple[str, ModuleType]] = []
    for name in DEFERRED:
        spec = importlib.util.find_spec(name) if not staged else _child_spec(name, staged[-1][1])
        if spec is None or spec.loader is None or spec.submodule_search_locations is None:
            return False
        staged.append((name, _deferred(spec)))
    for name in NEVER_IMPORTED:
        sys.modules[name] = None  # type: ignore[assignment]  # the import system's "not here"
    for name in LAZY:
        _lazy(name)
    for name, module in staged:
        sys.modules[name] = module
        parent, _, child = name.rpartition(".")
        if parent:
            setattr(sys.modules[parent], child, module)
    return True


def defer_argument_models() -> bool:
    """Every SDK argument model made from now on builds its validator at its first use; False
    (nothing changed) when the SDK no longer makes them from ``ArgModelBase``
    (tests/mcp_server/test_catalogue_lazy.py fails then)."""
    from mcp.server.mcpserver.utilities import func_metadata
    from pydantic import BaseModel

    base = getattr(func_metadata, "ArgModelBase", None)
    if not (isinstance(base, type) and issubclass(base, BaseModel)):
        return False
    # A model's config is its bases' merged with its own when its class is made, so this
    # reaches every argument model made after it (none is made before build_server).
    base.model_config = {**base.model_config, "defer_build": True}
    return True


def _lazy(name: str) -> None:
    """``name`` in ``sys.modules`` as a deferred module (``_deferred``); nothing when not found."""
    spec = importlib.util.find_spec(name)
    if spec is not None and spec.loader is not None:
        sys.modules[name] = _deferred(spec)


def _child_spec(name: str, parent: ModuleType) -> importlib.machinery.ModuleSpec | None:
    for finder in sys.meta_path:
        find = getattr(finder, "find_spec", None)
        if find is None:
            continue
        spec = find(name, parent.__path__)
        if spec is not None:
            return spec  # type: ignore[no-any-return]
    return None


def _deferred(spec: importlib.machinery.ModuleSpec) -> ModuleType:
    module = importlib.util.module_from_spec(spec)
    loader = spec.loader
    assert loader is not None  # noqa: S101 (checked by the caller)
    state = {"ran": False}

    def __getattr__(attr: str) -> object:  # noqa: N807 (the module attribute hook, PEP 562)
        if state["ran"] or attr.startswith("__"):
            raise AttributeError(f"module {spec.name!r} has no attribute {attr!r}")
        state["ran"] = True
        del module.__dict__["__getattr__"]
        loader.exec_module(module)  # the package's own __init__, in full, in this module
        return getattr(module, attr)

    module.__dict__["__getattr__"] = __getattr__
    return module
