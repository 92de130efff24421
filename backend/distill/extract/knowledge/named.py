"""Technologies a session keeps naming, and packages its log output shows.

A teammate skimming a session notices what it talks about turn after turn ("the Qdrant
collection", "the Streamlit page"): a technology named in several turns of one session is one
the project works with, even when no manifest or install shows it. One named once is talk (a
comparison, a suggestion), not use. A traceback or a log line names the package whose code ran
(`WARNING  langchain_core.callbacks.manager:manager.py:306`).
Both are weaker evidence than a manifest or a run: recorded with a low confidence, never filling
a slot (so never superseding what stronger evidence put there), and never for a technology the
batch dropped.
"""

from __future__ import annotations

import builtins
import re

from ....model import Provenance
from .. import vocabulary
from .evidence import CODE_BLOCK
from .facts import DROPPED, Knowledge
from .techs import COMMON_WORDS, mentioned_techs, spaced

NAMED_TURNS = 3  # turns of one session that name a technology before it counts as used
NAMED_CONFIDENCE = 0.6
LOGGED_CONFIDENCE = 0.65
NAMED_CHARS = 6000  # of each message: where what it is about is said

# a Python logger's name before `:file.py:line` (a package's path in a traceback is not enough:
# dependencies of dependencies run too)
_LOGGER = re.compile(r"^\s*(?:DEBUG|INFO|WARNING|ERROR|CRITICAL)\s+([a-z][a-z0-9_]+)[\w.]*:[\w.-]+\.py:\d+", re.M)
# a warning a package defines, raised where the project's own code uses it
# (`src/tools/__init__.py:4: LangChainDeprecationWarning: ...`): the package is the warning's prefix
_WARNING = re.compile(
    r"^[ \t]*([^\n]{1,300}?)\.py:\d+: ([A-Z][A-Za-z0-9]+?)(?:Deprecation|PendingDeprecation|Future|User|Runtime|Beta)?Warning:",
    re.M,
)
_NOT_PROJECT_CODE = ("site-packages", "dist-packages", "/lib/python", "\\lib\\python", "<frozen")
_PYTEST_HEADER = re.compile(r"^platform \S+ -- Python (\d+\.\d+)(?:\.\d+)?, pytest-\d", re.M)
LOG_WINDOW = 20_000  # of a long output, the head (setup, collection) and the tail (the summary) are read


def count_named(k: Knowledge, text: str, turn: int, prov: Provenance) -> None:
    """Note the technologies a message names (fenced code left out: that is what the code uses,
    read elsewhere), for `record_named_often` at the end of the batch."""
    prose = CODE_BLOCK.sub("\n", text[:NAMED_CHARS])
    for line in prose.splitlines():
        if not line.strip() or line.lstrip().startswith(("<", ">")):
            continue  # an injected tag, a quote
        line = spaced(_QUOTED.sub(" ", line))  # "Jenkins & Co": data or an example, not a tool
        for tech in mentioned_techs(line):
            if len(tech.name) < 2 or tech.name in _SHELLS or tech.category in _NOT_BY_NAME:
                continue
            if not _named_as_tool(tech.name, line):
                continue  # `C:\Users`, "Make sure", "Next, ...": a word, not the technology
            turns, _, first = k.named.get(tech.name, (set(), tech, prov))
            turns.add(turn)
            k.named[tech.name] = (turns, tech, first)


# the terminal a user types in ("open a PowerShell terminal") is the machine's, not the project's:
# a shell is the stack when the project's scripts are written in it (`.ps1`, `.sh`), not when it is named
_SHELLS = frozenset({"PowerShell", "Bash", "Zsh"})
# a platform or a model is named in talk of compatibility and of the agent itself ("works on iOS
# Safari", "as Claude I ..."): the project's only by stronger evidence (a manifest, an import, a setting)
_NOT_BY_NAME = frozenset({"platform", "llm"})
_NEGATIONS = frozenset({"no", "not", "without", "never", "avoid", "sem", "sin", "nunca", "без", "не", "нет"})
_QUOTED = re.compile(r"\"[^\"]{0,80}\"|“[^”]{0,80}”")


def _named_as_tool(name: str, line: str) -> bool:
    """The technology's own name is written (not an alias: "Next" is not Next.js); one that is
    also an English word counts inside a sentence after a lower-case word ("built on Electron"),
    not opening one ("Flow of data"), in a heading or in lower case ("the flow")."""
    common = name.lower() in COMMON_WORDS
    for m in re.finditer(rf"(?<![\w.-]){re.escape(name)}(?![\w-])", line, 0 if common else re.I):
        before = line[: m.start()].rstrip()
        previous = before.rsplit(None, 1)[-1] if before else ""
        if previous.lower().strip("*_(") in _NEGATIONS:
            continue  # "No SQL scripts, only AL code": named to be ruled out
        if not common:
            return True
        after = line[m.end() :].lstrip()
        if previous[-1:].isalpha() and previous[:1].islower() and not after[:1].isupper():
            return True
    return False


def record_named_often(k: Knowledge) -> None:
    dropped = {target for (_, relation, target, _) in k.pending if relation == DROPPED}
    for turns, tech, prov in k.named.values():
        if len(turns) >= NAMED_TURNS and k.tech(tech, prov) not in dropped:
            k.stack(tech, prov, NAMED_CONFIDENCE, slot=False)
    k.named.clear()


def logged_packages(k: Knowledge, output: str, prov: Provenance) -> None:
    """Packages a tool's output shows running: a traceback's paths, a log line's logger."""
    header = _PYTEST_HEADER.search(output[:LOG_WINDOW])
    if header is not None:  # the interpreter the project's tests ran on
        python = vocabulary.lookup("Python")
        if python is not None:
            k.version(python, header.group(1), prov, LOGGED_CONFIDENCE)
    if ".py:" not in output:
        return
    text = output if len(output) <= 2 * LOG_WINDOW else output[:LOG_WINDOW] + "\n" + output[-LOG_WINDOW:]
    names = {m.group(1) for m in _LOGGER.finditer(text)}
    if "Warning:" in text:
        names |= {
            m.group(2)
            for m in _WARNING.finditer(text)
            if not any(p in m.group(1) for p in _NOT_PROJECT_CODE) and not hasattr(builtins, m.group(2) + "Warning")
        }
    for name in sorted(names):
        tech = _package_tech(name)
        if tech is not None and tech.curated:
            k.stack(tech, prov, LOGGED_CONFIDENCE, slot=False)


def _package_tech(name: str) -> vocabulary.Tech | None:
    """`fastapi` -> FastAPI; `langchain_core` (a package of the LangChain family) -> LangChain."""
    tech = vocabulary.lookup(name) or vocabulary.lookup(name.replace("_", "-"))
    if (tech is None or not tech.curated) and "_" in name:
        family = vocabulary.lookup(name.split("_", 1)[0])
        if family is not None and family.curated and family.category != "language":
            return family
    return tech
