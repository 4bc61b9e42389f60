"""The host-key store: 0600 file (O_EXCL|O_NOFOLLOW) or the OS keyring; never a silent fallback."""

from __future__ import annotations

import os
import stat
import sys
import traceback
from collections.abc import Iterator
from pathlib import Path

import keyring
import keyring.backends.chainer
import keyring.backends.fail
import keyring.backends.null
import keyring.core
import keyring.errors
import pytest
from keyring.backend import KeyringBackend
from keyring.compat import properties

from tabwarden.errors import UsageError
from tabwarden.trust.keys import HostKey
from tabwarden.trust.keystore import (
    FileStore,
    HostKeyExists,
    KeyFileCorrupt,
    KeyFileUnsafe,
    KeyringStore,
    KeyStoreUnavailable,
    store_for,
)

PEM_MARKER = b"PRIVATE KEY"


# --- test doubles ---------------------------------------------------------------------------


class MemoryKeyring(KeyringBackend):
    """A recommended (priority 1) backend that keeps passwords in a dict."""

    priority = 1.0

    def __init__(self) -> None:
        super().__init__()  # type: ignore[no-untyped-call]  # keyring leaves it unannotated
        self.items: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.items.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.items[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        try:
            del self.items[(service, username)]
        except KeyError:
            raise keyring.errors.PasswordDeleteError("not found") from None


class SecretService(MemoryKeyring):
    """Named like keyring.backends.SecretService: needs a D-Bus session on Linux."""


class LowPriorityKeyring(MemoryKeyring):
    """Like keyrings.alt's plaintext file backends: viable but not recommended."""

    priority = 0.5


class RaisingPriorityKeyring(MemoryKeyring):
    """A backend that reports "not viable in this environment" the keyring way: by raising."""

    @properties.classproperty
    def priority(cls) -> float:  # noqa: N805
        raise RuntimeError("not viable here")


class EmptyChain(keyring.backends.chainer.ChainerBackend):
    backends = ()


class LockedKeyring(MemoryKeyring):
    def get_password(self, service: str, username: str) -> str | None:
        raise keyring.errors.KeyringLocked("collection is locked")


class LeakySetKeyring(MemoryKeyring):
    """Fails to store and quotes the secret in its error, as a careless backend might."""

    def set_password(self, service: str, username: str, password: str) -> None:
        raise keyring.errors.PasswordSetError(f"could not store {password!r}")


# Defining a KeyringBackend subclass registers it for keyring's auto-detection; keep the doubles
# out of that registry so no other test (or keyring.get_keyring()) can ever pick one up.
for _double in (
    MemoryKeyring,
    SecretService,
    LowPriorityKeyring,
    RaisingPriorityKeyring,
    EmptyChain,
    LockedKeyring,
    LeakySetKeyring,
):
    KeyringBackend._classes.discard(_double)


# --- fixtures -------------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """HOME and XDG_* in tmp_path, no keyring redirect; keyring's global backend is restored."""
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    monkeypatch.setenv("HOME", str(home))
    for var, sub in (
        ("XDG_CONFIG_HOME", ".config"),
        ("XDG_DATA_HOME", ".local/share"),
        ("XDG_CACHE_HOME", ".cache"),
        ("XDG_STATE_HOME", ".local/state"),
        ("XDG_RUNTIME_DIR", "run"),
    ):
        monkeypatch.setenv(var, str(home / sub))
    monkeypatch.delenv("PYTHON_KEYRING_BACKEND", raising=False)
    monkeypatch.delenv("TABWARDEN_CONFIG_DIR", raising=False)
    # monkeypatch puts back whatever backend (or None = "not yet detected") was there before.
    monkeypatch.setattr(keyring.core, "_keyring_backend", keyring.core._keyring_backend)
    yield home


@pytest.fixture
def key() -> HostKey:
    return HostKey.generate()


@pytest.fixture
def config_dir(tmp_path: Path) -> Path:
    return tmp_path / "cfg"  # not created: FileStore must create it 0700


def _pem_files_under(root: Path) -> list[Path]:
    found = []
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            path = Path(dirpath) / name
            if path.is_file() and PEM_MARKER in path.read_bytes():
                found.append(path)
    return found


def _full_text(err: BaseException) -> str:
    """Everything a person or a log could see: message, hint, repr, and the whole chain."""
    return "\n".join(
        [
            str(err),
            getattr(err, "hint", ""),
            repr(err),
            *traceback.format_exception(type(err), err, err.__traceback__),
        ]
    )


# --- FileStore ------------------------------------------------------------------------------


def test_file_round_trip(config_dir: Path, key: HostKey) -> None:
    store = FileStore(config_dir / "host-key.pem")
    assert store.load() is None
    store.save(key)
    loaded = store.load()
    assert loaded is not None
    assert loaded.public.fingerprint == key.public.fingerprint
    assert loaded.to_pem() == key.to_pem()


def test_file_is_0600_in_a_0700_dir_even_with_a_permissive_umask(
    config_dir: Path, key: HostKey
) -> None:
    old = os.umask(0)
    try:
        FileStore(config_dir / "host-key.pem").save(key)
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(config_dir / "host-key.pem").st_mode) == 0o600
    assert stat.S_IMODE(os.stat(config_dir).st_mode) == 0o700


def test_save_twice_without_replace_is_refused_and_first_key_kept(
    config_dir: Path, key: HostKey
) -> None:
    store = FileStore(config_dir / "host-key.pem")
    store.save(key)
    before = (config_dir / "host-key.pem").read_bytes()
    with pytest.raises(HostKeyExists):
        store.save(HostKey.generate())
    assert (config_dir / "host-key.pem").read_bytes() == before
    loaded = store.load()
    assert loaded is not None and loaded.public.fingerprint == key.public.fingerprint


def test_replace_swaps_the_key_atomically(config_dir: Path, key: HostKey) -> None:
    store = FileStore(config_dir / "host-key.pem")
    store.save(key)
    second = HostKey.generate()
    store.save(second, replace=True)
    loaded = store.load()
    assert loaded is not None and loaded.public.fingerprint == second.public.fingerprint
    assert loaded.public.fingerprint != key.public.fingerprint
    assert stat.S_IMODE(os.stat(config_dir / "host-key.pem").st_mode) == 0o600
    assert sorted(p.name for p in config_dir.iterdir()) == ["host-key.pem"]  # no temp left


@pytest.mark.parametrize("dangling", [False, True], ids=["existing-target", "dangling"])
@pytest.mark.promise("TR-12")
def test_save_refuses_a_planted_symlink_and_leaves_its_target_alone(
    tmp_path: Path, config_dir: Path, key: HostKey, dangling: bool
) -> None:
    config_dir.mkdir(mode=0o700)
    target = tmp_path / "elsewhere"
    if not dangling:
        target.write_bytes(b"victim contents\n")
    (config_dir / "host-key.pem").symlink_to(target)
    with pytest.raises(KeyFileUnsafe) as info:
        FileStore(config_dir / "host-key.pem").save(key)
    assert info.value.code == "keyfile_unsafe"
    assert (config_dir / "host-key.pem").is_symlink()
    if dangling:
        assert not os.path.lexists(target)
    else:
        assert target.read_bytes() == b"victim contents\n"


def test_the_ratchet_seal_lives_beside_the_key_file_under_the_same_rules(
    tmp_path: Path, config_dir: Path
) -> None:
    store = FileStore(config_dir / "host-key.pem")
    assert store.load_seal() is None
    store.save_seal(b'{"a":1}')
    assert store.seal_path == config_dir / "trust-ratchet.json"
    assert store.load_seal() == b'{"a":1}'
    assert stat.S_IMODE(store.seal_path.stat().st_mode) == 0o600
    store.seal_path.unlink()
    target = tmp_path / "elsewhere"
    target.write_bytes(b"victim contents\n")
    store.seal_path.symlink_to(target)
    for attempt in (store.load_seal, lambda: store.save_seal(b"{}")):
        with pytest.raises(KeyFileUnsafe):
            attempt()
    assert target.read_bytes() == b"victim contents\n" and store.seal_path.is_symlink()


def test_load_refuses_a_group_or_world_readable_file(config_dir: Path, key: HostKey) -> None:
    store = FileStore(config_dir / "host-key.pem")
    store.save(key)
    os.chmod(config_dir / "host-key.pem", 0o644)
    with pytest.raises(KeyFileUnsafe) as info:
        store.load()
    assert info.value.code == "keyfile_unsafe"
    assert info.value.exit_status == 3


def test_load_refuses_a_symlink_even_to_a_good_key(
    tmp_path: Path, config_dir: Path, key: HostKey
) -> None:
    real_dir = tmp_path / "real"
    FileStore(real_dir / "host-key.pem").save(key)
    config_dir.mkdir(mode=0o700)
    (config_dir / "host-key.pem").symlink_to(real_dir / "host-key.pem")
    with pytest.raises(KeyFileUnsafe):
        FileStore(config_dir / "host-key.pem").load()


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to chown")
def test_load_refuses_a_file_owned_by_someone_else(config_dir: Path, key: HostKey) -> None:
    store = FileStore(config_dir / "host-key.pem")
    store.save(key)
    os.chown(config_dir / "host-key.pem", 65534, 65534)
    with pytest.raises(KeyFileUnsafe) as info:
        store.load()
    assert "65534" in str(info.value)


def test_load_refuses_a_fifo_without_blocking(config_dir: Path) -> None:
    config_dir.mkdir(mode=0o700)
    os.mkfifo(config_dir / "host-key.pem", 0o600)
    with pytest.raises(KeyFileUnsafe):
        FileStore(config_dir / "host-key.pem").load()


def test_a_directory_that_is_not_0700_is_refused(config_dir: Path, key: HostKey) -> None:
    store = FileStore(config_dir / "host-key.pem")
    store.save(key)
    os.chmod(config_dir, 0o755)
    with pytest.raises(KeyFileUnsafe):
        store.load()
    with pytest.raises(KeyFileUnsafe):
        store.save(HostKey.generate(), replace=True)
    os.chmod(config_dir, 0o700)
    loaded = store.load()
    assert loaded is not None and loaded.public.fingerprint == key.public.fingerprint


def test_a_symlinked_key_directory_is_refused_and_nothing_lands_behind_it(
    tmp_path: Path, config_dir: Path, key: HostKey
) -> None:
    real = tmp_path / "real"
    FileStore(real / "host-key.pem").save(key)
    before = (real / "host-key.pem").read_bytes()
    config_dir.symlink_to(real)
    store = FileStore(config_dir / "host-key.pem")
    with pytest.raises(KeyFileUnsafe, match="symlink"):
        store.load()
    for replace in (False, True):
        with pytest.raises(KeyFileUnsafe, match="symlink"):
            store.save(HostKey.generate(), replace=replace)
    with pytest.raises(KeyFileUnsafe, match="symlink"):
        store.delete()
    assert sorted(os.listdir(real)) == ["host-key.pem"]
    assert (real / "host-key.pem").read_bytes() == before


@pytest.mark.parametrize("mode", [0o750, 0o711, 0o500])
def test_a_key_directory_with_any_mode_but_0700_is_refused(
    config_dir: Path, key: HostKey, mode: int
) -> None:
    store = FileStore(config_dir / "host-key.pem")
    store.save(key)
    before = (config_dir / "host-key.pem").read_bytes()
    os.chmod(config_dir, mode)
    try:
        for attempt in (store.load, lambda: store.save(HostKey.generate(), replace=True)):
            with pytest.raises(KeyFileUnsafe, match=f"mode {mode:04o}"):
                attempt()
        with pytest.raises(KeyFileUnsafe):
            store.delete()
        assert stat.S_IMODE(os.stat(config_dir).st_mode) == mode  # refused, never repaired
    finally:
        os.chmod(config_dir, 0o700)
    assert sorted(os.listdir(config_dir)) == ["host-key.pem"]
    assert (config_dir / "host-key.pem").read_bytes() == before


def test_replace_refuses_a_key_file_with_a_loose_mode_and_leaves_it(
    config_dir: Path, key: HostKey
) -> None:
    store = FileStore(config_dir / "host-key.pem")
    store.save(key)
    os.chmod(config_dir / "host-key.pem", 0o640)
    before = (config_dir / "host-key.pem").read_bytes()
    with pytest.raises(KeyFileUnsafe, match="mode 0640"):
        store.save(HostKey.generate(), replace=True)
    assert (config_dir / "host-key.pem").read_bytes() == before
    assert sorted(os.listdir(config_dir)) == ["host-key.pem"]


@pytest.mark.parametrize("kind", ["garbage", "truncated"])
def test_corrupt_file_is_keyfile_corrupt_and_never_echoed(
    config_dir: Path, key: HostKey, kind: str
) -> None:
    config_dir.mkdir(mode=0o700)
    if kind == "garbage":
        body = (
            b"-----BEGIN PRIVATE KEY-----\nSECRETMARKERqwertyuiop0123456789\n"
            b"-----END PRIVATE KEY-----\n"
        )
        needles = [b"SECRETMARKERqwertyuiop0123456789"]
    else:
        pem = key.to_pem()
        body = pem[: len(pem) // 2]
        needles = [line for line in body.splitlines() if len(line) >= 16 and b"-----" not in line]
        assert needles
    fd = os.open(config_dir / "host-key.pem", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.write(fd, body)
    os.close(fd)
    with pytest.raises(KeyFileCorrupt) as info:
        FileStore(config_dir / "host-key.pem").load()
    assert info.value.code == "keyfile_corrupt"
    text = _full_text(info.value)
    for needle in needles:
        assert needle.decode() not in text


def test_file_delete(config_dir: Path, key: HostKey) -> None:
    store = FileStore(config_dir / "host-key.pem")
    assert store.delete() is False
    store.save(key)
    assert store.delete() is True
    assert store.load() is None
    assert store.delete() is False


# --- KeyringStore: refusals -----------------------------------------------------------------


def _assert_refused(tmp_path: Path, key: HostKey, *, hint_has: str = "--file-store") -> None:
    store = KeyringStore()
    for attempt in (store.load, lambda: store.save(key), store.delete):
        with pytest.raises(KeyStoreUnavailable) as info:
            attempt()
        err = info.value
        assert err.code == "keystore_unavailable"
        assert err.exit_status == 3
        assert "--file-store" in err.hint
        assert hint_has in err.hint
        assert key.to_pem().decode() not in _full_text(err)
    assert _pem_files_under(tmp_path) == []  # no silent fallback to a file anywhere


@pytest.mark.promise("TR-12")
def test_null_backend_is_refused(tmp_path: Path, key: HostKey) -> None:
    keyring.set_keyring(keyring.backends.null.Keyring())  # type: ignore[no-untyped-call]
    _assert_refused(tmp_path, key)


@pytest.mark.promise("TR-12")
def test_fail_backend_is_refused(tmp_path: Path, key: HostKey) -> None:
    keyring.set_keyring(keyring.backends.fail.Keyring())  # type: ignore[no-untyped-call]
    _assert_refused(tmp_path, key)


def test_chainer_with_no_backends_is_refused(tmp_path: Path, key: HostKey) -> None:
    keyring.set_keyring(EmptyChain())  # type: ignore[no-untyped-call]
    _assert_refused(tmp_path, key)


@pytest.mark.parametrize("backend_cls", [LowPriorityKeyring, RaisingPriorityKeyring])
def test_backends_that_are_not_recommended_are_refused(
    tmp_path: Path, key: HostKey, backend_cls: type[MemoryKeyring]
) -> None:
    backend = backend_cls()
    keyring.set_keyring(backend)
    _assert_refused(tmp_path, key)
    assert backend.items == {}


@pytest.mark.promise("TR-12")
def test_python_keyring_backend_env_is_refused_even_with_a_good_backend(
    tmp_path: Path, key: HostKey, monkeypatch: pytest.MonkeyPatch
) -> None:
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyrings.alt.file.PlaintextKeyring")
    _assert_refused(tmp_path, key, hint_has="PYTHON_KEYRING_BACKEND")
    assert backend.items == {}


@pytest.mark.promise("TR-12")
def test_keyringrc_cfg_redirect_is_refused(tmp_path: Path, key: HostKey, isolated: Path) -> None:
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    rc = isolated / ".config" / "python_keyring" / "keyringrc.cfg"
    rc.parent.mkdir(parents=True)
    rc.write_text("[backend]\ndefault-keyring=keyrings.alt.file.PlaintextKeyring\n")
    _assert_refused(tmp_path, key, hint_has="keyringrc.cfg")
    assert backend.items == {}


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="D-Bus check is Linux-only")
@pytest.mark.promise("TR-12")
def test_secret_service_without_dbus_session_is_refused(
    tmp_path: Path, key: HostKey, monkeypatch: pytest.MonkeyPatch
) -> None:
    backend = SecretService()
    keyring.set_keyring(backend)
    monkeypatch.delenv("DBUS_SESSION_BUS_ADDRESS", raising=False)
    _assert_refused(tmp_path, key, hint_has="D-Bus")
    assert backend.items == {}
    # The same backend with a session bus address is accepted: the refusal was about D-Bus.
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/bus")
    KeyringStore().save(key)
    assert PEM_MARKER.decode() in backend.items[("tabwarden", "host-key")]


def test_backend_errors_become_keystore_unavailable(tmp_path: Path, key: HostKey) -> None:
    keyring.set_keyring(LockedKeyring())
    with pytest.raises(KeyStoreUnavailable) as info:
        KeyringStore().load()
    assert "KeyringLocked" in str(info.value)
    assert "--file-store" in info.value.hint


def test_a_backend_error_quoting_the_secret_is_not_passed_on(tmp_path: Path, key: HostKey) -> None:
    keyring.set_keyring(LeakySetKeyring())
    with pytest.raises(KeyStoreUnavailable) as info:
        KeyringStore().save(key)
    text = _full_text(info.value)
    assert "PasswordSetError" in text
    assert "PRIVATE KEY" not in text
    assert key.to_pem().decode().splitlines()[1] not in text
    assert _pem_files_under(tmp_path) == []


def test_corrupt_keyring_value_is_keyfile_corrupt_and_not_echoed() -> None:
    backend = MemoryKeyring()
    backend.items[("tabwarden", "host-key")] = "SECRETMARKER not a pem"
    keyring.set_keyring(backend)
    with pytest.raises(KeyFileCorrupt) as info:
        KeyringStore().load()
    assert "SECRETMARKER" not in _full_text(info.value)


# --- KeyringStore: working backend ----------------------------------------------------------


def test_keyring_round_trip_with_a_recommended_backend(tmp_path: Path, key: HostKey) -> None:
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    store = KeyringStore()
    assert store.kind == "keyring"
    assert store.load() is None
    store.save(key)
    assert backend.items[("tabwarden", "host-key")] == key.to_pem().decode("ascii")
    loaded = store.load()
    assert loaded is not None and loaded.public.fingerprint == key.public.fingerprint
    with pytest.raises(HostKeyExists):
        store.save(HostKey.generate())
    assert backend.items[("tabwarden", "host-key")] == key.to_pem().decode("ascii")
    second = HostKey.generate()
    store.save(second, replace=True)
    reloaded = store.load()
    assert reloaded is not None and reloaded.public.fingerprint == second.public.fingerprint
    assert store.delete() is True
    assert store.load() is None
    assert store.delete() is False
    assert _pem_files_under(tmp_path) == []  # the keyring, not a file


# --- describe / store_for -------------------------------------------------------------------


def test_describe_never_contains_key_material(config_dir: Path, key: HostKey) -> None:
    body_lines = [ln for ln in key.to_pem().decode().splitlines() if "-----" not in ln]
    file_store = FileStore(config_dir / "host-key.pem")
    file_store.save(key)
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    keyring_store = KeyringStore()
    keyring_store.save(key)
    assert file_store.describe() == f"file {config_dir / 'host-key.pem'}"
    assert keyring_store.describe().startswith("keyring (")
    assert "MemoryKeyring" in keyring_store.describe()
    for text in (file_store.describe(), keyring_store.describe()):
        assert "PRIVATE KEY" not in text
        for line in body_lines:
            assert line not in text


def test_store_for(config_dir: Path) -> None:
    assert isinstance(store_for("keyring", config_dir), KeyringStore)
    file_store = store_for("file", config_dir)
    assert isinstance(file_store, FileStore) and file_store.kind == "file"
    assert file_store.path == config_dir / "host-key.pem"
    with pytest.raises(UsageError):
        store_for("plaintext", config_dir)
