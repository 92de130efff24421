"""Generates the bad-input corpus: for every importer, files that start from valid records and
are damaged one way each (truncated, invalid JSON, wrong types, a huge line, binary garbage,
deep nesting, unusual Unicode, wrong encodings). Run alone to write a corpus to look at:

    python tests/reliability/nasty_files.py OUT_DIR [--huge-mb 50]

Every file also holds a marker text in a valid record before the damage ("rest still read").
"""

from __future__ import annotations

import json
import random
import sys
from collections.abc import Callable
from pathlib import Path

MARKER = "the good line before the damage"
SOURCES = ("claude", "codex", "gemini", "aider", "openprogram", "jsonl", "copilot", "qwen", "droid", "kimi")
UNICODE = "\u202eRTL\u202c zero\u200bwidth \ufeffbom \u0000nul \U0001f600 e\u0301 \u2028sep"
WRONG_VALUES: list[object] = [None, 1, -1.5, True, "", "x" * 300, [], [1, [2]], {}, {"a": {"b": None}}, 1e308]


def claude_lines(marker: str) -> list[dict]:
    sid = "11111111-2222-3333-4444-555555555555"
    base = {"isSidechain": False, "userType": "external", "cwd": "/tmp/p", "sessionId": sid, "version": "2.1.40"}
    return [
        base | {"type": "user", "uuid": "u1", "parentUuid": None, "timestamp": "2025-06-01T12:00:01.000Z",
                "message": {"role": "user", "content": marker}},
        base | {"type": "assistant", "uuid": "a1", "parentUuid": "u1", "timestamp": "2025-06-01T12:00:02.000Z",
                "requestId": "r1", "message": {"model": "m", "id": "msg1", "type": "message", "role": "assistant",
                "content": [{"type": "text", "text": "reply one"},
                            {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}}],
                "usage": {"input_tokens": 1, "output_tokens": 1}}},
        base | {"type": "user", "uuid": "u2", "parentUuid": "a1", "timestamp": "2025-06-01T12:00:03.000Z",
                "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "a.txt"}]}},
        base | {"type": "user", "uuid": "u3", "parentUuid": "u2", "timestamp": "2025-06-01T12:00:04.000Z",
                "message": {"role": "user", "content": "second prompt"}},
    ]  # fmt: skip


def codex_lines(marker: str) -> list[dict]:
    def rec(n: int, kind: str, payload: dict) -> dict:
        return {"timestamp": f"2026-01-01T00:00:{n:02d}.000Z", "type": kind, "payload": payload}

    return [
        rec(0, "session_meta", {"id": "0199aaaa-0000-7000-8000-000000000001", "cwd": "/repo", "originator": "codex_cli_rs",
                                "cli_version": "0.60.0", "source": "cli"}),
        rec(1, "response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": marker}]}),
        rec(2, "event_msg", {"type": "user_message", "message": marker, "images": []}),
        rec(3, "response_item", {"type": "function_call", "name": "shell", "call_id": "c1",
                                 "arguments": json.dumps({"command": ["bash", "-lc", "ls"]})}),
        rec(4, "response_item", {"type": "function_call_output", "call_id": "c1", "output": "a.txt"}),
        rec(5, "response_item", {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "done"}]}),
        rec(6, "event_msg", {"type": "agent_message", "message": "done"}),
    ]  # fmt: skip


def gemini_lines(marker: str) -> list[dict]:
    return [
        {"sessionId": "5f0c2a1e-aaaa-bbbb-cccc-000000000001", "projectHash": "ab" * 32,
         "startTime": "2026-04-29T21:39:22.319Z", "lastUpdated": "2026-04-29T21:39:22.319Z", "kind": "main"},
        {"id": "m1", "timestamp": "2026-04-29T21:40:00.000Z", "type": "user", "content": [{"text": marker}]},
        {"id": "m2", "timestamp": "2026-04-29T21:40:30.000Z", "type": "gemini", "content": "answer", "model": "g"},
        {"id": "m3", "timestamp": "2026-04-29T21:41:00.000Z", "type": "user", "content": [{"text": "again"}]},
    ]  # fmt: skip


def jsonl_lines(marker: str) -> list[dict]:
    return [
        {"session": "s1", "id": "m1", "role": "user", "content": marker, "timestamp": 1_700_000_000},
        {"session": "s1", "id": "m2", "role": "assistant", "content": "reply", "timestamp": 1_700_000_001},
        {"session": "s1", "id": "m3", "role": "tool", "content": "out", "name": "Bash", "input": {"command": "ls"}},
        {"session": "s1", "id": "m4", "role": "user", "content": "more", "timestamp": 1_700_000_003},
    ]


def openprogram_nodes(marker: str) -> list[dict]:
    def node(
        seq: int, role: str, nid: str, output: object, caller: str | None, pred: str | None, **extra: object
    ) -> dict:
        return {"id": nid, "created_at": 1_780_000_000.0 + seq, "seq": seq, "role": role, "name": extra.pop("name", ""),
                "input": extra.pop("input", None), "output": output, "caller": caller, "predecessor": pred,
                "reads": [], "metadata": extra}  # fmt: skip

    return [
        node(0, "user", "ROOT", "", None, None, display="root"),
        node(1, "user", "u1", marker, "ROOT", "ROOT", source="tui"),
        node(2, "llm", "u1_reply", "answer", "", "u1", status="completed", model="m"),
        node(3, "user", "u2", "next question", "ROOT", "u1_reply", source="tui"),
    ]


def copilot_lines(marker: str) -> list[dict]:
    def event(n: int, kind: str, data: dict) -> dict:
        return {
            "type": kind,
            "id": f"e{n}",
            "timestamp": f"2026-01-01T00:00:{n:02d}.000Z",
            "parentId": None,
            "data": data,
        }

    return [
        event(1, "session.start", {"sessionId": "cop-1", "selectedModel": "gpt-5", "context": {"cwd": "/tmp/p"}}),
        event(2, "user.message", {"content": marker}),
        event(3, "assistant.message", {"content": "ok", "toolRequests": [
            {"toolCallId": "c1", "name": "bash", "arguments": {"command": "ls"}}]}),
        event(4, "tool.execution_complete", {"toolCallId": "c1", "success": True, "result": {"content": "a"}}),
        event(5, "user.message", {"content": "second prompt"}),
    ]  # fmt: skip


def qwen_lines(marker: str) -> list[dict]:
    def rec(n: int, kind: str, parent: str | None, message: dict, **extra: object) -> dict:
        return {
            "uuid": f"q{n}",
            "parentUuid": parent,
            "sessionId": "q-1",
            "timestamp": f"2026-01-01T00:00:{n:02d}Z",
            "type": kind,
            "cwd": "/tmp/p",
            "message": message,
            **extra,
        }

    return [
        rec(1, "user", None, {"role": "user", "parts": [{"text": marker}]}),
        rec(2, "assistant", "q1", {"role": "model", "parts": [{"functionCall": {"id": "c1", "name": "ls", "args": {}}}]},
            model="qwen3-coder"),
        rec(3, "tool_result", "q2", {"role": "user", "parts": [{"functionResponse": {"id": "c1", "response": {"output": "a"}}}]}),
        rec(4, "user", "q3", {"role": "user", "parts": [{"text": "second prompt"}]}),
    ]  # fmt: skip


def droid_lines(marker: str) -> list[dict]:
    def msg(n: int, parent: str, role: str, content: list) -> dict:
        return {
            "type": "message",
            "id": f"m{n}",
            "parentId": parent,
            "timestamp": f"2026-01-01T00:00:{n:02d}Z",
            "message": {"role": role, "content": content},
        }

    return [
        {"type": "session_start", "id": "droid-1", "title": "t", "cwd": "/tmp/p", "version": "0.81.0"},
        msg(1, "droid-1", "user", [{"type": "text", "text": marker}]),
        msg(2, "m1", "assistant", [{"type": "tool_use", "id": "t1", "name": "Execute", "input": {"command": "ls"}}]),
        msg(3, "m2", "user", [{"type": "tool_result", "tool_use_id": "t1", "content": "a"}]),
        msg(4, "m3", "user", [{"type": "text", "text": "second prompt"}]),
    ]  # fmt: skip


def kimi_lines(marker: str) -> list[dict]:
    def loop(t: int, event: dict) -> dict:
        return {"type": "context.append_loop_event", "event": event, "time": 1781368649000 + t}

    return [
        {"type": "metadata", "protocol_version": "1.4", "created_at": 1781368649000},
        {"type": "turn.prompt", "input": [{"type": "text", "text": marker}], "origin": {"kind": "user"}, "time": 1781368649001},
        loop(2, {"type": "step.begin", "uuid": "s1", "turnId": "0", "step": 1}),
        loop(3, {"type": "tool.call", "uuid": "c1", "stepUuid": "s1", "toolCallId": "c1", "name": "Read", "args": {"path": "a"}}),
        loop(4, {"type": "tool.result", "toolCallId": "c1", "result": {"output": "x", "isError": False}}),
        loop(5, {"type": "step.end", "uuid": "s1"}),
        {"type": "turn.prompt", "input": [{"type": "text", "text": "second prompt"}], "time": 1781368649006},
    ]  # fmt: skip


LINES: dict[str, Callable[[str], list[dict]]] = {
    "claude": claude_lines,
    "codex": codex_lines,
    "gemini": gemini_lines,
    "jsonl": jsonl_lines,
    "copilot": copilot_lines,
    "qwen": qwen_lines,
    "droid": droid_lines,
    "kimi": kimi_lines,
}


def aider_text(marker: str) -> str:
    return (
        "# aider chat started at 2025-01-02 03:04:05\n\n"
        f"#### {marker}\n\nSure, here it is.\n\n> Applied edit to a.py\n\n#### second question\n\nAnswer two.\n"
    )


# ---------------------------------------------------------------------------- damage


def _set_deep(record: dict, rng: random.Random, value: object) -> dict:
    """A copy with one field (maybe nested) replaced by a value of the wrong type."""
    record = json.loads(json.dumps(record))
    target = record
    while True:
        keys = list(target)
        if not keys:
            return record
        key = rng.choice(keys)
        if isinstance(target[key], dict) and target[key] and rng.random() < 0.6:
            target = target[key]
            continue
        target[key] = value
        return record


def _nested(depth: int) -> str:
    return '{"a":' * depth + "1" + "}" * depth


def damages(rng: random.Random, huge_mb: int) -> dict[str, Callable[[list[bytes]], list[bytes]]]:
    """name -> how to damage the lines after the first (which holds the marker)."""
    garbage = bytes(rng.randrange(256) for _ in range(4096))
    return {
        "truncated": lambda lines: [*lines[:-1], lines[-1][: max(1, len(lines[-1]) // 2)]],
        "truncated-mid": lambda lines: [*lines[:2], lines[2][: len(lines[2]) // 3], *lines[3:]],
        "invalid-json": lambda lines: [lines[0], b"{not json, 'x': }", *lines[1:]],
        "not-an-object": lambda lines: [lines[0], b"[1, 2, 3]", b'"a string"', b"42", b"null", *lines[1:]],
        "binary-garbage": lambda lines: [lines[0], garbage, *lines[1:]],
        "nul-bytes": lambda lines: [lines[0], b"\x00" * 64, *lines[1:]],
        "deep-nesting": lambda lines: [lines[0], _nested(200_000).encode(), *lines[1:]],
        "deep-array": lambda lines: [lines[0], b"[" * 100_000 + b"]" * 100_000, *lines[1:]],
        "huge-line": lambda lines: [lines[0], _huge(lines[1], huge_mb), *lines[2:]],
        "huge-garbage-line": lambda lines: [lines[0], b"x" * (huge_mb << 20), *lines[1:]],
        "lone-surrogates": lambda lines: [lines[0], *(_surrogates(line) for line in lines[1:])],
        "unicode": lambda lines: [lines[0], *(_unicode(line) for line in lines[1:])],
        "latin-1": lambda lines: [lines[0], *(_recode(line, "latin-1") for line in lines[1:])],
        "utf-16": lambda lines: [_recode(line, "utf-16") for line in lines],
        "bom-crlf": lambda lines: [b"\xef\xbb\xbf" + lines[0], *(line + b"\r" for line in lines[1:])],
        "invalid-utf8": lambda lines: [lines[0], *(line.replace(b'"', b'"\xff\xfe', 1) for line in lines[1:])],
        "empty-lines": lambda lines: [lines[0], b"", b"   ", b"\t", *lines[1:]],
    }


def _huge(line: bytes, mb: int) -> bytes:
    """A valid record whose longest string is `mb` MB."""
    text = line.decode()
    filler = "y" * (mb << 20)
    return (
        text.replace('"reply', f'"{filler}', 1)
        .replace('"answer', f'"{filler}', 1)
        .replace('"a.txt', f'"{filler}', 1)
        .encode()
    )


def _surrogates(line: bytes) -> bytes:
    return line.replace(b'": "', b'": "\\ud800 lone \\udfff ', 1)


def _unicode(line: bytes) -> bytes:
    encoded = json.dumps(UNICODE)[1:-1].encode()
    return line.replace(b'": "', b'": "' + encoded + b" " + UNICODE.replace("\u0000", "").encode() + b" ", 1)


def _recode(line: bytes, encoding: str) -> bytes:
    text = line.decode().replace('": "', '": "caf\u00e9 na\u00efve ', 1)
    return text.encode(encoding, "replace")


def wrong_types(rng: random.Random, records: list[dict]) -> list[dict]:
    return [records[0], *(_set_deep(r, rng, rng.choice(WRONG_VALUES)) for r in records[1:])]


# ---------------------------------------------------------------------------- files


def write_case(source: str, name: str, folder: Path, rng: random.Random, huge_mb: int) -> Path:
    """One damaged input for `source` under `folder`; returns what to import."""
    folder.mkdir(parents=True, exist_ok=True)
    if source == "aider":
        return _aider_case(name, folder, rng, huge_mb)
    if source == "openprogram":
        return _openprogram_case(name, folder, rng, huge_mb)
    records = LINES[source](MARKER)
    if name == "wrong-types":
        lines = [json.dumps(r).encode() for r in wrong_types(rng, records)]
    else:
        lines = damages(rng, huge_mb)[name]([json.dumps(r).encode() for r in records])
    data = b"\n".join(lines) + (b"" if name == "truncated" else b"\n")
    path = _path_for(source, folder)
    path.write_bytes(data)
    return path


def _path_for(source: str, folder: Path) -> Path:
    if source == "claude":
        return folder / "11111111-2222-3333-4444-555555555555.jsonl"
    if source == "codex":
        return folder / "rollout-2026-01-01T00-00-00-0199aaaa.jsonl"
    if source == "gemini":
        (folder / "chats").mkdir(exist_ok=True)
        return folder / "chats" / "session-2026-04-29T21-39-5f0c2a1e.jsonl"
    if source == "qwen":
        return folder / "q-1.jsonl"  # a chat file is named by its session id
    return folder / "messages.jsonl"


def _aider_case(name: str, folder: Path, rng: random.Random, huge_mb: int) -> Path:
    text = aider_text(MARKER).encode()
    head, tail = text[: text.index(b"Sure")], text[text.index(b"Sure") :]
    if name == "wrong-types":
        name = "binary-garbage"
    damaged = damages(rng, huge_mb)[name]([head, *tail.split(b"\n")])
    (folder / ".aider.chat.history.md").write_bytes(b"\n".join(damaged))
    (folder / ".aider.input.history").write_bytes(b"# 2025-01-02 03:04:06\n+" + MARKER.encode() + b"\n" + damaged[-1])
    return folder


def _openprogram_case(name: str, folder: Path, rng: random.Random, huge_mb: int) -> Path:
    session = folder / "local_0123456789"
    (session / "history").mkdir(parents=True)
    (session / ".git").mkdir()
    nodes = openprogram_nodes(MARKER)
    if name == "wrong-types":
        nodes = wrong_types(rng, nodes[:2]) + wrong_types(rng, [nodes[0], *nodes[2:]])[1:]
        blobs = [json.dumps(n).encode() for n in nodes]
    else:
        good = [json.dumps(n).encode() for n in nodes]
        damaged = damages(rng, huge_mb)[name](good[1:])
        blobs = [good[0], *damaged]
    for seq, blob in enumerate(blobs):
        (session / "history" / f"{seq:04d}-x-n{seq}.json").write_bytes(blob)
    meta = {"id": "local_0123456789", "title": UNICODE}
    (session / "meta.json").write_text(json.dumps(meta))
    return session


CASES = ("wrong-types", *damages(random.Random(0), 1))


def write_corpus(out: Path, seed: int = 0, huge_mb: int = 50) -> dict[str, list[tuple[str, Path]]]:
    rng = random.Random(seed)
    corpus: dict[str, list[tuple[str, Path]]] = {}
    for source in SOURCES:
        for name in CASES:
            corpus.setdefault(source, []).append((name, write_case(source, name, out / source / name, rng, huge_mb)))
    return corpus


if __name__ == "__main__":
    mb = int(sys.argv[sys.argv.index("--huge-mb") + 1]) if "--huge-mb" in sys.argv else 50
    written = write_corpus(Path(sys.argv[1]), huge_mb=mb)
    print(f"{sum(len(v) for v in written.values())} files under {sys.argv[1]}")
