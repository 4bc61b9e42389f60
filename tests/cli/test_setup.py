"""``tabwarden setup``: one guided session, run as a person would — on a pty that is its
controlling terminal, from a fresh HOME (tests/cli/world.py) — with the browser played by the
real host behind ``FakeBrowser`` (Chrome's half of native messaging) and the options page's
enrolment by ``enrol`` with a software authenticator. Real Chromium: tests/browser/.

What it must hold: every step says whether it was already done; a second run of a finished setup
says every step is done and changes no file; Ctrl-C in a wait leaves what was finished and a rerun
continues from there; piped output is plain lines (no spinner), and a pipe cannot pair.
"""

from __future__ import annotations

import json
import os
import re
import select
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tabwarden.cli import ceremony
from tabwarden.cli.setup import OPTIONS_URL, detect_browsers
from tabwarden.manifests import EXTENSION_ID
from tests.cli.world import CODE_RE, World, enrol, host_reply
from tests.fakes import FakeBrowser
from tests.pty_cli import PROMPT, Pty
from tests.trust.softauthn import SoftAuthenticator

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="pty/session semantics: Linux")

ARGS = ("setup", "--browser", "chromium", "--file-store")
WAIT_EXTENSION = b"waiting for the extension in chromium to connect"


def _files(world: World) -> dict[str, tuple[bytes, int, int]]:
    """Every file a setup may write (not the runtime dir's sockets): bytes, mode, mtime."""
    found = {}
    for top in (world.config, world.home, world.root / "xdg-config", world.root / "xdg-data"):
        for p in sorted(top.rglob("*")) if top.exists() else ():
            if p.is_file() and not p.is_symlink():
                st = p.stat()
                found[str(p.relative_to(world.root))] = (
                    p.read_bytes(),
                    stat.S_IMODE(st.st_mode),
                    st.st_mtime_ns,
                )
    return found


def _manifest(world: World) -> Path:
    return (
        world.root / "xdg-config" / "chromium" / "NativeMessagingHosts" / "dev.tabwarden.host.json"
    )


def _connect(world: World) -> FakeBrowser:
    """The extension loaded: the browser starts the real host for label chromium; hello."""
    browser = FakeBrowser(world.runtime, label="chromium", attested=True)
    browser.wait_socket()
    browser.hello()
    return browser


def _expect_nth(child: Pty, text: bytes, n: int, timeout: float = 60.0) -> None:
    """Until ``text`` has appeared ``n`` times (a hang guard, not a timing assertion)."""
    deadline = time.monotonic() + timeout
    while child.output.count(text) < n:
        if child.master is None or time.monotonic() > deadline:
            raise AssertionError(f"{text!r} appeared fewer than {n} times: {child.output!r}")
        child._pump(0.1)


def _pair_in_setup(child: Pty, browser: FakeBrowser, *, window_only: bool = False) -> None:
    """The person types the phrase once, then enters the printed code in the options page and
    touches an authenticator (or ticks "no authenticator": ``window_only``)."""
    child.expect(PROMPT)
    child.send(ceremony.phrase_for("pair") + "\n")
    child.expect(b"enrol chromium: open " + OPTIONS_URL.encode())
    found = CODE_RE.search(child.output)
    assert found, child.output
    if not window_only:
        enrol(browser, found.group(1).decode(), SoftAuthenticator())
        return
    assert b'tick "no authenticator" (window-only' in child.output, child.output
    begun = host_reply(browser, "pair_begin", {"code": found.group(1).decode()})
    done = host_reply(
        browser, "pair_complete", {"challengeId": begun["challengeId"], "windowOnly": True}
    )
    assert done == {"windowOnly": True}, done


def test_help_teaches_the_steps_and_flags(world: World) -> None:
    proc = world.run("setup", "--help")
    assert proc.returncode == 0, proc.stderr
    text = " ".join(proc.stdout.decode().split())
    for needle in (
        "already done", "Ctrl-C", "run `tabwarden setup` again", "--browser", "--file-store",
        "--window-only", "--manifest-dir", "--client", "claude mcp add", "config.toml",
        "pair-client", "options page", "examples:",
    ):  # fmt: skip
        assert needle in text, needle
    assert "tabwarden setup" in world.run("--help").stdout.decode()


def test_detects_installed_and_running_browsers(tmp_path: Path) -> None:
    for name in ("chromium", "brave-browser"):
        launcher = tmp_path / name
        launcher.write_text("#!/bin/sh\n")
        launcher.chmod(0o755)
    (tmp_path / "vivaldi").write_text("not executable")
    found = detect_browsers(path=str(tmp_path), running=[("chrome", 42), ("chrome", 43)])
    assert [(f.label, f.how) for f in found] == [
        ("chrome", "running (pid 42)"),
        ("chromium", str(tmp_path / "chromium")),
        ("brave", str(tmp_path / "brave-browser")),
    ]
    assert detect_browsers(path=str(tmp_path / "nowhere"), running=[]) == []


def test_a_whole_setup_then_a_rerun_says_every_step_is_done_and_changes_nothing(
    world: World,
) -> None:
    child = world.spawn(*ARGS)
    child.expect(WAIT_EXTENSION)
    text = child.output.decode()
    assert "registering the host for chromium" in text and "(already done)" not in text, text
    assert _manifest(world).is_file()
    extension = re.search(r"Load unpacked and choose (\S+)", text)
    assert extension and (Path(extension.group(1)) / "manifest.json").is_file(), text
    assert EXTENSION_ID in text and "chrome://extensions" in text
    browser = _connect(world)
    try:
        child.expect(b"extension connected in chromium")
        _pair_in_setup(child, browser)
        status, out = child.finish()
        assert status == 0, out
        assert b"browser chromium paired" in out and b"setup: done" in out, out
        assert b"claude mcp add tabwarden" in out, out  # the client step: the lines to use

        before = _files(world)
        again = world.spawn(*ARGS)
        status, out = again.finish()
        assert status == 0, out
        for step in (
            b"host registered for chromium",
            b"extension connected in chromium",
            b"host key made and paired",
            b"browser chromium paired (with an authenticator)",
        ):
            assert re.search(rb"\xe2\x9c\x93 " + re.escape(step) + rb".*\(already done\)", out), (
                step,
                out,
            )
        assert PROMPT not in out and b"waiting for" not in out, out
        assert b"live check: host for chromium answers and its extension is connected" in out
        assert _files(world) == before

        # The live check looks, and does not take the steps' word: engaged, it says so.
        assert world.run("kill").returncode == 0
        status, out = world.spawn(*ARGS).finish()
        assert status == 1, out
        assert b"x live check: not killed" in out and b"tabwarden unkill" in out, out
        assert b"setup: done" not in out, out
    finally:
        browser.close()


def test_ctrl_c_in_a_wait_keeps_what_is_done_and_a_rerun_continues(world: World) -> None:
    child = world.spawn(*ARGS)
    child.expect(WAIT_EXTENSION)
    child.send("\x03")  # Ctrl-C on the terminal: SIGINT to the foreground process
    status, out = child.finish()
    assert status == 130, out
    assert b"stopped: every finished step stays done" in out, out
    assert _manifest(world).is_file()
    assert not world.config.exists() or not (world.config / "trust.json").exists()

    rerun = world.spawn(*ARGS)
    rerun.expect(WAIT_EXTENSION)
    assert re.search(rb"host registered for chromium .*\(already done\)", rerun.output)
    browser = _connect(world)
    try:
        rerun.expect(PROMPT)  # connected: on to pairing; Ctrl-C at the phrase pairs nothing
        rerun.send("\x03")
        status, out = rerun.finish()
        assert status != 0, out
        assert not (world.config / "trust.json").exists()

        last = world.spawn(*ARGS)  # the host and the extension are done; the phrase is next
        _pair_in_setup(last, browser)
        status, out = last.finish()
        assert status == 0, out
        assert re.search(rb"host registered for chromium .*\(already done\)", out), out
        assert re.search(rb"extension connected in chromium \(already done\)", out), out
        assert b"browser chromium paired" in out and b"setup: done" in out, out
    finally:
        browser.close()


def _read_until(proc: subprocess.Popen[bytes], text: bytes, got: bytearray) -> None:
    """Read until ``text`` came, under one generous deadline for the whole wait (a process that
    keeps printing something else must not hold the test for ever)."""
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    deadline = time.monotonic() + 120.0
    while text not in got:
        left = deadline - time.monotonic()
        assert left > 0, f"{text!r} never came; got {bytes(got)!r}"
        ready, _, _ = select.select([fd], [], [], left)
        assert ready, f"{text!r} never came; got {bytes(got)!r}"
        chunk = os.read(fd, 4096)
        assert chunk, f"{text!r} never came; got {bytes(got)!r}"
        got += chunk


def test_piped_output_is_plain_lines_and_a_pipe_cannot_pair(world: World) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "tabwarden", *ARGS],
        env=world.env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    got = bytearray()
    browser = None
    try:
        # "(0 s so far" unless the machine is slow enough for the first look to take a second.
        _read_until(proc, WAIT_EXTENSION + b" (", got)
        _read_until(proc, b" s so far; Ctrl-C stops)\n", got)
        browser = _connect(world)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            proc.wait(30)
        if browser is not None:
            browser.close()
    assert proc.stdout is not None
    out = bytes(got)
    assert proc.returncode == 2, (out, err)
    assert b"\r" not in out and b"\x1b" not in out, out
    assert b"not_a_terminal" in err, err
    assert PROMPT not in out + err
    assert not (world.config / "trust.json").exists()


CLAUDE_BIN = Path(__file__).resolve().parents[2] / "tests" / "agent" / "node_modules" / ".bin"


def test_client_claude_is_registered_and_pinned_without_the_person_starting_it(
    world: World,
) -> None:
    assert (CLAUDE_BIN / "claude").is_file(), "Claude Code is missing: run scripts/setup"
    world.env["PATH"] = f"{CLAUDE_BIN}{os.pathsep}{world.env['PATH']}"
    args = (*ARGS, "--window-only", "--client", "claude")  # window-only: pair-client asks no tap
    browser = _connect(world)
    try:
        child = world.spawn(*args)
        _pair_in_setup(child, browser, window_only=True)
        _expect_nth(child, PROMPT, 2, timeout=120)  # pair's phrase prompt was the first
        assert b"pinning claude-code before it runs" in child.output, child.output
        child.send(ceremony.phrase_for("pair-client") + "\n")
        status, out = child.finish(timeout=120)
        assert status == 0, out
        assert b"MCP client paired" in out and b"setup: done" in out, out
        assert b"pair which one" not in out, out  # pinned by its program: it never ran
        assert world.json("clients", "--json")["recent"] == []
        config = json.loads((world.home / ".claude.json").read_text())
        assert config["mcpServers"]["tabwarden"]["args"] == ["mcp"], config
        [client] = world.json("clients", "--json")["paired"]
        assert "claude-code" in client["exe"], client  # Claude Code's program, not a wrapper

        before = _files(world)
        status, out = world.spawn(*args).finish()
        assert status == 0, out
        assert re.search(rb"Claude Code starts `tabwarden mcp`.*\(already done\)", out), out
        assert re.search(rb"MCP client paired: claude-code .*\(already done\)", out), out
        assert _files(world) == before
    finally:
        browser.close()


def test_client_codex_gets_its_table_once_and_keeps_the_persons_lines(world: World) -> None:
    from tabwarden.cli.setup import codex_block

    config = world.home / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text('model = "o3"\n')
    browser = _connect(world)
    try:
        child = world.spawn(*ARGS, "--client", "codex")
        _pair_in_setup(child, browser)
        child.expect(b"waiting for your MCP client to start `tabwarden mcp`")
        child.send("\x03")
        status, out = child.finish()
        assert status == 130, out
        text = config.read_text()
        assert text.startswith('model = "o3"\n') and text.count("[mcp_servers.tabwarden]") == 1
        assert 'args = ["mcp"]' in text and '"TABWARDEN_CONFIG_DIR"' in text, text
        again = world.spawn(*ARGS, "--client", "codex")
        again.expect(b"waiting for your MCP client")
        again.send("\x03")
        status, out = again.finish()
        assert re.search(rb"Codex starts `tabwarden mcp`.*\(already done\)", out), out
        assert config.read_text() == text
        assert codex_block("x").count("\n[") == 1
    finally:
        browser.close()
