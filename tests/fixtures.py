"""Helpers the Python tests share: a paired record on disk, and the extension's side of host
calls against a real host process (``tests.fakes.FakeBrowser``).

Helpers only (no tests): test modules import from here, never from each other."""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
import os
import pwd
import shutil
import subprocess
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fido2 import cbor
from fido2.utils import websafe_encode

from tabwarden.bridge.client_identity import ClientIdentity, measure_client_of, measure_process
from tabwarden.trust import store
from tabwarden.trust.audit import AuditLog
from tabwarden.trust.gate import TrustGate
from tabwarden.trust.keys import HostKey
from tabwarden.trust.keystore import FileStore
from tabwarden.trust.operations import TrustContext
from tabwarden.trust.reader import TrustReader
from tabwarden.trust.record import Credential
from tabwarden.trust.record_file import seal_first_record
from tabwarden.trust.verify import ClientGrant, Effective
from tests.fakes import FakeBrowser
from tests.trust import NOW
from tests.trust.softauthn import SoftAuthenticator

#: A Python every user can run (this suite's own may live under root's 0700 home).
SYSTEM_PYTHON = shutil.which("python3", path="/usr/bin:/bin") or "/usr/bin/python3"


@contextmanager
def throwaway_user(prefix: str) -> Iterator[pwd.struct_passwd]:
    """A system user made for one test (``prefix`` + 8 hex digits; no home, no login shell, no
    groups but its own), deleted after it. Needs root; ``useradd`` takes /etc/passwd's lock, so
    its fixture joins ``system-users`` (tests/xdist_groups.py)."""
    name = f"{prefix}{uuid.uuid4().hex[:8]}"
    subprocess.run(
        ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name],
        check=True,
        capture_output=True,
    )
    try:
        yield pwd.getpwnam(name)
    finally:
        subprocess.run(["userdel", name], check=False, capture_output=True)


if TYPE_CHECKING:
    from collections.abc import Callable

    from tabwarden.mcp_server.server import ToolGuard


def sha256_file(path: str) -> str:
    with open(path, "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()


def pair_record(
    config: Path,
    *,
    client_exe: str | None = None,
    label: str = "pytest",
    client: ClientIdentity | None = None,
) -> HostKey:
    """What `pair --file-store` + `pair-client` leave behind, written through the same store API.

    ``client_exe`` is paired as ``pair-client`` would pin it: a plain executable by its image
    hash; this test process's own interpreter (``our_interpreter()``) as this process — the
    interpreter with what it runs (``our_identity()``), since an interpreter is never pinned
    alone. ``client``: a client as measured (``our_spawner()``), paired as it is."""
    config.mkdir(mode=0o700, exist_ok=True)
    key = HostKey.generate()
    key_store = FileStore(config / "host-key.pem")
    # In `pair`'s order (trust.operations.pair_host): the seal before the key, so a host already
    # running never reads a key with neither record nor seal (it latches the kill switch).
    seal_first_record(config / "trust.json", key_store, reset=False)
    key_store.save(key)
    now = int(time.time())
    store.initialise(config / "trust.json", key, "file", now)
    if client_exe is not None:
        if client_exe == our_interpreter():
            me = our_identity()
            exe, sha = me.exe, me.sha256
        else:
            exe, sha = client_exe, sha256_file(client_exe)
        store.add_client(config / "trust.json", key, label, exe, sha, now)
    if client is not None:
        store.add_client(config / "trust.json", key, label, client.exe, client.sha256, now)
    return key


PAIRING_CODE = "tw-4821-alpine-orbit"


def config_of(browser: FakeBrowser) -> Path:
    return browser.runtime.parent / "config"


def paired_host(browser: FakeBrowser, code: str = PAIRING_CODE) -> HostKey:
    config = config_of(browser)
    key = pair_record(config)
    store.set_pairing_code(
        config / "trust.json", hashlib.sha256(code.encode()).hexdigest(), int(time.time()) + 600
    )
    browser.wait_socket()
    browser.hello()
    return key


_ids = iter(range(1, 1_000_000))


def host_call(browser: FakeBrowser, action: str, args: dict[str, Any]) -> dict[str, Any]:
    call_id = f"h{next(_ids)}"
    browser.send({"type": "host_call", "id": call_id, "action": action, "args": args})
    reply = browser.receive()
    assert reply["type"] == "host_reply" and reply["id"] == call_id, reply
    return reply


def refused(reply: dict[str, Any], code: str) -> None:
    assert reply["ok"] is False and reply["error"]["code"] == code, reply
    assert "result" not in reply


def audit_entries(config: Path) -> list[dict[str, Any]]:
    path = config / "audit.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def browser_grants(config: Path) -> Any:
    return TrustGate({"TABWARDEN_CONFIG_DIR": str(config)}).current().browsers


def gate_of(config: Path) -> TrustGate:
    return TrustGate({"TABWARDEN_CONFIG_DIR": str(config)})


def enrol_via_pairing(
    browser: FakeBrowser, *, uv: bool = True
) -> tuple[HostKey, SoftAuthenticator]:
    """Pair the record, then enrol a credential through the real pair_begin / pair_complete
    (``uv``: whether the authenticator verifies the user)."""
    key = paired_host(browser)
    begun = host_call(browser, "pair_begin", {"code": PAIRING_CODE})["result"]
    authenticator = SoftAuthenticator(uv=uv)
    done = host_call(
        browser,
        "pair_complete",
        {"challengeId": begun["challengeId"], "response": authenticator.create(begun["options"])},
    )
    assert done["ok"] is True, done
    return key, authenticator


def enrol_direct(config: Path, key: HostKey, label: str, authenticator: SoftAuthenticator) -> None:
    cose = authenticator.cose_key()
    credential = Credential(
        credential_id=websafe_encode(authenticator.credential_id),
        public_key=websafe_encode(cbor.encode(dict(cose))),
        sign_count=authenticator.counter,
        enrolled_at=int(time.time()),
        path="webauthn",
    )
    store.add_browser_credential(config / "trust.json", key, label, credential, int(time.time()))


def change_detail(changes: dict[str, Any]) -> str:
    return json.dumps(changes, sort_keys=True, separators=(",", ":"))


def begin_tap(browser: FakeBrowser, action: str, detail: str) -> dict[str, Any]:
    reply = host_call(browser, "presence_begin", {"action": action, "detail": detail})
    assert reply["ok"] is True, reply
    result: dict[str, Any] = reply["result"]
    return result


def complete_tap(
    browser: FakeBrowser, challenge_id: str, action: str, detail: str, response: Any
) -> dict[str, Any]:
    return host_call(
        browser,
        "presence_complete",
        {"challengeId": challenge_id, "action": action, "detail": detail, "response": response},
    )


def sign_count(config: Path) -> int:
    [grant] = [b for b in gate_of(config).current().browsers if b.label == "test"]
    [credential] = grant.credentials
    return credential.sign_count


@dataclasses.dataclass
class TrustWorld:
    """A trust record in a private config dir, with the context the trust operations run in
    (its own reader, latch and audit log; the key held in memory)."""

    ctx: TrustContext
    key: HostKey | None
    config: Path

    def audit(self) -> list[dict[str, Any]]:
        return self.ctx.audit().read()

    def record_bytes(self) -> bytes | None:
        path = self.ctx.trust_path
        return path.read_bytes() if path.exists() else None


def trust_world(tmp_path: Path, *, paired: bool = True) -> TrustWorld:
    config = tmp_path / "cfg"
    config.mkdir(mode=0o700, parents=True)
    key = HostKey.generate() if paired else None
    path = config / "trust.json"
    if key is not None:
        store.initialise(path, key, "file", NOW)
    reader = TrustReader(path, lambda: key.public if key else None)
    latch = config / "kill-latch"

    def effective() -> Any:
        eff = reader.current(NOW)
        return dataclasses.replace(eff, killed=True) if os.path.lexists(latch) else eff

    ctx = TrustContext(
        trust_path=path,
        kill_latch=latch,
        load_key=lambda: key,
        effective=effective,
        audit=lambda: AuditLog(config / "audit.jsonl"),
    )
    return TrustWorld(ctx=ctx, key=key, config=config)


def our_interpreter() -> str:
    """The real executable of this test process (what a child of ours is spawned by)."""
    return os.path.realpath(f"/proc/{os.getpid()}/exe")


def our_identity() -> ClientIdentity:
    """This test process as a client: what a child MCP server (and the host) measures it as."""
    return measure_process(os.getpid())


def our_spawner() -> ClientIdentity:
    """What the host measures a bridge client *in this test process* as: the client of an MCP
    server that is this process — the process that started us (through wrappers)."""
    return measure_client_of(os.getpid())


def answer_one_tab_list(browser: FakeBrowser) -> None:
    """Play the extension for one relayed ``tab_list`` (earlier sessions' ends skipped)."""
    while (request := browser.receive())["type"] == "session_end":
        pass
    assert request["type"] == "request" and request["action"] == "tab_list", request
    browser.send({"type": "reply", "id": request["id"], "ok": True, "result": {"tabs": []}})


async def played(call: asyncio.Task[Any], play: Any, *args: Any) -> Any:
    """Run ``play(*args)`` (the fake extension's side: it reads the relayed request and answers)
    in a thread while the tool ``call`` runs. A call that ends without its request reaching the
    extension (refused, or failed on the way) is the failure it is, named with its result, not
    a wait for a request that will never come."""
    playing = asyncio.ensure_future(asyncio.to_thread(play, *args))
    done, _ = await asyncio.wait({call, playing}, return_when=asyncio.FIRST_COMPLETED)
    if playing not in done:
        # The call may end a moment before the thread that answered it returns; a thread still
        # waiting for the request after this generous deadline never saw one.
        try:
            return await asyncio.wait_for(asyncio.shield(playing), 20)
        except TimeoutError:
            raise AssertionError(
                f"the call ended before the extension saw its request: {call.result()}"
            ) from None
    return playing.result()


def nothing_relayed(browser: FakeBrowser) -> None:
    """Everything the host sent the extension since, up to the answer to a fresh host call, is
    a session ending: no request was relayed."""
    browser.send({"type": "host_call", "id": "probe", "action": "policy_get", "args": {}})
    while (message := browser.receive())["type"] != "host_reply":
        assert message["type"] == "session_end", message
    assert message["id"] == "probe"


#: The MCP client an in-process server's tests are spawned by: what ``tabwarden mcp`` measures
#: its spawner as (no process is measured), paired in ``PAIRED``.
AGENT = ClientIdentity(pid=1, exe="/usr/bin/agent", sha256="a" * 64, create_time=0.0)

#: The record as read once ``AGENT`` is paired (what ``pair-client`` leaves): with no client
#: paired every call is refused ``client_not_paired``, so a test of anything past the gate
#: starts from here.
PAIRED = dataclasses.replace(
    Effective.unpaired(),
    paired_clients=(ClientGrant(label="agent", exe=AGENT.exe, sha256=AGENT.sha256, paired_at=0),),
    clients_pinned=True,
)


def paired_guard(audit: Callable[..., None] | None = None, **changes: Any) -> ToolGuard:
    """The gate ``tabwarden mcp`` builds when its spawner is the paired ``AGENT``, reading
    ``PAIRED`` with ``changes`` (``killed=True``: the kill switch engaged)."""
    from tabwarden.mcp_server.server import ToolGuard

    eff = dataclasses.replace(PAIRED, **changes)
    return ToolGuard(lambda: eff, AGENT, audit=audit)


def pair_this_process(config: Path) -> HostKey:
    """A record in ``config`` with this test process paired as the MCP client: what a
    ``tabwarden mcp`` it spawns measures its spawner as (with no client paired every call is
    refused ``client_not_paired``)."""
    return pair_record(config, client_exe=our_interpreter())


def pair_in_process_client(config: Path) -> HostKey:
    """A record in ``config`` with the client a ``BridgeClient`` of this test process is measured
    as paired (``our_spawner()``): with no client paired the host refuses every request
    ``client_not_paired``, so a test of the relay behind that gate starts from here. (A client
    the test spawns as a child is measured as this process: ``pair_this_process``.)"""
    return pair_record(config, client=our_spawner())


#: ``AGENT`` as the host's relay holds it (``_Client.measured``): served under ``PAIRED``.
AGENT_MEASURED = AGENT.measured()


def pair_remembered_spawners(config: Path, key: HostKey) -> list[str]:
    """Pair every spawner ``tabwarden mcp`` remembered in ``config`` (what ``pair-client``
    offers the person after a refused first start, whatever the client is: node, a wrapper,
    ``tabwarden call``). Returns what was paired, each as its description."""
    from tabwarden.bridge.spawner import recent_spawners

    seen = recent_spawners(config)
    assert seen, "no spawner was remembered: start the client once first"
    for n, spawner in enumerate(seen):
        store.add_client(
            config / "trust.json", key, f"seen-{n}", spawner.path, spawner.sha256, int(time.time())
        )
    return [s.path for s in seen]


def pair_terminal_call(config: Path, env: dict[str, str]) -> None:
    """A record in ``config`` with ``tabwarden call`` paired, as a person does it: one call is
    refused (nothing paired) and its spawner remembered, then ``pair-client`` pins it."""
    from tests.pty_cli import spawn_cli

    key = pair_record(config)
    status, output = spawn_cli(env, "call", "bridge_status").finish()
    assert status == 1 and b"client_not_paired" in output, output
    pair_remembered_spawners(config, key)
