"""Auto-commit of live turns for `opmem watch` (ARCHITECTURE §4, issue 4).

When the watcher writes a new user prompt of a session bound to a project, the project's state
is recorded (`registry.begin_turn`). When the turn looks finished -- its last message called no
tools, its file has been quiet and the parser holds nothing back -- the paths its tools wrote
that were clean at turn start are committed (`registry.commit_agent_turn`, which also records
warnings and the commit's link). A turn that grows again after that (the model paused before a
slow tool call) is committed again at its next quiet end; the next prompt ends it for good.

Only live turns: a prompt older than the watch (by its own timestamp) has an unknown start
state and is never auto-committed; bulk-imported history is linked instead (binding.py).
If the agent had already written a file before the watcher saw the prompt, that file was dirty
in the recorded state and its start content is unknown: no commit, and the warning says why. Links
(also to commits the agent made itself) are the binder's job (binding.py, via the watcher).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pygit2

from ..model import Node, OpmemError, Turn
from ..store.sessions import SessionStore
from .records import AgentTurnWatch
from .registry import ProjectRegistry
from .tool_paths import tool_written_paths

# A prompt stamped up to this long before the watch started still counts as live (clock skew,
# the watcher's own start-up).
LIVE_SLACK = 5.0

Busy = Callable[["Path | None"], bool]


@dataclass(frozen=True, slots=True)
class AutoCommitEvent:
    """Something the watch output should show: a commit, or a warning about a turn."""

    session_id: str
    project_id: str
    turn: int
    commit: str | None = None
    paths: tuple[str, ...] = ()
    warning: str = ""


@dataclass(slots=True)
class _LiveTurn:
    session_id: str
    project_id: str
    user_id: str
    source: Path | None
    watch: AgentTurnWatch | None  # None: not live, or the project could not be read
    changed: bool = True  # grew since the last look
    attempted: tuple[int, str] | None = None  # (node count, last node id) at the last commit try


def looks_finished(turn: Turn) -> bool:
    """The turn's last message is a reply or a note that called no tools."""
    last = turn.last
    if last.role not in ("assistant", "system") or last.is_tool:
        return False
    return not any(n.called_by == last.id for n in turn.nodes)


class LiveTurnCommitter:
    """Tracks the newest turn of each bound session the watcher writes to; commits finished ones."""

    def __init__(
        self,
        store: SessionStore,
        registry: ProjectRegistry,
        *,
        started_at: float | None = None,
        on_event: Callable[[AutoCommitEvent], object] | None = None,
    ) -> None:
        self.store = store
        self.registry = registry
        self.started_at = time.time() if started_at is None else started_at
        self.on_event = on_event
        self.turns: dict[str, _LiveTurn] = {}

    # -- the watcher calls these --------------------------------------------------------------

    def observe(self, session_id: str, source: Path | None = None) -> list[AutoCommitEvent]:
        """The watcher wrote to `session_id`: a new prompt ends the turn before it and starts one."""
        try:
            project_id = self.store.get_meta(session_id).project_id
            user = self._newest_prompt(session_id) if project_id else None
        except OpmemError:
            return []
        if user is None:
            return []
        current = self.turns.get(session_id)
        if current is not None and current.user_id == user.id:
            current.changed = True
            current.source = source or current.source
            return []
        events: list[AutoCommitEvent] = []
        if current is not None and not self._tried_as_is(current, user):
            events += self._commit(current)  # its last chance: the user has moved on
        self.turns[session_id] = self._begin(session_id, project_id, user, source, events)
        return self._emit(events)

    def settle(self, busy: Busy) -> list[AutoCommitEvent]:
        """Commit every live turn that looks finished and whose source is quiet."""
        events: list[AutoCommitEvent] = []
        for live in list(self.turns.values()):
            if live.watch is None or not live.changed or busy(live.source):
                continue
            live.changed = False  # only new nodes (observe) can finish it now
            turn = self._find(live)
            if turn is not None and looks_finished(turn):
                events += self._commit(live, turn)
        return self._emit(events)

    # -- internals ----------------------------------------------------------------------------

    @staticmethod
    def _tried_as_is(live: _LiveTurn, prompt: Node) -> bool:
        """The new prompt follows the very node the last commit try ended with: the turn has not
        grown since, so looking it up again (get_turns groups the whole session) finds nothing new."""
        return live.attempted is not None and prompt.parent_id == live.attempted[1]

    def _newest_prompt(self, session_id: str) -> Node | None:
        """The user node of the current branch's last turn: a walk back from the head."""
        node_id = self.store.head(session_id)
        while node_id is not None:
            node = self.store.get_node(session_id, node_id)
            if node.role == "user" and node.called_by is None:
                return node
            node_id = node.parent_id
        return None

    def _begin(
        self, session_id: str, project_id: str, user: Node, source: Path | None, events: list[AutoCommitEvent]
    ) -> _LiveTurn:
        live = _LiveTurn(session_id, project_id, user.id, source, None)
        if not user.created_at or user.created_at < self.started_at - LIVE_SLACK:
            return live  # history, or a turn already under way when the watch started
        try:
            if self.registry.get(project_id).status == "active":
                live.watch = self.registry.begin_turn(project_id)
        except (OpmemError, OSError, pygit2.GitError) as exc:
            events.append(
                AutoCommitEvent(
                    session_id,
                    project_id,
                    0,
                    warning=f"session {session_id}: cannot read project {project_id} at the start of the turn "
                    f'"{" ".join(user.content.split())[:40]}", so it will not be auto-committed ({exc})',
                )
            )
        return live

    def _late_paths(self, live: _LiveTurn, turn: Turn) -> list[str]:
        """Dirty-at-start paths written by tool calls made before the start state was recorded."""
        assert live.watch is not None
        git = self.registry.git(live.project_id)
        late: dict[str, None] = {}
        for node in turn.tool_nodes:
            if node.created_at and node.created_at <= live.watch.started_at:
                for raw in tool_written_paths([node]):
                    rel = git.relative(raw)
                    if rel is not None and live.watch.was_dirty(rel):
                        late.setdefault(rel, None)
        return list(late)

    def _find(self, live: _LiveTurn) -> Turn | None:
        """The live turn as stored now: on the current branch, else on the branch holding most of it."""
        try:
            for turn in self.store.get_turns(live.session_id):
                if turn.user is not None and turn.user.id == live.user_id:
                    return turn
            best: Turn | None = None
            for leaf in self.store.leaves(live.session_id):
                for turn in self.store.get_turns(live.session_id, head_id=leaf):
                    if (
                        turn.user is not None
                        and turn.user.id == live.user_id
                        and (best is None or len(turn.nodes) > len(best.nodes))
                    ):
                        best = turn
            return best
        except OpmemError:
            return None

    def _commit(self, live: _LiveTurn, turn: Turn | None = None) -> list[AutoCommitEvent]:
        if live.watch is None:
            return []
        turn = turn if turn is not None else self._find(live)
        if turn is None:
            return []
        state = (len(turn.nodes), turn.nodes[-1].id)
        if state == live.attempted:
            return []  # nothing new since the last try: no second warning
        live.attempted = state
        events: list[AutoCommitEvent] = []
        try:
            if tool_written_paths(turn.nodes):
                user = turn.user
                result = self.registry.commit_agent_turn(
                    live.watch,
                    turn,
                    session_id=live.session_id,
                    turn_number=turn.number,
                    user_message=user.content if user is not None else "",
                    early=self._late_paths(live, turn),
                )
                if result.commit or result.warning:
                    named = result.dirty_paths or (*result.changed_outside, *result.unverified) or result.paths
                    events.append(
                        AutoCommitEvent(
                            live.session_id,
                            live.project_id,
                            turn.number,
                            result.commit,
                            result.paths if result.commit else tuple(named),
                            result.warning,
                        )
                    )
        except (OpmemError, OSError, pygit2.GitError) as exc:
            events.append(
                AutoCommitEvent(
                    live.session_id,
                    live.project_id,
                    turn.number,
                    warning=f"turn {turn.number} of session {live.session_id}: auto-commit failed ({exc})",
                )
            )
        return events

    def _emit(self, events: list[AutoCommitEvent]) -> list[AutoCommitEvent]:
        if self.on_event is not None:
            for event in events:
                self.on_event(event)
        return events
