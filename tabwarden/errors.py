"""The error family every tabwarden boundary raises, and the shared machine-code table.

Each error class carries a stable machine ``code`` from ``protocol/error_codes.json`` — a
numbered row if it can reach the wire or an MCP result, else an entry of its ``cliOnly`` list —
spelled with the constant from ``tabwarden.protocol.codes``, a one-line ``hint`` a person can act
on, and a process ``exit_status``. The CLI
turns them into exit codes in exactly one place (``tabwarden.cli.entry``). Messages must never
carry a secret: no run secret, nonce, MAC, key material or page content ends up in ``str(error)``.
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from typing import Any, ClassVar

from tabwarden.protocol.codes import INTERNAL_ERROR, STORAGE_FULL, USAGE


@lru_cache(maxsize=1)
def _document() -> dict[str, Any]:
    raw = resources.files("tabwarden.protocol").joinpath("error_codes.json").read_text("utf-8")
    document: dict[str, Any] = json.loads(raw)
    return document


@lru_cache(maxsize=1)
def error_table() -> dict[str, tuple[int, str]]:
    """code -> (number, hint), from the one append-only table (the codes that reach the wire)."""
    return {row["code"]: (row["n"], row["hint"]) for row in _document()["codes"]}


@lru_cache(maxsize=1)
def cli_only_table() -> dict[str, tuple[int, str]]:
    """code -> (exit status, hint) for the codes that only ever reach a terminal."""
    return {row["code"]: (row["exit"], row["hint"]) for row in _document()["cliOnly"]}


#: What repeating a call that failed with a code risks (the table's ``retry`` column).
RETRY_SAFE = "safe"  # the call did nothing; repeating it cannot act twice
RETRY_AFTER_CHECK = "after_check"  # it may have acted: check the page before repeating an action
RETRY_UNSAFE = "unsafe"  # a person said no: do not repeat without them
RETRY_VALUES = frozenset({RETRY_SAFE, RETRY_AFTER_CHECK, RETRY_UNSAFE})


@lru_cache(maxsize=1)
def retry_table() -> dict[str, str]:
    """code -> its ``retry`` value, from the table."""
    return {row["code"]: row["retry"] for row in _document()["codes"]}


def retry_for(code: str, *, read_only: bool) -> str:
    """What repeating a call of this kind that failed with ``code`` risks. ``after_check`` is
    resolved for the call: a read-only tool cannot have acted, so it is safe to repeat. A code
    the table does not know may have acted (fail closed)."""
    retry = retry_table().get(code, RETRY_AFTER_CHECK)
    if retry == RETRY_AFTER_CHECK and read_only:
        return RETRY_SAFE
    return retry


def known_codes() -> frozenset[str]:
    """Every code the table lists, numbered or CLI-only."""
    return frozenset(error_table()) | frozenset(cli_only_table())


def hint_for(code: str) -> str:
    entry = error_table().get(code)
    return entry[1] if entry else ""


class TabwardenError(Exception):
    """Something went wrong inside tabwarden."""

    code: ClassVar[str] = INTERNAL_ERROR
    exit_status: ClassVar[int] = 1
    hint: str = ""

    def __init__(self, message: str | None = None, *, hint: str | None = None) -> None:
        super().__init__(message or (self.__doc__ or self.code).strip())
        self.hint = hint if hint is not None else (hint_for(self.code) or type(self).hint)


class UsageError(TabwardenError):
    """The command line was not valid."""

    code = USAGE
    exit_status = 2


class StorageFull(TabwardenError):
    """A private file could not be written: the disk (or quota) is full. What was there before
    is still there, whole."""

    code = STORAGE_FULL
    exit_status = 3
