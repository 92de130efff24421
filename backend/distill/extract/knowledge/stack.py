"""Stack: the technologies a project uses, from manifests, code, and what is said to be used or chosen."""

from __future__ import annotations

import functools
import posixpath
import re
import sys
from collections.abc import Sequence

from ....model import Provenance
from .. import vocabulary
from ..caseless import Caseless
from .environment import env_names, exposed_ports
from .evidence import Bullet, Fenced, bullets, is_marked, may_hold, word_list
from .facts import CHOSE, ENV_VAR, EXPOSES, Knowledge
from .manifests import EXTENSION_LANGUAGES, LOCKFILES, imports, manifest_facts, script_commands
from .techs import COMMON_WORDS, mentioned_techs, spaced, tech_name

CHOOSE = Caseless(
    re.compile(
        r"\b(?:use|using|uses|used|add|adding|install|installing|set(?:ting)? up|switch(?:ing)? to|go(?:ing)? with|went with|pick(?:ed)?|"
        r"chose|choose|adopt(?:ing)?|migrat(?:e|ing) to|mov(?:e|ing) to|stick with|keep|built (?:with|on)|based on|"
        r"(?:we|i)(?:'re| are) on|runs? on|prefer|standardi[sz]e on|rely on|powered by|written in|stack is|stack:|"
        r"(?:i|we) (?:want|need)|(?:project|app|backend|frontend|service|api|site|repo) (?:is|uses)|with|"
        r"running on|run(?:s|ning)? (?:it |this |everything )?(?:on|in|with|under)|on top of|backed by|talk(?:s|ing)? to|"
        r"hosted on|(?:switch(?:ing|ed)?|mov(?:e|ing|ed)|migrat(?:e|ing|ed)) (?:the |our )?(?:\w+ )?to|"
        # "Specs are RSpec", "Package manager is pnpm", "Deployments go through Vercel"
        r"(?:tests?|specs?|database|db|orm|styling|styles|css|ui|frontend|front-end|front|backend|back-end|"
        r"package manager|queue|jobs|cache|broker|auth|hosting|deploy(?:ment)?s?|ci|infra(?:structure)?|language|"
        r"framework|runtime|bundler|linter|formatter|type ?checker|migrations?)(?: (?:is|are|go(?:es)? through|via)|(?=:))|"
        r"deploy(?:s|ed|ing)? (?:on|to|with)|"
        # "a Node project", "an Elixir/Phoenix app": a name the sentence says the thing is
        r"(?:a|an|our|my)(?=(?:\s+[\w./+#-]+){1,3}?\s+(?:project|app|application|service|api|backend|frontend|"
        r"site|website|codebase|monorepo|repo|server|cli)\b))\b",
        re.I,
    )
)


def record_named(k: Knowledge, name: str, prov: Provenance, confidence: float, *, slot: bool = True) -> str:
    tech = vocabulary.lookup(name)
    if tech is None:
        return ""
    return k.stack(tech, prov, confidence, slot=slot)


# a tool's configuration file (`.eslintrc.cjs`, `jest.config.js`, `tailwind.config.ts`): written in
# whatever the tool reads, not in the project's language
_CONFIG_FILE = re.compile(r"^\.|[.-]config\.\w+$|rc\.\w+$")


def record_language(k: Knowledge, path: str, prov: Provenance, confidence: float, seen: set[str]) -> None:
    base = posixpath.basename(path.replace("\\", "/"))
    ext = posixpath.splitext(base)[1].lower()
    language = EXTENSION_LANGUAGES.get(ext) if not _CONFIG_FILE.search(base) else None
    if language and language not in seen:
        seen.add(language)
        record_named(k, language, prov, confidence)


# the words of a file's path and name (`src/rag/qdrant_vector_store.py`, `SqliteVectorIndex.cs`)
_PATH_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")
_NOT_PROJECT_FILES = ("node_modules/", "site-packages/", "/usr/", ".venv/", "/.cache/", "vendor/")


_LISTERS = frozenset({"ls", "tree", "dir", "exa", "eza", "get-childitem", "gci"})


def listed_files(k: Knowledge, command: str, output: str, prov: Provenance) -> None:
    """A listing of the project's files (`ls`, `tree`): the tools its configuration files are for
    (`jest.config.cjs` is Jest, `Cargo.toml` Cargo); a listing of dependencies' folders says nothing."""
    program = command.strip().split(" ", 1)[0].lower()
    if program not in _LISTERS or any(part in command for part in _NOT_PROJECT_FILES) or output.count("\n") > 60:
        return  # (a long listing is a home or a whole tree, not the project's root)
    for name in dict.fromkeys(re.findall(r"[\w.-]+", output)):
        if name in LOCKFILES and name not in ("package.json", "requirements.txt", "pyproject.toml"):
            record_named(k, LOCKFILES[name], prov, 0.7, slot=False)


def path_techs(k: Knowledge, path: str, prov: Provenance, confidence: float = 0.7) -> None:
    """The technologies a project's own file is named after: `qdrant_vector_store.py` is Qdrant's
    store, `run_streamlit.py` starts Streamlit (curated names that are no English word only)."""
    for tech in _named_in_path(path):
        k.stack(tech, prov, confidence, slot=False)


@functools.lru_cache(maxsize=4096)  # a session edits the same files again and again
def _named_in_path(path: str) -> tuple[vocabulary.Tech, ...]:
    if any(part in path for part in _NOT_PROJECT_FILES):
        return ()
    words = _PATH_WORD.findall(posixpath.splitext(path.replace("\\", "/"))[0])
    found = []
    for word in dict.fromkeys(w.lower() for w in words if len(w) >= 4):
        tech = None if word in COMMON_WORDS else tech_name(word, curated=True)
        if tech is not None and tech.category not in ("language", "package-manager"):
            found.append(tech)
    return tuple(found)


# "aiogram is installed", "the aiogram import error": a package the text says the project has
_PACKAGE_STATED = re.compile(
    r"`?\b([a-z][\w.-]{2,30})`? (?:is|are) (?:already |now )?installed\b|\bthe `?([a-z][\w.-]{2,30})`? import\b"
)


# a language's own modules ("the future import" is `from __future__ import ...`)
_NOT_PACKAGES = frozenset(getattr(sys, "stdlib_module_names", ())) | {"future"}


def stated_packages(k: Knowledge, sentence: str, prov: Provenance, confidence: float = 0.7) -> None:
    if "install" not in sentence and "import" not in sentence:
        return
    for m in _PACKAGE_STATED.finditer(sentence):
        name = m.group(1) or m.group(2)
        tech = tech_name(name, curated=False)
        if tech is not None and name not in COMMON_WORDS and name not in _NOT_PACKAGES:
            eid = k.stack(tech, prov, confidence, slot=False)
            if not tech.curated:
                k.fact(CHOSE, eid, prov, confidence)


def record_manifest(k: Knowledge, path: str, text: str, prov: Provenance, confidence: float) -> None:
    deps, found_versions = manifest_facts(path, text)
    base = posixpath.basename(path)
    if base in LOCKFILES:
        record_named(k, LOCKFILES[base], prov, confidence - 0.05, slot=base not in ("package.json", "requirements.txt"))
    slots: dict[str, list[vocabulary.Tech]] = {}
    for dep in deps[:120]:
        tech = vocabulary.lookup(dep)
        if tech is None or not tech.curated:
            continue
        if tech.slot:
            slots.setdefault(tech.slot, []).append(tech)
        k.stack(tech, prov, confidence, slot=False)
    for techs in slots.values():  # a slot is filled from a manifest only when it names one candidate
        unique = {t.name: t for t in techs}
        if len(unique) == 1:
            k.stack(next(iter(unique.values())), prov, confidence)
    for name, number in found_versions:
        tech = vocabulary.lookup(name)
        if tech is not None:
            k.version(tech, number, prov, confidence)
    for port in exposed_ports(path, text):
        k.fact(EXPOSES, k.b.entity("port", port, prov), prov, confidence)
    if base == "package.json":
        for kind, command in script_commands(text):  # the way, not a run: below what ran
            k.fact(f"{kind}-script", k.b.entity("command", command, prov), prov, 0.75)
    if base.startswith((".env", "docker-compose", "compose")):
        for name in env_names(text, env_file=True)[:30]:
            k.fact(ENV_VAR, k.b.entity("env-var", name, prov), prov, 0.85)


# "uses chi for routing", "switch the migrations to goose": a lower-case name that is also a word
# (chi, goose, rich, express) is the technology right after a verb of choice, in a noun's place
_DIRECT = Caseless(
    re.compile(
        r"\b(?:use|uses|using|used|chose|choose|picked|adopt|adopted|(?:switch(?:ing|ed)?|mov(?:e|ing|ed)) (?:the |our )?(?:\w+ )?to)"
        # the name ends the clause: not "use got := ..." or "use got.Get(...)" (code: a variable, a call)
        r"\s+`?([a-z][\w.+-]*?)`?(?=\s+(?:for|to|as|in|and|instead|here|now|everywhere)\b|\s*(?:[,;]|\.(?!\w)|:(?!=)|\+(?![=+]))|\s*$)",
        re.I,
    )
)


_NEGATED = Caseless(
    re.compile(
        r"\b(?:no|not|never|without|avoid|instead of|rather than|(?:don'?t|do not|never) use|no more)\s+((?:\S+\s+){0,1}\S+)",
        re.I,
    )
)


def record_chosen(k: Knowledge, sentence: str, start: int, prov: Provenance, confidence: float = 0.9) -> None:
    """The technologies a sentence says are used: up to four after each cue (a list after
    "with" runs on into unrelated words), less those it says are not ("use pytest fixtures, no
    unittest classes"); of two for one slot the first named takes it."""
    named: dict[str, vocabulary.Tech] = {}
    for cue in CHOOSE.finditer(sentence, start):
        for tech in mentioned_techs(sentence[cue.start() :])[:4]:
            if tech.curated or k.source != "instructions":  # a file's backticks are code (`camelCase`)
                named.setdefault(tech.name, tech)
    for m in _DIRECT.finditer(sentence, start):
        word = m.group(1)
        if word in COMMON_WORDS or k.source == "instructions":
            tech = tech_name(word, curated=True)
        else:
            tech = _chosen_library(word, sentence)
        if tech is not None:
            named.setdefault(tech.name, tech)
    for m in _NEGATED.finditer(sentence):
        for tech in mentioned_techs(m.group(1)):
            named.pop(tech.name, None)
    slots: set[str] = set()
    for tech in named.values():
        eid = k.stack(tech, prov, confidence, slot=tech.slot not in slots)
        slots.add(tech.slot)
        if not tech.curated:  # a library the user picked: the brief's, unlike every dependency a manifest lists
            k.fact(CHOSE, eid, prov, confidence)


# what "use X for ..." may name that is no package
_NOT_A_PACKAGE = frozenset(
    word_list(
        "it this that these those them one ones something anything everything nothing same other another each either "
        "both all any some more less fewer tabs spaces it's its our my your their his her the a an"
    )
)


def _chosen_library(word: str, sentence: str) -> vocabulary.Tech | None:
    """A library "use X for ..." names, when the sentence marks it as a name: backticks, a
    capital ("use Loguru for logging"), or a package's shape (`pydantic-settings`, `date_fns`,
    `zod2`). A plain lower-case word is not enough: registries hold "events", "cookies", "path",
    "retry" and thousands more English words."""
    name = word.strip("`'\".,;:")
    if name.lower() in _NOT_A_PACKAGE or len(name) < 3 or not name[0].isalpha():
        return None
    marked = is_marked(name, sentence) or bool(re.search(r"[a-z][-_][a-z]|[a-z]\d", name))
    if not (marked or name[0].isupper()) or (name.isupper() and not marked):
        return None  # (an all-caps word is an acronym or an HTTP verb: "use PATCH for updates")
    tech = tech_name(name, curated=False)
    if tech is not None:
        return tech
    # a name no registry lists: a package's shape, not a tool's or a function's (`mcp__x__y`, `get_user_by_id`)
    plausible = len(name) <= 30 and "__" not in name and name.count("_") <= 1
    return vocabulary.Tech(name, "library") if marked and plausible else None


# "the FastAPI app", "our Celery workers", "the Postgres connection pool": a part of this project named by its technology
_OWNED = Caseless(
    re.compile(
        r"\b(?:the|our|my|this|your)\s+((?:[a-z@][\w.+#/@-]*\s+){1,3}?)(?:app|application|project|service|api|"
        r"backend|frontend|server|workers?|cluster|database|db|instance|container|codebase|repo|site|components?|models?|"
        r"schema|migrations?|config|setup|pipeline|tests?|test suite|suite|queue|cache|broker|templates?|views?|routes?|"
        r"handlers?|client|connection|pool|store|stores|hooks?|modules?|plugin|middleware|controllers?|jobs?|tasks?)\b",
        re.I,
    )
)


def record_owned(k: Knowledge, sentence: str, prov: Provenance) -> None:
    if not may_hold(sentence, ("the ", "our ", "my ", "this ", "your ")):
        return
    for m in _OWNED.finditer(sentence):
        for tech in mentioned_techs(m.group(1))[:1]:
            k.stack(tech, prov, 0.8, slot=False)  # a mention: it fills no slot another holds


_NOT_A_LIST = Caseless(
    re.compile(r"\b(?:or|vs\.?|versus|compare\w*|comparison|difference|alternatives?|between|which|whether)\b", re.I)
)


_LIST_WORD = re.compile(r"[A-Za-z@][\w.+#/@-]*")


def record_listed(k: Knowledge, sentence: str, prov: Provenance) -> bool:
    """A sentence that is mostly a list of names ("Quick context: Rails 7 monolith, Ruby 3.2,
    Postgres, Sidekiq for jobs") describes the stack, cue or none; one weighing options does not."""
    if sentence.count(",") < 2 or _NOT_A_LIST.found(sentence):
        return False
    techs = mentioned_techs(sentence)
    if len(techs) < 3 or len(techs) * 4 < len(_LIST_WORD.findall(sentence)):
        return False
    for tech in techs[:8]:
        k.stack(tech, prov, 0.85)
    return True


# "we format with black", "lint using ruff", "tests run with jest": a common word (black, standard,
# jest) is the tool when the sentence says it is what that kind of check is done with
_TOOL_FOR = Caseless(
    re.compile(
        r"\b(format|lint|type[- ]?check|test)\w*\s+(?:\w+\s+){0,2}?(?:with|using|via|through|by)\s+`?([\w.+-]+)", re.I
    )
)


_TOOL_FOR_KIND = {"format": "formatter", "lint": "linter", "test": "test-framework"}


def record_tool_for(k: Knowledge, sentence: str, prov: Provenance) -> None:
    if not may_hold(sentence, ("format", "lint", "check", "test")):
        return
    for m in _TOOL_FOR.finditer(sentence):
        kind = m.group(1).lower()
        category = _TOOL_FOR_KIND.get(kind, "type-checker")
        tech = tech_name(m.group(2), curated=False)
        if tech is not None and (tech.category == category or (kind == "test" and tech.category == "e2e-framework")):
            k.stack(tech, prov, 0.85)


# -- stack from an answer's structure ------------------------------------------------------------

# a heading a list of technologies sits under: "## Stack", "Libraries:", "**Dependencies:**"
_STACK_HEADING = re.compile(
    r"\b(?:(?:tech(?:nology)?\s+)?stack|librar(?:y|ies)|dependenc(?:y|ies)|packages?|frameworks?|tools?|tooling|"
    r"technolog(?:y|ies)|built with|requirements|prerequisites|uses|using|"
    # the same headings in the other languages users write in
    r"tecnologias?|tecnolog[ií]as?|bibliotecas?|dependências|dependencias|ferramentas|herramientas|"
    r"стек|технологи\w*|библиотеки|зависимости|инструменты)\b|技术栈|技术选型|技術スタック|依赖|框架|工具",
    re.I,
)
_AFTER_NAME = re.compile(r"^(?:\s*$|\s*[:(,]|\s+[-–—]\s|\s+(?:for|as|to|with|via|v?\d)\b)")
_ITEM_NAME = re.compile(r"^(?:\*\*|__)?`?([A-Za-z@][\w.+#/@-]*(?: [A-Z][\w.+#-]*)?)`?(?:\*\*|__)?")
_CODE_EXT = {
    "python": ".py", "py": ".py", "javascript": ".js", "js": ".js", "jsx": ".jsx", "typescript": ".ts", "ts": ".ts",
    "tsx": ".tsx", "go": ".go", "golang": ".go", "rust": ".rs", "rs": ".rs", "elixir": ".ex", "ex": ".ex",
    "exs": ".exs", "vue": ".vue", "svelte": ".svelte", "kotlin": ".kt", "kt": ".kt", "java": ".java", "scala": ".scala",
    "groovy": ".groovy", "swift": ".swift", "csharp": ".cs", "cs": ".cs", "c#": ".cs", "dart": ".dart",
}  # fmt: skip
# a manifest a block shows, by the name its label gives, else by its shape
_MANIFEST_NAMES = re.compile(
    r"(?<![\w.-])(package\.json|pyproject\.toml|requirements[\w.-]*\.txt|Cargo\.toml|go\.mod|mix\.exs|Gemfile|"
    r"docker-compose\.ya?ml|compose\.ya?ml|Dockerfile|\.python-version|\.nvmrc|\.tool-versions|build\.gradle(?:\.kts)?|"
    r"pom\.xml|AndroidManifest\.xml|libs\.versions\.toml)(?![\w.-])"
)
_MANIFEST_SHAPES = (
    (re.compile(r'^\s*"(?:dev)?[dD]ependencies"\s*:', re.M), "package.json"),
    (re.compile(r"^\[(?:project|tool\.poetry)", re.M), "pyproject.toml"),
    (re.compile(r"^\s*defp? deps\b", re.M), "mix.exs"),
    (re.compile(r"^module \S+\s*$.*^go \d", re.M | re.S), "go.mod"),
    (re.compile(r"^\[dependencies\]", re.M), "Cargo.toml"),
    (re.compile(r"^FROM \S+", re.M), "Dockerfile"),
    (re.compile(r"^services:\s*$", re.M), "docker-compose.yml"),
    (re.compile(r"^\s*(?:implementation|testImplementation|api)\s*\(?\s*[\"'][\w.-]+:[\w.-]+:", re.M), "build.gradle"),
    (re.compile(r"<manifest\b[^>]*xmlns:android="), "AndroidManifest.xml"),
    (re.compile(r"<dependencies>\s*<dependency>\s*<groupId>"), "pom.xml"),
)


def fenced_stack(k: Knowledge, blocks: Sequence[Fenced], prov: Provenance, *, confidence: float) -> None:
    """Manifests a block shows (named by its label or known by its shape) and the third-party
    imports of code in it: a library only when the block is the user's or a manifest's."""
    for block in blocks:
        named = _MANIFEST_NAMES.search(block.label)
        path = named.group(1) if named else next((p for rx, p in _MANIFEST_SHAPES if rx.search(block.code)), "")
        if block.lang in ("txt", "text", "") and named is None and "requirements" in block.label.lower():
            path = "requirements.txt"
        if path:
            record_manifest(k, path, block.code, prov, confidence)
            continue
        ext = _CODE_EXT.get(block.lang)
        if ext is None:
            continue
        for name in imports(f"block{ext}", block.code)[:20]:
            tech = vocabulary.lookup(name)
            if tech is not None and tech.curated:
                k.stack(tech, prov, confidence, slot=False)


_BOLD_LEAD = re.compile(r"^(?:\*\*|__)([^*_]{3,60})(?:\*\*|__)")


def listed_stack(k: Knowledge, items: Sequence[Bullet], prov: Provenance, *, confidence: float) -> None:
    """The technology each item of a list under a stack heading opens with ("- **Phoenix** 1.7",
    "- `Oban` for jobs"); a library counts when the item marks it (backticks, bold, a capital)."""
    for item in items:
        if not _STACK_HEADING.search(item.heading) or _NEGATED.search(item.text[:40]):
            continue
        lead = _BOLD_LEAD.match(item.text)
        names = _names_only(lead.group(1)) if lead is not None else []
        if len(names) >= 2:  # "- **OkHttp + Room**, ..." under a stack heading
            for tech in names:
                k.stack(tech, prov, confidence, slot=False)
            continue
        m = _ITEM_NAME.match(item.text)
        if m is None:
            continue
        name = m.group(1).rstrip(".:,")
        tech = tech_name(name, curated=False) or tech_name(name.split(" ", 1)[0], curated=False)
        if tech is None:
            continue
        # a name, not the first word of a sentence ("- Ensure all messages ..."): marked, or followed by
        # what a list of names puts after one ("- Oban for jobs", "- httpx: the client", "- Phoenix 1.7")
        marked = item.text.startswith(("`", "**", "__"))
        if not (marked or _AFTER_NAME.match(item.text[m.end() :])):
            continue
        if not tech.curated and not marked:
            continue
        eid = k.stack(tech, prov, confidence, slot=False)
        if not tech.curated:
            k.fact(CHOSE, eid, prov, confidence)


# an answer that opens by recommending: "Use `tenacity` here: ...", "I'd go with Chart.js", "I recommend httpx"
_RECOMMENDS = Caseless(
    re.compile(
        r"^(?:(?:i'?d|i would|we'?d|i|you (?:can|could|should|might)|let'?s)\s+)?(?:(?:strongly\s+)?recommend(?:ed)?(?: using)?|"
        r"use|try|go with|switch to|consider(?: using)?|pick|reach for|stick with)\b",
        re.I,
    )
)
# a choice an answer states in passing: "going with Chart.js for the graphs", "I'll use Oban for this"
_ANSWER_CHOICE = Caseless(
    re.compile(
        r"\b(?:(?:i'?m|we'?re|i am|we are) (?:going|gonna go) with|going with|went with|i'?ll (?:use|go with)|"
        r"we'?ll (?:use|go with)|opted for|settled on|i(?:'ve| have) (?:chosen|picked|gone with)|i chose|i picked)\b",
        re.I,
    )
)
# what a user says when not taking a recommendation
_DECLINES = Caseless(
    re.compile(
        r"^\W*(?:no\b|nope|nah|don'?t|do not|not\b|instead|rather|actually,? (?:no|let'?s|use)|i'?d rather|let'?s not)",
        re.I,
    )
)


_RECOMMEND_OPENINGS = ("use", "i'd", "i would", "we'd", "you ", "let's", "recommend", "strongly", "try", "go with",
                       "switch", "consider", "pick", "reach", "stick", "i recommend")  # fmt: skip


def may_recommend(text: str) -> bool:
    """Whether an answer may open with a recommendation (a cheap look at its first words)."""
    head = text.lstrip(" \n*#>-").lower()
    return head.startswith(_RECOMMEND_OPENINGS) or not head[:40].isascii()


def recommended(k: Knowledge, opening: str, prov: Provenance) -> None:
    """An answer's opening recommendation, kept until the user's next message: taken when the user
    goes on with it, dropped when the user declines."""
    m = _RECOMMENDS.search(opening)
    if m is None or opening.endswith("?"):
        return
    rest = opening[m.end() :]
    techs = list(mentioned_techs(rest))[:2]
    first = re.match(r"\s+`?([A-Za-z@][\w.+-]*)`?", rest)
    if first is not None and not techs:
        tech = _chosen_library(first.group(1), rest)
        if tech is not None:
            techs = [tech]
    k.recommended.extend((tech, prov) for tech in techs)


def answered(k: Knowledge, user_text: str) -> None:
    """The user's next message after recommendations: declining drops them; going on takes them."""
    waiting, k.recommended = k.recommended, []
    if not waiting or _DECLINES.search(user_text[:200]):
        return
    for tech, prov in waiting:
        eid = k.stack(tech, prov, 0.75, slot=False)
        if not tech.curated:
            k.fact(CHOSE, eid, prov, 0.75)


def answer_choices(k: Knowledge, sentence: str, prov: Provenance) -> None:
    """A choice an answer states ("going with Chart.js for the graphs"): its technologies, lower
    than the user's word."""
    m = _ANSWER_CHOICE.search(sentence)
    if m is not None and not sentence.endswith("?"):
        record_chosen(k, sentence, m.start(), prov, 0.75)


# "- **Database**: Room + SQLite", "- Backend: FastAPI, Celery": a role, then the names that fill it
_LABELLED_ITEM = re.compile(r"^(?:[-*+]\s+)*(?:\*\*|__)?[^*_:：]{1,30}?(?:\*\*|__)?\s*[:：]\s*(?:\*\*|__)?(.+)$")
_NAME_SEPARATORS = re.compile(r"\s*(?:\+|,|/|&|、|，|\band\b|\bwith\b)\s*")
# "Kotlin + Coroutines + Flow + Room": names joined by plus signs
_PLUS_JOINED = re.compile(r"[A-Za-z][\w.#-]*(?:\s*\+\s*[A-Za-z][\w.#-]*){2,}")


def _names_only(value: str) -> list[vocabulary.Tech]:
    """The technologies a value is made of, when it is mostly names ("OkHttp + Retrofit")."""
    raw = [p.strip("`*_ .") for p in _NAME_SEPARATORS.split(value) if p.strip("`*_ .")]
    parts = [spaced(p).strip() for p in raw]  # "使用Kotlin" (use Kotlin) is Kotlin; a CJK sentence is no name
    if not parts or any(len(p.split()) > 3 for p in parts):
        return []
    techs = [tech_name(p, curated=True) if 2 * len(p) >= len(r) else None for p, r in zip(parts, raw, strict=True)]
    techs = [t for t in techs if t is not None]
    if any(t.name in _KOTLIN for t in techs):  # "Kotlin + Coroutines + Flow": a shared name in the list's ecosystem
        techs = [vocabulary.lookup(_KOTLIN_READING[t.name]) or t if t.name in _KOTLIN_READING else t for t in techs]
    return techs if len(techs) * 2 >= len(parts) else []


_KOTLIN = frozenset({"Kotlin", "Android", "Kotlin Coroutines", "Jetpack Compose"})
_KOTLIN_READING = {"Flow": "Kotlin Flow", "Docker Compose": "Jetpack Compose"}


def labelled_names(k: Knowledge, items: Sequence[Bullet], prov: Provenance, *, confidence: float) -> None:
    for item in items:
        m = _LABELLED_ITEM.match(item.text)
        for tech in _names_only(m.group(1)) if m is not None else ():
            k.stack(tech, prov, confidence, slot=False)


def plus_joined(k: Knowledge, text: str, prov: Provenance, *, confidence: float) -> None:
    for m in _PLUS_JOINED.finditer(text):
        techs = _names_only(m.group(0))
        if len(techs) >= 2:
            for tech in techs:
                k.stack(tech, prov, confidence, slot=False)


# an edit an answer shows as a diff ("Edit file: dev.md" over a ```diff block): its added lines
# are what the project's files now say
_DIFF_BLOCK = re.compile(r"^```diff[^\n]*\n(.*?)^```", re.M | re.S)
_ADDED = re.compile(r"^\+(?!\+\+) ?(.*)$", re.M)
_GUESSED_EXT = (
    (re.compile(r"^\s*(?:fun|val|var|class|object)\s+\w+|^\s*import\s+[a-z]\w*(?:\.\w+)+\s*$", re.M), ".kt"),
    (re.compile(r"^\s*(?:def\s+\w+\(|from\s+[\w.]+\s+import\s)", re.M), ".py"),
    (re.compile(r"^\s*import\s.*\sfrom\s+['\"]", re.M), ".ts"),
)
DIFF_CHARS = 60_000


def diff_stack(k: Knowledge, text: str, prov: Provenance, *, confidence: float = 0.7) -> None:
    """What an answer's diffs write: a document's stack lists ("- **网络**: OkHttp + Retrofit"),
    code's imports."""
    if "```diff" not in text:
        return
    for m in _DIFF_BLOCK.finditer(text[:DIFF_CHARS]):
        added = "\n".join(_ADDED.findall(m.group(1)))
        if not added.strip():
            continue
        items = bullets(added)
        labelled_names(k, items, prov, confidence=confidence)
        listed_stack(k, items, prov, confidence=confidence)
        if " + " in added:
            plus_joined(k, added, prov, confidence=confidence)
        record_models(k, added, prov, confidence)
        ext = next((e for rx, e in _GUESSED_EXT if rx.search(added)), "")
        for name in imports(f"diff{ext}", added)[:20] if ext else ():
            tech = vocabulary.lookup(name)
            if tech is not None and tech.curated:
                k.stack(tech, prov, confidence, slot=False)


# "this rust crate", "our go service": a language written in lower case is the project's when it
# names what the project is (a lower-case "rust" or "go" is otherwise a word)
_LANGUAGE_OF = re.compile(
    r"\b(?:this|our|my|the|a|an)\s+([a-z][\w+#]*)\s+(?:crate|project|app|codebase|library|package|repo|"
    r"service|cli|extension|plugin|module|binary|workspace)s?\b"
)
# "我想架构一个Android的下载库" (an Android download library), "um app em Flutter", "проект на Rust"
_PROJECT_OF = re.compile(
    r"(?:一个|这个|我们的|我的|本)\s*([A-Za-z][A-Za-z0-9_.+#-]*)\s*的?\s*\S{0,6}?(?:库|项目|应用|程序|框架|插件|服务|工具)|"
    r"\b(?:projeto|aplicativo|aplicação|biblioteca|proyecto|aplicación|librería|app)\s+(?:em|en|com|con)\s+"
    r"([A-Z][\w.+#-]*)|"
    r"(?:проект|приложение|библиотек[ау]|сервис|бот)\s+на\s+([A-Za-z][\w.+#-]*)"
)


def record_what_it_is(k: Knowledge, text: str, prov: Provenance) -> None:
    """The user's words for what the project is: its language or platform, in any language."""
    for m in _LANGUAGE_OF.finditer(text[:4000]):
        tech = tech_name(m.group(1), curated=True) if len(m.group(1)) >= 2 else None  # "the c library": libc
        if tech is not None and tech.category == "language":
            k.stack(tech, prov, 0.8, slot=False)
    for m in _PROJECT_OF.finditer(text[:4000]):
        tech = tech_name(next(g for g in m.groups() if g), curated=True)
        if tech is not None:
            k.stack(tech, prov, 0.8, slot=False)


# the model a setting or a call names (`AUTO_METADATA_MODEL=gpt-4o-mini`, `model="claude-sonnet-4-5"`):
# the project's LLM; a model named in prose is talk (a price, a comparison), not a setting
_MODEL_SETTING = re.compile(
    r"""\b\w*model\w*["']?\s*(?::\s*\w+\s*)?[=:]\s*["']?"""
    r"""((?:gpt-|chatgpt-|o[134]-|claude-|gemini-|gemma|llama|mistral-|mixtral|qwen|deepseek-|grok-|command-r)"""
    r"""[\w.:-]*\w)""",
    re.I,
)
MODELS = 3  # of one piece of code: a config file lists a few, a catalogue lists many


def record_models(k: Knowledge, text: str, prov: Provenance, confidence: float = 0.75) -> None:
    if "odel" not in text and "ODEL" not in text:
        return
    found = list(dict.fromkeys(m.group(1).lower() for m in _MODEL_SETTING.finditer(text[:40_000])))
    if len(found) > MODELS * 2:
        return  # a list of models to choose from, not the one in use
    for model in found[:MODELS]:
        k.stack(vocabulary.Tech(model, "llm"), prov, confidence, slot=False)


# "the extension should use the API from https://restdocs.example.com/": the service the project calls
_API_URL = re.compile(
    r"\bAPIs?\b[^.?!\n]{0,40}?https?://([\w.-]+)|https?://([\w.-]+)[^\s]*\s+(?:REST\s+)?APIs?\b", re.I
)
_SUBDOMAINS = frozenset(word_list("www api apis rest restapi restdocs docs doc developer developers dev sandbox app"))


def record_api_url(k: Knowledge, sentence: str, prov: Provenance) -> None:
    """An API the user says the project uses, named by its site (`e-conomic API`)."""
    if "http" not in sentence:
        return
    for m in _API_URL.finditer(sentence):
        labels = [p for p in (m.group(1) or m.group(2)).lower().split(".") if p]
        names = [p for p in labels[:-1] if p not in _SUBDOMAINS]  # (the top-level domain off)
        if names and names[-1] not in ("localhost", "github", "google", "example") and not names[-1].isdigit():
            k.stack(vocabulary.Tech(f"{names[-1]} API", "integration"), prov, 0.8, slot=False)
