"""Where the host key's private half lives: the OS keyring, or (``--file-store``) a 0600 file.

This module must never log, print or raise with key material: no PEM, no key bytes, no file
contents end up in a message, a hint or an exception chain. And it must never fall back silently:
if the OS keyring is missing, disabled (null/fail backend), redirected (``PYTHON_KEYRING_BACKEND``,
``keyringrc.cfg``) or unreachable (no D-Bus session), ``KeyringStore`` refuses with
``KeyStoreUnavailable`` and the person chooses ``--file-store`` explicitly.

``FileStore`` keeps ``$TABWARDEN_CONFIG_DIR/host-key.pem``: PKCS8 PEM, mode 0600, created with
``O_CREAT|O_EXCL|O_NOFOLLOW`` inside a 0700 directory we own; it refuses to read a file that is a
symlink, not a regular file, not ours, or readable by group/other.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
import sys
from pathlib import Path
from typing import Protocol

import keyring
import keyring.backend
import keyring.backends.chainer
import keyring.backends.fail
import keyring.backends.null
import keyring.errors
import keyring.util.platform_

from tabwarden.errors import TabwardenError, UsageError
from tabwarden.paths import private_file_problem, read_capped
from tabwarden.trust.keys import HostKey

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

    code = "keystore_error"
    exit_status = 3


class KeyStoreUnavailable(KeyStoreError):
    """The OS keyring is not usable for the host key."""

    code = "keystore_unavailable"
    exit_status = 3
    hint = _FILE_STORE_HINT


class KeyFileUnsafe(KeyStoreError):
    """The host key file or its directory is not private to this user."""

    code = "keyfile_unsafe"
    exit_status = 3
    hint = (
        "The key file must be a regular file owned by you with mode 0600, in a 0700 directory you "
        "own. Inspect it; if in doubt remove it and pair again."
    )


class KeyFileCorrupt(KeyStoreError):
    """The stored host key cannot be read as a key."""

    code = "keyfile_corrupt"
    exit_status = 3
    hint = "The stored host key is damaged; remove it and pair again (existing pairings end)."


class HostKeyExists(KeyStoreError):
    """A host key is already stored; refusing to overwrite it."""

    code = "host_key_exists"
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
    name = _backend_name(backend)
    if isinstance(backend, keyring.backends.null.Keyring):
        raise KeyStoreUnavailable("the OS keyring is disabled (null backend)")
    if isinstance(backend, keyring.backends.fail.Keyring):
        raise KeyStoreUnavailable("no usable OS keyring backend was found")
    if (
        _uses_dbus(backend)
        and sys.platform.startswith("linux")
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

    def __init__(self, service: str = "tabwarden", username: str = "host-key") -> None:
        self.service = service
        self.username = username

    def _backend(self) -> keyring.backend.KeyringBackend:
        """The current keyring backend, or ``KeyStoreUnavailable``: never a silent fallback."""
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

    def _get(self, backend: keyring.backend.KeyringBackend) -> str | None:
        try:
            value = backend.get_password(self.service, self.username)
        except Exception as exc:  # KeyringError, InitError, D-Bus errors, ...
            reason = type(exc).__name__
        else:
            if value is None or isinstance(value, str):
                return value
            reason = f"returned {type(value).__name__}"
        raise KeyStoreUnavailable(f"reading the host key from the OS keyring failed ({reason})")

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
            gone = isinstance(exc, keyring.errors.PasswordDeleteError)
        else:
            return True
        if gone and self._get(backend) is None:
            return False
        raise KeyStoreUnavailable(f"deleting the host key from the OS keyring failed ({reason})")

    def describe(self) -> str:
        try:
            name = _backend_name(keyring.get_keyring())
        except Exception:
            name = "unavailable"
        return f"keyring ({name})"


# --------------------------------------------------------------------------------------------
# File
# --------------------------------------------------------------------------------------------

_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_NOFOLLOW | _O_CLOEXEC


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


class FileStore:
    """The host key in a PKCS8 PEM file, mode 0600, in a 0700 directory we own."""

    kind = "file"

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)

    # -- the directory ------------------------------------------------------------------------

    def _open_dir(self, *, create: bool) -> int | None:
        """An fd on the parent directory after checking it is ours and 0700; None if missing."""
        parent = self.path.parent
        if create:
            try:
                parent.parent.mkdir(parents=True, exist_ok=True)
                os.mkdir(parent, 0o700)
            except FileExistsError:
                pass
            except OSError as exc:
                raise KeyStoreUnavailable(
                    f"cannot create {parent} ({exc.strerror or type(exc).__name__})"
                ) from None
        try:
            dfd = os.open(parent, os.O_RDONLY | _O_DIRECTORY | _O_NOFOLLOW | _O_CLOEXEC)
        except FileNotFoundError:
            return None
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                raise KeyFileUnsafe(f"{parent} is a symlink or not a directory") from None
            raise KeyStoreUnavailable(
                f"cannot open {parent} ({exc.strerror or type(exc).__name__})"
            ) from None
        try:
            st = os.fstat(dfd)
            if st.st_uid != os.geteuid():
                raise KeyFileUnsafe(f"{parent} is owned by uid {st.st_uid}, not {os.geteuid()}")
            if stat.S_IMODE(st.st_mode) & 0o077:
                raise KeyFileUnsafe(
                    f"{parent} has mode {stat.S_IMODE(st.st_mode):04o}; it must be 0700"
                )
        except BaseException:
            os.close(dfd)
            raise
        return dfd

    # -- the store ----------------------------------------------------------------------------

    def load(self) -> HostKey | None:
        dfd = self._open_dir(create=False)
        if dfd is None:
            return None
        try:
            try:
                fd = os.open(
                    self.path.name,
                    os.O_RDONLY | os.O_NONBLOCK | _O_NOFOLLOW | _O_CLOEXEC,
                    dir_fd=dfd,
                )
            except FileNotFoundError:
                return None
            except OSError as exc:
                if exc.errno == errno.ELOOP:
                    raise KeyFileUnsafe(f"{self.path} is a symlink") from None
                raise KeyStoreUnavailable(
                    f"cannot open {self.path} ({exc.strerror or type(exc).__name__})"
                ) from None
            try:
                st = os.fstat(fd)
                if (problem := private_file_problem(st, self.path)) is not None:
                    raise KeyFileUnsafe(problem)
                raw = read_capped(fd, _MAX_KEY_FILE, 8192) if st.st_size <= _MAX_KEY_FILE else None
                if raw is None:
                    raise KeyFileCorrupt(f"{self.path} is too large to be a host key")
            finally:
                os.close(fd)
        finally:
            os.close(dfd)
        return _parse(raw, str(self.path))

    def save(self, key: HostKey, *, replace: bool = False) -> None:
        pem = key.to_pem()
        dfd = self._open_dir(create=True)
        if dfd is None:  # removed between mkdir and open
            raise KeyStoreUnavailable(f"{self.path.parent} disappeared while saving the host key")
        try:
            if replace:
                self._replace(dfd, pem)
            else:
                self._create(dfd, self.path.name, pem)
            os.fsync(dfd)
        except OSError as exc:
            raise KeyStoreUnavailable(
                f"cannot write {self.path} ({exc.strerror or type(exc).__name__})"
            ) from None
        finally:
            os.close(dfd)

    def _create(self, dfd: int, name: str, pem: bytes) -> None:
        try:
            fd = os.open(name, _CREATE_FLAGS, 0o600, dir_fd=dfd)
        except FileExistsError:
            if stat.S_ISLNK(os.lstat(name, dir_fd=dfd).st_mode):
                raise KeyFileUnsafe(f"{self.path} is a symlink; refusing to write") from None
            raise HostKeyExists(f"a host key is already stored in {self.path}") from None
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise KeyFileUnsafe(f"{self.path} is a symlink; refusing to write") from None
            raise
        try:
            try:
                os.fchmod(fd, 0o600)
                _write_all(fd, pem)
                os.fsync(fd)
            finally:
                os.close(fd)
        except BaseException:
            try:
                os.unlink(name, dir_fd=dfd)
            except OSError:
                pass
            raise

    def _replace(self, dfd: int, pem: bytes) -> None:
        try:
            existing = os.lstat(self.path.name, dir_fd=dfd)
        except FileNotFoundError:
            pass
        else:
            if not (stat.S_ISREG(existing.st_mode) or stat.S_ISLNK(existing.st_mode)):
                raise KeyFileUnsafe(f"{self.path} is not a regular file; refusing to replace it")
        temp = f".{self.path.name}.{secrets.token_hex(8)}.tmp"
        self._create(dfd, temp, pem)
        try:
            # Renaming over a symlink replaces the link itself, never its target.
            os.replace(temp, self.path.name, src_dir_fd=dfd, dst_dir_fd=dfd)
        except BaseException:
            try:
                os.unlink(temp, dir_fd=dfd)
            except OSError:
                pass
            raise

    def delete(self) -> bool:
        dfd = self._open_dir(create=False)
        if dfd is None:
            return False
        try:
            os.unlink(self.path.name, dir_fd=dfd)
            os.fsync(dfd)
        except FileNotFoundError:
            return False
        except OSError as exc:
            raise KeyStoreUnavailable(
                f"cannot delete {self.path} ({exc.strerror or type(exc).__name__})"
            ) from None
        finally:
            os.close(dfd)
        return True

    def describe(self) -> str:
        return f"file {self.path}"


def store_for(kind: str, config_dir: Path) -> KeyStore:
    """The store named in the trust record (``hostKey.store``) or chosen on the command line."""
    if kind == "keyring":
        return KeyringStore()
    if kind == "file":
        return FileStore(Path(config_dir) / KEY_FILE_NAME)
    raise UsageError(f"unknown host key store {kind!r}; expected 'keyring' or 'file'")
