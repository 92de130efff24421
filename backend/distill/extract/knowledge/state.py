"""State: open problems, layout (architecture, where parts live) and progress (done, pending)."""

from __future__ import annotations

import posixpath
import re

from ....model import Provenance
from ..caseless import Caseless
from .evidence import CODE_BLOCK, sentences
from .facts import ARCHITECTURE, COMPONENT, PROBLEM, TASK_DONE, TASK_PENDING, Knowledge
from .instructed import INSTRUCTION_FILES
from .progress import PROGRESS_CHARS, progress_items, task_list, unmarked

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


# one search for any of the words (a loop of `in` costs more, on every message)
_STYLE_HINT = re.compile("|".join(re.escape(w) for w in _STYLE_WORDS))


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
    return next(iter(task_list(title, split=False)), "")


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
        line = unmarked(re.sub(r"\*\*|__|`", "", raw)).strip(" -*•>#\t").lstrip("0123456789.) ")
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
