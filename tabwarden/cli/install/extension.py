"""Where a person loads the extension from: ``chrome://extensions`` → Load unpacked → this path.

From a checkout (``extension/`` beside ``pyproject.toml``) that is the checkout's ``extension/``,
loaded as it is, so an edit shows after a reload. From an installed package the files live in the
package (``tabwarden/extension``), a path that moves with every upgrade or reinstall of the
virtualenv; so ``tabwarden install`` copies them to one stable per-user directory
(``$XDG_DATA_HOME/tabwarden/extension``, else ``~/.local/share/tabwarden/extension``), replacing
what an earlier version put there, and that is the path the person loads once. The copy is made
beside the target and renamed into place, so a crash leaves the old copy, the new one or (between
the two renames) none, which the next install puts back, never a mix of two versions; the
manifest's ``key`` (so the extension's ID) is copied as it is.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path

from tabwarden.cli.install.errors import InstallError

__all__ = ["extension_to_load", "packaged_extension", "stable_extension_dir"]

#: What a checkout's extension directory holds that a loaded extension never needs.
_NOT_SHIPPED = shutil.ignore_patterns("node_modules", "__pycache__", "package.json")


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
    source, in_checkout = packaged_extension()
    if in_checkout:
        return source
    target = stable_extension_dir(env)
    if place:
        _replace_with_copy(source, target)
    return target


def _replace_with_copy(source: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    if target.is_symlink() or (target.exists() and not target.is_dir()):
        raise InstallError(
            f"{target} is not a directory tabwarden made; it never writes through it.",
            hint="Check what it is, remove it by hand, then run `tabwarden install` again.",
        )
    staging = Path(tempfile.mkdtemp(prefix=".extension-", dir=target.parent))
    try:
        shutil.copytree(source, staging / "extension", ignore=_NOT_SHIPPED)
        old = None
        if target.exists():
            old = target.parent / f"{staging.name}-old"
            os.rename(target, old)
        os.rename(staging / "extension", target)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
