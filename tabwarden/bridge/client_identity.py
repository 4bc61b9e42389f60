"""Who the MCP client is: the one measurement hop 1, the host and ``pair-client`` all make.

Theory of operation. Start at the process that spawned the MCP server and walk up its ancestors
through known **wrappers** — programs that only run the command they are given (``WRAPPERS``:
``timeout``, ``env``, ``nice``, ``nohup``, ``setsid``, ``stdbuf``, ``xargs``, ``flock``, ``time``,
a shell running ``-c``, ``npx`` / ``npm exec``, ``pnpm dlx``, ``yarn dlx``, ``uv run`` / ``uvx``,
``bunx``) — to the first ancestor that is not one: that is the client. A wrapper is recognised by
its executable's name and the shape of its command line; it is walked through, never pinned.

The client's identity is then:

* a plain executable: the SHA-256 of the image it executes (read through ``/proc/<pid>/exe``), as
  before, so existing pairings stay valid;
* an **interpreter** (``INTERPRETERS``: node, python/pypy, sh/bash/dash/zsh/ksh running a script;
  recognised by image name, never by hash): what it runs, read from its command line the way that
  interpreter reads it (``parse_node``, ``parse_python``, ``parse_shell``: options skipped,
  options that take a value skipped with it, an option not understood refused) — the script's
  real path (resolved against the process's own working directory) and the SHA-256 of its
  content; for a script inside ``node_modules`` also the ``package.json`` of the package that owns
  it (its name and version say which release is pinned); node preloads (``-r``, ``--import``,
  ``--loader``, also from ``NODE_OPTIONS``) are part of the entry; ``-e``/``-c`` code is hashed
  as a string. The digest is domain-separated (``tabwarden-client/1``) over the interpreter image
  hash and every piece of the entry, and is stored where an image hash was
  (``ClientRecord.sha256``); the description (``ClientRecord.exe``) says what it is.

Some identities admit more than one program and carry a ``broad`` reason the ceremony shows in
words: a REPL or a program read from stdin, ``python -m`` (the module is found on ``sys.path``),
a bare node preload specifier, ``node --test``/``--run``, a script then ``-i``, and the
interpreters we recognise but do not parse (deno, bun, ruby, perl, php, java: their exact command
line in their working directory, the files it names unhashed).

Every process walked is pinned with a pidfd and its create time; at the end every pin must still
be alive, unchanged, and each still the parent of the one below (PID reuse, re-parenting). The
walk is bounded (``MAX_WRAPPER_HOPS``) and never goes past PID 1 or into a process of another
user. Anything unreadable raises ``SpawnerUnmeasurable``: fail closed, never an identity guessed.

What this module must never do: treat an interpreter's image hash alone as an interpreter-hosted
client's identity; turn an argv it does not understand into a specific script; put the text of
``-e`` code or any command-line argument other than the entry's path into a description (they can
hold secrets). Files are hashed as they are on disk now, not as the process loaded them; the
modules a script imports are not hashed (``docs/adr/0001-attestation.md``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import logging
import os
import re
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tabwarden import osapi
from tabwarden.bridge.attest import image_sha256, pidfd_exited
from tabwarden.errors import TabwardenError
from tabwarden.private_fs import PrivateFsError, open_private_dir
from tabwarden.protocol.codes import CLIENT_NOT_PAIRED
from tabwarden.trust.refusal import MeasuredClient

__all__ = [
    "INTERPRETERS",
    "MAX_WRAPPER_HOPS",
    "WRAPPERS",
    "ArgvNotUnderstood",
    "ClientIdentity",
    "Entry",
    "SpawnerUnmeasurable",
    "interpreter_family",
    "measure_client_of",
    "measure_process",
    "parse_node",
    "parse_python",
    "parse_shell",
    "wrapper_kind",
]

#: At most this many wrappers are walked through; a longer chain is unmeasurable.
MAX_WRAPPER_HOPS = 8
#: A script, package.json or preload bigger than this is not hashed: unmeasurable.
ENTRY_MAX_BYTES = 256 << 20
#: /proc/<pid>/cmdline and environ are read up to this much (Linux ARG_MAX is 2 MiB).
PROC_TEXT_MAX = 4 << 20
DOMAIN = b"tabwarden-client/1\0"
#: The longest description kept (``ClientRecord.exe`` allows 4096).
DESCRIPTION_MAX = 1024

#: Interpreter families by the basename of the image they execute.
INTERPRETERS: dict[str, re.Pattern[str]] = {
    "node": re.compile(r"^node(js)?[0-9.]*$"),
    "python": re.compile(r"^(python|pypy)[0-9.]*[dmut]*$"),
    "shell": re.compile(r"^(sh|bash|dash|zsh|ksh|mksh|ash)$"),
    # Recognised, not parsed: pinned by their exact command line, always broad.
    "deno": re.compile(r"^deno$"),
    "bun": re.compile(r"^bun$"),
    "ruby": re.compile(r"^ruby[0-9.]*$"),
    "perl": re.compile(r"^perl[0-9.]*$"),
    "php": re.compile(r"^php[0-9.]*$"),
    "java": re.compile(r"^java$"),
}

#: Executables that run the command they are given (by image basename), walked through.
WRAPPERS = frozenset(
    {
        "timeout", "env", "nice", "nohup", "setsid", "stdbuf", "ionice", "chrt", "taskset",
        "xargs", "flock", "time", "uvx",
    }
)  # fmt: skip

_NODE_WRAPPER_SCRIPTS = {
    # script basename -> the first argument that makes it a wrapper (None: any)
    "npx-cli.js": None,
    "npm-cli.js": frozenset({"exec", "x"}),
    "pnpm.cjs": frozenset({"dlx", "exec"}),
    "pnpm.js": frozenset({"dlx", "exec"}),
    "pnpx.cjs": None,
    "yarn.js": frozenset({"dlx"}),
    "yarn.cjs": frozenset({"dlx"}),
}


class SpawnerUnmeasurable(TabwardenError):
    """The process that spawned this MCP server could not be measured."""

    code = CLIENT_NOT_PAIRED


class ArgvNotUnderstood(ValueError):
    """An interpreter's command line we cannot read with certainty (never guessed at)."""


# ------------------------------------------------------------------------- the pure parsers


@dataclass(frozen=True, slots=True, kw_only=True)
class Entry:
    """What an interpreter was told to run, read from its argv (no I/O).

    ``kind``: ``script`` (``target`` is the path as given), ``eval`` (``target`` is the code),
    ``module`` (``target`` is the module name), ``stdin``, ``repl``, ``command`` (a shell's
    ``-c``: ``target`` is the command), ``argv`` (not parsed). ``args`` follow the entry."""

    kind: str
    target: str = ""
    preloads: tuple[str, ...] = ()
    args: tuple[str, ...] = ()
    broad: str | None = None


#: node's own options that take a value as the next word. V8's (``--max-old-space-size``,
#: ``--stack-size``) take one only after ``=`` (checked against node 20 in the tests).
_NODE_VALUE = frozenset(
    {
        "-r", "--require", "--import", "--loader", "--experimental-loader", "-C", "--conditions",
        "--input-type", "--inspect-port", "--debug-port", "--title", "--env-file",
        "--env-file-if-exists", "--icu-data-dir", "--openssl-config", "--tls-cipher-list",
        "--tls-keylog", "--max-http-header-size", "--unhandled-rejections", "--heapsnapshot-signal",
        "--heapsnapshot-near-heap-limit", "--diagnostic-dir", "--report-dir", "--report-directory",
        "--report-filename", "--report-signal", "--redirect-warnings", "--cpu-prof-dir",
        "--cpu-prof-name", "--cpu-prof-interval", "--heap-prof-dir", "--heap-prof-name",
        "--heap-prof-interval", "--dns-result-order", "--disable-warning", "--watch-path",
        "--test-reporter", "--test-reporter-destination", "--test-name-pattern",
        "--test-skip-pattern", "--test-shard", "--test-concurrency", "--test-timeout",
        "--secure-heap", "--secure-heap-min", "--policy-integrity", "--experimental-policy",
        "--experimental-specifier-resolution", "--es-module-specifier-resolution",
        "--experimental-default-type", "--experimental-sea-config", "--snapshot-blob",
        "--build-snapshot-config", "--localstorage-file", "--use-largepages", "--run",
    }
)  # fmt: skip
_NODE_FLAGS = frozenset(
    {
        "-i", "--interactive", "-c", "--check", "--test", "--watch", "--inspect", "--inspect-brk",
        "--inspect-wait", "--enable-source-maps", "--expose-gc", "--preserve-symlinks",
        "--preserve-symlinks-main", "--pending-deprecation", "--throw-deprecation",
        "--trace-deprecation", "--trace-warnings", "--trace-uncaught", "--trace-exit",
        "--trace-sigint", "--abort-on-uncaught-exception", "--frozen-intrinsics",
        "--zero-fill-buffers", "--jitless", "--insecure-http-parser", "--cpu-prof", "--heap-prof",
        "--prof", "--prof-process", "--report-on-signal", "--report-uncaught-exception",
        "--report-on-fatalerror", "--experimental-vm-modules", "--experimental-modules",
        "--experimental-json-modules", "--experimental-wasm-modules", "--experimental-fetch",
        "--experimental-global-webcrypto", "--experimental-import-meta-resolve",
        "--experimental-require-module", "--experimental-detect-module",
        "--experimental-strip-types", "--experimental-transform-types", "--experimental-websocket",
        "--experimental-network-imports", "--experimental-permission", "--experimental-sqlite",
        "--experimental-print-required-tla", "--experimental-test-coverage",
        "--experimental-shadow-realm", "--experimental-eventsource", "--harmony",
        "--watch-preserve-output", "--force-fips", "--enable-fips", "--use-openssl-ca",
        "--use-bundled-ca", "--node-memory-debug", "--v8-options", "-h", "--help", "-v",
        "--version", "--completion-bash", "--allow-addons", "--allow-child-process",
        "--allow-wasi", "--allow-worker", "--permission",
    }
)  # fmt: skip
_NODE_EVAL = frozenset({"-e", "--eval", "-p", "--print", "-pe", "-ep"})
_NODE_PRELOAD = frozenset({"-r", "--require", "--import", "--loader", "--experimental-loader"})


def parse_node(argv: Sequence[str], node_options: Sequence[str] = ()) -> Entry:
    """What ``node`` runs, given its argv (``argv[0]`` is the program name) and the options from
    ``NODE_OPTIONS`` (only preloads are taken from there). Raises ``ArgvNotUnderstood`` on an
    option we cannot tell the arity of."""
    preloads = list(_node_preloads(node_options))
    broad: list[str] = []
    args = list(argv[1:])
    i = 0
    while i < len(args):
        word = args[i]
        if word == "--":
            i += 1
            break
        if word == "-" or not word.startswith("-"):
            break
        name, has_value, value = word.partition("=")
        if name in _NODE_EVAL:
            if not has_value:
                if i + 1 >= len(args):
                    raise ArgvNotUnderstood(f"node {name} without code")
                value, i = args[i + 1], i + 1
            return Entry(
                kind="eval",
                target=value,
                preloads=tuple(preloads),
                args=tuple(args[i + 1 :]),
                broad=_joined(broad, preloads),
            )
        if name in _NODE_VALUE:
            if not has_value:
                if i + 1 >= len(args):
                    raise ArgvNotUnderstood(f"node {name} without its value")
                value, i = args[i + 1], i + 1
            if name in _NODE_PRELOAD:
                preloads.append(value)
            if name == "--run":
                broad.append(f"`node --run {value}` runs whatever package.json says it is")
        elif name in ("-i", "--interactive"):
            broad.append("it is interactive: node runs whatever is typed")
        elif name == "--test":
            broad.append("`node --test` runs every test file it finds")
        elif not (has_value or name in _NODE_FLAGS or name.startswith("--no-")):
            raise ArgvNotUnderstood(f"node option {name} is not one tabwarden knows")
        i += 1
    rest = args[i:]
    if not rest:
        return Entry(
            kind="repl",
            preloads=tuple(preloads),
            broad=_joined([*broad, "node runs a REPL or a program read from stdin"], preloads),
        )
    if rest[0] == "-":
        return Entry(
            kind="stdin",
            preloads=tuple(preloads),
            args=tuple(rest[1:]),
            broad=_joined([*broad, "node runs a program read from stdin"], preloads),
        )
    return Entry(
        kind="script",
        target=rest[0],
        preloads=tuple(preloads),
        args=tuple(rest[1:]),
        broad=_joined(broad, preloads),
    )


def _node_preloads(options: Sequence[str]) -> Iterator[str]:
    """The preloads named in ``NODE_OPTIONS`` (split into words)."""
    for i, word in enumerate(options):
        name, has_value, value = word.partition("=")
        if name in _NODE_PRELOAD:
            if has_value:
                yield value
            elif i + 1 < len(options):
                yield options[i + 1]
            else:
                raise ArgvNotUnderstood(f"NODE_OPTIONS {name} without its value")


def _is_path_spec(spec: str) -> bool:
    return spec.startswith(("/", "./", "../")) or spec in (".", "..")


def _joined(broad: list[str], preloads: Sequence[str]) -> str | None:
    bare = [p for p in preloads if not _is_path_spec(p)]
    reasons = [*broad]
    if bare:
        reasons.append(
            "it preloads " + ", ".join(repr(p) for p in bare) + ", found by module resolution "
            "and not hashed"
        )
    return "; ".join(reasons) if reasons else None


_PY_FLAGS = frozenset("bBdEhiIOPqRsSuvVx?")
_PY_VALUE = frozenset("WX")
_PY_LONG_FLAGS = frozenset({"--help", "--version", "--help-env", "--help-xoptions", "--help-all"})


def parse_python(argv: Sequence[str]) -> Entry:
    """What ``python`` runs, given its argv: CPython's own option grammar (short options may be
    clustered, ``-W``/``-X`` take a value attached or next, ``-c``/``-m`` end the options)."""
    args = list(argv[1:])
    broad: list[str] = []
    i = 0
    while i < len(args):
        word = args[i]
        if word == "--":
            i += 1
            break
        if word == "-" or not word.startswith("-"):
            break
        if word.startswith("--"):
            name, has_value, _ = word.partition("=")
            if name == "--check-hash-based-pycs":
                i += 1 if has_value else 2
                continue
            if word in _PY_LONG_FLAGS:
                i += 1
                continue
            raise ArgvNotUnderstood(f"python option {name} is not one tabwarden knows")
        j = 1
        while j < len(word):
            char = word[j]
            if char in "cm":
                value = word[j + 1 :]
                if not value:
                    if i + 1 >= len(args):
                        raise ArgvNotUnderstood(f"python -{char} without its argument")
                    value, i = args[i + 1], i + 1
                rest = tuple(args[i + 1 :])
                if char == "c":
                    return Entry(kind="eval", target=value, args=rest, broad=_py_broad(broad))
                return Entry(
                    kind="module",
                    target=value,
                    args=rest,
                    broad=_py_broad(
                        [
                            *broad,
                            f"`python -m {value}` runs whatever module of that name comes first "
                            "on its sys.path",
                        ]
                    ),
                )
            if char in _PY_VALUE:
                if j + 1 == len(word):
                    i += 1  # the value is the next word
                    if i >= len(args):
                        raise ArgvNotUnderstood(f"python -{char} without its value")
                break
            if char not in _PY_FLAGS:
                raise ArgvNotUnderstood(f"python option -{char} is not one tabwarden knows")
            if char == "i":
                broad.append("-i: after its program, python runs whatever is typed")
            j += 1
        i += 1
    rest_args = args[i:]
    if not rest_args:
        return Entry(
            kind="repl", broad=_py_broad([*broad, "python runs a REPL or a program from stdin"])
        )
    if rest_args[0] == "-":
        return Entry(
            kind="stdin",
            args=tuple(rest_args[1:]),
            broad=_py_broad([*broad, "python runs a program read from stdin"]),
        )
    return Entry(
        kind="script", target=rest_args[0], args=tuple(rest_args[1:]), broad=_py_broad(broad)
    )


def _py_broad(reasons: list[str]) -> str | None:
    return "; ".join(reasons) if reasons else None


_SHELL_VALUE_LONG = frozenset({"--rcfile", "--init-file"})


def parse_shell(argv: Sequence[str]) -> Entry:
    """What a POSIX-style shell runs: ``-c`` (a command: the shell is a wrapper), a script, or
    stdin / an interactive prompt."""
    args = list(argv[1:])
    command = False
    reads_stdin = False
    i = 0
    while i < len(args):
        word = args[i]
        if word in ("--", "-"):
            i += 1
            break
        if not word.startswith(("-", "+")) or word == "+":
            break
        if word.startswith("--"):
            i += 2 if word in _SHELL_VALUE_LONG else 1
            continue
        letters = word[1:]
        if not letters.isalpha():
            raise ArgvNotUnderstood(f"shell option {word} is not one tabwarden knows")
        command = command or "c" in letters
        reads_stdin = reads_stdin or "s" in letters
        i += 1 + letters.count("o") + letters.count("O")  # -o NAME
    rest = args[i:]
    if command:
        if not rest:
            raise ArgvNotUnderstood("shell -c without a command")
        return Entry(kind="command", target=rest[0], args=tuple(rest[1:]))
    if reads_stdin or not rest:
        return Entry(kind="stdin", broad="the shell runs commands read from stdin or typed")
    return Entry(kind="script", target=rest[0], args=tuple(rest[1:]))


def interpreter_family(image: str) -> str | None:
    """The interpreter family of an executable, by its basename (None: not an interpreter)."""
    name = os.path.basename(_undeleted(image))
    for family, pattern in INTERPRETERS.items():
        if pattern.match(name):
            return family
    return None


def _first_word(args: Sequence[str]) -> str | None:
    return next((a for a in args if not a.startswith("-")), None)


def wrapper_kind(image: str, argv: Sequence[str], entry: Entry | None) -> str | None:
    """Why this process is a wrapper (to walk through), or None: it is the client. ``entry`` is
    its parsed entry when it is an interpreter we parse."""
    name = os.path.basename(_undeleted(image))
    if name in WRAPPERS:
        return name
    args = list(argv[1:])
    if name == "uv":
        words = [a for a in args if not a.startswith("-")]
        if words[:1] == ["run"] or words[:2] in (["tool", "run"], ["tool", "uvx"]):
            return "uv " + " ".join(words[:2] if words[0] == "tool" else words[:1])
        return None
    if name == "bun":
        if (argv and os.path.basename(argv[0]) == "bunx") or _first_word(args) == "x":
            return "bunx"
        return None
    if entry is None:
        return None
    family = interpreter_family(image)
    if family == "shell" and entry.kind == "command":
        return f"{name} -c"
    if family == "node" and entry.kind == "script":
        script = os.path.basename(entry.target)
        if script in _NODE_WRAPPER_SCRIPTS:
            needed = _NODE_WRAPPER_SCRIPTS[script]
            word = _first_word(entry.args)
            if needed is None:
                return f"node {script}"
            if word in needed:
                return f"node {script} {word}"
    return None


def _undeleted(image: str) -> str:
    return image[: -len(" (deleted)")] if image.endswith(" (deleted)") else image


# ---------------------------------------------------------------------------- the identity


@dataclass(frozen=True, slots=True)
class ClientIdentity:
    """The measured MCP client. ``sha256`` is the identity a pairing pins and ``exe`` what it is
    (``ClientRecord.sha256`` / ``.exe``); ``pins`` says in words what the identity pins, ``broad``
    (when set) why it admits more than one program."""

    pid: int
    exe: str
    sha256: str
    create_time: float
    image: str = ""
    image_sha256: str = ""
    kind: str = "binary"
    broad: str | None = None
    pins: tuple[str, ...] = ()
    wrappers: tuple[str, ...] = field(default=())

    def measured(self) -> MeasuredClient:
        """What the one refusal rule (``trust.refusal``) judges."""
        return MeasuredClient(
            sha256=self.sha256,
            description=self.exe,
            image=_undeleted(self.image),
            hosted=self.kind != "binary",
        )


def _digest(parts: Sequence[str]) -> str:
    h = hashlib.sha256(DOMAIN)
    for part in parts:
        data = part.encode("utf-8", "surrogateescape")
        h.update(len(data).to_bytes(8, "big"))
        h.update(data)
    return h.hexdigest()


def _short(sha: str) -> str:
    return f"{sha[:16]}…"


# ------------------------------------------------------------------------------- measuring


class _Pin:
    """One process pinned by a pidfd and its create time."""

    def __init__(self, pid: int) -> None:
        if pid <= 1:
            raise SpawnerUnmeasurable(
                f"the walk reached PID {pid} (an orphaned wrapper or no parent): no client"
            )
        try:
            self.fd = osapi.pin_process(pid)
        except ProcessLookupError:
            raise SpawnerUnmeasurable(f"the spawning process {pid} is gone") from None
        except OSError as exc:
            raise SpawnerUnmeasurable(
                f"cannot pin the spawning process {pid}: {exc.strerror}"
            ) from None
        self.pid = pid
        try:
            self.alive()
            self.created = _create_time(pid)
        except BaseException:
            os.close(self.fd)
            raise

    def close(self) -> None:
        os.close(self.fd)

    def alive(self) -> None:
        if pidfd_exited(self.fd):
            raise SpawnerUnmeasurable(f"the spawning process {self.pid} has exited")

    def unchanged(self) -> None:
        self.alive()
        if _create_time(self.pid) != self.created:
            raise SpawnerUnmeasurable(f"the spawning process {self.pid} was replaced (PID reused)")

    def ppid(self) -> int:
        try:
            return osapi.parent_pid(self.pid)
        except ProcessLookupError:
            raise SpawnerUnmeasurable(f"the spawning process {self.pid} is gone") from None
        except OSError as exc:
            raise SpawnerUnmeasurable(f"cannot read process {self.pid}: {exc}") from None


def _create_time(pid: int) -> float:
    try:
        return osapi.create_time(pid)
    except ProcessLookupError:
        raise SpawnerUnmeasurable(f"the spawning process {pid} is gone") from None
    except OSError as exc:
        raise SpawnerUnmeasurable(f"cannot read the spawning process {pid}: {exc}") from None


def _proc_error(pid: int, what: str, exc: OSError) -> SpawnerUnmeasurable:
    if isinstance(exc, FileNotFoundError | ProcessLookupError):
        return SpawnerUnmeasurable(f"the spawning process {pid} has exited")
    if isinstance(exc, PermissionError):
        return SpawnerUnmeasurable(
            f"permission denied reading the {what} of the spawning process {pid} "
            "(another user, or a non-dumpable process)"
        )
    return SpawnerUnmeasurable(f"cannot read the {what} of the spawning process {pid}: {exc}")


def _read_proc(pid: int, name: str, what: str) -> bytes:
    try:
        raw = (osapi.cmdline if name == "cmdline" else osapi.environ)(pid, PROC_TEXT_MAX + 1)
    except OSError as exc:
        raise _proc_error(pid, what, exc) from None
    if len(raw) > PROC_TEXT_MAX:
        raise SpawnerUnmeasurable(f"the {what} of process {pid} is too long to read")
    return raw


def _argv(pid: int) -> list[str]:
    raw = _read_proc(pid, "cmdline", "command line")
    if not raw:
        raise SpawnerUnmeasurable(f"the spawning process {pid} has an empty command line")
    if not raw.endswith(b"\0"):
        raise SpawnerUnmeasurable(f"the spawning process {pid} rewrote its command line")
    return [os.fsdecode(part) for part in raw[:-1].split(b"\0")]


def _same_user(pid: int) -> None:
    try:
        uids = osapi.process_uids(pid)
    except OSError as exc:
        raise _proc_error(pid, "status", exc) from None
    me = os.getuid()
    if uids:
        if any(uid != me for uid in uids):
            raise SpawnerUnmeasurable(f"process {pid} runs as another user: the walk stops")
        return
    raise SpawnerUnmeasurable(f"process {pid} has no Uid line in its status")


#: The private file in the config dir that remembers client images' hashes between starts.
HASH_CACHE_FILE = "client-hashes.json"
HASH_CACHE_VERSION = 1
#: How many images it remembers (the newest), and the most of it that is ever read.
HASH_CACHE_ENTRIES = 32
HASH_CACHE_MAX_BYTES = 64 * 1024
_SHA_HEX = re.compile(r"[0-9a-f]{64}")

log = logging.getLogger("tabwarden.bridge.client_identity")

#: (device, inode, size, mtime_ns, ctime_ns) of an image.
ImageKey = tuple[int, int, int, int, int]


def image_key(st: os.stat_result) -> ImageKey:
    """What names one unchanged file. The kernel sets ``ctime`` on every write, truncate,
    chmod, rename or ``utime`` and nobody can set it back, so a file rewritten with its old
    ``mtime`` restored still has a new key."""
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


class ImageHashCache:
    """The SHA-256 of client images remembered across ``tabwarden mcp`` starts (a 99 MB Node
    binary takes ~80 ms to hash), in ``HASH_CACHE_FILE`` of the private config directory,
    keyed by ``image_key``: any change to the file means a new key, so it is hashed again.
    A cache the private-fs rules refuse (not ours, not 0600, a symlink …) is never read and
    never replaced; a damaged one is as if empty. It only ever saves work: a miss hashes."""

    def __init__(self, config_dir: Path) -> None:
        self.config_dir = config_dir

    def digest(self, fd: int) -> str:
        """The SHA-256 of the open image ``fd``, from the cache when its key is there."""
        key = image_key(os.fstat(fd))
        entries, writable = self._load()
        cached = entries.get(key)
        if cached is not None:
            return cached
        sha, _ = image_sha256(fd)
        if writable and image_key(os.fstat(fd)) == key:  # not remembered if it moved meanwhile
            entries.pop(key, None)
            entries[key] = sha
            self._store(entries)
        return sha

    def _load(self) -> tuple[dict[ImageKey, str], bool]:
        """(entries oldest first, whether the file may be written)."""
        try:
            directory = open_private_dir(self.config_dir, create=False)
            if directory is None:
                return {}, True
            with directory:
                found = directory.read(HASH_CACHE_FILE, HASH_CACHE_MAX_BYTES)
        except (PrivateFsError, OSError) as exc:
            log.warning("client hash cache not used: %s", exc)
            return {}, False
        return ({} if found is None else _parse_hash_cache(found[0])), True

    def _store(self, entries: dict[ImageKey, str]) -> None:
        rows = [[*key, sha] for key, sha in list(entries.items())[-HASH_CACHE_ENTRIES:]]
        data = json.dumps({"version": HASH_CACHE_VERSION, "images": rows}).encode()
        try:
            directory = open_private_dir(self.config_dir, create=True)
            if directory is None:
                return
            with directory:
                directory.write_atomic(HASH_CACHE_FILE, data)
        except (PrivateFsError, OSError) as exc:
            log.warning("client hash cache not written: %s", exc)


def _parse_hash_cache(raw: bytes) -> dict[ImageKey, str]:
    """The valid rows of a cache document, oldest first; {} for anything damaged."""
    try:
        document = json.loads(raw)
    except ValueError:
        return {}
    if not isinstance(document, dict) or document.get("version") != HASH_CACHE_VERSION:
        return {}
    rows = document.get("images")
    entries: dict[ImageKey, str] = {}
    for row in rows if isinstance(rows, list) else []:
        if (
            isinstance(row, list)
            and len(row) == 6
            and all(type(v) is int and v >= 0 for v in row[:5])
            and isinstance(row[5], str)
            and _SHA_HEX.fullmatch(row[5])
        ):
            entries[(row[0], row[1], row[2], row[3], row[4])] = row[5]
    return entries


def _image(pid: int, cache: ImageHashCache | None) -> tuple[str, str]:
    """(the executable's path, for display; the SHA-256 of the image executing)."""
    try:
        exe = osapi.executable(pid)
        fd = osapi.open_executable(pid)
    except OSError as exc:
        raise _proc_error(pid, "executable", exc) from None
    try:
        sha = cache.digest(fd) if cache is not None else image_sha256(fd)[0]
    except OSError as exc:
        raise SpawnerUnmeasurable(f"cannot hash the spawning process {pid}: {exc}") from None
    finally:
        os.close(fd)
    return exe, sha


def _cwd(pid: int) -> str:
    try:
        cwd = osapi.cwd(pid)
    except OSError as exc:
        raise _proc_error(pid, "working directory", exc) from None
    if cwd.endswith(" (deleted)") or not cwd.startswith("/"):
        raise SpawnerUnmeasurable(f"the working directory of process {pid} is gone")
    return cwd


def _node_options(pid: int) -> list[str]:
    raw = _read_proc(pid, "environ", "environment")
    for item in raw.split(b"\0"):
        if item.startswith(b"NODE_OPTIONS="):
            return os.fsdecode(item[len(b"NODE_OPTIONS=") :]).split()
    return []


def _hash_file(path: str, pid: int) -> str:
    """SHA-256 of the regular file at ``path`` (a real path), never cached: a script is writable."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        raise SpawnerUnmeasurable(
            f"cannot read {path}, which process {pid} runs: {exc.strerror}"
        ) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise SpawnerUnmeasurable(f"{path}, which process {pid} runs, is not a regular file")
        if st.st_size > ENTRY_MAX_BYTES:
            raise SpawnerUnmeasurable(f"{path}, which process {pid} runs, is too large to hash")
        h = hashlib.sha256()
        offset = 0
        while chunk := os.pread(fd, 1 << 20, offset):
            h.update(chunk)
            offset += len(chunk)
            if offset > ENTRY_MAX_BYTES:
                raise SpawnerUnmeasurable(f"{path} grew while it was hashed")
        return h.hexdigest()
    except OSError as exc:
        raise SpawnerUnmeasurable(f"cannot hash {path}: {exc.strerror}") from None
    finally:
        os.close(fd)


def _resolve(cwd: str, target: str, family: str, pid: int) -> str:
    """The real path of the script an interpreter runs, the way it finds it (node also tries
    ``.js``/``.mjs``/``.cjs``; python runs a directory's ``__main__.py``)."""
    base = os.path.realpath(os.path.join(cwd, target))
    candidates = [base]
    if family == "node":
        candidates += [base + suffix for suffix in (".js", ".mjs", ".cjs")]
    for candidate in candidates:
        real = os.path.realpath(candidate)
        if os.path.isfile(real):
            return real
    if family == "python" and os.path.isdir(base):
        main = os.path.join(base, "__main__.py")
        if os.path.isfile(main):
            return os.path.realpath(main)
    raise SpawnerUnmeasurable(f"cannot find the script {target!r} that process {pid} runs")


#: A script "path" that names a descriptor (``bash <(…)``, ``/dev/stdin``): not a file to hash.
_FD_PATH_RE = re.compile(r"^/(dev/(fd/\d+|stdin)|proc/(self|\d+)/fd/\d+)$")

_PACKAGE_ROOT_RE = re.compile(r"^(.*/node_modules/(?:@[^/]+/)?[^/@][^/]*)/")


def _package(script: str, pid: int) -> tuple[str, str, str] | None:
    """For a script inside ``node_modules``: (package.json path, its SHA-256, "name version")."""
    found = _PACKAGE_ROOT_RE.match(script)
    if found is None:
        return None
    manifest = os.path.join(found.group(1), "package.json")
    if not os.path.isfile(manifest):
        return None
    sha = _hash_file(manifest, pid)
    label = os.path.basename(found.group(1))
    with contextlib.suppress(OSError, ValueError):
        with open(manifest, "rb") as fh:
            meta = json.loads(fh.read(ENTRY_MAX_BYTES))
        if isinstance(meta, dict):
            name, version = meta.get("name"), meta.get("version")
            if isinstance(name, str) and isinstance(version, str):
                label = f"{name} {version}"[:200]
    return manifest, sha, label


def _printable(text: str) -> str:
    return "".join(c if c.isprintable() else f"\\x{ord(c):02x}" for c in text)[:DESCRIPTION_MAX]


def _identity_of(pin: _Pin, argv: list[str], image: str, image_sha: str) -> ClientIdentity:
    family = interpreter_family(image)
    shown = _undeleted(image)
    if family is None:
        return ClientIdentity(
            pin.pid,
            image,
            image_sha,
            pin.created,
            image=image,
            image_sha256=image_sha,
            kind="binary",
            pins=(f"the program {shown}", f"  (image sha256 {image_sha})"),
        )
    interp = f"the interpreter {shown} (image sha256 {_short(image_sha)})"
    if family not in ("node", "python", "shell"):
        cwd = _cwd(pin.pid)
        digest = _digest([image_sha, family, "argv", cwd, *argv[1:]])
        first = _first_word(argv[1:])
        description = f"{shown} {first} …" if first else f"{shown} …"
        return ClientIdentity(
            pin.pid,
            _printable(description),
            digest,
            pin.created,
            image=image,
            image_sha256=image_sha,
            kind="argv",
            broad=f"tabwarden does not read {family}'s command line: the pairing is this exact "
            "command line in this directory, and the files it names are not hashed",
            pins=(interp, f"  with its exact command line, in {cwd}"),
        )
    try:
        if family == "node":
            entry = parse_node(argv, _node_options(pin.pid))
        elif family == "python":
            entry = parse_python(argv)
        else:
            entry = parse_shell(argv)
    except ArgvNotUnderstood as exc:
        raise SpawnerUnmeasurable(f"cannot tell what process {pin.pid} runs: {exc}") from None
    if entry.kind == "script" and _FD_PATH_RE.match(entry.target):
        entry = dataclasses.replace(
            entry,
            kind="stdin",
            broad="; ".join(
                r for r in (entry.broad, f"it runs a program read from {entry.target}, a pipe") if r
            ),
        )
    parts = [image_sha, family, entry.kind]
    pins = [interp]
    if entry.kind == "script":
        cwd = _cwd(pin.pid)
        script = _resolve(cwd, entry.target, family, pin.pid)
        script_sha = _hash_file(script, pin.pid)
        parts += [script, script_sha]
        description = f"{shown} {script}"
        pins.append(f"  running the script {script} (sha256 {_short(script_sha)})")
        package = _package(script, pin.pid) if family == "node" else None
        if package is not None:
            parts += ["package", package[0], package[1]]
            pins.append(f"  of the package {package[2]} (package.json sha256 {_short(package[1])})")
    elif entry.kind in ("eval", "command"):
        code_sha = hashlib.sha256(entry.target.encode("utf-8", "surrogateescape")).hexdigest()
        parts.append(code_sha)
        flag = "-e" if family == "node" else "-c"
        description = f"{shown} {flag} <code sha256 {_short(code_sha)}>"
        pins.append(f"  running the code given on its command line (sha256 {_short(code_sha)})")
    elif entry.kind == "module":
        parts.append(entry.target)
        description = f"{shown} -m {entry.target}"
        pins.append(f"  running the module {entry.target!r}")
    else:
        description = f"{shown} ({'stdin' if entry.kind == 'stdin' else 'interactive'})"
        pins.append("  running a program read from stdin or typed")
    for spec in entry.preloads:
        parts += ["preload", spec]
        if _is_path_spec(spec):
            path = _resolve(_cwd(pin.pid), spec, family, pin.pid)
            preload_sha = _hash_file(path, pin.pid)
            parts += [path, preload_sha]
            pins.append(f"  preloading {path} (sha256 {_short(preload_sha)})")
        else:
            pins.append(f"  preloading {spec!r} (not hashed)")
    return ClientIdentity(
        pin.pid,
        _printable(description),
        _digest(parts),
        pin.created,
        image=image,
        image_sha256=image_sha,
        kind=entry.kind,
        broad=entry.broad,
        pins=tuple(pins),
    )


def _parsed_for_wrapper(pid: int, image: str, argv: list[str]) -> Entry | None:
    """The entry ``wrapper_kind`` judges: a shell's, or node's with its script's real path (npx
    runs as ``node /usr/bin/npx``, a link to npm's ``npx-cli.js``)."""
    family = interpreter_family(image)
    try:
        if family == "shell":
            return parse_shell(argv)
        if family == "node":
            entry = parse_node(argv)
            if entry.kind != "script":
                return entry
            script = _resolve(_cwd(pid), entry.target, family, pid)
            return dataclasses.replace(entry, target=script)
    except ArgvNotUnderstood:
        return None  # not understood: not a wrapper; measured (and refused) as the client
    return None


def _walk(
    first: int, below: _Pin | None, stack: contextlib.ExitStack, cache: ImageHashCache | None
) -> ClientIdentity:
    pins: list[tuple[_Pin, _Pin | None]] = []
    wrappers: list[str] = []
    target = first
    for _hop in range(MAX_WRAPPER_HOPS + 1):
        pin = _Pin(target)
        stack.callback(pin.close)
        pins.append((pin, below))
        _same_user(pin.pid)
        argv = _argv(pin.pid)
        image, image_sha = _image(pin.pid, cache)
        wrapper = wrapper_kind(image, argv, _parsed_for_wrapper(pin.pid, image, argv))
        if wrapper is None:
            found = _identity_of(pin, argv, image, image_sha)
            for each, child in pins:  # every hop still the process we measured, still linked
                each.unchanged()
                if child is not None:
                    child.unchanged()
                    if child.ppid() != each.pid:
                        raise SpawnerUnmeasurable(
                            f"process {child.pid} was re-parented while it was measured"
                        )
            return dataclasses.replace(found, wrappers=tuple(wrappers))
        wrappers.append(f"{wrapper} (pid {pin.pid})")
        below, target = pin, pin.ppid()
    raise SpawnerUnmeasurable(
        f"more than {MAX_WRAPPER_HOPS} wrappers ({', '.join(wrappers)}) above the MCP server"
    )


def measure_client_of(server_pid: int, cache: ImageHashCache | None = None) -> ClientIdentity:
    """The client of the MCP server ``server_pid`` (``os.getpid()`` for our own): its parent,
    measured through wrappers. Blocking (hashes files; images through ``cache`` if given).
    Raises ``SpawnerUnmeasurable``."""
    with contextlib.ExitStack() as stack:
        server = _Pin(server_pid) if server_pid != os.getpid() else _Self()
        stack.callback(server.close)
        return _walk(server.ppid(), server, stack, cache)


def measure_process(pid: int, cache: ImageHashCache | None = None) -> ClientIdentity:
    """The client at ``pid`` (through wrappers, if ``pid`` is one): ``pair-client --pid``."""
    with contextlib.ExitStack() as stack:
        return _walk(pid, None, stack, cache)


class _Self(_Pin):
    """This process, which cannot exit while it measures; its parent link is ``getppid()``."""

    def __init__(self) -> None:
        self.pid = os.getpid()
        self.fd = -1
        self.created = 0.0

    def close(self) -> None:
        pass

    def alive(self) -> None:
        pass

    def unchanged(self) -> None:
        pass

    def ppid(self) -> int:
        return os.getppid()


# ------------------------------------------------------------------- pinning before it runs
#
# ``tabwarden setup --client`` and ``pair-client --program`` pin a client that has not run yet:
# from the command a person types to start it, the identity ``measure_client_of`` will measure
# when that client starts ``tabwarden mcp``. It follows what the kernel and the client do — the
# command's symlinks, a ``#!`` line (``/usr/bin/env NAME`` looked up on PATH as env does), the
# interpreter's own argv grammar (the same parsers), and the launchers in ``LAUNCHED_BY`` that
# start the real client as a child — and builds the same digest from the same pieces. Anything
# else fails closed (``SpawnerUnmeasurable``): a wrapper, a shell script (it usually ``exec``s
# something else), an interpreter we do not parse, a preload named relative to a working
# directory not known yet. Pinned before it ran, the identity is still checked at every start.

#: How many ``#!`` lines and launchers are followed from the command to the client.
MAX_PROGRAM_HOPS = 4
_SHEBANG_MAX = 256  # Linux reads this much of a #! line (BINPRM_BUF_SIZE)
PAIR_RUNNING_HINT = (
    "Start the client once with tabwarden configured (that first call is refused), then run "
    "`tabwarden pair-client`: it measures the running program."
)


def _node_resolve(start: str, request: str) -> str | None:
    """``require.resolve(request)`` for a file path request from the directory ``start``: the
    node_modules folders of ``start`` and its ancestors (a ``node_modules`` directory itself
    skipped, as node does), first hit."""
    here = start
    while True:
        if os.path.basename(here) != "node_modules":
            candidate = os.path.join(here, "node_modules", request)
            if os.path.isfile(candidate):
                return os.path.realpath(candidate)
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def _codex_native(script: str) -> str | None:
    """``@openai/codex``'s ``bin/codex.js`` spawns its platform package's native ``codex`` and
    that process starts the MCP servers (checked against Codex 0.171 in tests/cli); found the way
    codex.js finds it (its platform package first, then its own ``vendor``)."""
    triple = osapi.native_package_triple()
    if triple is None:
        return None
    platform_package = {
        "x86_64-unknown-linux-musl": "@openai/codex-linux-x64",
        "aarch64-unknown-linux-musl": "@openai/codex-linux-arm64",
    }[triple]
    here = os.path.dirname(script)
    manifest = _node_resolve(here, f"{platform_package}/package.json")
    roots = [os.path.join(os.path.dirname(manifest), "vendor")] if manifest else []
    roots.append(os.path.join(here, "..", "vendor"))
    for root in roots:
        native = os.path.join(root, triple, "bin", "codex")
        if os.path.isfile(native):
            return os.path.realpath(native)
    return None


#: Node launchers that start the real client as their child (so the MCP server's parent is the
#: child): (package name, script path inside the package) -> the program it starts.
LAUNCHED_BY = {("@openai/codex", "bin/codex.js"): _codex_native}


def _package_of(script: str) -> tuple[str, str] | None:
    """(package name from its package.json, the script's path inside the package)."""
    found = _PACKAGE_ROOT_RE.match(script)
    if found is None:
        return None
    try:
        with open(os.path.join(found.group(1), "package.json"), "rb") as fh:
            meta = json.loads(fh.read(ENTRY_MAX_BYTES))
    except (OSError, ValueError):
        return None
    name = meta.get("name") if isinstance(meta, dict) else None
    if not isinstance(name, str):
        return None
    return name, os.path.relpath(script, found.group(1))


def _shebang(path: str) -> list[str] | None:
    """The words of ``path``'s ``#!`` line (interpreter, then its one optional argument), or
    None for a file without one (a binary the kernel runs as it is)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(_SHEBANG_MAX)
    except OSError as exc:
        raise SpawnerUnmeasurable(f"cannot read {path}: {exc.strerror}") from None
    if not head.startswith(b"#!"):
        return None
    line = os.fsdecode(head[2:].split(b"\n", 1)[0]).strip()
    interpreter, _, argument = line.partition(" ")
    argument = argument.strip()
    if not interpreter:
        raise SpawnerUnmeasurable(f"{path} has an empty #! line")
    return [interpreter, argument] if argument else [interpreter]


def _unmeasurable_before_run(what: str) -> SpawnerUnmeasurable:
    return SpawnerUnmeasurable(
        f"{what}: tabwarden cannot tell before it runs what will start `tabwarden mcp`",
        hint=PAIR_RUNNING_HINT,
    )


def program_identity(command: str, env: dict[str, str] | None = None) -> ClientIdentity:
    """The identity ``tabwarden mcp`` will measure when the client started as ``command`` (a path,
    or a name looked up on ``env``'s PATH) spawns it; ``pid`` 0. Raises ``SpawnerUnmeasurable``
    for anything it cannot follow with certainty (never a guess)."""
    import shutil

    env = dict(os.environ if env is None else env)
    search = env.get("PATH", os.defpath)
    found = command if "/" in command else shutil.which(command, path=search)
    if not found or not os.path.isfile(found):
        raise SpawnerUnmeasurable(
            f"no program {command!r} (not a file, nor on PATH)",
            hint="Install the client first, or pass its full path; "
            "or start it once and run `tabwarden pair-client`.",
        )
    invoked = os.path.abspath(found)
    argv = [invoked]
    for _hop in range(MAX_PROGRAM_HOPS):
        real = os.path.realpath(invoked)
        name = os.path.basename(real)
        if name in WRAPPERS or name in ("uv", "bun"):
            raise _unmeasurable_before_run(f"{invoked} is a wrapper ({name})")
        line = _shebang(real)
        if line is None:  # a binary: the process is this image
            family = interpreter_family(real)
            if family is not None:
                raise _unmeasurable_before_run(
                    f"{invoked} is the interpreter {family}, not a client it runs"
                )
            return _binary_before_run(real)
        interpreter, *optional = line
        if os.path.basename(interpreter) == "env":  # env NAME: looked up on PATH as env does
            if not optional or optional[0].startswith("-"):
                raise _unmeasurable_before_run(f"{invoked} starts with `#!{' '.join(line)}`")
            looked = shutil.which(optional[0], path=search)
            if looked is None:
                raise SpawnerUnmeasurable(f"{invoked} needs {optional[0]!r}, not on PATH")
            image, argv = os.path.realpath(looked), [optional[0], invoked, *argv[1:]]
        else:
            image, argv = os.path.realpath(interpreter), [interpreter, *optional, invoked]
        family = interpreter_family(image)
        if family not in ("node", "python"):
            raise _unmeasurable_before_run(
                f"{invoked} is run by {image}"
                + (" (a shell script usually starts something else)" if family == "shell" else "")
            )
        try:
            entry = (
                parse_node(argv, env.get("NODE_OPTIONS", "").split())
                if family == "node"
                else parse_python(argv)
            )
        except ArgvNotUnderstood as exc:
            raise _unmeasurable_before_run(f"{invoked}: {exc}") from None
        if entry.kind != "script":
            raise _unmeasurable_before_run(f"{invoked} does not name a script for {family}")
        script = _resolve("/", entry.target, family, 0)
        resolved = dataclasses.replace(entry, target=script)
        if wrapper_kind(image, argv, resolved) is not None:
            raise _unmeasurable_before_run(f"{invoked} is a wrapper ({os.path.basename(script)})")
        owner = _package_of(script) if family == "node" else None
        launcher = LAUNCHED_BY.get(owner) if owner else None
        if launcher is None or owner is None:
            return _script_before_run(image, family, resolved)
        started = launcher(script)
        if started is None:
            raise _unmeasurable_before_run(f"cannot find the program {owner[0]} starts")
        invoked, argv = started, [started]
    raise _unmeasurable_before_run(f"more than {MAX_PROGRAM_HOPS} launchers from {command!r}")


def _image_before_run(path: str) -> str:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError as exc:
        raise SpawnerUnmeasurable(f"cannot read {path}: {exc.strerror}") from None
    try:
        return image_sha256(fd)[0]
    finally:
        os.close(fd)


def _binary_before_run(image: str) -> ClientIdentity:
    sha = _image_before_run(image)
    return ClientIdentity(
        0, image, sha, 0.0, image=image, image_sha256=sha, kind="binary",
        pins=(f"the program {image}", f"  (image sha256 {sha})"),
    )  # fmt: skip


def _script_before_run(image: str, family: str, entry: Entry) -> ClientIdentity:
    """What ``_identity_of`` builds for an interpreter running ``entry.target`` (a real path)."""
    image_sha = _image_before_run(image)
    script = entry.target
    script_sha = _hash_file(script, 0)
    parts = [image_sha, family, "script", script, script_sha]
    pins = [
        f"the interpreter {image} (image sha256 {_short(image_sha)})",
        f"  running the script {script} (sha256 {_short(script_sha)})",
    ]
    package = _package(script, 0) if family == "node" else None
    if package is not None:
        parts += ["package", package[0], package[1]]
        pins.append(f"  of the package {package[2]} (package.json sha256 {_short(package[1])})")
    for spec in entry.preloads:
        parts += ["preload", spec]
        if _is_path_spec(spec):
            if not spec.startswith("/"):
                raise _unmeasurable_before_run(
                    f"NODE_OPTIONS preloads {spec!r}, relative to a directory not known yet"
                )
            path = _resolve("/", spec, family, 0)
            preload_sha = _hash_file(path, 0)
            parts += [path, preload_sha]
            pins.append(f"  preloading {path} (sha256 {_short(preload_sha)})")
        else:
            pins.append(f"  preloading {spec!r} (not hashed)")
    return ClientIdentity(
        0, _printable(f"{image} {script}"), _digest(parts), 0.0, image=image,
        image_sha256=image_sha, kind="script", broad=entry.broad, pins=tuple(pins),
    )  # fmt: skip
