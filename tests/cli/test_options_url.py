"""The options page's address is printed where a person needs it: `tabwarden status` (human and
--json) names chrome-extension://<id>/<manifest.json options_page>, the page setup also prints."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tabwarden.cli import status
from tabwarden.cli.setup import OPTIONS_URL
from tabwarden.manifests import EXTENSION_ID
from tests.fakes import host_env

MANIFEST = Path(__file__).resolve().parents[2] / "extension" / "manifest.json"


def _status(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tabwarden", "status", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


def test_the_options_url_is_the_manifests_options_page() -> None:
    page = json.loads(MANIFEST.read_text())["options_page"]
    assert OPTIONS_URL == status.OPTIONS_URL == f"chrome-extension://{EXTENSION_ID}/{page}"


def test_status_prints_the_options_page_url(tmp_path: Path, runtime_dir: Path) -> None:
    env = host_env(runtime_dir, HOME=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path / "cfg"))
    report = json.loads(_status("--json", env=env).stdout)
    assert report["optionsUrl"] == OPTIONS_URL
    human = _status(env=env).stdout
    assert f"options page: {OPTIONS_URL}\n" in human, human
