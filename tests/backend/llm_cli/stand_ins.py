"""Stand-in executables for the agent CLIs' headless modes, written into tmp_path and put first on
PATH: each checks the flags it is given, logs its stdin, and answers in its CLI's JSON shape, or
with the CLI's signed-out or rate-limit failure, as its mode file says."""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

SCRIPT = r"""#!{python}
import json, re, sys
AGENT, LOG, MODE = {agent!r}, {log!r}, {mode!r}
args = sys.argv[1:]
if args == ["--version"]:
    print({{"claude": "2.0.14 (Claude Code)", "codex": "codex-cli 0.58.0", "gemini": "0.40.1"}}[AGENT])
    sys.exit(0)
need = {{
    "claude": ["-p", "--output-format", "json", "--no-session-persistence"],
    "codex": ["exec", "--json", "--ephemeral", "--skip-git-repo-check"],
    "gemini": ["--output-format", "json", "--prompt"],
}}[AGENT]
if any(flag not in args for flag in need) or (AGENT == "codex" and args[-1] != "-"):
    print(f"usage error: {{args}}", file=sys.stderr)
    sys.exit(2)
prompt = sys.stdin.read()
with open(LOG, "a") as out:
    out.write(json.dumps({{"argv": args, "prompt": prompt}}) + "\n")
mode = open(MODE).read().strip()
turns = re.findall(r'### turn "([^"]+)"', prompt)
answer = json.dumps({{"turns": [
    {{"turn": t, "events": [{{"summary": "The team agreed to ship on Friday via the stand-in", "kind": "decision"}}]}}
    for t in turns
]}})
tokens_in, tokens_out = len(prompt) // 4, len(answer) // 4
if AGENT == "claude":
    if mode == "signed-out":
        print(json.dumps({{"type": "result", "subtype": "success", "is_error": True, "result": "Invalid API key · Please run /login"}}))
        sys.exit(1)
    if mode == "rate-limit":
        print(json.dumps({{"type": "result", "subtype": "success", "is_error": True, "result": "Claude AI usage limit reached|1767000000"}}))
        sys.exit(1)
    print(json.dumps({{"type": "result", "subtype": "success", "is_error": False, "result": answer, "session_id": "s",
        "total_cost_usd": 0.01, "usage": {{"input_tokens": tokens_in, "output_tokens": tokens_out}},
        "modelUsage": {{"claude-sonnet-4-5": {{"inputTokens": tokens_in}}}}}}))
elif AGENT == "codex":
    print(json.dumps({{"type": "thread.started", "thread_id": "t"}}))
    if mode == "signed-out":
        print(json.dumps({{"type": "error", "message": "Not logged in: run codex login"}}))
        sys.exit(1)
    print(json.dumps({{"type": "turn.started"}}))
    if mode == "rate-limit":
        print(json.dumps({{"type": "turn.failed", "error": {{"message": "You've hit your usage limit. Try again later."}}}}))
        sys.exit(1)
    print(json.dumps({{"type": "item.completed", "item": {{"id": "item_0", "type": "agent_message", "text": answer}}}}))
    print(json.dumps({{"type": "turn.completed", "usage": {{"input_tokens": tokens_in, "cached_input_tokens": 0, "output_tokens": tokens_out}}}}))
else:
    if mode == "signed-out":
        print(json.dumps({{"error": {{"type": "FatalAuthenticationError", "message": "Please set an Auth method", "code": 41}}}}), file=sys.stderr)
        sys.exit(41)
    if mode == "rate-limit":
        print(json.dumps({{"error": {{"type": "Error", "message": "[429] Quota exceeded for quota metric", "code": 429}}}}))
        sys.exit(1)
    import hashlib, os
    if os.environ.get("GEMINI_CLI_HOME"):  # Gemini CLI records -p runs too, under the folder's project
        chats = os.path.join(os.environ["GEMINI_CLI_HOME"], ".gemini", "tmp", "llm-cli", "chats")
        os.makedirs(chats, exist_ok=True)
        with open(os.path.join(chats, "..", ".project_root"), "w") as marker:
            marker.write(os.getcwd())
        with open(os.path.join(chats, "session-" + hashlib.sha1(prompt.encode()).hexdigest()[:8] + ".json"), "w") as chat:
            chat.write(json.dumps({{"sessionId": "s", "messages": [{{"type": "user", "content": prompt}}]}}))
    print(json.dumps({{"session_id": "s", "response": answer, "stats": {{"models": {{"gemini-2.5-pro": {{"tokens": {{
        "prompt": tokens_in, "candidates": tokens_out, "total": tokens_in + tokens_out}}}}}}}}}}))
"""


class StandIn:
    """One stand-in CLI in `bin_dir`; `mode` switches how it answers; `calls` are what it was sent."""

    def __init__(self, bin_dir: Path, agent: str) -> None:
        bin_dir.mkdir(parents=True, exist_ok=True)
        self.agent = agent
        self.log = bin_dir / f"{agent}.calls.jsonl"
        self.mode_file = bin_dir / f"{agent}.mode"
        self.mode = "ok"
        path = bin_dir / agent
        path.write_text(SCRIPT.format(python=sys.executable, agent=agent, log=str(self.log), mode=str(self.mode_file)))
        path.chmod(0o755)

    @property
    def mode(self) -> str:
        return self.mode_file.read_text()

    @mode.setter
    def mode(self, value: str) -> None:
        self.mode_file.write_text(value)

    @property
    def calls(self) -> list[dict[str, Any]]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines()]


@contextmanager
def ollama_server(mode: str = "ok") -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """Ollama's local API on 127.0.0.1: /api/version and /api/chat (non-streaming, format json)."""
    bodies: list[dict[str, Any]] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

        def _send(self, status: int, data: dict[str, Any]) -> None:
            raw = json.dumps(data).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

        def do_GET(self) -> None:
            self._send(200, {"version": "0.12.3"}) if self.path == "/api/version" else self._send(404, {})

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
            bodies.append(body)
            if mode == "rate-limit":
                self._send(429, {"error": "too many requests"})
                return
            import re

            prompt = "\n".join(m["content"] for m in body["messages"])
            turns = re.findall(r'### turn "([^"]+)"', prompt)
            answer = {
                "turns": [
                    {"turn": t, "events": [{"summary": "Ollama says ship on Friday", "kind": "decision"}]}
                    for t in turns
                ]
            }
            self._send(200, {"model": body["model"], "message": {"role": "assistant", "content": json.dumps(answer)},
                             "done": True, "prompt_eval_count": 50, "eval_count": 10})  # fmt: skip

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        host, port = httpd.server_address[:2]
        yield f"http://{host}:{port}", bodies
    finally:
        httpd.shutdown()
        httpd.server_close()
