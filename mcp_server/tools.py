"""The catalogue's tools on an MCP server: made in one loop, each behind the hop-1 gate.

``catalogue_tools`` is the only code that makes the server's tools. Every tool it makes is a
``GatedTool``: its input and output schemas come from the ``ToolSpec``'s argument and result
models (``catalogue/``), and its body first asks the gate (``ToolGuard.check``: trust record,
kill switch, paired client) and returns the refusal before anything else happens — before the
arguments are turned into a request, before the upload sandbox is looked at, before the bridge
is touched. Only the SDK's schema validation of the arguments comes earlier, and it depends on
nothing but the published schema. ``ToolCalls`` then makes the call the spec describes: relay the
action to the browser under a fresh command id (the same on every retry of a lost transport:
``bridge_client``) and check the reply against the output schema, or answer locally.

A relayed call may wait on the person (a confirm window, a tap). While it waits, and when the
client asked for progress (a progress token), the server sends a progress notification every
``PROGRESS_INTERVAL_SECONDS`` so clients that reset their timeout on progress keep waiting; how a
confirmation ended badly (``confirm_denied``, ``confirm_timeout``) is audited
(``Gatekeeper.outcome``). The deadline of a relayed call is the confirm timeout plus
``CONFIRM_SLACK_SECONDS``: with the default policy (40 s) that is 55 s, below the 60 s request
timeout common MCP clients use, so they hear tabwarden's code rather than give up.

Every call's outcome — tool, ok, duration, code; never an argument — is kept in this server's
``CallLog`` (the last ``RECENT_CALLS``), which ``bridge_status`` answers with (``recent``,
``lastError``). ``bridge_status`` is the one tool that answers while the kill switch is engaged
(saying so, ``killed: true``): it is a local diagnostic that reaches no page; every other refusal
(an unreadable record, an unpaired client) still refuses it too.

Every relayed result — an error's message too — is recorded in the session's provenance ledger
(``provenance.py``) under the origin of the content it carries: a result under its page's, an
action's ``observation`` under the page it was read from, a tab row under its own, an error under
the tab's (``UNKNOWN_ORIGIN`` when none is known). What the bridge itself reports about a tab — its
``url`` in a result, a tab row, a new tab or an observation, and an error's echo of the call's own
arguments — is not page content and is not recorded. Every argument whose ``catalogue.Lineage``
declaration is gated (an address, a request's target or body, typed text, keys) that carries
recorded content goes to the extension with that lineage attached (``provenance``: source
origins, masked items, when they were read) — the extension's gate decides (policy
``provenance``), and the outcome is audited here with the masked evidence
(``Gatekeeper.provenance``).

A capture is untraceable content (docs/adr/0008): when a tool whose catalogue entry declares
``frames`` RENDERS or SAVES (pixels, a rendered or saved file) answers, the ledger records an
opaque entry for each origin it showed (the tab's, and the frames' the extension names) — from
the declaration, never the tool's name. Every later call with a gated argument carries those
entries as ``provenance.captures``; the extension asks about them under policy ``provenance``
strict when the call goes to another origin, and ignores them otherwise.

Nothing here may decide policy (the trust record, the host and the extension do), name a file
to Chrome except one the upload sandbox checked (``uploads.check_upload``), write one except
through the download sandbox (``downloads.DownloadSandbox``: a printed PDF, or the copy of a
finished download Chrome reported), or put page content, file content or a secret into a log
line.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import inspect
import time
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Annotated, Any, Protocol, cast

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.func_metadata import FuncMetadata, func_metadata
from mcp_types import CallToolResult, ImageContent, ToolAnnotations
from pydantic import Field, ValidationError
from pydantic.fields import FieldInfo

from tabwarden.errors import TabwardenError
from tabwarden.mcp_server.bridge_client import BridgeClient, BridgeError, new_command_id
from tabwarden.mcp_server.catalogue import (
    CATALOGUE,
    Arguments,
    FrameOutput,
    Lineage,
    Local,
    Relay,
    Save,
    ToolSpec,
    declared_texts,
    published,
)
from tabwarden.mcp_server.catalogue.published import (
    compact_annotations,
    compact_input,
    compact_output,
    family_of_tool,
)
from tabwarden.mcp_server.downloads import DownloadSandbox, Saved
from tabwarden.mcp_server.provenance import (
    MAX_EVIDENCE,
    MIN_VALUE,
    UNKNOWN_ORIGIN,
    Evidence,
    Item,
    Ledger,
    extract,
    keys_text,
    mask_argument,
    origin_of,
)
from tabwarden.mcp_server.results import ERROR_META_KEY, error_result, ok_result
from tabwarden.mcp_server.schema_cache import SchemaCache, cache_key
from tabwarden.paths import live_endpoints, runtime_dir
from tabwarden.protocol.codes import (
    BAD_REQUEST,
    CONFIRM_DENIED,
    CONFIRM_TIMEOUT,
    EXTENSION_NOT_CONNECTED,
    INTERNAL_ERROR,
    KILLED,
    PROVENANCE_REFUSED,
    TOOL_NOT_ENABLED,
)

#: Checks a file the agent named in the upload sandbox: ``(real path, size)``, or raises a
#: ``TabwardenError`` (``uploads.UploadRefused``). Nothing of the file is read: Chrome reads it.
CheckUpload = Callable[[str], tuple[Path, int]]
#: Reports progress on the current call: ``(count, message)``; a no-op when the client did not
#: ask for progress.
Progress = Callable[[int, str], Awaitable[None]]
#: Makes one call after the gate let it through.
Answer = Callable[[ToolSpec, Arguments, Progress], Awaitable[CallToolResult]]

#: Slack on top of the confirm timeout: the page may still act after the person answered.
CONFIRM_SLACK_SECONDS = 15
#: How often a relayed call that is still waiting tells the client so.
PROGRESS_INTERVAL_SECONDS = 5.0
#: Codes that end a confirmation without the person's yes: audited as such.
CONFIRM_OUTCOMES = {CONFIRM_DENIED: "denied", CONFIRM_TIMEOUT: "timed_out"}
#: How many of this session's calls ``bridge_status`` lists.
RECENT_CALLS = 20
#: What a tool's output is when the model sees it as pixels or a file: a capture, whose content
#: the ledger cannot read (its origins are recorded as opaque entries instead).
CAPTURES = frozenset({FrameOutput.RENDERS, FrameOutput.SAVES})
#: The list of origins a RENDERS or SAVES reply names (the frames it showed), removed before the
#: reply is checked against its output schema.
CAPTURED_ORIGINS = "capturedOrigins"
#: How a question about a capture ends without the person's yes (under policy strict).
CAPTURE_REFUSALS = frozenset({CONFIRM_DENIED, CONFIRM_TIMEOUT, PROVENANCE_REFUSED})


class CallLog:
    """This server's recent calls, newest last: ``{tool, ok, ms, code}`` each — the tool's name
    and outcome only, never its arguments or result — and the last error ``{tool, code, at}``
    (Unix seconds). One per server process, i.e. per MCP session."""

    def __init__(self, size: int = RECENT_CALLS) -> None:
        self._recent: deque[dict[str, Any]] = deque(maxlen=size)
        self._last_error: dict[str, Any] | None = None

    def record(self, tool: str, result: CallToolResult, ms: int) -> None:
        code = _error_code(result) if result.is_error else None
        self._recent.append({"tool": tool, "ok": not result.is_error, "ms": ms, "code": code})
        if code is not None:
            self._last_error = {"tool": tool, "code": code, "at": round(time.time(), 3)}

    def as_dict(self) -> dict[str, Any]:
        return {"recent": list(self._recent), "lastError": self._last_error}


def _error_code(result: CallToolResult) -> str:
    meta = result.meta or {}
    error = meta.get(ERROR_META_KEY)
    code = error.get("code") if isinstance(error, dict) else None
    return code if isinstance(code, str) else INTERNAL_ERROR


class Gatekeeper(Protocol):
    """Hop 1's gate (``server.ToolGuard``)."""

    def check(self, tool: str) -> tuple[str, str] | None:
        """``(code, message)`` when this call is refused, else ``None``; audits the decision."""
        ...

    def refusal(self, *, despite_kill: bool = False) -> tuple[str, str] | None:
        """The refusal ``check`` audits, without auditing; ``despite_kill``: as if the kill
        switch were released (every other refusal still counts)."""
        ...

    def confirm_timeout(self) -> int: ...

    def provenance_mode(self) -> str:
        """The policy's ``provenance`` (``strict``, ``confirm`` or ``off``), from the record the
        latest ``refusal`` judged: only to know whether a refused capture question is worth an
        audit record (the extension decides)."""
        ...

    def outcome(self, tool: str, how: str, code: str) -> None:
        """Audit how a call the gate allowed ended when that is worth a record (a confirmation
        denied or unanswered); never raises."""
        ...

    def provenance(
        self,
        tool: str,
        how: str,
        argument: str,
        evidence: list[dict[str, Any]],
        path: str | None = None,
    ) -> None:
        """Audit the provenance gate's decision on a call whose argument carried page lineage:
        ``argument`` masked, ``evidence`` as ``Evidence.public`` gives it, ``path`` how a
        confirmation was given (``window`` or ``webauthn``); never raises."""
        ...


class GatedTool:
    """One catalogue tool as the SDK sees a function: ``__signature__`` publishes the argument
    model's fields as keyword parameters (the input schema) and ``Annotated[CallToolResult,
    result model]`` (the output schema). Calling it runs the gate first, always."""

    def __init__(
        self,
        spec: ToolSpec,
        guard: Gatekeeper,
        answer: Answer,
        calls: CallLog | None = None,
        *,
        family: str | None = None,
    ) -> None:
        self.spec = spec
        #: The opt-in family (``catalogue.published.PROFILES``) this server was started
        #: without: the tool is not listed, and a call answers ``tool_not_enabled``.
        self.family = family
        self._guard = guard
        self._answer = answer
        self._calls = calls
        parameters = [_parameter(n, f) for n, f in spec.arguments.model_fields.items()]
        if _CONTEXT in spec.arguments.model_fields:
            raise TypeError(f"{spec.name}: an argument may not be called {_CONTEXT}")
        # The SDK hands the request's Context to the parameter annotated with it (and leaves it
        # out of the input schema): it is how progress reaches the client.
        context = inspect.Parameter(_CONTEXT, inspect.Parameter.KEYWORD_ONLY, annotation=Context)
        returns = cast(Any, Annotated)[CallToolResult, spec.result]
        self.__name__ = spec.name  # the SDK names the input schema "<name>Arguments"
        self.__signature__ = inspect.Signature([*parameters, context], return_annotation=returns)
        self.__annotations__ = (
            {p.name: p.annotation for p in parameters} | {_CONTEXT: Context} | {"return": returns}
        )

    async def __call__(self, /, **arguments: Any) -> CallToolResult:
        started = time.monotonic()
        result = await self._call(**arguments)
        if self._calls is not None:
            self._calls.record(self.spec.name, result, round((time.monotonic() - started) * 1000))
        return result

    async def _call(self, **arguments: Any) -> CallToolResult:
        context = arguments.pop(_CONTEXT, None)

        async def progress(count: int, message: str) -> None:
            if isinstance(context, Context):
                await context.report_progress(count, None, message)

        if (refused := self._guard.check(self.spec.name)) is not None:
            if not self._diagnostic(refused):
                return error_result(*refused, read_only=self.spec.read_only)
            # Audited as refused above; say that it answered anyway, as a diagnostic.
            self._guard.outcome(self.spec.name, "answered_while_killed", KILLED)
        if self.family is not None:
            return error_result(
                TOOL_NOT_ENABLED,
                f"{self.spec.name} is in the tool family {self.family}, which this server was "
                f"not started with: start it as `tabwarden mcp --caps {self.family}`",
                read_only=self.spec.read_only,
            )
        try:
            args = self.spec.arguments.model_validate(arguments)
        except ValidationError as exc:
            return error_result(
                BAD_REQUEST, invalid_arguments(self.spec, exc), read_only=self.spec.read_only
            )
        return await self._answer(self.spec, args, progress)

    def _diagnostic(self, refused: tuple[str, str]) -> bool:
        """``bridge_status`` answers while killed (it says so), for a client that the kill
        switch alone refuses."""
        return (
            self.spec.call is Local.BRIDGE_STATUS
            and refused[0] == KILLED
            and self._guard.refusal(despite_kill=True) is None
        )


_CONTEXT = "tabwarden_request_context"
#: How many of a call's argument problems its error lists.
MAX_ARGUMENT_PROBLEMS = 5
#: Longest argument name an error repeats (a name is the caller's text, so it is cut).
MAX_NAME_CHARS = 40


def invalid_arguments(spec: ToolSpec, exc: ValidationError) -> str:
    """What is wrong with a call's arguments, field by field, in words a model can act on:
    the field's path and the rule it broke. Never the value given (it may be a secret the
    model was typing), so pydantic's own text, which repeats it, is never shown."""
    errors = exc.errors(include_url=False, include_input=False)
    names = [".".join(str(part)[:MAX_NAME_CHARS] for part in e["loc"]) for e in errors]
    unknown = [
        f"`{n}`" for n, e in zip(names, errors, strict=True) if e["type"] == "extra_forbidden"
    ]
    problems = [
        f"`{n or '(arguments)'}`: {e['msg']}"
        for n, e in zip(names, errors, strict=True)
        if e["type"] != "extra_forbidden"
    ]
    if unknown:
        listed = ", ".join(unknown[:MAX_ARGUMENT_PROBLEMS])
        if len(unknown) > MAX_ARGUMENT_PROBLEMS:
            listed += f" and {len(unknown) - MAX_ARGUMENT_PROBLEMS} more"
        takes = ", ".join(spec.arguments.model_fields)
        problems.insert(
            0,
            f"{spec.name} has no argument {listed} (its arguments: {takes})"
            if takes
            else f"{spec.name} takes no arguments ({listed} given)",
        )
    shown = problems[:MAX_ARGUMENT_PROBLEMS]
    more = len(problems) - len(shown)
    return (
        f"invalid arguments for {spec.name}: "
        + "; ".join(shown)
        + (f"; and {more} more" if more > 0 else "")
    )


class _Unvalidated(FuncMetadata):
    """The SDK's argument step, handing the call's arguments on as they came (JSON-in-a-string
    values unpacked as the SDK does): ``GatedTool`` validates them against the catalogue's own
    model, after the gate, so a wrong call answers ``bad_request`` in the project's error form,
    and an argument a tool does not take is refused, never dropped."""

    def validate_arguments(self, arguments_to_validate: dict[str, Any]) -> dict[str, Any]:
        return self.pre_parse_json(arguments_to_validate)


def _published_strictly(tool: Tool) -> Tool:
    """``tool`` validating through ``GatedTool`` alone (``_Unvalidated``), its input schema
    saying that no other argument is taken, both schemas in their compact published form
    (``catalogue.published``)."""
    meta = tool.fn_metadata
    tool.fn_metadata = _Unvalidated(
        arg_model=meta.arg_model,
        output_schema=None if meta.output_schema is None else compact_output(meta.output_schema),
        output_model=meta.output_model,
        wrap_output=meta.wrap_output,
    )
    tool.parameters = compact_input({**tool.parameters, "additionalProperties": False})
    tool.annotations = published_annotations(tool.annotations)
    return tool


def published_annotations(annotations: ToolAnnotations | None) -> ToolAnnotations | None:
    """``annotations`` with only the hints that differ from the specification's defaults
    (``catalogue.published.compact_annotations``); None when none does."""
    if annotations is None:
        return None
    given = compact_annotations(annotations.model_dump(by_alias=True, exclude_none=True))
    return ToolAnnotations.model_validate(given) if given else None


def _parameter(name: str, field: FieldInfo) -> inspect.Parameter:
    """A keyword parameter whose annotation gives the SDK the same JSON schema as ``field``."""
    unsupported = [
        attr
        for attr in ("alias", "default_factory", "examples", "json_schema_extra", "title")
        if getattr(field, attr) is not None
    ]
    if unsupported:
        raise TypeError(f"argument {name}: {', '.join(unsupported)} cannot be published")
    described = Field() if field.description is None else Field(description=field.description)
    annotation = cast(Any, Annotated)[(field.annotation, *field.metadata, described)]
    default = inspect.Parameter.empty if field.is_required() else field.default
    return inspect.Parameter(
        name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation
    )


def catalogue_tools(
    guard: Gatekeeper,
    answer: Answer,
    calls: CallLog | None = None,
    schemas: SchemaCache | None = None,
    enabled: frozenset[str] | None = None,
) -> list[Tool]:
    """Every catalogue tool as the SDK's ``Tool``, each behind ``guard``, each call's outcome
    kept in ``calls``: what ``MCPServer(tools=...)`` serves. With ``schemas``, the published
    schemas come from that cache when it holds this code's (``schema_cache.cache_key``) and are
    stored there when it did not; everything else is built afresh either way. A tool not in
    ``enabled`` (None: every tool is) answers ``tool_not_enabled`` after the gate."""
    gated = [
        GatedTool(
            spec,
            guard,
            answer,
            calls,
            family=None if enabled is None or spec.name in enabled else family_of_tool(spec.name),
        )
        for spec in CATALOGUE
    ]
    key = cached = None
    if schemas is not None:
        models = [m for spec in CATALOGUE for m in (spec.arguments, spec.result)]
        key = cache_key(models, *PUBLISHERS)
        cached = schemas.load(key, [spec.name for spec in CATALOGUE])
    if cached is not None:
        return [_tool_with(g, cached[g.spec.name]) for g in gated]
    built = [
        _published_strictly(
            Tool.from_function(  # what MCPServer.add_tool does
                g,
                name=g.spec.name,
                title=g.spec.title,
                description=g.spec.description,
                annotations=g.spec.annotations,
                structured_output=True,
            )
        )
        for g in gated
    ]
    published = {
        t.name: {"parameters": t.parameters, "outputSchema": t.output_schema} for t in built
    }
    if schemas is not None and key is not None and all(t.output_schema for t in built):
        schemas.store(key, published)  # type: ignore[arg-type]  # every output schema is set
    return built


#: The code that turns the catalogue's models into published schemas: a change to any of it is
#: a new schema-cache key.
PUBLISHERS = (__file__, published.__file__)


def _tool_with(gated: GatedTool, schemas: dict[str, Any]) -> Tool:
    """The ``Tool`` ``Tool.from_function`` makes of ``gated``, its published schemas given: the
    argument model is built from the signature as the SDK builds it (it validates every call),
    the output model is the result model (tests/mcp_server/test_schema_cache.py holds both ways
    equal for every tool)."""
    spec = gated.spec
    arguments = func_metadata(gated, skip_names=[_CONTEXT], structured_output=False).arg_model
    metadata = _Unvalidated(
        arg_model=arguments,
        output_schema=schemas["outputSchema"],
        output_model=spec.result,
        wrap_output=False,
    )
    return Tool(
        fn=gated,
        name=spec.name,
        title=spec.title,
        description=spec.description,
        parameters=schemas["parameters"],
        fn_metadata=metadata,
        is_async=True,
        context_kwarg=_CONTEXT,
        annotations=published_annotations(spec.annotations),
    )


#: Which running browsers cannot start the host, each with the command that fixes it (the
#: command line's ``tabwarden.cli.install.running``, handed in by ``tabwarden mcp``: this hop
#: never imports the command line). Given the bridge's environment.
HostProblems = Callable[[Mapping[str, str] | None], list[dict[str, str]]]


class ToolCalls:
    """How a call the gate let through is made: the bridge, the upload sandbox, local state."""

    def __init__(
        self,
        bridge: BridgeClient,
        guard: Gatekeeper,
        check_upload: CheckUpload,
        calls: CallLog | None = None,
        downloads: DownloadSandbox | None = None,
        *,
        clock: Callable[[], float] = time.time,
        host_problems: HostProblems | None = None,
    ) -> None:
        self._bridge = bridge
        self._host_problems_of = host_problems
        self._guard = guard
        self._check_upload = check_upload
        self._calls = calls
        self._clock = clock
        #: What pages told the model in this session (one ``ToolCalls`` per MCP session).
        self.ledger = Ledger()
        #: Each tab's origin and URL as its latest result showed them.
        self._tab_origins: dict[int, str] = {}
        self._tab_urls: dict[int, str] = {}
        self._downloads = downloads or DownloadSandbox.from_env(bridge.env)

    async def answer(self, spec: ToolSpec, args: Arguments, progress: Progress) -> CallToolResult:
        if isinstance(spec.call, Local):
            return ok_result(spec.result.model_validate(await self._local(spec.call)))
        return await self._relay(spec, spec.call, args, progress)

    async def _local(self, call: Local) -> dict[str, Any]:
        status = await self._bridge.status()
        if call is Local.BRIDGE_STATUS:
            calls = self._calls.as_dict() if self._calls is not None else {}
            refused = self._guard.refusal()  # answered at all: only the kill switch refuses
            killed = refused is not None and refused[0] == KILLED
            # No host: say which running browser cannot start one, and the command that fixes it.
            problems = [] if status.host_reachable else await asyncio.to_thread(self._host_problems)
            return status.as_dict() | calls | {"killed": killed, "hostProblems": problems}
        live = live_endpoints(runtime_dir(self._bridge.env))
        current = status.browser if status.host_reachable else None
        return {"browsers": [{"label": ep.label, "current": ep.label == current} for ep in live]}

    def _host_problems(self) -> list[dict[str, str]]:
        if self._host_problems_of is None:
            return []
        return self._host_problems_of(self._bridge.env)

    async def _why_no_host(self) -> str:
        """For a call no host answered: each running browser that cannot start one, with the
        exact command that fixes it (its own label and directory), or ""."""
        try:
            problems = await asyncio.to_thread(self._host_problems)
        except Exception:  # only words: a process table that cannot be read adds none
            return ""
        return "".join(
            f"; {p['browser']} is running, but {p['cause']}: run `{p['command']}`"
            for p in problems[:3]
        )

    async def _relay(
        self, spec: ToolSpec, call: Relay, args: Arguments, progress: Progress
    ) -> CallToolResult:
        action = spec.name
        lineage: list[Evidence] = []
        captured: list[Evidence] = []
        carrier: tuple[Lineage, str] = (Lineage.TYPED, "")
        try:
            request = args.wire()
            lineage, carrier = self._lineage(args)
            captured, carrier = self._captured(args, carrier)
            if lineage or captured:
                request["provenance"] = _provenance(lineage, captured)
            if call.sandbox_file is not None:
                request |= self._sandbox_files(request[call.sandbox_file], call.sandbox_file)
            save_as = request.get(call.save_file) if call.save_file is not None else None
            timeout = self._guard.confirm_timeout() + CONFIRM_SLACK_SECONDS
            # One command id per tool call: every retry of a lost transport sends the same one,
            # so the extension's journal runs it at most once.
            relayed = self._bridge.call(
                action,
                request,
                timeout=timeout,
                command=new_command_id(),
                read_only=spec.read_only,
            )
            reply = await _while_reporting(relayed, progress)
        except TabwardenError as exc:
            if exc.code in CONFIRM_OUTCOMES:
                self._guard.outcome(action, CONFIRM_OUTCOMES[exc.code], exc.code)
            if lineage:
                self._audit_lineage(spec, carrier, lineage + captured, exc.code)
            elif captured and exc.code in CAPTURE_REFUSALS:
                # Only strict asks about a capture: under another mode this code came from
                # another question (a page_fetch's own window), not the provenance gate.
                if self._guard.provenance_mode() == "strict":
                    self._audit_lineage(spec, carrier, captured, exc.code)
            if isinstance(exc, BridgeError):  # the browser's words: they may quote the page
                try:
                    self._record_error(args, str(exc))
                except Exception:  # an error that cannot be recorded is not handed on
                    return error_result(
                        exc.code,
                        f"{action} failed ({exc.code}); its message could not be recorded in "
                        "the provenance ledger",
                        read_only=spec.read_only,
                    )
            message = str(exc)
            if exc.code == EXTENSION_NOT_CONNECTED:
                message += await self._why_no_host()
            return error_result(exc.code, message, read_only=spec.read_only)
        decided = reply.pop("provenance", None)
        path = reply.pop("provenancePath", None)
        if lineage or (captured and decided is not None):
            how = str(decided or "unanswered")
            self._audit_lineage(
                spec,
                carrier,
                lineage + captured,
                how,
                path if path in ("window", "webauthn") else None,
            )
        capture = spec.frames in CAPTURES
        shown = reply.pop(CAPTURED_ORIGINS, None) if capture else None
        tab = getattr(args, "tabId", None)
        # The tab's origin before this reply (a saved file's reply names the file's own url).
        page = self._tab_origins.get(tab) if isinstance(tab, int) else None
        try:
            self._record(args, reply, image=call.image)
            if capture:
                self._record_capture(page, reply, shown)
        except Exception:  # content that cannot be recorded is not handed to the model
            return error_result(
                INTERNAL_ERROR,
                f"the {action} result could not be recorded in the provenance ledger",
                read_only=spec.read_only,
            )
        try:
            if call.image:
                return _image(reply, spec)
            if save_as is not None:
                reply = self._saved(reply, str(save_as), spec)
            if call.save is not None:
                reply = self._save(call.save, reply)
            return ok_result(spec.result.model_validate(args.shaped(reply)))
        except TabwardenError as exc:
            return error_result(exc.code, str(exc), read_only=spec.read_only)
        except ValueError:
            return error_result(
                INTERNAL_ERROR,
                f"the extension returned a malformed {action} result",
                read_only=spec.read_only,
            )

    def _lineage(self, args: Arguments) -> tuple[list[Evidence], tuple[Lineage, str]]:
        """The page lineage of the call's gated arguments (every source origin: the extension
        compares them with the target's real origin), newest first, at most ``MAX_EVIDENCE``;
        and the argument that carried the newest of it (for the audit, masked)."""
        found: dict[Item, tuple[Evidence, tuple[Lineage, str]]] = {}
        for declared in _argument_texts(args):
            for evidence in self.ledger.lineage(declared[1]):
                found.setdefault(evidence.item, (evidence, declared))
        if not found:
            return [], (Lineage.TYPED, "")
        ranked = sorted(found.values(), key=lambda pair: pair[0].read_at, reverse=True)
        first: list[Evidence] = []
        rest: list[Evidence] = []
        origins: set[str] = set()
        for evidence, _ in ranked:  # the newest of each source origin first, as Ledger.lineage
            if evidence.source_origin in origins:
                rest.append(evidence)
            else:
                origins.add(evidence.source_origin)
                first.append(evidence)
        return (first + rest)[:MAX_EVIDENCE], ranked[0][1]

    def _captured(
        self, args: Arguments, carrier: tuple[Lineage, str]
    ) -> tuple[list[Evidence], tuple[Lineage, str]]:
        """The ledger's opaque capture entries, when the call has a gated argument of at least
        ``MIN_VALUE`` characters (shorter text carries no lineage either: one key's character)
        — the extension compares their origins with the target's — and the argument to audit:
        the one that carried text lineage, else the call's address, else its first gated text."""
        texts = [t for t in _argument_texts(args) if len(t[1].strip()) >= MIN_VALUE]
        if not texts:
            return [], carrier
        captured = self.ledger.captures()
        if carrier[1] or not captured:
            return captured, carrier
        addresses = [t for t in texts if t[0] in (Lineage.ADDRESS, Lineage.REQUEST_TARGET)]
        return captured, (addresses or texts)[0]

    def _record_capture(self, page: str | None, reply: dict[str, Any], shown: object) -> None:
        """Record the capture a RENDERS or SAVES tool answered with as opaque entries: for the
        tab's page (``page``; ``UNKNOWN_ORIGIN`` when not known: another origin than any), the
        reply's ``url`` (a saved file's address) and each origin the extension says the capture
        showed (the page's frames, the frame that started a file)."""
        origins = [page or UNKNOWN_ORIGIN, origin_of(reply.get("url"))]
        if isinstance(shown, list):
            origins += [origin_of(text) for text in shown]
        now = self._clock()
        for origin in dict.fromkeys(o for o in origins if o is not None):
            self.ledger.capture(origin, now)

    def _audit_lineage(
        self,
        spec: ToolSpec,
        carrier: tuple[Lineage, str],
        lineage: list[Evidence],
        how: str,
        path: str | None = None,
    ) -> None:
        kind, text = carrier
        masked = mask_argument(text, address=kind in (Lineage.ADDRESS, Lineage.REQUEST_TARGET))
        self._guard.provenance(spec.name, how, masked, [e.public() for e in lineage], path)

    def _record(self, args: Arguments, reply: dict[str, Any], *, image: bool) -> None:
        """Record what the reply tells the model under the origin of the page it came from: a
        tab row under its own url; an ``observation`` under the url it was read at (else
        ``UNKNOWN_ORIGIN``); the rest under the reply's ``url`` (the page's, read by the
        extension), else the tab's latest known origin, else ``UNKNOWN_ORIGIN`` (another origin
        than any). The ``url`` fields themselves are the bridge's report, not page content."""
        now = self._clock()
        content = {k: v for k, v in reply.items() if k != "data"} if image else dict(reply)
        rows = content.get("tabs") if isinstance(content.get("tabs"), list) else None
        if rows is None and isinstance(content.get("tab"), dict):
            rows = [content["tab"]]
        if rows is not None:
            for row in rows:
                if isinstance(row, dict):
                    origin = self._learn(row.get("id"), row.get("url"))
                    self.ledger.record(origin or UNKNOWN_ORIGIN, _without_url(row), now)
            return
        tab = getattr(args, "tabId", None)
        observation = content.pop("observation", None)
        url = content.get("url")
        framed = getattr(args, "frame", None) is not None
        # A frame's reply is that frame's page: it tells nothing of the tab's own, and without
        # its url its origin is not known (never the top page's).
        origin = origin_of(url) if framed else self._learn(tab, url)
        if origin is None and isinstance(tab, int) and not framed:
            origin = self._tab_origins.get(tab)
        new_tab = content.get("newTab")
        if isinstance(new_tab, dict):  # a popup: known by its own url from now on
            self._learn(new_tab.get("id"), new_tab.get("url"))
            content["newTab"] = _without_url(new_tab)
        self.ledger.record(origin or UNKNOWN_ORIGIN, _without_url(content), now)
        if isinstance(observation, dict):
            for part in observation.values():
                if isinstance(part, dict):
                    seen = origin_of(part.get("url")) or UNKNOWN_ORIGIN
                    self.ledger.record(seen, _without_url(part), now)

    def _learn(self, tab: object, url: object) -> str | None:
        """The origin of ``url``, remembered as tab ``tab``'s (with the url) when both are
        known."""
        origin = origin_of(url)
        if origin is not None and isinstance(tab, int) and isinstance(url, str):
            self._tab_origins[tab] = origin
            self._tab_urls[tab] = url
        return origin

    def _record_error(self, args: Arguments, message: str) -> None:
        """Record an error's message (a dialog's text, a page's exception) under the tab's known
        origin, else ``UNKNOWN_ORIGIN``: without what it echoes of the call's own arguments or
        of the tab's own URL (the bridge's words, not the page's)."""
        tab = getattr(args, "tabId", None)
        origin = self._tab_origins.get(tab) if isinstance(tab, int) else None
        own = _strings(args.wire())
        if isinstance(tab, int) and tab in self._tab_urls:
            own.append(self._tab_urls[tab])
        own += [o for text in own if (o := origin_of(text)) is not None]  # "{origin} was denied"
        echoed = {item for text in own for item in extract(text)}
        self.ledger.record(origin or UNKNOWN_ORIGIN, message, self._clock(), exclude=echoed)

    def _saved(self, reply: dict[str, Any], name: str, spec: ToolSpec) -> dict[str, Any]:
        """The reply with its base64 ``data`` written into the download sandbox as ``name``
        (sanitised, never overwriting) and answered as ``savedTo`` (the bytes never reach the
        client). A malformed reply writes nothing (``ValueError``)."""
        out = {k: v for k, v in reply.items() if k != "data"}
        spec.result.model_validate(out)
        if "data" not in reply and reply.get("delivery") in ("sent_unreadable", "unknown"):
            return out  # page_fetch: no answer the page could read, so nothing to save
        saved = self._write(name, reply.get("data"), fallback="response.bin")
        return out | {"savedTo": str(saved.path)}

    def _write(self, name: object, data: object, *, fallback: str) -> Saved:
        """Base64 ``data`` written into the download sandbox as ``name`` (sanitised, never
        overwriting); ``ValueError`` for a reply that carries no file, nothing written."""
        if not isinstance(data, str) or not isinstance(name, str):
            raise ValueError("no file in the reply")
        try:
            content = base64.b64decode(data, validate=True)
        except (binascii.Error, ValueError):
            raise ValueError("the file is not base64") from None
        return self._downloads.save_bytes(name, content, fallback=fallback)

    def _save(self, how: Save, reply: dict[str, Any]) -> dict[str, Any]:
        """The reply with the file it carries or names written into the download sandbox, and
        its ``path`` and ``size`` in place of the bytes or Chrome's own path (ValueError when
        the reply is malformed, a ``TabwardenError`` when the sandbox refuses)."""
        if how is Save.BYTES:
            saved = self._write(reply.get("name"), reply.get("data"), fallback="page.pdf")
            return {"path": str(saved.path), "size": saved.size}
        rest = {k: v for k, v in reply.items() if k != "file"}
        if reply.get("state") != "complete":
            return rest
        file = reply.get("file")
        source = file.get("source") if isinstance(file, dict) else None
        size = file.get("size") if isinstance(file, dict) else None
        if not isinstance(source, str) or not isinstance(size, int) or not source.startswith("/"):
            raise ValueError("the finished download names no file")
        saved = self._downloads.copy_in(source, str(reply.get("filename", "")), expected_size=size)
        return rest | {"path": str(saved.path), "size": saved.size}

    def _sandbox_files(self, requested: object, argument: str) -> dict[str, Any]:
        """Every file the agent named, checked in the sandbox (the first refusal ends the call,
        before anything is relayed): their real paths, and each one's name and size."""
        names = requested if isinstance(requested, list) else [requested]
        checked = [self._check_upload(str(name)) for name in names]
        return {
            argument: [str(real) for real, _ in checked],
            "files": [{"name": real.name, "size": size} for real, size in checked],
        }


def _provenance(lineage: list[Evidence], captured: list[Evidence]) -> dict[str, Any]:
    """What the extension's gate is sent: the text lineage (``evidence``) and the opaque capture
    entries (``captures``), each only when there is some."""
    sent: dict[str, Any] = {}
    if lineage:
        sent["evidence"] = [e.public() for e in lineage]
    if captured:
        sent["captures"] = [
            {"sourceOrigin": e.source_origin, "readAt": int(e.read_at * 1000)} for e in captured
        ]
    return sent


def _argument_texts(args: Arguments) -> list[tuple[Lineage, str]]:
    """The texts of a call whose page lineage is checked, each with its declaration
    (``catalogue.Lineage``): every gated argument's string (each string of a list, each value of
    a mapping), and the text a keys argument's character keys type."""
    texts: list[tuple[Lineage, str]] = []
    keys: list[str] = []
    for lineage, text in declared_texts(args):
        if lineage is Lineage.KEYS:
            keys.append(text)
        else:
            texts.append((lineage, text))
    typed = keys_text(keys)
    if typed:
        texts.append((Lineage.KEYS, typed))
    return texts


def _without_url(content: dict[str, Any]) -> dict[str, Any]:
    """``content`` without its ``url``: what the bridge reports of where a page is, not what the
    page wrote (recorded, it made the tab's own address "suggested by a page"). A ``title`` is
    the page's own words and stays: a title typed into another site asks like any text."""
    return {k: v for k, v in content.items() if k != "url"}


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


async def _while_reporting(call: Awaitable[dict[str, Any]], progress: Progress) -> dict[str, Any]:
    """Await ``call``, telling the client every ``PROGRESS_INTERVAL_SECONDS`` that it still
    waits (a confirmation may be open). A client that cannot take the notification changes
    nothing; cancelling the tool call cancels the browser call."""
    task = asyncio.ensure_future(call)
    waited = 0
    try:
        while True:
            done, _ = await asyncio.wait({task}, timeout=PROGRESS_INTERVAL_SECONDS)
            if done:
                return task.result()
            waited += 1
            seconds = round(waited * PROGRESS_INTERVAL_SECONDS)
            with contextlib.suppress(Exception):
                await progress(
                    waited,
                    f"still waiting for the browser after {seconds} s: a confirmation may be "
                    "waiting for the person in tabwarden's window",
                )
    finally:
        if not task.done():
            task.cancel()


def _decoded_size(data: str) -> int:
    """How many bytes the base64 ``data`` decodes to: by arithmetic when it is whole 4-character
    groups of ASCII with at most two ``=`` of padding (what a capture is), so a 10 MB image is
    not decoded only to be counted (~55 ms, a fifth of this server's CPU for it); otherwise as
    ``b64decode(data, validate=False)`` counts it. (A string that has those shapes and also
    characters outside the alphabet is counted as if it had none; the count is metadata, the
    image content is passed on as received either way.)"""
    padding = len(data) - len(data.rstrip("="))
    if len(data) % 4 == 0 and padding <= 2 and data.isascii():
        return len(data) // 4 * 3 - padding
    return len(base64.b64decode(data, validate=False))


def _image(reply: dict[str, Any], spec: ToolSpec) -> CallToolResult:
    """A screenshot reply as MCP image content, with its metadata as structured content."""
    data = reply.get("data")
    if not isinstance(data, str):
        return error_result(
            INTERNAL_ERROR, "the extension returned no image", read_only=spec.read_only
        )
    mime_type = str(reply.get("mimeType", "image/png"))
    meta = {
        "mimeType": mime_type,
        "width": reply.get("width"),
        "height": reply.get("height"),
        "bytes": _decoded_size(data),
        # an element's capture names the element, as every element tool's result does
        **({"target": reply["target"]} if isinstance(reply.get("target"), dict) else {}),
    }
    return CallToolResult(
        content=[ImageContent(type="image", data=data, mime_type=mime_type)],
        structured_content=spec.result.model_validate(meta).model_dump(mode="json"),
    )
