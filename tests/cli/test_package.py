"""The package carries everything: the sdist and the wheel built from this checkout hold the
extension and the host manifests, and `tabwarden` installed from the wheel with pipx — no
checkout anywhere near it — registers the host with the installed interpreter, puts the extension
at one stable per-user path with the pinned ID (replacing what an earlier install put there, never
merging with it, and saying to press Reload), names that path in `install` and `status`, and in
real Chromium the copy loads and its host connects; the demo runs end to end too.

Building and installing need the package index (pip's own, as `.ci/run` has); pipx installs into a
throwaway PIPX_HOME, and every command runs from a fresh HOME with the checkout out of sight.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import signal
import subprocess
import sys
import tarfile
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tabwarden.cli.browser import chrome_binary, launch_flags
from tabwarden.cli.install import parse_wrapper
from tabwarden.manifests import EXTENSION_ID, extension_id_from_key
from tests.deadline import until_sync

pytestmark = [
    pytest.mark.skipif(sys.platform != "linux", reason="pipx paths and the demo: Linux"),
    pytest.mark.browser,  # the demo starts Chromium
    pytest.mark.xdist_group("package"),  # one build and one pipx install for the module
]

REPO = Path(__file__).resolve().parents[2]
CONNECT_S = 120.0  # Chromium starting, then the extension starting the host: a hang guard
#: What the checkout's extension/ holds that a loaded extension does not need (Node's marker).
NOT_SHIPPED = {"package.json"}


def _files(root: Path) -> dict[str, str]:
    """Each file under ``root`` (relative path) and the SHA-256 of its bytes."""
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and "node_modules" not in p.parts and "__pycache__" not in p.parts
    }


def _run(argv: list[str], **kw: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=600, check=False, **kw)  # type: ignore[call-overload, no-any-return]  # noqa: S603


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    out = tmp_path_factory.mktemp("dist")
    # As `python -m build` does by default: the sdist, then the wheel built from that sdist (so
    # the sdist is proven to hold all the wheel needs).
    proc = _run([sys.executable, "-m", "build", "--outdir", str(out), str(REPO)])
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    yield out


def test_the_sdist_and_the_wheel_carry_the_extension_and_the_manifests(built: Path) -> None:
    checkout = {k: v for k, v in _files(REPO / "extension").items() if k not in NOT_SHIPPED}
    [wheel] = built.glob("*.whl")
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        for rel in checkout:
            assert f"tabwarden/extension/{rel}" in names, rel
        manifest = json.loads(z.read("tabwarden/extension/manifest.json"))
    assert "key" in manifest  # the extension's ID comes from it
    assert {"tabwarden/manifests/host-manifest.template.json"} <= names
    [sdist] = built.glob("*.tar.gz")
    with tarfile.open(sdist) as t:
        inside = {n.split("/", 1)[1] for n in t.getnames() if "/" in n}
    assert {f"extension/{rel}" for rel in checkout} <= inside
    assert "manifests/host-manifest.template.json" in inside


@pytest.fixture(scope="module")
def installed(built: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`tabwarden` installed with pipx from the built wheel; the path of its command."""
    root = tmp_path_factory.mktemp("pipx")
    env = dict(os.environ, PIPX_HOME=str(root / "home"), PIPX_BIN_DIR=str(root / "bin"),
               PIPX_MAN_DIR=str(root / "man"))  # fmt: skip
    [wheel] = built.glob("*.whl")
    proc = _run([sys.executable, "-m", "pipx", "install", "--python", sys.executable, str(wheel)],
                env=env)  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    command = root / "bin" / "tabwarden"
    assert command.exists()
    return command


def _venv(command: Path) -> Path:
    """The virtualenv pipx made for the package (its command is a symlink into it)."""
    return command.resolve().parent.parent


def _person(tmp_path: Path) -> dict[str, str]:
    """A fresh HOME, nothing of this checkout on the path or in the environment."""
    home = tmp_path / "home"
    home.mkdir()
    return {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(home), "LANG": "C.UTF-8"}


def test_installed_from_the_wheel_it_places_the_extension_at_one_stable_path(
    installed: Path, tmp_path: Path
) -> None:
    env = _person(tmp_path)
    stable = Path(env["HOME"]) / ".local/share/tabwarden/extension"
    profile = tmp_path / "profile" / "NativeMessagingHosts"
    argv = [str(installed), "install", "--browser", "chromium", "--manifest-dir", str(profile)]
    proc = _run(argv, env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert f"extension: {stable}\n" in proc.stdout, proc.stdout
    assert f"Load unpacked and choose {stable}" in proc.stdout, proc.stdout
    checkout = {k: v for k, v in _files(REPO / "extension").items() if k not in NOT_SHIPPED}
    assert _files(stable) == checkout  # every file, byte for byte, and nothing else
    manifest = json.loads((profile / "dev.tabwarden.host.json").read_text())
    assert manifest["allowed_origins"] == [f"chrome-extension://{EXTENSION_ID}/"]
    # The host runs on the interpreter of pipx's virtualenv, where the package is.
    parsed = parse_wrapper(Path(manifest["path"]).read_text())
    assert parsed is not None and parsed[1] == "chromium", manifest
    assert Path(parsed[0]).parent == _venv(installed) / "bin", parsed
    key = json.loads((stable / "manifest.json").read_text())["key"]
    assert extension_id_from_key(key) == EXTENSION_ID
    assert key == json.loads((REPO / "extension" / "manifest.json").read_text())["key"]

    # A later install replaces the copy: a file an older version left is gone, none is half-new.
    (stable / "left-by-an-older-version.js").write_text("stale")
    (stable / "background.js").write_text("edited")
    stale = json.loads(_run([str(installed), "status", "--json"], env=env, cwd=tmp_path).stdout)
    assert stale["extensionCopy"] == "stale"
    assert any(
        "`tabwarden install --browser " in n and "press Reload" in n for n in stale["next"]
    ), stale["next"]
    again = _run(argv, env=env, cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert _files(stable) == checkout
    assert [p.name for p in stable.parent.iterdir()] == ["extension"]  # no staging left over
    assert f"extension: {stable} (updated to this version)" in again.stdout, again.stdout
    assert "press Reload on tabwarden in chromium's chrome://extensions" in again.stdout

    # The same version once more: nothing to reload.
    same = _run(argv, env=env, cwd=tmp_path)
    assert same.returncode == 0, same.stderr
    assert f"extension: {stable} (already this version)" in same.stdout, same.stdout
    assert "press Reload" not in same.stdout

    status = _run([str(installed), "status", "--json"], env=env, cwd=tmp_path)
    assert status.returncode == 0, status.stderr
    report = json.loads(status.stdout)
    assert report["extensionDir"] == str(stable) and report["extensionCopy"] == "current"
    human = _run([str(installed), "status"], env=env, cwd=tmp_path)
    assert f"extension (Load unpacked): {stable} (current)" in human.stdout, human.stdout

    # Uninstalling one registration keeps the copy (another browser may load it); uninstalling
    # from every browser removes it too: exactly what install wrote.
    one = _run([str(installed), "uninstall", "--manifest-dir", str(profile)], env=env, cwd=tmp_path)
    assert one.returncode == 0 and f"kept {stable}" in one.stdout, one.stdout + one.stderr
    assert (stable / "manifest.json").is_file()
    every = _run([str(installed), "uninstall"], env=env, cwd=tmp_path)
    assert every.returncode == 0 and f"removed {stable}" in every.stdout, every.stdout
    assert list(stable.parent.iterdir()) == []


def test_installed_from_the_wheel_help_answers_with_no_checkout(
    installed: Path, tmp_path: Path
) -> None:
    proc = _run([str(installed), "--help"], env=_person(tmp_path), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "install" in proc.stdout and "setup" in proc.stdout, proc.stdout


def test_installed_from_the_wheel_chromium_loads_the_copy_and_its_host_connects(
    installed: Path, tmp_path: Path
) -> None:
    """What a person does after `install`: Load unpacked → the stable copy. Real Chromium loads
    it from there (with the pinned ID, or the host manifest would not let it in), starts the
    host through pipx's interpreter, and `tabwarden status` sees the extension connected."""
    env = _person(tmp_path)
    run = tmp_path / "run"
    run.mkdir(mode=0o700)
    env["XDG_RUNTIME_DIR"] = str(run)  # a person's session has one; never the shared /tmp one
    profile = tmp_path / "profile"
    hosts = profile / "NativeMessagingHosts"
    argv = [str(installed), "install", "--browser", "chromium", "--manifest-dir", str(hosts)]
    proc = _run(argv, env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    stable = Path(env["HOME"]) / ".local/share/tabwarden/extension"
    assert (stable / "manifest.json").is_file()

    chrome = chrome_binary(os.environ.get("CHROME_BIN"))
    log = tmp_path / "chromium.log"
    with open(log, "wb") as out:
        browser = subprocess.Popen(  # noqa: S603 (our flags, our paths)
            [chrome, *launch_flags(profile, stable, headless=True), "about:blank"],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=out,
            start_new_session=True,  # one process group: Chromium, its renderers, the host
        )
    try:

        def connected() -> dict[str, Any]:
            status = _run([str(installed), "status", "--json"], env=env, cwd=tmp_path)
            hosts_seen = json.loads(status.stdout)["hosts"] if status.returncode == 0 else []
            return next(
                (h for h in hosts_seen if h["label"] == "chromium" and h["extensionConnected"]),
                {},
            )

        host = until_sync(
            "the copied extension to start the host and connect", connected, timeout_s=CONNECT_S
        )
        assert host["hostReachable"], host
    except AssertionError as exc:
        tail = log.read_text("utf-8", "replace")[-3000:]
        raise AssertionError(f"{exc}\nChromium's log:\n{tail}") from None
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(browser.pid, signal.SIGKILL)
        browser.wait()


def test_installed_from_the_wheel_the_demo_runs_end_to_end(installed: Path, tmp_path: Path) -> None:
    env = _person(tmp_path) | {k: v for k, v in os.environ.items() if k == "CHROME_BIN"}
    proc = _run([str(installed), "demo"], env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    assert "the agent opened and read the local page through MCP" in proc.stdout, proc.stdout
    assert str(REPO) not in proc.stdout  # it never reached into this checkout
