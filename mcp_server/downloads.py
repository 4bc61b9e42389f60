"""The download sandbox: the one directory tools write files into (``page_fetch``'s ``saveAs``).

``sandbox_dir`` is ``TABWARDEN_DOWNLOAD_DIR``, else ``<config>/downloads`` (mirroring the upload
sandbox, ``uploads.py``). ``target`` checks a name the agent gave before anything is asked of the
browser: a plain file name (no directory part, no ``..``, not hidden), not already there.
``save_download`` then writes the bytes under that name, creating the file exclusively (``O_EXCL``,
``O_NOFOLLOW``, mode 0600) in a directory it creates 0700 and checks is a real directory owned by
us. It must never write outside the sandbox, follow a symlink, replace an existing file, or write
more than ``MAX_DOWNLOAD_BYTES``; and it is only called after hop 1's gate let the call through
and the person confirmed it in the browser (``tools.py``).
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Mapping
from pathlib import Path

from tabwarden.errors import TabwardenError
from tabwarden.paths import config_dir
from tabwarden.protocol.codes import BAD_REQUEST

#: The most bytes one saved body may have (the extension's own cap, handlers/fetch.js).
MAX_DOWNLOAD_BYTES = 10 * 1024 * 1024
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._ -]{0,254}$")


class DownloadRefused(TabwardenError):
    """That file cannot be written into the download sandbox."""

    code = BAD_REQUEST
    hint = (
        "Give saveAs a new plain file name (no directory, not hidden); files land in the download "
        "sandbox (TABWARDEN_DOWNLOAD_DIR, default <config>/downloads)."
    )


def sandbox_dir(env: Mapping[str, str] | None = None) -> Path:
    env = dict(os.environ) if env is None else dict(env)
    explicit = env.get("TABWARDEN_DOWNLOAD_DIR")
    return Path(explicit) if explicit else config_dir(env) / "downloads"


def _checked_name(name: str) -> str:
    if not _NAME.match(name) or ".." in name:
        raise DownloadRefused(f"{name!r} is not a plain file name")
    return name


def target(name: str, env: Mapping[str, str] | None = None) -> Path:
    """Where ``name`` would be written; ``DownloadRefused`` for a bad or existing name."""
    path = sandbox_dir(env) / _checked_name(name)
    if os.path.lexists(path):
        raise DownloadRefused(f"{name} already exists in the download sandbox")
    return path


def _sandbox(env: Mapping[str, str] | None) -> Path:
    root = sandbox_dir(env)
    try:
        root.mkdir(mode=0o700, parents=True, exist_ok=True)
        st = os.lstat(root)
    except OSError as exc:
        raise DownloadRefused(f"the download sandbox {root} cannot be created: {exc}") from None
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid():
        raise DownloadRefused(f"the download sandbox {root} is not a directory of yours")
    return root


def save_download(name: str, data: bytes, env: Mapping[str, str] | None = None) -> Path:
    """Write ``data`` as ``name`` in the sandbox (a new file, 0600); its path."""
    if len(data) > MAX_DOWNLOAD_BYTES:
        raise DownloadRefused(f"{len(data)} bytes is more than {MAX_DOWNLOAD_BYTES}")
    path = _sandbox(env) / _checked_name(name)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(path, flags, 0o600)
    except FileExistsError:
        raise DownloadRefused(f"{name} already exists in the download sandbox") from None
    except OSError as exc:
        raise DownloadRefused(f"{name} could not be created: {exc.strerror}") from None
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    return path
