"""Session identity on hop 2: which MCP server a tab belongs to, as the host measures it.

A session is one ``tabwarden mcp`` process. Its name is derived only from what the host measures
of the attested peer: the kernel's boot id, the peer's PID (from ``SO_PEERCRED``, pinned by the
speaker binding) and that process's start time (``/proc/<pid>/stat`` field 22, clock ticks since
boot). The same process therefore gets the same name on every connection — after the host was
restarted, after the worker was recycled — and a new process gets a new one: a recycled PID has
another start time, a reboot another boot id.

    name = "s-<pid>-" + hex(SHA-256("tabwarden/session/v1\\n" boot_id "\\n" pid "\\n" start))[:20]

The name is never a claim: nothing a connection sends can choose or change it, and the extension
only learns it from the host on the native port Chrome opened. So it does not need a key: knowing
(or computing) another process's name gives nothing, because no party but the host can put a
name in front of the extension. The PID is in the name so that a later host (which remembers
nothing) can tell whether the process behind a name is still alive: ``session_alive`` measures
``/proc/<pid>`` again and recomputes the digest.

Pure parts (``session_name``, ``parse_session``) take their inputs; the measuring parts read
``/proc`` and nothing else. Nothing here may accept a session name from a connection.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

from tabwarden import osapi
from tabwarden.errors import TabwardenError
from tabwarden.protocol.codes import BRIDGE_REFUSED
from tabwarden.trust.verify import Effective

__all__ = [
    "MAX_SESSIONS_ASKED",
    "TERMINAL_ACTIONS",
    "TERMINAL_SESSION",
    "SessionUnmeasurable",
    "closes_tabs",
    "gone_sessions",
    "measure_session",
    "parse_session",
    "session_alive",
    "session_name",
]

_DOMAIN = b"tabwarden/session/v1\n"
_DIGEST_HEX = 20
_SESSION_RE = re.compile(r"^s-([1-9][0-9]{0,9})-([0-9a-f]{20})$")

#: The session the host names a terminal (``tabwarden tabs``) connection: it owns no tab and no
#: MCP server can be given it (MCP sessions always match ``s-<pid>-<digest>``).
TERMINAL_SESSION = "terminal"
#: The only requests a terminal connection may send, and that no MCP server may send: the agent
#: tabs of every session (masked), closing orphaned ones (narrowing, free), and asking the
#: extension's window for the tap a terminal widening needs (it grants nothing: the terminal
#: verifies the answer; ``tabwarden.cli.terminal_tap``).
TERMINAL_ACTIONS = frozenset({"agent_tabs", "agent_tabs_close", "terminal_tap"})
#: The terminal requests served even while killed or with a refused record: the tap a terminal
#: widening asks for grants nothing by itself (the terminal verifies it, then the operation in
#: ``trust/`` decides), and it is how a person with an enrolled key unkills.
UNGATED_TERMINAL_ACTIONS = frozenset({"terminal_tap"})
#: Most session names one ``sessions_alive`` host call may ask about.
MAX_SESSIONS_ASKED = 1000


class SessionUnmeasurable(TabwardenError):
    """The host cannot measure the peer process well enough to name its session."""

    code = BRIDGE_REFUSED


def session_name(*, boot_id: str, pid: int, start: int) -> str:
    """The name of the process ``pid`` that started at ``start`` ticks in boot ``boot_id``."""
    text = f"{boot_id}\n{pid}\n{start}".encode()
    return f"s-{pid}-{hashlib.sha256(_DOMAIN + text).hexdigest()[:_DIGEST_HEX]}"


def parse_session(name: str) -> int | None:
    """The PID a well-formed session name carries, else None."""
    m = _SESSION_RE.match(name)
    return int(m.group(1)) if m else None


def _boot_id() -> str:
    try:
        return osapi.boot_id()
    except osapi.Unsupported as exc:
        raise SessionUnmeasurable(str(exc), hint=exc.hint) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SessionUnmeasurable(f"cannot read the boot id ({exc.__class__.__name__})") from None


def _start_ticks(pid: int) -> int:
    try:
        return osapi.start_ticks(pid)
    except (FileNotFoundError, ProcessLookupError):
        raise SessionUnmeasurable(f"process {pid} is gone") from None
    except OSError as exc:
        raise SessionUnmeasurable(f"cannot read process {pid} ({exc.strerror})") from None
    except ValueError:
        raise SessionUnmeasurable(f"process {pid} has a malformed stat line") from None


def measure_session(pid: int) -> str:
    """The session name of the live process ``pid``; ``SessionUnmeasurable`` when it cannot be
    measured (gone, unreadable, not Linux). The caller proves afterwards that ``pid`` was still
    the pinned process (``Speaker.changed``), so a PID recycled mid-read is not named."""
    if pid <= 0:
        raise SessionUnmeasurable("no peer process id")
    return session_name(boot_id=_boot_id(), pid=pid, start=_start_ticks(pid))


def session_alive(name: str) -> bool:
    """True while the very process behind ``name`` is running. A name of another shape (an
    earlier version's random one), a dead or recycled PID, or another boot: False."""
    pid = parse_session(name)
    if pid is None:
        return False
    try:
        return measure_session(pid) == name
    except SessionUnmeasurable:
        return False


def gone_sessions(names: Iterable[str]) -> list[str]:
    """The names among ``names`` whose process is no longer running (in order, no duplicates)."""
    seen: set[str] = set()
    gone: list[str] = []
    for name in names:
        if name in seen:
            continue
        seen.add(name)
        if not session_alive(name):
            gone.append(name)
    return gone


def closes_tabs(eff: Effective) -> bool:
    """Whether an ended session's tabs are closed (policy ``closeTabsOnSessionEnd``) rather than
    kept as orphans. False while the record is refused: closing the person's tabs is not decided
    from a record nobody can read."""
    return eff.refused is None and bool(eff.policy["closeTabsOnSessionEnd"])
