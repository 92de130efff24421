"""What a handoff says about a session: goal, what was done, files touched, decisions, failures,
what is still open; each item a line ending in the pointer to its turn.

Read from the session's branch as the export selects it, redacted (the one gate); the decisions
also from the distilled memory when the session was distilled. Heuristics, all in this module:
- done: per turn, the ask and the last reply's first line, with the tools it ran;
- files: paths the tools wrote (backend/projects/tool_writes, the same reading as auto-commit);
- failed: a tool result flagged as an error, or with a non-zero exit, or whose first lines say
  error / failed / traceback / denied / not found;
- decisions: timeline events of kind "decision" from this session, else sentences of the session
  that say decided / we'll use / switch to / instead of / going with;
- open: a failure that no later call of the same command undid, the last ask when no reply
  followed, and the last replies' sentences that say todo / still / next / remaining / not yet.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from ..model import Node, Turn
from ..projects.tool_writes import node_paths
from .budget import Line

LINE_CHARS = 220
POINTER = "  ↪ session:{sid}#turn {turn}"

_FAIL = re.compile(r"(?i)\b(error|failed|failure|traceback|exception|denied|not found|fatal|panic|cannot|refused)\b")
_DECIDE = re.compile(
    r"(?i)\b(decided|decision|we(?:'ll| will) (?:use|go with|keep)|let's (?:use|go with|switch|keep)|"
    r"switch(?:ed|ing)? to|instead of|going with|chose|settled on)\b"
)
_OPEN = re.compile(
    r"(?i)\b(todo|still (?:open|failing|needs?|to do)|next step|remaining|not yet|left to|follow[- ]up|pending)\b"
)
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")


@dataclass(frozen=True, slots=True)
class Facts:
    goal: list[Line]
    lines: list[Line]


def one_line(text: str, limit: int = 120) -> str:
    flat = " ".join((text or "").split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def first_line(text: str, limit: int = 120) -> str:
    line = next((part.strip() for part in (text or "").splitlines() if part.strip()), "")
    return one_line(line, limit)


def _arg_summary(node: Node) -> str:
    args = node.input
    if isinstance(args, dict):
        for key in ("command", "cmd", "file_path", "path", "pattern", "query", "url"):
            value = args.get(key)
            if isinstance(value, list):
                value = " ".join(str(v) for v in value)
            if isinstance(value, str) and value:
                return one_line(value, 80)
        return ""
    return one_line(str(args), 80) if args else ""


def _failed(node: Node) -> str | None:
    """The line saying why a tool call failed, or None when it did not."""
    meta = node.metadata
    exit_code = meta.get("exit") if meta.get("exit") is not None else meta.get("exit_code")
    head = "\n".join((node.content or "").splitlines()[:6])
    match = _FAIL.search(head)
    flagged = meta.get("is_error") is True or meta.get("status") == "error"
    if flagged or (isinstance(exit_code, int) and exit_code != 0) or match:
        if match:
            start = head.rfind("\n", 0, match.start()) + 1
            return first_line(head[start:], 100)
        return first_line(node.content, 100) or f"exit {exit_code}"
    return None


def _sentences(text: str) -> Iterable[str]:
    for part in _SENTENCE.split(text or ""):
        part = part.strip(" -*#>\t")
        if 12 <= len(part) <= 300:
            yield part


def _line(section: str, text: str, sid: str, turn: int, rank: int, order: int) -> Line:
    body = one_line(text, LINE_CHARS)
    return Line(section, f"- {body}{POINTER.format(sid=sid, turn=turn)}", rank, order)


def _goal(sid: str, turns: list[Turn]) -> list[Line]:
    asks = [(t.number, n) for t in turns for n in t.nodes if n.role == "user" and not n.is_tool]
    if not asks:
        return []
    number, first = asks[0]
    goal = [_line("Goal", first_line(first.content, 200), sid, number, 0, 0)]
    if len(asks) > 1:
        number, last = asks[-1]
        goal.append(_line("Goal", "latest ask: " + first_line(last.content, 180), sid, number, 1, 1))
    return goal


class _Reading:
    """The lines of one pass over the turns."""

    def __init__(self, sid: str, turns: list[Turn], decisions: list[tuple[str, int]]) -> None:
        self.sid, self.turns, self.decisions = sid, turns, decisions
        self.lines: list[Line] = []
        self.failures: dict[str, tuple[int, str]] = {}  # what failed, by tool and arguments: (turn, why)
        self.files: dict[str, list[int]] = {}
        self.open: list[tuple[str, int]] = []

    def add(self, section: str, text: str, turn: int, rank: int, order: int) -> None:
        self.lines.append(_line(section, text, self.sid, turn, rank, order))

    def tools(self, turn: Turn, tools: list[Node]) -> None:
        for node in tools:
            key = f"{node.name} {_arg_summary(node)}".strip()
            why = _failed(node)
            if why is not None:
                self.failures[key] = (turn.number, why)
                self.add("Failed", f"{key}: {why}", turn.number, 3, turn.number)
            else:
                self.failures.pop(key, None)  # the same call worked later: not open
            for path in node_paths(node):
                self.files.setdefault(path, []).append(turn.number)

    def turn(self, index: int, turn: Turn) -> None:
        ask = next((n for n in turn.nodes if n.role == "user" and not n.is_tool), None)
        replies = [n for n in turn.nodes if n.role == "assistant" and not n.is_tool and n.content.strip()]
        tools = [n for n in turn.nodes if n.is_tool]
        self.tools(turn, tools)
        last = index == len(self.turns) - 1
        if ask is not None or replies:
            said = first_line(ask.content, 80) if ask is not None else "(continued)"
            reply = first_line(replies[-1].content, 110) if replies else "no reply"
            names = _tool_names(tools)
            text = f"{said} → {reply}" + (f" [{names}]" if names else "")
            # the latest turns keep first when the budget is short
            self.add("Done", text, turn.number, 5 + (len(self.turns) - index) // 4, turn.number)
        if ask is not None and not replies and last:
            self.open.append((f"no reply yet to: {first_line(ask.content, 160)}", turn.number))
        for node in ([ask] if ask is not None else []) + replies:
            for sentence in _sentences(node.content):
                if not self.decisions and _DECIDE.search(sentence):
                    self.add("Decisions", sentence, turn.number, 3, turn.number)
                if index >= len(self.turns) - 2 and node.role == "assistant" and _OPEN.search(sentence):
                    self.open.append((sentence, turn.number))

    def finish(self) -> list[Line]:
        for summary, turn_no in self.decisions:
            self.add("Decisions", summary, turn_no, 3, turn_no)
        for path, numbers in self.files.items():
            shown = ", ".join(str(n) for n in sorted(set(numbers))[-6:])
            self.add("Files touched", f"{path} (turns {shown})", numbers[-1], 4, numbers[0])
        for key, (turn_no, why) in self.failures.items():
            self.open.append((f"still failing: {key}: {why}", turn_no))
        seen: set[str] = set()
        for order, (text, turn_no) in enumerate(self.open):
            if text not in seen:
                seen.add(text)
                self.add("Open", text, turn_no, 2, order)
        return self.lines


def gather(sid: str, turns: list[Turn], decisions: list[tuple[str, int]]) -> Facts:
    """The handoff's lines for `turns` (redacted already); `decisions`: (summary, turn) from memory."""
    reading = _Reading(sid, turns, decisions)
    for index, turn in enumerate(turns):
        reading.turn(index, turn)
    return Facts(_goal(sid, turns), reading.finish())


def _tool_names(tools: list[Node]) -> str:
    counts: dict[str, int] = {}
    for node in tools:
        counts[node.name or "tool"] = counts.get(node.name or "tool", 0) + 1
    return ", ".join(name if n == 1 else f"{name} ×{n}" for name, n in counts.items())
