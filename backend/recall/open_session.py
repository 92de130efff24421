"""memory_open_session: a session's turns, one turn's messages, or the rest of one long message."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..model import Node, Turn, turn_count
from ..store.session_repo import SessionRepo
from .context import Recall
from .dates import iso
from .errors import BAD_ARGUMENT, UNKNOWN_NODE, RecallError
from .reply import cut_text, dumps, page_of, size, text_chunk
from .session_access import branch_head, pick_turn

PREVIEW_LINES = 40
INPUT_CHARS = 600
SUMMARY_CHARS = 120


def memory_open_session(
    recall: Recall,
    session_id: str,
    turn: int | None = None,
    branch: str | None = None,
    page: int = 0,
    node: str | None = None,
    part: str = "content",
    offset: int = 0,
) -> dict[str, Any]:
    """Without `turn`: the session and its turns (paged). With `turn`: that turn's messages,
    tool calls and results included (paged). With `node`: one message's `part` ("content" or
    "input") read on from character `offset`; a cut message says which offset to ask for.
    """
    repo = recall.sessions.open(recall.home, session_id)
    if node is not None:
        return _read_node(recall, repo, node, part, offset)
    branches = repo.branches()
    head, branch_name = branch_head(repo, branches, branch)
    turns = repo.turns(head)
    header = _header(repo, turns, branch_name)
    if turn is None:
        if len(branches) > 1:
            header["branches"] = [{"name": b.name, "turns": b.turns, "head": b.head_id} for b in branches[:20]]
        return _overview(recall, repo, header, turns, page)
    return _turn(recall, repo, header, pick_turn(repo, turns, turn), page)


def _header(repo: SessionRepo, turns: list[Turn], branch: str) -> dict[str, Any]:
    meta = repo.meta()
    out: dict[str, Any] = {"id": meta.id, "title": meta.display_title, "source": meta.source}
    if meta.project_id:
        out["project"] = meta.project_id
    if meta.agent_id:
        out["agent"] = meta.agent_id
    out["created"] = iso(meta.created_at)
    out["updated"] = iso(meta.updated_at)
    out["branch"] = branch
    out["turns"] = turn_count(turns)  # as `opmem sessions list` counts: a lone preface is no turn
    return out


def _message_budget(recall: Recall) -> int:
    """Characters of one message shown inline: several messages fit a reply."""
    return max(200, min(4000, recall.max_reply_bytes // 6))


def _overview(
    recall: Recall, repo: SessionRepo, header: dict[str, Any], turns: list[Turn], page: int
) -> dict[str, Any]:
    linked: dict[int, list[str]] = {}
    for link in recall.home.projects.links.for_session(repo.id):
        linked.setdefault(link.turn, []).append(link.commit[:12])
    items = [_turn_line(t, linked.get(t.number, ())) for t in turns]
    envelope = {
        "session": header,
        "hint": "memory_open_session(session_id, turn=N) shows turn N's messages and tool calls",
    }
    reply, _ = page_of(envelope, "turn_list", items, page, recall.max_reply_bytes)
    return reply


def _turn_line(turn: Turn, project_commits: Sequence[str]) -> dict[str, Any]:
    user = turn.user
    text = " ".join((user.content if user else turn.last.content).split())
    line: dict[str, Any] = {"turn": turn.number, "time": iso(turn.nodes[0].created_at)}
    line["user"] = text if len(text) <= SUMMARY_CHARS else text[: SUMMARY_CHARS - 1] + "…"
    tools = len(turn.tool_nodes)
    if tools:
        line["tools"] = tools
    if turn.commit:
        line["commit"] = turn.commit[:12]
    if project_commits:
        line["project_commits"] = list(project_commits[:5])
    if turn.fork_heads:
        line["other_branches"] = list(turn.fork_heads[:5])
    return line


def _turn(recall: Recall, repo: SessionRepo, header: dict[str, Any], turn: Turn, page: int) -> dict[str, Any]:
    chars = _message_budget(recall)
    messages = [_message(repo.id, n, chars) for n in turn.nodes]
    envelope: dict[str, Any] = {"session": header, "turn": turn.number, "time": iso(turn.nodes[0].created_at)}
    if turn.commit:
        envelope["commit"] = turn.commit
    links = _project_commits(recall, repo.id, turn.number)
    if links:
        envelope["project_commits"] = links
    if turn.fork_heads:
        envelope["other_branches"] = list(turn.fork_heads[:5])
    reply, _ = page_of(envelope, "messages", messages, page, recall.max_reply_bytes)
    return reply


def _project_commits(recall: Recall, session_id: str, number: int) -> list[dict[str, Any]]:
    links = [link for link in recall.home.projects.links.for_session(session_id) if link.turn == number]
    return [
        {"project": link.project_id, "commit": link.commit[:12], "confidence": link.confidence} for link in links[:10]
    ]


def _message(session_id: str, node: Node, chars: int) -> dict[str, Any]:
    out: dict[str, Any] = {"id": node.id, "role": node.role, "time": iso(node.created_at)}
    if node.is_tool:
        out["tool"] = node.name or "tool"
        out["call_of"] = node.called_by
        if node.input is not None:
            shown, more = _input_preview(node.input)
            out["input"] = shown
            if more:
                out["input_more"] = {"session_id": session_id, "node": node.id, "part": "input", "offset": more}
        key = "result"
    else:
        key = "text"
    cut = cut_text(node.content, max_lines=PREVIEW_LINES, max_chars=chars)
    out[key] = cut.text
    if not cut.complete:
        out["more"] = {
            "session_id": session_id,
            "node": node.id,
            "part": "content",
            "offset": len(node.content) - cut.more_chars,
        }
    return out


def _input_text(value: Any) -> str:
    return value if isinstance(value, str) else dumps(value)


def _input_preview(value: Any) -> tuple[Any, int]:
    """The tool input as JSON when small, else its text cut; (shown, offset to read on or 0)."""
    text = _input_text(value)
    if len(text) <= INPUT_CHARS:
        return (value if not isinstance(value, str) else text), 0
    cut = cut_text(text, max_lines=PREVIEW_LINES, max_chars=INPUT_CHARS)
    return cut.text, len(text) - cut.more_chars


def _read_node(recall: Recall, repo: SessionRepo, node_id: str, part: str, offset: int) -> dict[str, Any]:
    if not repo.has_node(node_id):
        raise RecallError(UNKNOWN_NODE, f"session {repo.id} has no message {node_id!r}")
    node = repo.node(node_id)
    if part == "input":
        text = "" if node.input is None else _input_text(node.input)
    elif part == "content":
        text = node.content
    else:
        raise RecallError(BAD_ARGUMENT, f'part must be "content" or "input", got {part!r}')
    if offset < 0 or offset > len(text):
        raise RecallError(BAD_ARGUMENT, f"offset {offset} is outside the {part} (0..{len(text)})")
    envelope: dict[str, Any] = {
        "session": repo.id,
        "node": node.id,
        "role": node.role,
        "part": part,
        "length": len(text),
        "offset": offset,
        "text": "",
        "next_offset": None,
    }
    if node.name:
        envelope["tool"] = node.name
    room = recall.max_reply_bytes - size(envelope) - 32
    chunk = text_chunk(text, offset, room)
    envelope["text"] = chunk
    end = offset + len(chunk)
    envelope["next_offset"] = end if end < len(text) else None
    return envelope
