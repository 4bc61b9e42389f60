"""The audit log: an append-only JSONL record of every trust decision — never a secret.

One line per event::

    {"ts": 1718000000, "event": "pair", "decision": "allow", "path": "terminal", ...fields}

``path`` names what authorised the decision: ``"terminal"`` (a typed ceremony), ``"webauthn"``,
``"window"`` (the confirm window) or ``None`` (nothing did: a denial, or an automatic event).

Guarantees:

* Lines are written with one ``write`` on an ``O_APPEND`` descriptor, under an ``flock`` on the
  sibling ``<name>.lock`` — concurrent writers never interleave or lose lines, rotation included.
* Durability, by ``sync``: ``"each"`` (the default) calls ``fsync`` before ``append`` returns.
  ``"group"`` (the MCP server's per-call records) returns once the line is written — in the
  kernel, so a crash of *this process* loses nothing — and a background thread calls ``fsync``
  on it at once, grouping lines that arrive while one ``fsync`` runs; ``flush`` waits for that.
  Only an OS crash or power loss can lose a ``"group"`` line: those written in the last few
  milliseconds, whose ``fsync`` had not finished. Grants and ceremonies use ``"each"``.
* The directory and every file are opened through ``tabwarden.private_fs``: the directory must
  be ours, mode exactly 0700, not a symlink; each file a regular file we own with no group/other
  bit and a single link (``O_NOFOLLOW``, relative to the checked directory). Anything else
  raises ``UnsafeAuditLog`` and is left untouched. New files are created 0600.
* When the next line would take the file past ``max_bytes`` it is rotated: ``.1`` → ``.2`` …
  up to ``.<keep>`` (the oldest is dropped), then the live file → ``.1``.
* Field values whose key looks secret-bearing (secret, token, password, code, cookie, nonce, mac,
  key — any case, anywhere in the key, at any nesting depth) are written as ``"[redacted]"``.
  Over-redaction is intended: name a harmless field ``error``, not ``error_code``.
* ``read`` never fails on a damaged line: it skips it and counts it (``corrupt_lines``).
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from tabwarden.errors import TabwardenError
from tabwarden.paths import config_dir
from tabwarden.private_fs import (
    EntryTooLarge,
    PrivateDir,
    PrivateFsError,
    PrivateFsFailure,
    open_private_dir,
)
from tabwarden.protocol.codes import UNSAFE_AUDIT_LOG

DEFAULT_MAX_BYTES = 5 * 1024 * 1024
DEFAULT_KEEP = 5
REDACTED = "[redacted]"
AUTH_PATHS = frozenset({"terminal", "webauthn", "window"})
SECRET_KEY_RE = re.compile(r"secret|token|passw|code|cookie|nonce|mac|key", re.IGNORECASE)
_RESERVED = frozenset({"ts", "event", "decision", "path"})
#: How far past ``max_bytes`` a log file may be and still be read (one line may overshoot).
_READ_SLACK = 1024 * 1024

log = logging.getLogger("tabwarden.audit")


class UnsafeAuditLog(TabwardenError):
    """The audit log file is not private to this user."""

    code = UNSAFE_AUDIT_LOG
    exit_status = 3
    hint = "Remove or fix it (a regular file owned by you, mode 0600, not a symlink) and retry."


@contextmanager
def _mapped() -> Iterator[None]:
    """A private-filesystem refusal becomes ``UnsafeAuditLog``; a failure of the OS stays an
    ``OSError`` (as before: callers treat the two differently)."""
    try:
        yield
    except PrivateFsFailure as exc:
        raise OSError(exc.errno, str(exc)) from None
    except PrivateFsError as exc:
        raise UnsafeAuditLog(str(exc)) from None


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
        return os.fsdecode(os.fspath(obj))
    raise TypeError(f"audit field of type {type(obj).__name__} is not JSON-serialisable")


class _GroupSync:
    """Calls ``fsync`` on the descriptors handed to it on its own daemon thread, as soon as they
    arrive; those that arrive while an ``fsync`` runs go together in the next round (one
    ``fsync`` per file). It owns each descriptor it is given and closes it."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._pending: list[int] = []
        self._submitted = 0
        self._synced = 0
        self._thread: threading.Thread | None = None

    def submit(self, fd: int) -> None:
        with self._cond:
            self._pending.append(fd)
            self._submitted += 1
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="audit-fsync", daemon=True)
                self._thread.start()
            self._cond.notify_all()

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every descriptor submitted so far is synced; False on timeout."""
        with self._cond:
            target = self._submitted
            return self._cond.wait_for(lambda: self._synced >= target, timeout)

    def _run(self) -> None:
        while True:
            with self._cond:
                self._cond.wait_for(lambda: bool(self._pending))
                batch, self._pending = self._pending, []
                upto = self._submitted
            done: set[tuple[int, int]] = set()
            for fd in reversed(batch):  # the newest descriptor of a file covers its older lines
                try:
                    st = os.fstat(fd)
                    if (st.st_dev, st.st_ino) not in done:
                        done.add((st.st_dev, st.st_ino))
                        os.fsync(fd)
                except OSError as exc:
                    log.warning("audit log fsync failed: %s", exc)
                finally:
                    os.close(fd)
            with self._cond:
                self._synced = upto
                self._cond.notify_all()


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
        sync: Literal["each", "group"] = "each",
    ) -> None:
        if sync not in ("each", "group"):
            raise ValueError('sync must be "each" or "group"')
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
        self._group = _GroupSync() if sync == "group" else None

    @classmethod
    def default(cls, env: dict[str, str] | None = None, **kwargs: Any) -> AuditLog:
        return cls(default_audit_path(env), **kwargs)

    def rotated(self, n: int) -> Path:
        return self.path.with_name(f"{self.path.name}.{n}")

    # ------------------------------------------------------------------ opening, safely

    @contextmanager
    def _directory(self, *, create: bool) -> Iterator[PrivateDir | None]:
        """The verified log directory, or None if missing (refusals → ``UnsafeAuditLog``)."""
        with _mapped():
            directory = open_private_dir(self.path.parent, create=create)
        if directory is None:
            yield None
            return
        with directory, _mapped():
            yield directory

    # ------------------------------------------------------------------ writing

    def append(self, event: str, *, decision: str, path: str | None = None, **fields: Any) -> None:
        """Write one redacted event line (durably as ``sync`` says); rotate first if it would
        overflow."""
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

        with self._directory(create=True) as directory:
            if directory is None:  # removed between mkdir and open
                raise UnsafeAuditLog(f"{self.path.parent} disappeared while writing")
            with directory.locked(self.lock_path.name):
                self._append_locked(directory, line)

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every line appended so far is on disk (``sync="group"``); False when
        ``timeout`` seconds passed first. With ``sync="each"`` every line already is."""
        return True if self._group is None else self._group.flush(timeout)

    def _append_locked(self, directory: PrivateDir, line: bytes) -> None:
        live = os.O_RDWR | os.O_APPEND
        fd = directory.open_file(self.path.name, live, create=True)
        try:
            size = os.fstat(fd).st_size
            if size > 0 and size + len(line) > self.max_bytes:
                os.close(fd)
                fd = -1
                self._rotate(directory)
                fd = directory.open_file(self.path.name, live, create=True)
                size = os.fstat(fd).st_size
            if size > 0 and os.pread(fd, 1, size - 1) != b"\n":
                line = b"\n" + line  # a torn line (crash mid-write) must not swallow ours
            view = memoryview(line)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            if self._group is None:
                os.fsync(fd)
            else:
                self._group.submit(fd)  # it closes fd once synced
                fd = -1
        finally:
            if fd >= 0:
                os.close(fd)

    def _rotate(self, directory: PrivateDir) -> None:
        """Shift ``.N`` → ``.N+1`` (dropping ``.keep``) and the live file → ``.1``. Lock held.

        Every file that moves is checked first, so rotation never shuffles a planted symlink or
        someone else's file into the set ``scan`` reads."""
        for n in range(self.keep, 0, -1):
            directory.check(self.rotated(n).name)
        for n in range(self.keep - 1, 0, -1):
            directory.rename(self.rotated(n).name, self.rotated(n + 1).name)
        directory.rename(self.path.name, self.rotated(1).name)
        directory.fsync()

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
        if limit == 0:
            return result
        chunks: list[list[dict[str, Any]]] = []
        have = 0
        with self._directory(create=False) as directory:
            if directory is None:
                return result
            with directory.locked(self.lock_path.name, exclusive=False):
                for path in reversed(self.files()):  # newest file first; stop once enough
                    records, corrupt = self._read_file(directory, path.name)
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

    def _read_file(self, directory: PrivateDir, name: str) -> tuple[list[dict[str, Any]], int]:
        """The records in one log file and its count of damaged lines.

        A file past the read bound (``max_bytes`` plus ``_READ_SLACK``: rotation lets one line
        overshoot) is not read at all and counts as one damaged line."""
        try:
            found = directory.read(name, self.max_bytes + _READ_SLACK)
        except EntryTooLarge:
            return [], 1
        if found is None:
            return [], 0
        data = found[0]
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
