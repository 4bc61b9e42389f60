"""The package carries everything: the sdist and the wheel built from this checkout hold the
extension and the host manifests, and `tabwarden` installed from the wheel with pipx — no
checkout anywhere near it — registers the host, puts the extension at one stable per-user path
(replacing what an earlier install put there, never merging with it), names that path in
`install` and `status`, and runs the demo end to end in real Chromium.

Building and installing need the package index (pip's own, as `.ci/run` has); pipx installs into a
throwaway PIPX_HOME, and every command runs from a fresh HOME with the checkout out of sight.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tarfile
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tabwarden.manifests import EXTENSION_ID

pytestmark = [
    pytest.mark.skipif(sys.platform != "linux", reason="pipx paths and the demo: Linux"),
    pytest.mark.browser,  # the demo starts Chromium
    pytest.mark.xdist_group("package"),  # one build and one pipx install for the module
]

REPO = Path(__file__).resolve().parents[2]
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
    assert json.loads((profile / "dev.tabwarden.host.json").read_text())["allowed_origins"] == [
        f"chrome-extension://{EXTENSION_ID}/"
    ]

    # A later install replaces the copy: a file an older version left is gone, none is half-new.
    (stable / "left-by-an-older-version.js").write_text("stale")
    (stable / "background.js").write_text("edited")
    again = _run(argv, env=env, cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert _files(stable) == checkout
    assert [p.name for p in stable.parent.iterdir()] == ["extension"]  # no staging left over

    status = _run([str(installed), "status", "--json"], env=env, cwd=tmp_path)
    assert status.returncode == 0, status.stderr
    report = json.loads(status.stdout)
    assert report["extensionDir"] == str(stable)


def test_installed_from_the_wheel_the_demo_runs_end_to_end(installed: Path, tmp_path: Path) -> None:
    env = _person(tmp_path) | {k: v for k, v in os.environ.items() if k == "CHROME_BIN"}
    proc = _run([str(installed), "demo"], env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    assert "the agent opened and read the local page through MCP" in proc.stdout, proc.stdout
    assert str(REPO) not in proc.stdout  # it never reached into this checkout
