"""The ``sh`` wrapper Chrome launches, and the interpreter it ``exec``s.

``render_wrapper`` produces the exact script; ``parse_wrapper`` recognises only that exact script
(byte for byte), so a wrapper someone edited is never taken for ours. ``check_interpreter`` proves
the interpreter can import the host under ``-I`` before anything is written. This module must
never write a file and never build a shell command by string concatenation without
``shlex.quote``.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess

from tabwarden.cli.install.errors import InterpreterCannotImport

__all__ = [
    "IMPORT_CHECK",
    "IMPORT_CHECK_TIMEOUT",
    "WRAPPER_MARKER",
    "check_interpreter",
    "has_control_chars",
    "parse_wrapper",
    "render_wrapper",
    "resolve_python",
]

WRAPPER_MARKER = (
    "# tabwarden native-messaging host wrapper, written by `tabwarden install`; do not edit."
)
IMPORT_CHECK = "import tabwarden.host"
IMPORT_CHECK_TIMEOUT = 60.0


def has_control_chars(text: str) -> bool:
    return any(ord(c) < 0x20 or ord(c) == 0x7F for c in text)


def render_wrapper(python: str, browser: str) -> str:
    """The exact wrapper script ``install`` writes for ``python`` and ``browser``."""
    if has_control_chars(python) or has_control_chars(browser) or not browser:
        raise ValueError("interpreter path and browser label must not contain control characters")
    return (
        "#!/bin/sh\n"
        f"{WRAPPER_MARKER}\n"
        f"# browser: {browser}\n"
        f"exec {shlex.quote(python)} -I -m tabwarden host --browser {shlex.quote(browser)} "
        '"$@"\n'
    )


def parse_wrapper(text: str) -> tuple[str, str] | None:
    """``(python, browser)`` if ``text`` is exactly a wrapper ``install`` writes, else None."""
    lines = text.split("\n")
    if len(lines) != 5 or lines[4] != "" or lines[0] != "#!/bin/sh" or lines[1] != WRAPPER_MARKER:
        return None
    prefix = "# browser: "
    if not lines[2].startswith(prefix):
        return None
    browser = lines[2][len(prefix) :]
    try:
        tokens = shlex.split(lines[3])
    except ValueError:
        return None
    if len(tokens) != 9 or tokens[0] != "exec" or tokens[8] != "$@":
        return None
    if tokens[2:8] != ["-I", "-m", "tabwarden", "host", "--browser", browser]:
        return None
    python = tokens[1]
    try:
        if render_wrapper(python, browser) != text:
            return None
    except ValueError:
        return None
    return python, browser


def resolve_python(python: str) -> str:
    """The absolute path of ``python`` (looked up on PATH if it has no slash)."""
    if not python:
        raise InterpreterCannotImport("No Python interpreter path was given.")
    if has_control_chars(python):
        raise InterpreterCannotImport("The interpreter path contains control characters.")
    if os.sep not in python:
        found = shutil.which(python)
        if found is None:
            raise InterpreterCannotImport(f"No interpreter named {python!r} on PATH.")
        python = found
    return os.path.abspath(python)


def check_interpreter(python: str) -> None:
    """Raise InterpreterCannotImport unless ``python -I`` can import the host package."""
    cmd = [python, "-I", "-c", IMPORT_CHECK]
    try:
        proc = subprocess.run(  # noqa: S603 - fixed argv, no shell
            cmd,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=IMPORT_CHECK_TIMEOUT,
            cwd="/",
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise InterpreterCannotImport(
            f"{python} -I did not import tabwarden.host within {IMPORT_CHECK_TIMEOUT:.0f} s."
        ) from exc
    except OSError as exc:
        raise InterpreterCannotImport(f"Cannot run {python}: {exc.strerror}.") from exc
    if proc.returncode != 0:
        tail = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        detail = f": {tail[-1][:200]}" if tail else ""
        raise InterpreterCannotImport(
            f"{python} -I cannot import tabwarden.host (exit {proc.returncode}){detail}"
        )
