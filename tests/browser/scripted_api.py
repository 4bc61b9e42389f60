"""A scripted model API on 127.0.0.1, so a real agent CLI can be driven offline: instead of a
model, a fixed ``Script`` of tool calls (``Step``s), each checked against the tool result the
agent sends back. One script, two wire formats, each streamed as server-sent events the way the
real API streams them:

* ``scripted_messages_api`` — Anthropic Messages (POST ``/v1/messages``), for Claude Code;
* ``scripted_responses_api`` — OpenAI Responses (POST ``/v1/responses``), for Codex through a
  ``model_providers`` entry whose ``base_url`` points here (``wire_api = "responses"``).

Either way the script's progress is read from the conversation itself (which of our tool calls,
ids ``toolu_tw_<n>`` / ``call_tw_<n>``, have a result), so a retried request gets the same
answer; each new result is checked once (``_advance``), then the next step's call goes out, or a
closing text when done. A failed check is recorded in ``failures`` and answered with a text
naming it, so the agent stops. Until our MCP server's tools show up in a request (the agent's MCP
servers may still be connecting), the script calls the agent's own harmless waiting tool, as a
model would:

* Claude Code offers ``WaitForMcpServers`` (at most ``MAX_WAITS`` calls); a request with no tools
  at all (titles, summaries) gets a short text;
* Codex lists an MCP server's tools as one ``namespace`` tool (``mcp__tabwarden``); until it
  appears, its built-in ``list_mcp_resources`` (read-only, answered at once), for at most
  ``WAIT_S``.

Never touches the network: it only listens on loopback."""

from __future__ import annotations

import contextlib
import http.server
import json
import re
import threading
import time
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass, field
from typing import Any

#: Our MCP server as both agents name it.
SERVER = "tabwarden"
#: Claude Code's names for our tools: ``mcp__<server>__<tool>``.
PREFIX = f"mcp__{SERVER}__"
#: Claude Code's own tool for waiting on its MCP servers.
WAIT_TOOL = "WaitForMcpServers"
MAX_WAITS = 20
#: Codex offers our tools as one namespace tool of this name.
NAMESPACE = f"mcp__{SERVER}"
#: Codex's built-in MCP resource lookup: harmless, and answered without waiting.
LOOKUP = "list_mcp_resources"
WAIT_S = 120.0  # how long the Codex script looks for our server: a hang guard, not a goal
#: Codex puts this before an MCP tool's text output.
_WALL_TIME = "Wall time:"
_TOOL_ERROR = re.compile(r"[a-z_]+: [^\n]*\nhint: ")


@dataclass(frozen=True)
class ToolResult:
    """What the agent sent back for one of our tool calls."""

    is_error: bool
    texts: tuple[str, ...]
    images: tuple[dict[str, Any], ...]

    @property
    def text(self) -> str:
        return "\n".join(self.texts)

    def json(self) -> dict[str, Any]:
        """The first text block that is a JSON object (tabwarden's results carry one)."""
        for text in self.texts:
            with contextlib.suppress(ValueError):
                value = json.loads(text)
                if isinstance(value, dict):
                    return value
        raise AssertionError(f"no JSON object in the tool result: {self.text[:500]!r}")


@dataclass(frozen=True)
class Step:
    """One tool call: ``tool`` (our MCP tool's own name), its input from the results so far, and
    the check its result must pass (raise ``AssertionError`` to fail)."""

    tool: str
    args: Callable[[list[ToolResult]], dict[str, Any]]
    check: Callable[[ToolResult], None]


@dataclass
class Script:
    steps: list[Step]
    results: list[ToolResult] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    requests: int = 0
    waits: int = 0
    finished: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)


# -- the script, whatever the wire --


@dataclass(frozen=True)
class _Call:
    """Step ``n``'s call of ``tool`` with ``args``."""

    n: int
    tool: str
    args: dict[str, Any]


def _contiguous(found: dict[int, ToolResult]) -> list[ToolResult]:
    """Results by step number, in step order, as far as they run unbroken from step 0."""
    results: list[ToolResult] = []
    while len(results) in found:
        results.append(found[len(results)])
    return results


def _advance(script: Script, results: list[ToolResult], offered: Collection[str]) -> _Call | str:
    """Check each result not seen before (once), then the next step's call, or the text that
    ends the turn. ``offered``: our tools the agent offers, by their own names. Call with
    ``script.lock`` held."""
    for n in range(len(script.results), len(results)):
        script.results.append(results[n])
        try:
            script.steps[n].check(results[n])
        except AssertionError as exc:
            script.failures.append(f"step {n} ({script.steps[n].tool}): {exc}")
    if script.failures:
        script.finished = True
        return f"stopping: {script.failures[0]}"
    n = len(results)
    if n >= len(script.steps):
        script.finished = True
        return "all steps done"
    step = script.steps[n]
    if step.tool not in offered:
        script.failures.append(f"step {n}: the agent does not offer {step.tool}")
        return "missing tool"
    try:
        args = step.args(list(script.results))
    except AssertionError as exc:
        script.failures.append(f"step {n} ({step.tool}) input: {exc}")
        return "cannot continue"
    return _Call(n, step.tool, args)


# -- the one HTTP server both wires share --

#: A wire's answer to a POST: (path, JSON body) -> (status, content type, bytes).
Answer = Callable[[str, dict[str, Any]], tuple[int, str, bytes]]


@contextlib.contextmanager
def _serve(answer: Answer, error: bytes, base: str) -> Iterator[str]:
    """Serve ``answer`` on 127.0.0.1 (``error`` is the wire's body for a GET or a POST that is
    not JSON); yields the base URL plus ``base``."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def _send(self, status: int, kind: str, data: bytes) -> None:
            self.send_response(status)
            self.send_header("content-type", kind)
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:  # noqa: N802
            self._send(404, "application/json", error)

        def do_POST(self) -> None:  # noqa: N802
            length = int(self.headers.get("content-length") or 0)
            try:
                body = json.loads(self.rfile.read(length) or b"{}")
            except ValueError:
                self._send(400, "application/json", error)
                return
            self._send(*answer(self.path, body if isinstance(body, dict) else {}))

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}{base}"
    finally:
        server.shutdown()
        server.server_close()


def _sse(events: list[tuple[str, dict[str, Any]]]) -> bytes:
    return b"".join(
        f"event: {name}\ndata: {json.dumps(data)}\n\n".encode() for name, data in events
    )


# -- Anthropic Messages (Claude Code) --


def _tool_result(block: dict[str, Any]) -> ToolResult:
    content = block.get("content")
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
    texts = tuple(b["text"] for b in blocks if isinstance(b, dict) and b.get("type") == "text")
    images = tuple(b for b in blocks if isinstance(b, dict) and b.get("type") == "image")
    return ToolResult(is_error=block.get("is_error") is True, texts=texts, images=images)


def _tool_results(messages: list[Any]) -> list[ToolResult]:
    """The results of our ``tool_use`` blocks (ids ``toolu_tw_<n>``), in step order."""
    found: dict[int, ToolResult] = {}
    for message in messages:
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, list):
            continue
        for block in content:
            if not isinstance(block, dict) or block.get("type") != "tool_result":
                continue
            tool_id = str(block.get("tool_use_id", ""))
            if tool_id.startswith("toolu_tw_") and tool_id[9:].isdigit():
                found[int(tool_id[9:])] = _tool_result(block)
    return _contiguous(found)


def _message_events(model: str, block: dict[str, Any], stop_reason: str) -> bytes:
    """The assistant message holding ``block``, as the Messages API streams it."""
    message: dict[str, Any] = {
        "id": "msg_scripted",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }
    out: list[tuple[str, dict[str, Any]]] = [
        ("message_start", {"type": "message_start", "message": message})
    ]
    if block["type"] == "tool_use":
        start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
        out += [
            ("content_block_start", {"type": "content_block_start", "index": 0,
                                     "content_block": start}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {
                "type": "input_json_delta", "partial_json": json.dumps(block["input"])}}),
        ]  # fmt: skip
    else:
        out += [
            ("content_block_start", {"type": "content_block_start", "index": 0,
                                     "content_block": {"type": "text", "text": ""}}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                     "delta": {"type": "text_delta", "text": block["text"]}}),
        ]  # fmt: skip
    out += [
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {"type": "message_delta", "usage": {"output_tokens": 1},
                           "delta": {"stop_reason": stop_reason, "stop_sequence": None}}),
        ("message_stop", {"type": "message_stop"}),
    ]  # fmt: skip
    return _sse(out)


def _message_block(script: Script, body: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """The next assistant content block and its stop reason."""
    tools = [t.get("name") for t in body.get("tools") or [] if isinstance(t, dict)]
    ours = {t.removeprefix(PREFIX) for t in tools if isinstance(t, str) and t.startswith(PREFIX)}
    if not tools:
        return {"type": "text", "text": "ok"}, "end_turn"
    with script.lock:
        script.requests += 1
        if not ours:
            if WAIT_TOOL in tools and script.waits < MAX_WAITS and not script.finished:
                script.waits += 1
                block = {"type": "tool_use", "id": f"toolu_wait_{script.waits}", "name": WAIT_TOOL}
                return {**block, "input": {"servers": [SERVER]}}, "tool_use"
            return {"type": "text", "text": "no tabwarden tools"}, "end_turn"
        step = _advance(script, _tool_results(body.get("messages") or []), ours)
    if isinstance(step, str):
        return {"type": "text", "text": step}, "end_turn"
    return {
        "type": "tool_use", "id": f"toolu_tw_{step.n}", "name": PREFIX + step.tool,
        "input": step.args,
    }, "tool_use"  # fmt: skip


@contextlib.contextmanager
def scripted_messages_api(script: Script) -> Iterator[str]:
    """Serve the Messages API for ``script`` on 127.0.0.1; yields the base URL."""

    def answer(path: str, body: dict[str, Any]) -> tuple[int, str, bytes]:
        if "count_tokens" in path:
            return 200, "application/json", b'{"input_tokens": 1}'
        block, stop = _message_block(script, body)
        model = str(body.get("model", "scripted"))
        if body.get("stream"):
            return 200, "text/event-stream", _message_events(model, block, stop)
        message = {
            "id": "msg_scripted", "type": "message", "role": "assistant", "model": model,
            "content": [block], "stop_reason": stop, "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1},
        }  # fmt: skip
        return 200, "application/json", json.dumps(message).encode()

    with _serve(answer, b'{"type":"error"}', "") as url:
        yield url


# -- OpenAI Responses (Codex) --


def _output_result(output: Any) -> ToolResult:
    """A ``function_call_output``'s output: a string, or a list of content items. Codex sends
    the model no error flag: a tabwarden error is known by its text (``<code>: …`` then a
    ``hint:`` line, as every tool error starts)."""
    items = [{"type": "input_text", "text": output}] if isinstance(output, str) else output or []
    texts: list[str] = []
    for item in items:
        if isinstance(item, dict) and item.get("type") in ("input_text", "output_text", "text"):
            text = str(item.get("text", ""))
            if text.startswith(_WALL_TIME):  # "Wall time: 0.01 seconds\nOutput:[\n<text>]"
                text = text.partition("Output:")[2].removeprefix("\n")
            if text:
                texts.append(text)
    images = tuple(i for i in items if isinstance(i, dict) and i.get("type") == "input_image")
    failed = any(_TOOL_ERROR.match(t) for t in texts)
    return ToolResult(is_error=failed, texts=tuple(texts), images=images)


def _call_outputs(items: list[Any]) -> list[ToolResult]:
    """The outputs of our function calls (call ids ``call_tw_<n>``), in step order."""
    found: dict[int, ToolResult] = {}
    for item in items:
        if not isinstance(item, dict) or item.get("type") != "function_call_output":
            continue
        call_id = str(item.get("call_id", ""))
        if call_id.startswith("call_tw_") and call_id[8:].isdigit():
            found[int(call_id[8:])] = _output_result(item.get("output"))
    return _contiguous(found)


def _text_item(text: str) -> dict[str, Any]:
    content = [{"type": "output_text", "text": text, "annotations": []}]
    return {
        "type": "message",
        "id": "msg_scripted",
        "role": "assistant",
        "status": "completed",
        "content": content,
    }


def _call_item(
    call_id: str, name: str, args: dict[str, Any], namespace: str | None
) -> dict[str, Any]:
    item: dict[str, Any] = {
        "type": "function_call",
        "id": f"fc_{call_id}",
        "call_id": call_id,
        "name": name,
        "arguments": json.dumps(args),
        "status": "completed",
    }
    if namespace is not None:
        item["namespace"] = namespace
    return item


class _Responder:
    def __init__(self, script: Script) -> None:
        self.script = script
        self.first_wait: float | None = None
        self.served = 0

    def next_item(self, body: dict[str, Any]) -> dict[str, Any]:
        script = self.script
        tools = [t for t in body.get("tools") or [] if isinstance(t, dict)]
        ours = next(
            (t for t in tools if t.get("type") == "namespace" and t.get("name") == NAMESPACE),
            None,
        )
        with script.lock:
            script.requests += 1
            if ours is None:
                now = time.monotonic()
                self.first_wait = now if self.first_wait is None else self.first_wait
                if script.finished or now - self.first_wait > WAIT_S:
                    return _text_item("no tabwarden tools")
                script.waits += 1
                return _call_item(f"call_wait_{script.waits}", LOOKUP, {}, None)
            offered = {str(t.get("name")) for t in ours.get("tools") or [] if isinstance(t, dict)}
            step = _advance(script, _call_outputs(body.get("input") or []), offered)
        if isinstance(step, str):
            return _text_item(step)
        return _call_item(f"call_tw_{step.n}", step.tool, step.args, NAMESPACE)

    def events(self, item: dict[str, Any]) -> bytes:
        self.served += 1
        rid = f"resp_scripted_{self.served}"
        usage = {
            "input_tokens": 1,
            "output_tokens": 1,
            "total_tokens": 2,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 0},
        }
        events: list[dict[str, Any]] = [
            {"type": "response.created", "response": {"id": rid}},
            {"type": "response.output_item.added", "output_index": 0, "item": item},
            {"type": "response.output_item.done", "output_index": 0, "item": item},
            {"type": "response.completed", "response": {"id": rid, "usage": usage}},
        ]
        return _sse([(e["type"], e) for e in events])


@contextlib.contextmanager
def scripted_responses_api(script: Script) -> Iterator[str]:
    """Serve the Responses API for ``script`` on 127.0.0.1; yields the base URL (with ``/v1``)."""
    responder = _Responder(script)
    lock = threading.Lock()

    def answer(path: str, body: dict[str, Any]) -> tuple[int, str, bytes]:
        if not path.endswith("/responses"):
            return 404, "application/json", b'{"error":"not scripted"}'
        item = responder.next_item(body)
        with lock:  # response ids count up, as the server served them
            return 200, "text/event-stream", responder.events(item)

    with _serve(answer, b'{"error":"not scripted"}', "/v1") as url:
        yield url
