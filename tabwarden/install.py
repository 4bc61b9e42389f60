"""Install, uninstall and inspect the per-user Chrome native-messaging host registration.

``install`` writes two files into a browser's NativeMessagingHosts directory: the host manifest
``dev.tabwarden.host.json`` (pinned to our one extension origin) and beside it a small ``sh``
wrapper that ``exec``s ``python -I -m tabwarden host``. ``uninstall`` removes exactly those files
and ``manifest_status`` reports on them for ``tabwarden status``.

This module must never write through a symlink, never overwrite or delete a file it cannot verify
as its own (unless the person passes ``force`` to install), never widen ``allowed_origins`` beyond
``tabwarden.manifests.ALLOWED_ORIGIN``, and never touch anything outside the directories in
``manifests/locations.json`` (or the one ``manifest_dir`` it is given). No secrets pass through it.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal

from tabwarden.errors import TabwardenError
from tabwarden.manifests import (
    ALLOWED_ORIGIN,
    EXTENSION_ID,
    HOST_NAME,
    browser_locations,
    render_manifest,
    windows_note,
)

MANIFEST_FILENAME = f"{HOST_NAME}.json"
WRAPPER_FILENAME = f"{HOST_NAME}.sh"
WRAPPER_MARKER = (
    "# tabwarden native-messaging host wrapper, written by `tabwarden install`; do not edit."
)
IMPORT_CHECK = "import tabwarden.host"
IMPORT_CHECK_TIMEOUT = 60.0
DIR_MODE = 0o700
WRAPPER_MODE = 0o700
MANIFEST_MODE = 0o644
_MAX_READ = 64 * 1024
_WINDOWS_PLATFORMS = ("win32", "cygwin", "msys")
_XDG_PREFIX = "$XDG_CONFIG_HOME/"
_HOME_PREFIX = "~/"


# --------------------------------------------------------------------------------------- errors


class InstallError(TabwardenError):
    """Installing or removing the native-messaging host failed."""

    code: ClassVar[str] = "install_failed"
    hint = "Run `tabwarden status` to see what is registered where."


class UnknownBrowser(InstallError):
    """That browser is not one tabwarden knows how to register with."""

    code: ClassVar[str] = "install_unknown_browser"
    exit_status: ClassVar[int] = 2


class UnsupportedPlatform(InstallError):
    """tabwarden cannot register its native-messaging host on this platform."""

    code: ClassVar[str] = "install_unsupported_platform"


class ForeignManifest(InstallError):
    """A native-messaging host file that tabwarden did not write is in the way."""

    code: ClassVar[str] = "install_foreign_manifest"


class InterpreterCannotImport(InstallError):
    """That Python interpreter cannot import tabwarden's host in isolated mode."""

    code: ClassVar[str] = "install_interpreter_cannot_import"
    hint = (
        "Install tabwarden into that interpreter's own site-packages (a venv is simplest); "
        "`pip install --user` is not seen under -I."
    )


class UnsafePath(InstallError):
    """A path tabwarden would write is a symlink, not a regular file, or in an unsafe directory."""

    code: ClassVar[str] = "install_unsafe_path"


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


# ----------------------------------------------------------------------------- table & wrapper


def supported_browsers() -> tuple[str, ...]:
    """Browser labels from the location table, in table order."""
    return tuple(browser_locations())


def _check_browser(browser: str) -> str:
    known = supported_browsers()
    if browser not in known:
        raise UnknownBrowser(
            f"Unknown browser {browser!r}.", hint=f"Choose one of: {', '.join(known)}."
        )
    return browser


def _windows_error(platform: str) -> UnsupportedPlatform:
    key = windows_note().get("registry_key", "")
    return UnsupportedPlatform(
        f"Registering the native-messaging host on Windows ({platform}) is not implemented.",
        hint=f"Chrome on Windows reads the registry key {key}; tabwarden supports Linux and macOS.",
    )


def _os_key(platform: str) -> str:
    if platform.startswith("linux"):
        return "linux"
    if platform == "darwin":
        return "darwin"
    if platform in _WINDOWS_PLATFORMS:
        raise _windows_error(platform)
    raise UnsupportedPlatform(
        f"No known NativeMessagingHosts location for platform {platform!r}.",
        hint="Pass --manifest-dir with the directory your browser reads host manifests from.",
    )


def _home(home: Path | None, env: Mapping[str, str]) -> Path:
    if home is None:
        env_home = env.get("HOME", "")
        home = Path(env_home) if os.path.isabs(env_home) else Path.home()
    return Path(os.path.abspath(home))


def manifest_directory(
    browser: str,
    *,
    platform: str = sys.platform,
    home: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> Path:
    """The per-user NativeMessagingHosts directory for ``browser`` on ``platform``."""
    os_key = _os_key(platform)
    _check_browser(browser)
    env = os.environ if env is None else env
    where = browser_locations()[browser].get(os_key)
    if where is None:
        raise UnsupportedPlatform(
            f"No known NativeMessagingHosts location for {browser} on {os_key}.",
            hint="Pass --manifest-dir with the directory your browser reads host manifests from.",
        )
    if where.startswith(_XDG_PREFIX):
        # Chrome on Linux honours $XDG_CONFIG_HOME; a relative value is invalid per the XDG spec.
        xdg = env.get("XDG_CONFIG_HOME", "")
        base = Path(xdg) if os.path.isabs(xdg) else _home(home, env) / ".config"
        return base / where[len(_XDG_PREFIX) :]
    return _home(home, env) / where[len(_HOME_PREFIX) :]


def _has_control_chars(text: str) -> bool:
    return any(ord(c) < 0x20 or ord(c) == 0x7F for c in text)


def render_wrapper(python: str, browser: str) -> str:
    """The exact wrapper script ``install`` writes for ``python`` and ``browser``."""
    if _has_control_chars(python) or _has_control_chars(browser) or not browser:
        raise ValueError("interpreter path and browser label must not contain control characters")
    return (
        "#!/bin/sh\n"
        f"{WRAPPER_MARKER}\n"
        f"# browser: {browser}\n"
        f"exec {shlex.quote(python)} -I -m tabwarden host --browser {shlex.quote(browser)} "
        '"$@"\n'
    )


def parse_wrapper(text: str) -> tuple[str, str] | None:
    """``(python, browser)`` if ``text`` is byte-for-byte a wrapper ``install`` writes, else None."""
    lines = text.split("\n")
    if len(lines) != 5 or lines[4] != "" or lines[0] != "#!/bin/sh" or lines[1] != WRAPPER_MARKER:
        return None
    prefix = "# browser: "
    if not lines[2].startswith(prefix):
        return None
    browser = lines[2][len(prefix) :]
    try:
        tokens = shlex.split(lines[3])
    except ValueError:
        return None
    if len(tokens) != 9 or tokens[0] != "exec" or tokens[8] != "$@":
        return None
    if tokens[2:8] != ["-I", "-m", "tabwarden", "host", "--browser", browser]:
        return None
    python = tokens[1]
    try:
        if render_wrapper(python, browser) != text:
            return None
    except ValueError:
        return None
    return python, browser


# ---------------------------------------------------------------------------- file inspection

_State = Literal["absent", "ours", "modified", "foreign", "unsafe"]


@dataclass(frozen=True)
class _Inspection:
    state: _State
    reason: str = ""
    data: Any = None
    mode: int = 0


def _read_regular(path: Path) -> tuple[_Inspection | None, bytes, int]:
    """Read ``path`` without following a symlink; an _Inspection if it is absent or unsafe."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return _Inspection("absent"), b"", 0
    if stat.S_ISLNK(st.st_mode):
        return _Inspection("unsafe", "is a symlink"), b"", st.st_mode
    if not stat.S_ISREG(st.st_mode):
        return _Inspection("unsafe", "is not a regular file"), b"", st.st_mode
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return _Inspection("absent"), b"", 0
    except OSError as exc:
        return _Inspection("unsafe", f"cannot be opened safely ({exc.strerror})"), b"", st.st_mode
    with os.fdopen(fd, "rb") as fh:
        fst = os.fstat(fh.fileno())
        if not stat.S_ISREG(fst.st_mode):
            return _Inspection("unsafe", "is not a regular file"), b"", fst.st_mode
        data = fh.read(_MAX_READ + 1)
    if len(data) > _MAX_READ:
        return _Inspection("foreign", "is far larger than anything tabwarden writes"), b"", 0
    return None, data, fst.st_mode


def _inspect_wrapper(path: Path) -> _Inspection:
    early, data, mode = _read_regular(path)
    if early is not None:
        return early
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return _Inspection("foreign", "is not a tabwarden wrapper (not UTF-8 text)", mode=mode)
    parsed = parse_wrapper(text)
    if parsed is not None:
        return _Inspection("ours", data=parsed, mode=mode)
    lines = text.split("\n")
    if len(lines) > 1 and lines[1] == WRAPPER_MARKER:
        return _Inspection(
            "modified", "wrapper was modified after `tabwarden install` wrote it", mode=mode
        )
    return _Inspection("foreign", "is not a tabwarden wrapper (no marker line)", mode=mode)


def _inspect_manifest(path: Path, wrapper_path: Path) -> _Inspection:
    early, data, mode = _read_regular(path)
    if early is not None:
        return early
    try:
        doc = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return _Inspection("foreign", "is not valid JSON", mode=mode)
    if not isinstance(doc, dict):
        return _Inspection("foreign", "is not a JSON object", mode=mode)
    if doc.get("name") != HOST_NAME:
        return _Inspection("foreign", f"names host {doc.get('name')!r}, not {HOST_NAME}", doc, mode)
    if doc.get("path") != str(wrapper_path):
        return _Inspection(
            "foreign", f"launches {doc.get('path')!r}, not tabwarden's wrapper beside it", doc, mode
        )
    return _Inspection("ours", data=doc, mode=mode)


# -------------------------------------------------------------------------------- file writing


def _check_directory(directory: Path) -> None:
    try:
        st = os.stat(directory)
    except OSError as exc:
        raise UnsafePath(
            f"{directory} is not usable ({exc.strerror}).",
            hint="Check that every part of the path is a directory you own.",
        ) from exc
    if not stat.S_ISDIR(st.st_mode):
        raise UnsafePath(f"{directory} is not a directory.", hint="Remove or rename it first.")
    if st.st_uid != os.getuid():
        raise UnsafePath(
            f"{directory} is owned by uid {st.st_uid}, not by you.",
            hint="Another account could swap the host manifest; use a directory you own.",
        )
    group_writable = bool(st.st_mode & stat.S_IWGRP) and st.st_gid != os.getgid()
    if st.st_mode & stat.S_IWOTH or group_writable:
        raise UnsafePath(
            f"{directory} is writable by other accounts.",
            hint=f"Run `chmod go-w '{directory}'`, then retry.",
        )


def _ensure_directory(directory: Path) -> None:
    missing: list[Path] = []
    here = directory
    while not os.path.lexists(here) and here != here.parent:
        missing.append(here)
        here = here.parent
    for d in reversed(missing):
        try:
            os.mkdir(d, DIR_MODE)
        except FileExistsError:
            continue
        os.chmod(d, DIR_MODE)
    _check_directory(directory)


def _refuse_link(path: Path) -> None:
    if os.path.islink(path):
        raise UnsafePath(
            f"{path} is a symlink; tabwarden never writes through one.",
            hint="Check where it points, remove it by hand, then retry.",
        )


def _atomic_write(path: Path, data: bytes, mode: int) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            os.fchmod(fh.fileno(), mode)
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        _refuse_link(path)  # os.replace swaps a link rather than following it; refuse anyway
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    _fsync_dir(path.parent)


def _fsync_dir(directory: Path) -> None:
    try:
        dfd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):
            os.fsync(dfd)
    finally:
        os.close(dfd)


# ------------------------------------------------------------------------------ interpreter


def _resolve_python(python: str) -> str:
    if not python:
        raise InterpreterCannotImport("No Python interpreter path was given.")
    if _has_control_chars(python):
        raise InterpreterCannotImport("The interpreter path contains control characters.")
    if os.sep not in python:
        found = shutil.which(python)
        if found is None:
            raise InterpreterCannotImport(f"No interpreter named {python!r} on PATH.")
        python = found
    return os.path.abspath(python)


def check_interpreter(python: str) -> None:
    """Raise InterpreterCannotImport unless ``python -I`` can import the host package."""
    cmd = [python, "-I", "-c", IMPORT_CHECK]
    try:
        proc = subprocess.run(  # noqa: S603 - fixed argv, no shell
            cmd,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=IMPORT_CHECK_TIMEOUT,
            cwd="/",
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise InterpreterCannotImport(
            f"{python} -I did not import tabwarden.host within {IMPORT_CHECK_TIMEOUT:.0f} s."
        ) from exc
    except OSError as exc:
        raise InterpreterCannotImport(f"Cannot run {python}: {exc.strerror}.") from exc
    if proc.returncode != 0:
        tail = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        detail = f": {tail[-1][:200]}" if tail else ""
        raise InterpreterCannotImport(
            f"{python} -I cannot import tabwarden.host (exit {proc.returncode}){detail}"
        )


# ------------------------------------------------------------------------------------ install


def _target_dir(
    browser: str,
    manifest_dir: Path | None,
    platform: str,
    home: Path | None,
    env: Mapping[str, str] | None,
) -> Path:
    if manifest_dir is not None:
        if platform in _WINDOWS_PLATFORMS:
            raise _windows_error(platform)
        _check_browser(browser)
        return Path(os.path.abspath(manifest_dir))
    return manifest_directory(browser, platform=platform, home=home, env=env)


def install(
    browser: str,
    manifest_dir: Path | None = None,
    *,
    python: str = sys.executable,
    platform: str = sys.platform,
    home: Path | None = None,
    env: Mapping[str, str] | None = None,
    force: bool = False,
) -> InstallReport:
    """Register the host for ``browser``: write the wrapper, then the manifest that names it."""
    directory = _target_dir(browser, manifest_dir, platform, home, env)
    python = _resolve_python(python)
    manifest_path = directory / MANIFEST_FILENAME
    wrapper_path = directory / WRAPPER_FILENAME

    # Everything that can refuse does so before anything is created or written.
    m = _inspect_manifest(manifest_path, wrapper_path)
    w = _inspect_wrapper(wrapper_path)
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

    _ensure_directory(directory)
    manifest = render_manifest(str(wrapper_path))
    _atomic_write(wrapper_path, render_wrapper(python, browser).encode("utf-8"), WRAPPER_MODE)
    _atomic_write(
        manifest_path, (json.dumps(manifest, indent=2) + "\n").encode("utf-8"), MANIFEST_MODE
    )
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
    m = _inspect_manifest(manifest_path, wrapper_path)
    w = _inspect_wrapper(wrapper_path)
    remove: list[Path] = []
    if m.state == "ours":
        if w.state in ("ours", "absent"):
            remove.append(manifest_path)  # manifest first: Chrome never sees a dangling wrapper
        else:
            skipped.append(
                Skipped(manifest_path, f"its wrapper {w.reason}; inspect both and remove by hand")
            )
    elif m.state != "absent":
        skipped.append(Skipped(manifest_path, m.reason))
    if w.state == "ours":
        remove.append(wrapper_path)  # verified byte-for-byte; nothing foreign can point at it
    elif w.state != "absent":
        skipped.append(Skipped(wrapper_path, w.reason))
    for path in remove:
        try:
            os.unlink(path)
        except FileNotFoundError:
            continue
        removed.append(path)


def uninstall(
    browser: str | None = None,
    manifest_dir: Path | None = None,
    *,
    platform: str = sys.platform,
    home: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> UninstallReport:
    """Remove what ``install`` wrote for ``browser`` (None: every browser in the table)."""
    if manifest_dir is not None:
        if platform in _WINDOWS_PLATFORMS:
            raise _windows_error(platform)
        if browser is not None:
            _check_browser(browser)
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
        if os.path.isdir(d):
            _uninstall_dir(d, removed, skipped)
    return UninstallReport(removed=tuple(removed), skipped=tuple(skipped))


# ------------------------------------------------------------------------------------- status


def _status_for(browser: str, directory: Path) -> ManifestStatus:
    manifest_path = directory / MANIFEST_FILENAME
    wrapper_path = directory / WRAPPER_FILENAME
    m = _inspect_manifest(manifest_path, wrapper_path)
    w = _inspect_wrapper(wrapper_path)
    problems: list[str] = []
    origins_pinned = False
    if m.state not in ("absent", "ours"):
        problems.append(f"manifest {m.reason}")
    if isinstance(m.data, dict):
        origins_pinned = m.data.get("allowed_origins") == [ALLOWED_ORIGIN]
        if not origins_pinned:
            problems.append(f"allowed_origins is {m.data.get('allowed_origins')!r}, not pinned")
        if m.data.get("type") != "stdio":
            problems.append(f"type is {m.data.get('type')!r}, not 'stdio'")
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
    if w.state == "ours":
        interpreter, label = w.data
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
    platform: str = sys.platform,
    home: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> list[ManifestStatus]:
    """Per browser in the table: where its manifest goes and whether tabwarden's is there intact."""
    return [
        _status_for(b, manifest_directory(b, platform=platform, home=home, env=env))
        for b in supported_browsers()
    ]


__all__ = [
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
