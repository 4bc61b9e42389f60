"""The catalogue tools' published JSON schemas, remembered across ``tabwarden mcp`` starts.

Generating the input and output schemas of every tool is most of the SDK's work when tools are
added (pydantic's JSON-schema generator builds a validator for every default it encodes): ~0.2 s
of CPU at every agent start, for the same answer every time the code is unchanged. ``SchemaCache``
keeps that answer in ``SCHEMA_CACHE_FILE`` of the private config directory under ``cache_key``:
a digest of the source files that define the catalogue's models and how tools are published
(``tools.py``), the versions of Python, pydantic and pydantic-core, and the status (device,
inode, size, mtime, ctime) of the SDK's and pydantic's schema code, so an edit or an upgrade is
a new key and a fresh generation.

The cache only ever saves work, and never decides what a call may do: arguments are still
validated by the SDK's argument model (built at every start) and again by the catalogue's own
model in ``GatedTool``; a cached schema only says what the client is told. A cache the private-fs
rules refuse (not ours, not 0600, a symlink …) is never read and never replaced; a damaged one,
or one missing a tool, is as if empty. Nothing here logs a schema.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import logging
import os
import sys
import typing
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from tabwarden import __version__
from tabwarden.private_fs import PrivateFsError, open_private_dir

log = logging.getLogger("tabwarden.mcp")

#: The private file in the config dir that remembers the tools' schemas between starts.
SCHEMA_CACHE_FILE = "tool-schemas.json"
SCHEMA_CACHE_VERSION = 1
#: The most of it that is ever read (the catalogue's schemas are ~0.2 MB).
SCHEMA_CACHE_MAX_BYTES = 4 * 1024 * 1024

#: One tool's published schemas: ``{"parameters": ..., "outputSchema": ...}``.
Schemas = dict[str, dict[str, Any]]


def _models_in(annotation: Any, seen: set[type[BaseModel]]) -> None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        if annotation in seen:
            return
        seen.add(annotation)
        for base in annotation.__mro__:
            if isinstance(base, type) and issubclass(base, BaseModel) and base is not BaseModel:
                seen.add(base)
        for field in annotation.model_fields.values():
            _models_in(field.annotation, seen)
        return
    for arg in typing.get_args(annotation):
        _models_in(arg, seen)


def _file_status(path: str) -> list[int]:
    st = os.stat(path)
    return [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


def cache_key(models: Iterable[type[BaseModel]], *publishers: str) -> str:
    """The digest naming one generation of the schemas of ``models`` (every model reachable
    from them through their fields counts) as ``publishers`` (the source files of the code that
    turns models into published schemas) publish them."""
    import pydantic.json_schema
    import pydantic_core
    from mcp.server.mcpserver.utilities import func_metadata

    seen: set[type[BaseModel]] = set()
    for model in models:
        _models_in(model, seen)
    sources = sorted({inspect.getfile(m) for m in seen if not m.__module__.startswith("pydantic")})
    digest = hashlib.sha256()
    header = {
        "cache": SCHEMA_CACHE_VERSION,
        "tabwarden": __version__,
        "python": sys.version,
        "pydantic": pydantic.VERSION,
        "pydantic_core": pydantic_core.__version__,
        "sdk": [_file_status(func_metadata.__file__), _file_status(pydantic.json_schema.__file__)],
    }
    digest.update(json.dumps(header, sort_keys=True).encode())
    for source in [*sources, *publishers]:
        digest.update(b"\0" + source.encode() + b"\0")
        digest.update(Path(source).read_bytes())
    return digest.hexdigest()


class SchemaCache:
    """``SCHEMA_CACHE_FILE`` in the private ``config_dir``."""

    def __init__(self, config_dir: Path) -> None:
        self.config_dir = config_dir

    def load(self, key: str, names: Iterable[str]) -> dict[str, Schemas] | None:
        """Every tool in ``names`` with its schemas when the cache holds ``key`` and all of them,
        else None."""
        try:
            directory = open_private_dir(self.config_dir, create=False)
            if directory is None:
                return None
            with directory:
                found = directory.read(SCHEMA_CACHE_FILE, SCHEMA_CACHE_MAX_BYTES)
        except (PrivateFsError, OSError) as exc:
            log.warning("tool schema cache not used: %s", exc)
            return None
        if found is None:
            return None
        try:
            document = json.loads(found[0])
        except ValueError:
            return None
        if (
            not isinstance(document, dict)
            or document.get("version") != SCHEMA_CACHE_VERSION
            or document.get("key") != key
            or not isinstance(document.get("tools"), dict)
        ):
            return None
        tools: dict[str, Any] = document["tools"]
        out: dict[str, Schemas] = {}
        for name in names:
            entry = tools.get(name)
            if not (
                isinstance(entry, dict)
                and isinstance(entry.get("parameters"), dict)
                and isinstance(entry.get("outputSchema"), dict)
            ):
                return None
            out[name] = {"parameters": entry["parameters"], "outputSchema": entry["outputSchema"]}
        return out

    def store(self, key: str, tools: dict[str, Schemas]) -> None:
        data = json.dumps({"version": SCHEMA_CACHE_VERSION, "key": key, "tools": tools}).encode()
        try:
            directory = open_private_dir(self.config_dir, create=True)
            if directory is None:
                return
            with directory:
                directory.write_atomic(SCHEMA_CACHE_FILE, data)
        except (PrivateFsError, OSError) as exc:
            log.warning("tool schema cache not written: %s", exc)
