"""Progress: work done and still to do, from answers' summaries, status headings and marks, tables,
checklists, commits and task trackers' files, in the languages users and answers write in."""

from __future__ import annotations

import posixpath
import re

from ....model import Provenance
from .. import patterns
from ..tools import ToolAction, arguments
from .evidence import CODE_BLOCK
from .facts import TASK_DONE, TASK_PENDING, Knowledge

_PROGRESS_HINTS = (
    "done", "todo", "to do", "pending", "remaining", "[x]", "[ ]", "next step", "next up", "complete", "finished",
    "implemented", "what's next", "whats next", "follow-up", "follow up", "created", "summary", "changes", "|",
    *"✅✔☑⏳🔄🚧⬜☐🔲",
    # the same words in the other languages users and answers write in (pt/es, ru, zh, de, fr)
    "conclu", "complet", "feito", "pendente", "pendiente", "próximo", "proximo", "siguiente", "progresso",
    "criado", "creado", "готов", "сделан", "выполнен", "заверш", "осталось", "следующ", "создан",
    "完成", "待办", "下一步", "后续", "进行中", "创建", "erledigt", "nächste", "offen", "terminé", "prochaine",
)  # fmt: skip


_PROGRESS_HINT = re.compile("|".join(re.escape(w) for w in _PROGRESS_HINTS))


# progress said in a sentence: "Done with the refactor of the handlers; next up is the auth middleware"
_SAID_DONE = re.compile(
    r"(?:^|[.;!]\s+)(?:(?:i'?m|we'?re|i am|we are)\s+)?(?:done|finished)\s+with\s+(?P<item>[^;.!?]{3,})", re.I
)


_PRONOUNS = frozenset({"this", "that", "it", "them", "these", "those", "everything", "all of it", "all that"})


_SAID_NEXT = re.compile(r"\bnext\s+(?:up|step)(?:\s+is|\s*:)\s+(?P<item>[^;.!?]{3,})", re.I)


_PROGRESS_LINE = re.compile(
    r"^(?:#{1,4}\s+)?(?:[-*•]\s+|\d+[.)]\s+)?(?:\*\*|__)?(?P<label>done|completed|finished|pending|todo|to ?do|"
    r"remaining|still to do|left to do|next steps?|not done yet)(?:\s+(?:tasks?|items?|work))?(?:\*\*|__)?\s*"
    r"(?:\(\d+\))?\s*(?::|—|–|-\s)(?:\*\*|__)?\s*"
    r"(?P<items>.*)$",
    re.I,
)


_PROGRESS_HEADING = re.compile(  # "## Done", "**Remaining**", "Pending:" over a list
    r"^(?:#{1,4}\s+(?P<a>done|completed|finished|pending|todo|to ?do|remaining|next steps?)\s*:?|"
    r"(?:\*\*|__)(?P<b>done|completed|finished|pending|todo|to ?do|remaining|next steps?)(?:\*\*|__)\s*:?)\s*$",
    re.I,
)


_CHECKBOX = re.compile(r"^(?:[-*]|\d+[.)])\s+\[(?P<mark>[ xX✓])\]\s+(?P<item>.+)$")


_BULLET = re.compile(r"^(?:[-*•]|\d+[.)])\s+(?P<item>.+)$")


_DONE_LABELS = frozenset({"done", "completed", "finished"})


_NOTHING = frozenset({"none", "nothing", "n/a", "na", "-", "—", "nothing yet", "all done", "none yet"})


TASKS_PER_MESSAGE = 8  # of each status: a closing summary's done table does not crowd out what is left


TASK_CHARS = 120


USER_PROGRESS_CHARS = 600


def progress_items(text: str, *, from_user: bool = False, announced: set[str] | None = None) -> list[tuple[bool, str]]:
    """(done?, task) a text states: `Done: X` / `TODO: Y` lines (or such a heading over a list or
    a table), markdown checklists, and an answer's status marks (`- ✅ X`, `### X ✅`, `- ⏳ Y`);
    code blocks and code comments are not read. A user's long message is a pasted document or a
    prompt template (a compaction request lists "Pending Tasks:" as what to write), not a
    statement of progress: only a short one is read."""
    if from_user and len(text) > USER_PROGRESS_CHARS:
        return []
    text = _tail(text, PROGRESS_CHARS)
    low = text.lower()
    if _PROGRESS_HINT.search(low) is None:
        return []
    out: list[tuple[bool, str]] = []
    under: bool | None = None  # the status of a heading whose list (or table) follows
    listed = False  # an item was read under it (a blank line then ends the list)
    open_boxes: list[tuple[bool, str]] = []  # a checklist's unchecked items, and where the checklists end
    boxes_end = 0
    lines = CODE_BLOCK.sub("\n", text).splitlines()
    for n, raw in enumerate(lines):
        line = raw.strip()
        if not line:
            under = under if not listed else None
            listed = False
            continue
        if line[0].isalpha() and not _MAY_LABEL.search(line):  # prose (most lines): only a sentence may say
            out += _said_items(line)
            under = None
            continue
        if line.startswith("|"):  # a table's row under a status heading
            out += _table_items(line, lines[n + 1] if n + 1 < len(lines) else "", under)
            listed = listed or under is not None
            continue
        over = _list_status(line)
        if over is not None:
            under, listed = over, False
            continue
        headed = _finished(line, announced) or _labelled(line)
        if headed is not None:
            items, under = headed
            out += items
            listed = False
            continue
        said = _said_items(line)
        if said:
            out += said
            under = None
            continue
        box = _CHECKBOX.match(line)
        if box is not None:
            open_boxes += [(False, item) for item in task_list(box.group("item"), split=False) if box["mark"] == " "]
            out += [(box.group("mark") != " ", item) for item in task_list(box.group("item"), split=False)]
            boxes_end = len(out)
            continue
        marked = _marked_item(line)
        if marked is not None and (under is not None or line.startswith("#")):
            # "- ✅ Dynamic trigger patterns" under "Remaining:", "### 2. **Polls** ✅": the mark says
            out += [(marked[0], item) for item in task_list(marked[1], split=False)]
            listed = listed or under is not None
            continue
        bullet = _BULLET.match(line) if under is not None else None
        if bullet is not None and under is not None and not bullet.group("item").endswith(":"):  # not a heading
            out += [(under, item) for item in task_list(bullet.group("item"), split=False)]
            listed = True
        else:
            under = None
    if open_boxes and any(done for done, _ in out[boxes_end:]):
        # a working checklist, then a summary of what got done: the summary is the newer word
        out = [t for t in out[:boxes_end] if t not in open_boxes] + out[boxes_end:]
    found = list(dict.fromkeys(out))  # a long answer closes with its summary: the last of each status
    last = {done: [t for t in found if t[0] is done][-TASKS_PER_MESSAGE:] for done in (True, False)}
    return [t for t in found if t in last[t[0]]]


PROGRESS_CHARS = 20_000


def _tail(text: str, size: int) -> str:
    """The end of a long answer (where its closing summary is), from a line outside code."""
    if len(text) <= size:
        return text
    cut = text.find("\n", len(text) - size)
    if cut < 0:
        return ""
    if len(re.findall(r"^[ \t]*```", text[:cut], re.MULTILINE)) % 2:  # inside a fenced block: after it
        close = re.compile(r"^[ \t]*```", re.MULTILINE).search(text, cut + 1)
        cut = text.find("\n", close.end()) if close else -1
        if cut < 0:
            return ""
    return text[cut + 1 :]


_MAY_LABEL = re.compile(r"[:—–]|\s-\s")  # "Done: X", "TODO — Y", "Next steps - Z"
_SAID_HINT = re.compile(r"(?i)done|finished|next")


def _finished(line: str, announced: set[str] | None) -> tuple[list[tuple[bool, str]], bool | None] | None:
    """(items, the status of the list below) of a heading that announces work finished or left."""
    finished = _finished_heading(line)
    if not finished:
        return None
    left = _LEFT.match(finished)  # "## Remaining Phase 2 Tasks (4/6 done)": what is left, and its list
    if left:
        return [(False, left.group("rest"))], False
    if announced is not None and " " in finished:
        announced.add(finished)  # "## ✅ Poll System Implementation Complete!": news
    return [(True, finished)], None


def _labelled(line: str) -> tuple[list[tuple[bool, str]], bool | None] | None:
    """(items, the status of the list below) of a `Done: X` / `TODO:` line."""
    label = _PROGRESS_LINE.match(line)
    if label is None:
        return None
    done = label.group("label").lower() in _DONE_LABELS
    rest = label.group("items").strip()
    return ([(done, item) for item in task_list(rest)], None) if rest else ([], done)


def _list_status(line: str) -> bool | None:
    """The status of a heading over a list ("## Done", "**Remaining**", "### ⏭️ What's Next")."""
    heading = _PROGRESS_HEADING.match(line)
    if heading is not None:
        return (heading.group("a") or heading.group("b")).lower() in _DONE_LABELS
    return _heading_status(line)


def _said_items(line: str) -> list[tuple[bool, str]]:
    """Progress said in a sentence: "Done with the refactor; next up is the auth middleware"."""
    if _SAID_HINT.search(line) is None:
        return []
    said = [(True, m.group("item")) for m in _SAID_DONE.finditer(line)]
    said += [(False, m.group("item")) for m in _SAID_NEXT.finditer(line)]
    return [
        (done, item)
        for done, raw_item in said
        for item in task_list(raw_item, split=False)
        if item.lower() not in _PRONOUNS  # "I'm done with this": not a task
    ]


# a status mark an answer puts on an item: done, or still to do / under way
_DONE_MARKS = "✅✔☑"
_OPEN_MARKS = "⏳🔄🚧⬜☐🔲⌛"
_MARK_CHARS = re.compile(f"[{_DONE_MARKS}{_OPEN_MARKS}\ufe0f]")


def _mark(text: str) -> bool | None:
    done = any(c in text for c in _DONE_MARKS)
    still = any(c in text for c in _OPEN_MARKS)
    return None if done == still else done


def unmarked(text: str) -> str:
    return " ".join(_MARK_CHARS.sub(" ", text).split())


_NUMBERED = re.compile(r"^(?:#{1,6}\s+)?(?:[-*•]\s+)?(?:\d{1,2}[.)]\s+)?")


def _marked_item(line: str) -> tuple[bool, str] | None:
    """(done?, item) of a bullet or a line that opens with a status mark, or a heading that ends
    with one; None otherwise (a heading that opens with a mark is a section's title)."""
    if _MARK_CHARS.search(line) is None:
        return None
    plain = line.replace("\ufe0f", "").strip()
    heading = plain.startswith("#")
    body = _NUMBERED.sub("", plain).strip()
    body = re.sub(r"^(?:\*\*|__)\s*", "", body)
    if not body:
        return None
    if heading:
        if body[-1] not in _DONE_MARKS or len(body.split()) < 3:
            return None  # "## Fixed! ✅" names no work
        item = body[:-1]
    elif body[0] in _DONE_MARKS + _OPEN_MARKS:
        item = body[1:]
    else:
        return None
    done = _mark(body)
    item = re.sub(r"\s*\((?:\d+/\d+[^)]*|\d+%)\)\s*$", "", unmarked(item).strip(" *_:"))  # its "(4/4 tasks)"
    return (done, item) if done is not None and len(item) >= 3 else None


# a table row's first cell (its header row, the one above the |---| line, and that line are not rows)
_SEPARATOR = re.compile(r"^\|?[\s:|-]+\|?$")


def _table_items(line: str, following: str, under: bool | None) -> list[tuple[bool, str]]:
    row = _table_row(line, following) if under is not None else None
    if row is None or under is None:
        return []
    first, mark = row
    return [(under if mark is None else mark, item) for item in task_list(first, split=False)]


def _table_row(line: str, following: str) -> tuple[str, bool | None] | None:
    """(its first cell, the status its cells mark) of a table row."""
    if _SEPARATOR.match(line) or (_SEPARATOR.match(following.strip()) and "-" in following):
        return None
    cells = [unmarked(c).strip(" *_") for c in line.strip().strip("|").split("|")]
    first = next((c for c in cells if c), "")
    return (first, _mark(line)) if first else None


# a heading that says what its list is, in an answer's words ("### 🎯 What Was Done", "## ✅ Fixes
# Implemented", "### ⏭️ What's Next"): emoji and marks aside
_DONE_HEADING = re.compile(
    r"^(?:what (?:was|we|i) (?:done|did|implemented|built|changed|fixed|added)|(?:fixes|changes|features?|work) "
    r"(?:implemented|made|added|done|completed)|(?:implemented|completed|done|finished|accomplished)(?: (?:work|tasks?|items?))?|"
    r"summary of changes|changes summary|(?:files? )?created|new files|created files|"
    # the same in Portuguese/Spanish, Russian, Chinese, German, French
    r"o que foi feito(?: hoje)?|lo que se hizo|conclu[ií]d[oa]s?|complet[oa]s?|completad[oa]s?|feito|hecho|terminad[oa]s?|"
    r"criad[oa]s?|arquivos criados|archivos creados|cread[oa]s?|"
    r"готово|сделано|выполнено|завершено|что сделано|создано|созданные файлы|"
    r"已完成|完成情况|已创建|新建文件|创建的文件|erledigt|fertig|terminé|fait)$",
    re.I,
)
_NEXT_HEADING = re.compile(
    r"^(?:next steps?|what'?s next|(?:still )?to ?do|todos?|remaining(?: (?:work|tasks?|items?))?|"
    r"pending(?: (?:work|tasks?|items?))?|follow[- ]ups?|in progress|not done yet|"
    r"pr[oó]xim[oa]s? (?:passos|pasos|etapas|a[cç][aã]o(?: recomendada)?)|siguientes pasos|pendentes?|pendientes?|"
    r"em (?:progresso|andamento)|en (?:progreso|curso)|a fazer|por hacer|"
    r"следующие шаги|осталось|в процессе|в работе|"
    r"待办(?:事项)?|下一步|后续(?:步骤|工作)?|进行中|未完成|nächste schritte|offen|à faire|prochaines étapes)$",
    re.I,
)
_HEADING_LINE = re.compile(r"^(?:#{1,6}\s+(?P<a>.+)|(?:\*\*|__)(?P<b>[^*_]+)(?:\*\*|__)\s*:?)$")


# a heading that announces a piece of work finished: "## ✅ Poll System Implementation Complete!",
# "## Phase 2: Fact Quality Management - Complete", "### Login Flow Fixed"
_COMPLETE = (
    r"(?:complete|completed|done|finished|implemented|fixed|complet[oa]|conclu[ií]d[oa]|implementad[oa]|finalizad[oa]|"
    r"terminad[oa]|готов[оa]?|завершен[оa]?|выполнен[оa]?|реализован[оa]?|已?完成|已实现|abgeschlossen|terminée?)"
)
_FINISHED = re.compile(
    r"^(?P<topic>.+?)\s*[-–—:]?\s*(?:(?:implementation|integration|refactor(?:ing)?|migration|setup)\s+)?"
    rf"(?:is\s+)?(?:100\s*)?{_COMPLETE}\s*[!.]*$",
    re.I,
)
# "## ✅ Work Complete - System Prompt Management + Local Model Removal": the topic after the word
_FINISHED_FIRST = re.compile(
    rf"^(?:(?:work|implementation|all tasks|task|trabalho|implementa[cç][aã]o)\s+)?(?:100\s*)?{_COMPLETE}\s*[!.]*\s*"
    r"[-–—:]\s*(?P<topic>.{3,})$",
    re.I,
)
_NOT_A_TOPIC = frozenset(
    {"implementation", "all", "everything", "work", "task", "tasks", "setup", "it", "this", "that", "what was",
     "excellent work", "great work", "good work", "trabalho excelente", "trabalho", "excelente trabalho", "tudo",
     "trabajo", "session", "sessão", "todo", "validation", "validação", "validación", "verification", "verificação",
     "tests", "testes", "implementação", "implementación", "code", "código",
     "what i", "what we", "almost", "now", "step", "changes", "refactoring", "refactor", "migration", "integration",
     "testing", "cleanup", "update", "updates", "fix", "fixes"}
)  # fmt: skip


_GENERIC_LAST = frozenset(
    {"features", "changes", "tasks", "items", "steps", "fixes", "improvements", "work", "updates", "issues",
     "problems", "bugs", "errors", "solution", "solutions", "enhancement", "enhancements"}
)  # fmt: skip
_CONDITION = re.compile(r"\b(?:if|not|when|once|until|unless|after|before|should|will|to be)\b")


_OPTION = re.compile(
    r"^(?:option|opção|opcao|opción|opcion|alternative|alternativa|вариант|方案|选项)\s*\w{0,2}\b", re.I
)


_LEFT = re.compile(r"^(?:remaining|pending|still open|left)\s+(?P<rest>.{3,})$", re.I)


def _finished_heading(line: str) -> str:
    """The work a heading says is finished, or ""."""
    m = _HEADING_LINE.match(line)
    if m is None:
        return ""
    raw = m.group("a") or m.group("b")
    bare = re.sub(r"\s*\([^)]*\)[\s!.:]*$", "", raw)  # "WORK DONE TODAY (Sessão Completa)": an aside
    if bare != raw and _LEFT.match(bare.strip(" #*_:")) is None:
        raw = bare
    words = " ".join(re.sub(r"[^\w'&:/.+ -]+", " ", raw).split()).strip(" :-")
    found = _FINISHED.match(words) or _FINISHED_FIRST.match(words)
    if found is None:
        return ""
    topic = found.group("topic").strip(" :-–—")
    low = topic.lower()
    if low in _NOT_A_TOPIC or low.startswith(("what ", "how ", "key ", "all ", "summary")) or len(topic) < 3:
        return ""
    if low.rsplit(" ", 1)[-1] in _GENERIC_LAST:
        return ""  # "Core Features Implemented": a heading over the list of what was done (read as such)
    if _OPTION.match(low):
        return ""  # "### Opção A: TIER 3 COMPLETO (Recomendado)": one of the choices offered, not news
    if _CONDITION.search(low) or re.match(r"^\d+[.)]\s", topic):
        return ""  # "2. Initialize git if not already done": a step of a recipe, not news
    return next(iter(task_list(topic, split=False)), "")


def _heading_status(line: str) -> bool | None:
    """True (done) or False (still to do) for a heading over a list of either; None otherwise."""
    m = _HEADING_LINE.match(line)
    if m is None:
        return None
    words = " ".join(re.sub(r"[^\w' -]+", " ", m.group("a") or m.group("b")).split())
    words = re.sub(r"^\d{1,2}\s+|(?:\s+\d+)+$", "", words).strip(" -")  # "### ✅ COMPLETO (100%)", "EM PROGRESSO (2)"
    if _DONE_HEADING.match(words):
        return True
    return False if _NEXT_HEADING.match(words) else None


_PICTOGRAPHS = re.compile("^(?:[\U0001f000-\U0001faff\u2600-\u27bf\u2b00-\u2bff\ufe0f\u200d]\\s*)+")


def task_list(text: str, *, split: bool = True) -> list[str]:
    items = re.split(r"\s*;\s*|\s+·\s+", text) if split else [text]
    out = []
    for item in items:
        clean = re.sub(r"\*\*|`|~~", "", item).strip(" .,:;-–—*")  # markdown marks (a `__init__` stays)
        clean = _PICTOGRAPHS.sub("", " ".join(clean.split()))  # "📊 Compare the metrics": its words
        if len(clean) > TASK_CHARS:
            clean = clean[: TASK_CHARS - 1].rstrip() + "…"
        placeholder = clean.startswith("[") and clean.endswith("]")  # a template's "[Task 1]", "[...]"
        if len(clean) >= 3 and clean.lower() not in _NOTHING and not clean.endswith("?") and not placeholder:
            out.append(clean)
    return out


# a commit the agent made is work done, by its subject less its conventional prefix
# ("docs: Add markdown file conventions" is "Add markdown file conventions")
_COMMIT_TYPE = re.compile(r"^(?:\w+(?:\([^)]*\))?!?:\s+)?(?P<subject>.+)$")
_NO_WORK = re.compile(r"^(?:wip|merge\b|initial commit|revert\b|fixup!|squash!|(?:chore|style|ci)\b)", re.I)


def commit_subjects(action: ToolAction) -> list[str]:
    """The subjects of the commits a `git commit` (or aider's own commit) made."""
    if action.program != "git commit" or action.failed:
        return []
    messages = [message for _, message in patterns.git_commits_in_output(action.output or "")]
    args = arguments(action.node)
    if not messages and isinstance(args, dict):  # aider: its output's "Commit 1a2b3c4 docs: ..."
        for commit in args.get("commits") or ():
            if isinstance(commit, dict) and commit.get("sha") == action.pattern:
                messages.append(str(commit.get("message") or ""))
    out = []
    for message in messages:
        # its first line (an output that lost its newlines numbers them: "   1 docs: x    2    3 ...")
        numbered = re.match(r"^\s*1\s+(?=.*?\s{2,}2\s)", message)
        first = re.split(r"\n|\s{3,}", message[numbered.end() if numbered else 0 :].strip(), maxsplit=1)[0]
        subject = _COMMIT_TYPE.match(first)
        if subject is not None and not _NO_WORK.match(first):
            out += task_list(subject.group("subject"), split=False)
    return out


def record_commit(k: Knowledge, action: ToolAction, prov: Provenance) -> None:
    for task in commit_subjects(action)[:3]:
        k.fact(TASK_DONE, k.b.entity("task", task, prov, key=f"task:{' '.join(task.lower().split())}"), prov, 0.75)


# a tracker's tasks file the agent wrote (task-master's tasks.json, a todos.json): each task by its
# title and status; the newest write says where each one stands
_TASKS_FILE = re.compile(r"^(?:tasks?|todos?)(?:[._-][\w-]+)?\.json$", re.I)
_TASK_OBJECT = re.compile(
    r'"(?:title|content|subject)"\s*:\s*"(?P<title>(?:[^"\\\n]|\\.){3,200})"[^{}]*?"status"\s*:\s*"(?P<status>[\w -]{2,20})"'
)
_STATUS_DONE = frozenset({"done", "completed", "complete", "closed", "resolved", "finished"})
_STATUS_OPEN = frozenset(
    {"pending", "todo", "to-do", "to do", "open", "in-progress", "in_progress", "in progress", "not-started",
     "not_started", "blocked", "review", "in-review"}
)  # fmt: skip
TRACKED_PER_FILE = 8


def tracker_tasks(path: str, text: str) -> list[tuple[bool, str]]:
    """(done?, title) of each task a tracker's tasks file holds; [] for any other file."""
    if not _TASKS_FILE.match(posixpath.basename(path.replace("\\", "/"))) or '"status"' not in text:
        return []
    out = []
    for m in _TASK_OBJECT.finditer(text[:100_000]):
        status = m.group("status").strip().lower()
        if status in _STATUS_DONE or status in _STATUS_OPEN:
            out += [(status in _STATUS_DONE, item) for item in task_list(m.group("title"), split=False)]
    return list(dict.fromkeys(out))[:TRACKED_PER_FILE]


def record_tracker_file(k: Knowledge, path: str, text: str, prov: Provenance) -> None:
    for done, task in tracker_tasks(path, text):
        eid = k.b.entity("task", task, prov, key=f"task:{' '.join(task.lower().split())}")
        k.fact(TASK_DONE if done else TASK_PENDING, eid, prov, 0.75)
