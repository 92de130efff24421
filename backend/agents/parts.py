"""The pieces opmem adds to an agent's files, one class per config format. Each one plans an
edit on the file's text and undoes it: `add(text) -> (text, meta)`, `remove(text, meta) -> text`.
`meta` (kept in <home>/agents.json) says what the add made (the containers it created, the
separator it put before a block), so the removal gives back the file byte for byte.

    JsonEntry   an MCP server entry in a JSON/JSONC file (edited as text: backend/agents/jsonc.py)
    TomlTable   an MCP server table in a TOML file (Codex's config.toml; tomlkit checks the result)
    TextBlock   opmem's marked block in a Markdown instruction file (backend/agents/textblock.py)
    ClaudeHooks Claude Code's SessionStart, PreCompact and SessionEnd hooks (backend/agents/claude_hooks.py)
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tomlkit
from tomlkit.exceptions import TOMLKitError

from ..model import OpmemError
from . import claude_hooks, jsonc, textblock


class ConfigError(OpmemError):
    pass


@dataclass(frozen=True)
class JsonEntry:
    path: Path
    keys: tuple[str, ...]  # the object holding the servers: ("mcpServers",), ("mcp",)
    name: str
    entry: dict[str, Any]
    comments: bool = False  # JSONC (OpenCode): comments and trailing commas allowed
    what: str = "MCP server"
    empty: str = "{}\n"

    def _root(self, text: str) -> tuple[str, jsonc.Node]:
        text = text if text.strip() else "{}\n"
        try:
            root = jsonc.parse(text, self.path, comments=self.comments)
        except jsonc.JsonSyntaxError as exc:
            raise ConfigError(str(exc)) from None
        if root.kind != "object":
            raise ConfigError(f"{self.path}: expected a JSON object; not changed")
        return text, root

    def present(self, text: str) -> bool:
        node = jsonc.at_path(self._root(text)[1], (*self.keys, self.name))
        return node is not None and node.data == self.entry

    def add(self, text: str) -> tuple[str, dict[str, Any]]:
        text, root = self._root(text)
        holder = jsonc.at_path(root, self.keys)
        if holder is not None and holder.kind != "object":
            raise ConfigError(f"{self.path}: {'.'.join(self.keys)} is not a JSON object; not changed")
        new, made = jsonc.set_path(text, root, (*self.keys, self.name), self.entry, self.path)
        return new, ({"made": list(made)} if made else {})

    def remove(self, text: str, meta: dict[str, Any]) -> str:
        text, root = self._root(text)
        holder = jsonc.at_path(root, self.keys)
        if holder is None or holder.kind != "object" or holder.index(self.name) is None:
            return text
        text = jsonc.remove_entry(text, holder, holder.index(self.name))
        made = meta.get("made")
        depth_made = len(made) if isinstance(made, list) else 1  # unknown: prune what is left empty
        for depth in range(len(self.keys), depth_made - 1, -1):
            if depth == 0:
                break
            root = self._root(text)[1]
            node = jsonc.at_path(root, self.keys[:depth])
            parent = jsonc.at_path(root, self.keys[: depth - 1])
            if node is None or node.entries or parent is None:
                break
            text = jsonc.remove_entry(text, parent, parent.index(self.keys[depth - 1]))
        return text


_HEADER = r"^[ \t]*\[[ \t]*mcp_servers[ \t]*\.[ \t]*(?:{name}|\"{name}\")[ \t]*\][ \t]*(?:#[^\n]*)?\n?"


@dataclass(frozen=True)
class TomlTable:
    """`[mcp_servers.<name>]` appended at the end of the file as its own table."""

    path: Path
    name: str
    entry: dict[str, Any]
    what: str = "MCP server"
    empty: str = ""

    def _doc(self, text: str) -> Any:
        try:
            return tomlkit.parse(text)
        except TOMLKitError as exc:
            raise ConfigError(f"{self.path}: invalid TOML: {exc}; not changed") from None

    def _current(self, text: str) -> Any:
        servers = self._doc(text).get("mcp_servers")
        return servers.get(self.name) if hasattr(servers, "get") else None

    def present(self, text: str) -> bool:
        current = self._current(text)
        return current is not None and current.unwrap() == self.entry

    def table_text(self) -> str:
        return f"[mcp_servers.{self.name}]\n" + tomlkit.dumps(self.entry)

    def _span(self, text: str) -> tuple[int, int] | None:
        header = re.search(_HEADER.format(name=re.escape(self.name)), text, re.M)
        if header is None:
            return None
        end = header.end()
        for line in re.finditer(r"[^\n]*\n?", text[end:]):
            body = line.group().strip()
            if not body or body.startswith(("#", "[")):
                break
            end += len(line.group())
        return header.start(), end

    def add(self, text: str) -> tuple[str, dict[str, Any]]:
        current = self._current(text)
        if current is not None and current.unwrap() == self.entry:
            return text, {}
        if current is not None:  # ours from another home or an older opmem: replace it in place
            span = self._span(text)
            if span is None:
                raise ConfigError(f"{self.path}: mcp_servers.{self.name} is not a table opmem can update; not changed")
            new, meta = text[: span[0]] + self.table_text() + text[span[1] :], {}
        else:
            sep = textblock.separator_for(text)
            new, meta = text + sep + self.table_text(), {"sep": sep}
        check = self._doc(new).get("mcp_servers")
        if not hasattr(check, "get") or check.get(self.name) is None or check[self.name].unwrap() != self.entry:
            raise ConfigError(
                f"{self.path}: mcp_servers.{self.name} cannot be added next to what is there; not changed"
            )
        return new, meta

    def remove(self, text: str, meta: dict[str, Any]) -> str:
        self._doc(text)
        span = self._span(text)
        if span is None:
            return text
        before, after = text[: span[0]], text[span[1] :]
        sep = meta.get("sep", "\n")
        if not after.strip() and sep and before.endswith(sep):
            before, after = before[: -len(sep)], ""
        elif before.endswith("\n\n") and after.startswith("\n"):
            after = after[1:]
        new = before + after
        self._doc(new)
        return new


@dataclass(frozen=True)
class TextBlock:
    path: Path
    agent: str
    body: str
    what: str = "memory block"
    empty: str = ""

    def present(self, text: str) -> bool:
        return textblock.find(text) is not None

    def add(self, text: str) -> tuple[str, dict[str, Any]]:
        new, sep = textblock.upsert(text, textblock.block(self.body, self.agent))
        return new, ({"sep": sep} if sep is not None else {})

    def remove(self, text: str, meta: dict[str, Any]) -> str:
        return textblock.remove(text, meta.get("sep"))


@dataclass(frozen=True)
class ClaudeHooks:
    """SessionStart → the core block (a short timeout: it answers in milliseconds); PreCompact and
    SessionEnd → `opmem flush` (the hooks `opmem hooks install claude` adds, the same entries)."""

    path: Path
    session_start: str
    flush: str
    what: str = "hooks"
    empty: str = "{}\n"
    session_timeout: int = 10

    def present(self, text: str) -> bool:
        try:
            hooks = claude_hooks._tree(text, self.path).data.get("hooks") or {}
        except claude_hooks.HooksError as exc:
            raise ConfigError(str(exc)) from None
        if not isinstance(hooks, dict):
            return False
        return claude_hooks._has(hooks.get("SessionStart") or [], self.session_start) and all(
            claude_hooks._has(hooks.get(event) or [], self.flush) for event in claude_hooks.EVENTS
        )

    def _stale(self, text: str) -> list[tuple[str, tuple[str, ...]]]:
        """opmem's hooks with another command line (another home, a moved install): replaced."""
        hooks = claude_hooks._tree(text if text.strip() else "{}", self.path).data.get("hooks")
        found: dict[tuple[str, tuple[str, ...]], None] = {}
        for event, groups in hooks.items() if isinstance(hooks, dict) else ():
            for group in groups if isinstance(groups, list) else ():
                for hook in (group.get("hooks") or ()) if isinstance(group, dict) else ():
                    command = hook.get("command") if isinstance(hook, dict) else None
                    if not isinstance(command, str) or "opmem" not in command:
                        continue
                    if (
                        event == "SessionStart"
                        and command.endswith(" hook session-start")
                        and command != self.session_start
                    ):
                        found[(command, ("SessionStart",))] = None
                    elif (
                        event in claude_hooks.EVENTS
                        and command.endswith(" flush --hook claude")
                        and command != self.flush
                    ):
                        found[(command, claude_hooks.EVENTS)] = None
        return list(found)

    def add(self, text: str) -> tuple[str, dict[str, Any]]:
        """meta `flush_added`: the events whose flush hook this add put in (one `opmem hooks
        install claude` made before stays when disconnecting); none when nothing changed."""
        original = text
        try:
            for command, events in self._stale(text):
                text, _ = claude_hooks.remove_hooks(text, self.path, command, events)
            new, _ = claude_hooks.add_hooks(
                text, self.path, self.session_start, ("SessionStart",), self.session_timeout
            )
            new, flushed = claude_hooks.add_hooks(new, self.path, self.flush)
        except claude_hooks.HooksError as exc:
            raise ConfigError(str(exc)) from None
        return new, ({"flush_added": list(flushed)} if new != original else {})

    def remove(self, text: str, meta: dict[str, Any]) -> str:
        added = meta.get("flush_added")
        events = tuple(e for e in claude_hooks.EVENTS if e in added) if isinstance(added, list) else None
        try:
            new, _ = claude_hooks.remove_hooks(text, self.path, self.session_start, ("SessionStart",))
            if events is None:  # no record of what the add put in: every flush hook of this command
                new, _ = claude_hooks.remove_hooks(new, self.path, self.flush)
            elif events:
                new, _ = claude_hooks.remove_hooks(new, self.path, self.flush, events)
        except claude_hooks.HooksError as exc:
            raise ConfigError(str(exc)) from None
        return new


def merge_meta(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """The record of a part after another add: the latest add's meta, except `flush_added`,
    which accumulates (a reconnect that adds only the SessionStart hook back still owns the
    flush hooks the first connect put in)."""
    merged = {**old, **new}
    if isinstance(old.get("flush_added"), list) and isinstance(new.get("flush_added"), list):
        merged["flush_added"] = [e for e in claude_hooks.EVENTS if e in old["flush_added"] + new["flush_added"]]
    return merged


Part = JsonEntry | TomlTable | TextBlock | ClaudeHooks
