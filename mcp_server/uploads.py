"""The upload sandbox: ``page_upload`` may only send files from one directory the person chose.

``open_upload`` walks the path the agent gave from a descriptor of the sandbox's own directory,
one component at a time, never following a symlink (``O_NOFOLLOW`` relative to the parent's
descriptor), and judges the file on the descriptor it opened, not on a path that could be swapped
since: a regular file, one link only (a hard link has no "inside": its other name can be anywhere,
e.g. ``~/.ssh/id_ed25519``), at most ``MAX_UPLOAD_BYTES``. Refused with ``UploadRefused``: a
sandbox that is itself a symlink, is not a directory or is not ours; an absolute path outside it;
any ``..``; a symlink anywhere on the way, even one that stays inside; a FIFO, a device, a
directory; a hard-linked file. The sandbox's own ancestors are taken as the system has them (on
macOS ``/tmp`` is a symlink): whoever can change them can change the sandbox setting too.

``check_upload`` answers such a file's real path and size: the path Chrome is handed
(``DOM.setFileInputFiles``: Chrome reads the file itself, no byte of it crosses the bridge). It
is only called after hop 1's gate let the call through (``tools.py``), and must never answer a path
it has not proven, component by component, to name a plain file inside the sandbox. What it cannot
hold: a local process that swaps the file between this check and Chrome's open (RR-39; such a
process can read the file itself); Chrome's own File snapshot refuses a read after a change.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Mapping
from pathlib import Path, PurePosixPath

from tabwarden.errors import TabwardenError
from tabwarden.paths import config_dir
from tabwarden.protocol.codes import POLICY_DENIED

#: Largest file page_upload hands Chrome (1 GiB): only its path crosses the bridge.
MAX_UPLOAD_BYTES = 1 << 30

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = (
    os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | getattr(os, "O_NOCTTY", 0)
)


class UploadRefused(TabwardenError):
    """That file cannot be uploaded."""

    code = POLICY_DENIED
    hint = (
        "Put the file in the upload sandbox (TABWARDEN_UPLOAD_DIR, default <config>/uploads: a "
        "directory you own, not a symlink) as a plain file (not a symlink, not a hard link) and "
        "name it relative to it."
    )


def sandbox_dir(env: Mapping[str, str] | None = None) -> Path:
    env = dict(os.environ) if env is None else dict(env)
    explicit = env.get("TABWARDEN_UPLOAD_DIR")
    return Path(explicit) if explicit else config_dir(env) / "uploads"


def _open_root(sandbox: Path) -> int:
    """A descriptor of the sandbox directory itself: not a symlink, a directory, ours."""
    try:
        fd = os.open(sandbox, _DIR_FLAGS)
    except FileNotFoundError:
        raise UploadRefused(f"the upload sandbox {sandbox} does not exist") from None
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR) and os.path.islink(sandbox):
            raise UploadRefused(f"the upload sandbox {sandbox} is a symlink") from None
        raise UploadRefused(f"the upload sandbox {sandbox} is not a directory") from None
    if os.fstat(fd).st_uid != os.getuid():
        os.close(fd)
        raise UploadRefused(f"the upload sandbox {sandbox} is not yours")
    return fd


def _relative_parts(sandbox: Path, requested: str) -> list[str]:
    """The components of ``requested`` below the sandbox (an absolute path must name it)."""
    if not requested or "\x00" in requested:
        raise UploadRefused("empty or malformed path")
    path = PurePosixPath(requested)
    if ".." in path.parts:
        raise UploadRefused("a path with '..' is refused")
    if path.is_absolute():
        for base in (
            PurePosixPath(os.path.abspath(sandbox)),
            PurePosixPath(os.path.realpath(sandbox)),
        ):
            if path.is_relative_to(base) and path != base:
                path = path.relative_to(base)
                break
        else:
            raise UploadRefused(f"{requested} is outside the upload sandbox")
    parts = [p for p in path.parts if p not in ("", ".")]
    if not parts:
        raise UploadRefused(f"{requested} names no file")
    return parts


def _is_link(parent: int, name: str) -> bool:
    """Only chooses the words of a refusal, never whether to refuse."""
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=parent, follow_symlinks=False).st_mode)
    except OSError:
        return False


def _step(parent: int, name: str, flags: int, requested: str) -> int:
    try:
        return os.open(name, flags, dir_fd=parent)
    except FileNotFoundError:
        raise UploadRefused(f"no such file in the sandbox: {requested}") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UploadRefused(
                f"{requested}: a symlink in the upload sandbox is refused"
            ) from None
        if exc.errno == errno.ENOTDIR and _is_link(parent, name):  # O_DIRECTORY says ENOTDIR
            raise UploadRefused(f"{requested}: a symlink in the sandbox is refused") from None
        if exc.errno == errno.ENOTDIR:
            raise UploadRefused(f"no such file in the sandbox: {requested}") from None
        raise UploadRefused(f"{requested} could not be opened") from None


def open_upload(sandbox: Path, requested: str) -> tuple[Path, int]:
    """``(path, descriptor)`` of the regular, singly linked file ``requested`` names inside
    ``sandbox``, reached without following a symlink; raises ``UploadRefused`` otherwise. The
    caller owns (and closes) the descriptor."""
    parts = _relative_parts(sandbox, requested)
    fd = _open_root(sandbox)
    try:
        for name in parts[:-1]:
            nxt = _step(fd, name, _DIR_FLAGS, requested)
            os.close(fd)
            fd = nxt
        nxt = _step(fd, parts[-1], _FILE_FLAGS, requested)
    finally:
        os.close(fd)
    try:
        st = os.fstat(nxt)
        if not stat.S_ISREG(st.st_mode):
            raise UploadRefused(f"{requested} is not a regular file")
        if st.st_nlink != 1:
            raise UploadRefused(
                f"{requested} is a hard link ({st.st_nlink} names): its other name may be "
                "outside the sandbox"
            )
        if st.st_size > MAX_UPLOAD_BYTES:
            raise UploadRefused(
                f"{requested} is {st.st_size} bytes; the limit is {MAX_UPLOAD_BYTES}"
            )
    except BaseException:
        os.close(nxt)
        raise
    return Path(os.path.realpath(sandbox)).joinpath(*parts), nxt


def resolve_upload(sandbox: Path, requested: str) -> Path:
    """The path of ``requested`` inside ``sandbox`` (checked as ``open_upload`` checks it)."""
    path, fd = open_upload(sandbox, requested)
    os.close(fd)
    return path


def check_upload(requested: str, env: Mapping[str, str] | None = None) -> tuple[Path, int]:
    """``(real path, size)`` of ``requested`` in the sandbox, judged on the descriptor
    ``open_upload`` opened (nothing of it is read); raises ``UploadRefused``. A path with a
    newline is refused too: the person's confirmation lists one path a line."""
    if "\n" in requested or "\r" in requested:
        raise UploadRefused("a path with a line break is refused")
    path, fd = open_upload(sandbox_dir(env), requested)
    try:
        size = os.fstat(fd).st_size
    finally:
        os.close(fd)
    if "\n" in str(path) or "\r" in str(path):
        raise UploadRefused("a path with a line break is refused")
    return path, size
