"""The two files of a registration on disk: reading what is there, and writing ours.

A browser's NativeMessagingHosts directory is opened through ``tabwarden.private_fs`` (ours,
exactly 0700, not a symlink) and our two names are read and written relative to it: the manifest
``dev.tabwarden.host.json`` (0600) and the wrapper ``dev.tabwarden.host.sh`` (0700). An entry that
is a symlink, not a regular file or someone else's is ``unsafe``: never read, never written
through, never removed. One that is ours but has a group/other bit or several links is
``foreign``: not read, so not verifiably ours. This module must never follow a symlink, never
touch a name other than those two, and never decide policy (``--force``, what to remove): it
reports states and carries out the writes ``tabwarden.cli.install`` decides on.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from tabwarden.cli.install.wrapper import WRAPPER_MARKER, parse_wrapper
from tabwarden.manifests import HOST_NAME
from tabwarden.private_fs import (
    EntryTooLarge,
    PrivateDir,
    PrivateFsFailure,
    UnsafeEntry,
    open_private_dir,
)

__all__ = [
    "MANIFEST_FILENAME",
    "MANIFEST_MODE",
    "WRAPPER_FILENAME",
    "WRAPPER_MODE",
    "Inspection",
    "State",
    "inspect_manifest",
    "inspect_wrapper",
    "open_registration_dir",
]

MANIFEST_FILENAME = f"{HOST_NAME}.json"
WRAPPER_FILENAME = f"{HOST_NAME}.sh"
WRAPPER_MODE = 0o700
#: Owner-only like every private file (Chrome reads it as the same user).
MANIFEST_MODE = 0o600
_MAX_READ = 64 * 1024

State = Literal["absent", "ours", "modified", "foreign", "unsafe"]


@dataclass(frozen=True, slots=True)
class Inspection:
    """What is at one of our two names, without having trusted any of it."""

    state: State
    reason: str = ""
    #: The parsed manifest, when it is a JSON object we read.
    manifest: dict[str, object] | None = None
    #: ``(python, browser)`` from a wrapper that is byte-for-byte ours.
    wrapper: tuple[str, str] | None = None
    mode: int = 0
    #: A file of ours refused only for its mode or links: ``--force`` may remove it first.
    loose: bool = False


def open_registration_dir(directory: Path, *, create: bool) -> PrivateDir | None:
    """The verified directory, or None when missing; ``UnsafeEntry`` / ``PrivateFsError``."""
    return open_private_dir(directory, create=create)


def _read(directory: PrivateDir | None, name: str) -> tuple[Inspection | None, bytes, int]:
    """The bytes at ``name``; an Inspection instead when they are absent or must not be read."""
    if directory is None:
        return Inspection("absent"), b"", 0
    try:
        found = directory.read(name, _MAX_READ)
    except UnsafeEntry as exc:
        if exc.kind in ("mode", "links"):
            st = directory.lstat(name)
            mode = 0 if st is None else st.st_mode
            reason = f"{exc.reason}, so it is not verifiably tabwarden's"
            return Inspection("foreign", reason, mode=mode, loose=True), b"", mode
        st = directory.lstat(name)
        return Inspection("unsafe", exc.reason), b"", 0 if st is None else st.st_mode
    except EntryTooLarge:
        reason = "is far larger than anything tabwarden writes"
        return Inspection("foreign", reason), b"", 0
    except PrivateFsFailure as exc:
        return Inspection("unsafe", f"cannot be opened safely ({exc.reason})"), b"", 0
    if found is None:
        return Inspection("absent"), b"", 0
    data, st = found
    return None, data, st.st_mode


def inspect_wrapper(directory: PrivateDir | None) -> Inspection:
    early, data, mode = _read(directory, WRAPPER_FILENAME)
    if early is not None:
        return early
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return Inspection("foreign", "is not a tabwarden wrapper (not UTF-8 text)", mode=mode)
    parsed = parse_wrapper(text)
    if parsed is not None:
        return Inspection("ours", wrapper=parsed, mode=mode)
    lines = text.split("\n")
    if len(lines) > 1 and lines[1] == WRAPPER_MARKER:
        return Inspection(
            "modified", "wrapper was modified after `tabwarden install` wrote it", mode=mode
        )
    return Inspection("foreign", "is not a tabwarden wrapper (no marker line)", mode=mode)


def inspect_manifest(directory: PrivateDir | None, wrapper_path: Path) -> Inspection:
    early, data, mode = _read(directory, MANIFEST_FILENAME)
    if early is not None:
        return early
    try:
        doc = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return Inspection("foreign", "is not valid JSON", mode=mode)
    if not isinstance(doc, dict):
        return Inspection("foreign", "is not a JSON object", mode=mode)
    if doc.get("name") != HOST_NAME:
        reason = f"names host {doc.get('name')!r}, not {HOST_NAME}"
        return Inspection("foreign", reason, manifest=doc, mode=mode)
    if doc.get("path") != str(wrapper_path):
        reason = f"launches {doc.get('path')!r}, not tabwarden's wrapper beside it"
        return Inspection("foreign", reason, manifest=doc, mode=mode)
    return Inspection("ours", manifest=doc, mode=mode)
