"""The one way tabwarden reads and writes its private state: trust record, host key, audit log,
spawner memory and the native-messaging registration.

Theory of operation. Everything goes through a ``PrivateDir``: a directory file descriptor opened
``O_DIRECTORY | O_NOFOLLOW`` and checked with ``fstat`` on that descriptor (so the checked
directory is the one used) to be a real directory, owned by the effective uid, mode exactly 0700.
Every file is then named *relative to that descriptor* with ``O_NOFOLLOW``, so no path component
we trust can be swapped for a symlink underneath us. The rules, the same for every caller:

* directory: a real directory (not a symlink), owner == euid, mode exactly 0700;
* file: a regular file (not a symlink, FIFO, socket or device), owner == euid, no group/other
  permission bit (0600, or 0700 for an executable), exactly one hard link;
* a read is bounded: a file larger than the caller's limit is refused before it is read whole;
* an atomic write creates a temp file ``O_EXCL`` (0600, then the requested owner-only mode) in
  the directory, writes it, fsyncs it, renames it over the target and fsyncs the directory. An
  existing target that breaks the file rule is refused and left untouched.

Failures are typed (``UnsafeEntry``, ``EntryTooLarge``, ``EntryExists``, ``PrivateFsFailure``, all
``PrivateFsError``) and carry only a path and a reason: callers map them to their own error class,
code and message. This module must never follow a symlink, never "repair" a permission it finds
wrong (it refuses), never read a file it has not verified, never put file contents into an
exception, and never let a bare ``OSError`` escape.
"""

from __future__ import annotations

import errno
import fcntl
import os
import secrets
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import Final, Literal

__all__ = [
    "DIR_MODE",
    "FILE_MODE",
    "EntryExists",
    "EntryTooLarge",
    "PrivateDir",
    "PrivateFsError",
    "PrivateFsFailure",
    "UnsafeEntry",
    "UnsafeKind",
    "file_problem",
    "open_private_dir",
    "read_capped",
]

#: The only mode a private directory may have.
DIR_MODE: Final = 0o700
#: The mode private files are created with (an executable may ask for 0700).
FILE_MODE: Final = 0o600
_OWNER_ONLY: Final = 0o077  # no bit of these may be set on a private file

_O_CLOEXEC: Final = getattr(os, "O_CLOEXEC", 0)
_O_NOFOLLOW: Final = getattr(os, "O_NOFOLLOW", 0)
_O_DIRECTORY: Final = getattr(os, "O_DIRECTORY", 0)

UnsafeKind = Literal["symlink", "not_directory", "not_regular", "owner", "mode", "links"]


class PrivateFsError(Exception):
    """A private directory or file could not be used. ``str()`` is the path and the reason only."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"{path} {reason}")
        self.path = path
        self.reason = reason


class UnsafeEntry(PrivateFsError):
    """The directory or file breaks a rule (symlink, wrong type, owner, mode or link count)."""

    def __init__(self, path: Path, reason: str, kind: UnsafeKind) -> None:
        super().__init__(path, reason)
        self.kind: UnsafeKind = kind


class EntryTooLarge(PrivateFsError):
    """The file is larger than the caller's read limit; nothing of it was returned."""


class EntryExists(PrivateFsError):
    """``create_new`` found the name taken by a private file; it was left as it was."""


class PrivateFsFailure(PrivateFsError):
    """The operating system refused an operation (``errno`` says which); not a rule violation."""

    def __init__(self, path: Path, reason: str, errno_: int | None) -> None:
        super().__init__(path, reason)
        self.errno = errno_


class DiskFull(PrivateFsFailure):
    """No space (or quota) left where the file was to be written: nothing was replaced."""


#: The errors that mean "free some space and try again", not "something is wrong".
_NO_SPACE: Final = frozenset({errno.ENOSPC, errno.EDQUOT})


def _failure(path: Path, verb: str, exc: OSError) -> PrivateFsFailure:
    kind = DiskFull if exc.errno in _NO_SPACE else PrivateFsFailure
    return kind(path, f"cannot be {verb} ({exc.strerror or type(exc).__name__})", exc.errno)


def file_problem(st: os.stat_result) -> tuple[str, UnsafeKind] | None:
    """Why ``st`` is not a private file of ours (reason, kind), or None if it is."""
    if stat.S_ISLNK(st.st_mode):
        return "is a symlink", "symlink"
    if not stat.S_ISREG(st.st_mode):
        return "is not a regular file", "not_regular"
    if st.st_uid != os.geteuid():
        return f"is owned by uid {st.st_uid}, not {os.geteuid()}", "owner"
    mode = stat.S_IMODE(st.st_mode)
    if mode & _OWNER_ONLY:
        return f"has mode {mode:04o}; it must be 0600", "mode"
    if st.st_nlink != 1:
        return f"has {st.st_nlink} hard links, expected 1", "links"
    return None


def _dir_problem(st: os.stat_result) -> tuple[str, UnsafeKind] | None:
    if not stat.S_ISDIR(st.st_mode):
        return "is not a directory", "not_directory"
    if st.st_uid != os.geteuid():
        return f"is owned by uid {st.st_uid}, not {os.geteuid()}", "owner"
    mode = stat.S_IMODE(st.st_mode)
    if mode != DIR_MODE:
        return f"has mode {mode:04o}, not 0700", "mode"
    return None


def read_capped(fd: int, limit: int, chunk: int = 65536) -> bytes | None:
    """Everything readable from ``fd``, or None as soon as it exceeds ``limit`` bytes."""
    parts: list[bytes] = []
    total = 0
    while data := os.read(fd, chunk):
        parts.append(data)
        total += len(data)
        if total > limit:
            return None
    return b"".join(parts)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _create_missing(directory: Path) -> None:
    """mkdir every missing component of ``directory``, each 0700 (existing ones are untouched)."""
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
        except OSError as exc:
            raise _failure(d, "created", exc) from None


def open_private_dir(directory: Path | str, *, create: bool) -> PrivateDir | None:
    """The verified directory (a context manager), or None when it does not exist.

    With ``create`` a missing directory (and any missing parents) is made 0700 first; an existing
    one is never changed. Raises ``UnsafeEntry`` when it breaks the directory rule.
    """
    path = Path(directory)
    if create:
        _create_missing(path)
    try:
        dfd = os.open(path, os.O_RDONLY | _O_DIRECTORY | _O_NOFOLLOW | _O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            kind: UnsafeKind = "symlink" if os.path.islink(path) else "not_directory"
            reason = "is a symlink" if kind == "symlink" else "is not a directory"
            raise UnsafeEntry(path, reason, kind) from None
        raise _failure(path, "opened", exc) from None
    try:
        problem = _dir_problem(os.fstat(dfd))
    except OSError as exc:
        os.close(dfd)
        raise _failure(path, "examined", exc) from None
    if problem is not None:
        os.close(dfd)
        raise UnsafeEntry(path, *problem)
    return PrivateDir(path, dfd)


class PrivateDir:
    """An open, verified private directory. Every name is resolved relative to its descriptor."""

    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self._fd = fd

    # -- lifetime ------------------------------------------------------------------------------

    @property
    def fd(self) -> int:
        if self._fd < 0:
            raise ValueError("the private directory is closed")
        return self._fd

    def close(self) -> None:
        if self._fd >= 0:
            fd, self._fd = self._fd, -1
            os.close(fd)

    def __enter__(self) -> PrivateDir:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- examining -----------------------------------------------------------------------------

    def lstat(self, name: str) -> os.stat_result | None:
        """The entry's own status (a symlink is not followed), or None when it does not exist."""
        try:
            return os.lstat(name, dir_fd=self.fd)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise _failure(self.path / name, "examined", exc) from None

    def check(self, name: str) -> os.stat_result | None:
        """The entry's status if it is a private file, None if absent; else ``UnsafeEntry``."""
        st = self.lstat(name)
        if st is not None and (problem := file_problem(st)) is not None:
            raise UnsafeEntry(self.path / name, *problem)
        return st

    # -- opening and reading -------------------------------------------------------------------

    def open_file(self, name: str, flags: int, *, create: bool = False) -> int:
        """A descriptor on the verified private file ``name`` (blocking mode restored).

        ``flags`` are the access flags (``O_RDONLY``, ``O_RDWR | O_APPEND``, ...); ``create``
        makes a missing file 0600. Opened ``O_NONBLOCK`` so a planted FIFO cannot hang us. A
        missing file without ``create`` is a ``PrivateFsFailure`` with ``errno == ENOENT``.
        """
        path = self.path / name
        flags |= _O_NOFOLLOW | _O_CLOEXEC | os.O_NONBLOCK
        if create:
            flags |= os.O_CREAT
        try:
            fd = os.open(name, flags, FILE_MODE, dir_fd=self.fd)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise UnsafeEntry(path, "is a symlink", "symlink") from None
            if exc.errno in (errno.ENXIO, errno.EISDIR):  # FIFO without a reader; a directory
                raise UnsafeEntry(path, "is not a regular file", "not_regular") from None
            raise _failure(path, "opened", exc) from None
        try:
            problem = file_problem(os.fstat(fd))
            if problem is not None:
                raise UnsafeEntry(path, *problem)
            os.set_blocking(fd, True)
        except OSError as exc:
            os.close(fd)
            raise _failure(path, "examined", exc) from None
        except BaseException:
            os.close(fd)
            raise
        return fd

    def read(self, name: str, limit: int) -> tuple[bytes, os.stat_result] | None:
        """The whole private file and its status, or None when it does not exist.

        Raises ``UnsafeEntry`` (nothing read) or ``EntryTooLarge`` past ``limit`` bytes.
        """
        try:
            fd = self.open_file(name, os.O_RDONLY)
        except PrivateFsFailure as exc:
            if exc.errno == errno.ENOENT:
                return None
            raise
        path = self.path / name
        try:
            st = os.fstat(fd)
            raw = read_capped(fd, limit) if st.st_size <= limit else None
        except OSError as exc:
            raise _failure(path, "read", exc) from None
        finally:
            os.close(fd)
        if raw is None:
            raise EntryTooLarge(path, f"is larger than {limit} bytes")
        return raw, st

    # -- writing -------------------------------------------------------------------------------

    def _new_temp(self, name: str, data: bytes, mode: int) -> str:
        """A fully written, fsynced temp file beside ``name``; its name."""
        if mode & _OWNER_ONLY or mode & ~0o700:
            raise ValueError(f"private files are owner-only, not mode {mode:04o}")
        temp = f".{name}.{secrets.token_hex(8)}.tmp"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_NOFOLLOW | _O_CLOEXEC
        try:
            fd = os.open(temp, flags, FILE_MODE, dir_fd=self.fd)
        except OSError as exc:
            raise _failure(self.path / name, "written", exc) from None
        try:
            try:
                os.fchmod(fd, mode)  # whatever the umask
                _write_all(fd, data)
                os.fsync(fd)
            finally:
                os.close(fd)
        except BaseException as exc:
            self._discard(temp)
            if isinstance(exc, OSError):
                raise _failure(self.path / name, "written", exc) from None
            raise
        return temp

    def _discard(self, temp: str) -> None:
        try:
            os.unlink(temp, dir_fd=self.fd)
        except OSError:
            pass

    def fsync(self) -> None:
        try:
            os.fsync(self.fd)
        except OSError as exc:
            raise _failure(self.path, "synced", exc) from None

    def write_atomic(self, name: str, data: bytes, mode: int = FILE_MODE) -> None:
        """Replace (or create) ``name`` with ``data`` atomically: readers see old or new, whole.

        An existing ``name`` that breaks the file rule raises ``UnsafeEntry`` and is not touched.
        """
        self.check(name)
        temp = self._new_temp(name, data, mode)
        try:
            os.replace(temp, name, src_dir_fd=self.fd, dst_dir_fd=self.fd)
        except OSError as exc:
            self._discard(temp)
            raise _failure(self.path / name, "written", exc) from None
        except BaseException:
            self._discard(temp)
            raise
        self.fsync()

    def create_new(self, name: str, data: bytes, mode: int = FILE_MODE) -> None:
        """Create ``name`` with ``data``, never replacing anything: ``EntryExists`` if it exists.

        The file appears whole (a written temp file is hard-linked into place), or not at all.
        """
        if self.check(name) is not None:
            raise EntryExists(self.path / name, "already exists")
        temp = self._new_temp(name, data, mode)
        try:
            os.link(temp, name, src_dir_fd=self.fd, dst_dir_fd=self.fd, follow_symlinks=False)
        except FileExistsError:
            self._discard(temp)
            self.check(name)  # raced by something unsafe: say so
            raise EntryExists(self.path / name, "already exists") from None
        except OSError as exc:
            self._discard(temp)
            raise _failure(self.path / name, "written", exc) from None
        except BaseException:
            self._discard(temp)
            raise
        self._discard(temp)
        self.fsync()

    def rename(self, src: str, dst: str) -> bool:
        """Rename ``src`` over ``dst`` inside this directory; False when ``src`` does not exist."""
        try:
            os.replace(src, dst, src_dir_fd=self.fd, dst_dir_fd=self.fd)
        except FileNotFoundError:
            return False
        except OSError as exc:
            raise _failure(self.path / src, "renamed", exc) from None
        return True

    def unlink(self, name: str) -> bool:
        """Remove the entry ``name`` (a symlink itself, never its target); False if absent."""
        try:
            os.unlink(name, dir_fd=self.fd)
        except FileNotFoundError:
            return False
        except OSError as exc:
            raise _failure(self.path / name, "removed", exc) from None
        self.fsync()
        return True

    @contextmanager
    def locked(self, name: str, *, exclusive: bool = True) -> Iterator[None]:
        """Hold an ``flock`` on the private lock file ``name`` (created 0600 if missing)."""
        fd = self.open_file(name, os.O_RDWR, create=True)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
            except OSError as exc:
                raise _failure(self.path / name, "locked", exc) from None
            yield
        finally:
            os.close(fd)  # closing releases the flock
