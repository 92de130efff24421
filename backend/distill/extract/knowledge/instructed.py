"""Standing instructions a session shows besides a rule's words: the instruction files a project
keeps ("instructions: AGENTS.md"), the MCP tools the user names and the agent then calls ("use
MCP: brightdata"), and the Markdown file the user has plans and docs written into."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable

from .conventions import INSTRUCTION_FILES, is_user_level

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
