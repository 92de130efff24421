"""The stateful parser of one Claude Code transcript file: fed one line at a time, it keeps
enough state to go on with lines appended later (``opmem watch``), and builds one session per
output (the trunk ``<sessionId>.jsonl``, a subagent ``agent-<id>.jsonl``, inline sidechains).

The record handlers are in claude_handlers.py, the per-session state and fork rules in
claude_builds.py; this module holds what they share: which build a record belongs to, how a
chain node is added, when a model call or a tool call is written, and the session it makes.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ..model import Node
from .base import UNSTORED, ImportedSession, ImportFormatError, ImportReport
from .claude_builds import Build, Group, Tool
from .claude_handlers import Rec, apply
from .claude_records import is_agent_file, opt_str, parse_line, small, snake, tokens, trunk_from_path
from .claude_resume import CLAUDE_SESSION_ID, ResumedFrom, ResumeIndex
from .record_values import parse_time, short

SOURCE = "claude-code"


class ClaudeParser:
    """Feed lines of one transcript file; `take()` returns what is new since the last take."""

    def __init__(self, path: Path | str, report: ImportReport, resumes: ResumeIndex | None = None) -> None:
        self.path = Path(path)
        self.report = report
        self.resumes = resumes  # None: do not look for --resume copies beside the file
        self.resumed: ResumedFrom | None = None
        self.agent_file = is_agent_file(self.path)
        # agent-<something else>.jsonl: an agent file if its records say so (see _build_for).
        self.undecided = not self.agent_file and self.path.name.startswith("agent-")
        stem = self.path.name[: -len(".jsonl")] if self.path.name.endswith(".jsonl") else self.path.name
        self.stem = stem
        # The session a trunk file holds: its records' sessionId, else its name. A copy of a
        # transcript under another name is the same session, not a second one.
        self.session: str | None = None
        self.trunk_id: str | None = None if self.agent_file else stem
        self.sidecar = self._read_sidecar() if self.agent_file else {}
        self.builds: dict[str, Build] = {}
        self.side_of: dict[str, str] = {}  # sidechain record uuid -> build key
        self.lines = 0

    @property
    def native(self) -> str:
        """The trunk's native id: the sessionId inside the file (its first record's), else the file's name."""
        return self.session or self.stem

    # -- public ------------------------------------------------------------------------------

    def feed_line(self, line: str | bytes, line_no: int | None = None) -> None:
        """Parse one line; a bad one becomes a warning naming file:line."""
        self.lines = line_no if line_no is not None else self.lines + 1
        if not line or line.isspace():
            return
        try:
            record = parse_line(line)
            self.feed_record(record, self.lines)
        except ImportFormatError as exc:
            self.report.warn(self.path, self.lines, str(exc))
        except RecursionError:
            self.report.warn(self.path, self.lines, "record nested too deeply")

    def feed_record(self, record: dict[str, Any], line_no: int = 0) -> None:
        """Apply one parsed record; raises only ImportFormatError for a record of the wrong shape."""
        if not isinstance(record, dict):
            raise ImportFormatError("record is not a JSON object")
        kind = record.get("type")
        if not isinstance(kind, str) or not kind:
            raise ImportFormatError("record has no string 'type'")
        if self.session is None and not self.agent_file:
            session = record.get("sessionId")
            if isinstance(session, str) and session:
                # Claude Code's ids are UUIDs; anything else (hand-made, renamed data) keeps the name.
                self.session = session if CLAUDE_SESSION_ID.fullmatch(session) else self.stem
        uuid = opt_str(record, "uuid")
        parent_uuid = opt_str(record, "parentUuid")
        if uuid is not None and uuid == parent_uuid:
            parent_uuid = None  # a record cannot be its own parent
        if uuid is not None and self._copied(uuid):
            trunk = self.get_build("trunk")
            self._envelope(trunk, record)
            trunk.count("resume_copy")
            return
        build = self._build_for(record, uuid, parent_uuid)
        if uuid is not None and uuid in build.anchors:
            # Same uuid again: a resume copy (same type and time) is dropped; anything else keeps
            # its content under a line-qualified id.
            if build.record_ts.get(uuid) == f"{kind}|{record.get('timestamp')}":
                build.count("duplicate")
                return
            uuid = f"{uuid}.l{line_no}"
        if uuid is not None:
            build.record_ts[uuid] = f"{kind}|{record.get('timestamp')}"
            if uuid in build.summaries:
                build.title("summary", build.summaries.pop(uuid))
        self._envelope(build, record)
        apply(self, build, Rec(record, kind, uuid, parent_uuid, line_no))
        build.count(kind)

    def holding(self) -> bool:
        """Something is held back: a model reply still open, or a tool still waiting for its result."""
        return any(build.open_groups or build.waiting for build in self.builds.values())

    def take(self, *, final: bool = True, idle: bool = False) -> list[ImportedSession]:
        """Sessions with what was emitted since the last take.

        final: the file is complete; flush every open model call and tools without a result.
        idle: the file has been quiet; flush open model calls whose last block is not thinking.
        Otherwise only the newest model call and tools still waiting for results are held back.
        """
        sessions: list[ImportedSession] = []
        for build in self.builds.values():
            if final:
                self.flush_waiting_tools(build)
            for group in list(build.open_groups.values()):
                if final or group.sid != build.head or (idle and group.last_block != "thinking"):
                    self.flush_group(build, group)
            if final:
                self.flush_waiting_tools(build)
            if not build.out and not build.meta_dirty:
                continue
            if build.nodes_total == 0 and not build.out:
                continue  # only metadata records (e.g. a file of summaries): no session
            sessions.append(self._session(build))
            build.out = []
            build.meta_dirty = False
        return sessions

    def _copied(self, uuid: str) -> bool:
        """Whether the record is a --resume copy of an earlier session's (looked up at the first uuid)."""
        if self.resumes is not None:
            if self.trunk_id is not None and not self.undecided:
                self.resumed = self.resumes.resumed_from(self.path, uuid)
            self.resumes = None
        return self.resumed is not None and uuid in self.resumed.copied

    def flush_waiting_tools(self, build: Build) -> None:
        """Tools that never got a result (the file ended): written without one."""
        for tool in list(build.waiting.values()):
            group = build.groups.get(tool.called_by)
            if not tool.emitted and group is not None and group.emitted:
                self.emit_tool(build, tool)

    # -- builds ------------------------------------------------------------------------------

    def _read_sidecar(self) -> dict[str, Any]:
        meta_path = self.path.with_name(self.stem + ".meta.json")
        try:
            data = json.loads(meta_path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            self.report.warn(meta_path, None, f"unreadable subagent metadata: {short(str(exc))}")
            return {}
        return data if isinstance(data, dict) else {}

    def _build_for(self, record: dict[str, Any], uuid: str | None, parent_uuid: str | None) -> Build:
        if self.undecided and uuid is not None:
            self.undecided = False
            if record.get("isSidechain") is True and record.get("agentId") == self.stem[len("agent-") :]:
                self.agent_file, self.trunk_id = True, None
                self.sidecar = self._read_sidecar()
        if self.agent_file:
            return self.get_build("agent")
        if record.get("isSidechain") is True and uuid is not None:
            agent_id = record.get("agentId")
            if isinstance(agent_id, str) and agent_id:
                key = f"sidechain-{agent_id}"
            elif parent_uuid is not None and parent_uuid in self.side_of:
                key = self.side_of[parent_uuid]
            else:
                key = f"sidechain-{uuid}"
            self.side_of[uuid] = key
            return self.get_build(key)
        return self.get_build("trunk")

    def get_build(self, key: str) -> Build:
        build = self.builds.get(key)
        if build is None:
            if key == "trunk":
                build = Build(self.native, "trunk")
            elif key == "agent":
                agent_id = self.stem[len("agent-") :]
                build = Build(self.stem, "compaction" if agent_id.startswith("acompact") else "subagent")
                build.extra["agent_id"] = agent_id
                for name in ("agentType", "spawnDepth", "toolUseId", "description"):
                    if name in self.sidecar:
                        build.extra[snake(name)] = self.sidecar[name]
            else:
                build = Build(f"{self.native}/{key}", "subagent")
                if key.startswith("sidechain-"):
                    build.extra["sidechain"] = key[len("sidechain-") :]
            self.builds[key] = build
        return build

    # -- record handlers ---------------------------------------------------------------------

    def _envelope(self, build: Build, record: dict[str, Any]) -> None:
        # Every record repeats these: the unchanged case is tested first (a tenth of the parse was here).
        if not build.cwd:
            cwd = record.get("cwd")
            if isinstance(cwd, str) and cwd:
                build.cwd = cwd
                build.meta_dirty = True
        branch = record.get("gitBranch")
        if branch != build.git_branch and isinstance(branch, str) and branch:
            build.git_branch = branch
            build.meta_dirty = True
        if self.agent_file and self.trunk_id is None:
            session = record.get("sessionId")
            if isinstance(session, str) and session:
                self.trunk_id = session
        extra = build.extra
        for key in ("version", "slug"):
            value = record.get(key)
            if value is not None and extra.get(key) != value and isinstance(value, str) and value:
                extra[key] = value
                build.meta_dirty = True

    def ensure_emitted(self, build: Build, sid: str | None) -> None:
        if sid is None:
            return
        group = build.open_groups.get(sid)
        if group is not None:
            self.flush_group(build, group)

    def chain_node(
        self,
        build: Build,
        sid: str,
        role: str,
        content: str,
        parent: str | None,
        stamp_raw: Any,
        metadata: dict[str, Any],
        uuid: str | None,
    ) -> str:
        """Add a user or system node (emitted at once); returns the node its record stands for."""
        stamp = stamp_raw if isinstance(stamp_raw, str) else str(stamp_raw)
        parent, same = build.resolve_parent(parent, role, stamp, content)
        if same is not None:
            build.count("replayed")
            if uuid is not None:
                build.anchors[uuid] = same
            return same
        if sid in build.parent_of:  # the id is taken (synthetic ids after a copy): qualify it
            sid = f"{sid}.n{len(build.parent_of)}"
        self.ensure_emitted(build, parent)
        build.register_chain(sid, parent, role, stamp, content)
        if uuid is not None:
            build.anchors[uuid] = sid
        if role == "user" and not build.first_prompt:
            build.first_prompt = content
        build.emit(
            Node(
                id=sid,
                seq=UNSTORED,
                role=role,
                content=content,
                parent_id=parent,
                created_at=parse_time(stamp_raw),
                metadata=MappingProxyType(metadata),
            ),
        )
        return sid

    def flush_group(self, build: Build, group: Group) -> None:
        build.open_groups.pop(group.sid, None)
        if group.emitted:
            return
        group.emitted = True
        metadata: dict[str, Any] = {"claude_type": "assistant", "uuid": group.uuid}
        if group.model:
            metadata["model"] = group.model
        if group.request_id:
            metadata["request_id"] = group.request_id
        if group.sid.startswith("msg_"):
            metadata["message_id"] = group.sid
        if group.stop_reason:
            metadata["stop_reason"] = group.stop_reason
        if group.usage:
            metadata["usage"] = group.usage
        if group.thinking:
            metadata["thinking"] = "\n\n".join(group.thinking)
        if group.other_blocks:
            metadata["blocks"] = dict(group.other_blocks)
        metadata.update(group.flags)
        content = "\n\n".join(t.strip() for t in group.texts if t.strip())
        build.emit(
            Node(
                id=group.sid,
                seq=UNSTORED,
                role="system" if group.synthetic else "assistant",
                content=content,
                parent_id=group.parent,
                name=group.model or None,
                created_at=group.created_at,
                metadata=MappingProxyType(metadata),
            ),
        )
        for tool_id in group.tools:
            tool = build.tools[tool_id]
            if tool.result is not None:
                self.emit_tool(build, tool)

    def emit_tool(self, build: Build, tool: Tool) -> None:
        if tool.emitted:
            return
        tool.emitted = True
        build.waiting.pop(tool.sid, None)
        metadata: dict[str, Any] = {"claude_type": "tool_use", "tool_use_id": tool.sid}
        if tool.result is None:
            metadata["result_missing"] = True
        else:
            metadata["result_at"] = tool.result_at
        if tool.is_error:
            metadata["is_error"] = True
        if tool.result_meta is not None:
            metadata["tool_use_result"] = tool.result_meta
        if tool.caller is not None:
            metadata["caller"] = small(tool.caller, 512)
        build.emit(
            Node(
                id=tool.sid,
                seq=UNSTORED,
                role="tool",
                content=tool.result or "",
                parent_id=tool.called_by,
                called_by=tool.called_by,
                name=tool.name,
                input=tool.input,
                created_at=tool.created_at,
                metadata=MappingProxyType(metadata),
            ),
        )

    def _session(self, build: Build) -> ImportedSession:
        title, title_source = "", ""
        for source, kind in (("user", "user"), ("llm", "llm"), ("summary", "llm")):
            if build.titles.get(source):
                title, title_source = build.titles[source], kind
                break
        extra = _counts(build)
        if title_source:
            extra["title_source"] = title_source
        kind = build.kind
        if kind == "trunk":
            parent_native, parent_node = self._resumed(build, extra)
            if parent_native:
                kind = "fork"
            children = self._children(build)
            if children:
                extra["children"] = children
        else:
            parent_native, parent_node = self._spawned_by(build, extra)
        native = build.native_id
        if self.agent_file:
            native = f"{parent_native}/{self.stem}" if parent_native else self.stem
        return ImportedSession(
            source=SOURCE,
            native_id=native,
            source_file=str(self.path),
            nodes=tuple(build.out),
            kind=kind,
            title=title,
            cwd=build.cwd,
            model=build.model,
            git_branch=build.git_branch,
            head=build.emitted_head,
            parent_native_id=parent_native,
            parent_node=parent_node,
            extra=extra,
        )

    def _spawned_by(self, build: Build, extra: dict[str, Any]) -> tuple[str | None, str | None]:
        """A subagent's parent session and the tool node that spawned it."""
        if self.agent_file:
            tool_use = self.sidecar.get("toolUseId")
            if build.root_parent_uuid:
                extra["parent_record"] = build.root_parent_uuid
            parent_native = self.trunk_id or trunk_from_path(self.path)
            return parent_native, tool_use if isinstance(tool_use, str) and tool_use else None
        trunk = self.builds.get("trunk")
        agent = build.extra.get("sidechain")
        if trunk is not None and isinstance(agent, str):
            return self.native, trunk.links.get(agent) or _spawning_tool(trunk, build.first_prompt)
        return self.native, None

    def _resumed(self, build: Build, extra: dict[str, Any]) -> tuple[str | None, str | None]:
        """A resumed session's parent (see claude_resume.py); (None, None) for any other trunk."""
        if self.resumed is None:
            return None, None
        extra["resumed_from"] = self.resumed.parent
        if build.root_parent_uuid:
            extra["parent_record"] = build.root_parent_uuid
        return self.resumed.parent, None

    def _children(self, trunk: Build) -> dict[str, str]:
        """Native id of each subagent session -> the tool node of the trunk that spawned it."""
        children = {f"{trunk.native_id}/agent-{agent}": tool for agent, tool in trunk.links.items()}
        for key, side in self.builds.items():
            if side.kind == "subagent" and key.startswith("sidechain-"):
                agent = side.extra.get("sidechain")
                tool = trunk.links.get(agent) if isinstance(agent, str) else None
                tool = tool or _spawning_tool(trunk, side.first_prompt)
                if tool:
                    children[side.native_id] = tool
        return children


def _counts(build: Build) -> dict[str, Any]:
    """The build's extras with its record counts, foreign summaries and token totals."""
    extra = dict(build.extra)
    extra["record_counts"] = dict(sorted(build.counts.items()))
    if build.summaries:
        extra["foreign_summaries"] = len(build.summaries)  # they name other sessions
    totals: dict[str, int] = {}
    for usage in build.usage.values():
        for key in ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"):
            totals[key] = totals.get(key, 0) + tokens(usage, key)
    if totals:
        extra["usage"] = totals
    return extra


def _spawning_tool(trunk: Build, prompt: str) -> str | None:
    """Old inline sidechains carry no agentId: find the Task call that was given their prompt."""
    if not prompt:
        return None
    for tool in trunk.tools.values():
        if tool.name in ("Task", "Agent") and isinstance(tool.input, dict) and tool.input.get("prompt") == prompt:
            return tool.sid
    return None
