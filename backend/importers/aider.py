"""aider chats: ``<repo>/.aider.chat.history.md``, dated by ``<repo>/.aider.input.history``.

The chat history is append-only Markdown with no ids and no per-message times:

- ``# aider chat started at YYYY-MM-DD HH:MM:SS`` opens a run: one session each.
- ``#### text`` lines are user input (a multi-line input repeats the prefix; a trailing
  two-space Markdown line break is dropped). ``/ask``, ``/code`` and other commands appear
  raw; when the expanded prompt is echoed as a second ``####`` block right after, the two
  become one user node with the command in its metadata.
- ``> text`` lines are aider's own output: before any reply in a turn (startup banner, command
  output, confirmations) a system node; after a reply (``Applied edit to x``, ``Commit abc``,
  ``Tokens: ...``) a tool node named "aider" hanging off that reply, with the edited files
  and commits as its input.
- anything else is the assistant's Markdown reply.

``.aider.input.history`` (prompt_toolkit FileHistory: ``# <timestamp>`` then ``+line``s) gives
each typed input a time; inputs are matched to ``####`` blocks in order by their text.
Source ids are ``<file name>:<line>`` of the block's first line.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from types import MappingProxyType
from typing import Any

from .base import ImportedSession, ImportFormatError, ImportReport, LineImporter, is_final
from .drafts import Draft, DraftGraph
from .shape import Probe, Shape

RUN_MARK = b"# aider chat started at"  # within its first lines (a run starts with a blank line)

SOURCE = "aider"
HISTORY_NAME = ".aider.chat.history.md"
INPUT_NAME = ".aider.input.history"

_HEADER = re.compile(r"^# aider chat started at (\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2})\s*$")
_MODEL = re.compile(r"^(?:Main model|Model|Models):\s*(\S+)")
_APPLIED = re.compile(r"^Applied edit to (.+?)\s*$")
_COMMIT = re.compile(r"^Commit ([0-9a-f]{7,40})\b\s*(.*)$")
_TOKENS = re.compile(r"^Tokens:\s*(.+?)\s*$")
_SKIP_DIRS = frozenset({".git", "node_modules", ".venv", "venv", "__pycache__", ".tox", "dist", "build", ".cache"})
MAX_SEARCH_DEPTH = 4
MATCH_LOOKAHEAD = 20


# ---------------------------------------------------------------------------------------------
# the line parser


@dataclass(frozen=True, slots=True)
class ChatLine:
    kind: str  # header | user | output | text
    text: str  # the line without its prefix
    stamp: float = 0.0  # header: the run's start, local time


def parse_line(line: str) -> ChatLine:
    """Classify one line of the chat history. Raises only ImportFormatError."""
    if not isinstance(line, str):
        raise ImportFormatError("a chat line must be text")
    if "\x00" in line:
        raise ImportFormatError("line contains a NUL byte")
    line = line.rstrip("\r\n")
    if line.startswith("# aider chat started at"):
        match = _HEADER.match(line)
        if not match:
            raise ImportFormatError(f"session header without a readable time: {line[:80]!r}")
        return ChatLine("header", line, _local_time(match.group(1)))
    if line.startswith("####"):
        text = line[5:] if line.startswith("#### ") else line[4:]
        return ChatLine("user", text[:-2] if text.endswith("  ") else text)
    if line.startswith("> ") or line.rstrip() == ">":
        text = line[2:]
        return ChatLine("output", text[:-2] if text.endswith("  ") else text)
    return ChatLine("text", line)


def _local_time(text: str) -> float:
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise ImportFormatError(f"unreadable time {text!r}") from None
    try:
        return time.mktime(moment.timetuple()) + moment.microsecond / 1e6
    except (OverflowError, ValueError):
        raise ImportFormatError(f"time out of range {text!r}") from None


def parse_input_history(text: str) -> list[tuple[float, str]]:
    """prompt_toolkit FileHistory -> [(time, input text)] in file order. Unreadable entries are skipped."""
    entries: list[tuple[float, list[str]]] = []
    for line in text.splitlines():
        if line.startswith("# "):
            try:
                stamp = _local_time(line[2:].strip())
            except ImportFormatError:
                stamp = 0.0
            entries.append((stamp, []))
        elif line.startswith("+") and entries:
            entries[-1][1].append(line[1:])
    return [(stamp, "\n".join(lines)) for stamp, lines in entries if lines]


# ---------------------------------------------------------------------------------------------
# blocks -> sessions


@dataclass(slots=True)
class Block:
    kind: str  # user | output | text
    line: int  # first line, 1-based
    offset: int  # byte offset of the first line
    lines: list[str] = field(default_factory=list)
    end: int = 0  # byte offset after the block's last line

    @property
    def text(self) -> str:
        return "\n".join(self.lines).strip("\n")


@dataclass(slots=True)
class Run:
    line: int
    offset: int
    stamp: float
    blocks: list[Block] = field(default_factory=list)


def split_runs(path: Path, data: bytes, report: ImportReport, *, live: bool = False) -> tuple[list[Run], int]:
    """Runs and their blocks, and the offset where reading stopped (a live file's unfinished last line is left out)."""
    runs: list[Run] = []
    offset, number, size = 0, 0, len(data)
    current: Block | None = None
    in_fence = False  # inside a ``` block of a reply, where "> " and "#### " are plain text
    while offset < size:
        newline = data.find(b"\n", offset)
        if newline < 0 and live:
            return runs, offset  # a line still being written
        end = size if newline < 0 else newline + 1
        raw = data[offset:end]
        number += 1
        try:
            parsed = parse_line(raw.decode("utf-8"))
        except UnicodeDecodeError as exc:
            report.warn(path, number, f"line is not UTF-8 text ({exc.reason})")
            offset = end
            continue
        except ImportFormatError as exc:
            report.warn(path, number, str(exc))
            offset = end
            continue
        if parsed.kind == "header":
            runs.append(Run(number, offset, parsed.stamp))
            current, in_fence = None, False
        else:
            if not runs:
                runs.append(Run(number, offset, 0.0))  # text before any header: an undated run
            blocks = runs[-1].blocks
            if current is not None and current.kind == "text" and in_fence and parsed.kind != "text":
                parsed = ChatLine("text", raw.decode("utf-8").rstrip("\r\n"))  # inside a code fence
            if parsed.kind == "text" and not parsed.text.strip():
                # A blank line is part of a reply; it ends a user input or an output block.
                if current is not None and current.kind == "text":
                    current.lines.append("")
                    current.end = end
                else:
                    current = None
            elif current is not None and current.kind == parsed.kind:
                current.lines.append(parsed.text)
                current.end = end
            else:
                current = Block(parsed.kind, number, offset, [parsed.text], end)
                blocks.append(current)
                in_fence = False
            if parsed.kind == "text" and parsed.text.lstrip().startswith("```"):
                in_fence = not in_fence
        offset = end
    return runs, size


class AiderReader:
    def __init__(self, path: Path, report: ImportReport, inputs: list[tuple[float, str]], first_line: bytes) -> None:
        self.path = path
        self.report = report
        self.inputs = inputs
        # Session ids come from the file's first line (the first chat's start), which moves
        # with the repository; ids before 2025-12 hashed the file's path.
        self.digest = hashlib.sha1(first_line.rstrip(b"\r\n")).hexdigest()[:8]
        self.path_digest = hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:8]
        self.input_pos = 0
        self.prefix = path.name
        self.held = False  # something was held back by the last sessions() call

    def session(
        self,
        run: Run,
        next_run: Run | None,
        *,
        end_offset: int,
        start_offset: int,
        live: bool,
        skip: set[str] | None = None,
    ) -> ImportedSession:
        graph = DraftGraph()
        head: str | None = None
        model = ""
        now = run.stamp
        reply: Draft | None = None  # the assistant node of the current turn
        blocks = _merge_command_echoes(run.blocks)
        closes = _settle_offsets([b for b, _ in blocks], next_run.offset if next_run else None)
        next_stamp = next_run.stamp if next_run else 0.0
        for (block, command), settled in zip(blocks, closes, strict=True):
            sid = f"{self.prefix}:{block.line}"
            meta: dict[str, Any] = {"line": block.line}
            if block.kind == "user":
                stamp = self._input_time(command or block.text, run.stamp, next_stamp)
                now = max(now, stamp) if stamp else now
                if command:
                    meta["command"] = command
                graph.add(
                    Draft(sid, "user", block.text, parent_id=head, created_at=now, metadata=meta, settled_at=settled)
                )
                head, reply = sid, None
            elif block.kind == "text":
                reply = Draft(sid, "assistant", block.text, parent_id=head, name=model or None, created_at=now)
                reply.metadata, reply.settled_at = meta, settled
                graph.add(reply)
                head = sid
            elif reply is not None:
                tool = Draft(sid, "tool", block.text, parent_id=reply.id, called_by=reply.id, name="aider")
                tool.input, tool.created_at, tool.metadata, tool.settled_at = (
                    _output_facts(block.lines),
                    now,
                    meta,
                    settled,
                )
                graph.add(tool)
                tokens = [m.group(1) for m in map(_TOKENS.match, block.lines) if m]
                if tokens:
                    reply.metadata["tokens"] = tokens[-1]
            else:
                for line in block.lines:
                    found = _MODEL.match(line)
                    if found:
                        model = found.group(1)
                graph.add(
                    Draft(sid, "system", block.text, parent_id=head, created_at=now, metadata=meta, settled_at=settled)
                )
                head = sid
        nodes = graph.nodes(end_offset=end_offset, start_offset=start_offset, live=live, skip=skip)
        self.held = self.held or bool(graph.held)
        stamp = datetime.fromtimestamp(run.stamp).strftime("%Y%m%dT%H%M%S") if run.stamp else f"L{run.line}"
        return ImportedSession(
            source=SOURCE,
            native_id=f"aider-{self.digest}-{stamp}",
            aliases=(f"aider-{self.path_digest}-{stamp}",),
            source_file=str(self.path),
            nodes=nodes,
            cwd=str(self.path.resolve().parent),
            model=model,
            head=graph.visible_head(head),
            extra=MappingProxyType({"end_offset": end_offset, "started_at": run.stamp, "header_line": run.line}),
        )

    def _input_time(self, typed: str, start: float, stop: float) -> float:
        """The time of the input-history entry matching `typed`, searched in order within the run."""
        want = _norm(typed)
        pos = self.input_pos
        while pos < len(self.inputs) and start and self.inputs[pos][0] and self.inputs[pos][0] < start - 1:
            pos += 1  # entries from before this run
        for index in range(pos, min(pos + MATCH_LOOKAHEAD, len(self.inputs))):
            stamp, text = self.inputs[index]
            if stop and stamp and stamp >= stop:
                break
            if _norm(text) == want:
                self.input_pos = index + 1
                return stamp
        return 0.0


def _norm(text: str) -> str:
    return " ".join(text.split())


def _merge_command_echoes(blocks: list[Block]) -> list[tuple[Block, str | None]]:
    """`#### /ask why` followed directly by `#### why` is one input: the echo, with its command."""
    out: list[tuple[Block, str | None]] = []
    skip = False
    for index, block in enumerate(blocks):
        if skip:
            skip = False
            continue
        nxt = blocks[index + 1] if index + 1 < len(blocks) else None
        text = block.text
        if block.kind == "user" and text.startswith("/") and nxt is not None and nxt.kind == "user":
            _command, _, rest = text.partition(" ")
            if rest and _norm(rest) == _norm(nxt.text):
                out.append((nxt, text))
                skip = True
                continue
        out.append((block, None))
    return out


def _settle_offsets(blocks: list[Block], run_end: int | None) -> list[int | None]:
    """Where each block becomes final: when the next block starts. A reply stays open while
    aider's output about it (tokens, applied edits) follows. None: still open at the end."""
    out: list[int | None] = [None] * len(blocks)
    next_block = next_not_output = run_end
    for index in range(len(blocks) - 1, -1, -1):
        block = blocks[index]
        out[index] = next_not_output if block.kind == "text" else next_block
        next_block = block.offset
        if block.kind != "output":
            next_not_output = block.offset
    return out


def _output_facts(lines: list[str]) -> dict[str, Any] | None:
    edited = [m.group(1) for m in map(_APPLIED.match, lines) if m]
    commits = [{"sha": m.group(1), "message": m.group(2)} for m in map(_COMMIT.match, lines) if m]
    facts: dict[str, Any] = {}
    if edited:
        facts["paths"] = edited
    if commits:
        facts["commits"] = commits
    return facts or None


def _search(folder: Path, depth: int) -> list[Path]:
    hits: list[Path] = []
    candidate = folder / HISTORY_NAME
    if candidate.is_file():
        hits.append(candidate)
    if depth <= 0:
        return hits
    try:
        children = sorted(p for p in folder.iterdir() if p.is_dir() and not p.is_symlink())
    except OSError:
        return hits
    for child in children:
        if child.name in _SKIP_DIRS or child.name.startswith("."):
            continue
        hits.extend(_search(child, depth - 1))
    return hits


def _read_inputs(path: Path, report: ImportReport) -> list[tuple[float, str]]:
    input_file = path.with_name(INPUT_NAME)
    if not input_file.is_file():
        return []
    try:
        return parse_input_history(input_file.read_text(encoding="utf-8", errors="replace"))
    except OSError as exc:
        report.warn(input_file, None, f"cannot read: {exc.strerror or exc}")
        return []


def sessions_from(
    path: Path, data: bytes, report: ImportReport, *, start_offset: int, live: bool, skip: set[str] | None = None
) -> tuple[list[ImportedSession], bool]:
    """The runs of a chat history's bytes as sessions, and whether anything was held back."""
    runs, end = split_runs(path, data, report, live=live)
    reader = AiderReader(path, report, _read_inputs(path, report), data.split(b"\n", 1)[0])
    sessions = []
    for index, run in enumerate(runs):
        next_run = runs[index + 1] if index + 1 < len(runs) else None
        session = reader.session(run, next_run, end_offset=end, start_offset=start_offset, live=live, skip=skip)
        if session.nodes:
            sessions.append(session)
    return sessions, reader.held


class AiderParser:
    """For `opmem watch` (base.SessionParser): keeps the lines fed so far and rebuilds the (small) DAG on take()."""

    def __init__(self, path: Path | str, report: ImportReport) -> None:
        self.path = Path(path)
        self.report = report
        self.offset = 0  # bytes fed so far
        self.taken_to = 0  # offset of the last take
        self.emitted: set[str] = set()
        self.data = bytearray()
        self.held = False
        self.warned: set[str] = set()

    def feed_line(self, line: str | bytes, line_no: int | None = None) -> None:
        raw = line if isinstance(line, bytes) else line.encode("utf-8", "surrogatepass")
        self.data += raw
        self.offset += len(raw)

    def take(self, *, final: bool = True, idle: bool = False) -> list[ImportedSession]:
        # aider writes a reply whole: once the file is quiet, what is there is final.
        sessions, self.held = sessions_from(
            self.path,
            bytes(self.data),
            _Once(self.report, self.warned),
            start_offset=self.taken_to,
            live=not (final or idle),
            skip=self.emitted,
        )
        self.taken_to = self.offset
        for session in sessions:
            self.emitted.update(n.id for n in session.nodes)
        return sessions

    def holding(self) -> bool:
        return self.held


class _Once(ImportReport):
    """Passes each warning on once: a re-read of the same lines repeats them."""

    def __init__(self, target: ImportReport, seen: set[str]) -> None:
        super().__init__()
        self.target, self.seen = target, seen

    def warn(self, path: Path | str, line: int | None, problem: str) -> None:
        key = f"{path}:{line}: {problem}"
        if key not in self.seen:
            self.seen.add(key)
            self.target.warn(path, line, problem)


class AiderImporter(LineImporter):
    name = "aider"
    source = "aider"
    label = "aider"
    locations = ("./.aider.chat.history.md (the current folder and its git root)",)
    shape = Shape(("*.md",), starts="# aider chat started at", also=(".aider.input.history",))

    def claims(self, probe: Probe) -> Path | None:
        """A markdown file whose first lines start an aider run."""
        return probe.path if self.shape.named(probe.path) and RUN_MARK in probe.head[:512] else None

    reads = "the chat history's runs: user lines (####), assistant replies, tool output (>) and commits"
    looks_for = f"{HISTORY_NAME} (up to {MAX_SEARCH_DEPTH} folders deep)"

    def default_paths(self) -> list[Path]:
        """The current folder and its git root: walking every project folder would be too costly."""
        here = Path.cwd()
        paths = [here]
        try:
            done = subprocess.run(
                ["git", "rev-parse", "--show-toplevel"],
                cwd=here,
                capture_output=True,
                text=True,
                timeout=5,
                check=False,
            )
        except (OSError, subprocess.SubprocessError):
            return paths
        root = done.stdout.strip()
        if done.returncode == 0 and root and Path(root) != here:
            paths.append(Path(root))
        return paths

    def discover(self, paths: Iterable[Path | str]) -> list[Path]:
        found: dict[Path, None] = {}
        for raw in paths:
            path = Path(raw).expanduser()
            if path.is_file():
                found[path] = None
            elif path.is_dir():
                for file in _search(path, MAX_SEARCH_DEPTH):
                    found[file] = None
        return list(found)

    def open_parser(self, path: Path, report: ImportReport) -> AiderParser:
        return AiderParser(path, report)

    def parse_file(self, path: Path, report: ImportReport, *, final: bool | None = None) -> list[ImportedSession]:
        """A chat history file -> one session per run."""
        try:
            data = path.read_bytes()
        except OSError as exc:
            report.warn(path, None, f"cannot read: {exc.strerror or exc}")
            return []
        return sessions_from(path, data, report, start_offset=0, live=not is_final(path, final))[0]
