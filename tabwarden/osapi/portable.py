"""The process-table calls ``psutil`` answers on every OS it supports, shared by every
implementation (docs/adr/0020-macos-port.md). Errors come back as ``OSError``:
``ProcessLookupError`` when the process is gone, ``PermissionError`` when it is not ours to read.
"""

from __future__ import annotations

import errno

import psutil

__all__ = ["child_processes", "create_time", "parent_pid", "user_processes"]


def _os_error(pid: int, exc: psutil.Error) -> OSError:
    if isinstance(exc, psutil.NoSuchProcess):  # a zombie too: it runs nothing any more
        return ProcessLookupError(errno.ESRCH, f"no process {pid}")
    if isinstance(exc, psutil.AccessDenied):
        return PermissionError(errno.EACCES, f"cannot read process {pid}")
    return OSError(errno.EIO, f"cannot read process {pid}: {exc}")


def create_time(pid: int) -> float:
    """When ``pid`` started: with the PID, a process's identity against reuse. Every
    implementation promises only that one process reads the same at every call, in every process;
    not the unit nor the origin (Linux's is seconds since boot). ``ProcessLookupError`` when it
    is gone."""
    try:
        return float(psutil.Process(pid).create_time())
    except psutil.Error as exc:
        raise _os_error(pid, exc) from None


def parent_pid(pid: int) -> int:
    """The parent of ``pid``. ``ProcessLookupError`` when it is gone."""
    try:
        return int(psutil.Process(pid).ppid())
    except psutil.Error as exc:
        raise _os_error(pid, exc) from None


def child_processes(pid: int) -> list[tuple[int, list[str]]]:
    """(pid, argv) of each live child of ``pid`` (one whose argv cannot be read is left out)."""
    try:
        children = psutil.Process(pid).children()
    except psutil.Error as exc:
        raise _os_error(pid, exc) from None
    found = []
    for child in children:
        try:
            found.append((int(child.pid), list(child.cmdline())))
        except psutil.Error:
            continue
    return found


def user_processes(uid: int) -> list[tuple[int, list[str]]]:
    """(pid, argv) of every live (not zombie) process whose real UID is ``uid``."""
    rows: list[tuple[int, list[str]]] = []
    for proc in psutil.process_iter(["pid", "uids", "cmdline", "status"]):
        info = proc.info
        uids = info.get("uids")
        if uids is None or uids.real != uid or info.get("status") == psutil.STATUS_ZOMBIE:
            continue
        rows.append((info["pid"], list(info.get("cmdline") or [])))
    return rows
