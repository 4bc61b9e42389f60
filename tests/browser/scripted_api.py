"""A scripted Anthropic Messages API on 127.0.0.1, so a real agent CLI (Claude Code) can be driven
offline: instead of a model, a fixed script of tool calls, each checked against the tool result
the agent sends back.

How an agent's request is answered (POST ``/v1/messages``, streamed as server-sent events the way
the real API streams them):

* a request without our MCP tools in its tool list while the agent offers ``WaitForMcpServers``
  (Claude Code's MCP servers are still connecting) → that tool, as a model would call it;
* a request with our tools → the script's progress is read from the conversation itself (which of
  our ``tool_use`` ids have a ``tool_result``), so a retried request gets the same answer; each new
  result is checked once, then the next step's ``tool_use`` goes out, or ``end_turn`` when done;
* any other request (titles, summaries) → a short text.

A failed check is recorded in ``failures`` and answered with ``end_turn`` text naming it, so the
agent stops. Never touches the network: it only listens on loopback."""

from __future__ import annotations

import contextlib
import http.server
import json
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

#: Our MCP server as Claude Code names its tools: ``mcp__<server>__<tool>``.
PREFIX = "mcp__tabwarden__"
WAIT_TOOL = "WaitForMcpServers"
MAX_WAITS = 20


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
    """One tool call: ``tool`` (without the prefix), its input from the results so far, and the
    check its result must pass (raise ``AssertionError`` to fail)."""

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


def _result_of(block: dict[str, Any]) -> ToolResult:
    content = block.get("content")
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content or []
    texts = tuple(b["text"] for b in blocks if isinstance(b, dict) and b.get("type") == "text")
    images = tuple(b for b in blocks if isinstance(b, dict) and b.get("type") == "image")
    return ToolResult(is_error=block.get("is_error") is True, texts=texts, images=images)


def _our_results(messages: list[Any]) -> list[ToolResult]:
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
                found[int(tool_id[9:])] = _result_of(block)
    results: list[ToolResult] = []
    while len(results) in found:  # contiguous from step 0
        results.append(found[len(results)])
    return results


class _Answer:
    """The next assistant message, as SSE events."""

    def __init__(self, model: str) -> None:
        self.model = model

    def events(self, block: dict[str, Any], stop_reason: str) -> bytes:
        message: dict[str, Any] = {
            "id": "msg_scripted",
            "type": "message",
            "role": "assistant",
            "model": self.model,
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
        return b"".join(
            f"event: {name}\ndata: {json.dumps(data)}\n\n".encode() for name, data in out
        )


def _answer(script: Script, body: dict[str, Any]) -> tuple[dict[str, Any], str]:
    tools = [t.get("name") for t in body.get("tools") or [] if isinstance(t, dict)]
    ours = [t for t in tools if isinstance(t, str) and t.startswith(PREFIX)]
    if not tools:
        return {"type": "text", "text": "ok"}, "end_turn"
    with script.lock:
        script.requests += 1
        if not ours:
            if WAIT_TOOL in tools and script.waits < MAX_WAITS and not script.finished:
                script.waits += 1
                block = {"type": "tool_use", "id": f"toolu_wait_{script.waits}", "name": WAIT_TOOL}
                return {**block, "input": {"servers": ["tabwarden"]}}, "tool_use"
            return {"type": "text", "text": "no tabwarden tools"}, "end_turn"
        results = _our_results(body.get("messages") or [])
        for n in range(len(script.results), len(results)):  # each new result checked once
            script.results.append(results[n])
            try:
                script.steps[n].check(results[n])
            except AssertionError as exc:
                script.failures.append(f"step {n} ({script.steps[n].tool}): {exc}")
        if script.failures:
            script.finished = True
            return {"type": "text", "text": f"stopping: {script.failures[0]}"}, "end_turn"
        n = len(results)
        if n >= len(script.steps):
            script.finished = True
            return {"type": "text", "text": "all steps done"}, "end_turn"
        step = script.steps[n]
        if PREFIX + step.tool not in ours:
            script.failures.append(f"step {n}: the agent does not offer {PREFIX}{step.tool}")
            return {"type": "text", "text": "missing tool"}, "end_turn"
        try:
            args = step.args(list(script.results))
        except AssertionError as exc:
            script.failures.append(f"step {n} ({step.tool}) input: {exc}")
            return {"type": "text", "text": "cannot continue"}, "end_turn"
        return {
            "type": "tool_use", "id": f"toolu_tw_{n}", "name": PREFIX + step.tool, "input": args,
        }, "tool_use"  # fmt: skip


@contextlib.contextmanager
def scripted_api(script: Script) -> Iterator[str]:
    """Serve the Messages API for ``script`` on 127.0.0.1; yields the base URL."""

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
            self._send(404, "application/json", b'{"type":"error"}')

        def do_POST(self) -> None:  # noqa: N802
            length = int(self.headers.get("content-length") or 0)
            try:
                body = json.loads(self.rfile.read(length) or b"{}")
            except ValueError:
                self._send(400, "application/json", b'{"type":"error"}')
                return
            if "count_tokens" in self.path:
                self._send(200, "application/json", b'{"input_tokens": 1}')
                return
            block, stop = _answer(script, body)
            model = str(body.get("model", "scripted"))
            if body.get("stream"):
                self._send(200, "text/event-stream", _Answer(model).events(block, stop))
                return
            message = {
                "id": "msg_scripted", "type": "message", "role": "assistant", "model": model,
                "content": [block], "stop_reason": stop, "stop_sequence": None,
                "usage": {"input_tokens": 1, "output_tokens": 1},
            }  # fmt: skip
            self._send(200, "application/json", json.dumps(message).encode())

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
