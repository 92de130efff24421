"""Parse speed of the Codex, Gemini, aider and OpenProgram importers on synthetic sessions.

Each figure is printed beside a baseline measured in the same run:
- whole-file parse vs `json.loads` of every line (the floor any JSONL parser pays);
- a watch step (feed the lines of one new turn, take()) vs re-parsing the whole grown file;
- OpenProgram: reading a session folder vs reading and `json.loads`-ing its node files.

    python bench/importers_parse.py [--quick]
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import best_of, parser, report

from opmem_tui.backend.importers import SOURCES
from opmem_tui.backend.importers.aider import HISTORY_NAME
from opmem_tui.backend.importers.base import ImportReport

codex, gemini, aider, openprogram = (SOURCES[name] for name in ("codex", "gemini", "aider", "openprogram"))


def codex_turn(n: int, calls: int = 3) -> list[str]:
    stamp = f"2026-01-01T{(n // 3600) % 24:02d}:{(n // 60) % 60:02d}:{n % 60:02d}.000Z"
    out = []

    def add(kind: str, payload: dict) -> None:
        out.append(json.dumps({"timestamp": stamp, "type": kind, "payload": payload}))

    text = f"turn {n}: please change function number {n} and run the tests " * 3
    add("response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]})
    add("event_msg", {"type": "user_message", "message": text, "images": []})
    add("turn_context", {"cwd": "/repo", "model": "gpt-5-codex"})
    for c in range(calls):
        add("event_msg", {"type": "agent_reasoning", "text": f"**step {c}**"})
        add("event_msg", {"type": "token_count", "info": {"total_token_usage": {"total_tokens": n * 10 + c}}})
        add("response_item", {"type": "reasoning", "summary": [{"type": "summary_text", "text": f"**step {c}**"}]})
        add(
            "response_item",
            {
                "type": "function_call",
                "name": "shell",
                "call_id": f"call_{n}_{c}",
                "arguments": json.dumps({"command": ["bash", "-lc", f"rg -n fn{n} src/"]}),
            },
        )
        add(
            "response_item",
            {
                "type": "function_call_output",
                "call_id": f"call_{n}_{c}",
                "output": json.dumps({"output": "src/a.py:1: x\n" * 20, "metadata": {"exit_code": 0}}),
            },
        )
    add(
        "response_item",
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Done. " * 30}]},
    )
    add("event_msg", {"type": "agent_message", "message": "Done. " * 30})
    add("event_msg", {"type": "task_complete"})
    return out


def gemini_turn(n: int) -> list[str]:
    user = {
        "id": f"u{n}",
        "timestamp": "2026-01-01T00:00:00Z",
        "type": "user",
        "content": [{"text": f"question {n} " * 20}],
    }
    pending = {
        "id": f"g{n}",
        "timestamp": "2026-01-01T00:00:01Z",
        "type": "gemini",
        "content": "",
        "model": "gemini-2.5-pro",
        "toolCalls": [{"id": f"c{n}", "name": "run_shell_command", "args": {"command": "ls"}, "status": "executing"}],
    }
    done = dict(
        pending,
        toolCalls=[
            dict(
                pending["toolCalls"][0],
                status="success",
                result=[{"functionResponse": {"response": {"output": "a.txt\n" * 30}}}],
            )
        ],
        tokens={"input": 100, "output": 20, "total": 120},
    )
    answer = {"id": f"a{n}", "timestamp": "2026-01-01T00:00:02Z", "type": "gemini", "content": "Answer. " * 40}
    return [json.dumps(r) for r in (user, pending, done, answer, {"$set": {"lastUpdated": "2026-01-01T00:00:03Z"}})]


def aider_text(turns: int) -> str:
    parts = [
        "# aider chat started at 2026-01-01 10:00:00\n\n> Aider v0.82.0  \n> Main model: gpt-4o with diff edit format  \n\n"
    ]
    for n in range(turns):
        parts.append(
            f"#### please change function {n}  \n\nHere is the change:\n\na.py\n```python\n<<<<<<< SEARCH\n"
            f"def f{n}(): pass\n=======\ndef f{n}(): return {n}\n>>>>>>> REPLACE\n```\n\n"
            f"> Tokens: 3.2k sent, 222 received.  \n> Applied edit to a.py  \n> Commit {n:07x} change f{n}  \n\n"
        )
    return "".join(parts)


def openprogram_folder(root: Path, turns: int) -> Path:
    folder = root / "local_bench00001"
    (folder / "history").mkdir(parents=True)
    seq, pred = 0, "ROOT"
    for n in range(turns):
        for role, node_id, extra in (
            ("user", f"u{n}", {"caller": "ROOT", "predecessor": pred}),
            ("llm", f"u{n}_reply", {"caller": "", "predecessor": f"u{n}"}),
            ("code", f"u{n}_reply_t_c", {"caller": f"u{n}_reply", "predecessor": None}),
        ):
            data = {
                "id": node_id,
                "created_at": 1.0 + seq,
                "seq": seq,
                "role": role,
                "name": "bash" if role == "code" else "",
                "input": '{"command": "ls"}' if role == "code" else None,
                "output": f"text {n} " * 40,
                "reads": [],
                "metadata": {"status": "completed"},
                **extra,
            }
            (folder / "history" / f"{seq:04d}-{role[0]}-{node_id}.json").write_text(json.dumps(data))
            seq += 1
        pred = f"u{n}_reply"
    (folder / "meta.json").write_text(json.dumps({"id": folder.name, "title": "bench", "head_id": pred}))
    return folder


def json_floor(path: Path) -> None:
    for line in path.read_bytes().splitlines():
        json.loads(line)


def main() -> None:
    args = parser(__doc__.splitlines()[0]).parse_args()
    turns = 200 if args.quick else 2000
    repeat = 3 if args.quick else 5
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)

        # Codex: whole parse, then one appended turn through the watch protocol.
        rollout = tmp_path / "rollout-2026-01-01T00-00-00-0199aaaa-0000-7000-8000-000000000001.jsonl"
        lines = [
            json.dumps(
                {
                    "timestamp": "2026-01-01T00:00:00Z",
                    "type": "session_meta",
                    "payload": {"id": "0199aaaa-0000-7000-8000-000000000001", "cwd": "/repo"},
                }
            )
        ]
        for n in range(turns):
            lines.extend(codex_turn(n))
        rollout.write_text("\n".join(lines) + "\n")
        floor = best_of(lambda: json_floor(rollout), repeat)
        ours = best_of(lambda: codex.parse_file(rollout, ImportReport(), final=True), repeat)
        report(f"codex parse {len(lines):,} lines", ours, floor, "json.loads per line", "<= 8x", ours <= 8 * floor)

        follower = codex.open_parser(rollout, ImportReport())
        for line in lines:
            follower.feed_line(line + "\n")
        follower.take(final=False)
        extra = codex_turn(turns)
        with rollout.open("a") as handle:
            handle.write("\n".join(extra) + "\n")

        def step() -> None:
            for line in extra:
                follower.feed_line(line + "\n")
            follower.take(final=False)

        import time

        start = time.perf_counter()
        step()
        watch = time.perf_counter() - start
        whole = best_of(lambda: codex.parse_file(rollout, ImportReport(), final=False), repeat)
        report(
            "codex watch step (1 new turn)", watch, whole, "re-parse of the whole file", "<= 0.1x", watch <= 0.1 * whole
        )

        # Gemini JSONL with upserts.
        chat = tmp_path / "chats" / "session-bench.jsonl"
        chat.parent.mkdir()
        glines = [json.dumps({"sessionId": "bench", "projectHash": "x", "startTime": "2026-01-01T00:00:00Z"})]
        for n in range(turns * 2):
            glines.extend(gemini_turn(n))
        chat.write_text("\n".join(glines) + "\n")
        floor = best_of(lambda: json_floor(chat), repeat)
        ours = best_of(lambda: gemini.parse_file(chat, ImportReport(), final=True), repeat)
        report(f"gemini parse {len(glines):,} lines", ours, floor, "json.loads per line", "<= 8x", ours <= 8 * floor)

        # aider Markdown.
        history = tmp_path / "repo" / HISTORY_NAME
        history.parent.mkdir()
        history.write_text(aider_text(turns * 2))

        def classify() -> None:
            kinds = []
            for line in history.read_text().splitlines():
                kinds.append("u" if line.startswith("#### ") else "o" if line.startswith("> ") else "t")

        floor = best_of(classify, repeat)
        ours = best_of(lambda: aider.parse_file(history, ImportReport(), final=True), repeat)
        report(
            f"aider parse {turns * 2:,} turns", ours, floor, "read + classify each line", "<= 30x", ours <= 30 * floor
        )

        # OpenProgram folder.
        folder = openprogram_folder(tmp_path / "sessions", turns)

        def read_nodes() -> None:
            for file in sorted((folder / "history").glob("*.json")):
                json.loads(file.read_text())

        floor = best_of(read_nodes, repeat)
        ours = best_of(lambda: openprogram.parse_file(folder, ImportReport(), final=True), repeat)
        report(
            f"openprogram parse {turns * 3:,} node files",
            ours,
            floor,
            "read + json.loads each file",
            "<= 3x",
            ours <= 3 * floor,
        )


if __name__ == "__main__":
    main()
