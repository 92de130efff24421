"""Instructions beyond a sentence's words: the instruction files agents read (which they are, what
their lists and prose state, whose they are), the files a project keeps them in ("instructions:
AGENTS.md"), the MCP tools the user names and the agent then calls ("MCP: brightdata"), and the
Markdown file the user has the plan and docs written into ("docs: dev.md")."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable

from ..caseless import Caseless
from .conventions import LABELLED

# the files a project keeps its instructions for agents in: what they state is the user's word
# (an agent's `/init` writes one from the code; the user edits it)
INSTRUCTION_FILES = frozenset(
    {"CLAUDE.md", "AGENTS.md", "AGENT.md", "GEMINI.md", "QWEN.md", "CRUSH.md", "OpenCode.md", "opencode.md",
     "CONVENTIONS.md", ".cursorrules", ".windsurfrules", ".clinerules", ".roorules", ".goosehints",
     "copilot-instructions.md", "CLAUDE.local.md"}
)  # fmt: skip


# an agent's instruction file in the user's home, not a project's: ~/.claude/CLAUDE.md,
# ~/.codex/AGENTS.md, ~/.gemini/GEMINI.md, ~/.config/opencode/AGENTS.md hold for every project
_USER_LEVEL = re.compile(
    r"^(?:~|/home/[^/]+|/Users/[^/]+|/root|[A-Za-z]:[\\/]Users[\\/][^\\/]+)[\\/]"
    r"\.(?:claude|codex|gemini|qwen|crush|config[\\/][\w.-]+)[\\/][^\\/]+$"
)


def is_user_level(path: str) -> bool:
    return bool(_USER_LEVEL.match(path))


# the instruction files an agent hands the model as context, each under its path ("Contents of
# /home/me/.claude/CLAUDE.md (user's private global instructions for all projects):")
_CONTENTS_OF = re.compile(r"^Contents of (\S+) \(([^)\n]*)\):[ \t]*$", re.MULTILINE)
_CONTEXT_END = re.compile(
    r"^\s*(?:IMPORTANT: this context may or may not be relevant|</system-reminder>)", re.MULTILINE
)


def injected_instructions(text: str) -> list[tuple[str, str, bool]]:
    """(path, text, holds in every project) of each instruction file an agent put in its context."""
    if "Contents of " not in text:
        return []
    heads = list(_CONTENTS_OF.finditer(text[:60_000]))
    out = []
    for head, after in zip(heads, [*heads[1:], None], strict=True):
        path = head.group(1)
        if posixpath.basename(path.replace("\\", "/")) not in INSTRUCTION_FILES:
            continue
        body = text[head.end() : after.start() if after is not None else len(text)]
        end = _CONTEXT_END.search(body)
        body = body[: end.start()] if end is not None else body
        every = "global" in head.group(2).lower() or "all projects" in head.group(2).lower() or is_user_level(path)
        out.append((path, body, every))
    return out


# "Please analyze this codebase and create a CLAUDE.md file containing: 1. Build/lint/test
# commands ... 2. Code style guidelines ..." (an agent's /init prompt, or the user's own): it
# says what the file should cover, not how the project works; what is written is read from the file
WRITE_INSTRUCTIONS = Caseless(
    re.compile(
        r"\b(?:create|write|generate|produce|draft|update|improve|add|append|init\w*)\b[^\n]{0,80}?(?<![\w.-])(?:"
        + "|".join(re.escape(name.lower()) for name in sorted(INSTRUCTION_FILES, key=len, reverse=True))
        + r")(?![\w.-])",
        re.IGNORECASE,
    )
)


# what opmem itself keeps in such a file (`opmem core --write`, `opmem connect`): its own output, never read back
OPMEM_BLOCK = re.compile(r"<!-- opmem:[\w:-]*begin.*?(?:<!-- opmem:[\w:-]*end -->|\Z)", re.DOTALL)


# an instruction file named in a message, `-` and `_` alike ("copilot_instructions.md")
_NAMED_FILE = re.compile(
    r"(?<![\w.~/-])((?:~/|/)?(?:[\w.-]+/)*(?:"
    + "|".join(re.escape(name).replace(r"\-", "[-_]") for name in sorted(INSTRUCTION_FILES, key=len, reverse=True))
    + r"))(?![\w-]|\.\w)",
    re.IGNORECASE,
)


def follow_rule(path: str) -> str:
    """The rule a project's instruction file stands for ("" for a file in the user's home, which
    holds for every project and is read as rules of its own)."""
    if is_user_level(path):
        return ""
    return f"instructions: {posixpath.basename(path.replace(chr(92), '/'))}"


_NEGATION = re.compile(r"\b(?:not|don'?t|never|no|without|instead of|ignore|skip)\b|\bне\b|不要|não", re.I)


def named_instruction_files(text: str) -> list[str]:
    """The project instruction files a user's message names (`AGENTS.md`, `.github/copilot-instructions.md`)."""
    low = text[:4000].lower()
    if not any(mark in low for mark in (".md", "rules")):
        return []
    found = []
    for m in _NAMED_FILE.finditer(text[:4000]):
        if m.group(1).startswith(("~", "/home/", "/Users/", "/root/")):
            continue  # the user's own file, for every project
        before = re.split(r"[.!?\n]", text[max(0, m.start() - 200) : m.start()])[-1]
        if _NEGATION.search(before):
            continue  # "do not waste tokens reading CLAUDE.md": not the project's way
        rule = follow_rule(m.group(1))
        if rule and rule not in found:
            found.append(rule)
    return found


# an MCP tool as agents name it: Claude Code `mcp__server__tool`, Cursor `mcp_Server_Name_tool`
_MCP = re.compile(r"^mcp[_-]{1,2}(.+)$", re.IGNORECASE)
_LETTERS = re.compile(r"[^a-z0-9]+")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9-]*")
MIN_NAME = 5  # "git" named in passing is no server's name


def mcp_servers(tools: Iterable[str]) -> list[str]:
    """The MCP tools of calls, each lowercased to its letters and digits (server and tool name run together)."""
    out = []
    for tool in tools:
        m = _MCP.match(tool or "")
        if m is not None:
            joined = _LETTERS.sub("", m.group(1).lower())
            if joined and joined not in out:
                out.append(joined)
    return out


def named_mcp(sentence: str, servers: list[str]) -> list[tuple[str, str]]:
    """(the words, the tool it names) of each MCP server a sentence names by the words its tool's
    name begins with ("sequential thinking" for `mcp_Sequential_Thinking_sequentialthinking`)."""
    if not servers or sentence.endswith(("?", "？")):
        return []
    words = [m.group(0) for m in _WORD.finditer(sentence)]
    out: list[tuple[str, str]] = []
    for i in range(len(words)):
        for n in (3, 2, 1):  # the longest run of words that names one
            run = words[i : i + n]
            if len(run) < n:
                continue
            key = _LETTERS.sub("", "".join(run).lower())
            if len(key) < MIN_NAME:
                continue
            server = next((s for s in servers if s.startswith(key) and len(key) * 4 >= len(s)), "")
            if server:
                if all(server != s for _, s in out):
                    out.append((" ".join(run), server))
                break
    return out


# a Markdown file the user has something written into: "write the plan into an `.md` file",
# "写到 dev.md 文档中", "atualize @plan.md com ...": a writing verb and the file, in one sentence
_DOC_FILE = re.compile(
    r"(?<![\w/.-])@?((?:[\w.-]+/)*[\w.<>-]*[\w>]\.md)(?![A-Za-z0-9_-])|\b(?:an?|the|um|uma) `?\.md`? (?:file|document|arquivo)",
    re.I,
)
_WRITE_VERB = re.compile(
    r"\b(?:write|put|save|add|append|update|document|record|keep|specify|amend|plan|summari[sz]e|"
    r"escrev\w*|atualiz\w*|adicion\w*|registr\w*|salv\w*|coloqu\w*|document\w*|"
    r"escrib\w*|actualiz\w*|añad\w*|guard\w*|"
    r"запиш\w*|напиш\w*|обнов\w*|добав\w*|сохран\w*|"
    r"zapisz\w*|zaktualizuj\w*|dodaj\w*)\b|写到|写入|写进|更新|记录|补充|保存",
    re.I,
)


def doc_file_rule(sentence: str) -> str:
    """The Markdown file a user's sentence has written into ("" when none): a project's working
    document (the plan, the design, the docs), not an agent's instruction file."""
    if ".md" not in sentence.lower() or sentence.endswith(("?", "？")):
        return ""
    m = _DOC_FILE.search(sentence)
    if m is None or _WRITE_VERB.search(sentence) is None:
        return ""
    name = m.group(1)
    if name is None:
        return "docs: plans and specs in an .md file"
    return _doc_rule(name)


def _doc_rule(path: str) -> str:
    parts = [p for p in path.replace("\\", "/").split("/") if p not in ("", ".", "..")]
    base = parts[-1] if parts else ""
    if not base or base.lower() in {f.lower() for f in INSTRUCTION_FILES} or _NAMED_FILE.fullmatch(base):
        return ""
    return f"docs: {'/'.join(parts[-2:])}"  # its folder too: "agent-reports/analyzer-<id>.md"


# "add to the future development document" while the agent writes future_development.md
_DOC_NOUN = re.compile(
    r"\b(?:document|doc|docs|file|plan|roadmap|spec|specification|notes|documento|arquivo)\b|документ|文档", re.I
)


def doc_named_by_words(sentence: str, written: Iterable[str]) -> str:
    """The Markdown file written in the turn that a user's sentence asks to write by its words,
    not its name ("" when none)."""
    if sentence.endswith(("?", "？")) or not _DOC_NOUN.search(sentence) or not _WRITE_VERB.search(sentence):
        return ""
    words = set(re.findall(r"[^\W_]+", sentence.lower()))
    for path in written:
        if not path.lower().endswith(".md"):
            continue
        stem = re.findall(r"[^\W_]+", posixpath.basename(path.replace("\\", "/"))[:-3].lower())
        if stem and (len(stem) >= 2 or len(stem[0]) >= 6) and all(w in words for w in stem):
            return _doc_rule(posixpath.basename(path.replace("\\", "/")))
    return ""


# the verbs a rule in an instruction file opens with ("- Write a Vitest file for ...", "- Declare magic numbers as const")
IMPERATIVES = frozenset(
    [
        "use",
        "write",
        "add",
        "avoid",
        "prefer",
        "provide",
        "declare",
        "keep",
        "follow",
        "organize",
        "organise",
        "put",
        "name",
        "place",
        "return",
        "throw",
        "raise",
        "handle",
        "log",
        "test",
        "document",
        "include",
        "import",
        "export",
        "run",
        "check",
        "make",
        "ensure",
        "limit",
        "wrap",
        "split",
        "extract",
        "define",
        "mark",
        "leave",
        "remove",
        "separate",
        "sort",
        "group",
        "start",
        "end",
        "validate",
        "type",
        "annotate",
        "comment",
        "format",
        "lint",
        "commit",
        "store",
        "favor",
        "favour",
        "adhere",
        "stick",
        "apply",
        "treat",
        "reuse",
        "create",
        "do",
        "don't",
        "dont",
        "never",
        "always",
        "only",
    ]
)


def is_rule_item(text: str) -> bool:
    """A list item of an instruction file that states a rule: it opens with an imperative, or
    with a label and then one ("**Formatting**: Use black")."""
    plain = re.sub(r"[*_`]", "", text)
    plain = LABELLED.sub("", plain, count=1)
    first = plain.split(" ", 1)[0].lower().rstrip(":,")
    return first in IMPERATIVES and len(plain.split()) >= 3 and not text.endswith("?")


# verbs whose sentences in a file's prose are how to run things (the commands' part), not rules
_COMMAND_VERBS = frozenset({"run", "check", "start", "test", "lint", "format", "commit", "type", "do", "end"})


def is_rule_sentence(sentence: str) -> bool:
    """A sentence of an instruction file's prose that states a rule: it opens with an imperative."""
    first = re.sub(r"[*_`]", "", sentence).split(" ", 1)[0].lower()
    return is_rule_item(sentence) and first not in _COMMAND_VERBS and not sentence.rstrip("*").endswith(":")


# a list under such a heading states rules whatever its items open with ("## Code style" / "- 4-space indent")
RULES_HEADING = re.compile(
    r"\b(?:rules?|conventions?|guidelines?|code ?style|coding (?:style|standards?)|style guide|preferences|"
    r"do'?s and don'?ts|don'?ts|regras|conven[çc][õo]es|diretrizes|reglas|convenciones|pautas|"
    r"правила|соглашения|zasady|konwencje|regu[łl]y|wytyczne)\b|规范|规则|约定|准则",
    re.I,
)


def is_listed_rule(text: str, heading: str) -> bool:
    """A list item under a rules heading: a rule if it says something (three words, or a few CJK characters)."""
    if not heading or not RULES_HEADING.search(heading) or text.endswith(("?", ":")):
        return False
    plain = re.sub(r"[*_`]", "", text)
    return len(plain.split()) >= 3 or (not plain.isascii() and len(plain) >= 4 and " " not in plain.strip())
