"""One turn read as a teammate would: its tool calls, then its messages, handed to each fact kind."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence

from ....memory.records import GLOBAL
from ....model import Node, Provenance
from ...model import CollectedTurn, TurnFacts
from .. import vocabulary
from ..tools import ToolAction, arguments
from .commands import (
    fenced_commands,
    labelled_commands,
    listed_commands,
    may_give_commands,
    record_command,
    said_commands,
)
from .conventions import ONE_OFF, clause, is_convention, is_global, scope_of
from .decisions import (
    may_swap,
    record_agreed,
    record_drops,
    record_proposal,
    record_replacement,
    record_set_version,
    record_switch,
    record_untracked,
    replacements,
)
from .environment import env_names, exposed_ports, fenced_env, listed_env, routes, said_endpoints, said_env
from .evidence import added_files, bullets, edit_blocks, fenced, opening, pasted_output, sentences
from .facts import CONVENTION, ENDPOINT, ENV_VAR, EXPOSES, Knowledge
from .instructed import (
    INSTRUCTION_FILES,
    OPMEM_BLOCK,
    WRITE_INSTRUCTIONS,
    doc_file_rule,
    doc_named_by_words,
    follow_rule,
    injected_instructions,
    is_listed_rule,
    is_rule_item,
    is_rule_sentence,
    is_user_level,
    mcp_servers,
    named_instruction_files,
    named_mcp,
)
from .manifests import LOCKFILES, file_body, imports, is_manifest, local_modules
from .named import count_named, logged_packages
from .progress import record_commit, record_tracker_file
from .stack import (
    CHOOSE,
    answer_choices,
    answered,
    diff_stack,
    fenced_stack,
    labelled_names,
    listed_files,
    listed_stack,
    may_recommend,
    path_techs,
    plus_joined,
    recommended,
    record_api_url,
    record_chosen,
    record_language,
    record_listed,
    record_manifest,
    record_models,
    record_named,
    record_owned,
    record_tool_for,
    record_what_it_is,
    stated_packages,
)
from .state import (
    one_problem,
    record_doc_written,
    record_layout,
    record_problem,
    record_reported_errors,
    record_tests_claimed,
    record_tracked_task,
    said_problem,
)
from .techs import VERSIONED_LANGUAGES, mentioned_techs, versions


def _written_text(action: ToolAction) -> str:
    """What an edit or a create wrote (the new text, not the old)."""
    args = arguments(action.node)
    if isinstance(args, dict):
        parts = []
        for key in ("content", "new_string", "new_str", "file_text", "contents", "text", "code", "patch", "input"):
            value = args.get(key)
            if isinstance(value, str):
                parts.append(value)
        for edit in args.get("edits") or () if isinstance(args.get("edits"), list) else ():
            if isinstance(edit, dict) and isinstance(edit.get("new_string"), str):
                parts.append(edit["new_string"])
        if parts:
            return "\n".join(parts)
        command = args.get("command") or args.get("cmd")
        if isinstance(command, (str, list)):
            text = command if isinstance(command, str) else "\n".join(str(c) for c in command)
            return "\n".join(
                line for line in text.splitlines() if line.startswith("+") or not line.startswith(("-", "@@"))
            )
    return action.node.input if isinstance(action.node.input, str) else ""


def record_turn(k: Knowledge, turn: CollectedTurn, actions: Sequence[ToolAction], facts: TurnFacts) -> set[str]:
    """Knowledge from one turn's tool calls and messages; returns the ids of the nodes whose text
    gave a decision (their cue events are left to these records)."""
    b = k.b
    prov_of = {}

    def prov(node: Node) -> Provenance:
        found = prov_of.get(node.id)
        if found is None:
            found = prov_of[node.id] = b.provenance([node], turn=turn.number, commit=turn.commit)
        return found

    languages_seen: set[str] = set()
    for action in actions:
        _action_facts(k, action, prov(action.node), facts, languages_seen)
    servers = mcp_servers(action.tool for action in actions)
    written = [p for a in actions if a.kind in ("edit", "create", "patch") for p in a.paths if p.endswith(".md")]
    before = len(k.pending)
    for node in turn.nodes:
        if node.role == "system" and node.metadata.get("injected") and node.content:
            for _path, body, every in injected_instructions(node.content):  # the agent's context: the files' words
                k.source = "instructions"
                _instructions(k, body, prov(node), every=every)
        if node.content and not node.is_tool and node.role in ("user", "assistant"):
            _message(k, node, prov(node), languages_seen)
            if (servers or written) and node.role == "user" and not node.content.lstrip().startswith("<"):
                _told_while_done(k, node.content, servers, written, prov(node))
            if node.role == "assistant" or not node.content.lstrip().startswith("<"):
                count_named(k, node.content, turn.number, prov(node))
    k.told = len(k.pending) > before or any(n.id in k.decided for n in turn.nodes)
    return k.decided


def _action_facts(k: Knowledge, action: ToolAction, p: Provenance, facts: TurnFacts, languages_seen: set[str]) -> None:
    """What one tool call shows: files written or read, commands run, tasks filed, packages logged."""
    k.source = action.kind
    if action.kind in ("edit", "create", "patch"):
        text = _written_text(action)
        for path in action.paths:
            _code_facts(k, path, text, p, languages_seen)
            if posixpath.basename(path) in INSTRUCTION_FILES:
                _instructions(k, text, p, every=is_user_level(path))
                _standing_rule(k, follow_rule(path), p)
            elif not action.failed:
                record_doc_written(k, path, p, created=action.kind == "create")
                record_tracker_file(k, path, text, p)
    elif action.kind == "read" and not action.failed:
        _read_facts(k, action, p, languages_seen)
    elif action.kind == "other" and not action.failed:
        shown = _shown_edit(action)  # an export that shows the edit as a diff under "Edit file: <path>"
        if shown is not None:
            _code_facts(k, shown[0], shown[1], p, languages_seen)
    if action.kind in ("run", "test", "install", "git", "list", "read", "search", "edit") and action.command:
        record_command(k, action, p, facts)
        if not action.failed:
            record_tracked_task(k, action.command, p)
    if action.kind == "git":
        record_commit(k, action, p)
    if action.command and not action.failed:  # `git rm --cached` is a delete to the tool table
        record_untracked(k, action.command, p)
    if action.kind in ("run", "test") and action.output:
        logged_packages(k, action.output, p)
    elif action.kind == "list" and action.output and not action.failed:
        listed_files(k, action.command, action.output, p)


_EDIT_SUMMARY = re.compile(r"^Edit file:\s*(\S[^\n]*?)\s*$")
_DIFF_ADDED = re.compile(r"^\+(?!\+\+) ?(.*)$", re.M)


def _shown_edit(action: ToolAction) -> tuple[str, str] | None:
    """(path, added lines) of an edit a tool call shows as a diff (SpecStory's "Edit file: x" blocks)."""
    args = arguments(action.node)
    summary = args.get("summary") if isinstance(args, dict) else None
    m = _EDIT_SUMMARY.match(summary) if isinstance(summary, str) else None
    content = action.node.content or ""
    if m is None or "```diff" not in content:
        return None
    return m.group(1), "\n".join(_DIFF_ADDED.findall(content[:60_000]))


def _message(k: Knowledge, node: Node, prov: Provenance, languages_seen: set[str]) -> None:
    """A user's message or an answer, read for what it says and shows."""
    text = node.content
    if node.role == "user":
        answered(k, text)
        record_proposal(k, text, prov)
        for path in added_files(text):  # `/add src/app.py`: the project's files
            record_language(k, path, prov, 0.75, languages_seen)
            if posixpath.basename(path) in INSTRUCTION_FILES:  # `/read CONVENTIONS.md`
                _standing_rule(k, follow_rule(path), prov)
        if not text.lstrip().startswith("<"):  # the instruction files the project keeps, as named
            for rule in named_instruction_files(text):
                _standing_rule(k, rule, prov)
        if WRITE_INSTRUCTIONS.found(text[:1000]):
            return  # a request to write an instruction file (what is written is read from the file)
        if not text.lstrip().startswith("<"):
            k.source = "sentence"
            record_what_it_is(k, text, prov)
        _text_facts(k, text, prov, from_user=True)
        record_layout(k, text, prov, from_user=True)
        return
    for path, new in edit_blocks(text):  # an edit written in the answer (aider's search/replace)
        k.source = "edit"
        _code_facts(k, path, new, prov, languages_seen)
        if posixpath.basename(path) in INSTRUCTION_FILES:
            _instructions(k, new, prov)
            _standing_rule(k, follow_rule(path), prov)
    k.source = "edit"
    diff_stack(k, text, prov)
    record_agreed(k, text, prov)
    _text_facts(k, text, prov, from_user=False)
    record_layout(k, text, prov, from_user=False)
    record_tests_claimed(k, text, prov)


def _instructions(k: Knowledge, text: str, prov: Provenance, *, every: bool = False) -> None:
    """An instruction file's stack, commands, conventions and layout, as if the user said them;
    a file in the user's home (`every`) gives its rules for every project, and nothing of this one."""
    text = OPMEM_BLOCK.sub("\n", text[:40_000])
    if "opmem memory · project:" in text:  # a core block pasted in by hand: opmem's words, not the user's
        text = text.split("opmem memory · project:", 1)[0]
    lines = [line for line in _own_sections(text) if not line.lstrip().startswith("<")]  # tags, comments
    body = "\n".join(lines)
    if every:
        _rules_for_every_project(k, body, prov)
    elif body.strip():
        _text_facts(k, body, prov, from_user=True, source="instructions")
        record_layout(k, body, prov, from_user=False)
        k.source = "list"
        for item in bullets(body) if _HAS_LIST.search(body) else ():
            if is_rule_item(item.text) or is_listed_rule(item.text, item.heading):
                if not is_convention(item.text):
                    _convention(k, item.text, prov)  # "- Write a Vitest file for each module": a rule
                for tech in mentioned_techs(item.text)[:3]:  # the tools a rule names are the project's
                    k.stack(tech, prov, 0.75, slot=False)
        prose = "\n".join(line for line in body.splitlines() if not _HAS_LIST.match(line))
        for sentence in sentences(prose):  # the prose: "Use 4 spaces for indentation."
            if is_rule_sentence(sentence) and not is_convention(sentence):
                _convention(k, sentence, prov)


# an agent's own edit-format prompt a malformed edit wrote into the file ("# *SEARCH/REPLACE block* Rules:")
_AGENT_FORMAT_HEADING = re.compile(r"^\s*#+.*SEARCH/REPLACE", re.I)


def _own_sections(text: str) -> list[str]:
    """The file's lines less the sections that hold an agent's edit-format prompt."""
    out, skipping = [], False
    for line in text.splitlines():
        if line.lstrip().startswith("#"):
            skipping = bool(_AGENT_FORMAT_HEADING.match(line))
        if not skipping:
            out.append(line)
    return out


def _rules_for_every_project(k: Knowledge, body: str, prov: Provenance) -> None:
    k.source = "instructions"
    for sentence in sentences(body):
        if is_convention(sentence):
            _convention(k, sentence, prov, every=True)
    for item in bullets(body) if _HAS_LIST.search(body) else ():
        if (is_rule_item(item.text) or is_listed_rule(item.text, item.heading)) and not is_convention(item.text):
            _convention(k, item.text, prov, every=True)


def _read_facts(k: Knowledge, action: ToolAction, prov: Provenance, languages_seen: set[str]) -> None:
    """What a file the agent read says: a manifest's stack, a lockfile's manager, an instruction file's rules."""
    for path in action.paths:
        base = posixpath.basename(path)
        if base in INSTRUCTION_FILES:
            _instructions(k, file_body(action.node.content or ""), prov, every=is_user_level(path))
            _standing_rule(k, follow_rule(path), prov)
        if is_manifest(path):
            record_manifest(k, path, action.node.content or "", prov, 0.85)
        elif base in LOCKFILES:
            record_named(k, LOCKFILES[base], prov, 0.8)
        record_language(k, path, prov, 0.75, languages_seen)
        path_techs(k, path, prov)


def _code_facts(k: Knowledge, path: str, text: str, prov: Provenance, seen: set[str]) -> None:
    base = posixpath.basename(path)
    record_language(k, path, prov, 0.85, seen)
    path_techs(k, path, prov)
    if is_manifest(path):
        record_manifest(k, path, text, prov, 0.9)
    elif base in LOCKFILES:
        record_named(k, LOCKFILES[base], prov, 0.85)
    if not text:
        return
    record_models(k, text, prov)
    for module in local_modules(path, text)[:200]:  # an index module re-exports them all
        path_techs(k, module, prov, 0.7)
    for name in imports(path, text)[:40]:
        tech = vocabulary.lookup(name)
        if tech is not None and tech.curated:
            k.stack(
                tech,
                prov,
                0.85,
                slot=tech.category in ("orm", "http-client", "web-framework", "test-framework", "e2e-framework"),
            )
    env_file = base.startswith(".env") or base.endswith(".env")
    for name in env_names(text, env_file=env_file)[:30]:
        k.fact(ENV_VAR, k.b.entity("env-var", name, prov), prov, 0.85)
    for route in routes(text)[:30]:
        k.fact(ENDPOINT, k.b.entity("endpoint", route, prov), prov, 0.85)
    if not is_manifest(path):
        for port in exposed_ports(path, text)[:5]:
            k.fact(EXPOSES, k.b.entity("port", port, prov), prov, 0.75)


def _text_facts(k: Knowledge, text: str, prov: Provenance, *, from_user: bool, source: str = "sentence") -> None:
    if from_user and text.lstrip().startswith("<"):
        return  # injected context (<environment_context>, <system-reminder>, ...)
    _structure(k, text[:20_000], prov, from_user=from_user)
    k.source = source
    if not from_user:
        _answer_facts(k, text[:20_000], prov)
        return
    told = source == "sentence"  # an instruction file states rules, not the problems the user has
    record_reported_errors(k, text if told else "", prov)
    pasted = from_user and pasted_output(text[:20_000])  # its "make sure ..." is the tool's advice, not the user's
    _listed_rules(k, text[:20_000], prov, said=source == "sentence" and not pasted)
    k.source = source
    problems: list[str] = []
    for sentence in sentences(text[:20_000]):
        question = sentence.endswith("?")
        swaps = [] if question else replacements(sentence)
        for old, new in swaps:
            record_replacement(k, old, new, prov, from_user)
        if from_user:
            record_owned(k, sentence, prov)  # "why does the React component re-render?": asked, still the stack
        # "..., for some reason the text is the same every time, maybe a bug?": a report all the same
        problems.append(said_problem(sentence, question=True) if told and question else "")
        if not from_user or question:
            continue
        replaced = bool(swaps) or record_switch(k, sentence, prov) or record_drops(k, sentence, prov)  # a decision
        record_set_version(k, sentence, prov)
        chosen = CHOOSE.search(sentence)
        stated = chosen is not None  # the sentence says what is used: its versions are the stack's
        if chosen and not replaced:
            record_chosen(k, sentence, chosen.start(), prov)
        elif not replaced:
            stated = record_listed(k, sentence, prov)
        said_commands(k, sentence, prov)
        record_api_url(k, sentence, prov)
        if not replaced:
            record_tool_for(k, sentence, prov)
        for tech, number in versions(sentence):
            if tech.name in VERSIONED_LANGUAGES or stated:
                k.version(tech, number, prov, 0.9)
        if ONE_OFF.found(sentence):
            k.decided.add(prov.node_ids[0])  # "DO NOT CHANGE the contents": about this edit, no decision
        if not pasted:
            _said_rule(k, sentence, prov, replaced=replaced)
        if told and not replaced and not is_convention(sentence):
            problems.append(said_problem(sentence, question=False))
        said_env(k, sentence, prov)
        said_endpoints(k, sentence, prov)
    record_problem(k, one_problem(problems), prov)


def _listed_rules(k: Knowledge, text: str, prov: Provenance, *, said: bool) -> None:
    """The rules a user's message lists under a heading ("## Code style" / "- 4-space indent");
    an instruction file's are read with the file."""
    if not said or "\n" not in text or _HAS_LIST.search(text) is None:
        return
    k.source = "list"
    for item in bullets(text):
        if is_listed_rule(item.text, item.heading) and not is_convention(item.text):
            _convention(k, item.text, prov)


def _convention(k: Knowledge, sentence: str, prov: Provenance, *, every: bool = False) -> None:
    """A rule the user states, as a short clause; in the global scope when it holds in every
    project (or every project of a language, which the clause then names)."""
    name = clause(sentence)
    if len(name) < 6 or (" " not in name and name.isascii()):
        return  # a heading ("Conventions"), not a rule
    said_every, language = scope_of(sentence)
    every = every or said_every
    if language:
        name = f"{language}: {name}"
    attrs = {"language": language} if language else None
    entity = k.b.entity("convention", name, prov, key=f"convention:{name.lower()}", attrs=attrs)
    if every:
        k.fact(CONVENTION, entity, prov, 0.85, subject=k.person(prov), scope=GLOBAL)
    else:
        k.fact(CONVENTION, entity, prov, 0.85)
    k.decided.add(prov.node_ids[0])


def _said_rule(k: Knowledge, sentence: str, prov: Provenance, *, replaced: bool) -> None:
    """A rule a user's sentence states; one that is also a decision is the decision's, unless it holds everywhere."""
    if is_convention(sentence):
        if not replaced or is_global(sentence):
            _convention(k, sentence, prov)
    elif doc := doc_file_rule(sentence):
        _standing_rule(k, doc, prov)


def _standing_rule(k: Knowledge, name: str, prov: Provenance, *, key: str = "") -> None:
    """A rule the session shows by what is done, in its own short words ("instructions: AGENTS.md")."""
    if not name:
        return
    key = key or f"convention:{name.lower()}"
    k.fact(CONVENTION, k.b.entity("convention", name, prov, key=key), prov, 0.8)


def _told_while_done(k: Knowledge, text: str, servers: list[str], written: list[str], prov: Provenance) -> None:
    """What a user's message names that the agent then does in the same turn: an MCP server it
    calls (a tool to use), a Markdown file it writes that the message names by its words."""
    k.source = "sentence"
    for sentence in sentences(text[:8000]):
        for words, key in named_mcp(sentence, servers):
            _standing_rule(k, f"MCP: {words}", prov, key=f"convention:mcp:{key}")
        if written:
            _standing_rule(k, doc_named_by_words(sentence, written), prov)


# a message with a list in it: a line opening with a bullet or a number
_HAS_LIST = re.compile(r"^[ \t]{0,6}(?:[-*+•]|\d{1,2}[.)])\s", re.MULTILINE)


def _structure(k: Knowledge, text: str, prov: Provenance, *, from_user: bool) -> None:
    """What a message's Markdown shows: commands, environment names and manifests in fenced
    blocks (with the line that labels each), and technologies, commands and names listed under
    a heading. The user's word counts above an answer's."""
    confidence = 0.85 if from_user else 0.75
    labelled_commands(k, text, prov, from_user=from_user)
    blocks = fenced(text)
    if blocks:
        k.source = "block"
        fenced_commands(k, blocks, prov, from_user=from_user)
        fenced_env(k, blocks, prov, confidence=confidence)
        fenced_stack(k, blocks, prov, confidence=confidence)
    if "\n" in text and _HAS_LIST.search(text) is not None:
        items = bullets(text)
        k.source = "list"
        listed_stack(k, items, prov, confidence=confidence)
        listed_env(k, items, prov, confidence=confidence)
        listed_commands(k, items, prov, from_user=from_user)
        labelled_names(k, items, prov, confidence=confidence)
    if " + " in text:
        k.source = "list"
        plus_joined(k, text, prov, confidence=confidence)


# literals one of which every form of _ANSWER_CHOICE holds (most sentences hold none)
_CHOICE_WORDS = ("going with", "went with", "'ll use", "'ll go with", "will use", "opted", "settled", "chose", "picked",
                 "gone with", "gonna go")  # fmt: skip


def _answer_facts(k: Knowledge, text: str, prov: Provenance) -> None:
    """An answer: the recommendation it opens with (taken if the user goes on with it), the
    replacements and choices it reports, commands it gives in backticks, variables it names."""
    if may_recommend(text):
        recommended(k, opening(text), prov)
    low = text.lower() if text.isascii() else ""  # (other text: every cue is looked for)
    swap = may_swap(text)
    choice = not low or any(word in low for word in _CHOICE_WORDS)
    ticks = "`" in text
    commands = ticks and may_give_commands(text)
    env = "_" in text and (not low or "env" in low or "export" in low or "set" in low)
    packages = "installed" in text or " import" in text
    if ticks:
        _backticked_paths(k, text, prov, languages_seen=set())
    if not (swap or choice or commands or env or packages):
        return
    for sentence in sentences(text):
        if sentence.endswith("?"):
            continue
        if packages:
            stated_packages(k, sentence, prov)
        if swap:
            for old, new in replacements(sentence):
                record_replacement(k, old, new, prov, False)
        if choice:
            answer_choices(k, sentence, prov)
        if commands and "`" in sentence:
            said_commands(k, sentence, prov, from_user=False)
        if env:
            said_env(k, sentence, prov, confidence=0.7)


# a project file named in backticks (`backend/src/App/Settings.cs`): its language and what it is named after
_TICKED_PATH = re.compile(r"`((?:[\w.@-]+[/\\])*[\w.@-]+\.[A-Za-z]{1,5})`")
TICKED_PATHS = 12


def _backticked_paths(k: Knowledge, text: str, prov: Provenance, *, languages_seen: set[str]) -> None:
    found = list(dict.fromkeys(m.group(1) for m in _TICKED_PATH.finditer(text[:20_000])))[:TICKED_PATHS]
    if len(found) < 2:
        return  # one file named in passing may be anyone's
    k.source = "path"
    for path in found:
        record_language(k, path, prov, 0.7, languages_seen)
        path_techs(k, path, prov)
    k.source = "sentence"
