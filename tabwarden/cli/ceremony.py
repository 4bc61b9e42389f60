"""The terminal half of "presence": a person at a real terminal types a phrase to widen power.

Commands that widen what an agent may do (``pair``, ``pair-client``, ``unkill``, ``policy set``)
must be performed by a person, not by the agent that drives them. The agent can run commands, but
it runs them with pipes or files for stdin/stdout, in its own session, or in the background. So
before asking anything we require a *real* terminal:

* stdin and stdout are both ttys, and the same tty;
* that tty is the process's controlling terminal (``/dev/tty`` opens, and it is stdin's tty);
* the process is in that terminal's foreground process group.

Only then do we print what will happen and ask for an exact phrase, read line by line from the
terminal (pending type-ahead is discarded first, so nothing written before the prompt counts).

What this module must never do:

* never prompt when input is not a real terminal — refusal (``NotATerminal``) comes before any
  output, so a caller scraping stdout learns nothing about the ceremony;
* never accept piped, redirected or pre-typed input as a person's answer;
* never echo a secret — phrases are fixed plain words, and ``one_time_code`` values are compared
  by digest (``codes_equal``), never printed by this module;
* never write unfiltered caller text to the terminal — control characters (escape sequences,
  bidi overrides) in the action or explanation are shown escaped, so they cannot repaint the
  screen to hide what is being approved.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import secrets
import sys
import termios
import unicodedata
from typing import IO, Any, Protocol

from tabwarden import osapi
from tabwarden.errors import TabwardenError
from tabwarden.protocol.codes import CEREMONY_DECLINED, NOT_A_TERMINAL
from tabwarden.trust.operations import TerminalPhrase

#: The fixed phrase for each power-widening action (anything else: derived from the action name).
PHRASES: dict[str, str] = {
    "pair": "pair this browser",
    "pair-client": "pair this client",
    "unkill": "release the kill switch",
    "policy set": "apply this policy",
}

ATTEMPTS = 3
_MAX_LINE = 4096
_PHRASE_RE = re.compile(r"^[a-z0-9]+( [a-z0-9]+)*$")


class NotATerminal(TabwardenError):
    """This command must be run by a person in a terminal, not through a pipe or by a program."""

    code = NOT_A_TERMINAL
    exit_status = 2
    hint = (
        "Run this command yourself, in an interactive terminal (no pipes, no redirection, "
        "not in the background); an agent cannot run it for you."
    )


class CeremonyDeclined(TabwardenError):
    """The confirmation phrase was not typed; nothing was changed."""

    code = CEREMONY_DECLINED
    exit_status = 1
    hint = "Run the command again and type the phrase exactly as shown to go ahead."


# --------------------------------------------------------------------------- the terminal check


def _fd_of(stream: Any) -> int | None:
    if isinstance(stream, int):
        return stream
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is an OSError
        return None
    return fd if isinstance(fd, int) else None


def require_real_terminal(stdin: Any = None, stdout: Any = None) -> None:
    """Raise ``NotATerminal`` unless a person could be typing on stdin and reading stdout.

    Called before anything is printed. ``stdin``/``stdout`` default to ``sys.stdin``/``sys.stdout``
    (looked up at call time); file objects or raw fds are accepted.
    """
    stdin = sys.stdin if stdin is None else stdin
    stdout = sys.stdout if stdout is None else stdout
    in_fd, out_fd = _fd_of(stdin), _fd_of(stdout)
    if in_fd is None or out_fd is None:
        raise NotATerminal("stdin or stdout is not a file descriptor, so not a terminal")
    if not os.isatty(in_fd):
        raise NotATerminal("stdin is not a terminal (piped or redirected)")
    if not os.isatty(out_fd):
        raise NotATerminal("stdout is not a terminal (piped or redirected)")
    try:
        in_st, out_st = os.fstat(in_fd), os.fstat(out_fd)
    except OSError:
        raise NotATerminal("cannot inspect stdin/stdout") from None
    if in_st.st_rdev != out_st.st_rdev:
        try:
            same = os.ttyname(in_fd) == os.ttyname(out_fd)
        except OSError:
            same = False
        if not same:
            raise NotATerminal("stdin and stdout are different terminals")

    # A controlling terminal must exist (setsid without acquiring one fails here: ENXIO) ...
    try:
        ctty = os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError:
        raise NotATerminal("this process has no controlling terminal") from None
    try:
        # ... and be stdin's terminal. fstat on the /dev/tty fd reports /dev/tty itself (5,0), so
        # identity is established otherwise: POSIX tcgetpgrp() fails with ENOTTY on a terminal that
        # is not the caller's controlling terminal; on Linux /proc also names the device.
        try:
            fg_in = os.tcgetpgrp(in_fd)
            fg_ctty = os.tcgetpgrp(ctty)
            fg_out = os.tcgetpgrp(out_fd)
        except OSError:
            raise NotATerminal("stdin is not this process's controlling terminal") from None
    finally:
        os.close(ctty)
    tty_dev = osapi.controlling_tty()
    if tty_dev is not None and tty_dev != in_st.st_rdev:
        raise NotATerminal("stdin is not this process's controlling terminal")
    if not (fg_in == fg_ctty == fg_out):
        raise NotATerminal("stdin is not this process's controlling terminal")
    if fg_in != os.getpgrp():
        raise NotATerminal("this process is in the background of its terminal")


# --------------------------------------------------------------------------- the phrase


def phrase_for(action: str) -> str:
    """The phrase a person types to approve ``action`` (fixed table, else derived from the name)."""
    known = PHRASES.get(action.strip().lower())
    if known:
        return known
    words = re.sub(r"[^a-z0-9]+", " ", action.lower()).split()
    return " ".join(words)


def _visible(text: str) -> str:
    """``text`` with every control/format/unassigned character shown escaped, never interpreted."""
    out = []
    for ch in text:
        if unicodedata.category(ch).startswith("C"):
            code = ord(ch)
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")
        else:
            out.append(ch)
    return "".join(out)


def _write(out: Any, text: str) -> None:
    if isinstance(out, int):
        data = text.encode("utf-8", "replace")
        while data:
            written = os.write(out, data)
            data = data[written:]
        return
    out.write(text)
    out.flush()


def _read_line(fd: int) -> str | None:
    """One line from the terminal, or None on EOF. Raises KeyboardInterrupt on Ctrl-C."""
    buf = b""
    while True:
        chunk = os.read(fd, 1024)
        if not chunk:
            return None if not buf else buf.decode("utf-8", "replace")
        buf += chunk
        if b"\n" in buf:
            return buf.split(b"\n", 1)[0].decode("utf-8", "replace")
        if len(buf) > _MAX_LINE:
            return buf[:_MAX_LINE].decode("utf-8", "replace")


def _discard_typeahead(fd: int) -> None:
    try:
        termios.tcflush(fd, termios.TCIFLUSH)
    except (OSError, termios.error):
        pass


def confirm_phrase(
    action: str,
    explanation: list[str],
    *,
    phrase: str | None = None,
    tty_in: IO[str] | int | None = None,
    tty_out: IO[str] | int | None = None,
    attempts: int = ATTEMPTS,
) -> TerminalPhrase:
    """Show what ``action`` will do and return the proof only once a person has typed the exact
    phrase (the one place a ``TerminalPhrase`` is minted).

    Checks ``require_real_terminal(tty_in, tty_out)`` first, so nothing is printed unless both are
    the controlling terminal in the foreground. Raises ``CeremonyDeclined`` after ``attempts``
    mismatches, on EOF (Ctrl-D) or on Ctrl-C.
    """
    tty_in = sys.stdin if tty_in is None else tty_in
    tty_out = sys.stdout if tty_out is None else tty_out
    require_real_terminal(tty_in, tty_out)
    expected = phrase if phrase is not None else phrase_for(action)
    if not _PHRASE_RE.match(expected) or len(expected) > 64:
        raise ValueError("a ceremony phrase is 1-64 chars of lowercase words a-z0-9")
    in_fd = _fd_of(tty_in)
    assert in_fd is not None  # require_real_terminal guarantees it

    lines = [f"tabwarden: {_visible(action)}", ""]
    lines += [f"  - {_visible(line)}" for line in explanation]
    lines += [
        "",
        f"To go ahead, type exactly:  {expected}",
        "(anything else, Ctrl-D or Ctrl-C cancels)",
        "",
    ]
    try:
        _write(tty_out, "\n".join(lines) + "\n")
        for attempt in range(1, attempts + 1):
            _discard_typeahead(in_fd)  # only what is typed after the prompt appears counts
            _write(tty_out, f"phrase ({attempt}/{attempts})> ")
            answer = _read_line(in_fd)
            if answer is None:
                _write(tty_out, "\ncancelled.\n")
                raise CeremonyDeclined("cancelled (end of input); nothing was changed")
            if " ".join(answer.split()) == expected:
                _write(tty_out, "confirmed.\n")
                return TerminalPhrase(action=action)
            _write(tty_out, "that does not match.\n")
    except KeyboardInterrupt:  # Ctrl-C at any point of the ceremony
        try:
            _write(tty_out, "\ncancelled.\n")
        except (OSError, ValueError):
            pass
        raise CeremonyDeclined("cancelled with Ctrl-C; nothing was changed") from None
    raise CeremonyDeclined(f"the phrase was not typed after {attempts} attempts; nothing changed")


# --------------------------------------------------------------------------- what a pairing pins


def pair_client_explanation(
    *,
    label: str,
    exe: str,
    sha256: str,
    kind: str,
    pins: tuple[str, ...] = (),
    broad: str | None = None,
    hint_only: bool = False,
) -> list[str]:
    """The words ``pair-client`` shows before the phrase: exactly what the identity pins (the
    binary's image, or the interpreter and what it runs), what that admits, and — for a broad
    identity — a warning that it admits more than one program. ``hint_only``: the details come
    from ``spawners.json`` (a hint anyone of this user can write), not a measurement made now."""
    lines = [f"This lets client {label!r} drive your browser through tabwarden, within policy."]
    lines += ["It pins:"] + [f"  {line}" for line in (pins or (f"the program {exe}",))]
    lines.append(f"  identity sha256 {sha256}")
    if hint_only:
        lines.append(
            "  (as recorded when it last started `tabwarden mcp`: that list is only a hint; the "
            "identity sha256 is what is pinned)"
        )
    if broad:
        lines += [
            "WARNING: this identity admits more than one program: " + broad + ".",
            f"Any program it admits can use your browser as {label!r}. Prefer starting the "
            "client from a script file, or a plain executable.",
        ]
    elif kind == "binary":
        lines.append(
            "It admits only this exact executable: any other program that starts "
            "`tabwarden mcp` will be refused."
        )
    else:
        lines.append(
            "It admits only this script run by this interpreter: other scripts of the same "
            "interpreter will be refused. The files the script imports are not hashed."
        )
    lines.append(
        "When the client updates itself its identity changes, and it must be paired again."
    )
    return lines


# --------------------------------------------------------------------------- one-time codes


class _RandBelow(Protocol):
    def randbelow(self, exclusive_upper_bound: int, /) -> int: ...


def one_time_code(rng: _RandBelow = secrets) -> str:
    """A short human code, 8 digits as two dashed groups: ``"4821-9037"`` (~26.6 bits)."""
    digits = f"{rng.randbelow(10**8):08d}"
    return f"{digits[:4]}-{digits[4:]}"


def _canonical_code(code: str) -> str:
    return re.sub(r"[\s-]+", "", code)


def code_digest(code: str) -> str:
    """Hex sha256 of the code with whitespace and dashes removed ("4821 9037" == "4821-9037")."""
    return hashlib.sha256(_canonical_code(code).encode("utf-8")).hexdigest()


def codes_equal(a_hex: str, b_hex: str) -> bool:
    """Constant-time comparison of two hex digests (False for anything non-ASCII)."""
    try:
        return hmac.compare_digest(a_hex.lower().encode("ascii"), b_hex.lower().encode("ascii"))
    except (UnicodeEncodeError, AttributeError):
        return False
