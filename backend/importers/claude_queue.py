"""Prompts typed while the agent works: Claude Code's input queue (`queue-operation` records) and
the `queued_command` attachments with which it hands such a prompt to the agent mid-turn.

A prompt the agent took is a turn (a user node) exactly once: the record Claude Code writes for
it, else the queue's dequeue; a prompt removed from the queue and never delivered is none."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .claude_records import user_kind

if TYPE_CHECKING:
    from .claude_builds import Build
    from .claude_handlers import Rec
    from .claude_parser import ClaudeParser


def delivered(
    parser: ClaudeParser,
    build: Build,
    record: dict[str, Any],
    data: dict[str, Any],
    text: str,
    parent: str | None,
    uuid: str | None,
    line_no: int,
) -> None:
    """A queued prompt handed to the agent mid-turn: a turn of its own where the agent took it."""
    if build.taken is not None and build.taken[0].strip() == text.strip():
        build.taken = None
    origin = data.get("origin")
    mode = data.get("commandMode")
    typed = mode in (None, "prompt") and not (
        isinstance(origin, dict) and (origin.get("from") or origin.get("senderTaskId"))
    )
    kind = user_kind({"isMeta": data.get("isMeta")}, text)
    if kind == "prompt" and not typed:
        kind = "queued_prompt"  # sent by another task or mode, not typed by the person
    metadata: dict[str, Any] = {"claude_type": "attachment", "queued": True, "uuid": uuid}
    if kind == "prompt":
        role = "user"
        parser.ensure_emitted(build, parent)
    else:
        role, text = "system", text.strip()
        metadata["kind"] = kind
    parser.chain_node(build, uuid or f"queued-{line_no}", role, text, parent, record.get("timestamp"), metadata, uuid)


def queue_operation(parser: ClaudeParser, build: Build, rec: Rec) -> None:
    """The input queue itself is bookkeeping: what the agent took shows up as a user record or a
    queued_command attachment. Only a dequeued prompt that never does becomes a node (take_queued)."""
    record = rec.data
    operation = record.get("operation")
    build.count(f"queue:{operation}")
    content = record.get("content")
    if operation == "enqueue" and isinstance(content, str) and content.strip():
        build.queue.append((content, record.get("timestamp"), rec.line))
    elif operation == "dequeue" and build.queue:
        take_queued(parser, build)  # an earlier one the agent took without a record of its own
        build.taken = build.queue.pop(0)
    elif operation == "remove" and build.queue:
        # Removed: edited back into the input, or delivered as an attachment; neither is a turn here.
        same = [i for i, q in enumerate(build.queue) if q[0] == content]
        build.queue.pop(same[0] if same else 0)
    elif operation == "popAll":
        build.queue.clear()


def take_queued(parser: ClaudeParser, build: Build) -> None:
    """A dequeued prompt the agent acted on without writing it as a user record: a user node at
    the point it was taken, the conversation going on after it."""
    if build.taken is None:
        return
    text, stamp, line_no = build.taken
    build.taken = None
    kind = user_kind({}, text)
    role = "user" if kind == "prompt" else "system"
    metadata: dict[str, Any] = {"claude_type": "queue-operation", "queued": True}
    if role == "system":
        metadata["kind"] = kind
    tip = build.head
    sid = parser.chain_node(build, f"queued-{line_no}", role, text, tip, stamp, metadata, None)
    if tip is not None and sid != tip:
        build.redirect[tip] = sid
