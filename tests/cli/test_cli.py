"""The command line as a person meets it: help that teaches, lazy imports, errors with codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fakes import FakeBrowser, host_env


def _tabwarden(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "tabwarden", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def test_help_lists_every_subcommand_and_does_not_import_mcp() -> None:
    code = (
        "import sys\n"
        "from tabwarden.cli.entry import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "heavy = sorted(m for m in sys.modules\n"
        "               if m == 'mcp' or m.startswith(('mcp.', 'playwright')))\n"
        "print('HEAVY=' + ','.join(heavy))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    for command in ("mcp", "host", "install", "uninstall", "status", "demo"):
        assert command in proc.stdout
    assert "HEAVY=\n" in proc.stdout


def test_console_script_and_module_agree() -> None:
    script = Path(sys.executable).with_name("tabwarden")
    by_script = subprocess.run(
        [str(script), "--version"], capture_output=True, text=True, timeout=60
    )
    assert by_script.returncode == 0
    assert by_script.stdout == _tabwarden("--version").stdout
    assert by_script.stdout.startswith("tabwarden ")


def test_usage_error_exit_2() -> None:
    proc = _tabwarden("install", "--browser", "netscape")
    assert proc.returncode == 2
    assert "invalid choice" in proc.stderr


@pytest.mark.promise("IN-01")
def test_install_and_uninstall_round_trip(tmp_path: Path) -> None:
    target = tmp_path / "NativeMessagingHosts"
    proc = _tabwarden("install", "--browser", "chromium", "--manifest-dir", str(target))
    assert proc.returncode == 0, proc.stderr
    assert (target / "dev.tabwarden.host.json").is_file()
    bystander = target / "other.host.json"
    bystander.write_text("{}")
    proc = _tabwarden("uninstall", "--browser", "chromium", "--manifest-dir", str(target))
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in target.iterdir()) == ["other.host.json"]


@pytest.mark.promise("EV-03")
def test_status_reports_a_running_host(tmp_path: Path, runtime_dir: Path) -> None:
    fake_browser = FakeBrowser(runtime_dir, attested=True)  # status attests the host: the real one
    try:
        _status_reports_a_running_host(tmp_path, fake_browser)
    finally:
        fake_browser.close()


def _status_reports_a_running_host(tmp_path: Path, fake_browser: FakeBrowser) -> None:
    fake_browser.wait_socket()
    fake_browser.hello()
    env = host_env(fake_browser.runtime, HOME=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path / "cfg"))
    proc = _tabwarden("status", "--json", env=env)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["runtimeDir"]["state"] == "ok"
    [host] = report["hosts"]
    assert host["label"] == "test" and host["hostReachable"] and host["extensionConnected"]
    secret = (fake_browser.runtime / "test.secret").read_bytes().hex()
    assert secret not in proc.stdout and secret not in proc.stderr
    human = _tabwarden("status", env=env)
    assert "host test: extension connected" in human.stdout


@pytest.mark.promise("BP-04")
def test_status_shows_how_each_paired_browser_confirms(tmp_path: Path, runtime_dir: Path) -> None:
    import time

    from tabwarden.trust import store
    from tests.fixtures import pair_record
    from tests.trust import credential

    config = runtime_dir.parent / "config"
    key = pair_record(config)
    store.add_window_only_browser(config / "trust.json", key, "edge", int(time.time()))
    store.add_browser_credential(
        config / "trust.json", key, "chromium", credential(True), int(time.time())
    )
    env = host_env(runtime_dir, HOME=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path / "cfg"))
    report = json.loads(_tabwarden("status", "--json", env=env).stdout)
    assert report["trust"]["browserModes"] == {
        "edge": "window-only",
        "chromium": "webauthn, 1 credential",
    }
    human = _tabwarden("status", env=env).stdout
    assert "edge (window-only: software confirmation)" in human
    assert "chromium (webauthn, 1 credential)" in human
