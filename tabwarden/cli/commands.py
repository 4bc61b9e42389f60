"""The trust commands: the terminal ceremonies around the trust operations, and their output.

Granting (``pair``, ``pair-client``, ``unkill``, ``policy set``, a widening ``policy rollback``)
needs a person at a real terminal typing a phrase — checked *before* any prompt, so a pipe, a
redirect or a detached process is refused having printed nothing and changed nothing — and, once
an authenticator is enrolled, a tap on it in the extension's window
(``tabwarden.cli.terminal_tap``).
Removing power (``kill``, ``revoke``, ``policy restrict``, a narrowing rollback) needs no proof
and no key. What each change does — refusal checks, validation, the write and its audit entry —
is the trust operation's (``tabwarden.trust.operations``); this module only asks, proves and
prints. No secret is ever printed except the one-time pairing code, which is shown once and
stored only as its SHA-256.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import os
import sys
import textwrap
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tabwarden.cli import terminal_tap
from tabwarden.cli.terminal_tap import TapRequest
from tabwarden.errors import UsageError
from tabwarden.paths import config_dir
from tabwarden.trust import operations
from tabwarden.trust.operations import NotPaired, TerminalPhrase, TrustContext

if TYPE_CHECKING:
    from tabwarden.trust.keystore import KeyStore
    from tabwarden.trust.verify import Effective


def _now() -> int:
    return int(time.time())


def _ctx(key_store: KeyStore | None = None) -> TrustContext:
    from tabwarden.trust.gate import TrustGate

    return TrustContext.for_gate(TrustGate(), key_store)


def _key_store(kind: str | None = None) -> KeyStore:
    from tabwarden.trust.gate import host_key_store

    return host_key_store(config_dir(), kind)


def _ceremony(action: str, explanation: list[str]) -> TerminalPhrase:
    from tabwarden.cli.ceremony import confirm_phrase, require_real_terminal

    require_real_terminal()
    return confirm_phrase(action, explanation)


def _effective() -> Effective:
    from tabwarden.trust.gate import TrustGate

    return TrustGate().current()


def _require_paired(*, latch_counts: bool = False) -> None:
    """``NotPaired`` ("run `tabwarden pair` first") when nothing was ever paired here: no trust
    record and no host key (with ``latch_counts``, no kill latch either). Checked before any
    ceremony or write, so on a machine without a usable keyring that never paired the answer is
    "pair first", not "use --file-store": choosing the store is ``pair``'s business alone."""
    from tabwarden.trust.gate import TrustGate, load_host_public

    gate = TrustGate()
    if os.path.lexists(gate.path) or (latch_counts and os.path.lexists(gate.kill_latch)):
        return
    if load_host_public(gate.config) is None:  # an unusable keyring holds no key either
        raise NotPaired()


def _require_key() -> None:
    """``NotPaired`` before any ceremony when there is no host key to sign with."""
    _require_paired()
    if _key_store().load() is None:
        raise NotPaired()


# -- pair ------------------------------------------------------------------------------------


def cmd_pair(args: argparse.Namespace) -> int:
    from tabwarden.cli.ceremony import one_time_code, require_real_terminal

    require_real_terminal()  # before anything is read, printed or minted
    if args.browser is not None:
        return _pair_browser(args)
    kind = "file" if args.file_store else "keyring"
    key_store = _key_store(kind)
    ctx = _ctx(key_store)
    operations.require_unpaired(ctx, key_store, reset=args.reset)
    reset_note = (
        ["--reset: the old key is replaced; every paired client and browser must pair again."]
        if args.reset
        else []
    )
    proof = _ceremony(
        "pair",
        [
            "This makes this computer's tabwarden host key and the default, locked-down policy:",
            "  no site approved, page eval and upload off, password fill off.",
            f"The private key goes to {key_store.describe()}; the record to {ctx.trust_path}.",
            *reset_note,
        ],
    )
    code = one_time_code()
    key = operations.pair_host(ctx, proof, key_store, reset=args.reset, code=code, now=_now())
    minutes = operations.PAIRING_CODE_TTL // 60
    print(f"paired. host key fingerprint: {key.public.fingerprint}")
    print(
        f"one-time pairing code for the extension's options page: {code}  (valid {minutes} minutes)"
    )
    print("next:")
    print(
        f"  1. now, within {minutes} minutes: open the tabwarden extension's options page, enter "
        'the code and touch your authenticator (or tick "no authenticator");'
    )
    print("     expired? `tabwarden pair --browser LABEL` prints a new code for browser LABEL")
    print(
        "  2. pin your MCP client: `tabwarden pair-client --program claude` (or codex, or the "
        "command that starts yours), or start it once with `tabwarden mcp` configured and run "
        "`tabwarden pair-client` here"
    )
    return 0


def reenrol_phrase(label: str) -> str:
    """The phrase ``pair --browser LABEL`` asks for: it names the label (its ``-``/``_`` typed
    as spaces, since a phrase is plain lowercase words) and what it lets a browser do."""
    import re

    return "enrol a new authenticator as " + " ".join(re.split(r"[-_]+", label.strip("-_")))


def _pair_browser(args: argparse.Namespace) -> int:
    """``pair --browser LABEL``: a fresh one-time code only browser LABEL can redeem, so it can
    enrol a new authenticator — no key rotation; clients and other browsers untouched."""
    from tabwarden.cli.ceremony import confirm_phrase, one_time_code

    if args.reset or args.file_store:
        raise UsageError(
            "--browser re-enrols one browser with the existing host key; it cannot be combined "
            "with --reset or --file-store",
            hint="`tabwarden pair --browser LABEL` alone (the key store is the one in use).",
        )
    label = args.browser
    key_store = _key_store()
    ctx = _ctx(key_store)
    eff = operations.require_reissuable(ctx, label)  # before the ceremony, not after the phrase
    key = operations.require_key(ctx)
    now_state = (
        f"Browser {label!r} is paired window-only today (software confirmation)."
        if any(b.label == label and b.window_only for b in eff.browsers)
        else f"Browser {label!r} has no enrolled authenticator (revoked, or never enrolled): "
        "until it enrols one, its confirmations are software confirmation (the window)."
    )
    minutes = operations.PAIRING_CODE_TTL // 60
    proof = confirm_phrase(
        "pair --browser",
        [
            f"This lets a browser enrol a new authenticator as browser {label!r}, with a "
            "one-time code printed next.",
            now_state,
            f"The code works once, for {minutes} minutes, and only in the tabwarden options page "
            f"of the browser whose host serves {label!r}; whoever enters it there first enrols "
            "their authenticator, with no other approval.",
            f"The host key ({key_store.describe()}) is not rotated: fingerprint "
            f"{key.public.fingerprint}; paired MCP clients and other browsers stay as they are.",
        ],
        phrase=reenrol_phrase(label),
    )
    code = one_time_code()
    request = TapRequest(
        command="pair --browser",
        params={"browser": label},
        summary=f"Let browser {label!r} enrol a new authenticator with a one-time code.",
    )
    terminal_tap.grant(
        ctx, proof, request, lambda p: operations.reissue_browser_code(ctx, p, label, code, _now())
    )
    print(f"host key fingerprint (unchanged): {key.public.fingerprint}")
    print(
        f"one-time code for browser {label!r}: {code}  (valid {minutes} minutes; only that "
        "browser's options page accepts it)"
    )
    print(
        f"next: open the tabwarden options page in that browser, enter the code and touch the "
        f"new authenticator; `tabwarden status` then lists {label!r} as enrolled."
    )
    return 0


# -- clients ---------------------------------------------------------------------------------


def _sha256_file(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class _Candidate:
    """What ``pair-client`` is about to pin, wherever it came from."""

    exe: str
    sha256: str
    kind: str = "binary"
    pins: tuple[str, ...] = ()
    broad: str | None = None
    hint_only: bool = False  # from spawners.json, not measured now


def _choose_spawner() -> _Candidate:
    from tabwarden.bridge.spawner import recent_spawners

    seen = recent_spawners(config_dir())
    if not seen:
        raise UsageError(
            "no MCP client has started `tabwarden mcp` yet",
            hint="Start your MCP client with tabwarden configured once, "
            "or pass --exe PATH / --pid PID.",
        )
    print("recently seen MCP clients (the programs that started `tabwarden mcp`):")
    for number, entry in enumerate(seen, 1):
        print(
            f"  [{number}] {entry.path}  sha256 {entry.sha256[:16]}…  "
            f"first {_when(entry.first_seen)}, last {_when(entry.last_seen)}"
            + ("  (admits more than one program)" if entry.broad else "")
        )
    from tabwarden.cli.ceremony import _discard_typeahead, _read_line, _write

    # A raw fd: text-mode open("/dev/tty", "r+") needs a seekable file and fails on a terminal.
    tty = os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY | os.O_CLOEXEC)
    try:
        _discard_typeahead(tty)  # only what is typed after the question counts
        _write(tty, "pair which one? number: ")
        answer = (_read_line(tty) or "").strip()
    finally:
        os.close(tty)
    if not answer.isdigit() or not 1 <= int(answer) <= len(seen):
        raise UsageError(f"no entry {answer!r}")
    entry = seen[int(answer) - 1]
    return _Candidate(
        exe=entry.path,
        sha256=entry.sha256,
        kind=entry.kind,
        pins=entry.pins,
        broad=entry.broad,
        hint_only=True,
    )


def _by_path(path: str, expected: str | None) -> _Candidate:
    """``--exe PATH``: a plain executable, pinned by its image. An interpreter or a wrapper is
    refused: its hash alone would not say which client it is."""
    from tabwarden.bridge.client_identity import WRAPPERS, interpreter_family

    exe = os.path.realpath(path)
    family = interpreter_family(exe)
    name = Path(exe).name
    if family is not None or name in WRAPPERS or name in ("uv", "bun"):
        what = f"an interpreter ({family})" if family is not None else "a wrapper"
        raise UsageError(
            f"{exe} is {what}: tabwarden pins what it runs, never the executable alone",
            hint="Start your MCP client with tabwarden configured once and run "
            "`tabwarden pair-client` to choose it, or pass --pid PID of the running client.",
        )
    sha = expected.lower() if expected else _sha256_file(exe)
    return _Candidate(exe=exe, sha256=sha, pins=(f"the program {exe}", f"  (image sha256 {sha})"))


def _before_run(command: str) -> _Candidate:
    """``--program CMD``: the identity ``tabwarden mcp`` will measure when the client started as
    CMD spawns it, computed now (``client_identity.program_identity``); fails closed."""
    from tabwarden.bridge.client_identity import program_identity

    identity = program_identity(command)
    return _Candidate(
        exe=identity.exe,
        sha256=identity.sha256,
        kind=identity.kind,
        pins=identity.pins,
        broad=identity.broad,
    )


def _default_label(exe: str, kind: str = "binary") -> str:
    """A valid label from what the client is: a binary's name ("python3.11" -> "python3-11"),
    the package or script a node/python client runs ("claude-code", "server")."""
    import re

    name = Path(exe).name
    if kind == "script":
        script = exe.split(" ", 1)[-1]
        package = re.search(r"/node_modules/(?:@[^/]+/)?([^/]+)/", script)
        name = package.group(1) if package else Path(script).stem
    label = re.sub(r"[^a-z0-9_-]+", "-", name.lower()).strip("-_")[:32].rstrip("-_")
    return label or "client"


def _when(ts: Any) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(int(ts))) if isinstance(ts, int) else "?"


def cmd_pair_client(args: argparse.Namespace) -> int:
    from tabwarden.cli.ceremony import pair_client_explanation, require_real_terminal

    require_real_terminal()
    _require_key()
    if args.pid is not None:
        from tabwarden.bridge.client_identity import measure_process

        identity = measure_process(args.pid)
        candidate = _Candidate(
            exe=identity.exe,
            sha256=identity.sha256,
            kind=identity.kind,
            pins=identity.pins,
            broad=identity.broad,
        )
    elif args.program:
        candidate = _before_run(args.program)
    elif args.exe:
        candidate = _by_path(args.exe, args.hash)
    elif args.hash:
        raise UsageError("--hash needs --exe PATH to name the program it belongs to")
    else:
        candidate = _choose_spawner()
    label = args.label or (
        _default_label(args.program)
        if args.program
        else _default_label(candidate.exe, candidate.kind)
    )
    from tabwarden.paths import LABEL_RE, BadLabel

    if not LABEL_RE.match(label):  # before the ceremony, not after the phrase was typed
        raise BadLabel(f"invalid label {label!r}; pass --label (1-32 of a-z, 0-9, '-', '_')")
    proof = _ceremony(
        "pair-client",
        pair_client_explanation(
            label=label,
            exe=candidate.exe,
            sha256=candidate.sha256,
            kind=candidate.kind,
            pins=candidate.pins,
            broad=candidate.broad,
            hint_only=candidate.hint_only,
        ),
    )
    ctx = _ctx()
    request = TapRequest(
        command="pair-client",
        params={"label": label, "exe": candidate.exe, "sha256": candidate.sha256},
        summary=f"Pair the MCP client {label!r}: {candidate.exe} (SHA-256 {candidate.sha256}).",
    )
    terminal_tap.grant(
        ctx,
        proof,
        request,
        lambda p: operations.pair_client(
            ctx, p, label=label, exe=candidate.exe, sha256=candidate.sha256, now=_now()
        ),
    )
    print(f"paired client {label!r}: {candidate.exe}")
    if candidate.broad:
        print(f"note: this identity admits more than one program ({candidate.broad})")
    return 0


def cmd_clients(args: argparse.Namespace) -> int:
    from tabwarden.bridge.spawner import recent_spawners

    eff = _effective()
    if eff.refused:
        print(f"trust record refused: {eff.refused}", file=sys.stderr)
    if args.json:
        print(
            json.dumps(
                {
                    "paired": [
                        {
                            "label": c.label,
                            "exe": c.exe,
                            "sha256": c.sha256,
                            "pairedAt": c.paired_at,
                        }
                        for c in eff.paired_clients
                    ],
                    "recent": [entry.as_dict() for entry in recent_spawners(config_dir())],
                },
                indent=2,
            )
        )
        return 0 if not eff.refused else 3
    if not eff.paired_clients:
        print(
            "no MCP clients paired: every call is refused (client_not_paired); pin yours with "
            "`tabwarden setup --client claude` (or codex, json) or `tabwarden pair-client`"
        )
    for c in eff.paired_clients:
        print(f"{c.label}: {c.exe}  sha256 {c.sha256[:16]}…  paired {_when(c.paired_at)}")
    return 0 if not eff.refused else 3


def cmd_revoke(args: argparse.Namespace) -> int:
    _require_paired()
    operations.revoke(_ctx(), args.kind, args.label, _now())
    print(f"revoked {args.kind} {args.label!r}; its live connections are cut")
    return 0


# -- kill switch -----------------------------------------------------------------------------


def cmd_kill(args: argparse.Namespace) -> int:
    operations.kill(_ctx(), args.reason, _now())
    print(
        "kill switch engaged: every browser request is refused until a person runs "
        "`tabwarden unkill`"
    )
    return 0


def _as_it_is_now(ctx: TrustContext) -> list[str]:
    """What the record on disk grants, judged by its signatures alone (the ratchet aside): what a
    person accepts with ``unkill`` after tampering."""
    from tabwarden.trust.record_file import load
    from tabwarden.trust.verify import effective

    key = operations.require_key(ctx)
    doc = load(ctx.trust_path, expect_paired=True)
    if doc is None:
        return []
    eff = effective(doc, key.public, _now())
    clients = ", ".join(f"{c.label} ({c.exe})" for c in eff.paired_clients) or "none"
    browsers = ", ".join(b.label for b in eff.browsers) or "none"
    return [
        f"  epoch {doc.epoch}; paired clients: {clients}; paired browsers: {browsers}",
        "  policy: " + json.dumps(eff.policy.to_json(), sort_keys=True),
    ]


def cmd_unkill(args: argparse.Namespace) -> int:
    from tabwarden.cli.ceremony import require_real_terminal
    from tabwarden.trust.gate import latch_tamper_note
    from tabwarden.trust.ratchet import TrustTampered

    require_real_terminal()
    _require_paired(latch_counts=True)  # a kill before `pair` left a latch: that one unkills
    ctx = _ctx()
    tamper = operations.tampering(ctx)
    if tamper is not None and tamper.kind == "vanished":
        raise TrustTampered(tamper)  # nothing to accept: its hint is `pair --reset`
    if tamper is None and not operations.killed(ctx):
        print("the kill switch is not engaged")
        return 0
    explanation = ["This releases the kill switch: tabwarden will serve paired clients again."]
    if tamper is not None:
        explanation = [
            f"The trust record was tampered with: {tamper.reason}.",
            "Confirming accepts it exactly as it is now (only its validly signed grants count),",
            "rewrites it at a new epoch with a fresh seal, and releases the kill switch:",
            *_as_it_is_now(ctx),
            "If that is not what you expect, stop here (Ctrl-C): put the right trust.json back,",
            "or start over with `tabwarden pair --reset`.",
        ]
    else:
        noted = latch_tamper_note(ctx.kill_latch)
        if noted is not None:
            explanation.insert(
                0,
                f"The kill switch was latched when the trust record was found tampered with "
                f"({noted.reason}); the record is intact again now.",
            )
    proof = _ceremony("unkill", explanation)
    request = TapRequest(
        command="unkill",
        params={} if tamper is None else {"accept": tamper.kind},
        summary="Release the kill switch: tabwarden serves paired clients again."
        if tamper is None
        else f"Accept the trust record as it is now ({tamper.reason}) and release the kill switch.",
    )
    terminal_tap.grant(ctx, proof, request, lambda p: operations.release_kill(ctx, p, _now()))
    if tamper is not None:
        print("trust record accepted as it is now and sealed; kill switch released")
    else:
        print("kill switch released")
    return 0


# -- policy ----------------------------------------------------------------------------------


def parse_assignments(pairs: list[str]) -> dict[str, Any]:
    """KEY=VALUE with VALUE as JSON (true, 30, ["https://a.test"]) or, for list keys, a
    comma-separated list; anything else is a usage error."""
    from tabwarden.trust.policy import DEFAULT_POLICY, POLICY_KEYS

    lists = {key for key in POLICY_KEYS if isinstance(DEFAULT_POLICY[key], tuple)}
    changes: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or key not in POLICY_KEYS:
            raise UsageError(
                f"expected KEY=VALUE with KEY one of {', '.join(POLICY_KEYS)}; got {pair!r}"
            )
        try:
            value: Any = json.loads(raw)
        except ValueError:
            value = (
                [item.strip() for item in raw.split(",") if item.strip()] if key in lists else raw
            )
        if key in lists and isinstance(value, str):
            value = [value]
        changes[key] = value
    return changes


def _wildcard_words(origins: Any) -> list[str]:
    """A line per subdomain approval in plain words (``https://*.example.com`` approves
    example.com and every subdomain), so a wildcard is never signed or read as one site."""
    from tabwarden.trust.policy import describe_approval, is_wildcard

    return [
        f"    {entry}: {describe_approval(entry)}"
        for entry in (origins if isinstance(origins, (list, tuple)) else ())
        if isinstance(entry, str) and is_wildcard(entry)
    ]


def cmd_policy_show(args: argparse.Namespace) -> int:
    from tabwarden.trust.policy import POLICY_KEYS, key_spec

    eff = _effective()
    specs = [key_spec(key) for key in POLICY_KEYS]
    data: dict[str, Any] = {
        "policy": eff.policy.to_json(),
        "killed": eff.killed,
        "epoch": eff.epoch,
        "ignored": list(eff.ignored),
        "keys": [
            {
                "key": spec.key,
                "type": spec.type,
                "default": spec.default,
                "narrower": spec.narrower,
                "meaning": spec.meaning,
            }
            for spec in specs
        ],
    }
    if args.json:
        print(json.dumps(data, indent=2))
        return 0 if not eff.refused else 3
    if eff.refused:
        print(f"trust record refused ({eff.refused}): everything is denied; this is what is "
              "enforced meanwhile")  # fmt: skip
    elif eff.epoch == 0:
        print("not paired yet: this is the default policy `tabwarden pair` will sign")
    elif eff.killed:
        print(f"epoch {eff.epoch}; the kill switch is engaged: everything is refused anyway")
    else:
        print(f"epoch {eff.epoch}")
    for spec in specs:
        print(f"{spec.key} = {json.dumps(data['policy'][spec.key])}")
        if spec.key == "origins":
            for line in _wildcard_words(data["policy"]["origins"]):
                print(line)
        about = f"{spec.meaning}. {spec.type}; default {json.dumps(spec.default)}; "
        about += f"narrower: {spec.narrower}"
        print(
            textwrap.fill(
                about, 92, initial_indent="    ", subsequent_indent="    ", break_on_hyphens=False
            )
        )
    if eff.ignored:
        print("ignored:")
        for reason in eff.ignored:
            print(f"  - {reason}")
    print(
        "widen: `tabwarden policy set KEY=VALUE` (typed phrase at a terminal); "
        "narrow: `tabwarden policy restrict KEY=VALUE` (free)"
    )
    return 0 if not eff.refused else 3


def cmd_policy_set(args: argparse.Namespace) -> int:
    from tabwarden.cli.ceremony import require_real_terminal

    changes = parse_assignments(args.assignments)
    require_real_terminal()
    _require_key()
    ctx = _ctx()
    new = operations.preview_widen(ctx, changes)
    shown = [f"  {k} = {json.dumps(new[k])}" for k in changes]
    if "origins" in changes:
        shown += _wildcard_words(new["origins"])
    proof = _ceremony("policy set", ["This signs a new policy baseline:", *shown])
    request = TapRequest(
        command="policy set",
        params={"changes": changes},
        summary="Sign a new policy baseline:\n" + "\n".join(line.strip() for line in shown),
    )
    terminal_tap.grant(ctx, proof, request, lambda p: operations.widen(ctx, p, changes, _now()))
    print("policy updated")
    return 0


def cmd_policy_restrict(args: argparse.Namespace) -> int:
    changes = parse_assignments(args.assignments)
    _require_paired()
    operations.restrict(_ctx(), changes, _now())
    print("policy restricted")
    return 0


def cmd_policy_history(args: argparse.Namespace) -> int:
    from tabwarden.trust.record_file import load

    doc = load(_ctx().trust_path, expect_paired=False)
    if doc is None:
        print("no policy history (not paired)")
        return 0
    history = doc.policy.history
    for steps_back, entry in enumerate(reversed(history), 1):
        print(
            f"[{steps_back}] epoch {entry.epoch}: {json.dumps(entry.values_json(), sort_keys=True)}"
        )
    if not history:
        print("no earlier baselines")
    return 0


def cmd_policy_rollback(args: argparse.Namespace) -> int:
    from tabwarden.cli.ceremony import require_real_terminal
    from tabwarden.trust.store import PresenceRequired

    _require_paired()
    ctx = _ctx()
    try:
        operations.rollback(ctx, args.steps, _now())
        print("policy rolled back (narrowing: no confirmation needed)")
        return 0
    except PresenceRequired:
        pass
    require_real_terminal()
    _require_key()
    proof = _ceremony("policy set", [f"Rolling back {args.steps} step(s) widens the policy."])
    request = TapRequest(
        command="policy rollback",
        params={"steps": args.steps},
        summary=f"Roll the policy back {args.steps} step(s); this widens it.",
    )
    terminal_tap.grant(
        ctx, proof, request, lambda p: operations.rollback(ctx, args.steps, _now(), p)
    )
    print("policy rolled back")
    return 0


# -- audit -----------------------------------------------------------------------------------


def cmd_audit(args: argparse.Namespace) -> int:
    from tabwarden.trust.audit import AuditLog

    log = AuditLog.default()
    records = log.read(limit=args.limit)
    if args.json:
        print(json.dumps(records, indent=2))
        return 0
    for record in records:
        ts = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(record.get("ts", 0)))
        rest = {k: v for k, v in record.items() if k not in ("ts", "event", "decision", "path")}
        via = f" via {record['path']}" if record.get("path") else ""
        what = f"{record.get('event')}: {record.get('decision')}{via}"
        print(f"{ts}  {what}  {json.dumps(rest, sort_keys=True)}")
    if log.corrupt_lines:
        print(f"({log.corrupt_lines} unreadable line(s) skipped)", file=sys.stderr)
    return 0


# -- argparse wiring -------------------------------------------------------------------------


PAIR_DESCRIPTION = """\
Pair this computer: mint the host key (in the OS keyring, or with --file-store in a 0600 file),
write the signed, locked-down default policy (no site approved; page eval, upload and password
fill off) and print the key's fingerprint and a one-time code for the extension's options page.
Refused unless you run it yourself at a real terminal, where it asks you to type a phrase.

The code works once and expires in 10 minutes: enter it in the tabwarden options page right
away (compare the fingerprint it shows), then pair your MCP client with `tabwarden pair-client`.

Lost a browser's authenticator, or never enrolled one? No reset needed: `tabwarden revoke
browser LABEL` (free), then `tabwarden pair --browser LABEL` prints a one-time code that only
the options page of browser LABEL accepts; enter it there and touch the new authenticator. The
host key, paired MCP clients and other browsers stay as they are. It is refused for a browser
that holds an enrolled credential (revoke it first), while the kill switch is engaged, or before
`tabwarden pair`.
"""

#: The KEY=VALUE argument of ``policy set`` / ``restrict``, explained once.
ASSIGNMENT_HELP = (
    'a policy key and its new value; VALUE is JSON (true, 30, ["https://a.test"]) or, for '
    "origins and confirm, a comma-separated list; `tabwarden policy show` lists the keys"
)

POLICY_NOTES = """\
Widening (more sites, eval/upload/password fill on, longer grace or timeout, fewer confirmed
actions) needs `policy set` and a phrase typed at a terminal; narrowing is always free with
`policy restrict` (or from the extension's options page). `tabwarden policy show`
lists every key with its type, range, default and meaning.
"""


def add_subcommands(sub: Any) -> None:
    from tabwarden.cli.help import JSON_HELP, add_command, count

    p = add_command(
        sub,
        "pair",
        summary="mint the host key and default policy, or re-enrol one browser (typed phrase at "
        "a terminal)",
        description=PAIR_DESCRIPTION,
        examples=[
            ("tabwarden pair", "pair, keeping the host key in the OS keyring"),
            ("tabwarden pair --file-store", "pair on a machine without a keyring"),
            ("tabwarden pair --browser chrome", "a new one-time code for browser chrome"),
            ("tabwarden pair --reset", "start over: a new key; everything pairs again"),
        ],
    )
    p.add_argument(
        "--file-store",
        action="store_true",
        help="keep the host key in a 0600 file in the config directory instead of the OS "
        "keyring (headless machines, no desktop keyring)",
    )
    p.add_argument(
        "--reset",
        action="store_true",
        help="rotate the host key: every paired client and browser must pair again",
    )
    p.add_argument(
        "--browser",
        metavar="LABEL",
        help="re-enrol browser LABEL (e.g. chrome) after `revoke browser LABEL`: print a "
        "one-time code only it accepts; keeps the host key, clients and other browsers",
    )
    p.set_defaults(func=cmd_pair)

    p = add_command(
        sub,
        "pair-client",
        summary="pair the MCP client program allowed to use tabwarden (typed phrase at a terminal)",
        description="Pin the MCP client (Claude Code, Codex, Cursor, …) that starts `tabwarden "
        "mcp`: from then on only that program (its executable's SHA-256, and for an interpreter "
        "the script it runs) is served. --program CMD pins it before it ever runs (the identity "
        "`tabwarden mcp` will measure, through symlinks, #! lines and launchers); without options "
        "you choose from the programs seen starting `tabwarden mcp`. Needs "
        "`tabwarden pair` first, and a phrase typed at a real terminal.",
        examples=[
            ("tabwarden pair-client", "choose from the recently seen MCP clients"),
            ("tabwarden pair-client --pid 4242", "measure the running client with PID 4242"),
            ("tabwarden pair-client --program claude", "pin Claude Code before it first runs"),
            (
                "tabwarden pair-client --exe /usr/local/bin/my-agent --label my-agent",
                "pin a plain executable by path, under the name my-agent",
            ),
        ],
    )
    p.add_argument(
        "--pid",
        type=int,
        help="measure this running client (through wrappers; an interpreter with what it runs)",
    )
    p.add_argument(
        "--program",
        metavar="CMD",
        help="the command you start the client with (e.g. claude, codex): pinned before it "
        "runs, as `tabwarden mcp` will measure it (through symlinks, #! lines, launchers)",
    )
    p.add_argument(
        "--exe",
        metavar="PATH",
        help="the client's executable (a plain program, not an interpreter)",
    )
    p.add_argument(
        "--hash",
        metavar="HEX",
        help="with --exe: the SHA-256 the executable must have (default: hash it now)",
    )
    p.add_argument(
        "--label",
        help="a name for it, 1-32 of a-z 0-9 - _ (default: from the executable or package name)",
    )
    p.set_defaults(func=cmd_pair_client)

    p = add_command(
        sub,
        "clients",
        summary="list the paired MCP clients",
        description="List the MCP clients paired with `tabwarden pair-client`: label, "
        "executable, hash prefix and when. --json adds the recently seen spawners (programs that "
        "started `tabwarden mcp`, paired or not). Read-only.",
        examples=[
            ("tabwarden clients", "who may use tabwarden"),
            ("tabwarden clients --json", "the same plus recent spawners, as JSON"),
        ],
    )
    p.add_argument("--json", action="store_true", help=JSON_HELP)
    p.set_defaults(func=cmd_clients)

    p = add_command(
        sub,
        "revoke",
        summary="forget a paired client or browser (free: no phrase, no terminal needed)",
        description="Forget a paired MCP client or browser at once: its live connections are cut "
        "and a copy of its old grant put back in the record stays revoked. Removing power needs "
        "no proof, so this works from a script. A revoked client pairs again with `tabwarden "
        "pair-client`; a revoked browser re-enrols with `tabwarden pair --browser LABEL`.",
        examples=[
            ("tabwarden revoke client claude-code", "stop serving the client claude-code"),
            ("tabwarden revoke browser chrome", "forget browser chrome's authenticator"),
        ],
    )
    p.add_argument("kind", choices=("client", "browser"), help="client (an MCP client) or browser")
    p.add_argument("label", help="its label, as `tabwarden clients` or `tabwarden status` lists it")
    p.set_defaults(func=cmd_revoke)

    p = add_command(
        sub,
        "kill",
        summary="engage the kill switch: refuse everything (free)",
        description="Engage the kill switch: every request from every client is refused, in the "
        "MCP server and in the browser, until a person runs `tabwarden unkill` at a terminal. "
        "Free (no proof), so anything may pull it — a script, the extension's popup, you.",
        examples=[
            ("tabwarden kill", "stop everything now"),
            ('tabwarden kill --reason "odd clicks"', "the same, with a reason in the audit log"),
        ],
    )
    p.add_argument(
        "--reason",
        default="cli",
        help="why, recorded in the audit log (default: cli)",
    )
    p.set_defaults(func=cmd_kill)

    p = add_command(
        sub,
        "unkill",
        summary="release the kill switch (typed phrase at a terminal)",
        description="Release the kill switch so paired clients are served again. If the trust "
        "record was tampered with, it first shows what the record grants now; confirming "
        "accepts it as it is (only validly signed grants count). Needs `tabwarden pair` first and "
        "a phrase typed at a real terminal: an agent cannot run it.",
        examples=[("tabwarden unkill", "type the phrase shown to serve clients again")],
    )
    p.set_defaults(func=cmd_unkill)

    p = add_command(
        sub,
        "policy",
        summary="show the policy, widen it (typed phrase) or narrow it (free)",
        description="The signed policy: which sites agents may use, which actions ask you "
        "first, what is off. See each action's --help.",
        examples=[
            ("tabwarden policy show", "every key: value, type, range and meaning"),
            ("tabwarden policy set origins=https://example.com", "approve one site (phrase)"),
            (
                "tabwarden policy set origins=https://*.example.com",
                "approve example.com and every subdomain (phrase)",
            ),
            ("tabwarden policy restrict eval=false", "turn page_eval off (free)"),
        ],
        notes=POLICY_NOTES,
    )
    psub = p.add_subparsers(dest="policy_command", metavar="ACTION", required=True)
    q = add_command(
        psub,
        "show",
        summary="every policy key: its value, type, range, default and meaning",
        description="Show the effective policy — the signed baseline with every restriction "
        "applied — one key per line with its type and range, its default, which way narrows it "
        "and what it means. Read-only.",
        examples=[
            ("tabwarden policy show", "the policy, explained"),
            ("tabwarden policy show --json", "values and key descriptions as JSON"),
        ],
    )
    q.add_argument("--json", action="store_true", help=JSON_HELP)
    q.set_defaults(func=cmd_policy_show)
    q = add_command(
        psub,
        "set",
        summary="sign a new baseline KEY=VALUE … (may widen: typed phrase at a terminal)",
        description="Sign a new policy baseline with the given keys changed; the others keep "
        "their values. It may widen, so it needs `tabwarden pair` first and a phrase typed at a "
        "real terminal; the keys and new values are shown before you type.",
        examples=[
            (
                "tabwarden policy set origins=https://a.test,https://b.test",
                "approve exactly these two sites",
            ),
            ("tabwarden policy set clickGraceSeconds=60", "a longer click grace period"),
            ("tabwarden policy set confirm='[\"submit\"]'", "confirm only submits (JSON form)"),
        ],
        notes=POLICY_NOTES,
    )
    q.add_argument("assignments", nargs="+", metavar="KEY=VALUE", help=ASSIGNMENT_HELP)
    q.set_defaults(func=cmd_policy_set)
    q = add_command(
        psub,
        "restrict",
        summary="narrow KEY=VALUE … (free; refuses anything that would widen)",
        description="Narrow the policy: each KEY=VALUE must grant no more than now (fewer "
        "origins, more confirmed actions, a smaller number, eval/upload/password fill off, "
        "presenceConfirm or closeTabsOnSessionEnd on). Free: no phrase, works from a script. A "
        "value that would widen is refused with policy_invalid and nothing is written.",
        examples=[
            ("tabwarden policy restrict eval=false", "turn page_eval off"),
            ("tabwarden policy restrict maxAgentTabs=5", "at most 5 agent tabs"),
            ("tabwarden policy restrict closeTabsOnSessionEnd=true", "close ended sessions' tabs"),
        ],
        notes=POLICY_NOTES,
    )
    q.add_argument("assignments", nargs="+", metavar="KEY=VALUE", help=ASSIGNMENT_HELP)
    q.set_defaults(func=cmd_policy_restrict)
    q = add_command(
        psub,
        "history",
        summary="the earlier signed baselines, newest first",
        description="List the earlier signed policy baselines, numbered by how many steps back "
        "each is — the N that `tabwarden policy rollback N` takes. Read-only.",
        examples=[("tabwarden policy history", "[1] is the baseline before the current one")],
    )
    q.set_defaults(func=cmd_policy_history)
    q = add_command(
        psub,
        "rollback",
        summary="return to the baseline N steps back (widening needs a typed phrase)",
        description="Return to an earlier baseline (`tabwarden policy history` numbers them). "
        "A rollback that only narrows is free; one that widens asks for a phrase typed at a real "
        "terminal, like `policy set`.",
        examples=[("tabwarden policy rollback 1", "undo the last `policy set`")],
    )
    q.add_argument(
        "steps",
        type=count,
        metavar="N",
        help="how many baselines back, as `tabwarden policy history` numbers them",
    )
    q.set_defaults(func=cmd_policy_rollback)

    p = add_command(
        sub,
        "audit",
        summary="the audit log: every decision, grant and refusal",
        description="Show the audit log, oldest first: each request's decision (allowed, "
        "refused, confirmed) and each change of trust (pairing, grants, revocations, kill). "
        "Never holds a secret or page content. Read-only.",
        examples=[
            ("tabwarden audit", "the last 50 entries"),
            ("tabwarden audit --limit 200", "the last 200"),
            ("tabwarden audit --json | jq '.[].event'", "as JSON, for scripts"),
        ],
    )
    p.add_argument(
        "--limit",
        type=count,
        default=50,
        metavar="N",
        help="show the newest N entries (default: 50)",
    )
    p.add_argument("--json", action="store_true", help=JSON_HELP)
    p.set_defaults(func=cmd_audit)
