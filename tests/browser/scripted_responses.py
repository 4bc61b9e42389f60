"""A scripted OpenAI Responses API on 127.0.0.1, so Codex can be driven offline the way
tests/browser/scripted_api.py drives Claude Code: the same ``Script`` of ``Step``s (a tool call
each, checked against the result the agent sends back), spoken as POST ``/v1/responses``
streamed as server-sent events, for a Codex ``model_providers`` entry whose ``base_url`` points
here (``wire_api = "responses"``).

How a request is answered:

* Codex lists an MCP server's tools as one ``namespace`` tool (``mcp__tabwarden``) once that
  server has started, which may be after its first request; until the namespace appears the
  script calls Codex's own ``list_mcp_resources`` (read-only, answered at once), as a model
  would look for its server, for at most ``WAIT_S``;
* with our namespace → progress is read from the conversation itself (which of our
  ``call_tw_<n>`` function calls have a ``function_call_output``), each new output checked once,
  then the next step's function call (``namespace`` + tool name), or a text when done.

A failed check is recorded in ``failures`` and answered with a text naming it, so the agent
stops. Never touches the network: it only listens on loopback."""

from __future__ import annotations

import contextlib
import http.server
import json
import re
import threading
import time
from collections.abc import Iterator
from typing import Any

from tests.browser.scripted_api import Script, ToolResult

#: Our MCP server's tools as Codex offers them: one namespace tool.
NAMESPACE = "mcp__tabwarden"
#: Codex's built-in MCP resource lookup: harmless, and answered without waiting.
LOOKUP = "list_mcp_resources"
WAIT_S = 120.0  # how long the script looks for our server: a hang guard, not a goal
#: Codex puts this before an MCP tool's text output.
_WALL_TIME = "Wall time:"
_TOOL_ERROR = re.compile(r"[a-z_]+: [^\n]*\nhint: ")


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


def _our_outputs(items: list[Any]) -> list[ToolResult]:
    """The outputs of our function calls (call ids ``call_tw_<n>``), in step order."""
    found: dict[int, ToolResult] = {}
    for item in items:
        if not isinstance(item, dict) or item.get("type") != "function_call_output":
            continue
        call_id = str(item.get("call_id", ""))
        if call_id.startswith("call_tw_") and call_id[8:].isdigit():
            found[int(call_id[8:])] = _output_result(item.get("output"))
    results: list[ToolResult] = []
    while len(results) in found:  # contiguous from step 0
        results.append(found[len(results)])
    return results


def _text(text: str) -> dict[str, Any]:
    content = [{"type": "output_text", "text": text, "annotations": []}]
    return {
        "type": "message",
        "id": "msg_scripted",
        "role": "assistant",
        "status": "completed",
        "content": content,
    }


def _call(call_id: str, name: str, args: dict[str, Any], namespace: str | None) -> dict[str, Any]:
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
                    return _text("no tabwarden tools")
                script.waits += 1
                return _call(f"call_wait_{script.waits}", LOOKUP, {}, None)
            offered = {t.get("name") for t in ours.get("tools") or [] if isinstance(t, dict)}
            results = _our_outputs(body.get("input") or [])
            for n in range(len(script.results), len(results)):  # each new output checked once
                script.results.append(results[n])
                try:
                    script.steps[n].check(results[n])
                except AssertionError as exc:
                    script.failures.append(f"step {n} ({script.steps[n].tool}): {exc}")
            if script.failures:
                script.finished = True
                return _text(f"stopping: {script.failures[0]}")
            n = len(results)
            if n >= len(script.steps):
                script.finished = True
                return _text("all steps done")
            step = script.steps[n]
            if step.tool not in offered:
                script.failures.append(f"step {n}: the agent does not offer {step.tool}")
                return _text("missing tool")
            try:
                args = step.args(list(script.results))
            except AssertionError as exc:
                script.failures.append(f"step {n} ({step.tool}) input: {exc}")
                return _text("cannot continue")
            return _call(f"call_tw_{n}", step.tool, args, NAMESPACE)


def _events(item: dict[str, Any], number: int) -> bytes:
    rid = f"resp_scripted_{number}"
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
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


@contextlib.contextmanager
def scripted_responses_api(script: Script) -> Iterator[str]:
    """Serve the Responses API for ``script`` on 127.0.0.1; yields the base URL (with ``/v1``)."""
    responder = _Responder(script)
    served = [0]

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
            self._send(404, "application/json", b'{"error":"not scripted"}')

        def do_POST(self) -> None:  # noqa: N802
            length = int(self.headers.get("content-length") or 0)
            try:
                body = json.loads(self.rfile.read(length) or b"{}")
            except ValueError:
                self._send(400, "application/json", b'{"error":"not json"}')
                return
            if not self.path.endswith("/responses"):
                self._send(404, "application/json", b'{"error":"not scripted"}')
                return
            item = responder.next_item(body)
            served[0] += 1
            self._send(200, "text/event-stream", _events(item, served[0]))

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
