"""The errors ``tabwarden install`` / ``uninstall`` raise: one family, CLI-only codes.

Each class's code is listed under ``cliOnly`` in ``protocol/error_codes.json`` with its exit
status and default hint. Messages name paths and browsers only; nothing secret passes here.
"""

from __future__ import annotations

from typing import ClassVar

from tabwarden.errors import TabwardenError
from tabwarden.protocol.codes import (
    INSTALL_FAILED,
    INSTALL_FOREIGN_MANIFEST,
    INSTALL_INTERPRETER_CANNOT_IMPORT,
    INSTALL_UNKNOWN_BROWSER,
    INSTALL_UNSAFE_PATH,
    INSTALL_UNSUPPORTED_PLATFORM,
)

__all__ = [
    "ForeignManifest",
    "InstallError",
    "InterpreterCannotImport",
    "UnknownBrowser",
    "UnsafePath",
    "UnsupportedPlatform",
]


class InstallError(TabwardenError):
    """Installing or removing the native-messaging host failed."""

    code: ClassVar[str] = INSTALL_FAILED
    hint = "Run `tabwarden status` to see what is registered where."


class UnknownBrowser(InstallError):
    """That browser is not one tabwarden knows how to register with."""

    code: ClassVar[str] = INSTALL_UNKNOWN_BROWSER
    exit_status: ClassVar[int] = 2


class UnsupportedPlatform(InstallError):
    """tabwarden cannot register its native-messaging host on this platform."""

    code: ClassVar[str] = INSTALL_UNSUPPORTED_PLATFORM


class ForeignManifest(InstallError):
    """A native-messaging host file that tabwarden did not write is in the way."""

    code: ClassVar[str] = INSTALL_FOREIGN_MANIFEST


class InterpreterCannotImport(InstallError):
    """That Python interpreter cannot import tabwarden's host in isolated mode."""

    code: ClassVar[str] = INSTALL_INTERPRETER_CANNOT_IMPORT
    hint = (
        "Install tabwarden into that interpreter's own site-packages (a venv is simplest); "
        "`pip install --user` is not seen under -I."
    )


class UnsafePath(InstallError):
    """A path tabwarden would write is a symlink, not a regular file, or in an unsafe directory."""

    code: ClassVar[str] = INSTALL_UNSAFE_PATH
