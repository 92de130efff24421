"""State: open problems, layout (architecture, where parts live) and progress (done, pending)."""

from __future__ import annotations

import posixpath
import re

from ....model import Provenance
from .. import patterns
from ..caseless import Caseless
from ..tools import ToolAction, arguments
from .evidence import CODE_BLOCK, sentences
from .facts import ARCHITECTURE, COMPONENT, PROBLEM, TASK_DONE, TASK_PENDING, Knowledge
from .instructed import INSTRUCTION_FILES

PROBLEM_SAID = Caseless(
    re.compile(
        r"\b(?:(?:does|do|did|will|would|can|could|is|are|was)(?:n'?t| not)|doesnt|dont|wont|cant|isnt|cannot)\s+"
        r"(?:seem to\s+|even\s+)?(?:start|work|run|build|compile|load|connect|open|render|boot|install|pass)\b|"
        r"\b(?:is|are|keeps?|still)\s+(?:broken|failing|crashing|hanging|timing out|dying|leaking|erroring)\b|"
        r"\b(?:crashes|segfaults|hangs)\b",
        re.I,
    )
)


# behaviour the user did not expect, said without a failure verb: "for some reason the text is the
# same every time", "still 0 ms", "I don't think it is getting processed"; in the languages users
# write in too. Said in a question ("..., maybe a bug somewhere?") it is still a report.
_HAPPENS = (
    r"processed|called|triggered|saved|sent|stored|updated|applied|executed|loaded|shown|displayed|rendered|"
    r"picked up|persisted|received|handled|used|read|written|found|detected|recognized|registered|fired"
)
UNEXPECTED = Caseless(
    re.compile(
        r"\bfor some (?:odd |strange )?reason\b|"
        rf"\b(?:isn'?t|aren'?t|wasn'?t|weren'?t|not|never)\s+(?:getting|being)\s+(?:{_HAPPENS})\b|"
        rf"\bdon'?t think (?:it|they|this|that|anything|the \w+)(?:'s|\s+is|\s+are|\s+gets?)\s+(?:getting\s+|being\s+)?(?:{_HAPPENS})\b|"
        r"\bstill\s+(?:shows?\s+|showing\s+|returns?\s+|returning\s+|gives?\s+|giving\s+|getting\s+|gets\s+|says?\s+|at\s+)?"
        r"(?:0|zero|empty|blank|null|none|nothing)\b|\bstill\s+(?:the same|getting the same)\s+(?:error|issue|problem|result|output)\b|"
        r"\b(?:the same|identical)\s+(?:\w+\s+)?(?:every|each)\s+time\b|"
        r"\balways\s+(?:returns?|shows?|inserts?|gives?|prints?|outputs?|pastes?)\s+the same\b|"
        r"почему-то|по какой-то причине|од(?:ин|но|на) и т(?:от|о|а) же|не работает|не запускается|не срабатывает|"
        r"por algum motivo|por alguma raz[aã]o|por alguna raz[oó]n|n[aã]o funciona|no funciona|"
        r"sempre (?:o mesmo|a mesma)|siempre (?:el mismo|la misma)|"
        r"不知道为什么|莫名其妙|不工作|不起作用|没有?反应|每次都一样|总是一样|"
        r"funktioniert nicht|ne (?:marche|fonctionne) pas",
        re.I,
    )
)
_CLAUSE_END = re.compile(r",\s|;\s|\s[—–-]\s|:\s|，|；")
SHORT_PROBLEM = 80  # a sentence this short names its problem whole


def unexpected_name(sentence: str) -> str:
    """The problem a sentence reports as unexpected behaviour, by the clause that says it ("" if none)."""
    found = UNEXPECTED.search(sentence)
    if found is None:
        return ""
    text = sentence.rstrip("?？!. ")
    if len(text) <= SHORT_PROBLEM:
        return text
    starts = [m.end() for m in _CLAUSE_END.finditer(text, 0, found.start())]
    end = _CLAUSE_END.search(text, found.end())
    clause = text[starts[-1] if starts else 0 : end.start() if end else len(text)].strip()
    return clause if len(clause) <= PROBLEM_CHARS else clause[: PROBLEM_CHARS - 1].rstrip() + "…"


PROBLEM_WORDS = 4  # "Still erroring." says a problem is there, not which


_DIAGNOSTIC = re.compile(r"\.\w{1,6}(?:\(\d+,\d+\)|:\d+:\d+)")


def said_problem(sentence: str, *, question: bool) -> str:
    """The problem a user's sentence reports ("" if none); a question only as unexpected behaviour."""
    if question:
        return unexpected_name(sentence) if len(sentence) <= 300 else ""
    if len(sentence) > 200 or _DIAGNOSTIC.search(sentence):
        return ""  # a compiler's line pasted in ("App.al(40,42): error AL0856: ..."): its words, not the user's
    if PROBLEM_SAID.found(sentence) and len(sentence.split()) >= PROBLEM_WORDS:
        return problem_name(sentence)
    return unexpected_name(sentence)


def one_problem(names: list[str]) -> str:
    """The problems one message says, as one: "still 0 ms; I don't think it is getting processed"."""
    names = list(dict.fromkeys(n for n in names if n))
    if not names:
        return ""
    joined = "; ".join(names[:2])
    return joined if len(joined) <= PROBLEM_CHARS else names[0]


# the user quotes the error they get: "Getting this error : \"The record ... already exists\"",
# "\"The requested operation cannot be performed\" is the message I receive when ..."
_QUOTE = r"[\"“`](?P<msg>[^\"”`\n]{12,300})[\"”`]"
_ERROR_REPORTED = (
    re.compile(
        r"\b(?:getting|get|got|receiving|receive|received|seeing|see|saw|hitting|hit|throws?|shows?)\s+"
        r"(?:this|the following|an?|the|that|the same|this same)\s+(?:error|exception)(?:\s+message)?"
        rf"(?:\s+again)?\s*[:-]?\s*{_QUOTE}",
        re.I,
    ),
    re.compile(rf"{_QUOTE}\s*(?:is|was)\s+the\s+(?:error\s+)?message\s+(?:that\s+)?i\s+(?:get|receive|see|got)", re.I),
)


def reported_errors(text: str) -> list[str]:
    """The error messages a user's message quotes as what they get."""
    low = text[:20_000].lower()
    if "error" not in low and "message" not in low and "exception" not in low:
        return []
    found = [m.group("msg").strip() for rx in _ERROR_REPORTED for m in rx.finditer(text[:20_000])]
    return list(dict.fromkeys(f for f in found if len(f.split()) >= 3))


PROBLEM_CHARS = 120


def problem_name(sentence: str) -> str:
    """A problem by the sentence that says it; a long one from the clause that says it ("<a
    command> there are errors with X — I do not think messages get processed, ...")."""
    if len(sentence) > PROBLEM_CHARS:
        found = PROBLEM_SAID.search(sentence)
        if found is not None:
            starts = [m.end() for m in re.finditer(r"\s[—–-]\s|;\s|:\s|\.\s", sentence[: found.start()])]
            sentence = sentence[starts[-1] :] if starts else sentence
    return sentence if len(sentence) <= PROBLEM_CHARS else sentence[: PROBLEM_CHARS - 1].rstrip() + "…"


_COMPONENT_WORDS = (
    r"apis?|back-?end|front-?end|workers?|server|client|cli|ui|web ?app|app|tests?|test suite|docs|documentation|"
    r"migrations|models|schemas?|routes|handlers|controllers|services?|jobs|scripts|components|domain(?: logic)?|"
    r"adapters|infrastructure|infra|gateway|scheduler|consumers?|config(?:uration)?|core|library|sdk|plugins|"
    r"admin(?: panel)?|dashboard|bot|daemon|proxy|crawler|pipeline|fixtures|templates|views|hooks|utils|helpers"
)


_PATH = r"`?(?P<path>\.{0,2}/?[\w.@-]+(?:/[\w.@-]+)*/?)`?"


_COMPONENT = Caseless(
    re.compile(
        rf"\b(?:the\s+|our\s+)?(?P<what>(?:[a-z][\w-]*\s+)?(?:{_COMPONENT_WORDS}))\s+(?:code\s+)?(?:now\s+)?"
        rf"(?:is|are|lives?|sits?|resides?|go|goes|belongs?|is located|are located|is kept|are kept)\s+(?:now\s+)?(?:in|under)\s+{_PATH}",
        re.I,
    )
)


_MORE_COMPONENT = re.compile(  # ", the worker in services/worker" after a first one
    rf"\s*(?:,|;|\band\b)\s*(?:and\s+)?(?:the\s+|our\s+)?(?P<what>(?:[A-Za-z][\w-]*\s+)?(?:{_COMPONENT_WORDS}))\s+"
    rf"(?:code\s+)?(?:(?:is|are|lives?|sits?)\s+)?(?:in|under)\s+{_PATH}",
    re.I,
)


_NOT_LAYOUT = Caseless(
    re.compile(
        r"\b(?:error|errors|bug|bugs|fail\w*|crash\w*|issue|problem|exception|traceback|broken|fix|fixed|fixes|fixing|typo|"
        r"warning|"
        r"mistake|not|no longer|never|instead of|rather than|away from|should|could|would|might|maybe|if)\b|n't\b",
        re.I,
    )
)


_PREFIX_STOP = frozenset(
    {"and", "so", "then", "that", "which", "now", "also", "its", "this", "all", "each", "my", "your"}
)


_STYLE = Caseless(
    re.compile(
        r"\b(?P<style>(?:hexagonal|layered|clean|onion|event[- ]driven|plugin|mvc|mvvm|modular|n-tier|three-tier)"
        r"\s+(?:architecture|layout|structure|design)|ports[- ](?:and|&)[- ]adapters|microservices?|modular monolith|"
        r"monorepo|monolith)\b",
        re.I,
    )
)


_STYLE_WORDS = ("hexagonal", "layered", "clean", "onion", "event", "plugin", "mvc", "mvvm", "modular", "tier",
                "ports", "microservice", "monorepo", "monolith")  # fmt: skip


_STATES = Caseless(
    re.compile(
        r"\b(?:we(?:'re| are)?\s+(?:use|using|follow|following|have|chose|picked|went with|built|keep|going with)|"
        r"(?:it|this|(?:the|this|our) (?:project|repo|repository|app|codebase|code|service))(?:'s|\s+is|\s+uses|\s+follows|\s+has)|"
        r"(?:is|as|uses|follows)\s+an?)\b",
        re.I,
    )
)


_PROGRESS_HINTS = (
    "done", "todo", "to do", "pending", "remaining", "[x]", "[ ]", "next step", "next up", "complete", "finished",
    "implemented", "what's next", "whats next", "follow-up", "follow up", "created", "summary", "changes", "|",
    *"✅✔☑⏳🔄🚧⬜☐🔲",
    # the same words in the other languages users and answers write in (pt/es, ru, zh, de, fr)
    "conclu", "complet", "feito", "pendente", "pendiente", "próximo", "proximo", "siguiente", "progresso",
    "criado", "creado", "готов", "сделан", "выполнен", "заверш", "осталось", "следующ", "создан",
    "完成", "待办", "下一步", "后续", "进行中", "创建", "erledigt", "nächste", "offen", "terminé", "prochaine",
)  # fmt: skip


# one search for any of the words (a loop of `in` costs more, on every message)
_STYLE_HINT = re.compile("|".join(re.escape(w) for w in _STYLE_WORDS))


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


def layout_facts(text: str) -> tuple[list[str], list[tuple[str, str]]]:
    """(architecture styles, (component, path) pairs) a text states about its project."""
    styles: list[str] = []
    parts: list[tuple[str, str]] = []
    low = text[:20_000].lower()
    placed = "/" in low and (" in " in low or " under " in low)
    if not placed and _STYLE_HINT.search(low) is None:
        return styles, parts  # most messages: no path and no architecture word, no regex run
    body = CODE_BLOCK.sub(" ", text[:20_000])
    low = body.lower()
    if placed and "/" in body:
        for sentence in sentences(body):
            if sentence.endswith("?") or _NOT_LAYOUT.found(sentence):
                continue
            for match in _COMPONENT.finditer(sentence):
                found = [match]
                end = match.end()
                while (more := _MORE_COMPONENT.match(sentence, end)) is not None:
                    found.append(more)
                    end = more.end()
                for m in found:
                    what = _component_name(m.group("what"))
                    path = m.group("path").strip("`").rstrip(".,;:")
                    if what and "/" in path and "://" not in path and len(path) <= 80:
                        parts.append((what, path))
    if _STYLE.found(low):
        for sentence in sentences(body):
            if sentence.endswith("?") or _NOT_LAYOUT.found(sentence):
                continue
            style = _STYLE.search(sentence)
            if style is not None and _STATES.found(sentence[: style.start()]):
                styles.append(" ".join(style.group("style").lower().replace("&", "and").split()))
    return list(dict.fromkeys(styles)), list(dict.fromkeys(parts))


def _component_name(raw: str) -> str:
    words = raw.split()
    while len(words) > 1 and words[0].lower() in _PREFIX_STOP:
        words = words[1:]
    if words and words[0].lower() in _PREFIX_STOP:
        return ""
    name = " ".join(words)
    return name if len(name) <= 40 else ""


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
            open_boxes += [(False, item) for item in _task_list(box.group("item"), split=False) if box["mark"] == " "]
            out += [(box.group("mark") != " ", item) for item in _task_list(box.group("item"), split=False)]
            boxes_end = len(out)
            continue
        marked = _marked_item(line)
        if marked is not None and (under is not None or line.startswith("#")):
            # "- ✅ Dynamic trigger patterns" under "Remaining:", "### 2. **Polls** ✅": the mark says
            out += [(marked[0], item) for item in _task_list(marked[1], split=False)]
            listed = listed or under is not None
            continue
        bullet = _BULLET.match(line) if under is not None else None
        if bullet is not None and under is not None and not bullet.group("item").endswith(":"):  # not a heading
            out += [(under, item) for item in _task_list(bullet.group("item"), split=False)]
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
    return ([(done, item) for item in _task_list(rest)], None) if rest else ([], done)


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
        for item in _task_list(raw_item, split=False)
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


def _unmarked(text: str) -> str:
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
    item = re.sub(r"\s*\((?:\d+/\d+[^)]*|\d+%)\)\s*$", "", _unmarked(item).strip(" *_:"))  # its "(4/4 tasks)"
    return (done, item) if done is not None and len(item) >= 3 else None


# a table row's first cell (its header row, the one above the |---| line, and that line are not rows)
_SEPARATOR = re.compile(r"^\|?[\s:|-]+\|?$")


def _table_items(line: str, following: str, under: bool | None) -> list[tuple[bool, str]]:
    row = _table_row(line, following) if under is not None else None
    if row is None or under is None:
        return []
    first, mark = row
    return [(under if mark is None else mark, item) for item in _task_list(first, split=False)]


def _table_row(line: str, following: str) -> tuple[str, bool | None] | None:
    """(its first cell, the status its cells mark) of a table row."""
    if _SEPARATOR.match(line) or (_SEPARATOR.match(following.strip()) and "-" in following):
        return None
    cells = [_unmarked(c).strip(" *_") for c in line.strip().strip("|").split("|")]
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
    if _CONDITION.search(low) or re.match(r"^\d+[.)]\s", topic):
        return ""  # "2. Initialize git if not already done": a step of a recipe, not news
    return next(iter(_task_list(topic, split=False)), "")


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


def _task_list(text: str, *, split: bool = True) -> list[str]:
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


def record_layout(k: Knowledge, text: str, prov: Provenance, *, from_user: bool) -> None:
    if from_user and text.lstrip().startswith("<"):
        return  # injected context
    b = k.b
    styles, parts = layout_facts(text)
    for style in styles:
        k.fact(ARCHITECTURE, b.entity("concept", style, prov, key=f"architecture:{style}"), prov, 0.8)
    for what, path in parts:
        name = f"{what}: {path}"
        k.fact(COMPONENT, b.entity("component", name, prov, key=f"component:{name.lower()}"), prov, 0.8)
    for path, created in said_written(text) if not from_user else ():
        record_doc_written(k, path, prov, created=created, settings=True)
    announced: set[str] = set()  # a heading that announces work finished: surer than a list's bullet
    for done, task in progress_items(text, from_user=from_user, announced=announced):
        eid = b.entity("task", task, prov, key=f"task:{' '.join(task.lower().split())}")
        k.fact(TASK_DONE if done else TASK_PENDING, eid, prov, 0.8 if from_user or task in announced else 0.75)


def record_problem(k: Knowledge, name: str, prov: Provenance, confidence: float = 0.75) -> None:
    if name:
        k.fact(PROBLEM, k.b.entity("problem", name, prov, key=f"problem:{name.lower()}"), prov, confidence)


def record_reported_errors(k: Knowledge, text: str, prov: Provenance) -> None:
    """An error the user quotes as what they get is an open problem (until a check passes or a fix)."""
    for error in reported_errors(text):
        name = error if len(error) <= 120 else error[:119].rstrip() + "…"
        k.fact(PROBLEM, k.b.entity("problem", name, prov, key=f"problem:{name.lower()}"), prov, 0.8)


# a task put on the project's tracker: `task-master add-task --prompt="Review X: ..."`,
# `gh issue create --title "..."`, `task add "..."`: still to do
_TRACKED = re.compile(
    r"\b(?:add-task|add_task|(?:task|todo(?:\.sh)?)\s+add|issue\s+create)\b[^\"'\n]*?"
    r"(?:--(?:prompt|title)[= ]|-t\s+|\s)[\"'](?P<title>[^\"'\n]{3,400})[\"']"
)


def tracked_task(command: str) -> str:
    """The task a command puts on a tracker, by its title (a "Title: details" prompt by its title)."""
    m = _TRACKED.search(command[:4000])
    if m is None:
        return ""
    title = m.group("title")
    head, sep, rest = title.partition(": ")
    if sep and 1 <= len(head.split()) <= 8 and len(rest.split()) >= 4:
        title = head
    return next(iter(_task_list(title, split=False)), "")


def record_tracked_task(k: Knowledge, command: str, prov: Provenance) -> None:
    task = tracked_task(command)
    if task:
        eid = k.b.entity("task", task, prov, key=f"task:{' '.join(task.lower().split())}")
        k.fact(TASK_PENDING, eid, prov, 0.8)


# a document the agent wrote is work done ("updated dev.md", "wrote docs/ANALYSIS_REPORT.md"); not an
# agent's instruction file (rules, read as such) nor a file that tracks the work itself (a plan, notes)
_DOC_EXTENSIONS = frozenset({".md", ".mdx", ".rst", ".adoc"})
_SETTINGS_EXTENSIONS = frozenset({".json", ".yaml", ".yml", ".toml"})
_TRACKING = re.compile(r"plan|todo|tasks?\b|notes?\b|scratch|memory|progress", re.I)
DOC_PATH_CHARS = 60


def written_doc(path: str, *, created: bool, settings: bool = False) -> str:
    """The task a document written names ("wrote docs/report.md"), or "" for any other file (with
    `settings`, a settings file too: "updated launch.json")."""
    path = path.replace("\\", "/").removeprefix("./")
    base = posixpath.basename(path)
    if (
        posixpath.splitext(base)[1].lower()
        not in (_DOC_EXTENSIONS | _SETTINGS_EXTENSIONS if settings else _DOC_EXTENSIONS)
        or base in INSTRUCTION_FILES
        or _TRACKING.search(base)
    ):
        return ""
    shown = base if path.startswith("/") or ":" in path or len(path) > DOC_PATH_CHARS else path
    return f"{'wrote' if created else 'updated'} {shown}"


# an answer that says it wrote a document or a settings file: "I've created the `launch.json` file",
# "I have updated `docs/setup.md`" (the tool call may not name it: some exports drop the path)
_SAID_WRITTEN = re.compile(
    r"\bI(?:'ve| have)?\s+(?:now\s+|just\s+|also\s+)?(?P<verb>created|added|updated|written|wrote|rewritten)\s+"
    r"(?:the\s+|a\s+|an\s+|new\s+)*`(?P<path>[\w./-]+\.(?:md|mdx|rst|adoc|json|ya?ml|toml))`"
)


def said_written(text: str) -> list[tuple[str, bool]]:
    """(path, created?) of each file an answer says it wrote."""
    if "I" not in text or "`" not in text:
        return []
    return [
        (m.group("path"), m.group("verb") in ("created", "added", "written", "wrote"))
        for m in _SAID_WRITTEN.finditer(text[-PROGRESS_CHARS:])
    ]


def record_doc_written(k: Knowledge, path: str, prov: Provenance, *, created: bool, settings: bool = False) -> None:
    task = written_doc(path, created=created, settings=settings)
    if task:
        eid = k.b.entity("task", task, prov, key=f"task:{task.lower()}")
        k.fact(TASK_DONE, eid, prov, 0.7)


# an answer that reports the test suite green with its count: "✅ 22/22 tests passing", "22/22 testes
# aprovados", "All 22/22 specs pass"; not a step still to take ("Verify that 22/22 pass", "- [ ] ...")
_COUNT = re.compile(r"(?<![\d/.])(\d{1,5})/(\d{1,5})(?![\d/])")
_TEST_WORD = re.compile(r"\b(?:tests?|testes|specs?|pruebas|тест\w*)\b|测试", re.I)
_PASSED = re.compile(
    r"✅|\b(?:passed|passing|pass|green|aprovad[oa]s?|passando|pasan|pasaron|sucesso|success|пройден\w*|прошли)\b|通过",
    re.I,
)
_STEP = re.compile(
    r"^(?:verify|verificar|check|ensure|confirm|make sure|run|rodar|executar|ejecutar|should|deve|\[ \])\b", re.I
)
STATUS = "test-status"


def claimed_test_count(text: str) -> str:
    """The passing count an answer reports for the test suite ("22/22"), or ""."""
    tail = text[-PROGRESS_CHARS:]
    if "/" not in tail or not any(m.group(1) == m.group(2) for m in _COUNT.finditer(tail)):
        return ""
    for raw in CODE_BLOCK.sub("\n", tail).splitlines():
        count = _COUNT.search(raw)
        if count is None or count.group(1) != count.group(2) or count.group(1) == "0":
            continue
        line = _unmarked(re.sub(r"\*\*|__|`", "", raw)).strip(" -*•>#\t").lstrip("0123456789.) ")
        if line.endswith("?") or _STEP.match(line):
            continue
        if _TEST_WORD.search(line) and _PASSED.search(raw):
            return f"{count.group(1)}/{count.group(1)}"
    return ""


def record_tests_claimed(k: Knowledge, text: str, prov: Provenance) -> None:
    """An answer's report of the whole suite passing is the test state (until a run says otherwise)."""
    count = claimed_test_count(text)
    if count:
        status = f"tests passing: {count}"
        k.fact(STATUS, k.b.entity("status", status, prov, key=f"status:{status}"), prov, 0.7)


# a commit the agent made is work done, by its subject less its conventional prefix
# ("docs: Add markdown file conventions" is "Add markdown file conventions")
_COMMIT_TYPE = re.compile(r"^(?:\w+(?:\([^)]*\))?!?:\s+)?(?P<subject>.+)$")
_NO_WORK = re.compile(r"^(?:wip|merge\b|initial commit|revert\b|fixup!|squash!)", re.I)


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
            out += _task_list(subject.group("subject"), split=False)
    return out


def record_commit(k: Knowledge, action: ToolAction, prov: Provenance) -> None:
    for task in commit_subjects(action)[:3]:
        k.fact(TASK_DONE, k.b.entity("task", task, prov, key=f"task:{' '.join(task.lower().split())}"), prov, 0.75)
