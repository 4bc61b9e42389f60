"""The README's "Use it with your own Chrome", followed word for word from a fresh HOME, to a
first agent call through the client setup pinned: at most five person-steps.

Every command comes from README.md itself (the numbered steps' code spans), never copied here, so
the test fails when the README drifts from what the program does. The person:

* has a checkout (a copy of this one's files, nothing built), ``pipx`` (the one this suite runs,
  behind a ``pipx`` command on the PATH, as Debian's package gives a person), pipx's
  ``~/.local/bin`` on the PATH (what ``pipx ensurepath`` does), Claude Code installed by npm (the
  copy scripts/setup installs for the suite, tests/agent/node_modules/.bin) and Debian's
  Chromium, and no tabwarden anywhere on the PATH;
* step 1: runs the README's install line in the checkout, a shell running it as written;
* step 2: runs ``tabwarden setup --client claude`` with the README's ``--file-store`` (this
  machine has no desktop keyring) on a pty that is its controlling terminal, and answers what it
  asks: the two phrases;
* step 3: loads the extension from the path setup printed. "Load unpacked" is a click in
  chrome://extensions that CDP cannot reach, so Chromium (headful, on a private Xvfb display, its
  profile the fresh HOME's ``~/.config/chromium``, where setup registered the host) starts with
  ``--load-extension`` of that path: what Load unpacked does;
* step 4: opens the options-page URL setup printed, enters the code it printed and touches the
  authenticator: Chrome's CDP virtual authenticator on that page; then, for the pin (a widening
  takes the phrase and, once a key is enrolled, a tap), Tap in tabwarden's window;
* step 5: approves the first site when the agent first opens it: Tap in tabwarden's window (the
  enrolled credential copied to that page's virtual authenticator: authenticators are per page),
  then Allow in Chrome's own dialog (clicked at the X11 level, tests/browser/chrome_dialog.py).

The agent is the real Claude Code setup registered and pinned before it ever ran, offline, its
model a scripted Messages API (tests/browser/scripted_api.py): its first call opens the test site
and its second reads it; both must be served.

Hands-on time is counted, never clocked (timing assertions are not allowed here, and a busy
machine's waits are not the person's): what the person does with their hands — each README step
done (a person-step), each prompt answered, each character typed (commands, phrases, the code)
and each click (Developer mode, Load unpacked, choosing the folder, Pair, Tap, Chrome's Allow).
Waiting while the machine works (the build, setup's waits) is not hands-on time. The test asserts
at most five person-steps and two prompts, and prints the tally.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import async_playwright

from tabwarden.cli import ceremony
from tabwarden.cli.browser import chrome_binary, launch_flags
from tabwarden.manifests import EXTENSION_ID
from tests.browser.agent_cli import AGENT_BIN, RUN_S, assert_script_ran, installed, succeeded
from tests.browser.chrome_dialog import answer_permission_dialog, when_done
from tests.browser.harness import confirm_page_presence, options_status, pair_options_page, press
from tests.browser.scripted_api import Script, Step, ToolResult, scripted_messages_api
from tests.browser.webauthn import add_authenticator
from tests.deadline import NeverHappened, within
from tests.pty_cli import PROMPT, Pty

pytestmark = [
    pytest.mark.browser,
    pytest.mark.deadline(1200.0),
    pytest.mark.skipif(sys.platform != "linux", reason="pipx, pty and Xvfb: Linux"),
]

REPO = Path(__file__).resolve().parents[2]
SECTION = "Use it with your own Chrome"
INSTALL_S = 900.0  # the build and the pipx install, from the package index: a hang guard
CODE_RE = re.compile(rb"\b(\d{4}-\d{4})\b")
#: The clicks the README's step 3 asks for (Developer mode, Load unpacked, the folder's OK).
LOAD_UNPACKED_CLICKS = 3


def _steps() -> dict[int, str]:
    readme = (REPO / "README.md").read_text("utf-8")
    found = re.search(rf"^## {re.escape(SECTION)}\n(.*?)(?=^## )", readme, re.M | re.S)
    assert found, f"README.md has no section {SECTION!r}"
    body = found.group(1).split("\nBy hand instead", 1)[0]
    parts = re.split(r"^(\d+)\. ", body, flags=re.M)
    return {int(n): " ".join(t.split()) for n, t in zip(parts[1::2], parts[2::2], strict=True)}


def _spans(text: str) -> list[str]:
    return re.findall(r"`([^`\n]+)`", text)


def _one(spans: list[str], prefix: str) -> str:
    found = [s for s in spans if s.startswith(prefix)]
    assert found, f"the README's step names no `{prefix}…`: {spans}"
    return found[0]


class _Hands:
    """What the person did with their hands."""

    def __init__(self) -> None:
        self.steps: list[str] = []
        self.prompts = 0
        self.typed = 0
        self.clicks = 0

    def type(self, text: str) -> str:
        self.typed += len(text)
        return text


def _checkout(into: Path) -> Path:
    """A copy of this checkout's files (tracked, and new ones not ignored): nothing built."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "-co", "--exclude-standard"],  # noqa: S607
        cwd=REPO, capture_output=True, check=True,
    ).stdout.decode().split("\0")  # fmt: skip
    for rel in filter(None, listed):
        src = REPO / rel
        if src.is_file() and not src.is_symlink():
            dst = into / rel
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst)
    return into


def _person(root: Path) -> dict[str, str]:
    home = root / "home"
    (home / ".local" / "bin").mkdir(parents=True)
    tools = root / "tools"
    tools.mkdir()
    pipx = tools / "pipx"
    pipx.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m pipx "$@"\n')
    pipx.chmod(0o755)
    run = root / "run"
    run.mkdir(mode=0o700)
    path = [str(home / ".local" / "bin"), str(tools), str(installed(AGENT_BIN / "claude").parent)]
    env = {
        "HOME": str(home),
        "PATH": os.pathsep.join([*path, "/usr/local/bin", "/usr/bin", "/bin"]),
        "LANG": "C.UTF-8",
        "XDG_RUNTIME_DIR": str(run),  # a person's session has one; never the shared /tmp one
    }
    for var in ("PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS", "CHROME_BIN"):
        if var in os.environ:
            env[var] = os.environ[var]
    return env


def _shell(line: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # noqa: S603 - a shell running the README's own line
        ["/bin/sh", "-c", line], cwd=cwd, env=env, capture_output=True, text=True,
        stdin=subprocess.DEVNULL, timeout=INSTALL_S, check=False,
    )  # fmt: skip


def _at_terminal(line: str, env: dict[str, str], cwd: Path) -> Pty:
    """``line`` through a shell in a new session on a pty that is its controlling terminal."""
    import fcntl
    import termios

    master, slave = os.openpty()

    def controlling_terminal() -> None:
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    proc = subprocess.Popen(  # noqa: S603 - a shell running the README's own line
        ["/bin/sh", "-c", line], cwd=cwd, env=env, stdin=slave, stdout=slave, stderr=slave,
        start_new_session=True, preexec_fn=controlling_terminal,  # noqa: PLW1509
    )  # fmt: skip
    os.close(slave)
    return Pty(proc, master)


async def _expect(child: Pty, text: bytes, n: int = 1, timeout: float = 180.0) -> None:
    """Until ``text`` has appeared ``n`` times on the terminal, the event loop free meanwhile (a
    hang guard, not a timing assertion)."""

    async def seen() -> None:
        while child.output.count(text) < n:
            if child.master is None:
                raise AssertionError(f"{text!r} never appeared; got {child.output!r}")
            await asyncio.to_thread(child._pump, 0.2)

    try:
        await within(f"{text!r} on setup's terminal", seen(), timeout_s=timeout)
    except NeverHappened:
        raise AssertionError(f"{text!r} never appeared; got {child.output!r}") from None


async def _key_in(window: Any, context: Any, key: tuple[Any, str], uses: int) -> None:
    """The person's one key, reachable from ``window`` too: virtual authenticators are per page,
    so ``window`` gets one holding the enrolled credential, its signature counter advanced past
    the ``uses`` taps made on other pages' copies (a real key's counter only grows)."""
    source, source_id = key
    found = await source.send("WebAuthn.getCredentials", {"authenticatorId": source_id})
    target, target_id = await add_authenticator(context, window)
    for credential in found["credentials"]:
        credential = dict(credential, signCount=credential["signCount"] + uses)
        await target.send(
            "WebAuthn.addCredential", {"authenticatorId": target_id, "credential": credential}
        )


async def _claude(env: dict[str, str], project: Path, prompt: str) -> tuple[int, str]:
    proc = await asyncio.create_subprocess_exec(
        "claude", "-p", prompt, "--allowedTools", "mcp__tabwarden", cwd=project, env=env,
        stdin=subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    try:
        out, _ = await within("claude finished", proc.communicate(), timeout_s=RUN_S)
    except NeverHappened:
        proc.kill()
        out, _ = await proc.communicate()
        raise AssertionError(f"claude did not finish: {out.decode(errors='replace')}") from None
    return proc.returncode or 0, out.decode(errors="replace")


async def test_the_readme_five_steps_from_a_fresh_home_to_a_first_agent_call(
    tmp_path: Path, site: str, x_display: str
) -> None:
    steps = _steps()
    assert sorted(steps) == list(range(1, len(steps) + 1)), steps
    assert len(steps) <= 5, f"the README asks for {len(steps)} person-steps"
    hands = _Hands()
    env = _person(tmp_path)
    home = Path(env["HOME"])
    checkout = _checkout(tmp_path / "tabwarden")
    assert _shell("command -v tabwarden", env, checkout).returncode != 0, "already on the PATH"

    # 1. Install the package, as written, in the checkout.
    install = _one(_spans(steps[1]), "pipx run build")
    done = _shell(hands.type(install), env, checkout)
    hands.steps.append("install the package")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    found = _shell("command -v tabwarden", env, checkout)
    assert found.stdout.strip() == str(home / ".local/bin/tabwarden"), found

    # 2. Run setup, as written (with the flag the step names for a machine with no keyring).
    spans = _spans(steps[2])
    line = f"{_one(spans, 'tabwarden setup --client claude')} {_one(spans, '--file-store')}"
    setup = _at_terminal(hands.type(line), env, tmp_path)
    hands.steps.append("run setup")
    try:
        await _expect(setup, b"Load unpacked and choose ")
        printed = re.search(rb"Load unpacked and choose (\S+)", setup.output)
        assert printed, setup.output
        extension = Path(printed.group(1).decode())
        assert extension == home / ".local/share/tabwarden/extension", extension
        assert "`~/.local/share/tabwarden/extension`" in steps[3] and EXTENSION_ID in steps[3]

        # 3. Load the extension from the printed path (what Load unpacked does, see above).
        profile = home / ".config" / "chromium"  # Chromium's own default, where setup registered
        assert (profile / "NativeMessagingHosts" / "dev.tabwarden.host.json").is_file()
        flags = [*launch_flags(profile, extension, headless=False, pipe=True), "about:blank"]
        async with async_playwright() as pw:
            context = await pw.chromium.launch_persistent_context(
                str(profile), executable_path=chrome_binary(os.environ.get("CHROME_BIN")),
                headless=False, no_viewport=True, args=flags,
                env=dict(env, DISPLAY=x_display), ignore_default_args=True,
            )  # fmt: skip
            try:
                hands.steps.append("load the extension")
                hands.clicks += LOAD_UNPACKED_CLICKS
                await _expect(setup, b"extension connected in chromium")

                await _expect(setup, PROMPT)  # pairing this computer: the phrase, once
                setup.send(hands.type(ceremony.phrase_for("pair")) + "\n")
                hands.prompts += 1
                await _expect(setup, b"enrol chromium: open ")
                url = re.search(rb"enrol chromium: open (\S+)", setup.output)
                code = CODE_RE.search(setup.output)
                assert url and code, setup.output

                # 4. Touch the key: the options page, the code, the authenticator.
                page = await context.new_page()
                await page.goto(url.group(1).decode())
                cdp, authenticator = await add_authenticator(context, page)
                await pair_options_page(page, hands.type(code.group(1).decode()))
                hands.clicks += 1  # Pair; the virtual authenticator is touched
                hands.steps.append("touch the key")
                assert (await options_status(page, "paired")).startswith("paired")

                # Setup pins Claude Code before it ever ran: that phrase too.
                await _expect(setup, b"pinning claude-code before it runs")
                await _expect(setup, PROMPT, n=2)
                setup.send(hands.type(ceremony.phrase_for("pair-client")) + "\n")
                hands.prompts += 1
                # ... and, the browser holding an enrolled key, a tap in tabwarden's window.
                window = await confirm_page_presence(context)
                await _key_in(window, context, (cdp, authenticator), uses=1)
                await press(window, "#tap")
                hands.clicks += 1
                status, out = await asyncio.to_thread(setup.finish, 180.0)
                assert status == 0, out
                assert b"setup: done" in out, out

                # 5. The agent's first call opens the site: approve it (Tap, then Chrome's Allow).
                tab: dict[str, Any] = {}

                def opened(result: ToolResult) -> None:
                    succeeded(result)
                    tab["id"] = result.json()["tab"]["id"]

                def read(result: ToolResult) -> None:
                    succeeded(result)
                    assert "Sign in" in result.text, result.text[:500]

                script = Script(
                    [
                        Step("tab_open", lambda _: {"url": f"{site}/"}, opened),
                        Step("page_snapshot", lambda _: {"tabId": tab["id"]}, read),
                    ]
                )
                project = home / "project"
                project.mkdir()
                with scripted_messages_api(script) as api:
                    agent_env = dict(
                        env, ANTHROPIC_BASE_URL=api, ANTHROPIC_API_KEY="sk-ant-scripted-not-a-key",
                        DISABLE_TELEMETRY="1", DISABLE_AUTOUPDATER="1",
                        DISABLE_ERROR_REPORTING="1", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
                        ENABLE_TOOL_SEARCH="false",
                    )  # fmt: skip
                    run = asyncio.create_task(_claude(agent_env, project, "Read the test site."))
                    asking = asyncio.create_task(confirm_page_presence(context))
                    await asyncio.wait({run, asking}, return_when=asyncio.FIRST_COMPLETED)
                    if run.done():
                        asking.cancel()
                        raise AssertionError((script.failures, run.result()[1][-3000:]))
                    window = await asking
                    await _key_in(window, context, (cdp, authenticator), uses=2)
                    await press(window, "#tap")
                    answer = await answer_permission_dialog(x_display, True, when_done(run), 120)
                    assert answer.clicks, f"Chrome's permission dialog never showed: {answer}"
                    hands.clicks += 2  # Tap (the key touched), Chrome's Allow
                    hands.steps.append("approve the first site")
                    status, shown = await run
                    assert_script_ran(script, shown)
                    assert status == 0, shown[-3000:]
            finally:
                await context.close()
    finally:
        if setup.proc.poll() is None:
            setup.proc.kill()
            setup.proc.wait()

    print(
        f"person-steps {len(hands.steps)} ({', '.join(hands.steps)}); prompts answered "
        f"{hands.prompts}; characters typed {hands.typed}; clicks {hands.clicks}"
    )
    assert len(hands.steps) == len(steps) <= 5, hands.steps
    assert hands.prompts == 2, hands.prompts
