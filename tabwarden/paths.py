"""Where tabwarden keeps things, and the checks that make those places private.

The runtime directory holds each host's socket, run secret and lock. Both ends resolve it the same
way and both verify it before trusting anything inside: owned by us, a real directory (not a
symlink), mode 0700. A directory that fails the check is never "fixed" silently — we refuse.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from tabwarden.errors import TabwardenError
from tabwarden.private_fs import PrivateFsError, file_problem, open_private_dir, read_capped
from tabwarden.protocol.codes import BAD_LABEL, UNSAFE_RUNTIME_DIR

__all__ = [
    "LABEL_RE",
    "BadLabel",
    "HostEndpoint",
    "UnsafeRuntimeDir",
    "config_dir",
    "endpoint",
    "ensure_runtime_dir",
    "live_endpoints",
    "private_file_problem",
    "read_capped",
    "runtime_dir",
    "verify_private_dir",
]

#: A browser label names one host instance (one socket) — e.g. the browser it serves.
LABEL_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,31}$")


class UnsafeRuntimeDir(TabwardenError):
    """The runtime directory is not private to this user."""

    code = UNSAFE_RUNTIME_DIR
    exit_status = 3
    hint = (
        "Remove it or fix it (owned by you, mode 0700, not a symlink), or set "
        "TABWARDEN_RUNTIME_DIR."
    )


class BadLabel(TabwardenError):
    """A browser label must be 1-32 of a-z, 0-9, '-', '_' (starting alphanumeric)."""

    code = BAD_LABEL
    exit_status = 2


def runtime_dir(env: dict[str, str] | None = None) -> Path:
    """The per-user runtime directory (not created, not checked: see ``ensure_runtime_dir``)."""
    env = dict(os.environ) if env is None else env
    explicit = env.get("TABWARDEN_RUNTIME_DIR")
    if explicit:
        return Path(explicit)
    xdg = env.get("XDG_RUNTIME_DIR")
    if xdg:
        return Path(xdg) / "tabwarden"
    return Path("/tmp") / f"tabwarden-{os.getuid()}"  # noqa: S108 — created 0700 and verified


def config_dir(env: dict[str, str] | None = None) -> Path:
    env = dict(os.environ) if env is None else env
    explicit = env.get("TABWARDEN_CONFIG_DIR")
    if explicit:
        return Path(explicit)
    base = env.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "tabwarden"


def verify_private_dir(path: Path) -> None:
    """Raise ``UnsafeRuntimeDir`` unless ``path`` is a real directory we own with mode 0700."""
    try:
        found = open_private_dir(path, create=False)
    except PrivateFsError as exc:
        raise UnsafeRuntimeDir(str(exc)) from None
    if found is None:
        raise UnsafeRuntimeDir(f"{path} does not exist")
    found.close()


def private_file_problem(st: os.stat_result, path: os.PathLike[str] | str) -> str | None:
    """Why the file ``st`` describes is not a private regular file of ours, or None if it is.

    The rule is ``tabwarden.private_fs.file_problem``; this wrapper only prefixes the path, for
    callers that still do their own opening.
    """
    problem = file_problem(st)
    return None if problem is None else f"{path} {problem[0]}"


def ensure_runtime_dir(env: dict[str, str] | None = None) -> Path:
    """Create the runtime directory if missing (0700), then verify it; refuse if unsafe."""
    path = runtime_dir(env)
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    except FileNotFoundError:
        # Parent missing: create parents with our own umask, the leaf strictly.
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            pass
    verify_private_dir(path)
    return path


@dataclass(frozen=True, slots=True)
class HostEndpoint:
    """The files one host instance owns in the runtime directory."""

    label: str
    directory: Path

    @property
    def socket(self) -> Path:
        return self.directory / f"{self.label}.sock"

    @property
    def secret(self) -> Path:
        return self.directory / f"{self.label}.secret"

    @property
    def lock(self) -> Path:
        return self.directory / f"{self.label}.lock"


def endpoint(label: str, directory: Path) -> HostEndpoint:
    if not LABEL_RE.match(label):
        raise BadLabel(f"invalid browser label {label!r}")
    return HostEndpoint(label, directory)


def live_endpoints(directory: Path) -> list[HostEndpoint]:
    """Endpoints that currently have a socket, sorted by label."""
    try:
        names = sorted(p.name for p in directory.iterdir())
    except OSError:
        return []
    return [
        HostEndpoint(name[: -len(".sock")], directory)
        for name in names
        if name.endswith(".sock") and LABEL_RE.match(name[: -len(".sock")])
    ]
