"""gptme: ``~/.local/share/gptme/logs/<date>-<name>/conversation.jsonl``.

One message a line: ``{role: system | user | assistant | tool, content, timestamp (ISO,
``datetime.now().isoformat()``: the local time without a zone, read as UTC), files?, pinned?,
hide?, call_id?, metadata {model, usage, cost}}``. A ``tool`` line is the output of a tool the
assistant message before it ran (gptme runs the code blocks of a reply): it hangs under that
reply. Hidden system prompts are not a turn. ``branches/<name>.jsonl`` beside the log are whole
copies kept before an undo or edit (``main-undo-0``): read as branches of the same session.
Logs live in ``$GPTME_LOGS_HOME``, else ``$XDG_DATA_HOME/gptme/logs``, ``~/.local/share/gptme/logs``
or platformdirs' data dir (macOS ``~/Library/Application Support/gptme/logs``). Checked against
the agent's source, ErikBjare/gptme at 085b726: gptme/message.py (to_dict), gptme/logmanager.py
(branches, write, _gen_read_jsonl), gptme/dirs.py; and kenn-io/agentsview
internal/parser/gptme.go and its testdata (5386007).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

import platformdirs

from .base import ImportedSession, ImportReport, glob_files
from .record_values import parse_time
from .shape import Shape
from .whole import SessionBuilder, WholeImporter, as_dict, as_str, json_lines, session


def read_log(path: Path, report: ImportReport, source: str) -> list[ImportedSession]:
    """The conversation and its branches: ``branches/<name>.jsonl`` beside it is a whole copy of
    the log kept before an undo or edit; the lines it shares with the log are the log's nodes, the
    rest hang off the last shared one."""
    b = SessionBuilder()
    keys = _read_branch(b, path, report, path.parent.name, [])
    for other in sorted((path.parent / "branches").glob("*.jsonl")):
        _read_branch(b, other, report, f"{path.parent.name}:{other.stem}", keys)
    if not b.nodes:
        return []
    made = session(source, path.parent.name, path, b, final=True, title=path.parent.name, extra={"layout": "log"})
    tips = [node for _, node in keys if node]
    return [replace(made, head=tips[-1]) if tips else made]  # the log's last message, not a backup's


def _read_branch(
    b: SessionBuilder, path: Path, report: ImportReport, prefix: str, trunk: list[tuple[tuple[str, str, str], str]]
) -> list[tuple[tuple[str, str, str], str]]:
    """One log file; returns each line's (role, content, timestamp) and the node standing for it."""
    seen: list[tuple[tuple[str, str, str], str]] = []
    shared = True
    owner: str | None = None
    model = ""
    b.tip = None
    for number, record in json_lines(path, report):
        role = as_str(record.get("role"))
        text = as_str(record.get("content"))
        key = (role, text, as_str(record.get("timestamp")))
        index = len(seen)
        if shared and index < len(trunk) and trunk[index][0] == key:
            seen.append(trunk[index])
            b.tip = trunk[index][1] if role != "tool" else b.tip
            owner = trunk[index][1] if role == "assistant" else (owner if role == "tool" else None)
            continue
        shared = False
        when = parse_time(record.get("timestamp"))
        sid = f"{prefix}:{number}"
        meta = {k: record[k] for k in ("call_id", "files") if record.get(k)}
        if role == "system" and record.get("hide"):
            seen.append((key, b.tip or ""))
            continue
        if role == "tool" and owner is not None:
            b.tool(sid, owner, "gptme", None, text, created_at=when, metadata=meta)
            seen.append((key, owner))  # a chain node stands for every line: the head is one
        elif role in ("user", "assistant", "system"):
            model = as_str(as_dict(record.get("metadata")).get("model")) or model
            name = model or None if role == "assistant" else None
            parent: str | bool | None = b.tip if b.tip else None
            made = b.chain(sid, role, text, name=name, created_at=when, metadata=meta, parent=parent)
            owner = made if role == "assistant" else None
            seen.append((key, made))
        else:
            report.unknown(f"gptme:role:{role}")
            seen.append((key, b.tip or ""))
    return seen


def gptme_logs() -> list[Path]:
    """gptme's dirs.py: $GPTME_LOGS_HOME, else <data dir>/logs where the data dir is
    $XDG_DATA_HOME/gptme, ~/.local/share/gptme if it exists, else platformdirs' user data dir."""
    if os.environ.get("GPTME_LOGS_HOME"):
        return [Path(os.environ["GPTME_LOGS_HOME"]).expanduser()]
    if os.environ.get("XDG_DATA_HOME"):
        return [Path(os.environ["XDG_DATA_HOME"]).expanduser() / "gptme" / "logs"]
    old = Path.home() / ".local" / "share" / "gptme" / "logs"
    return list(dict.fromkeys([old, Path(platformdirs.user_data_dir("gptme")) / "logs"]))


class GptmeImporter(WholeImporter):
    name = "gptme"
    source = "gptme"
    label = "gptme"
    locations = (
        "$GPTME_LOGS_HOME",
        "$XDG_DATA_HOME/gptme/logs",
        "~/.local/share/gptme/logs",
        "~/Library/Application Support/gptme/logs",
    )
    shape = Shape(("conversation.jsonl",), records=(("role", "content", "timestamp", "!session", "!type"),))
    reads = "user, assistant and system messages, tool output under the reply that ran it"
    looks_for = "logs/<conversation>/conversation.jsonl"

    def default_paths(self) -> list[Path]:
        return gptme_logs()

    def discover(self, paths: Iterable[Path | str]) -> list[Path]:
        return glob_files(paths, ("conversation.jsonl", "*/conversation.jsonl"))

    def read(self, path: Path, report: ImportReport, *, final: bool) -> list[ImportedSession]:
        return read_log(path, report, self.source)
