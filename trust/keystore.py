"""Where the host key's private half lives: the OS keyring, or (``--file-store``) a 0600 file.

This module must never log, print or raise with key material: no PEM, no key bytes, no file
contents end up in a message, a hint or an exception chain. And it must never fall back silently:
if the OS keyring is missing, disabled (null/fail backend), redirected (``PYTHON_KEYRING_BACKEND``,
``keyringrc.cfg``) or unreachable (no D-Bus session), ``KeyringStore`` refuses with
``KeyStoreUnavailable`` and the person chooses ``--file-store`` explicitly.

``FileStore`` keeps ``$TABWARDEN_CONFIG_DIR/host-key.pem``: PKCS8 PEM, mode 0600, written whole
(never overwritten unless ``replace``) inside a 0700 directory we own, under the rules of
``tabwarden.private_fs``: it refuses a directory or file that is a symlink, not ours, of the wrong
type or mode, and replaces nothing it refuses.

Each store also keeps the trust record's ratchet seal beside the key (``trust.ratchet``): the
keyring entry ``trust-ratchet``, or the private file ``trust-ratchet.json`` next to the key file.
The seal holds epochs, digests and serials only — never key material.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from tabwarden import osapi
from tabwarden.errors import StorageFull, TabwardenError, UsageError
from tabwarden.private_fs import (
    DiskFull,
    EntryExists,
    EntryTooLarge,
    PrivateFsError,
    UnsafeEntry,
    open_private_dir,
)
from tabwarden.protocol.codes import (
    HOST_KEY_EXISTS,
    KEYFILE_CORRUPT,
    KEYFILE_UNSAFE,
    KEYSTORE_ERROR,
    KEYSTORE_UNAVAILABLE,
)
from tabwarden.trust.keys import HostKey

if TYPE_CHECKING:  # imported where used (~70 ms of CPU): a file store never pays for it
    import keyring.backend

__all__ = [
    "FileStore",
    "HostKeyExists",
    "KeyFileCorrupt",
    "KeyFileUnsafe",
    "KeyStore",
    "KeyStoreError",
    "KeyStoreUnavailable",
    "KeyringStore",
    "store_for",
]

#: Name of the key file inside the config directory (``--file-store``).
KEY_FILE_NAME = "host-key.pem"
#: A PKCS8 P-256 PEM is ~240 bytes; anything far larger is not our key.
_MAX_KEY_FILE = 64 * 1024
#: Backend names (module or class, lower-cased) that talk to the session bus.
_DBUS_MARKERS = ("secretservice", "libsecret", "kwallet")

_FILE_STORE_HINT = (
    "On a headless machine or one without a desktop keyring, use --file-store to keep the host "
    "key in a 0600 file in your config directory."
)


class KeyStoreError(TabwardenError):
    """The host key store failed."""

    code = KEYSTORE_ERROR
    exit_status = 3
    hint = (
        "Run `tabwarden status`: it says which host key store is in use and what is wrong with it."
    )


class KeyStoreUnavailable(KeyStoreError):
    """The OS keyring is not usable for the host key."""

    code = KEYSTORE_UNAVAILABLE
    exit_status = 3
    hint = _FILE_STORE_HINT


class KeyFileUnsafe(KeyStoreError):
    """The host key file or its directory is not private to this user."""

    code = KEYFILE_UNSAFE
    exit_status = 3
    hint = (
        "The key file must be a regular file owned by you with mode 0600, in a 0700 directory you "
        "own. Inspect it; if in doubt remove it and pair again."
    )


class KeyFileCorrupt(KeyStoreError):
    """The stored host key cannot be read as a key."""

    code = KEYFILE_CORRUPT
    exit_status = 3
    hint = "The stored host key is damaged; remove it and pair again (existing pairings end)."


class HostKeyExists(KeyStoreError):
    """A host key is already stored; refusing to overwrite it."""

    code = HOST_KEY_EXISTS
    exit_status = 1
    hint = "Replacing the host key invalidates every pairing; replace it only deliberately."


class KeyStore(Protocol):
    """Where the host key's private half is kept."""

    kind: str  # "keyring" | "file"

    def load(self) -> HostKey | None:
        """The stored key, or None when none is stored."""
        ...

    def save(self, key: HostKey, *, replace: bool = False) -> None:
        """Store ``key``; refuse (``HostKeyExists``) if one is stored unless ``replace``."""
        ...

    def delete(self) -> bool:
        """Remove the stored key; True if there was one."""
        ...

    def describe(self) -> str:
        """Where the key lives, for people (never key material)."""
        ...

    def load_seal(self) -> bytes | None:
        """The trust record's ratchet seal kept beside the key (``trust.ratchet``), or None."""
        ...

    def save_seal(self, data: bytes) -> None:
        """Replace the ratchet seal (whole, atomically where the store allows)."""
        ...


def _parse(pem: bytes, where: str) -> HostKey:
    """``HostKey.from_pem``; any failure becomes ``KeyFileCorrupt`` (no contents, no chain)."""
    try:
        return HostKey.from_pem(pem)
    except Exception as exc:  # any parse failure means the same thing
        reason = type(exc).__name__
    # Raised outside the except block so no exception (which may quote the input) is chained.
    raise KeyFileCorrupt(f"the host key in {where} is not a valid private key ({reason})")


# --------------------------------------------------------------------------------------------
# OS keyring
# --------------------------------------------------------------------------------------------


def _backend_name(backend: keyring.backend.KeyringBackend) -> str:
    try:
        return str(type(backend).name)
    except Exception:
        return type(backend).__name__


def _uses_dbus(backend: keyring.backend.KeyringBackend) -> bool:
    cls = type(backend)
    label = f"{cls.__module__}.{cls.__qualname__}".lower()
    return any(marker in label for marker in _DBUS_MARKERS)


def _check_one(backend: keyring.backend.KeyringBackend) -> None:
    import keyring.backends.fail
    import keyring.backends.null

    name = _backend_name(backend)
    if isinstance(backend, keyring.backends.null.Keyring):
        raise KeyStoreUnavailable("the OS keyring is disabled (null backend)")
    if isinstance(backend, keyring.backends.fail.Keyring):
        raise KeyStoreUnavailable("no usable OS keyring backend was found")
    if (
        _uses_dbus(backend)
        and osapi.keyring_needs_dbus_session()
        and not os.environ.get("DBUS_SESSION_BUS_ADDRESS")
    ):
        raise KeyStoreUnavailable(
            f"the OS keyring ({name}) needs a D-Bus session, and DBUS_SESSION_BUS_ADDRESS is unset",
            hint=(
                "Run inside a desktop session with a D-Bus session bus and an unlocked keyring "
                "(e.g. `dbus-run-session`), or on a headless machine use --file-store."
            ),
        )
    try:
        priority = float(type(backend).priority)
    except Exception as exc:  # a backend signals "not viable" by raising
        reason = type(exc).__name__
    else:
        if priority >= 1:
            return
        reason = f"priority {priority:g}"
    raise KeyStoreUnavailable(f"the OS keyring backend {name} is not recommended ({reason})")


class KeyringStore:
    """The host key in the OS keyring (service ``tabwarden``, user ``host-key``), as PEM text."""

    kind = "keyring"

    def __init__(
        self,
        service: str = "tabwarden",
        username: str = "host-key",
        seal_username: str = "trust-ratchet",
    ) -> None:
        self.service = service
        self.username = username
        self.seal_username = seal_username

    def _backend(self) -> keyring.backend.KeyringBackend:
        """The current keyring backend, or ``KeyStoreUnavailable``: never a silent fallback."""
        import keyring.backends.chainer  # and ``keyring`` itself
        import keyring.util.platform_

        if "PYTHON_KEYRING_BACKEND" in os.environ:
            raise KeyStoreUnavailable(
                "PYTHON_KEYRING_BACKEND is set; tabwarden will not keep the host key in a "
                "redirected keyring",
                hint="Unset PYTHON_KEYRING_BACKEND to use the OS keyring, or use --file-store.",
            )
        try:
            config = Path(keyring.util.platform_.config_root()) / "keyringrc.cfg"
            redirected = os.path.lexists(config)
        except Exception:
            raise KeyStoreUnavailable("cannot tell whether the keyring is redirected") from None
        if redirected:
            raise KeyStoreUnavailable(
                f"{config} selects the keyring backend; tabwarden will not keep the host key in a "
                "redirected keyring",
                hint=f"Remove {config} to use the OS keyring, or use --file-store.",
            )
        try:
            backend = keyring.get_keyring()
        except Exception as exc:
            reason = type(exc).__name__
        else:
            if isinstance(backend, keyring.backends.chainer.ChainerBackend):
                try:
                    chained = list(type(backend).backends)
                except Exception:
                    chained = []
                if not chained:
                    raise KeyStoreUnavailable("the OS keyring chain has no usable backend")
                for inner in chained:
                    _check_one(inner)
            else:
                _check_one(backend)
            return backend
        raise KeyStoreUnavailable(f"the OS keyring could not be initialised ({reason})")

    def _get(
        self, backend: keyring.backend.KeyringBackend, username: str | None = None
    ) -> str | None:
        try:
            value = backend.get_password(self.service, username or self.username)
        except Exception as exc:  # KeyringError, InitError, D-Bus errors, ...
            reason = type(exc).__name__
        else:
            if value is None or isinstance(value, str):
                return value
            reason = f"returned {type(value).__name__}"
        what = "the host key" if username is None else "the trust ratchet seal"
        raise KeyStoreUnavailable(f"reading {what} from the OS keyring failed ({reason})")

    def load(self) -> HostKey | None:
        backend = self._backend()
        value = self._get(backend)
        if value is None:
            return None
        try:
            pem = value.encode("ascii")
        except UnicodeEncodeError:
            pem = b""
        return _parse(pem, f"the OS keyring ({self.service}/{self.username})")

    def save(self, key: HostKey, *, replace: bool = False) -> None:
        backend = self._backend()
        if not replace and self._get(backend) is not None:
            raise HostKeyExists(
                f"a host key is already stored in the OS keyring ({self.service}/{self.username})"
            )
        pem = key.to_pem().decode("ascii")
        try:
            backend.set_password(self.service, self.username, pem)
        except Exception as exc:
            reason = type(exc).__name__
        else:
            if self._get(backend) == pem:
                return
            reason = "the stored value did not read back"
        raise KeyStoreUnavailable(f"storing the host key in the OS keyring failed ({reason})")

    def delete(self) -> bool:
        backend = self._backend()
        if self._get(backend) is None:
            return False
        try:
            backend.delete_password(self.service, self.username)
        except Exception as exc:  # KeyringError, InitError, D-Bus errors, ...
            reason = type(exc).__name__
            # PasswordDeleteError can mean "already gone" (a concurrent delete): check.
            import keyring.errors

            gone = isinstance(exc, keyring.errors.PasswordDeleteError)
        else:
            return True
        if gone and self._get(backend) is None:
            return False
        raise KeyStoreUnavailable(f"deleting the host key from the OS keyring failed ({reason})")

    def describe(self) -> str:
        import keyring

        try:
            name = _backend_name(keyring.get_keyring())
        except Exception:
            name = "unavailable"
        return f"keyring ({name})"

    def load_seal(self) -> bytes | None:
        value = self._get(self._backend(), self.seal_username)
        if value is None:
            return None
        try:
            return value.encode("ascii")
        except UnicodeEncodeError:
            return b"\xff"  # not a seal: the parser refuses it

    def save_seal(self, data: bytes) -> None:
        backend = self._backend()
        text = data.decode("ascii")
        try:
            backend.set_password(self.service, self.seal_username, text)
        except Exception as exc:
            reason = type(exc).__name__
        else:
            if self._get(backend, self.seal_username) == text:
                return
            reason = "the stored value did not read back"
        raise KeyStoreUnavailable(
            f"storing the trust ratchet seal in the OS keyring failed ({reason})"
        )


# --------------------------------------------------------------------------------------------
# File
# --------------------------------------------------------------------------------------------


class FileStore:
    """The host key in a PKCS8 PEM file, mode 0600, in a 0700 directory we own.

    All file access goes through ``tabwarden.private_fs``; this class only maps its refusals to
    ``KeyFileUnsafe`` / ``KeyFileCorrupt`` / ``HostKeyExists`` / ``KeyStoreUnavailable``.
    """

    kind = "file"

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)

    @contextmanager
    def _mapped(self) -> Iterator[None]:
        """Turn a private-filesystem failure into this store's error (path and reason only)."""
        try:
            yield
        except UnsafeEntry as exc:
            raise KeyFileUnsafe(str(exc)) from None
        except EntryTooLarge:
            raise KeyFileCorrupt(f"{self.path} is too large to be a host key") from None
        except EntryExists:
            raise HostKeyExists(f"a host key is already stored in {self.path}") from None
        except DiskFull as exc:
            raise StorageFull(str(exc)) from None
        except PrivateFsError as exc:
            raise KeyStoreUnavailable(str(exc)) from None

    def load(self) -> HostKey | None:
        with self._mapped():
            directory = open_private_dir(self.path.parent, create=False)
            if directory is None:
                return None
            with directory:
                found = directory.read(self.path.name, _MAX_KEY_FILE)
        if found is None:
            return None
        return _parse(found[0], str(self.path))

    def save(self, key: HostKey, *, replace: bool = False) -> None:
        pem = key.to_pem()
        with self._mapped():
            directory = open_private_dir(self.path.parent, create=True)
            if directory is None:  # removed between mkdir and open
                raise KeyStoreUnavailable(
                    f"{self.path.parent} disappeared while saving the host key"
                )
            with directory:
                if replace:
                    directory.write_atomic(self.path.name, pem)
                else:
                    directory.create_new(self.path.name, pem)

    def delete(self) -> bool:
        with self._mapped():
            directory = open_private_dir(self.path.parent, create=False)
            if directory is None:
                return False
            with directory:
                return directory.unlink(self.path.name)

    def describe(self) -> str:
        return f"file {self.path}"

    @property
    def seal_path(self) -> Path:
        """The trust record's ratchet seal, beside the key file (``trust.ratchet``)."""
        from tabwarden.trust.ratchet import SEAL_FILE_NAME

        return self.path.with_name(SEAL_FILE_NAME)

    def load_seal(self) -> bytes | None:
        from tabwarden.trust.ratchet import MAX_SEAL_BYTES

        with self._mapped():
            directory = open_private_dir(self.path.parent, create=False)
            if directory is None:
                return None
            with directory:
                found = directory.read(self.seal_path.name, MAX_SEAL_BYTES)
        return None if found is None else found[0]

    def save_seal(self, data: bytes) -> None:
        with self._mapped():
            directory = open_private_dir(self.path.parent, create=True)
            if directory is None:
                raise KeyStoreUnavailable(f"{self.path.parent} disappeared while sealing")
            with directory:
                directory.write_atomic(self.seal_path.name, data)


def store_for(kind: str, config_dir: Path) -> KeyStore:
    """The store named in the trust record (``hostKey.store``) or chosen on the command line."""
    if kind == "keyring":
        return KeyringStore()
    if kind == "file":
        return FileStore(Path(config_dir) / KEY_FILE_NAME)
    raise UsageError(f"unknown host key store {kind!r}; expected 'keyring' or 'file'")
