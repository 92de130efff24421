"""Secrets out of what the app hands its widgets: session text as it goes on screen.

People share their screens; the TUI shows every value the privacy gate finds
(`backend/privacy`) as its marker, `[secret:github-token#3f9a]`. The data layer (data.py,
memory_data.py) calls these on every object it hands out, in its worker threads, so no widget
ever holds a value unless asked: the replay keeps each masked message's original aside
(`MaskedTurns.originals`) for the one key that reveals it (widgets/replay_view.py).

Detection runs once per message: `NodeMasks` keeps the masked copy of each node by id (checked
against the node it came from), so a session reloaded as it grows costs only its new messages;
short strings (titles, commit summaries, snippets) are remembered by value.
"""

from __future__ import annotations

import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

from opmem_tui.backend.memory.records import Event
from opmem_tui.backend.memory.search import SearchHit
from opmem_tui.backend.model import Node, SessionListing, SessionMeta, Turn, TurnCommit
from opmem_tui.backend.privacy import find_secrets, map_strings, marker_for, redact_text
from opmem_tui.backend.privacy.redact import with_fields
from opmem_tui.backend.projects.records import CommitDetail, CommitInfo, FileDiff, Hunk

SHORT_TEXT = 4096  # strings up to this long are remembered by value (titles, summaries, snippets)
CHUNK = 16_384  # a long text is redacted in pieces of about this many characters (redact_long)
SESSIONS_KEPT = 8  # sessions whose masked messages are kept (a long session: thousands each)


# A short text is often cut from a longer one (a commit summary holds the first 60 characters
# of the user message, a preview 80, a snippet a window): a token cut there is too short for its
# rule. A known token prefix running to the end of a line is masked as what it would have been.
_CUT_TOKEN = re.compile(
    r"(?P<value>(?:gh[pousr]_|github_pat_|sk-|AKIA|ASIA|ABIA|ACCA|eyJ|xox[abposr]-|glpat-|AIza)[A-Za-z0-9_-]{4,})…?[ \t]*$",
    re.MULTILINE,
)
AWS_PREFIXES = ("AKIA", "ASIA", "ABIA", "ACCA")
STRONG_PREFIXES = ("sk-proj-", "sk-svcacct-", "sk-admin-", "github_pat_", "glpat-", "xoxb-", "xoxp-")
_CUT_KINDS = (
    ("gh", "github-token"),
    ("sk-", "openai-key"),
    ("eyJ", "jwt"),
    ("xox", "slack-token"),
    ("glpat-", "gitlab-token"),
    ("AIza", "google-api-key"),
)


def _cut_kind(value: str) -> str:
    if value.startswith(AWS_PREFIXES):
        return "aws-access-key"
    return next((kind for prefix, kind in _CUT_KINDS if value.startswith(prefix)), "secret-fragment")


def _looks_cut(value: str) -> bool:
    """A token's beginning, not a word: eight characters past the prefix, digits or mixed case."""
    if value.startswith(AWS_PREFIXES):  # AWS key ids: upper case and digits only
        rest = value[4:]
        return len(rest) >= 6 and rest.isalnum() and rest.upper() == rest
    if value.startswith(STRONG_PREFIXES):  # nothing else starts this way
        return True
    rest = value[value.index("_") + 1 :] if value.startswith("gh") and "_" in value else value[3:]
    return len(rest) >= 8 and (any(c.isdigit() for c in rest) or (rest.lower() != rest and rest.upper() != rest))


def redact_whole(text: str) -> str:
    """The gate's redact_text (markers already in the text kept as they are: a session
    imported redacted, text masked before), a long text in pieces (redact_long)."""
    return redact_long(text) if len(text) > CHUNK else redact_text(text)


def _piece_end(text: str, start: int) -> int:
    """Where the piece from `start` ends: the last line end (else a space, quote or comma) in
    the next CHUNK characters, so no token is cut; past a private key's END line if one begins."""
    end = start + CHUNK
    if end >= len(text):
        return len(text)
    cut = text.rfind("\n", start + CHUNK // 2, end)
    if cut < 0:
        cut = max(text.rfind(c, start + CHUNK // 2, end) for c in " \t,;\"'")
    end = cut + 1 if cut >= 0 else end
    begin = text.rfind("-----BEGIN", start, end)
    if begin >= 0 and text.find("-----END", begin, end) < 0:
        close = text.find("-----END", end)
        stop = text.find("\n", close + 8) if close >= 0 else -1
        end = len(text) if close < 0 or stop < 0 else stop + 1
    return end


def redact_long(text: str) -> str:
    """A long text (a 5 MB tool output) redacted a piece of CHUNK characters at a time, with a
    pause between pieces: the detector's regexes hold the GIL while they run, and the UI thread
    must get it to draw (masking runs in a worker while the replay scrolls)."""
    parts: list[str] = []
    at = 0
    while at < len(text):
        end = _piece_end(text, at)
        parts.append(redact_text(text[at:end]))  # a piece longer than CHUNK (a private key block): whole
        at = end
        time.sleep(0)  # let the UI thread in
    joined = "".join(parts)
    return text if joined == text else joined


@lru_cache(maxsize=65536)
def _mask_short(text: str) -> str:
    masked = redact_whole(text)
    if _CUT_TOKEN.search(masked) is None:
        return masked
    return _CUT_TOKEN.sub(_cut_marker, masked)


def _cut_marker(found: re.Match[str]) -> str:
    value = found.group("value")
    if not _looks_cut(value):
        return found.group()
    return marker_for(_cut_kind(value), value) + found.group()[len(value) :]


def mask(text: str) -> str:
    """`text` with each secret value replaced by its marker (the same string when it has none);
    a short text also loses a token cut off at its end."""
    if not text:
        return text
    return _mask_short(text) if len(text) <= SHORT_TEXT else redact_whole(text)


def mask_meta(meta: SessionMeta) -> SessionMeta:
    """A session's title and preview (often the first prompt) masked, and its free-form keys."""
    title, preview = mask(meta.title), mask(meta.preview)
    extra = _mask_value(meta.extra, mask) if meta.extra else meta.extra
    if title is meta.title and preview is meta.preview and extra is meta.extra:
        return meta
    return replace(meta, title=title, preview=preview, extra=extra)


def mask_listing(listing: SessionListing) -> SessionListing:
    sessions = tuple(mask_meta(m) for m in listing.sessions)
    if all(a is b for a, b in zip(sessions, listing.sessions, strict=True)):
        return listing
    return replace(listing, sessions=sessions)


def mask_turn_commits(commits: Sequence[TurnCommit]) -> list[TurnCommit]:
    """Session history lines: `turn N: <first 60 chars of the user message>`."""
    return [replace(c, summary=mask(c.summary), message=mask(c.message)) for c in commits]


def mask_commit(commit: CommitInfo) -> CommitInfo:
    """A project commit: an agent's message holds the first 60 characters of the user message."""
    summary, message = mask(commit.summary), mask(commit.message)
    if summary is commit.summary and message is commit.message:
        return commit
    return replace(commit, summary=summary, message=message)


def mask_lines(lines: Sequence[str]) -> list[str]:
    """Lines of one text (a diff hunk's), masked as the text they make: a secret across lines (a
    private key block) is its marker on its first line, and its other lines empty."""
    ends = [line if line.endswith("\n") else line + "\n" for line in lines]
    joined = "".join(ends)
    findings = find_secrets(joined)
    if not findings:
        return list(lines)
    out: list[str] = []
    at = 0
    for line, ended in zip(lines, ends, strict=True):
        start, stop = at, at + len(line)
        at += len(ended)
        pieces: list[str] = []
        pos = start
        for f in findings:
            if f.end <= start or f.start >= stop:
                continue
            pieces.append(joined[pos : max(f.start, start)])
            if f.start >= start:  # the secret begins on this line: its marker goes here
                pieces.append(marker_for(f.kind, joined[f.start : f.end]))
            pos = min(f.end, stop)
        pieces.append(joined[pos:stop])
        out.append("".join(pieces))
    return out


def _mask_hunk(hunk: Hunk) -> Hunk:
    contents = [line.content for line in hunk.lines]
    masked = mask_lines(contents)
    lines = tuple(
        line if new is line.content else replace(line, content=new)
        for line, new in zip(hunk.lines, masked, strict=True)
    )
    return replace(hunk, header=mask(hunk.header), lines=lines)


def _mask_file(diff: FileDiff) -> FileDiff:
    return replace(diff, hunks=tuple(_mask_hunk(h) for h in diff.hunks))


def mask_commit_detail(detail: CommitDetail) -> CommitDetail:
    """A project commit's message and diff (an agent's edit may write a key into a file)."""
    return replace(detail, commit=mask_commit(detail.commit), files=tuple(_mask_file(f) for f in detail.files))


def _mask_value(value: Any, text: Callable[[str], str] = redact_whole) -> Any:
    """redact_value with markers kept (redact_whole, or `text` for each string): the same
    object when nothing changes."""
    return map_strings(value, text)


def mask_node(node: Node) -> Node:
    """A message with secrets out of its text, name, input (a file edit, the JSON view), reads
    and metadata (thinking); the same node when it holds none. As the gate's redact_node, with
    markers already in the text kept."""
    content, name = _mask_value(node.content), _mask_value(node.name) if node.name else node.name
    tool_input, metadata, reads = _mask_value(node.input), _mask_value(node.metadata), _mask_value(node.reads)
    return with_fields(node, content, name, tool_input, metadata, reads)


def mask_event(event: Event) -> Event:
    """A timeline event: its summary quotes the turn it came from."""
    summary = mask(event.summary)
    return event if summary is event.summary else replace(event, summary=summary)


def mask_hit(hit: SearchHit) -> SearchHit:
    snippet = mask(hit.snippet)
    return hit if snippet is hit.snippet else replace(hit, snippet=snippet)


@dataclass(frozen=True)
class MaskedTurns:
    turns: tuple[Turn, ...]  # every message masked
    originals: dict[str, Node]  # node id -> the node as written, for the messages that hold a secret


def _same(a: Node, b: Node) -> bool:
    """The same node read again? Node files are written once: their fields, the text compared by
    length and ends (not 5 MB of it on every reload)."""
    return (
        a.seq == b.seq
        and a.role == b.role
        and a.created_at == b.created_at
        and a.name == b.name
        and len(a.content) == len(b.content)
        and a.content[:256] == b.content[:256]
        and a.content[-256:] == b.content[-256:]
        and a.input == b.input
        and a.metadata == b.metadata
        and a.reads == b.reads
    )


class NodeMasks:
    """Masked copies of messages by (session, node id), for the last SESSIONS_KEPT sessions.
    Node files are written once, so a node seen before is masked already; the stored original
    is still compared (identity, else `_same`) so a changed node is masked again."""

    def __init__(self, sessions: int = SESSIONS_KEPT) -> None:
        self._sessions: OrderedDict[str, dict[str, tuple[Node, Node | None]]] = OrderedDict()
        self._cap = max(1, sessions)
        self._lock = threading.Lock()
        self.detections = 0  # nodes run through the detector (tests and the benchmark read it)

    def _session(self, session_id: str) -> dict[str, tuple[Node, Node | None]]:
        with self._lock:
            known = self._sessions.get(session_id)
            if known is None:
                known = self._sessions[session_id] = {}
                while len(self._sessions) > self._cap:
                    self._sessions.popitem(last=False)
            else:
                self._sessions.move_to_end(session_id)
            return known

    def node(self, session_id: str, node: Node, known: dict[str, tuple[Node, Node | None]] | None = None) -> Node:
        """The node masked: itself when it holds no secret."""
        known = self._session(session_id) if known is None else known
        entry = known.get(node.id)
        if entry is not None and (entry[0] is node or _same(entry[0], node)):
            return node if entry[1] is None else entry[1]
        masked = mask_node(node)
        self.detections += 1
        known[node.id] = (node, None if masked is node else masked)
        return masked

    def turns(self, session_id: str, turns: Sequence[Turn]) -> MaskedTurns:
        known = self._session(session_id)
        out: list[Turn] = []
        originals: dict[str, Node] = {}
        for turn in turns:
            nodes = tuple(self.node(session_id, n, known) for n in turn.nodes)
            changed = False
            for raw, masked in zip(turn.nodes, nodes, strict=True):
                if masked is not raw:
                    originals[raw.id] = raw
                    changed = True
            out.append(replace(turn, nodes=nodes) if changed else turn)
        return MaskedTurns(tuple(out), originals)
