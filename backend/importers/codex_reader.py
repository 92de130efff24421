"""The conversation of one Codex rollout, rebuilt in file order (the records carry no parents).

`CodexReader` holds the chain being built and the moves the record handlers
(codex_handlers.py) make on it: a prompt, injected context, a model response that calls tools,
a tool output, the end of a turn, a rollback. Each node is a Draft until the record that
settles it (see drafts.py): a prompt waits for its copies, a response for its token count and
its calls' outputs, a call for its output.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import MappingProxyType
from typing import Any

from .base import ImportedSession, ImportFormatError, ImportReport, SessionKind
from .codex_handlers import apply
from .codex_records import CodexRecord, same_text, text_field
from .drafts import Draft, DraftGraph
from .record_values import parse_time

SOURCE = "codex"
_UUID = re.compile(r"([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})")
Origins = list[tuple[str, set[str]]]  # texts, each with the copies seen (item, event, item_completed)


class CodexReader:
    """Builds one session from the records of one rollout, in file order."""

    def __init__(self, path: Path, report: ImportReport) -> None:
        self.path = path
        self.report = report
        self.graph = DraftGraph()
        self.meta: dict[str, Any] | None = None
        self.meta_time = 0.0
        self.ancestor_ids: list[str] = []
        self.replay_open = False
        self.head: str | None = None  # tip of the effective chain
        self.turn_users: list[str] = []  # user nodes on the effective chain, oldest first
        self.unsettled_chain: list[Draft] = []
        self.assistant: Draft | None = None  # the latest assistant node
        self.group_open = False  # model-output items still join self.assistant
        self.pending_calls: dict[str, Draft] = {}
        self.prompt: Draft | None = None  # the latest user node
        self.prompt_origins: set[str] = set()
        self.tentative: list[Draft] = []  # user items no user_message event has matched yet
        self.user_events = False  # the rollout writes user_message events
        self.system_origins: dict[str, set[str]] = {}  # injected node -> the copies seen
        self.after_prompt_only_system = False
        self.messages: Origins = []  # assistant texts of self.assistant
        self.reasoning: Origins = []
        self.last_total: Any = None
        self.pending_usage: dict[str, Any] | None = None
        self.pending_turn_id: str | None = None
        self.pending_rollback: int | None = None
        self.model = ""
        self.cwd = ""
        self.title = ""
        self.rollbacks: list[dict[str, Any]] = []
        self.spawned: dict[str, str] = {}
        self.ghosts: list[str] = []
        self.prefix = path.name
        self.offset, self.line, self.time = 0, 0, 0.0  # of the record being applied

    def feed(self, record: CodexRecord, offset: int, line: int) -> None:
        """Apply one record. Raises only ImportFormatError."""
        self.offset, self.line, self.time = offset, line, record.timestamp
        # A fork's copied lines are re-stamped to the fork instant; the first genuine one is later.
        if (
            self.replay_open
            and record.kind != "session_meta"
            and record.timestamp
            and self.meta_time
            and record.timestamp > self.meta_time + 1.0
        ):
            self.replay_open = False
        apply(self, record)

    # -- the session's identity ------------------------------------------------------------

    def session_meta(self, payload: dict[str, Any], stamp: float) -> None:
        native = payload.get("id") or payload.get("session_id")
        if native is not None and not isinstance(native, str):
            raise ImportFormatError("session_meta 'id' must be a string")
        if self.meta is None:
            self.meta = payload
            self.meta_time = parse_time(payload.get("timestamp")) or stamp
            self.cwd = text_field(payload, "cwd") or self.cwd
            if self.parent_link()[1] == "fork":
                self.replay_open = True
        elif native and native != self.native_id:
            # A fork or subagent file copies its ancestors' session_meta lines before the copied history.
            self.ancestor_ids.append(native)
            if not self.graph.drafts and self.meta_time:
                self.replay_open = True

    @property
    def native_id(self) -> str:
        if self.meta is not None:
            native = self.meta.get("id") or self.meta.get("session_id")
            if isinstance(native, str) and native:
                return native
        match = _UUID.search(self.path.stem)
        return match.group(1) if match else self.path.stem

    def parent_link(self) -> tuple[str | None, SessionKind]:
        meta = self.meta or {}
        source = meta.get("source")
        if isinstance(source, dict) and "subagent" in source:
            sub = source.get("subagent")
            parent = None
            if isinstance(sub, dict):
                spawn = sub.get("thread_spawn")
                if isinstance(spawn, dict) and isinstance(spawn.get("parent_thread_id"), str):
                    parent = spawn["parent_thread_id"]
            if parent is None and isinstance(meta.get("parent_thread_id"), str):
                parent = meta["parent_thread_id"]
            return parent, "subagent"
        forked = meta.get("forked_from_id")
        if isinstance(forked, str) and forked:
            return forked, "fork"
        return None, "trunk"

    # -- nodes -----------------------------------------------------------------------------

    def add(self, draft: Draft) -> Draft:
        draft.metadata.setdefault("line", self.line)
        if self.replay_open:
            draft.metadata["replayed"] = True
        draft.created_at = draft.created_at or self.time
        return self.graph.add(draft)

    def synthetic_id(self, wanted: str | None = None) -> str:
        return self.graph.unique_id(wanted, f"{self.prefix}:{self.line}")

    def chain(self, role: str, content: str, meta: dict[str, Any], name: str | None = None) -> Draft:
        """A new node on the chain; everything before it is final now."""
        self.group_open = False
        for draft in self.unsettled_chain:
            self.graph.settle(draft, self.offset)
        draft = self.add(Draft(self.synthetic_id(), role, content, parent_id=self.head, name=name, metadata=meta))
        self.head = draft.id
        self.unsettled_chain = [draft]
        return draft

    def tool(self, sid: str, owner: Draft, content: str, name: str, args: Any, meta: dict[str, Any]) -> Draft:
        return self.add(
            Draft(sid, "tool", content, parent_id=owner.id, called_by=owner.id, name=name, input=args, metadata=meta)
        )

    def system(self, text: str, meta: dict[str, Any], origin: str = "item") -> None:
        # The same injected text can arrive as an item and as an event: keep one.
        last = self.unsettled_chain[-1] if self.unsettled_chain else None
        if last is not None and last.role == "system" and self._copy_of(last, text, origin):
            return
        draft = self.chain("system", text, dict(meta))
        self.system_origins[draft.id] = {origin}

    def _copy_of(self, draft: Draft, text: str, origin: str) -> bool:
        """`text` from `origin` repeats `draft`, written from another origin: note it, no new node."""
        seen = self.system_origins.setdefault(draft.id, set())
        if origin in seen or not same_text(draft.content, text):
            return False
        seen.add(origin)
        return True

    # -- prompts ---------------------------------------------------------------------------

    def prompt_text(self, text: str, origin: str, meta: dict[str, Any]) -> None:
        """A typed prompt from `origin` (item, event, item_completed); copies are merged."""
        last = self.unsettled_chain[-1] if self.unsettled_chain else None
        if last is not None and last.metadata.get("injected") and self._copy_of(last, text, origin):
            return  # the plain copy of an injected event
        prompt = self.prompt
        if (
            prompt is not None
            and self.after_prompt_only_system
            and origin not in self.prompt_origins
            and same_text(prompt.content, text)
        ):
            self.prompt_origins.add(origin)
            if not prompt.settled and meta.get("images"):
                prompt.metadata["images"] = max(prompt.metadata.get("images", 0), meta["images"])
            return
        if origin == "item":
            # Typed prompts also come as a user_message event; until one matches, this may be
            # injected context the prefix list does not know (newer Codex Desktop builds).
            draft = self._user_node(text, meta)
            self.unsettled_chain.remove(draft)  # settled when decided
            self.tentative.append(draft)
            return
        self.user_events = True
        match = next((d for d in reversed(self.tentative) if same_text(d.content, text)), None)
        if match is not None:
            self.decide_tentative(confirmed=match)
            self._confirm(match, {"item", origin})
            return
        self.decide_tentative()
        self._confirm(self._user_node(text, meta), {origin})

    def _user_node(self, text: str, meta: dict[str, Any]) -> Draft:
        meta = {k: v for k, v in meta.items() if v}
        if self.pending_turn_id:
            meta["turn_id"] = self.pending_turn_id
            self.pending_turn_id = None
        if self.pending_rollback is not None:
            meta["after_rollback"] = self.pending_rollback
            self.pending_rollback = None
        return self.chain("user", text, meta)

    def _confirm(self, draft: Draft, origins: set[str]) -> None:
        """`draft` is a typed prompt: the turn starts here."""
        self.settle_pending_calls()  # calls of the last turn get no more output
        self.prompt, self.prompt_origins = draft, origins
        self.after_prompt_only_system = True
        self.turn_users.append(draft.id)
        self.assistant = None
        if draft not in self.unsettled_chain:
            self.unsettled_chain.append(draft)

    def decide_tentative(self, confirmed: Draft | None = None) -> None:
        """Settle the user items no event has matched (up to `confirmed`, which is a prompt).

        In a rollout with user_message events an unmatched user item is injected context;
        in one without (the oldest builds) it is the prompt itself.
        """
        cut = len(self.tentative) if confirmed is None else self.tentative.index(confirmed)
        undecided = self.tentative[:cut]
        del self.tentative[: cut + 1]
        for draft in undecided:
            if not self.user_events:
                self._confirm(draft, {"item"})
                continue
            draft.role = "system"
            draft.metadata.update(injected=True, unmatched_user_item=True)
            for key in ("turn_id", "after_rollback"):  # they belong to the prompt that follows
                if key in draft.metadata and confirmed is not None:
                    confirmed.metadata.setdefault(key, draft.metadata.pop(key))
            self.graph.settle(draft, self.offset)

    # -- model output ----------------------------------------------------------------------

    def model_output(self) -> Draft:
        """The assistant node that model-output items join; a new one when the last closed."""
        if self.assistant is not None and self.group_open:
            return self.assistant
        meta: dict[str, Any] = {}
        if self.pending_usage is not None:
            meta["token_usage"] = self.pending_usage
            self.pending_usage = None
        self.decide_tentative()
        draft = self.chain("assistant", "", meta, name=self.model or None)
        self.assistant, self.group_open = draft, True
        self.messages, self.reasoning = [], []
        self.after_prompt_only_system = False
        return draft

    def assistant_text(self, text: str, origin: str, phase: str, meta: dict[str, Any]) -> None:
        if not text:
            return
        # The event copy of a reply may come after the response group closed.
        if self.assistant is not None and not self.assistant.settled and _has_copy(self.messages, text, origin):
            return
        draft = self.model_output()
        self._add_once(self.messages, text, origin)
        draft.content = "\n\n".join(t for t, _ in self.messages)
        if phase:
            draft.metadata["phase"] = phase
        draft.metadata.update(meta)

    def add_reasoning(self, text: str, origin: str) -> None:
        self.model_output()
        self._add_once(self.reasoning, text, origin)

    def _add_once(self, entries: Origins, text: str, origin: str) -> None:
        if not text or _has_copy(entries, text, origin):
            return
        entries.append((text, {origin}))
        if entries is self.reasoning and self.assistant is not None:
            self.assistant.metadata["reasoning"] = [t for t, _ in entries]

    def token_count(self, usage: dict[str, Any], total: Any) -> None:
        if total is not None and total == self.last_total:
            return  # 0.58 repeats each count after the turn context
        self.last_total = total
        target = self.assistant
        if target is not None and not target.settled and "token_usage" not in target.metadata:
            target.metadata["token_usage"] = usage
            self.settle_assistant_if_done()
        else:
            self.pending_usage = usage

    # -- settling --------------------------------------------------------------------------

    def settle_assistant_if_done(self) -> None:
        a = self.assistant
        if a is not None and not self.group_open and "token_usage" in a.metadata and not self.pending_calls_of(a):
            self.graph.settle(a, self.offset)

    def pending_calls_of(self, assistant: Draft) -> bool:
        return any(t.called_by == assistant.id for t in self.pending_calls.values())

    def settle_pending_calls(self) -> None:
        for tool in self.pending_calls.values():
            tool.metadata.setdefault("status", "no_output")
            self.graph.settle(tool, self.offset)
        self.pending_calls.clear()

    def end_turn(self) -> None:
        self.group_open = False
        self.decide_tentative()
        for draft in self.unsettled_chain:
            self.graph.settle(draft, self.offset)
        self.unsettled_chain = []
        self.after_prompt_only_system = False

    def rollback(self, num_turns: Any) -> None:
        if isinstance(num_turns, bool) or not isinstance(num_turns, int) or num_turns < 0:
            raise ImportFormatError("thread_rolled_back 'num_turns' must be a non-negative integer")
        self.end_turn()
        self.settle_pending_calls()
        if num_turns == 0 or not self.turn_users:
            return
        dropped = self.turn_users[-num_turns:]
        del self.turn_users[-num_turns:]
        first = self.graph.get(dropped[0])
        self.head = first.parent_id if first is not None else self.head
        self.rollbacks.append({"line": self.line, "num_turns": num_turns, "dropped": dropped, "fork_from": self.head})
        self.pending_rollback = num_turns
        self.assistant, self.prompt = None, None

    def idle_flush(self, offset: int) -> None:
        """The file has been quiet: settle what only a later record would have settled.

        A prompt or context node waiting for the next node, and a model response waiting only
        for its token count, are done. An open response group or a running tool is not.
        """
        for draft in self.unsettled_chain:
            if draft is not self.assistant:
                self.graph.settle(draft, offset)
        a = self.assistant
        if a is not None and not self.group_open and not self.pending_calls_of(a):
            self.graph.settle(a, offset)

    # -- result ----------------------------------------------------------------------------

    def session(
        self, *, end_offset: int, start_offset: int, live: bool, skip: set[str] | None = None
    ) -> ImportedSession:
        meta = self.meta or {}
        parent, kind = self.parent_link()
        git = meta.get("git") if isinstance(meta.get("git"), dict) else {}
        if not live:
            self.decide_tentative()
            for tool in self.pending_calls.values():
                tool.metadata.setdefault("status", "no_output")
        nodes = self.graph.nodes(end_offset=end_offset, start_offset=start_offset, live=live, skip=skip)
        title = self.title or thread_name(self.path, self.native_id)
        extra = self._extra(meta, git, end_offset)
        if title:
            extra["title_source"] = "user"  # Codex thread names are given by the user
        return ImportedSession(
            source=SOURCE,
            native_id=self.native_id,
            source_file=str(self.path),
            nodes=nodes,
            kind=kind,
            title=title,
            cwd=self.cwd,
            model=self.model,
            git_branch=git.get("branch") if isinstance(git.get("branch"), str) else "",
            head=self.graph.visible_head(self.head),
            parent_native_id=parent,
            extra=MappingProxyType(extra),
        )

    def _extra(self, meta: dict[str, Any], git: dict[str, Any], end_offset: int) -> dict[str, Any]:
        extra: dict[str, Any] = {"end_offset": end_offset}
        for key in ("originator", "cli_version", "model_provider", "agent_nickname", "agent_role"):
            if isinstance(meta.get(key), str):
                extra[key] = meta[key]
        if isinstance(meta.get("source"), (str, dict)):
            extra["codex_source"] = meta["source"]
        if isinstance(git.get("commit_hash"), str):
            extra["git_commit"] = git["commit_hash"]
        if isinstance(git.get("repository_url"), str):
            extra["git_remote"] = git["repository_url"]
        for key, value in (
            ("rollbacks", self.rollbacks),
            ("children", self.spawned),  # subagent thread id -> the node that spawned it
            ("ghost_commits", self.ghosts),
            ("copied_session_metas", self.ancestor_ids),
        ):
            if value:
                extra[key] = value
        return extra


def _has_copy(entries: Origins, text: str, origin: str) -> bool:
    for existing, origins in entries:
        if origin not in origins and same_text(existing, text):
            origins.add(origin)
            return True
    return False


def thread_name(path: Path, native_id: str) -> str:
    """The name the user gave the thread, from <codex home>/session_index.jsonl (newest wins)."""
    for home in path.parents[:5]:
        index = home / "session_index.jsonl"
        if index.is_file():
            return _read_index(index).get(native_id, "")
    return ""


def _read_index(index: Path) -> dict[str, str]:
    names: dict[str, tuple[float, str]] = {}
    try:
        text = index.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return {}
    for raw in text.splitlines():
        try:
            row = json.loads(raw)
        except (ValueError, RecursionError):
            continue
        if isinstance(row, dict) and isinstance(row.get("id"), str) and isinstance(row.get("thread_name"), str):
            stamp = parse_time(row.get("updated_at"))
            if row["id"] not in names or stamp >= names[row["id"]][0]:
                names[row["id"]] = (stamp, row["thread_name"])
    return {k: v for k, (_, v) in names.items()}
