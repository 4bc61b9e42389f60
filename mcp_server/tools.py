"""The catalogue's tools on an MCP server: registered in one loop, each behind the hop-1 gate.

``register`` is the only code that adds tools to the server. Every tool it adds is a
``GatedTool``: its input and output schemas come from the ``ToolSpec``'s argument and result
models (``catalogue.py``), and its body first asks the gate (``ToolGuard.check``: trust record,
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

Nothing here may decide policy (the trust record, the host and the extension do), read a file
except through the upload sandbox (``uploads.read_upload``), write one except through the
download sandbox (``downloads.DownloadSandbox``: a printed PDF, or the copy of a finished download
Chrome reported), or put page content, file content or a secret into a log line.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import inspect
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Annotated, Any, Protocol, cast

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CallToolResult, ImageContent
from pydantic import Field, ValidationError
from pydantic.fields import FieldInfo

from tabwarden.errors import TabwardenError
from tabwarden.mcp_server.bridge_client import BridgeClient, new_command_id
from tabwarden.mcp_server.catalogue import CATALOGUE, Arguments, Local, Relay, Save, ToolSpec
from tabwarden.mcp_server.downloads import DownloadSandbox
from tabwarden.mcp_server.results import error_result, ok_result
from tabwarden.paths import live_endpoints, runtime_dir
from tabwarden.protocol.codes import BAD_REQUEST, CONFIRM_DENIED, CONFIRM_TIMEOUT, INTERNAL_ERROR

#: Reads a file the agent named from the upload sandbox: ``(real path, bytes)``, or raises a
#: ``TabwardenError`` (``uploads.UploadRefused``).
ReadUpload = Callable[[str], tuple[Path, bytes]]
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


class Gatekeeper(Protocol):
    """Hop 1's gate (``server.ToolGuard``)."""

    def check(self, tool: str) -> tuple[str, str] | None:
        """``(code, message)`` when this call is refused, else ``None``; audits the decision."""
        ...

    def confirm_timeout(self) -> int: ...

    def outcome(self, tool: str, how: str, code: str) -> None:
        """Audit how a call the gate allowed ended when that is worth a record (a confirmation
        denied or unanswered); never raises."""
        ...


class GatedTool:
    """One catalogue tool as the SDK sees a function: ``__signature__`` publishes the argument
    model's fields as keyword parameters (the input schema) and ``Annotated[CallToolResult,
    result model]`` (the output schema). Calling it runs the gate first, always."""

    def __init__(self, spec: ToolSpec, guard: Gatekeeper, answer: Answer) -> None:
        self.spec = spec
        self._guard = guard
        self._answer = answer
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

    async def __call__(self, **arguments: Any) -> CallToolResult:
        context = arguments.pop(_CONTEXT, None)

        async def progress(count: int, message: str) -> None:
            if isinstance(context, Context):
                await context.report_progress(count, None, message)

        if (refused := self._guard.check(self.spec.name)) is not None:
            return error_result(*refused, read_only=self.spec.read_only)
        try:
            args = self.spec.arguments.model_validate(arguments)
        except ValidationError:  # the SDK validated against the same fields; never echo values
            return error_result(
                BAD_REQUEST,
                f"invalid arguments for {self.spec.name}",
                read_only=self.spec.read_only,
            )
        return await self._answer(self.spec, args, progress)


_CONTEXT = "tabwarden_request_context"


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


def register(server: MCPServer[Any], guard: Gatekeeper, answer: Answer) -> None:
    """Add every catalogue tool to ``server``, each behind ``guard``."""
    for spec in CATALOGUE:
        server.add_tool(
            GatedTool(spec, guard, answer),
            name=spec.name,
            title=spec.title,
            description=spec.description,
            annotations=spec.annotations,
            structured_output=True,
        )


class ToolCalls:
    """How a call the gate let through is made: the bridge, the upload sandbox, local state."""

    def __init__(
        self,
        bridge: BridgeClient,
        guard: Gatekeeper,
        read_upload: ReadUpload,
        downloads: DownloadSandbox | None = None,
    ) -> None:
        self._bridge = bridge
        self._guard = guard
        self._read_upload = read_upload
        self._downloads = downloads or DownloadSandbox.from_env(bridge.env)

    async def answer(self, spec: ToolSpec, args: Arguments, progress: Progress) -> CallToolResult:
        if isinstance(spec.call, Local):
            return ok_result(spec.result.model_validate(await self._local(spec.call)))
        return await self._relay(spec, spec.call, args, progress)

    async def _local(self, call: Local) -> dict[str, Any]:
        status = await self._bridge.status()
        if call is Local.BRIDGE_STATUS:
            return status.as_dict()
        live = live_endpoints(runtime_dir(self._bridge.env))
        current = status.browser if status.host_reachable else None
        return {"browsers": [{"label": ep.label, "current": ep.label == current} for ep in live]}

    async def _relay(
        self, spec: ToolSpec, call: Relay, args: Arguments, progress: Progress
    ) -> CallToolResult:
        action = spec.name
        try:
            request = args.wire()
            if call.sandbox_file is not None:
                request |= self._sandbox_file(str(request[call.sandbox_file]), call.sandbox_file)
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
            return error_result(exc.code, str(exc), read_only=spec.read_only)
        try:
            if call.image:
                return _image(reply, spec)
            if call.save is not None:
                reply = self._save(call.save, reply)
            return ok_result(spec.result.model_validate(reply))
        except TabwardenError as exc:
            return error_result(exc.code, str(exc), read_only=spec.read_only)
        except ValueError:
            return error_result(
                INTERNAL_ERROR,
                f"the extension returned a malformed {action} result",
                read_only=spec.read_only,
            )

    def _save(self, how: Save, reply: dict[str, Any]) -> dict[str, Any]:
        """The reply with the file it carries or names written into the download sandbox, and
        its ``path`` and ``size`` in place of the bytes or Chrome's own path (ValueError when
        the reply is malformed, a ``TabwardenError`` when the sandbox refuses)."""
        if how is Save.BYTES:
            data, name = reply.get("data"), reply.get("name")
            if not isinstance(data, str) or not isinstance(name, str):
                raise ValueError("no file in the reply")
            try:
                content = base64.b64decode(data, validate=True)
            except binascii.Error:
                raise ValueError("the file is not base64") from None
            saved = self._downloads.save_bytes(name, content, fallback="page.pdf")
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

    def _sandbox_file(self, requested: str, argument: str) -> dict[str, str]:
        real, data = self._read_upload(requested)
        return {argument: str(real), "name": real.name, "data": base64.b64encode(data).decode()}


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
        "bytes": len(base64.b64decode(data, validate=False)),
    }
    return CallToolResult(
        content=[ImageContent(type="image", data=data, mime_type=mime_type)],
        structured_content=spec.result.model_validate(meta).model_dump(mode="json"),
    )
