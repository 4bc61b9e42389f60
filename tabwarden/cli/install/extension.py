"""Where a person loads the extension from: ``chrome://extensions`` → Load unpacked → this path.

This module is the one place that finds the extension's files (ADR 0017). From a checkout
(``extension/`` beside ``pyproject.toml``) that is the checkout's ``extension/``, loaded as it
is, so an edit shows after a reload. From an installed package the files live in the package
(``tabwarden/extension``, put there by the wheel's package-dir map), a path that moves with every
upgrade or reinstall of the virtualenv; so ``tabwarden install`` and ``tabwarden setup`` copy them
to one stable per-user directory (``$XDG_DATA_HOME/tabwarden/extension``, else
``~/.local/share/tabwarden/extension``), and that is the path the person loads once.

Replacing the copy is atomic: the new version is copied beside the target (a ``.extension-*``
staging directory, swept by the next run if a crash leaves one), its manifest ``key`` is checked
to give the pinned ID (the host manifest's ``allowed_origins`` names only that ID), and it is
swapped in with one ``renameat2(RENAME_EXCHANGE)``, so Chrome sees the old version or the new one,
never a mix and never nothing. (Where the kernel or file system has no exchange, two renames: a
crash between them leaves no copy, which the next run puts back.) A copy whose files are already
the package's is left alone; one that changed is reported so the person presses Reload.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import stat
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from tabwarden import osapi
from tabwarden.cli.install.errors import InstallError
from tabwarden.manifests import EXTENSION_ID, extension_id_from_key

__all__ = [
    "Placed",
    "copy_state",
    "extension_to_load",
    "packaged_extension",
    "place_extension",
    "remove_extension_copy",
    "stable_extension_dir",
]

#: What a checkout's extension directory holds that a loaded extension never needs.
_NOT_SHIPPED = ("node_modules", "__pycache__", "package.json")
_STAGING_PREFIX = ".extension-"


def packaged_extension() -> tuple[Path, bool]:
    """The extension's files in this installation, and whether they are a checkout's (loaded in
    place) rather than an installed package's (copied to ``stable_extension_dir``)."""
    import tabwarden

    package = Path(tabwarden.__file__).resolve().parent
    checkout = package.parent / "extension"
    if (checkout / "manifest.json").is_file() and (package.parent / "pyproject.toml").is_file():
        return checkout, True
    installed = package / "extension"
    if (installed / "manifest.json").is_file():
        return installed, False
    raise InstallError(
        f"This installation of tabwarden has no extension (looked in {checkout} and {installed}).",
        hint="Reinstall the package (`pipx install --force tabwarden`), or run from a checkout.",
    )


def stable_extension_dir(env: Mapping[str, str] | None = None) -> Path:
    """The per-user directory an installed package's extension is copied to."""
    env = os.environ if env is None else env
    base = env.get("XDG_DATA_HOME") or str(Path(env.get("HOME") or Path.home()) / ".local/share")
    return Path(base) / "tabwarden" / "extension"


def extension_to_load(env: Mapping[str, str] | None = None, *, place: bool = False) -> Path:
    """The directory to Load unpacked. With ``place``, an installed package's extension is
    (re)copied there first; without, the path is only named (it may not exist yet)."""
    if place:
        return place_extension(env).path
    source, in_checkout = packaged_extension()
    return source if in_checkout else stable_extension_dir(env)


@dataclass(frozen=True)
class Placed:
    """Where the extension to load is, and what placing it did.

    ``checkout``: a checkout's own ``extension/``, loaded in place (nothing copied). ``new``: the
    copy did not exist; the person loads it once. ``updated``: a different version was replaced;
    a browser that has it loaded runs the old code until the person presses Reload.
    ``unchanged``: the copy already held exactly the package's files.
    """

    path: Path
    state: Literal["checkout", "new", "updated", "unchanged"]

    def as_lines(self, browser: str) -> list[str]:
        load = (
            f"in {browser}, open chrome://extensions, turn on Developer mode, click "
            f"Load unpacked and choose {self.path}"
        )
        if self.state == "updated":
            return [
                f"extension: {self.path} (updated to this version)",
                f"next: press Reload on tabwarden in {browser}'s chrome://extensions (the "
                f"browser runs the old version until then); not loaded yet? {load}",
            ]
        if self.state == "unchanged":
            return [
                f"extension: {self.path} (already this version)",
                f"next: if tabwarden is not loaded in {browser} yet: {load}",
            ]
        if self.state == "checkout":
            return [
                f"extension: {self.path}",
                f"next: {load} (this checkout's own extension/: after an edit, press Reload)",
            ]
        return [
            f"extension: {self.path}",
            f"next: {load} (once: a later install updates it there)",
        ]


def place_extension(env: Mapping[str, str] | None = None) -> Placed:
    """Make the stable copy hold this package's extension (nothing to do from a checkout)."""
    source, in_checkout = packaged_extension()
    if in_checkout:
        return Placed(source, "checkout")
    target = stable_extension_dir(env)
    target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    if target.parent.is_symlink() or (target.parent.stat().st_uid != os.getuid()):
        raise InstallError(
            f"{target.parent} is not a directory of yours; tabwarden never writes through it.",
            hint="Check what it is, remove it by hand, then run `tabwarden install` again.",
        )
    lock = os.open(target.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one placer at a time: any staging left is stale
        _sweep_staging(target.parent)
        if os.path.islink(target) or (os.path.lexists(target) and not target.is_dir()):
            raise InstallError(
                f"{target} is not a directory tabwarden made; it never writes through it.",
                hint="Check what it is, remove it by hand, then run `tabwarden install` again.",
            )
        existed = target.is_dir()
        if existed and _tree_digest(target) == _tree_digest(source):
            return Placed(target, "unchanged")
        _replace_with_copy(source, target, existed)
        return Placed(target, "updated" if existed else "new")
    finally:
        os.close(lock)


def remove_extension_copy(env: Mapping[str, str] | None = None) -> Path | None:
    """Remove the stable copy (``tabwarden uninstall`` from every browser); its path, or None
    when there was none. A symlink there is not ours: it is left, and said."""
    target = stable_extension_dir(env)
    if not os.path.lexists(target):
        return None
    if os.path.islink(target) or not target.is_dir():
        raise InstallError(
            f"{target} is not a directory tabwarden made; it was left in place.",
            hint="Check what it is and remove it by hand.",
        )
    lock = os.open(target.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        _sweep_staging(target.parent)
        # Renamed aside first: a crash mid-removal leaves staging the next run sweeps, never a
        # half-removed extension at the path Chrome loads.
        aside = Path(tempfile.mkdtemp(prefix=_STAGING_PREFIX, dir=target.parent))
        os.rename(target, aside / "extension")
        shutil.rmtree(aside, ignore_errors=True)
    finally:
        os.close(lock)
    return target


def copy_state(
    env: Mapping[str, str] | None = None,
) -> Literal["checkout", "missing", "current", "stale"]:
    """Whether the stable copy holds this package's extension (read-only; for ``status``)."""
    source, in_checkout = packaged_extension()
    if in_checkout:
        return "checkout"
    target = stable_extension_dir(env)
    if os.path.islink(target) or not target.is_dir():
        return "missing"
    return "current" if _tree_digest(target) == _tree_digest(source) else "stale"


# ------------------------------------------------------------------------------------ helpers


def _ignored(name: str) -> bool:
    return name in _NOT_SHIPPED


def _tree_digest(root: Path) -> str:
    """One digest of every shipped file under ``root``: its relative path, kind and bytes."""
    h = hashlib.sha256()
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if not _ignored(d))
        rel_dir = os.path.relpath(dirpath, root)
        for name in sorted(f for f in filenames if not _ignored(f)):
            path = os.path.join(dirpath, name)
            h.update(os.path.join(rel_dir, name).encode("utf-8", "surrogateescape") + b"\0")
            st = os.lstat(path)
            if not stat.S_ISREG(st.st_mode):
                h.update(b"not a regular file\0")
                continue
            with open(path, "rb") as f:
                h.update(hashlib.sha256(f.read()).digest())
        for name in dirnames:  # a symlinked directory is listed, never followed
            if os.path.islink(os.path.join(dirpath, name)):
                h.update(os.path.join(rel_dir, name).encode("utf-8", "surrogateescape") + b"\1")
    return h.hexdigest()


def _sweep_staging(parent: Path) -> None:
    """Remove staging directories an interrupted run left (called under the parent's lock)."""
    for entry in parent.iterdir():
        if entry.name.startswith(_STAGING_PREFIX) and not entry.is_symlink() and entry.is_dir():
            shutil.rmtree(entry, ignore_errors=True)


def _check_id(copy: Path) -> None:
    """The copy's manifest ``key`` gives the pinned ID, or the host would refuse it anyway."""
    try:
        key = json.loads((copy / "manifest.json").read_text("utf-8"))["key"]
        found = extension_id_from_key(key)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        found = f"none ({exc.__class__.__name__})"
    if found != EXTENSION_ID:
        raise InstallError(
            f"The packaged extension's manifest key gives the ID {found}, not {EXTENSION_ID}; "
            "the host would refuse it, so it was not copied.",
            hint="Reinstall the package (`pipx install --force tabwarden`).",
        )


def _exchange(a: Path, b: Path) -> bool:
    """Swap ``a`` and ``b`` in one step; False where that is unavailable."""
    try:
        return osapi.exchange_paths(str(a), str(b))
    except OSError as exc:
        raise InstallError(f"Could not swap in the new extension at {b}: {exc.strerror}.") from None


def _replace_with_copy(source: Path, target: Path, existed: bool) -> None:
    staging = Path(tempfile.mkdtemp(prefix=_STAGING_PREFIX, dir=target.parent))
    try:
        new = staging / "extension"
        shutil.copytree(source, new, ignore=shutil.ignore_patterns(*_NOT_SHIPPED))
        _check_id(new)
        if not existed:
            os.rename(new, target)
        elif not _exchange(new, target):  # the old copy is now in staging, removed below
            os.rename(target, staging / "old")
            os.rename(new, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
