"""The one registry of recall tools: name, description, JSON Schema, examples, function.

Every front end (the MCP server, the CLI, tests) lists and calls tools through here, so a
tool has one schema and one behaviour everywhere. `call` validates the arguments against the
schema, runs the tool read-only, and turns every expected failure into a structured error reply.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from jsonschema import Draft202012Validator

from ..memory.records import EVENT_KINDS
from ..model import OpmemError
from ..privacy import redact_value
from .context import Recall
from .errors import BAD_ARGUMENT, STORE_ERROR, UNKNOWN_TOOL, RecallError, did_you_mean
from .git_tools import MAX_LIMIT, memory_git_log, memory_git_show
from .handoff_tool import memory_handoff
from .memory_tools import memory_graph_neighbors, memory_timeline
from .open_session import memory_open_session
from .reply import encode
from .search_tool import MAX_RESULTS, memory_search
from .usage_tool import memory_usage

Reply = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Tool:
    name: str
    description: str
    input_schema: Mapping[str, Any]  # JSON Schema 2020-12 of the arguments; `examples` inside
    fn: Callable[..., Reply]

    @property
    def examples(self) -> tuple[Mapping[str, Any], ...]:
        return tuple(self.input_schema.get("examples", ()))


def _schema(properties: dict[str, Any], required: list[str], examples: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
        "examples": examples,
    }


_SESSION_ID = {
    "type": "string",
    "minLength": 1,
    "description": "A session id, or the pointer form session:<id>; a unique prefix of an id will do "
    "(core.md's pointers are short: session:cc-5f1c2a9e).",
}
_PROJECT_ID = {
    "type": "string",
    "minLength": 1,
    "description": "A bound project's id (or name); default: the project of the caller's folder.",
}
_DATE = {"type": "string", "minLength": 1, "description": "ISO date/time (2025-06-01) or relative ('2 weeks ago')."}
_OFFSET = {"type": "integer", "minimum": 0, "description": "Character offset to read on from (from a `more` pointer)."}
_PAGE = {"type": "integer", "minimum": 0, "default": 0, "description": "Page of a long reply (see next_page)."}

OPEN_SESSION = Tool(
    "memory_open_session",
    "Open a stored agent session. Without `turn`: its title, branches and one line per turn. With "
    "`turn`: that turn's messages in order, tool calls (name, input) and their results included. "
    "Long texts end in '... (+N more lines)' with a `more` pointer: call again with its node, part "
    "and offset to read on. Replies are paged (`next_page`).",
    _schema(
        {
            "session_id": _SESSION_ID,
            "turn": {"type": "integer", "minimum": 1, "description": "Turn number along the branch (1-based)."},
            "branch": {
                "type": "string",
                "minLength": 1,
                "description": "Branch name (main, retry-...) or a head node id.",
            },
            "page": _PAGE,
            "node": {"type": "string", "minLength": 1, "description": "A message id: read that message's text on."},
            "part": {"enum": ["content", "input"], "default": "content", "description": "Which text of `node`."},
            "offset": _OFFSET,
        },
        ["session_id"],
        [
            {"session_id": "cc-5f1c2a"},
            {"session_id": "session:cc-5f1c2a", "turn": 3},
            {"session_id": "cc-5f1c2a", "turn": 3, "page": 1},
            {"session_id": "cc-5f1c2a", "node": "n-0042", "part": "content", "offset": 2730},
        ],
    ),
    memory_open_session,
)

GIT_LOG = Tool(
    "memory_git_log",
    "A bound project's commits, newest first. Agent commits carry the model, session and turn that "
    "made them; other commits the session turn linked to them. `since` takes ISO or relative dates.",
    _schema(
        {
            "project_id": _PROJECT_ID,
            "since": _DATE,
            "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT, "default": 50},
            "after": {"type": "string", "minLength": 4, "description": "Page on after this commit (from `more`)."},
        },
        [],
        [{}, {"project_id": "shop-1a2b3c", "since": "2 weeks ago"}, {"limit": 10, "after": "3f2a9c1d0b7e"}],
    ),
    memory_git_log,
)

GIT_SHOW = Tool(
    "memory_git_show",
    "One commit of a bound project: message, author, the session turns linked to it, and its diff "
    "file by file (each cut to a preview, paged). With `path`: that file's whole diff, read on with `offset`.",
    _schema(
        {
            "commit": {"type": "string", "minLength": 1, "description": "A commit hash (7+ hex digits) or revision."},
            "project_id": _PROJECT_ID,
            "path": {"type": "string", "minLength": 1, "description": "One changed file, to read its diff whole."},
            "page": _PAGE,
            "offset": _OFFSET,
        },
        ["commit"],
        [
            {"commit": "3f2a9c1"},
            {"commit": "HEAD", "project_id": "shop-1a2b3c", "page": 1},
            {"commit": "3f2a9c1", "path": "src/app.py", "offset": 4000},
        ],
    ),
    memory_git_show,
)

TIMELINE = Tool(
    "memory_timeline",
    "What happened, from the distilled memory: timeline events (work, decisions, learnings, "
    "events) newest first, in the caller's project (plus global ones). Filter by an entity (id, "
    "name or alias), a date window (ISO or relative) and kinds. Each event carries its pointer: "
    "source session:<id>, turn and commit (open it with memory_open_session).",
    _schema(
        {
            "entity": {"type": "string", "minLength": 1, "description": "Only events about this entity."},
            "since": _DATE,
            "until": _DATE,
            "kinds": {
                "type": "array",
                "items": {"enum": list(EVENT_KINDS)},
                "minItems": 1,
                "uniqueItems": True,
                "description": "Event kinds to keep.",
            },
            "page": _PAGE,
        },
        [],
        [
            {},
            {"since": "2 weeks ago", "kinds": ["decision", "learning"]},
            {"entity": "worker", "since": "2025-06-01", "until": "2025-06-30", "page": 1},
        ],
    ),
    memory_timeline,
)

NEIGHBORS = Tool(
    "memory_graph_neighbors",
    "What is known about an entity, from the knowledge graph: its current relations within `hops` "
    "(1-3), nearest first, or as they stood at `as_of`. Superseded facts are counted, not shown. "
    "Each edge carries its pointer: source session:<id>, turn and commit.",
    _schema(
        {
            "entity": {"type": "string", "minLength": 1, "description": "An entity id, name or alias."},
            "hops": {"type": "integer", "minimum": 1, "maximum": 3, "default": 2},
            "as_of": _DATE,
            "page": _PAGE,
        },
        ["entity"],
        [
            {"entity": "worker"},
            {"entity": "uvicorn", "hops": 1},
            {"entity": "service.worker-1a2b3c4d", "as_of": "2025-06-01"},
        ],
    ),
    memory_graph_neighbors,
)

SEARCH = Tool(
    "memory_search",
    "Search everything remembered: session turns and tool calls, timeline events, entities and "
    "facts, ranked together; words, a question or a date work. Each hit has a snippet and its "
    "pointer (source session:<id>, turn, commit, node): open it with memory_open_session.",
    _schema(
        {
            "query": {"type": "string", "minLength": 1, "description": "Keywords or a question."},
            "k": {"type": "integer", "minimum": 1, "maximum": MAX_RESULTS, "default": 10},
            "since": _DATE,
            "until": _DATE,
            "page": _PAGE,
        },
        ["query"],
        [
            {"query": "which port does the worker listen on"},
            {"query": "uvicorn reload", "k": 5},
            {"query": "failing test", "since": "last week", "page": 1},
        ],
    ),
    memory_search,
)

USAGE = Tool(
    "memory_usage",
    "Tokens and cost the coding agents recorded, summed by day, week, month, session, project, agent "
    "or model (ccusage's JSON: inputTokens, outputTokens, cacheCreationTokens, cacheReadTokens, "
    "totalTokens, totalCost, modelBreakdowns). Default: the caller's project, by day; project_id "
    "'all' for every project. Costs come from an offline price table; a model it lacks has cost null.",
    _schema(
        {
            "report": {
                "enum": ["daily", "weekly", "monthly", "session", "project", "agent", "model"],
                "default": "daily",
            },
            "since": _DATE,
            "until": _DATE,
            "project_id": {
                "type": "string",
                "minLength": 1,
                "description": "A bound project's id or name, or 'all'; default: the project of the caller's folder.",
            },
            "agent": {"type": "string", "minLength": 1, "description": "Only this agent (claude-code, codex, ...)."},
            "page": _PAGE,
        },
        [],
        [
            {"since": "1 week ago"},
            {"report": "model", "project_id": "all", "since": "2025-06-01"},
            {"report": "session", "since": "this month", "agent": "claude-code"},
        ],
    ),
    memory_usage,
)

HANDOFF = Tool(
    "memory_handoff",
    "A brief of a session to carry on its work: the goal, what was done, the files touched, the "
    "decisions, what failed and what is still open, and the project's core block, within `budget` "
    "tokens (estimated as UTF-8 bytes / 3). Every line ends with its pointer session:<id>#turn N.",
    _schema(
        {
            "session_id": _SESSION_ID,
            "budget": {"type": "integer", "minimum": 60, "maximum": 32000, "default": 2000},
        },
        ["session_id"],
        [{"session_id": "cc-5f1c2a"}, {"session_id": "session:cc-5f1c2a", "budget": 800}],
    ),
    memory_handoff,
)

TOOLS: Mapping[str, Tool] = MappingProxyType(
    {t.name: t for t in (OPEN_SESSION, GIT_LOG, GIT_SHOW, TIMELINE, NEIGHBORS, SEARCH, HANDOFF, USAGE)}
)


def tools_line() -> str:
    """The line agents' instruction blocks name the tools with, each with its required arguments:
    derived from the registry, so a new tool is named there at once."""
    calls = []
    for tool in TOOLS.values():
        arguments = tool.input_schema.get("required") or list(tool.input_schema.get("properties", ()))[:1]
        calls.append(f"{tool.name}({', '.join(arguments)})")
    return f"opmem memory tools (MCP server `opmem`): {', '.join(calls)}."


@functools.cache
def _validator(name: str) -> Draft202012Validator:
    return Draft202012Validator(TOOLS[name].input_schema)


def _check(tool: Tool, arguments: Mapping[str, Any]) -> None:
    errors = sorted(_validator(tool.name).iter_errors(arguments), key=lambda e: list(e.path))
    if errors:
        first = errors[0]
        where = ".".join(str(p) for p in first.path) or "arguments"
        raise RecallError(BAD_ARGUMENT, f"{tool.name}: {where}: {first.message}")


def call(recall: Recall, name: str, arguments: Mapping[str, Any] | None = None) -> Reply:
    """Run tool `name`; a reply dict, with an `error` object when the call cannot be answered.
    Every reply passes the privacy gate last (the tools read sessions redacted already; this
    catches what they quote from elsewhere: titles, commit messages, a project's git log)."""
    return redact_value(_call(recall, name, arguments))


def _call(recall: Recall, name: str, arguments: Mapping[str, Any] | None) -> Reply:
    try:
        tool = TOOLS.get(name)
        if tool is None:
            raise RecallError(UNKNOWN_TOOL, f"no tool {name!r}", did_you_mean(name, list(TOOLS)))
        args = dict(arguments or {})
        _check(tool, args)
        return tool.fn(recall, **args)
    except RecallError as exc:
        return exc.to_json()
    except OpmemError as exc:
        return {"error": {"code": STORE_ERROR, "message": str(exc)}}


def call_json(recall: Recall, name: str, arguments: Mapping[str, Any] | None = None) -> tuple[str, bool]:
    """(reply as compact JSON within the reply budget, whether it is an error)."""
    reply = call(recall, name, arguments)
    return encode(reply, recall.max_reply_bytes), "error" in reply
