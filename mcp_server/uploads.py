"""The upload sandbox: ``page_upload`` may only send files from one directory the person chose.

``resolve_upload`` takes a path the agent gave and returns the real file inside the sandbox, or
raises ``UploadRefused``: absolute paths outside it, any ``..`` component, symlinks leaving it
(resolved, then checked), non-regular files and files above ``MAX_UPLOAD_BYTES`` are refused.
``read_upload`` reads such a file without following a symlink swapped in since, re-checking type
and size on the open descriptor. It must never read a byte of a file it has not proven to be
inside the sandbox, and is only called after hop 1's gate let the call through (``tools.py``).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from pathlib import Path, PurePosixPath

from tabwarden.errors import TabwardenError
from tabwarden.paths import config_dir
from tabwarden.protocol.codes import POLICY_DENIED

#: The file travels host -> browser in one native message (base64), under Chrome's 1 MiB cap.
MAX_UPLOAD_BYTES = 700 * 1024


class UploadRefused(TabwardenError):
    """That file cannot be uploaded."""

    code = POLICY_DENIED
    hint = (
        "Put the file in the upload sandbox (TABWARDEN_UPLOAD_DIR, default <config>/uploads) "
        "and name it relative to it."
    )


def sandbox_dir(env: Mapping[str, str] | None = None) -> Path:
    env = dict(os.environ) if env is None else dict(env)
    explicit = env.get("TABWARDEN_UPLOAD_DIR")
    return Path(explicit) if explicit else config_dir(env) / "uploads"


def resolve_upload(sandbox: Path, requested: str) -> Path:
    """The real path of ``requested`` inside ``sandbox``; raises ``UploadRefused`` otherwise."""
    if not requested or "\x00" in requested:
        raise UploadRefused("empty or malformed path")
    parts = PurePosixPath(requested).parts
    if ".." in parts:
        raise UploadRefused("a path with '..' is refused")
    try:
        root = sandbox.resolve(strict=True)
    except OSError:
        raise UploadRefused(f"the upload sandbox {sandbox} does not exist") from None
    candidate = Path(requested) if os.path.isabs(requested) else root / requested
    try:
        real = candidate.resolve(strict=True)
    except OSError:
        raise UploadRefused(f"no such file in the sandbox: {requested}") from None
    if real != root and root not in real.parents:
        raise UploadRefused(f"{requested} is outside the upload sandbox")
    st = os.stat(real)
    if not stat.S_ISREG(st.st_mode):
        raise UploadRefused(f"{requested} is not a regular file")
    if st.st_size > MAX_UPLOAD_BYTES:
        raise UploadRefused(f"{requested} is {st.st_size} bytes; the limit is {MAX_UPLOAD_BYTES}")
    return real


def read_upload(requested: str, env: Mapping[str, str] | None = None) -> tuple[Path, bytes]:
    """``(real path, content)`` of ``requested`` in the sandbox; raises ``UploadRefused``."""
    real = resolve_upload(sandbox_dir(env), requested)
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(real, flags)
    except OSError:
        raise UploadRefused(f"{requested} could not be opened") from None
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_UPLOAD_BYTES:
            raise UploadRefused(f"{requested} changed while it was being read")
        data = fh.read(MAX_UPLOAD_BYTES + 1)
    if len(data) > MAX_UPLOAD_BYTES:
        raise UploadRefused(f"{requested} grew past the limit of {MAX_UPLOAD_BYTES} bytes")
    return real, data
