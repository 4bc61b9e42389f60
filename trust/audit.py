"""The audit log: an append-only JSONL record of every trust decision — never a secret.

One line per event::

    {"ts": 1718000000, "event": "pair", "decision": "allow", "path": "terminal", ...fields}

``path`` names what authorised the decision: ``"terminal"`` (a typed ceremony), ``"webauthn"``,
``"window"`` (the confirm window) or ``None`` (nothing did: a denial, or an automatic event).

Guarantees:

* Lines are written with one ``write`` on an ``O_APPEND`` descriptor, under an ``flock`` on the
  sibling ``<name>.lock`` and followed by ``fsync`` — concurrent writers never interleave or lose
  lines, rotation included.
* The file is opened ``O_NOFOLLOW`` and must be a regular file we own, mode 0600 at most (no
  group/other bits), with a single link; anything else raises ``UnsafeAuditLog`` and is left
  untouched. New files are created 0600.
* When the next line would take the file past ``max_bytes`` it is rotated: ``.1`` → ``.2`` …
  up to ``.<keep>`` (the oldest is dropped), then the live file → ``.1``.
* Field values whose key looks secret-bearing (secret, token, password, code, cookie, nonce, mac,
  key — any case, anywhere in the key, at any nesting depth) are written as ``"[redacted]"``.
  Over-redaction is intended: name a harmless field ``error``, not ``error_code``.
* ``read`` never fails on a damaged line: it skips it and counts it (``corrupt_lines``).
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tabwarden.errors import TabwardenError
from tabwarden.paths import config_dir, private_file_problem

DEFAULT_MAX_BYTES = 5 * 1024 * 1024
DEFAULT_KEEP = 5
REDACTED = "[redacted]"
AUTH_PATHS = frozenset({"terminal", "webauthn", "window"})
SECRET_KEY_RE = re.compile(r"secret|token|passw|code|cookie|nonce|mac|key", re.IGNORECASE)
_RESERVED = frozenset({"ts", "event", "decision", "path"})


class UnsafeAuditLog(TabwardenError):
    """The audit log file is not private to this user."""

    code = "unsafe_audit_log"
    exit_status = 3
    hint = "Remove or fix it (a regular file owned by you, mode 0600, not a symlink) and retry."


def default_audit_path(env: dict[str, str] | None = None) -> Path:
    return config_dir(env) / "audit.jsonl"


def redact_fields(value: Any) -> Any:
    """A copy of ``value`` with every secret-looking key's value replaced by ``"[redacted]"``."""
    if isinstance(value, dict):
        return {
            str(k): REDACTED if SECRET_KEY_RE.search(str(k)) else redact_fields(v)
            for k, v in value.items()
        }
    if isinstance(value, (list, tuple)):
        return [redact_fields(v) for v in value]
    return value


def _json_default(obj: object) -> str:
    if isinstance(obj, os.PathLike):
        return os.fspath(obj)  # type: ignore[return-value]
    raise TypeError(f"audit field of type {type(obj).__name__} is not JSON-serialisable")


@dataclass(slots=True)
class AuditScan:
    records: list[dict[str, Any]] = field(default_factory=list)
    corrupt: int = 0


class AuditLog:
    """Append-only JSONL audit log at ``path`` (see the module docstring for the guarantees)."""

    def __init__(
        self,
        path: Path | str,
        *,
        max_bytes: int = DEFAULT_MAX_BYTES,
        keep: int = DEFAULT_KEEP,
        now: Callable[[], float] = time.time,
    ) -> None:
        if max_bytes < 1:
            raise ValueError("max_bytes must be positive")
        if keep < 1:
            raise ValueError("keep must be at least 1")
        self.path = Path(path)
        self.lock_path = self.path.with_name(self.path.name + ".lock")
        self.max_bytes = max_bytes
        self.keep = keep
        self.now = now
        #: How many damaged lines the last ``read`` skipped.
        self.corrupt_lines = 0

    @classmethod
    def default(cls, env: dict[str, str] | None = None, **kwargs: Any) -> AuditLog:
        return cls(default_audit_path(env), **kwargs)

    def rotated(self, n: int) -> Path:
        return self.path.with_name(f"{self.path.name}.{n}")

    # ------------------------------------------------------------------ opening, safely

    def _open(self, path: Path, flags: int, *, create: bool) -> int:
        flags |= os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK  # NONBLOCK: a FIFO cannot hang us
        if create:
            flags |= os.O_CREAT
        try:
            fd = os.open(path, flags, 0o600)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise UnsafeAuditLog(f"{path} is a symlink") from None
            if exc.errno == errno.ENXIO:
                raise UnsafeAuditLog(f"{path} is not a regular file") from None
            raise
        try:
            self._verify(path, os.fstat(fd))
            os.set_blocking(fd, True)
        except BaseException:
            os.close(fd)
            raise
        return fd

    @staticmethod
    def _verify(path: Path, st: os.stat_result) -> None:
        if (problem := private_file_problem(st, path)) is not None:
            raise UnsafeAuditLog(problem)
        if st.st_nlink != 1:
            raise UnsafeAuditLog(f"{path} has {st.st_nlink} hard links, expected 1")

    @contextmanager
    def _locked(self, operation: int) -> Iterator[None]:
        fd = self._open(self.lock_path, os.O_RDWR, create=True)
        try:
            fcntl.flock(fd, operation)
            yield
        finally:
            os.close(fd)  # closing releases the flock

    def _fsync_dir(self) -> None:
        try:
            dfd = os.open(self.path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError:
            return
        try:
            os.fsync(dfd)
        except OSError:
            pass
        finally:
            os.close(dfd)

    # ------------------------------------------------------------------ writing

    def append(self, event: str, *, decision: str, path: str | None = None, **fields: Any) -> None:
        """Write one redacted event line, durably; rotate first if it would overflow."""
        if path is not None and path not in AUTH_PATHS:
            raise ValueError(f"path must be one of {sorted(AUTH_PATHS)} or None, not {path!r}")
        clash = _RESERVED & fields.keys()
        if clash:
            raise ValueError(f"reserved audit field(s): {sorted(clash)}")
        record: dict[str, Any] = {
            "ts": int(self.now()),
            "event": event,
            "decision": decision,
            "path": path,
        }
        record.update(redact_fields(fields))
        line = (
            json.dumps(
                record,
                ensure_ascii=True,
                allow_nan=False,
                separators=(",", ":"),
                default=_json_default,
            ).encode("ascii")
            + b"\n"
        )

        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        with self._locked(fcntl.LOCK_EX):
            fd = self._open(self.path, os.O_RDWR | os.O_APPEND, create=True)
            try:
                size = os.fstat(fd).st_size
                if size > 0 and size + len(line) > self.max_bytes:
                    os.close(fd)
                    fd = -1
                    self._rotate()
                    fd = self._open(self.path, os.O_RDWR | os.O_APPEND, create=True)
                    size = os.fstat(fd).st_size
                if size > 0 and os.pread(fd, 1, size - 1) != b"\n":
                    line = b"\n" + line  # a torn line (crash mid-write) must not swallow ours
                view = memoryview(line)
                while view:
                    written = os.write(fd, view)
                    view = view[written:]
                os.fsync(fd)
            finally:
                if fd >= 0:
                    os.close(fd)

    def _rotate(self) -> None:
        """Shift ``.N`` → ``.N+1`` (dropping ``.keep``) and the live file → ``.1``. Lock held."""
        for n in range(self.keep - 1, 0, -1):
            try:
                os.replace(self.rotated(n), self.rotated(n + 1))
            except FileNotFoundError:
                pass
        os.replace(self.path, self.rotated(1))
        self._fsync_dir()

    # ------------------------------------------------------------------ reading

    def files(self) -> list[Path]:
        """The log files, oldest first (``.keep`` … ``.1``, then the live file)."""
        return [self.rotated(n) for n in range(self.keep, 0, -1)] + [self.path]

    def scan(self, limit: int | None = None) -> AuditScan:
        """Records newest last across rotated files (the last ``limit`` if given), plus the
        number of damaged lines skipped in the files read."""
        if limit is not None and limit < 0:
            raise ValueError("limit must be >= 0")
        result = AuditScan()
        if limit == 0 or not self.path.parent.is_dir():
            return result
        chunks: list[list[dict[str, Any]]] = []
        have = 0
        with self._locked(fcntl.LOCK_SH):
            for path in reversed(self.files()):  # newest file first; stop once we have enough
                records, corrupt = self._read_file(path)
                chunks.append(records)
                result.corrupt += corrupt
                have += len(records)
                if limit is not None and have >= limit:
                    break
        for records in reversed(chunks):
            result.records.extend(records)
        if limit is not None:
            result.records = result.records[-limit:]
        return result

    def read(self, limit: int | None = None) -> list[dict[str, Any]]:
        """Records newest last; damaged lines are skipped and counted in ``corrupt_lines``."""
        scan = self.scan(limit)
        self.corrupt_lines = scan.corrupt
        return scan.records

    def _read_file(self, path: Path) -> tuple[list[dict[str, Any]], int]:
        try:
            fd = self._open(path, os.O_RDONLY, create=False)
        except FileNotFoundError:
            return [], 0
        with os.fdopen(fd, "rb") as fh:
            data = fh.read()
        records: list[dict[str, Any]] = []
        corrupt = 0
        lines = data.split(b"\n")
        tail = lines.pop()  # b"" when the file ends with a newline; else a torn last line
        if tail:
            lines.append(tail)
        for raw in lines:
            if not raw.strip():
                continue
            try:
                obj = json.loads(raw.decode("utf-8"))
            except (UnicodeDecodeError, ValueError):
                corrupt += 1
                continue
            if not isinstance(obj, dict):
                corrupt += 1
                continue
            records.append(obj)
        return records, corrupt
