"""The README's first steps, from a fresh HOME as written (the README's install path must work
exactly as written).

The commands are read from README.md itself — the "On a fresh machine" block's demo line, and the
code spans of "Use it with your own Chrome" (its step 1's ``export`` line and the "By hand
instead" reference) — never copied into this test, so the test fails when the README drifts from
what the program does. Each runs through a shell from the repository root, exactly as written,
in a HOME and XDG directories of its own, with ``tabwarden`` *not* on the PATH until step 1's own
``export`` line puts it there; ``tabwarden pair`` and ``pair-client`` run on a pty that is their
controlling terminal, where the person types the phrase they ask for. The demo runs in a real
Chromium (that test is marked ``browser``).

The five guided steps themselves (pipx from a built wheel, ``tabwarden setup --client claude``,
the extension loaded in Chromium, the options page's enrolment, the first site approved, a first
agent call) are followed word for word in tests/browser/test_readme_five_steps.py."""

from __future__ import annotations

import fcntl
import json
import os
import re
import shlex
import subprocess
import termios
from pathlib import Path

import pytest

from tabwarden.cli import ceremony
from tabwarden.manifests import EXTENSION_ID
from tests.pty_cli import PROMPT, Pty

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text("utf-8")
#: Claude Code as scripts/setup installs it for the suite (tests/agent/package.json).
CLAUDE_BIN = REPO / "tests" / "agent" / "node_modules" / ".bin"
FRESH_MACHINE = "On a fresh machine (Debian/Ubuntu, Python ≥ 3.10)"
SETUP_S = 600.0  # scripts/setup on a busy 2-core machine: a hang guard, not a goal
CODE_RE = re.compile(r"\b(\d{4}-\d{4})\b")


def _section(title: str) -> str:
    found = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## )", README, re.M | re.S)
    assert found, f"README.md has no section {title!r}"
    return found.group(1)


def _spans(text: str) -> list[str]:
    return re.findall(r"`([^`\n]+)`", text)


def _steps() -> dict[int, str]:
    """The numbered steps of "Use it with your own Chrome", by number (continuation lines
    joined)."""
    body = _section("Use it with your own Chrome").split("\nBy hand instead", 1)[0]
    parts = re.split(r"^(\d+)\. ", body, flags=re.M)
    return {
        int(n): " ".join(text.split()) for n, text in zip(parts[1::2], parts[2::2], strict=True)
    }


def _one(spans: list[str], prefix: str) -> str:
    found = [s for s in spans if s.startswith(prefix)]
    assert found, f"the README's step names no `{prefix}…` command: {spans}"
    return found[0]


class _Person:
    """A person's shell session: a fresh HOME, the PATH without tabwarden, and every line
    typed so far that changes the shell (the ``export``) kept for the next commands."""

    def __init__(self, root: Path) -> None:
        home = root / "home"
        home.mkdir()
        env = {k: v for k, v in os.environ.items() if not k.startswith(("TABWARDEN_", "XDG_"))}
        for var in ("DBUS_SESSION_BUS_ADDRESS", "PYTHON_KEYRING_BACKEND", "VIRTUAL_ENV"):
            env.pop(var, None)
        venv_bin = str(REPO / ".venv" / "bin")
        env["PATH"] = os.pathsep.join(
            p for p in env.get("PATH", "").split(os.pathsep) if p and Path(p) != Path(venv_bin)
        )
        runtime = root / "run"
        runtime.mkdir(mode=0o700)
        # A runtime dir of its own: the person's machine has $XDG_RUNTIME_DIR; this one must not
        # share /tmp/tabwarden-<uid> with other tests.
        env.update(HOME=str(home), XDG_RUNTIME_DIR=str(runtime))
        self.env = env
        self.home = home
        self.prelude: list[str] = []

    def script(self, line: str) -> str:
        return "; ".join([*self.prelude, line])

    def run(self, line: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        return subprocess.run(  # noqa: S603 (a shell running the README's own line)
            ["/bin/sh", "-c", self.script(line)],
            cwd=REPO,
            env=self.env,
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=timeout,
        )

    def at_terminal(self, line: str) -> Pty:
        """``line`` in a new session on a pty that is its controlling terminal."""
        master, slave = os.openpty()

        def controlling_terminal() -> None:
            fcntl.ioctl(0, termios.TIOCSCTTY, 0)

        proc = subprocess.Popen(  # noqa: S603 (a shell running the README's own line)
            ["/bin/sh", "-c", self.script(line)],
            cwd=REPO,
            env=self.env,
            stdin=slave,
            stdout=slave,
            stderr=slave,
            start_new_session=True,
            preexec_fn=controlling_terminal,  # noqa: PLW1509 (single-threaded here)
        )
        os.close(slave)
        return Pty(proc, master)


def _fresh_machine_lines() -> list[str]:
    block = re.search(r"```sh\n(.*?)```", _section(FRESH_MACHINE), re.S)
    assert block, f"README.md's {FRESH_MACHINE!r} has no sh block"
    return [line for line in block.group(1).splitlines() if line.strip()]


def test_the_fresh_machine_block_names_programs_setup_makes() -> None:
    """Every command of the block is a program this checkout has (the test-suite line is what
    CI runs: .ci/run)."""
    commands = [
        cmd.strip()
        for line in _fresh_machine_lines()
        for cmd in line.split("#", 1)[0].split("&&")
        if cmd.strip()
    ]
    assert "scripts/setup" in commands
    for command in commands:
        program = REPO / shlex.split(command)[0]
        assert program.is_file() and os.access(program, os.X_OK), command


@pytest.mark.browser
def test_the_fresh_machine_line_sets_up_and_runs_the_demo(tmp_path: Path) -> None:
    """The README's first command, as written, from a fresh HOME: setup, then the demo drives a
    throwaway Chromium through every hop and says so; it leaves no tabwarden state behind."""
    person = _Person(tmp_path)
    [line] = [line for line in _fresh_machine_lines() if "tabwarden demo" in line]
    done = person.run(line, timeout=SETUP_S)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "setup: ready" in done.stdout, done.stdout[-3000:]
    assert "ok  the agent opened and read the local page" in done.stdout, done.stdout[-3000:]
    left = [p for p in person.home.rglob("*") if "tabwarden" in p.name]
    assert left == [], left  # the demo's trust record and profile were throwaway


def _by_hand() -> list[str]:
    """The code spans of the section's "By hand instead" paragraph."""
    body = _section("Use it with your own Chrome")
    return _spans(body.split("By hand instead", 1)[1].split("\n\n", 1)[0])


def test_the_by_hand_reference_works_as_written_from_a_fresh_home(tmp_path: Path) -> None:
    """The reference below the five steps (the guided path, ``tabwarden setup``, is followed
    word for word in tests/browser/test_readme_five_steps.py): install, pair at a terminal, the
    Claude Code line, ``pair-client --program claude`` pinning it before it ever ran, status;
    then removing power. ``tabwarden`` comes from step 1's ``export PATH`` line (this checkout's
    .venv, which scripts/setup made)."""
    person = _Person(tmp_path)
    steps = _steps()
    assert sorted(steps) == list(range(1, len(steps) + 1)) and len(steps) <= 5, steps
    check = "command -v tabwarden"
    assert person.run(check).returncode != 0, "tabwarden was on the PATH before step 1"
    person.prelude.append(_one(_spans(steps[1]), "export PATH="))
    found = person.run(check)
    assert found.returncode == 0 and found.stdout.strip() == str(REPO / ".venv/bin/tabwarden")
    spans = _by_hand()

    # install writes the host manifest, pinned to the ID step 3 states.
    done = person.run(_one(spans, "tabwarden install"))
    assert done.returncode == 0, done.stderr
    [stated_id] = re.findall(r"ID `([a-p]{32})`", steps[3])
    assert stated_id == EXTENSION_ID
    manifests = list((person.home / ".config").rglob("NativeMessagingHosts/*.json"))
    assert len(manifests) == 1, manifests
    manifest = json.loads(manifests[0].read_text())
    assert manifest["allowed_origins"] == [f"chrome-extension://{stated_id}/"]

    # pair at a terminal; this machine has no keyring: the flag step 2 names.
    pair = f"{_one(spans, 'tabwarden pair')} {_one(_spans(steps[2]), '--file-store')}"
    child = person.at_terminal(pair)
    child.expect(PROMPT)
    child.send(ceremony.phrase_for("pair") + "\n")
    status, output = child.finish()
    assert status == 0, output
    assert CODE_RE.search(output.split(b"one-time pairing code", 1)[1].decode()), output
    reference = _section("Use it with your own Chrome").split("By hand instead", 1)[1]
    assert "10 minutes" in reference and b"10 min" in output, output

    # Claude Code, on the person's PATH, takes the README's line; pair-client pins it unrun.
    claude = _one(spans, "claude mcp add")
    assert (CLAUDE_BIN / "claude").is_file(), "Claude Code is missing: run scripts/setup"
    person.env["PATH"] = f"{CLAUDE_BIN}{os.pathsep}{person.env['PATH']}"
    added = person.run(claude)
    assert added.returncode == 0, added.stdout + added.stderr
    config = json.loads((person.home / ".claude.json").read_text())
    servers = [p.get("mcpServers", {}) for p in config.get("projects", {}).values()]
    servers.append(config.get("mcpServers", {}))
    assert {"type": "stdio", "command": found.stdout.strip(), "args": ["mcp"], "env": {}} in [
        s.get("tabwarden") for s in servers
    ], config
    child = person.at_terminal(_one(spans, "tabwarden pair-client --program"))
    child.expect(PROMPT)
    child.send(ceremony.phrase_for("pair-client") + "\n")
    status, output = child.finish()
    assert status == 0, output
    assert b"paired client 'claude': " in output and b"claude-code" in output, output
    state = person.run(_one(spans, "tabwarden status"))
    assert state.returncode == 0, state.stderr
    assert "chrome: installed" in state.stdout, state.stdout
    assert "claude-code" in state.stdout or "claude.exe" in state.stdout, state.stdout

    # Removing power is free; audit shows it; uninstall removes exactly what install wrote.
    after = _section("Use it with your own Chrome").split("Removing power is always free", 1)[1]
    spans = _spans(after)
    assert person.run(_one(spans, "tabwarden kill")).returncode == 0
    audit = person.run(_one(spans, "tabwarden audit"))
    assert audit.returncode == 0 and "kill" in audit.stdout, audit.stdout
    written = {p for p in (person.home / ".config").rglob("*") if "NativeMessagingHosts" in str(p)}
    assert written
    removed = person.run(_one(spans, "tabwarden uninstall"))
    assert removed.returncode == 0, removed.stderr
    assert not any(p.is_file() for p in written)


def test_a_rerun_of_setup_leaves_the_installed_package_alone() -> None:
    """``scripts/setup`` run again on a machine it set up (as the README's fresh-machine line is,
    here and in any person's second try) reinstalls nothing: a reinstall removes the package for
    a moment, and a ``tabwarden`` starting then (an agent's server, Chrome's host) finds no module.
    The editable install's files stay as they were, and setup says so."""
    where = "import site; print(site.getsitepackages()[0])"
    site = Path(
        subprocess.run(
            [str(REPO / ".venv/bin/python"), "-I", "-c", where],
            capture_output=True, text=True, check=True,
        ).stdout.strip()
    )  # fmt: skip
    installed = sorted(site.glob("__editable__*tabwarden*")) + sorted(site.glob("tabwarden-*"))
    assert installed, "tabwarden is not installed editable in .venv: run scripts/setup"
    before = {p: p.stat().st_mtime_ns for p in installed}
    done = subprocess.run(
        ["bash", str(REPO / "scripts" / "setup")], cwd=REPO, capture_output=True, text=True,
        timeout=SETUP_S,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "is installed already" in done.stdout, done.stdout
    assert "installing tabwarden" not in done.stdout, done.stdout
    assert {p: p.stat().st_mtime_ns for p in installed} == before


def test_setup_runs_npms_installs_side_by_side_and_fails_showing_the_one_that_failed(
    tmp_path: Path,
) -> None:
    """``scripts/setup --dev`` runs npm's three installs at once, beside pip: each one's output is
    kept and shown only if it fails, and setup then fails naming it, after the others ended. Run
    on a copy of the script, with the editable install already stamped (so pip has nothing to
    do) and an ``npm`` of our own first on the PATH: each call says it started, the Inspector's
    waits until TypeScript's has started too (one after the other, it would wait out its
    deadline), and the agents' fails."""
    assert Path("/usr/share/doc/python3.11/html/index.html").is_file(), "run scripts/setup --dev"
    tree, bin_dir, temp = tmp_path / "repo", tmp_path / "bin", tmp_path / "tmp"
    for d in (tree / "scripts", tree / ".venv" / "bin", bin_dir, temp):
        d.mkdir(parents=True)
    (tree / "scripts" / "setup").write_bytes((REPO / "scripts" / "setup").read_bytes())
    (tree / "pyproject.toml").write_bytes((REPO / "pyproject.toml").read_bytes())
    digest = subprocess.run(
        ["sha256sum", "pyproject.toml"], cwd=tree, capture_output=True, text=True, check=True
    ).stdout.split()[0]
    (tree / ".venv" / ".tabwarden-install").write_text(f"{digest} dev\n")
    fakes = {
        # .venv's python, asked only whether tabwarden imports from this checkout: it does.
        tree / ".venv" / "bin" / "python": "exit 0",
        bin_dir / "npm": f"""
prefix=; while [ $# -gt 0 ]; do [ "$1" = --prefix ] && prefix=$2; shift; done
name=$(basename "$prefix"); : > "{tmp_path}/started-$name"
echo "npm says: working in $name"
if [ "$name" = inspector ]; then
  for _ in $(seq 300); do [ -e "{tmp_path}/started-typecheck" ] && break; sleep 0.1; done
  [ -e "{tmp_path}/started-typecheck" ] || {{ echo "npm says: typecheck never started"; exit 3; }}
fi
[ "$name" = agent ] && {{ echo "npm says: agent broke"; exit 1; }}
: > "{tmp_path}/ended-$name"
""",
        **{bin_dir / tool: "exit 0" for tool in ("node", "Xvfb", "xdotool", "import", "openbox")},
    }
    for path, body in fakes.items():
        path.write_text(f"#!/bin/bash\n{body}\n")
        path.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "TMPDIR": str(temp),
           "CHROME_BIN": "/bin/true"}  # fmt: skip
    done = subprocess.run(
        ["bash", "scripts/setup", "--dev"], cwd=tree, env=env, capture_output=True, text=True,
        timeout=SETUP_S,
    )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    assert "setup: failed: installing Claude Code and Codex" in done.stderr, done.stderr
    assert "npm says: agent broke" in done.stderr, done.stderr
    # The others' output is not shown: they did not fail (the Inspector's found TypeScript's).
    assert "working in inspector" not in done.stderr, done.stderr
    assert "never started" not in done.stderr + done.stdout
    assert "ready:" not in done.stdout, done.stdout
    assert {p.name for p in tmp_path.glob("ended-*")} == {"ended-inspector", "ended-typecheck"}
    assert list(temp.iterdir()) == []  # every kept output removed
