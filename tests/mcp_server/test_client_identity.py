"""The one client measurement (``tabwarden.bridge.client_identity``): argv parsers, wrappers,
interpreters, broad identities — pure cases first, then the parsers checked against the real
interpreters, then real processes measured through real wrappers."""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tabwarden.bridge.client_identity import (
    DOMAIN,
    ArgvNotUnderstood,
    Entry,
    SpawnerUnmeasurable,
    interpreter_family,
    measure_client_of,
    measure_process,
    parse_node,
    parse_python,
    parse_shell,
    wrapper_kind,
)

NODE = shutil.which("node")
needs_node = pytest.mark.skipif(NODE is None, reason="needs node")

# ------------------------------------------------------------------------------ node's argv


@pytest.mark.parametrize(
    ("argv", "target"),
    [
        (["node", "cli.js"], "cli.js"),
        (["node", "cli.js", "--require", "x"], "cli.js"),  # after the script: its own args
        (["node", "--require", "./hook.js", "cli.js"], "cli.js"),
        (["node", "-r", "./hook.js", "cli.js"], "cli.js"),
        (["node", "--import=./hook.mjs", "cli.js"], "cli.js"),
        (["node", "--title", "x", "cli.js"], "cli.js"),
        (["node", "--max-old-space-size=4096", "--no-warnings", "cli.js"], "cli.js"),
        (["node", "--enable-source-maps", "--", "--like-an-option.js"], "--like-an-option.js"),
        (["node", "--inspect=9229", "--title", "x", "cli.js", "a"], "cli.js"),
    ],
)  # fmt: skip
def test_node_finds_the_script_past_its_options(argv: list[str], target: str) -> None:
    entry = parse_node(argv)
    assert (entry.kind, entry.target) == ("script", target)


def test_node_preloads_are_part_of_the_entry_and_a_bare_one_is_broad() -> None:
    by_path = parse_node(["node", "-r", "./hook.js", "cli.js"])
    assert by_path.preloads == ("./hook.js",) and by_path.broad is None
    bare = parse_node(["node", "--require", "ts-node/register", "cli.js"])
    assert bare.preloads == ("ts-node/register",)
    assert bare.broad and "'ts-node/register'" in bare.broad and "not hashed" in bare.broad
    from_env = parse_node(["node", "cli.js"], ["--require=/tmp/evil.js", "--no-warnings"])
    assert from_env.preloads == ("/tmp/evil.js",)


@pytest.mark.parametrize(
    ("argv", "kind", "target"),
    [
        (["node", "-e", "console.log(1)", "x.js"], "eval", "console.log(1)"),
        (["node", "--eval=1+1"], "eval", "1+1"),
        (["node", "-p", "2"], "eval", "2"),
        (["node", "-pe", "2"], "eval", "2"),
    ],
)
def test_node_eval_code_is_the_entry(argv: list[str], kind: str, target: str) -> None:
    entry = parse_node(argv)
    assert (entry.kind, entry.target, entry.broad) == (kind, target, None)


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["node"], "REPL"),
        (["node", "--no-warnings"], "REPL"),
        (["node", "-", "a"], "stdin"),
        (["node", "-i", "cli.js"], "interactive"),
        (["node", "--test"], "test file"),
        (["node", "--run", "start"], "package.json"),
    ],
)
def test_node_identities_that_admit_more_than_one_program_are_broad(
    argv: list[str], words: str
) -> None:
    broad = parse_node(argv).broad
    assert broad is not None and words in broad


@pytest.mark.parametrize(
    "argv",
    [
        ["node", "--some-future-option", "/paired/cli.js", "evil.js"],
        ["node", "--max-old-space-size", "/paired/cli.js", "evil.js"],  # V8's: needs "="
        ["node", "-x", "cli.js"],
        ["node", "--require"],
        ["node", "-e"],
    ],
)
def test_node_options_it_cannot_read_are_refused_never_guessed(argv: list[str]) -> None:
    """If an unknown option took a value, guessing would pin /paired/cli.js while node ran
    evil.js."""
    with pytest.raises(ArgvNotUnderstood):
        parse_node(argv)


# ---------------------------------------------------------------------------- python's argv


@pytest.mark.parametrize(
    ("argv", "target"),
    [
        (["python3", "server.py"], "server.py"),
        (["python3", "-I", "server.py", "-m", "x"], "server.py"),
        (["python3", "-X", "importtime", "-W", "error", "server.py"], "server.py"),
        (["python3", "-Xdev", "-Werror", "server.py"], "server.py"),
        (["python3", "-IBu", "server.py"], "server.py"),
        (["python3", "-bW", "error", "server.py"], "server.py"),
        (["python3", "--check-hash-based-pycs", "always", "server.py"], "server.py"),
        (["python3", "--", "-weird.py"], "-weird.py"),
    ],
)
def test_python_finds_the_script_past_its_options(argv: list[str], target: str) -> None:
    entry = parse_python(argv)
    assert (entry.kind, entry.target, entry.broad) == ("script", target, None)


def test_python_code_and_modules() -> None:
    assert parse_python(["python3", "-Ic", "print(1)", "a"]) == Entry(
        kind="eval", target="print(1)", args=("a",)
    )
    assert parse_python(["python3", "-c", "print(1)"]).target == "print(1)"
    module = parse_python(["python3", "-m", "mcp_server_x", "--port", "1"])
    assert (module.kind, module.target) == ("module", "mcp_server_x")
    assert module.broad and "sys.path" in module.broad
    assert parse_python(["python3", "-Im", "pkg"]).target == "pkg"


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["python3"], "REPL"),
        (["python3", "-"], "stdin"),
        (["python3", "-i", "server.py"], "whatever is typed"),
    ],
)
def test_python_identities_that_admit_more_than_one_program_are_broad(
    argv: list[str], words: str
) -> None:
    broad = parse_python(argv).broad
    assert broad is not None and words in broad


@pytest.mark.parametrize(
    "argv",
    [["python3", "-Z", "x.py"], ["python3", "--new", "x.py"], ["python3", "-W"], ["python3", "-c"]],
)
def test_python_options_it_cannot_read_are_refused(argv: list[str]) -> None:
    with pytest.raises(ArgvNotUnderstood):
        parse_python(argv)


# ----------------------------------------------------------------------------- shells


@pytest.mark.parametrize(
    ("argv", "kind", "target"),
    [
        (["sh", "-c", "exec x"], "command", "exec x"),
        (["bash", "-ec", "x; y", "name"], "command", "x; y"),
        (["bash", "-o", "pipefail", "-c", "x"], "command", "x"),
        (["bash", "--norc", "-c", "x"], "command", "x"),
        (["bash", "run.sh", "a"], "script", "run.sh"),
        (["sh", "-e", "run.sh"], "script", "run.sh"),
        (["bash", "--rcfile", "rc", "run.sh"], "script", "run.sh"),
    ],
)
def test_shell_entries(argv: list[str], kind: str, target: str) -> None:
    entry = parse_shell(argv)
    assert (entry.kind, entry.target) == (kind, target)


@pytest.mark.parametrize("argv", [["bash"], ["sh", "-s", "a"], ["bash", "-i"]])
def test_a_shell_reading_commands_is_broad(argv: list[str]) -> None:
    assert parse_shell(argv).broad


# ------------------------------------------------------------------ families and wrappers


@pytest.mark.parametrize(
    ("image", "family"),
    [
        ("/usr/bin/node", "node"),
        ("/usr/bin/nodejs", "node"),
        ("/home/u/.nvm/versions/node/v20.1.0/bin/node", "node"),
        ("/usr/bin/node (deleted)", "node"),  # updated under a running client
        ("/usr/bin/python3.11", "python"),
        ("/usr/bin/pypy3", "python"),
        ("/usr/bin/python3.13t", "python"),  # free-threaded
        ("/usr/bin/bash", "shell"),
        ("/usr/bin/ruby3.1", "ruby"),
        ("/usr/bin/deno", "deno"),
        ("/usr/bin/nodemon", None),
        ("/usr/bin/python3-config", None),
        ("/opt/claude/claude", None),
    ],
)
def test_interpreters_are_recognised_by_image_name(image: str, family: str | None) -> None:
    assert interpreter_family(image) == family


def _script(target: str, *args: str) -> Entry:
    return Entry(kind="script", target=target, args=args)


@pytest.mark.parametrize(
    ("image", "argv", "entry", "wrapper"),
    [
        ("/usr/bin/timeout", ["timeout", "60", "x"], None, "timeout"),
        ("/usr/bin/env", ["env", "A=1", "x"], None, "env"),
        ("/usr/bin/xargs", ["xargs", "x"], None, "xargs"),
        ("/usr/bin/dash", ["sh", "-c", "x; y"], Entry(kind="command", target="x; y"), "dash -c"),
        ("/usr/bin/dash", ["sh", "run.sh"], _script("run.sh"), None),
        ("/usr/bin/node", ["node", "/usr/bin/npx", "-y", "pkg"],
         _script("/usr/lib/node_modules/npm/bin/npx-cli.js", "-y", "pkg"), "node npx-cli.js"),
        ("/usr/bin/node", ["node", "/usr/bin/npm", "exec", "pkg"],
         _script("/usr/lib/node_modules/npm/bin/npm-cli.js", "exec", "pkg"),
         "node npm-cli.js exec"),
        ("/usr/bin/node", ["node", "/usr/bin/npm", "install"],
         _script("/usr/lib/node_modules/npm/bin/npm-cli.js", "install"), None),
        ("/usr/bin/node", ["node", "/x/pnpm.cjs", "dlx", "pkg"],
         _script("/x/pnpm.cjs", "dlx", "pkg"), "node pnpm.cjs dlx"),
        ("/usr/bin/node", ["node", "cli.js"], _script("/srv/cli.js"), None),
        ("/home/u/.local/bin/uv", ["uv", "run", "server.py"], None, "uv run"),
        ("/home/u/.local/bin/uv", ["uv", "--quiet", "tool", "run", "x"], None, "uv tool run"),
        ("/home/u/.local/bin/uv", ["uv", "pip", "install"], None, None),
        ("/home/u/.local/bin/uvx", ["uvx", "pkg"], None, "uvx"),
        ("/home/u/.bun/bin/bun", ["bunx", "pkg"], None, "bunx"),
        ("/home/u/.bun/bin/bun", ["bun", "x", "pkg"], None, "bunx"),
        ("/home/u/.bun/bin/bun", ["bun", "server.ts"], None, None),
        ("/usr/bin/python3.11", ["python3", "x.py"], _script("x.py"), None),
        ("/opt/claude/claude", ["claude"], None, None),
    ],
)  # fmt: skip
def test_wrappers_by_name_and_argv_shape(
    image: str, argv: list[str], entry: Entry | None, wrapper: str | None
) -> None:
    assert wrapper_kind(image, argv, entry) == wrapper


# ------------------------------------------------------------------ properties (hypothesis)

_PY_FLAG = st.sampled_from(["-I", "-B", "-u", "-E", "-s", "-S", "-O", "-q", "-IB", "-bb"])
_PY_VALUED = st.tuples(st.sampled_from(["-X", "-W"]), st.text(min_size=1, max_size=8)).map(list)
_NODE_FLAG = st.sampled_from(["--no-warnings", "--enable-source-maps", "--trace-warnings", "-c"])
_NODE_VALUED = st.tuples(
    st.sampled_from(["-r", "--require", "--import", "--title", "--env-file", "-C"]),
    st.text(min_size=1, max_size=8),
).map(list)
_SCRIPT = st.from_regex(r"\A[a-z/._]{1,12}\.(js|py)\Z")
_ARGS = st.lists(st.text(max_size=8), max_size=4)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(_PY_FLAG.map(lambda f: [f]), _PY_VALUED), max_size=5), _SCRIPT, _ARGS)
def test_python_options_never_change_which_script_runs(
    options: list[list[str]], script: str, args: list[str]
) -> None:
    argv = ["python3", *[w for option in options for w in option], script, *args]
    entry = parse_python(argv)
    assert (entry.kind, entry.target, entry.args) == ("script", script, tuple(args))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(_NODE_FLAG.map(lambda f: [f]), _NODE_VALUED), max_size=5), _SCRIPT, _ARGS)
def test_node_options_never_change_which_script_runs(
    options: list[list[str]], script: str, args: list[str]
) -> None:
    argv = ["node", *[w for option in options for w in option], script, *args]
    entry = parse_node(argv)
    assert (entry.kind, entry.target, entry.args) == ("script", script, tuple(args))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(max_size=12), min_size=1, max_size=8))
def test_the_parsers_either_read_an_argv_or_say_they_cannot(argv: list[str]) -> None:
    """Invariant: an Entry or ArgvNotUnderstood, never any other error; a script target is
    always one of the words of the argv."""
    for parse in (parse_python, parse_node, parse_shell):
        try:
            entry = parse(argv)
        except ArgvNotUnderstood:
            continue
        if entry.kind == "script":
            assert entry.target in argv[1:]


# ------------------------------------------------------------- the parsers vs the real thing


def _which_script_runs(argv_before: list[str], tmp_path: Path, interpreter: str) -> str:
    """Run the real interpreter with these options in front of a script that names itself."""
    names = {"node": "console.log(require('path').basename(__filename))", "python": ""}
    for name in ("real.js", "decoy.js"):
        (tmp_path / name).write_text(names["node"] + "\n")
    for name in ("real.py", "decoy.py"):
        (tmp_path / name).write_text("import os, sys; print(os.path.basename(__file__))\n")
    done = subprocess.run(  # noqa: S603
        [interpreter, *argv_before],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "NODE_OPTIONS": ""},
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


@needs_node
@pytest.mark.parametrize(
    "options",
    [
        [],
        ["--max-old-space-size=64"],
        ["--title", "decoy.js"],
        ["-r", "./decoy.js"],
        ["--no-warnings", "--enable-source-maps", "--"],
        ["--stack-size=900", "--conditions", "decoy.js", "--input-type", "commonjs"],
    ],
)
def test_node_parser_agrees_with_node(options: list[str], tmp_path: Path) -> None:
    assert NODE is not None
    ran = _which_script_runs([*options, "real.js", "decoy.js"], tmp_path, NODE)
    assert ran == "real.js"
    assert parse_node(["node", *options, "real.js", "decoy.js"]).target == "real.js"


@pytest.mark.parametrize(
    "options",
    [[], ["-X", "utf8"], ["-W", "ignore"], ["-Wignore", "-IB"], ["-X", "decoy.py", "-u"], ["--"]],
)
def test_python_parser_agrees_with_python(options: list[str], tmp_path: Path) -> None:
    ran = _which_script_runs([*options, "real.py", "decoy.py"], tmp_path, sys.executable)
    assert ran == "real.py"
    assert parse_python(["python3", *options, "real.py", "decoy.py"]).target == "real.py"


# -------------------------------------------------------------------------- real processes


def _started(argv: list[str], cwd: Path) -> subprocess.Popen[bytes]:
    """``argv`` running (exec'd: its command line is ``argv``), stdin a pipe we hold."""
    proc = subprocess.Popen(argv, cwd=cwd, stdin=subprocess.PIPE)  # noqa: S603
    deadline = time.monotonic() + 30
    while True:
        try:
            if psutil.Process(proc.pid).cmdline() == argv:
                return proc
        except psutil.Error:
            pass
        assert time.monotonic() < deadline, "never started"
        time.sleep(0.01)


@pytest.fixture
def processes() -> Iterator[list[subprocess.Popen[bytes]]]:
    started: list[subprocess.Popen[bytes]] = []
    try:
        yield started
    finally:
        for proc in started:
            proc.kill()
            proc.wait(timeout=30)


def _lp(*parts: str) -> bytes:
    out = b""
    for part in parts:
        data = part.encode()
        out += len(data).to_bytes(8, "big") + data
    return out


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_a_python_script_is_pinned_with_the_interpreter_by_the_documented_digest(
    tmp_path: Path, processes: list[subprocess.Popen[bytes]]
) -> None:
    script = tmp_path / "server.py"
    script.write_text("import sys; sys.stdin.read()\n")
    processes.append(_started([sys.executable, "-I", "server.py"], tmp_path))
    found = measure_process(processes[0].pid)
    image = os.path.realpath(f"/proc/{processes[0].pid}/exe")
    image_sha = _sha(Path(image).read_bytes())
    # An independent oracle: ADR 0001's formula, written out.
    expected = _sha(
        DOMAIN + _lp(image_sha, "python", "script", str(script), _sha(script.read_bytes()))
    )
    assert (found.sha256, found.exe, found.kind, found.broad) == (
        expected,
        f"{image} {script}",
        "script",
        None,
    )
    assert found.sha256 != image_sha


@needs_node
def test_a_script_in_a_node_package_pins_its_package_json(
    tmp_path: Path, processes: list[subprocess.Popen[bytes]]
) -> None:
    package = tmp_path / "lib" / "node_modules" / "@acme" / "agent"
    package.mkdir(parents=True)
    (package / "package.json").write_text('{"name": "@acme/agent", "version": "1.2.3"}\n')
    (package / "cli.js").write_text("setInterval(() => {}, 1000);\n")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "agent").symlink_to(package / "cli.js")  # how npm installs a bin
    assert NODE is not None
    processes.append(_started([NODE, str(bin_dir / "agent")], tmp_path))
    found = measure_process(processes[0].pid)
    assert found.exe == f"{os.path.realpath(NODE)} {package / 'cli.js'}"
    assert any("@acme/agent 1.2.3" in line for line in found.pins)
    before = found.sha256
    (package / "package.json").write_text('{"name": "@acme/agent", "version": "1.2.4"}\n')
    assert measure_process(processes[0].pid).sha256 != before  # an update changes the identity


@needs_node
def test_two_scripts_of_one_interpreter_are_two_identities(
    tmp_path: Path, processes: list[subprocess.Popen[bytes]]
) -> None:
    assert NODE is not None
    for name in ("a.js", "b.js"):
        (tmp_path / name).write_text("setInterval(() => {}, 1000);\n")  # the same content
        processes.append(_started([NODE, name], tmp_path))
    a, b = (measure_process(p.pid) for p in processes)
    assert a.image_sha256 == b.image_sha256 and a.sha256 != b.sha256


def test_the_walk_goes_through_wrappers_to_the_client(
    tmp_path: Path, processes: list[subprocess.Popen[bytes]]
) -> None:
    """client.py → timeout → sh -c (not exec'd: a command follows) → sleep: the client is
    client.py, and a plain sleep under it is measured as the wrapper chain's MCP server."""
    client = tmp_path / "client.py"
    client.write_text(
        "import subprocess, sys\nsubprocess.run(['timeout', '60', 'sh', '-c', 'sleep 60; true'])\n"
    )
    processes.append(_started([sys.executable, "client.py"], tmp_path))
    deadline = time.monotonic() + 30
    while not (sleeps := [c for c in psutil.Process(processes[0].pid).children(True)
                          if c.name() == "sleep"]):  # fmt: skip
        assert time.monotonic() < deadline, "the chain never started"
        time.sleep(0.01)
    found = measure_client_of(sleeps[0].pid)
    assert found.pid == processes[0].pid
    assert found.exe.endswith(f" {client}")
    walked = [w.split(" (pid")[0] for w in found.wrappers]
    assert len(walked) == 2 and walked[0].endswith(" -c") and walked[1] == "timeout", walked


def test_an_orphaned_wrapper_has_no_client(tmp_path: Path) -> None:
    """The wrapper's client exited: it is re-parented to PID 1, and the walk stops there."""
    marker = f"orphan-{os.getpid()}-{time.monotonic_ns()}"
    subprocess.run(  # noqa: S603
        ["sh", "-c", f"timeout 60 sh -c 'sleep 60; : {marker}' >/dev/null 2>&1 &"],  # noqa: S607
        check=True,
        timeout=60,
    )
    deadline = time.monotonic() + 30
    while not (found := [p for p in psutil.process_iter(["cmdline"])
                         if (p.info["cmdline"] or ["", ""])[0] == "sh"
                         and p.info["cmdline"][-1].endswith(marker)]):  # fmt: skip
        assert time.monotonic() < deadline, "the orphan never started"
        time.sleep(0.01)
    inner = found[0]
    chain = [inner, *([parent] if (parent := inner.parent()) is not None else [])]
    try:
        deadline = time.monotonic() + 30
        while not (sleeps := [c for c in inner.children() if c.name() == "sleep"]):
            assert time.monotonic() < deadline, "the orphan's sleep never started"
            time.sleep(0.01)
        timeout_proc = inner.parent()
        assert timeout_proc is not None
        if timeout_proc.ppid() != 1:
            pytest.skip(f"orphans are re-parented to a subreaper here (pid {timeout_proc.ppid()})")
        with pytest.raises(SpawnerUnmeasurable, match="PID 1"):
            measure_client_of(sleeps[0].pid)
    finally:
        with contextlib.suppress(psutil.Error):
            chain = [*inner.children(), *chain]
        for proc in chain:
            with contextlib.suppress(psutil.Error):
                proc.kill()


def test_a_script_that_cannot_be_found_is_unmeasurable(
    tmp_path: Path, processes: list[subprocess.Popen[bytes]]
) -> None:
    script = tmp_path / "gone.py"
    script.write_text("import sys; sys.stdin.read()\n")
    processes.append(_started([sys.executable, "gone.py"], tmp_path))
    script.unlink()
    with pytest.raises(SpawnerUnmeasurable, match="cannot find the script"):
        measure_process(processes[0].pid)


@needs_node
def test_a_node_preload_is_hashed_and_changing_it_changes_the_identity(
    tmp_path: Path, processes: list[subprocess.Popen[bytes]]
) -> None:
    """`node -r ./hook` runs hook.js before the script: it is part of what the client runs."""
    assert NODE is not None
    (tmp_path / "hook.js").write_text("// hook\n")
    (tmp_path / "cli.js").write_text("setInterval(() => {}, 1000);\n")
    processes.append(_started([NODE, "-r", "./hook", "cli.js"], tmp_path))
    first = measure_process(processes[0].pid)
    assert any(f"preloading {tmp_path / 'hook.js'} (sha256" in line for line in first.pins)
    (tmp_path / "hook.js").write_text("// hook, changed\n")
    assert measure_process(processes[0].pid).sha256 != first.sha256
