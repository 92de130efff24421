"""Rules for coding sessions: entities, relations and one work event per turn.

For each turn the tool nodes become actions (tools.py), the actions become TurnFacts (files
edited/created/read, commands run, packages installed, tests, errors, commits, URLs, ports),
and the facts become records: the session edited/read/created files, ran commands, installed
packages, uses tools and models; a command or test fails-with an error, the error is fixed-by
the files edited before the same command passed again; a service listens-on a port; a project
depends-on the packages of a manifest it read. Decision and learning events come from cue
phrases (cues.py).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from ...model import Node
from ..model import CollectedTurn, SessionBatch, TurnFacts
from . import patterns
from .builder import RecordBuilder
from .cues import find_cues, preference
from .knowledge import Knowledge, record_named_often, record_turn
from .knowledge.manifests import manifest_packages
from .personal_records import user_facts
from .summary import work_importance, work_summary
from .tools import ToolAction, absolute_path, normalize_path, read_tool, rejected, tool_key

SCAN_CHARS = 20_000  # of a tool result: its head and its tail are where errors and counts are
RUN_KINDS = frozenset({"run", "test", "install", "git"})
MANIFESTS = frozenset(
    {"package.json", "requirements.txt", "pyproject.toml", "Cargo.toml", "go.mod", "Gemfile", "mix.exs"}
)
# box-drawing characters: a prompt copied out of a terminal UI's input box ("┃ Add the readme ┃")
_BOX = re.compile(r"[\u2500-\u257f]+")
_INJECTED = re.compile(r"^\s*<(environment_context|user_instructions|system-reminder|local-command-\w+|command-\w+)>")


def _scan(text: str) -> str:
    if len(text) <= SCAN_CHARS:
        return text
    half = SCAN_CHARS // 2
    return text[:half] + "\n" + text[-half:]


@dataclass(slots=True)
class BatchState:
    """What the rules carry from one turn to the next within a batch."""

    session_entity: str = ""
    subject: str = ""  # the project entity when there is one, else the session
    used: dict[tuple[str, str], str] = field(default_factory=dict)  # (kind, name) -> entity linked by `uses`
    open_errors: dict[str, list[str]] = field(default_factory=dict)  # command entity -> error ids
    edits_since: dict[str, list[str]] = field(default_factory=dict)  # command entity -> file ids edited since
    ran_since: dict[str, list[str]] = field(default_factory=dict)  # command entity -> commands run (and passed) since
    knowledge: Knowledge | None = None  # what the batch teaches about the project (knowledge/)


def begin_batch(b: RecordBuilder, batch: SessionBatch, *, knowledge: bool = True) -> BatchState:
    session = batch.session
    first = batch.turns[0].nodes[:1] if batch.turns else ()
    prov = b.provenance(first, turn=batch.turns[0].number if batch.turns else None)
    state = BatchState()
    state.session_entity = b.entity(
        "session",
        session.title or session.session_id,
        prov,
        key=session.session_id,
        attrs={"session_id": session.session_id, "source": session.source},
    )
    state.subject = state.session_entity
    if session.project_id or session.root:
        name = session.project_name or posixpath.basename(session.root.rstrip("/")) or session.project_id
        project = b.entity("project", name, prov, key=session.project_key, attrs={"workdir": session.root})
        b.edge(state.session_entity, "part-of", project, prov, once=True)
        state.subject = project
    state.knowledge = Knowledge(b, state.subject) if knowledge else None
    return state


def turn_actions(turn: CollectedTurn) -> list[ToolAction]:
    actions: list[ToolAction] = []
    for node in turn.nodes:
        if node.is_tool and not rejected(node):
            actions.extend(read_tool(node))
    return actions


def turn_facts(turn: CollectedTurn, actions: list[ToolAction]) -> TurnFacts:
    root = turn.session.root
    edited, created, deleted, read, commands, programs, searches, urls = ([] for _ in range(8))
    installed, errors, commits, tools, moved, fixed = ([] for _ in range(6))
    failed_with: dict[str, list[str]] = {}  # program -> the errors it failed with, not yet passed
    tests = ""
    for action in actions:
        paths = [normalize_path(p, root) for p in action.paths]
        tools.append(action.tool)
        if action.command:
            commands.append(action.command)
        kind = action.kind
        if kind == "edit":
            edited += paths
        elif kind == "create":
            created += paths
            edited += paths
        elif kind == "delete" and not action.failed:
            deleted += paths
        elif kind == "move" and not action.failed and len(paths) >= 2:
            moved += [f"{p} -> {paths[-1]}" for p in paths[:-1]]
        elif kind == "read":
            read += paths
        elif kind in ("search", "websearch") and action.pattern:
            searches.append(("web:" if kind == "websearch" else "") + action.pattern)
        elif kind == "fetch" and action.url:
            urls.append(action.url)
        if kind in RUN_KINDS and action.program:
            programs.append(action.program)
        installed += action.packages
        out = _scan(action.output or action.node.content or "") if kind in RUN_KINDS else ""
        summary = patterns.test_summary(out) if kind == "test" or out else ""  # once, not once more when found
        if summary:
            tests = summary
        _outcome(action, out, errors, fixed, failed_with)
        if action.program == "git commit" or action.tool == "aider":
            commits += [h for h, _ in patterns.git_commits_in_output(out)] + (
                [action.pattern] if action.pattern else []
            )
    for node in turn.nodes:
        read += [normalize_path(r, root) for r in node.reads if "/" in r or "." in r]
    user = turn.anchor if turn.anchor.role == "user" else None
    models = [n.name for n in turn.nodes if n.role == "assistant" and n.name]
    return TurnFacts(
        session_id=turn.session.session_id,
        anchor_id=turn.anchor.id,
        turn=turn.number,
        request=_request(user.content if user is not None else ""),
        edited=patterns.unique(edited),
        created=patterns.unique(created),
        deleted=patterns.unique(deleted),
        moved=patterns.unique(moved),
        read=patterns.unique(read),
        commands=patterns.unique(commands),
        programs=patterns.unique(programs),
        searches=patterns.unique(searches),
        urls=patterns.unique(urls),
        installed=patterns.unique(installed),
        tests=tests,
        errors=patterns.unique([e for e in errors if e not in fixed]),
        commits=patterns.unique(commits),
        tools=patterns.unique(tools),
        models=patterns.unique(models),
        fixed=patterns.unique(fixed),
    )


def _outcome(
    action: ToolAction, out: str, errors: list[str], fixed: list[str], failed_with: dict[str, list[str]]
) -> None:
    """A failed command's errors; once the same program passes later in the turn they are fixed."""
    if action.failed and out:
        found = patterns.errors(out)
        errors += found
        failed_with.setdefault(action.program, []).extend(found)
    elif not action.failed and action.program in failed_with:
        fixed += failed_with.pop(action.program)


def _request(text: str) -> str:
    if _INJECTED.match(text):
        return ""
    return " ".join(_BOX.sub(" ", text).split())[:300]


def extract_turn(b: RecordBuilder, turn: CollectedTurn, state: BatchState) -> TurnFacts:
    actions = turn_actions(turn)
    facts = turn_facts(turn, actions)
    b.facts.append(facts)
    mentioned: list[str] = []
    for action in actions:
        mentioned += _action_records(b, turn, action, state)
    mentioned += _uses(b, turn, facts, state)
    decided: set[str] = set()
    if state.knowledge is not None:
        decided = record_turn(state.knowledge, turn, actions, facts)
    events_before = b.event_count
    mentioned += _text_records(b, turn, state, decided)
    told = state.knowledge is not None and state.knowledge.told
    said = b.event_count > events_before or told  # the turn's text gave a decision, a learning or a fact
    reply = next((n.content for n in reversed(turn.nodes) if n.role == "assistant" and n.content), "")
    summary = work_summary(facts, reply, said=said)
    if summary and (actions or facts.request):
        prov = b.provenance(_work_nodes(turn, actions), turn=turn.number, commit=turn.commit)
        key = f"work:{turn.session.session_id}:{turn.anchor.id}"
        b.event(summary, "work", work_importance(facts), prov, [state.session_entity, *mentioned], key=key)
    return facts


def _work_nodes(turn: CollectedTurn, actions: list[ToolAction]) -> list[Node]:
    """The anchor, the tool nodes that did something, and the turn's last node (it grows with the turn)."""
    nodes = [turn.anchor]
    nodes += [a.node for a in actions if a.kind not in ("plan", "other", "list")]
    nodes.append(max(turn.nodes, key=lambda n: n.seq))
    return nodes


_FILE_RELATIONS = {"edit": "edited", "create": "created", "delete": "deleted", "read": "read", "move": "moved"}


def _action_records(b: RecordBuilder, turn: CollectedTurn, action: ToolAction, state: BatchState) -> list[str]:
    root = turn.session.root
    prov = b.provenance([action.node], turn=turn.number, commit=turn.commit)
    mentioned: list[str] = []
    relation = _FILE_RELATIONS.get(action.kind)
    for raw in action.paths if relation else ():
        path = normalize_path(raw, root)
        if not path or path == ".":
            continue
        full = absolute_path(path, root)
        attrs = {"path": full} if full else {}
        file_id = b.entity("file", path, prov, aliases=[raw] if raw != path else (), attrs=attrs)
        b.edge(state.session_entity, relation, file_id, prov, once=True)
        mentioned.append(file_id)
        if action.kind in ("edit", "create"):
            _folder(b, path, file_id, prov, state, root)
            for edits in state.edits_since.values():
                edits.append(file_id)
        if action.kind == "read" and posixpath.basename(path) in MANIFESTS and not action.failed:
            _manifest(b, path, action.node.content or "", prov, state)
    if action.kind == "fetch" and action.url:
        url_id = b.entity("url", action.url, prov)
        b.edge(state.session_entity, "read", url_id, prov, once=True)
        mentioned.append(url_id)
    if action.kind in RUN_KINDS and action.program:
        mentioned += _run_records(b, action, prov, state)
    return mentioned


def _folder(b: RecordBuilder, path: str, file_id: str, prov, state: BatchState, root: str) -> None:
    folder = posixpath.dirname(path)
    if folder and not folder.startswith("/"):
        full = absolute_path(folder, root)
        folder_id = b.entity("folder", folder, prov, attrs={"path": full} if full else {})
        b.edge(file_id, "part-of", folder_id, prov, once=True)
        if state.subject != state.session_entity:
            b.edge(folder_id, "part-of", state.subject, prov, once=True)
    elif state.subject != state.session_entity and not path.startswith("/"):
        b.edge(file_id, "part-of", state.subject, prov, once=True)


def _run_records(b: RecordBuilder, action: ToolAction, prov, state: BatchState) -> list[str]:
    command = b.entity("command", action.program, prov)
    b.edge(state.session_entity, "ran", command, prov, once=True)
    mentioned = [command]
    output = _scan(action.output or "")
    for package in action.packages:
        package_id = b.entity("package", package, prov)
        b.edge(state.subject, "installed", package_id, prov, once=True)
        mentioned.append(package_id)
    if action.failed:
        errors = patterns.errors(output)
        for name, message in patterns.failed_tests(output)[:5]:
            test_id = b.entity("test", name, prov)
            mentioned.append(test_id)
            if message:
                error_id = b.entity("error", message, prov)
                b.edge(test_id, "fails-with", error_id, prov)
        for error in errors[:2]:
            error_id = b.entity("error", error, prov)
            b.edge(command, "fails-with", error_id, prov)
            state.open_errors.setdefault(command, []).append(error_id)
            state.edits_since.setdefault(command, [])
            state.ran_since.setdefault(command, [])
            mentioned.append(error_id)
    else:
        _passed(b, action, command, prov, state)
    port = patterns.serving_port(output) or next(iter(patterns.ports(action.command)), None)
    if port and action.kind == "run":
        port_id = b.entity("port", port, prov)
        b.edge(command, "listens-on", port_id, prov, confidence=0.8)
        mentioned.append(port_id)
    for short, message in patterns.git_commits_in_output(output) if action.program == "git commit" else ():
        commit_id = b.entity("commit", short, prov, attrs={"message": message[:200]})
        b.edge(state.session_entity, "created", commit_id, prov)
        if state.subject != state.session_entity:
            b.edge(commit_id, "part-of", state.subject, prov, once=True)
        for issue in patterns.fixed_issues(message):
            b.edge(b.entity("issue", issue, prov), "fixed-by", commit_id, prov, confidence=0.9)
        mentioned.append(commit_id)
    return mentioned


def _passed(b: RecordBuilder, action: ToolAction, command: str, prov, state: BatchState) -> None:
    """A command that worked: the errors it failed with before are fixed by the files edited
    since or, with none, by what ran since (a `makemigrations` before `migrate` passed); with
    neither (fixed outside the session: "I fixed the password in .env"), by the run that passed,
    at a lower confidence: the error is history either way, not a current problem."""
    if command in state.open_errors:
        fixes = state.edits_since.get(command) or state.ran_since.get(command, ())
        for error_id in state.open_errors.pop(command):
            for fix_id in dict.fromkeys(fixes):
                b.edge(error_id, "fixed-by", fix_id, prov, confidence=0.6)
            if not fixes:
                b.edge(error_id, "fixed-by", command, prov, confidence=0.5)
        state.edits_since.pop(command, None)
        state.ran_since.pop(command, None)
    if action.kind in ("run", "install"):
        for failed_command, ran in state.ran_since.items():
            if failed_command != command:
                ran.append(command)


def _manifest(b: RecordBuilder, path: str, text: str, prov, state: BatchState) -> None:
    for package in manifest_packages(posixpath.basename(path), text)[:80]:
        b.edge(state.subject, "depends-on", b.entity("package", package, prov), prov, confidence=0.9, once=True)


def _uses(b: RecordBuilder, turn: CollectedTurn, facts: TurnFacts, state: BatchState) -> list[str]:
    mentioned: list[str] = []
    for kind, names in (("tool", facts.tools), ("model", facts.models)):
        for name in names:
            eid = state.used.get((kind, name))
            if eid is None:  # the first use in the batch: the entity, and the edge that says so
                node = _first_named(turn.nodes, name, kind)
                prov = b.provenance([node] if node else turn.nodes[:1], turn=turn.number, commit=turn.commit)
                eid = state.used[(kind, name)] = b.entity(kind, name, prov)
                b.edge(state.session_entity, "uses", eid, prov, once=True)
            mentioned.append(eid)
    return mentioned


def _first_named(nodes: Iterable[Node], name: str, kind: str) -> Node | None:
    role = "assistant" if kind == "model" else None
    for node in nodes:
        if (role is None and node.is_tool and (node.name == name or tool_key(node.name) == name)) or (
            role == "assistant" and node.role == "assistant" and node.name == name
        ):
            return node
    return None


def _text_records(
    b: RecordBuilder, turn: CollectedTurn, state: BatchState, decided: set[str] = frozenset()
) -> list[str]:
    """Decisions, learnings, issues, URLs, ports and models named in the prompt and replies."""
    mentioned: list[str] = []
    for node in turn.nodes:
        if node.role not in ("user", "assistant") or node.is_tool or not node.content:
            continue
        if node.role == "user" and _INJECTED.match(node.content):
            continue
        text = node.content[:SCAN_CHARS]
        prov = b.provenance([node], turn=turn.number, commit=turn.commit)
        named: list[str] = []
        for issue in patterns.issue_refs(text):
            named.append(b.entity("issue", issue, prov))
        if node.role == "user":
            named += user_facts(b, node, text, turn=turn.number, commit=turn.commit)
        for url in patterns.urls(text)[:5] if node.role == "user" and "://" in text else ():
            named.append(b.entity("url", url, prov))
        for model in patterns.models(text)[:3]:
            named.append(b.entity("model", model, prov))
        for service, port in patterns.listeners(text) if patterns.may_name_a_port(text) else ():
            service_id = b.entity("service", service, prov)
            port_id = b.entity("port", port, prov)
            b.edge(service_id, "listens-on", port_id, prov, confidence=0.7)
            named += [service_id, port_id]
        mentioned += named
        for ordinal, cue in enumerate(find_cues(text, from_user=node.role == "user")):
            if cue.kind == "decision" and node.id in decided:
                continue  # the knowledge rules wrote this decision as a replacement or a drop
            importance = (0.75 if cue.kind == "decision" else 0.65) + (0.1 if node.role == "user" else 0.0)
            label = "Decided" if cue.kind == "decision" else "Learned"
            key = f"{cue.kind}:{turn.session.session_id}:{node.id}:{ordinal}"
            b.event(f"{label}: {cue.sentence}", cue.kind, importance, prov, [state.session_entity, *named], key=key)
            _cue_edges(b, cue.sentence, cue.kind, prov, state, named, node.role == "user")
    return mentioned


def _cue_edges(
    b: RecordBuilder, sentence: str, kind: str, prov, state: BatchState, named: list[str], user: bool
) -> None:
    if kind != "decision":
        return
    choice = preference(sentence) if user else None
    if choice:
        person = b.entity("person", "user", prov, key="user")
        b.edge(person, "prefers", b.entity("concept", choice, prov), prov, confidence=0.7)
    for eid in named:
        b.edge(state.subject, "decided", eid, prov, confidence=0.7)


def extract_coding(b: RecordBuilder, batch: SessionBatch, *, knowledge: bool = True) -> list[TurnFacts]:
    state = begin_batch(b, batch, knowledge=knowledge)
    facts = [extract_turn(b, turn, state) for turn in batch.turns]
    if state.knowledge is not None:
        record_named_often(state.knowledge)
        state.knowledge.flush()
    return facts
