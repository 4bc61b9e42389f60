"""The stable per-user copy of the extension an installed package places (install/extension.py).

An installed package is stood in for by pointing ``packaged_extension`` at a copy of this
checkout's ``extension/`` in a temp dir (tests/cli/test_package.py does the same with a real
wheel and pipx). Each test checks what a person would see in chrome://extensions: the old
version or the new one whole, the pinned ID, and being told to press Reload when it changed.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
from pathlib import Path

import pytest

from tabwarden.cli.install import extension as ext
from tabwarden.cli.install.errors import InstallError
from tabwarden.manifests import EXTENSION_ID, extension_id_from_key

REPO = Path(__file__).resolve().parents[2]


def _files(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


@pytest.fixture
def package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The extension as an installed package holds it (no package.json, no node_modules)."""
    source = tmp_path / "site-packages" / "tabwarden" / "extension"
    shutil.copytree(
        REPO / "extension", source, ignore=shutil.ignore_patterns("node_modules", "package.json")
    )
    monkeypatch.setattr(ext, "packaged_extension", lambda: (source, False))
    return source


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {"HOME": str(tmp_path / "home")}


def _stable(env: dict[str, str]) -> Path:
    return Path(env["HOME"]) / ".local/share/tabwarden/extension"


def test_the_first_place_copies_every_file_and_keeps_the_pinned_id(
    package: Path, env: dict[str, str]
) -> None:
    placed = ext.place_extension(env)
    assert placed.state == "new" and placed.path == _stable(env)
    assert _files(placed.path) == _files(package)
    key = json.loads((placed.path / "manifest.json").read_text())["key"]
    assert extension_id_from_key(key) == EXTENSION_ID
    assert (placed.path.parent.stat().st_mode & 0o777) == 0o700
    lines = "\n".join(placed.as_lines("chromium"))
    assert f"Load unpacked and choose {placed.path}" in lines and "Reload" not in lines
    assert ext.copy_state(env) == "current"


def test_the_same_version_again_is_left_alone_and_says_so(
    package: Path, env: dict[str, str]
) -> None:
    first = ext.place_extension(env)
    inode = first.path.stat().st_ino
    again = ext.place_extension(env)
    assert again.state == "unchanged" and again.path.stat().st_ino == inode
    assert "already this version" in again.as_lines("chromium")[0]
    assert "Reload" not in "\n".join(again.as_lines("chromium"))


def test_a_new_version_replaces_the_copy_whole_and_asks_for_reload(
    package: Path, env: dict[str, str]
) -> None:
    stable = ext.place_extension(env).path
    (stable / "left-by-an-older-version.js").write_text("stale")
    assert ext.copy_state(env) == "stale"
    (package / "background.js").write_text("// the new version\n")
    placed = ext.place_extension(env)
    assert placed.state == "updated"
    assert _files(stable) == _files(package)  # the stray file is gone, every file is new
    lines = "\n".join(placed.as_lines("chromium"))
    assert "press Reload on tabwarden in chromium's chrome://extensions" in lines, lines
    assert [p.name for p in stable.parent.iterdir()] == ["extension"]  # no staging left
    assert ext.copy_state(env) == "current"


def test_the_exchange_fallback_also_replaces_the_copy(
    package: Path, env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    stable = ext.place_extension(env).path
    (package / "background.js").write_text("// the new version\n")
    monkeypatch.setattr(ext, "_exchange", lambda a, b: False)  # no renameat2 on this fs
    assert ext.place_extension(env).state == "updated"
    assert _files(stable) == _files(package)
    assert [p.name for p in stable.parent.iterdir()] == ["extension"]


def test_a_copy_that_fails_halfway_leaves_the_old_version_whole(
    package: Path, env: dict[str, str]
) -> None:
    stable = ext.place_extension(env).path
    before = _files(stable)
    (package / "background.js").write_text("// the new version\n")
    # A broken package: copytree copies every other file, then fails on this one.
    (package / "zz-broken.js").symlink_to(package / "gone.js")
    with pytest.raises(shutil.Error, match="zz-broken.js"):
        ext.place_extension(env)
    assert _files(stable) == before  # Chrome still finds the old version, whole
    assert [p.name for p in stable.parent.iterdir()] == ["extension"]


def test_staging_a_killed_run_left_is_swept_by_the_next(package: Path, env: dict[str, str]) -> None:
    stable = ext.place_extension(env).path
    left = stable.parent / ".extension-k1ll3d" / "extension"
    left.mkdir(parents=True)
    (left / "manifest.json").write_text("{}")
    (package / "background.js").write_text("// the new version\n")
    assert ext.place_extension(env).state == "updated"
    assert [p.name for p in stable.parent.iterdir()] == ["extension"]
    assert _files(stable) == _files(package)


def test_a_package_whose_key_gives_another_id_is_not_copied(
    package: Path, env: dict[str, str]
) -> None:
    stable = ext.place_extension(env).path
    before = _files(stable)
    manifest = json.loads((package / "manifest.json").read_text())
    manifest["key"] = "TUlJQklqQU5CZ2txaGtpRzl3MEJBUUVGQUFPQ0FROEFNSUlCQ2dLQ0FRRUF0ZXN0"
    (package / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(InstallError, match=f"not {EXTENSION_ID}"):
        ext.place_extension(env)
    assert _files(stable) == before
    assert [p.name for p in stable.parent.iterdir()] == ["extension"]


def test_a_symlink_at_the_stable_path_is_refused_and_never_written_through(
    package: Path, env: dict[str, str], tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    stable = _stable(env)
    stable.parent.mkdir(parents=True)
    stable.symlink_to(elsewhere)
    with pytest.raises(InstallError, match="not a directory tabwarden made"):
        ext.place_extension(env)
    assert list(elsewhere.iterdir()) == [] and stable.is_symlink()
    assert ext.copy_state(env) == "missing"


def test_from_a_checkout_the_checkout_extension_is_named_and_nothing_is_copied(
    env: dict[str, str],
) -> None:
    placed = ext.place_extension(env)  # this test runs from the checkout
    assert placed.state == "checkout" and placed.path == REPO / "extension"
    assert not Path(env["HOME"]).exists()
    assert ext.extension_to_load(env) == REPO / "extension"


def test_on_linux_the_update_is_one_exchange_with_no_moment_without_a_copy(
    package: Path, env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Chrome reading the directory mid-update finds a whole version: the old copy is never
    renamed away before the new one is in (renameat2 RENAME_EXCHANGE, ext4 and tmpfs have it)."""
    stable = ext.place_extension(env).path
    (package / "background.js").write_text("// the new version\n")
    renames: list[tuple[str, str]] = []
    real_rename = os.rename

    def rename(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> None:
        renames.append((str(a), str(b)))
        real_rename(a, b)

    monkeypatch.setattr(os, "rename", rename)
    assert ext.place_extension(env).state == "updated"
    assert renames == [], renames  # nothing moved the old copy aside: one exchange did it all
    assert _files(stable) == _files(package)


def test_setup_updates_the_copy_and_asks_for_reload_while_the_old_one_is_connected(
    package: Path, env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """After an upgrade the browser still runs the version it loaded: setup's extension step puts
    the new one in place and says to press Reload, rather than only "already done"."""
    from tabwarden.cli.setup import steps
    from tabwarden.cli.setup.output import Out

    monkeypatch.setenv("HOME", env["HOME"])
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    ext.place_extension()  # the version the browser loaded
    (package / "background.js").write_text("// the new version\n")
    monkeypatch.setattr(steps, "connected", lambda label, report=None: True)

    said = io.StringIO()
    steps.extension_step("chromium", Out(said))
    text = said.getvalue()
    assert f"extension updated to this version at {_stable(env)}" in text, text
    assert "press Reload on tabwarden in chromium's chrome://extensions" in text, text
    assert "extension connected in chromium (already done)" in text, text
    assert _files(_stable(env)) == _files(package)

    again = io.StringIO()
    steps.extension_step("chromium", Out(again))
    assert "Reload" not in again.getvalue() and "(already done)" in again.getvalue()


def test_uninstall_removes_the_copy_whole_and_leaves_a_symlink_alone(
    package: Path, env: dict[str, str], tmp_path: Path
) -> None:
    stable = ext.place_extension(env).path
    assert ext.remove_extension_copy(env) == stable
    assert list(stable.parent.iterdir()) == []  # nothing half-removed, no staging
    assert ext.remove_extension_copy(env) is None  # nothing to remove: said as nothing

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "keep.txt").write_text("not tabwarden's")
    stable.symlink_to(elsewhere)
    with pytest.raises(InstallError, match="left in place"):
        ext.remove_extension_copy(env)
    assert (elsewhere / "keep.txt").is_file() and stable.is_symlink()
