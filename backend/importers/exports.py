"""Data exports of the chat apps: ChatGPT's and Claude.ai's ``conversations.json``.

Both are a JSON list of conversations, one session each; neither app keeps them on disk, so
they are found where a downloaded export is unpacked (``~/Downloads``) or given.

- ChatGPT (Settings > Data controls > Export): ``[{id | conversation_id, title, create_time,
  update_time (epoch s), current_node, mapping: {node id: {id, parent, children, message:
  {id, author {role: user | assistant | system | tool, name}, create_time, content {content_type:
  text | multimodal_text | code | execution_output | thoughts | ..., parts, text}, recipient,
  metadata {model_slug}}}}]``. The mapping is a tree: edited prompts and regenerated replies are
  branches, kept as such; the head is ``current_node``. A file holding one such conversation
  (not in a list) is read too: the macOS app's unencrypted (v1) cache,
  ``~/Library/Application Support/com.openai.chat/conversations-<uuid>/<id>.json``, is one per
  file (its v2/v3 folders are AES-encrypted with a key in the Keychain: not read). Checked
  against kenn-io/agentsview internal/parser/chatgpt.go (5386007) and
  Dicklesworthstone/franken_agent_detection src/connectors/chatgpt.rs (6ae73d5, cass's
  ChatGPT connector: the app's folders, ``id`` or ``conversation_id``, ``mapping``).
- Claude.ai (Settings > Privacy > Export data): ``[{uuid, name, created_at, updated_at,
  current_leaf_message_uuid?, chat_messages: [{uuid, parent_message_uuid?, sender: human |
  assistant, text, created_at, content: [{type: text | thinking | tool_use | tool_result, ...}],
  attachments [{file_name, extracted_content}], files}]}]`` (newer exports split it into
  ``conversations-000/conversations.json``...). A message whose ``parent_message_uuid`` names an
  earlier message hangs under it (an edited prompt or a retried reply is a branch), and
  ``current_leaf_message_uuid`` is the head; without them the messages are one chain. Checked
  against kenn-io/agentsview internal/parser/claude_ai.go (5386007); the tree keys were seen in
  other public readers' test data found by code search (not attributable to a repository), not
  in Anthropic's own documentation: an unknown parent falls back to the chain.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from .base import ImportedSession, ImportReport
from .record_values import as_text, parse_time
from .shape import Shape
from .whole import SessionBuilder, WholeImporter, as_dict, as_str, load_json, session

DOWNLOADS = ("~/Downloads/conversations.json", "~/Downloads/*/conversations.json")


DESKTOP = Path("Library") / "Application Support" / "com.openai.chat"


def _downloads() -> list[Path]:
    home = Path.home() / "Downloads"
    return [home] if home.is_dir() else []


def _desktop() -> list[Path]:
    """The macOS app's plain (v1) conversation folders; the v2/v3 ones are encrypted."""
    base = Path.home() / DESKTOP
    return sorted(p for p in base.glob("conversations-*") if p.is_dir() and not _encrypted(p)) if base.is_dir() else []


def _encrypted(folder: Path) -> bool:
    return folder.name.startswith(("conversations-v2-", "conversations-v3-"))


def _conversations(path: Path, report: ImportReport, *, single: str = "") -> list[dict[str, Any]]:
    """The export's list of conversations; a file holding one conversation (a dict with `single`) is one."""
    data = load_json(path)
    if single and isinstance(data, dict) and single in data:
        return [data]
    if not isinstance(data, list):
        report.warn(path, None, "not a conversations export: expected a JSON list of conversations")
        return []
    return [c for c in data if isinstance(c, dict)]


def _export_files(paths: Any, importer: WholeImporter) -> list[Path]:
    from .shape import Probe

    found: dict[Path, None] = {}
    for raw in paths:
        path = Path(raw).expanduser()
        desktop = path.is_dir() and path.name.startswith("conversations-") and not _encrypted(path)
        candidates = (
            [path]
            if path.is_file()
            else sorted(path.glob("*.json"))
            if desktop
            else sorted([*path.glob("conversations*.json"), *path.glob("*/conversations*.json")])
            if path.is_dir()
            else []
        )
        for item in candidates:
            if importer.claims(Probe(item)) is not None:
                found[item] = None
    return list(found)


class ChatGptImporter(WholeImporter):
    name = "chatgpt"
    source = "chatgpt"
    label = "ChatGPT export"
    coding = False
    live = False
    locations = (*DOWNLOADS, "~/Library/Application Support/com.openai.chat/conversations-<uuid> (the app's v1 files)")
    shape = Shape(("*.json",), records=(("mapping", "current_node", "create_time"),))
    reads = "every conversation's message tree (branches kept): user, assistant, system and tool messages, thoughts"
    looks_for = "conversations.json of a ChatGPT data export"

    def default_paths(self) -> list[Path]:
        return _downloads() + _desktop()

    def discover(self, paths: Any) -> list[Path]:
        return _export_files(paths, self)

    def read(self, path: Path, report: ImportReport, *, final: bool) -> list[ImportedSession]:
        out = []
        for conv in _conversations(path, report, single="mapping"):
            built = _chatgpt(conv, path.stem)
            if built is not None:
                native, b = built
                title = as_str(conv.get("title"))
                made = session(self.source, native, path, b, final=True, title=title, extra={"layout": "export"})
                out.append(replace(made, head=b.tip or made.head))  # the branch the app showed last
        return out


def _chatgpt(conv: dict[str, Any], stem: str) -> tuple[str, SessionBuilder] | None:
    single = stem if stem and not stem.startswith("conversations") else ""  # a one-conversation file's name
    native = as_str(conv.get("conversation_id")) or as_str(conv.get("id")) or single
    mapping = as_dict(conv.get("mapping"))
    if not native or not mapping:
        return None
    b = SessionBuilder()
    kept: dict[str, str] = {}  # mapping node id -> the node that stands for it (itself or its nearest kept ancestor)
    owner: dict[str, str] = {}  # mapping node id -> the assistant node a tool message under it belongs to
    order = _tree_order(mapping)
    for node_id in order:
        node = as_dict(mapping.get(node_id))
        parent_id = as_str(node.get("parent"))
        parent = kept.get(parent_id)
        message = as_dict(node.get("message"))
        role = as_str(as_dict(message.get("author")).get("role"))
        text = _chatgpt_text(as_dict(message.get("content")))
        when = parse_time(message.get("create_time"))
        hidden = as_dict(message.get("metadata")).get("is_visually_hidden_from_conversation")
        if not message or hidden or (role == "system" and not text.strip()):
            kept[node_id] = parent or ""
            owner[node_id] = owner.get(parent_id, "")
            continue
        if role == "tool" and owner.get(parent_id):
            name = as_str(as_dict(message.get("author")).get("name")) or "tool"
            b.tool(node_id, owner[parent_id], name, None, text, created_at=when)
            kept[node_id], owner[node_id] = parent or "", owner[parent_id]
            continue
        model = as_str(as_dict(message.get("metadata")).get("model_slug")) or None
        kind = "assistant" if role in ("assistant", "tool") else "user" if role == "user" else "system"
        meta = {"content_type": as_str(as_dict(message.get("content")).get("content_type"))}
        sid = b.chain(
            node_id,
            kind,
            text,
            name=model if kind == "assistant" else None,
            created_at=when,
            metadata=meta,
            parent=parent or False,
        )
        kept[node_id] = sid
        owner[node_id] = sid if kind == "assistant" else ""
    current = kept.get(as_str(conv.get("current_node")))
    if current:
        b.tip = current
    return (native, b) if b.nodes else None


def _tree_order(mapping: dict[str, Any]) -> list[str]:
    """Node ids parents first (roots, then children in order)."""
    roots = [
        k for k, v in mapping.items() if not as_str(as_dict(v).get("parent")) or as_dict(v).get("parent") not in mapping
    ]
    out, seen, stack = [], set(), list(reversed(roots))
    while stack:
        node_id = stack.pop()
        if node_id in seen or node_id not in mapping:
            continue
        seen.add(node_id)
        out.append(node_id)
        children = [as_str(c) for c in as_dict(mapping[node_id]).get("children") or []]
        stack.extend(reversed(children))
    return out


def _chatgpt_text(content: dict[str, Any]) -> str:
    kind = as_str(content.get("content_type"))
    if kind == "thoughts":
        return "\n".join(as_str(as_dict(t).get("content")) for t in content.get("thoughts") or [])
    if kind in ("code", "execution_output"):
        return as_str(content.get("text"))
    parts = content.get("parts")
    if isinstance(parts, list):
        return "\n".join(p if isinstance(p, str) else as_text(p) for p in parts if p not in ("", None))
    return as_str(content.get("text"))


class ClaudeAiImporter(WholeImporter):
    name = "claude-ai"
    source = "claude-ai"
    label = "Claude.ai export"
    coding = False
    live = False
    locations = DOWNLOADS
    shape = Shape(("*.json",), records=(("uuid", "chat_messages"),))
    reads = "every conversation's messages: human and assistant text, thinking, tool use and results, attachments"
    looks_for = "conversations.json of a Claude.ai data export"

    def default_paths(self) -> list[Path]:
        return _downloads()

    def discover(self, paths: Any) -> list[Path]:
        return _export_files(paths, self)

    def read(self, path: Path, report: ImportReport, *, final: bool) -> list[ImportedSession]:
        out = []
        for conv in _conversations(path, report):
            native = as_str(conv.get("uuid"))
            b = _claude_ai(conv)
            if native and b.nodes:
                title = as_str(conv.get("name"))
                made = session(self.source, native, path, b, final=True, title=title, extra={"layout": "export"})
                out.append(replace(made, head=b.tip or made.head))
        return out


def _claude_ai(conv: dict[str, Any]) -> SessionBuilder:
    b = SessionBuilder()
    seen: dict[str, str] = {}  # message uuid -> its node
    for index, message in enumerate(m for m in conv.get("chat_messages") or [] if isinstance(m, dict)):
        sid = as_str(message.get("uuid")) or f"m{index}"
        when = parse_time(message.get("created_at"))
        texts, thinking, calls, results = [], [], [], {}
        for block in (x for x in message.get("content") or [] if isinstance(x, dict)):
            kind = block.get("type")
            if kind == "text":
                texts.append(as_str(block.get("text")))
            elif kind == "thinking":
                thinking.append(as_str(block.get("thinking")))
            elif kind == "tool_use":
                calls.append(block)
            elif kind == "tool_result":
                results[as_str(block.get("tool_use_id"))] = as_text(block.get("content"))
        text = "\n".join(t for t in texts if t) or as_str(message.get("text"))
        for attached in (a for a in message.get("attachments") or [] if isinstance(a, dict)):
            extracted = as_str(attached.get("extracted_content"))
            if extracted:
                text += f"\n\n[{as_str(attached.get('file_name'))}]\n{extracted}"
        role = "user" if message.get("sender") == "human" else "assistant"
        # an edited prompt or a retried reply names the message it follows: a branch; an unknown
        # parent (the all-zero root, an older export without the key) follows the message before
        parent = seen.get(as_str(message.get("parent_message_uuid")), True)
        owner = b.chain(sid, role, text, created_at=when, metadata={"thinking": "\n".join(thinking)}, parent=parent)
        seen[as_str(message.get("uuid"))] = owner
        for n, call in enumerate(calls):
            call_id = as_str(call.get("id"))
            b.tool(
                f"{sid}:tool{n}",
                owner,
                as_str(call.get("name")) or "tool",
                call.get("input"),
                results.get(call_id, ""),
                created_at=when,
                metadata={"call_id": call_id},
            )
    leaf = seen.get(as_str(conv.get("current_leaf_message_uuid")))
    b.tip = leaf or b.tip  # the branch the app shows
    return b
