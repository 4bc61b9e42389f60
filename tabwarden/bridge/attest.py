"""Executable attestation for hop 2 (the bridge socket), used by both ends.

After the kernel says the peer has our UID, each side asks: is the process at the other end *our
program*? For a Python program that means three things, all measured here (docs/adr/0001):

1. **The interpreter image** — the inode the peer is actually executing, read through the
   ``/proc/<pid>/exe`` magic link (never a path that could be swapped). Same (st_dev, st_ino) as
   ours, or else the same SHA-256 (hashes cached by dev/ino/size/mtime_ns; an executing inode
   cannot be written — ETXTBSY — so the key is sound while the process runs).
2. **The entry** — ``/proc/<pid>/cmdline`` is exactly ``<python> -I -m tabwarden <role> [args]``
   with ``<role>`` expected: no ``-c``, no script path, no other interpreter option. ``-I`` is
   required for every role: without it PYTHONPATH, the working directory and the user site
   directory can shadow the installed package, and nothing below would say what the peer runs.
   ``<python>`` must be an absolute path in the same directory as our ``sys.executable`` (that
   directory selects the venv via ``pyvenv.cfg``) and resolve to the same file.
3. **The installed package** — a digest of every ``*.py``/``*.json`` file of the installed
   tabwarden packages, computed once at start (``measure_self``) and recomputed from disk at each
   attestation: our code modified in place after we started is refused.

PID reuse: a pidfd is opened *first* (or taken from ``SO_PEERPIDFD``) and the process create time
recorded; after measuring, the pidfd must still refer to a live process and the create time must
be unchanged — so every ``/proc/<pid>`` read above described the pinned process.

The non-dumpable host (``host/hardening.py``): a same-UID, unprivileged reader gets EACCES on
``/proc/<host>/exe``. Only when attesting the ``host`` role, and only when the process shows the
non-dumpable signature (its ``/proc`` entries owned by root while ``status`` says every UID is
ours), the image check falls back to what stays readable; the run-secret proof in the handshake
remains the strong check. Anything else unreadable refuses (fail closed).
"""

from __future__ import annotations

import errno
import hashlib
import hmac
import importlib.util
import logging
import os
import sys
import threading
from collections.abc import Iterable
from dataclasses import dataclass

from tabwarden import osapi
from tabwarden.bridge.peer import (
    PeerAttestor,
    PeerCredentials,
    PeerRefused,
    pidfd_exited,
    socket_pidfd,
)
from tabwarden.errors import TabwardenError
from tabwarden.protocol.codes import INTERNAL_ERROR

log = logging.getLogger("tabwarden.bridge.attest")

#: The installed packages whose files make up "our code".
PACKAGES: tuple[str, ...] = (
    "tabwarden",
    "tabwarden.protocol",
    "tabwarden.host",
    "tabwarden.mcp_server",
    "tabwarden.trust",
    "tabwarden.manifests",
)
ENTRY_MODULE = "tabwarden"
ISOLATED_FLAG = "-I"
DIGESTED_SUFFIXES = (".py", ".json")
#: Roles that may be attested *without* a readable image, because they harden themselves.
NON_DUMPABLE_ROLES = frozenset({"host"})

_CHUNK = 1 << 20
_SHA_CACHE_MAX = 64


class SelfMeasurementFailed(TabwardenError):
    """This process could not measure its own interpreter or installed package."""

    code = INTERNAL_ERROR


@dataclass(frozen=True, slots=True)
class Measurement:
    """What "our program" is, measured once from this process."""

    exe_sha256: str  # sha256 of the executing interpreter image (via /proc/self/exe)
    exe_dev: int
    exe_ino: int
    libpython: tuple[int, int] | None  # (dev, ino) of a mapped libpython (shared builds), else None
    interpreter: str  # sys.executable as invoked, normalised: its directory selects the venv
    interpreter_real: str  # os.path.realpath(interpreter)
    entry_module: str  # always "tabwarden": <python> -I -m tabwarden <role>
    package_roots: tuple[tuple[str, str], ...]  # (package name, real directory)
    package_digest: str
    package_files: int


# ------------------------------------------------------------------------------- hashing


_sha_lock = threading.Lock()
_sha_cache: dict[tuple[int, int, int, int, int], str] = {}


def _sha256_fd(fd: int) -> str:
    h = hashlib.sha256()
    offset = 0
    while True:
        chunk = os.pread(fd, _CHUNK, offset)
        if not chunk:
            return h.hexdigest()
        h.update(chunk)
        offset += len(chunk)


def image_sha256(fd: int) -> tuple[str, os.stat_result]:
    """SHA-256 of an open executable, cached by (dev, ino, size, mtime_ns, ctime_ns): a file
    rewritten with its old mtime put back still has a new ctime, so it is hashed again."""
    st = os.fstat(fd)
    key = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    with _sha_lock:
        cached = _sha_cache.get(key)
    if cached is not None:
        return cached, st
    digest = _sha256_fd(fd)
    with _sha_lock:
        if len(_sha_cache) >= _SHA_CACHE_MAX:
            _sha_cache.pop(next(iter(_sha_cache)))
        _sha_cache[key] = digest
    return digest, st


def package_roots(names: Iterable[str] = PACKAGES) -> tuple[tuple[str, str], ...]:
    """Where each installed tabwarden package lives, found the way imports find it."""
    roots = []
    for name in names:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError) as exc:
            raise SelfMeasurementFailed(f"cannot locate package {name}: {exc}") from None
        locations = list(spec.submodule_search_locations or []) if spec else []
        if len(locations) != 1:
            raise SelfMeasurementFailed(f"package {name} has no single directory ({locations})")
        roots.append((name, os.path.realpath(locations[0])))
    return tuple(roots)


def package_digest(roots: Iterable[tuple[str, str]]) -> tuple[str, int]:
    """(digest, file count) over every *.py / *.json under each root, __pycache__ skipped.

    Each file contributes ``<package>/<relative path>`` and the SHA-256 of its content, in sorted
    order, length-prefixed so no two trees share an encoding. An unreadable file raises OSError.
    """
    h = hashlib.sha256(b"tabwarden-package-digest/1\0")
    count = 0
    for name, root in roots:
        rels: list[str] = []
        for dirpath, dirnames, filenames in os.walk(root, onerror=_raise):
            dirnames[:] = [d for d in dirnames if d != "__pycache__"]
            for filename in filenames:
                if filename.endswith(DIGESTED_SUFFIXES):
                    rels.append(os.path.relpath(os.path.join(dirpath, filename), root))
        for rel in sorted(rels):
            fd = os.open(os.path.join(root, rel), os.O_RDONLY | os.O_CLOEXEC)
            try:
                content_hash = bytes.fromhex(_sha256_fd(fd))
            finally:
                os.close(fd)
            label = f"{name}/{rel.replace(os.sep, '/')}".encode()
            h.update(len(label).to_bytes(4, "big") + label + content_hash)
            count += 1
    return h.hexdigest(), count


def _raise(exc: OSError) -> None:
    raise exc


# ------------------------------------------------------------------------------- ourselves


_self_lock = threading.Lock()
_self: Measurement | None = None


def measure_self(
    *, roots: tuple[tuple[str, str], ...] | None = None, refresh: bool = False
) -> Measurement:
    """Our own measurement; computed once (at first call — call it at start) and then cached.

    ``roots`` overrides where the package digest is taken (tests); such a measurement is returned
    but not cached.
    """
    global _self
    with _self_lock:
        if _self is not None and roots is None and not refresh:
            return _self
        measured = _measure_self(roots)
        if roots is None:
            _self = measured
        return measured


def _measure_self(roots: tuple[tuple[str, str], ...] | None) -> Measurement:
    if not osapi.SUPPORTED:
        raise SelfMeasurementFailed(str(osapi.Unsupported("executable attestation")))
    if not sys.executable or not os.path.isabs(sys.executable):
        raise SelfMeasurementFailed(f"sys.executable {sys.executable!r} is not an absolute path")
    try:
        fd = osapi.open_executable(os.getpid())
        try:
            sha, st = image_sha256(fd)
        finally:
            os.close(fd)
        libpython = _libpython_ids(os.getpid())
        roots = package_roots() if roots is None else roots
        digest, count = package_digest(roots)
    except (OSError, ValueError) as exc:
        raise SelfMeasurementFailed(f"cannot measure ourselves: {exc}") from None
    if len(libpython) > 1:
        raise SelfMeasurementFailed(
            f"several libpython images are mapped in this process: {libpython}"
        )
    interpreter = os.path.normpath(sys.executable)
    return Measurement(
        exe_sha256=sha,
        exe_dev=st.st_dev,
        exe_ino=st.st_ino,
        libpython=next(iter(libpython), None),
        interpreter=interpreter,
        interpreter_real=os.path.realpath(interpreter),
        entry_module=ENTRY_MODULE,
        package_roots=roots,
        package_digest=digest,
        package_files=count,
    )


# ----------------------------------------------------------------------------------- peers


def attest_peer(
    creds: PeerCredentials,
    *,
    expected_roles: set[str] | frozenset[str],
    measurement: Measurement | None = None,
    pidfd: int | None = None,
) -> None:
    """Raise ``PeerRefused`` (with the precise reason) unless ``creds.pid`` runs our program.

    ``pidfd``: optional, from ``socket_pidfd`` or the connection's ``Speaker`` (not closed
    here); ``creds.pidfd`` when not given. Otherwise one is opened first.
    """
    if not expected_roles:
        raise ValueError("expected_roles must not be empty")
    if not osapi.SUPPORTED:
        raise PeerRefused(str(osapi.Unsupported("executable attestation")), hint=osapi.HINT)
    try:
        me = measurement if measurement is not None else measure_self()
    except SelfMeasurementFailed as exc:
        raise PeerRefused(f"cannot attest peers: {exc}") from None
    pid = creds.pid
    if pid is None or pid <= 0:
        raise PeerRefused("peer pid unknown: cannot attest")
    if creds.uid != os.getuid():
        raise PeerRefused(f"peer uid {creds.uid} is not ours ({os.getuid()})")

    if pidfd is None:
        pidfd = creds.pidfd
    owned = pidfd is None
    if pidfd is None:
        try:
            pidfd = osapi.pin_process(pid)
        except ProcessLookupError:
            raise PeerRefused(f"peer pid {pid} is gone (exited before attestation)") from None
        except OSError as exc:
            raise PeerRefused(f"cannot pin peer pid {pid} (pidfd_open: {exc.strerror})") from None
    else:
        _check_pidfd_is(pidfd, pid)
    try:
        if pidfd_exited(pidfd):
            raise PeerRefused(f"peer pid {pid} has exited (zombie or gone); not attesting")
        created = _create_time(pid)

        mode = _check_image(pid, creds.uid, me, expected_roles)
        argv = _read_cmdline(pid)
        role = _check_entry(pid, argv, expected_roles)
        _check_interpreter_path(pid, argv[0], me)
        _check_package(me)

        # Everything above read /proc/<pid>: prove it was the pinned process all along.
        if pidfd_exited(pidfd):
            raise PeerRefused(f"peer pid {pid} exited during attestation; PID may be reused")
        if _create_time(pid) != created:
            raise PeerRefused(f"peer pid {pid} changed identity during attestation (PID reused)")
    except OSError as exc:  # anything unforeseen while reading /proc: fail closed
        raise PeerRefused(f"cannot attest peer pid {pid}: {exc}") from None
    finally:
        if owned:
            os.close(pidfd)
    log.info("peer pid %d attested: role %s (%s)", pid, role, mode)


def make_attestor(
    expected_roles: Iterable[str], *, measurement: Measurement | None = None
) -> PeerAttestor:
    """A ``PeerAttestor`` for the bridge. Measures ourselves now: call it at start."""
    roles = frozenset(expected_roles)
    if not roles:
        raise ValueError("expected_roles must not be empty")
    me = measurement if measurement is not None else measure_self()

    def attest(creds: PeerCredentials) -> None:
        attest_peer(creds, expected_roles=roles, measurement=me)

    return attest


# -------------------------------------------------------------------------------- the checks


def _check_pidfd_is(pidfd: int, pid: int) -> None:
    found = osapi.pin_pid(pidfd)
    if found == pid:
        return
    if found is not None and found <= 0:
        raise PeerRefused(f"peer pid {pid} is gone (its pidfd refers to no live process)")
    raise PeerRefused(f"the peer pidfd does not refer to pid {pid} (it names {found})")


def _create_time(pid: int) -> float:
    try:
        return osapi.create_time(pid)
    except ProcessLookupError:
        raise PeerRefused(f"peer pid {pid} is gone") from None
    except OSError as exc:
        raise PeerRefused(f"cannot read the create time of peer pid {pid}: {exc}") from None


def _check_image(
    pid: int, uid: int, me: Measurement, expected_roles: frozenset[str] | set[str]
) -> str:
    try:
        fd = osapi.open_executable(pid)
    except FileNotFoundError:
        raise PeerRefused(f"peer pid {pid} has no executable image (exited)") from None
    except PermissionError as exc:
        if exc.errno in (errno.EACCES, errno.EPERM) and set(expected_roles) <= NON_DUMPABLE_ROLES:
            why = _non_dumpable_signature(pid, uid)
            if why is None:
                return (
                    "non-dumpable fallback: image unreadable; "
                    "entry, interpreter path, package, pidfd checked"
                )
            raise PeerRefused(
                f"cannot read the interpreter image of peer pid {pid}: {why}"
            ) from None
        raise PeerRefused(
            f"cannot read the interpreter image of peer pid {pid} (permission denied)"
        ) from None
    except OSError as exc:
        raise PeerRefused(
            f"cannot read the interpreter image of peer pid {pid}: {exc.strerror}"
        ) from None
    try:
        st = os.fstat(fd)
        same_inode = (st.st_dev, st.st_ino) == (me.exe_dev, me.exe_ino)
        sha = me.exe_sha256 if same_inode else image_sha256(fd)[0]
    except OSError as exc:
        raise PeerRefused(
            f"cannot hash the interpreter image of peer pid {pid}: {exc.strerror}"
        ) from None
    finally:
        os.close(fd)
    if not hmac.compare_digest(sha, me.exe_sha256):
        raise PeerRefused(
            f"peer pid {pid} runs a different interpreter image "
            f"(sha256 {sha[:16]}…, ours {me.exe_sha256[:16]}…)"
        )
    # Shared builds (pyenv, python.org): the executable is a launcher; libpython is the interpreter.
    try:
        libs = _libpython_ids(pid)
    except (OSError, ValueError) as exc:
        raise PeerRefused(f"cannot read the memory map of peer pid {pid}: {exc}") from None
    if libs != ({me.libpython} if me.libpython else set()):
        raise PeerRefused(
            f"peer pid {pid} maps a different libpython ({sorted(libs)}, ours {me.libpython}): "
            "a different interpreter"
        )
    return "full: same interpreter " + ("inode" if same_inode else "image sha256")


def _libpython_ids(pid: int) -> set[tuple[int, int]]:
    """(dev, ino) of every libpython*.so* file mapped by ``pid``."""
    return osapi.mapped_libpython(pid)


def _non_dumpable_signature(pid: int, uid: int) -> str | None:
    """None if ``pid`` looks exactly like our own non-dumpable host, else why not."""
    try:
        uids = osapi.process_uids(pid)
        owner = osapi.process_owner(pid)
    except OSError as exc:
        return f"image unreadable and /proc/{pid}/status unreadable too ({exc.strerror})"
    if not uids or any(u != uid for u in uids):
        return f"image unreadable and its uids {uids} are not all {uid}"
    if owner != 0:
        return (
            "image unreadable although the process is dumpable "
            "(its /proc entries are not root-owned)"
        )
    return None


def _read_cmdline(pid: int) -> list[str]:
    try:
        raw = osapi.cmdline(pid, 1 << 16)
    except OSError as exc:
        raise PeerRefused(
            f"cannot read the command line of peer pid {pid}: {exc.strerror}"
        ) from None
    if not raw:
        raise PeerRefused(f"peer pid {pid} has an empty command line (exited?)")
    if not raw.endswith(b"\0"):
        raise PeerRefused(f"peer pid {pid} rewrote its command line")
    return [os.fsdecode(part) for part in raw[:-1].split(b"\0")]


def _check_entry(pid: int, argv: list[str], expected_roles: frozenset[str] | set[str]) -> str:
    want = f"-I -m {ENTRY_MODULE} <{'|'.join(sorted(expected_roles))}>"
    args = argv[1:]
    if args[:3] == [ISOLATED_FLAG, "-m", ENTRY_MODULE]:
        role = args[3] if len(args) > 3 else "(none)"
        if role in expected_roles:
            return role
        raise PeerRefused(
            f"peer pid {pid} entry is `-m {ENTRY_MODULE} {role}`: "
            f"role not one of {sorted(expected_roles)}"
        )
    raise PeerRefused(f"peer pid {pid} entry is {_describe_entry(args)}, not `{want}`")


_OPTIONS_WITH_VALUE = frozenset({"--check-hash-based-pycs"})


def _describe_entry(args: list[str]) -> str:
    """What the interpreter would run for ``args`` (its options, then the entry), for the log."""
    options: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        nxt = args[i + 1] if i + 1 < len(args) else ""
        if arg == "-":
            return "a script on stdin"
        if not arg.startswith("-"):
            return f"the script {arg!r}"
        if arg.startswith("--"):
            options.append(f"{arg} {nxt}" if arg in _OPTIONS_WITH_VALUE else arg)
            i += 2 if arg in _OPTIONS_WITH_VALUE else 1
            continue
        i += 1
        for j, ch in enumerate(arg[1:], start=2):  # a short-option cluster such as -Im
            if ch not in "cmXW":
                options.append(f"-{ch}")
                continue
            value = arg[j:]
            if not value:
                value, i = nxt, i + 1
            if ch == "c":
                return "`-c` code (a command string)"
            if ch == "m":
                if value != ENTRY_MODULE:
                    return f"the module `{value}`"
                if ISOLATED_FLAG not in options:
                    return (
                        f"`-m {ENTRY_MODULE}` without `-I` "
                        "(PYTHONPATH/cwd could shadow our package)"
                    )
                return (
                    f"`-m {ENTRY_MODULE}` with extra interpreter options {options} "
                    "(only a lone `-I`)"
                )
            options.append(f"-{ch} {value}")
            break
    return f"the interactive interpreter (options {options})"


def _check_interpreter_path(pid: int, argv0: str, me: Measurement) -> None:
    if not os.path.isabs(argv0):
        raise PeerRefused(f"peer pid {pid} interpreter {argv0!r} is not an absolute path")
    path = os.path.normpath(argv0)
    if os.path.dirname(path) != os.path.dirname(me.interpreter):
        raise PeerRefused(
            f"peer pid {pid} interpreter {path} is not in our environment "
            f"({os.path.dirname(me.interpreter)})"
        )
    if os.path.realpath(path) != me.interpreter_real:
        raise PeerRefused(
            f"peer pid {pid} interpreter {path} does not resolve to ours ({me.interpreter_real})"
        )


def _check_package(me: Measurement) -> None:
    try:
        digest, count = package_digest(me.package_roots)
    except OSError as exc:
        raise PeerRefused(f"cannot re-read the installed tabwarden package: {exc}") from None
    if not hmac.compare_digest(digest, me.package_digest):
        raise PeerRefused(
            f"the installed tabwarden package changed since this process started "
            f"({count} files now, {me.package_files} then): refusing to vouch for a peer"
        )


__all__ = [
    "Measurement",
    "PACKAGES",
    "SelfMeasurementFailed",
    "attest_peer",
    "image_sha256",
    "make_attestor",
    "measure_self",
    "package_digest",
    "package_roots",
    "pidfd_exited",
    "socket_pidfd",
]
