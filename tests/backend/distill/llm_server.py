"""A real HTTP server on 127.0.0.1 that speaks the OpenAI chat-completions API, scripted per test."""

from __future__ import annotations

import json
import threading
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    """One scripted answer: a completion's text, or a raw status/body (errors, malformed replies)."""

    text: str | None = None
    status: int = 200
    body: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    hang: bool = False  # never answer (until the server stops): the client's timeout fires
    gate: threading.Event | None = None  # answer only once the test sets it
    usage: tuple[int, int] = (100, 20)


def completion(text: str, usage: tuple[int, int] = (100, 20)) -> dict[str, Any]:
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "model": "test-model",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1], "total_tokens": sum(usage)},
    }


class ChatServer:
    """Answers POST /v1/chat/completions from a queue of Replies; records every request body."""

    def __init__(self) -> None:
        self.replies: deque[Reply] = deque()
        self.default: Reply | None = None
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.stop = threading.Event()
        self.arrived = threading.Event()  # set at each request (a test clears it to wait for the next)
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                server.requests.append(json.loads(raw) if raw else {})
                server.headers.append(dict(self.headers))
                server.arrived.set()
                if self.path.rstrip("/") != "/v1/chat/completions":
                    self._send(404, json.dumps({"error": {"message": f"no route {self.path}"}}), {})
                    return
                reply = server.replies.popleft() if server.replies else server.default
                if reply is None:
                    self._send(500, json.dumps({"error": {"message": "no scripted reply"}}), {})
                    return
                if reply.hang:
                    server.stop.wait(30)
                    return
                if reply.gate is not None:
                    reply.gate.wait(30)
                body = reply.body if reply.body is not None else json.dumps(completion(reply.text or "", reply.usage))
                self._send(reply.status, body, reply.headers)

            def _send(self, status: int, body: str, headers: dict[str, str]) -> None:
                data = body.encode("utf-8")
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for key, value in headers.items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def __enter__(self) -> ChatServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.httpd.shutdown()
        self.httpd.server_close()
