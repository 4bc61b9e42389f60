"""The download sandbox: the one directory files leave the browser into (page_pdf and
page_wait_download).

``sandbox_dir`` is the one place its location is resolved: ``TABWARDEN_DOWNLOAD_DIR``, else
``<config>/downloads``. ``DownloadSandbox`` writes into it — only this process writes there, and
only through ``save_bytes`` (a PDF the extension printed) and ``copy_in`` (a finished download
Chrome saved where the person's settings say: CDP's download redirection is a browser-level
command Chrome refuses to extensions, so the finished file is copied, and Chrome's own copy and
its download history are left alone).

Every file is created with ``O_CREAT | O_EXCL | O_NOFOLLOW`` relative to the sandbox's directory
descriptor, mode 0600, under a name ``safe_name`` made from the suggested one: one path component,
no ``..``, no leading dot, no control characters; a taken name gets a `` (n)`` suffix, so nothing
is ever overwritten and no name from the page or the agent can leave the directory. The sandbox
itself must be a directory we own, not a symlink (its ancestors are taken as the system has them);
a finished download is copied only from a regular file with one name, judged on the descriptor
that is read. It must never write outside the sandbox, overwrite a file, follow a symlink, or
put file content into a log line or an error.
"""

from __future__ import annotations

import errno
import os
import re
import stat
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from tabwarden.errors import TabwardenError
from tabwarden.paths import config_dir
from tabwarden.protocol.codes import INTERNAL_ERROR, POLICY_DENIED

#: Largest file written into the sandbox (a PDF or a copied download).
MAX_SANDBOX_FILE_BYTES = 512 * 1024 * 1024
#: Longest file name written (bytes of UTF-8), the extension kept.
MAX_NAME_BYTES = 120
#: How many `` (n)`` suffixes are tried before giving up.
MAX_SUFFIX = 999
_UNSAFE = re.compile(r"[^\w.\- ()+,=@]")
_COPY_CHUNK = 1024 * 1024


class SandboxUnavailable(TabwardenError):
    """The download sandbox cannot be used."""

    code = INTERNAL_ERROR
    hint = (
        "The download sandbox (TABWARDEN_DOWNLOAD_DIR, default <config>/downloads) must be a "
        "directory you own, not a symlink; fix or remove it and call again."
    )


class SandboxRefused(TabwardenError):
    """That file is not written into the sandbox."""

    code = POLICY_DENIED
    hint = (
        f"Files over {MAX_SANDBOX_FILE_BYTES // (1024 * 1024)} MiB are not saved; print fewer "
        "pages (pageRanges) or fetch less."
    )


def sandbox_dir(env: Mapping[str, str] | None = None) -> Path:
    """Where the download sandbox is: ``TABWARDEN_DOWNLOAD_DIR``, else ``<config>/downloads``."""
    env = dict(os.environ) if env is None else dict(env)
    explicit = env.get("TABWARDEN_DOWNLOAD_DIR")
    return Path(explicit) if explicit else config_dir(env) / "downloads"


def safe_name(suggested: str, fallback: str = "download") -> str:
    """One safe path component made from ``suggested``: its last component (``/`` and ``\\``
    both separate), NFC, control and unusual characters as ``_``, runs of dots as one, no
    leading dots or spaces,
    at most ``MAX_NAME_BYTES`` (the extension kept); ``fallback`` when nothing is left."""
    last = re.split(r"[/\\]", suggested or "")[-1]
    name = _UNSAFE.sub("_", unicodedata.normalize("NFC", last))
    name = re.sub(r"\.{2,}", ".", name).lstrip(". ").rstrip(" ")
    if not name or set(name) <= {"_", "."}:
        name = fallback
    stem, dot, ext = name.rpartition(".")
    if not dot or not stem or len(ext) > 16:
        stem, ext = name, ""
    suffix = f".{ext}" if ext else ""
    while len((stem + suffix).encode()) > MAX_NAME_BYTES:
        stem = stem[:-1]
    return stem + suffix


def _numbered(name: str, n: int) -> str:
    if n == 0:
        return name
    stem, dot, ext = name.rpartition(".")
    return f"{stem} ({n}).{ext}" if dot and stem else f"{name} ({n})"


@dataclass(frozen=True, slots=True)
class Saved:
    path: Path
    size: int


class DownloadSandbox:
    """Writes new files into the sandbox at ``root`` (created 0700 when missing)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> DownloadSandbox:
        return cls(sandbox_dir(env))

    def save_bytes(self, suggested: str, data: bytes, *, fallback: str) -> Saved:
        """Write ``data`` as a new file named after ``suggested``."""
        if len(data) > MAX_SANDBOX_FILE_BYTES:
            raise SandboxRefused(
                f"the file is {len(data)} bytes; the limit is {MAX_SANDBOX_FILE_BYTES}"
            )
        fd, path = self._create(suggested, fallback)
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        return Saved(path, len(data))

    def copy_in(self, source: str, suggested: str, *, expected_size: int | None) -> Saved:
        """Copy the regular file Chrome saved at ``source`` (never a symlink nor a hard link; at
        most ``MAX_SANDBOX_FILE_BYTES``; exactly ``expected_size`` bytes when given) into a new
        file named after ``suggested``. ``source`` is left as it is."""
        flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
        try:
            src = os.open(source, flags)
        except OSError as exc:  # the error's name only: the path may hold what the page named
            name = errno.errorcode.get(exc.errno or 0, "unknown error")
            raise SandboxUnavailable(
                f"the finished download could not be opened ({name})"
            ) from None
        st = os.fstat(src)
        if not stat.S_ISREG(st.st_mode) or st.st_nlink != 1:
            os.close(src)
            raise SandboxRefused(
                "the finished download is not a regular file"
                if not stat.S_ISREG(st.st_mode)
                # Chrome writes a new file: a second name is someone else's, maybe a secret's.
                else "the finished download is a hard link: its other name may be any file"
            )
        with os.fdopen(src, "rb") as fh:
            st = os.fstat(fh.fileno())
            if st.st_size > MAX_SANDBOX_FILE_BYTES:
                raise SandboxRefused(
                    f"the download is {st.st_size} bytes; the limit is {MAX_SANDBOX_FILE_BYTES}"
                )
            if expected_size is not None and st.st_size != expected_size:
                raise SandboxUnavailable("the finished download changed size since Chrome saved it")
            fd, path = self._create(suggested, "download")
            copied = 0
            with os.fdopen(fd, "wb") as out:
                while chunk := fh.read(_COPY_CHUNK):
                    copied += len(chunk)
                    if copied > MAX_SANDBOX_FILE_BYTES:
                        raise SandboxRefused("the download grew past the limit while copied")
                    out.write(chunk)
        return Saved(path, copied)

    def _open_root(self) -> int:
        try:
            self.root.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd = os.open(self.root, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            raise SandboxUnavailable(f"cannot open the download sandbox {self.root}") from None
        st = os.fstat(fd)
        if st.st_uid != os.getuid():
            os.close(fd)
            raise SandboxUnavailable(f"the download sandbox {self.root} is not yours")
        return fd

    def _create(self, suggested: str, fallback: str) -> tuple[int, Path]:
        """A new file's descriptor and path: the first free name of ``name``, ``name (1)``, …"""
        name = safe_name(suggested, fallback)
        root_fd = self._open_root()
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        try:
            for n in range(MAX_SUFFIX + 1):
                candidate = _numbered(name, n)
                try:
                    fd = os.open(candidate, flags, 0o600, dir_fd=root_fd)
                except FileExistsError:
                    continue
                except OSError:
                    raise SandboxUnavailable(
                        "could not create a file in the download sandbox"
                    ) from None
                return fd, self.root.resolve() / candidate
        finally:
            os.close(root_fd)
        raise SandboxUnavailable(f"the download sandbox has {MAX_SUFFIX} files named like {name}")
