"""Install, uninstall and inspect the per-user Chrome native-messaging host registration.

``install`` writes two files into a browser's NativeMessagingHosts directory: the host manifest
``dev.tabwarden.host.json`` (pinned to our one extension origin) and beside it a small ``sh``
wrapper that ``exec``s ``python -I -m tabwarden host``. ``uninstall`` removes exactly those files
and ``manifest_status`` reports on them for ``tabwarden status``.

This module holds the decisions (what may be replaced, what is removed, what is a problem) and
the reports; where each browser looks is ``install_locations``, the wrapper script is
``install_wrapper``, reading and writing the two files is ``install_files`` (through
``tabwarden.private_fs``: the directory must be ours and exactly 0700), the errors are
``install_errors``. It must never write through a symlink, never overwrite or delete a file it
cannot verify as its own (unless the person passes ``force`` to install), never widen
``allowed_origins`` beyond ``tabwarden.manifests.ALLOWED_ORIGIN``, and never touch anything outside
the directories in ``manifests/locations.json`` (or the one ``manifest_dir`` it is given). No
secrets pass through it.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from tabwarden import osapi
from tabwarden.cli.install.errors import (
    ForeignManifest,
    InstallError,
    InterpreterCannotImport,
    UnknownBrowser,
    UnsafePath,
    UnsupportedPlatform,
)
from tabwarden.cli.install.files import (
    MANIFEST_FILENAME,
    MANIFEST_MODE,
    WRAPPER_FILENAME,
    WRAPPER_MODE,
    Inspection,
    inspect_manifest,
    inspect_wrapper,
    open_registration_dir,
)
from tabwarden.cli.install.locations import (
    WINDOWS_PLATFORMS,
    check_browser,
    manifest_directory,
    supported_browsers,
    target_dir,
    windows_error,
)
from tabwarden.cli.install.wrapper import (
    WRAPPER_MARKER,
    check_interpreter,
    parse_wrapper,
    render_wrapper,
    resolve_python,
)
from tabwarden.manifests import ALLOWED_ORIGIN, EXTENSION_ID, HOST_NAME, render_manifest
from tabwarden.private_fs import PrivateDir, PrivateFsError, UnsafeEntry

# ------------------------------------------------------------------------------------- reports


@dataclass(frozen=True)
class InstallReport:
    """What ``install`` wrote."""

    browser: str
    manifest_path: Path
    wrapper_path: Path
    python: str = ""
    replaced: bool = False

    def as_lines(self) -> list[str]:
        verb = "reinstalled" if self.replaced else "installed"
        return [
            f"{verb} native-messaging host {HOST_NAME} for {self.browser}",
            f"  manifest: {self.manifest_path}",
            f"  wrapper:  {self.wrapper_path}",
            f"  python:   {self.python}",
            f"  allowed extension: {EXTENSION_ID}",
        ]


@dataclass(frozen=True)
class Skipped:
    """A file ``uninstall`` left in place, and why."""

    path: Path
    reason: str


@dataclass(frozen=True)
class UninstallReport:
    """What ``uninstall`` removed and what it refused to touch."""

    removed: tuple[Path, ...] = ()
    skipped: tuple[Skipped, ...] = ()

    @property
    def clean(self) -> bool:
        """True when nothing was left behind for a person to inspect."""
        return not self.skipped

    def as_lines(self) -> list[str]:
        lines = [f"removed {p}" for p in self.removed]
        lines += [f"left in place {s.path}: {s.reason}" for s in self.skipped]
        return lines or ["nothing to remove"]


@dataclass(frozen=True)
class ManifestStatus:
    """One browser's registration, for ``tabwarden status``."""

    browser: str
    directory: Path
    manifest_path: Path
    wrapper_path: Path
    manifest_present: bool
    ours: bool
    wrapper_present: bool
    wrapper_executable: bool
    origins_pinned: bool
    interpreter: str | None = None
    problems: tuple[str, ...] = field(default=())

    @property
    def ok(self) -> bool:
        return (
            self.manifest_present
            and self.ours
            and self.wrapper_executable
            and self.origins_pinned
            and not self.problems
        )

    def as_line(self) -> str:
        if not self.manifest_present and not self.wrapper_present:
            return f"{self.browser}: not installed ({self.directory})"
        if self.ok:
            return f"{self.browser}: installed, pinned to {EXTENSION_ID} ({self.manifest_path})"
        return f"{self.browser}: PROBLEM ({self.manifest_path}): " + "; ".join(
            self.problems or ("not tabwarden's registration",)
        )


# ------------------------------------------------------------------------------------ install


def _unsafe_directory(directory: Path, exc: PrivateFsError) -> UnsafePath:
    if isinstance(exc, UnsafeEntry) and exc.kind == "mode":
        hint = f"Run `chmod 700 '{directory}'` (it must be yours, mode 0700), then retry."
    elif isinstance(exc, UnsafeEntry) and exc.kind == "owner":
        hint = "Another account could swap the host manifest; use a directory you own."
    else:
        hint = "Check that every part of the path is a directory you own."
    return UnsafePath(f"{exc}; tabwarden writes only into a private directory.", hint=hint)


def _write(directory: PrivateDir, name: str, seen: Inspection, data: bytes, mode: int) -> None:
    if seen.loose:  # --force over a file refused only for its mode: remove, never read it
        directory.unlink(name)
    directory.write_atomic(name, data, mode)


def install(
    browser: str,
    manifest_dir: Path | None = None,
    *,
    python: str = sys.executable,
    platform: str = osapi.PLATFORM,
    home: Path | None = None,
    env: Mapping[str, str] | None = None,
    force: bool = False,
) -> InstallReport:
    """Register the host for ``browser``: write the wrapper, then the manifest that names it."""
    directory = target_dir(browser, manifest_dir, platform, home, env)
    python = resolve_python(python)
    manifest_path = directory / MANIFEST_FILENAME
    wrapper_path = directory / WRAPPER_FILENAME

    # Everything that can refuse does so before anything is created or written.
    try:
        existing = open_registration_dir(directory, create=False)
    except PrivateFsError as exc:
        raise _unsafe_directory(directory, exc) from None
    try:
        m = inspect_manifest(existing, wrapper_path)
        w = inspect_wrapper(existing)
    finally:
        if existing is not None:
            existing.close()
    for path, seen, what in ((manifest_path, m, "manifest"), (wrapper_path, w, "wrapper")):
        if seen.state == "unsafe":
            raise UnsafePath(
                f"The {what} path {path} {seen.reason}; tabwarden never writes through it.",
                hint="Check what it is, remove it by hand, then retry.",
            )
    if not force:
        if m.state == "foreign":
            raise ForeignManifest(
                f"A host manifest tabwarden did not write is at {manifest_path}: it {m.reason}.",
                hint="Inspect it; if it is stale, remove it or rerun with --force.",
            )
        if w.state == "foreign":
            raise ForeignManifest(
                f"A file tabwarden did not write is at {wrapper_path}: it {w.reason}.",
                hint="Inspect it; if it is stale, remove it or rerun with --force.",
            )
    check_interpreter(python)

    manifest = render_manifest(str(wrapper_path))
    wrapper_bytes = render_wrapper(python, browser).encode("utf-8")
    manifest_bytes = (json.dumps(manifest, indent=2) + "\n").encode("utf-8")
    try:
        target = open_registration_dir(directory, create=True)
        if target is None:  # removed between mkdir and open
            raise UnsafePath(f"{directory} disappeared while installing.")
        with target:
            _write(target, WRAPPER_FILENAME, w, wrapper_bytes, WRAPPER_MODE)
            _write(target, MANIFEST_FILENAME, m, manifest_bytes, MANIFEST_MODE)
    except UnsafeEntry as exc:
        if exc.path == directory:
            raise _unsafe_directory(directory, exc) from None
        raise UnsafePath(
            f"{exc}; tabwarden never writes through it.",
            hint="Check what it is, remove it by hand, then retry.",
        ) from None
    except PrivateFsError as exc:
        raise InstallError(str(exc)) from None
    return InstallReport(
        browser=browser,
        manifest_path=manifest_path,
        wrapper_path=wrapper_path,
        python=python,
        replaced=m.state != "absent" or w.state != "absent",
    )


# ---------------------------------------------------------------------------------- uninstall


def _uninstall_dir(directory: Path, removed: list[Path], skipped: list[Skipped]) -> None:
    manifest_path = directory / MANIFEST_FILENAME
    wrapper_path = directory / WRAPPER_FILENAME
    try:
        opened = open_registration_dir(directory, create=False)
    except PrivateFsError as exc:
        for path in (manifest_path, wrapper_path):
            if os.path.lexists(path):
                skipped.append(Skipped(path, f"its directory {exc.reason}; remove it by hand"))
        return
    if opened is None:
        return
    with opened:
        m = inspect_manifest(opened, wrapper_path)
        w = inspect_wrapper(opened)
        remove: list[Path] = []
        if m.state == "ours":
            if w.state in ("ours", "absent"):
                remove.append(manifest_path)  # manifest first: Chrome never sees a dangling wrapper
            else:
                skipped.append(
                    Skipped(
                        manifest_path, f"its wrapper {w.reason}; inspect both and remove by hand"
                    )
                )
        elif m.state != "absent":
            skipped.append(Skipped(manifest_path, m.reason))
        if w.state == "ours":
            remove.append(wrapper_path)  # verified byte-for-byte; nothing foreign can point at it
        elif w.state != "absent":
            skipped.append(Skipped(wrapper_path, w.reason))
        for path in remove:
            try:
                gone = opened.unlink(path.name)
            except PrivateFsError as exc:
                skipped.append(Skipped(path, exc.reason))
                continue
            if gone:
                removed.append(path)


def uninstall(
    browser: str | None = None,
    manifest_dir: Path | None = None,
    *,
    platform: str = osapi.PLATFORM,
    home: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> UninstallReport:
    """Remove what ``install`` wrote for ``browser`` (None: every browser in the table)."""
    if manifest_dir is not None:
        if platform in WINDOWS_PLATFORMS:
            raise windows_error(platform)
        if browser is not None:
            check_browser(browser)
        directories = [Path(os.path.abspath(manifest_dir))]
    else:
        browsers = supported_browsers() if browser is None else (browser,)
        directories = []
        for b in browsers:
            d = manifest_directory(b, platform=platform, home=home, env=env)
            if d not in directories:
                directories.append(d)
    removed: list[Path] = []
    skipped: list[Skipped] = []
    for d in directories:
        _uninstall_dir(d, removed, skipped)
    return UninstallReport(removed=tuple(removed), skipped=tuple(skipped))


# ------------------------------------------------------------------------------------- status


def status_for(browser: str, directory: Path) -> ManifestStatus:
    """The registration in ``directory`` for ``browser`` (a running browser's own directory)."""
    manifest_path = directory / MANIFEST_FILENAME
    wrapper_path = directory / WRAPPER_FILENAME
    try:
        opened = open_registration_dir(directory, create=False)
    except PrivateFsError as exc:
        return ManifestStatus(
            browser=browser,
            directory=directory,
            manifest_path=manifest_path,
            wrapper_path=wrapper_path,
            manifest_present=os.path.lexists(manifest_path),
            ours=False,
            wrapper_present=os.path.lexists(wrapper_path),
            wrapper_executable=False,
            origins_pinned=False,
            problems=(f"directory {exc.reason}; nothing in it is trusted",),
        )
    try:
        m = inspect_manifest(opened, wrapper_path)
        w = inspect_wrapper(opened)
    finally:
        if opened is not None:
            opened.close()
    problems: list[str] = []
    origins_pinned = False
    if m.state not in ("absent", "ours"):
        problems.append(f"manifest {m.reason}")
    if m.manifest is not None:
        origins_pinned = m.manifest.get("allowed_origins") == [ALLOWED_ORIGIN]
        if not origins_pinned:
            problems.append(f"allowed_origins is {m.manifest.get('allowed_origins')!r}, not pinned")
        if m.manifest.get("type") != "stdio":
            problems.append(f"type is {m.manifest.get('type')!r}, not 'stdio'")
    if m.state == "absent" and w.state != "absent":
        problems.append("wrapper present without a manifest")
    wrapper_present = w.state != "absent"
    wrapper_executable = (
        w.state in ("ours", "modified", "foreign")
        and stat.S_ISREG(w.mode)
        and os.access(wrapper_path, os.X_OK)
    )
    if w.state not in ("absent", "ours"):
        problems.append(f"wrapper {w.reason}")
    elif m.state == "ours" and w.state == "absent":
        problems.append("wrapper is missing")
    if w.state == "ours" and not wrapper_executable:
        problems.append("wrapper is not executable")
    if w.mode & (stat.S_IWGRP | stat.S_IWOTH):
        problems.append("wrapper is writable by other accounts")
    interpreter: str | None = None
    if w.wrapper is not None:
        interpreter, label = w.wrapper
        if not os.access(interpreter, os.X_OK):
            problems.append(f"interpreter {interpreter} is missing or not executable")
        if label != browser:
            problems.append(f"wrapper is labelled {label!r}, not {browser!r}")
    return ManifestStatus(
        browser=browser,
        directory=directory,
        manifest_path=manifest_path,
        wrapper_path=wrapper_path,
        manifest_present=m.state != "absent",
        ours=m.state == "ours" and w.state == "ours",
        wrapper_present=wrapper_present,
        wrapper_executable=wrapper_executable,
        origins_pinned=origins_pinned,
        interpreter=interpreter,
        problems=tuple(problems),
    )


def manifest_status(
    *,
    platform: str = osapi.PLATFORM,
    home: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> list[ManifestStatus]:
    """Per browser in the table: where its manifest goes and whether tabwarden's is there intact."""
    return [
        status_for(b, manifest_directory(b, platform=platform, home=home, env=env))
        for b in supported_browsers()
    ]


__all__ = [
    "MANIFEST_FILENAME",
    "WRAPPER_FILENAME",
    "WRAPPER_MARKER",
    "ForeignManifest",
    "InstallError",
    "InstallReport",
    "InterpreterCannotImport",
    "ManifestStatus",
    "Skipped",
    "UninstallReport",
    "UnknownBrowser",
    "UnsafePath",
    "UnsupportedPlatform",
    "check_interpreter",
    "install",
    "manifest_directory",
    "manifest_status",
    "parse_wrapper",
    "render_wrapper",
    "supported_browsers",
    "uninstall",
]
