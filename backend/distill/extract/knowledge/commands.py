"""Commands: how the project is run, tested, built, linted (from runs, and from commands given)."""

from __future__ import annotations

import functools
import posixpath
import re
from collections.abc import Sequence

from ....memory import relations
from ....model import Provenance
from ...model import TurnFacts
from .. import patterns, vocabulary
from ..caseless import Caseless
from ..shell import SUBCOMMANDS, classify, split_commands
from ..tools import ToolAction
from .evidence import BACKTICK, Bullet, Fenced
from .facts import CHOSE, Knowledge
from .manifests import BUILD_TOOLS, INSTALLERS, PROGRAM_TECH, PROJECT_INSTALLERS
from .stack import record_named

_KIND_WORDS = (
    (
        "typecheck",
        re.compile(
            r"^(?:mypy|pyright|mix dialyzer|dialyzer|srb tc|basedpyright|pyre|pytype|ty check|tsc --noemit|vue-tsc|flow)\b"
        ),
    ),
    (
        "format",
        re.compile(
            r"^(?:ruff format|black|isort|autopep8|yapf|prettier|gofmt|goimports|gofumpt|cargo fmt|rustfmt|"
            r"mix format|biome format|clang-format|shfmt|npm run format|pnpm (?:run )?format|yarn (?:run )?format|"
            r"make fmt|make format)\b"
        ),
    ),
    (
        "lint",
        re.compile(
            r"^(?:ruff(?: check)?|flake8|pylint|eslint|biome (?:lint|check)|oxlint|golangci-lint|staticcheck|"
            r"go vet|cargo clippy|mix credo|rubocop|stylelint|shellcheck|hadolint|pre-commit run|npm run lint|"
            r"pnpm (?:run )?lint|yarn (?:run )?lint|bun (?:run )?lint|make lint|(?:\./)?gradlew (?:lint|ktlintcheck|detekt)|"
            r"flutter analyze|dart analyze|just lint|task lint|nx lint|turbo (?:run )?lint|swiftlint|ktlint|detekt)\b"
        ),
    ),
    (
        "migrate",
        re.compile(
            r"^(?:alembic (?:upgrade|revision|downgrade)|python3? manage\.py (?:migrate|makemigrations)|"
            r"manage\.py (?:migrate|makemigrations)|mix ecto\.(?:migrate|rollback|gen\.migration)|"
            r"(?:bin/)?rails db:migrate|rake db:migrate|prisma migrate|goose|migrate |dbmate|flyway|"
            r"liquibase|knex migrate|diesel migration|sqlx migrate|atlas (?:migrate|schema)|"
            r"npm run migrate|pnpm (?:run )?migrate|yarn (?:run )?migrate|make migrate)"
        ),
    ),
    (
        "deploy",
        re.compile(
            r"^(?:fly(?:ctl)? deploy|vercel|netlify deploy|kubectl apply|helm (?:upgrade|install)|"
            r"terraform apply|pulumi up|gcloud (?:app|run) deploy|heroku |serverless deploy|sls deploy|"
            r"wrangler (?:deploy|publish)|cdk deploy|railway up|npm run deploy|pnpm (?:run )?deploy|"
            r"yarn (?:run )?deploy|make deploy|kamal deploy|cap \w+ deploy)"
        ),
    ),
    (
        "build",
        re.compile(
            r"^(?:npm run build|pnpm (?:run )?build|yarn (?:run )?build|bun (?:run )?build|cargo build|"
            r"go build|mix compile|make(?: build| all)?$|python3? -m build|uv build|poetry build|docker build|"
            r"docker compose build|vite build|next build|tsc(?! --noemit)\b|gradle(?:w)? build|\./gradlew build|"
            r"mvn (?:package|install|compile)|dotnet build|swift build|zig build|cmake --build|ninja|"
            r"hatch build|nuxt build|astro build|(?:\./)?gradlew (?:assemble\w*|bundle\w*|build)|flutter build|"
            r"xcodebuild|just build|task build|nx build|turbo (?:run )?build|sbt (?:compile|package)|dotnet publish)"
        ),
    ),
    (
        "run",
        re.compile(
            r"^(?:npm (?:run )?(?:dev|start|serve)|pnpm (?:run )?(?:dev|start)|yarn (?:run )?(?:dev|start)|"
            r"bun (?:run )?(?:dev|start)|cargo run|go run|mix phx\.server|iex -s mix|mix run|"
            r"python3? manage\.py runserver|manage\.py runserver|uvicorn|gunicorn|hypercorn|flask run|"
            r"fastapi (?:dev|run)|(?:bin/)?rails (?:server|s)\b|bundle exec rails s|docker compose up|"
            r"docker-compose up|make (?:dev|run|serve|start)|deno run|bun run|node |streamlit run|"
            r"python3? -m http\.server|dotnet run|swift run|air$|vite$|next dev|nuxt dev|astro dev|flutter run|"
            r"(?:\./)?gradlew (?:run|bootrun|installdebug)|just (?:run|dev)|task (?:run|dev)|nx serve|"
            r"turbo (?:run )?dev|sbt run|expo start|npx expo start|react-native run-\w+)"
        ),
    ),
)


_DROP_ARG = re.compile(r"^(?:\d+>&?\d*|/dev/null)$")
# where the command ends and its plumbing starts: a redirection (`2>&1`, `> out.log`, split by the
# shell reader into `2`, `>&`, `1`) or a pipe (`| tail -20`): the brief gives the command as typed
_PLUMBING = re.compile(r"^(?:\d*(?:>>?|<)&?|&>>?|>&|\||\|&|<<<?)(?:\S*)$")


_CODE_FILE = re.compile(
    r"\.(?:py|pyi|ts|tsx|js|jsx|mjs|go|rs|rb|ex|exs|java|kt|php|cs|swift|c|cc|cpp|h|feature|txt|log|json)$"
)


def _selects_files(arg: str) -> bool:
    """A file (or a test id) given to a command: what one run picked, not how the project runs."""
    if arg.startswith("-") or arg in ("./...", "..."):
        return False
    return "::" in arg or bool(_CODE_FILE.search(arg.split("::", 1)[0])) or arg.startswith("/")


_TEST_LINE = re.compile(
    r"^(?:(?:npm|pnpm|yarn|bun) (?:run )?test|make (?:test|check)|ginkgo|gotestsum|go test|cargo (?:nextest|test)|"
    r"nosetests|nose2|unittest|(?:bundle exec )?rspec|(?:bin/)?rails test|mix test|vitest|jest|mocha|playwright test|"
    r"cypress run|phpunit|pest|tox|nox|dotnet test|deno test|swift test|ctest|(?:npx|pnpm exec|bunx) "
    r"(?:vitest|jest|mocha|playwright|cypress|ava)|(?:\./)?gradlew (?:test|check|connected\w*androidtest)|"
    r"gradle (?:test|check)|mvn (?:test|verify)|flutter test|dart test|just test|task test|nx test|"
    r"turbo (?:run )?test|xcodebuild test|sbt test|lein test|mix test)"
)


_RUNNER = re.compile(
    r"^(?:npx|pnpx|bunx|uvx|pnpm exec|pnpm dlx|yarn dlx|bundle exec|poetry run|uv run|pdm run|pipenv run|hatch run)\s+"
)


def command_kind(line: str, shell_kind: str) -> str:
    """test | build | run | lint | format | typecheck | migrate | deploy | "" for a normalized command."""
    low = _RUNNER.sub("", line.lower())
    if shell_kind == "test" or _TEST_LINE.match(low):
        return "test"
    for kind, rx in _KIND_WORDS:
        m = rx.match(low)
        if m and (m.end() == len(low) or low[m.end() - 1] == " " or low[m.end()] in " ;&|"):
            return kind  # the whole program's name: `eslint-plugin-jsdoc` is a package, not eslint
    return ""


def normalize_command(argv: Sequence[str]) -> str:
    """A command as the brief names it: wrappers and env assignments off; a test run keeps the
    files it runs (`pytest tests/test_e2e.py -n 6`), a run of selected tests drops them with the
    selection (`pytest -q tests/test_x.py -k foo` -> `pytest -q`), other commands drop file operands."""
    return _normalized(tuple(argv))


_SELECTING = frozenset({"-k", "--run", "-run", "-t", "--testNamePattern", "--filter", "--grep", "-g"})


def selects_tests(argv: Sequence[str]) -> bool:
    """A run of some tests picked by name or id (`-k foo`, `tests/x.py::test_y`): one check, not the way."""
    return any(a in _SELECTING or "::" in a for a in argv[1:])


def _test_runner(args: Sequence[str]) -> bool:
    return bool(args) and bool(_TEST_LINE.match(" ".join(args[:3]).lower()) or args[0] in ("pytest", "py.test"))


@functools.lru_cache(maxsize=4096)  # sessions run the same commands again and again
def _normalized(argv: tuple[str, ...]) -> str:
    args = [a for a in argv if a != "<<"]
    while args and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", args[0]):
        args = args[1:]
    while args and args[0] in ("sudo", "time", "nohup", "exec", "command"):
        args = args[1:]
    if len(args) >= 3 and posixpath.basename(args[0]).startswith("python") and args[1] == "-m":
        args = args[2:]
    out: list[str] = []
    skip = False
    keep_files = _test_runner(args) and not selects_tests(args)  # `pytest tests/e2e -n 6`: the suite it runs
    for index, arg in enumerate(args):
        if _PLUMBING.match(arg) or (arg.isdigit() and index + 1 < len(args) and _PLUMBING.match(args[index + 1])):
            break
        if skip:
            skip = False
            continue
        if arg in ("-k", "-m", "--run", "-run", "-t", "--testNamePattern", "--filter", "-p") and out:
            if arg in ("-m", "-p") and out[0] not in ("pytest",):
                out.append(arg)
                continue
            skip = True
            continue
        if _DROP_ARG.match(arg):
            continue
        if out and "::" in arg:
            continue
        interpreter = len(out) == 1 and (
            out[0] in SUBCOMMANDS or re.match(r"^(?:python[\d.]*|node|ruby|deno|php|perl|bash|sh)$", out[0])
        )  # `python manage.py`, `mix phx.server`: the script or subcommand is the command
        if out and not interpreter and _selects_files(arg) and not (keep_files and not arg.startswith("/")):
            continue
        out.append(arg)
    if out:
        out[0] = posixpath.basename(out[0]) if out[0].startswith("/") else out[0]
    return " ".join(out)[:80]


def record_command(k: Knowledge, action: ToolAction, prov: Provenance, facts: TurnFacts) -> None:
    for argv in split_commands(action.command):
        line = normalize_command(argv)
        if not line or line.split(" ", 1)[0] in ("cd", "echo", "cat", "ls", "git", "grep", "rg", "sed", "tail", "head"):
            continue
        program = line.split(" ", 1)[0]
        if action.program and action.program.split(" ", 1)[0] not in line.split():
            continue  # the action is another simple command of the same line
        tech_name = PROGRAM_TECH.get(program) or program
        if not action.failed and action.output:
            _asked_version(k, line, action.output, prov)
        script = _SCRIPT_TECH.get(_script_of(line), "")
        if script and not action.failed:  # `mix phx.server` is Phoenix as well as Elixir
            record_named(k, script, prov, 0.8, slot=False)
        tech = vocabulary.lookup(tech_name)
        failed = action.failed or ("failed" in (facts.tests or "") and action.kind == "test")
        if program in BUILD_TOOLS and not failed:
            record_named(k, BUILD_TOOLS[program], prov, 0.8, slot=False)
        if tech is not None and tech.curated and not failed and program.lower() not in _SHELL_PROGRAMS:
            fills = tech.category in ("test-framework", "e2e-framework", "linter", "formatter", "type-checker")
            k.stack(tech, prov, 0.8, slot=fills and program not in PROGRAM_TECH)
        if action.kind == "install":
            if not failed:
                _installed(k, program, action.packages, prov)
                if _picked_install(program, action.packages):  # `pip install pytest-xdist==3.5.0`: how it was added
                    k.fact(OTHER_COMMAND, k.b.entity("command", line, prov), prov, 0.75)
            continue
        kind = command_kind(line, action.kind) or script_kind(line)
        if kind:
            _checked(k, kind, line, action, prov, facts, failed, picked=kind == "test" and selects_tests(argv))
        elif not failed and project_command(line):
            k.fact(OTHER_COMMAND, k.b.entity("command", line, prov), prov, 0.8)
        break


# a shell a one-liner runs in (`powershell -Command ...`, `bash -c ...`) is the machine's, not the stack
_SHELL_PROGRAMS = frozenset({"bash", "sh", "zsh", "fish", "powershell", "pwsh", "cmd", "powershell.exe", "cmd.exe"})
# a language's own answer to `--version` (`python --version` -> "Python 3.12.6", `node -v` -> "v20.11.1")
_VERSION_ANSWER = {
    "python": ("Python", r"Python (\d+\.\d+)"), "python3": ("Python", r"Python (\d+\.\d+)"),
    "node": ("Node.js", r"^v(\d+)(?:\.\d+)"), "go": ("Go", r"go(\d+\.\d+)"), "rustc": ("Rust", r"rustc (\d+\.\d+)"),
    "ruby": ("Ruby", r"ruby (\d+\.\d+)"), "elixir": ("Elixir", r"Elixir (\d+\.\d+)"), "java": ("Java", r"version \"?(\d+)"),
    "dotnet": (".NET", r"^(\d+\.\d+)"), "php": ("PHP", r"PHP (\d+\.\d+)"), "deno": ("Deno", r"deno (\d+\.\d+)"),
    "bun": ("Bun", r"^(\d+\.\d+)"), "kotlin": ("Kotlin", r"Kotlin version (\d+\.\d+)"),
}  # fmt: skip
_VERSION_FLAGS = frozenset({"--version", "-V", "-v", "version", "-version"})


def _asked_version(k: Knowledge, line: str, output: str, prov: Provenance) -> None:
    words = line.split()
    if len(words) != 2 or words[1] not in _VERSION_FLAGS or words[0] not in _VERSION_ANSWER:
        return
    name, pattern = _VERSION_ANSWER[words[0]]
    m = re.search(pattern, output[:500], re.M)
    tech = vocabulary.lookup(name)
    if m is not None and tech is not None:
        k.version(tech, m.group(1), prov, 0.8)


OTHER_COMMAND = "other-command"  # ran, of no known kind (`docker compose logs bot`, `npx task-master list`)
OTHER_SCRIPT = "other-script"  # the same, given in an answer ("watch `docker compose logs`")
# what a tool is asked about itself, or of the machine, is not how the project is worked on
_INSPECT = frozenset(
    {"--version", "-v", "-V", "version", "--help", "-h", "help", "ps", "images", "inspect", "show", "freeze",
     "ls", "outdated", "info", "view", "config", "whoami", "login", "logout", "stop", "kill", "rm", "cache",
     "doctor", "env", "top", "stats", "system", "prune", "-c", "-e"}
)  # fmt: skip
_PROGRAM_RUNNERS = frozenset({"npx", "pnpx", "bunx", "uvx", "pipx"})


def project_command(line: str) -> bool:
    """A command of no known kind that works the project: a project tool's subcommand (`docker
    compose logs bot`, `npx task-master list`) or a script of its own (`./scripts/seed.sh`,
    `python build_index.py`); not a shell utility, a one-word call, or a question to a tool
    about itself (`pip show x`, `docker ps`, `node -e ...`)."""
    words = line.split()
    if words and words[0] in _PROGRAM_RUNNERS:
        words = [w for w in words[1:] if w not in ("-y", "--yes")]
    if words and words[0].startswith(("./", "bin/", "scripts/")):
        return not any(w in _INSPECT for w in words[1:3])
    if len(words) < 2 or any(w in _INSPECT for w in words[1:3]):
        return False
    program, first = words[0], words[1]
    interpreter = re.match(r"^(?:python[\d.]*|node|ruby|bash|sh|deno|bun)$", program)
    if interpreter:
        return bool(re.match(r"^[\w./-]+\.(?:py|js|mjs|ts|rb|sh)$", first))
    if first.startswith("-"):
        return False
    runner = line.split()[0] in _PROGRAM_RUNNERS
    return runner or program in SUBCOMMANDS or vocabulary.known(program, curated=True)


# what a script or task names (`python manage.py migrate`, `mix phx.server`, `php artisan migrate`)
_SCRIPT_TECH = {
    "manage.py": "Django", "phx": "Phoenix", "artisan": "Laravel", "ecto": "Ecto", "credo": "Credo",
    "dialyzer": "Dialyzer", "test": "ExUnit", "sobelow": "Sobelow",
}  # fmt: skip


_SCRIPT = re.compile(r"\b(manage\.py|artisan)\b|\bmix (phx|ecto)\.|^mix (credo|dialyzer|test|sobelow)\b")


def _script_of(line: str) -> str:
    found = _SCRIPT.search(line)
    return next((g for g in found.groups() if g), "") if found else ""


CHOSEN_INSTALLS = 4  # an install of a few packages picks them; a long list restores a project's


def _picked_install(program: str, packages: Sequence[str]) -> bool:
    """An install that adds a few named packages a registry knows (not `npm install`, not a long restore)."""
    return (
        program in INSTALLERS
        and 0 < len(packages) <= CHOSEN_INSTALLS
        and all(vocabulary.lookup(p) is not None for p in packages)
    )


# a project script by what its name says it does (`python scripts/build_index.py`, `./deploy.sh`)
_SCRIPT_NAME_KINDS = (
    ("build", re.compile(r"^(?:build|compile|bundle)(?:[_.-]|$)")),
    ("test", re.compile(r"^(?:run[_-]?tests?|tests?)(?:[_.-]|$)")),
    ("lint", re.compile(r"^lint(?:[_.-]|$)")),
    ("deploy", re.compile(r"^(?:deploy|release)(?:[_.-]|$)")),
    ("migrate", re.compile(r"^migrat(?:e|ions?)(?:[_.-]|$)")),
)
_SCRIPT_RUN = re.compile(
    r"^(?:(?:python[\d.]*|node|ruby|bash|sh|deno|bun|php|perl)\s+)?(?:\./)?((?:[\w.-]+/)*[\w.-]+\.(?:py|js|mjs|ts|rb|sh|php|pl))(?:\s|$)"
)


def script_kind(line: str) -> str:
    """The kind of a project script run by its path, from its file name (`build_knowledge_base.py` builds)."""
    m = _SCRIPT_RUN.match(line)
    if m is None:
        return ""
    name = posixpath.basename(m.group(1)).lower()
    return next((kind for kind, rx in _SCRIPT_NAME_KINDS if rx.match(name)), "")


def _installed(
    k: Knowledge, program: str, packages: Sequence[str], prov: Provenance, *, confidence: float = 0.85
) -> None:
    manager = vocabulary.lookup(INSTALLERS.get(program, ""))
    if manager is not None:
        k.stack(manager, prov, confidence, slot=program in PROJECT_INSTALLERS)
    for package in packages:
        tech = vocabulary.lookup(package)
        if tech is not None and tech.curated:
            k.stack(tech, prov, confidence)
        elif tech is not None and len(packages) <= CHOSEN_INSTALLS and program in INSTALLERS:
            k.fact(CHOSE, k.stack(tech, prov, confidence), prov, confidence)  # `pip install tenacity`: picked


def _checked(
    k: Knowledge,
    kind: str,
    line: str,
    action: ToolAction,
    prov: Provenance,
    facts: TurnFacts,
    failed: bool,
    *,
    picked: bool = False,
) -> None:
    """A command of a kind that ran: the way to do it (when it worked, or the tests ran), and its
    outcome. A run of tests picked by name is one check: the way only when nothing else ran."""
    b = k.b
    relation = f"{kind}-script" if picked else f"{kind}-command"
    if not failed:
        k.fact(relation, b.entity("command", line, prov), prov, 0.75 if picked else 0.9)
    elif kind == "test" and facts.tests:  # the tests ran (some failed): still the way to test
        k.fact(relation, b.entity("command", line, prov), prov, 0.7 if picked else 0.8)
    if kind not in relations.STATUS_KINDS:
        return
    out = action.output or ""
    what = "tests" if kind == "test" else kind
    # coarse on purpose: one state per outcome (and error), so a run that changes nothing
    # restates the current value instead of superseding it; the counts are in the timeline
    if failed:
        error = next(iter(patterns.errors(out[-8000:], limit=1)), "") if out else ""  # the first is the same
        status = f"{what} failing" + (f": {error[:80]}" if error else "")
    else:
        status = f"{what} passing"
    k.fact(f"{kind}-status", b.entity("status", status[:120], prov, key=f"status:{status[:120]}"), prov, 0.9)


_SAID_KINDS = (
    ("typecheck", re.compile(r"\btype[- ]?check", re.I)),
    ("lint", re.compile(r"\blint", re.I)),
    ("format", re.compile(r"\bformat(?:ter|ting)?\b", re.I)),
    ("migrate", re.compile(r"\bmigrat", re.I)),
    ("deploy", re.compile(r"\b(?:deploy|ship)", re.I)),
    ("build", re.compile(r"\b(?:build|compile)", re.I)),
    ("test", re.compile(r"\b(?:tests?|testing|specs?)\b", re.I)),
    ("run", re.compile(r"\b(?:start|serve|dev server|locally)\b", re.I)),
)


# a program's name: a word (`pytest`, `mix`), a script run from here (`./run.sh`, `bin/rails`);
# not a path (`packages/x/y.test.ts`), a lint rule (`eslint/func-names`) or a file
_COMMANDISH = re.compile(r"^(?:(?:\./|bin/)[\w.+/-]+|[a-z][\w.+-]*)(?: |$)")


def _is_program(snippet: str) -> bool:
    first = snippet.split(" ", 1)[0]
    return bool(_COMMANDISH.match(snippet)) and (first.startswith(("./", "bin/")) or not _CODE_FILE.search(first))


_NOT_THE_WAY = Caseless(re.compile(r"\b(?:don'?t|do not|never|not|no longer|instead of|stop|avoid|without)\b", re.I))


# a verb right before the command tells the reader to type it ("watch `docker compose logs`",
# "run `npx prisma studio`"), not that it is talked about ("the exit code from `...`")
_TOLD_TO_RUN = re.compile(
    r"(?:\b(?:run|running|use|try|watch|execute|type|check with|rerun|re-run|rode|rodar|roda|execut[ae]r?|ejecut[ae]r?|"
    r"corr[ae]r?|запусти\w*|выполни\w*)|运行|执行)\W*\s*(?:\w+\s+){0,2}$",
    re.I,
)


def said_commands(k: Knowledge, sentence: str, prov: Provenance, *, from_user: bool = True) -> None:
    """Commands the user (or an answer, as `<kind>-script`: the way given, below what ran) gives as the way ("run the tests with `make test`", "we deploy with
    `fly deploy`"): the kind the command is, or else the one kind the sentence names. A command
    the sentence says not to use is not the way."""
    if "`" not in sentence:
        return
    cues = [kind for kind, rx in _SAID_KINDS if rx.search(BACKTICK.sub(" ", sentence))]
    last = 0
    for m in BACKTICK.finditer(sentence):
        before, last = sentence[last : m.start()], m.end()
        snippet = m.group(1).strip()
        if not _is_program(snippet) or _NOT_THE_WAY.found(before):
            continue
        for argv in split_commands(snippet):
            simple = classify(argv)
            if simple is not None and simple.kind == "install" and not before.rstrip().endswith("?"):
                # "the fix: `pip install python-multipart`": the package the project needs
                confidence = 0.8 if from_user else 0.7
                _installed(k, simple.program.split(" ", 1)[0], simple.packages, prov, confidence=confidence)
                break
            if simple is None or simple.kind not in ("run", "test"):
                break
            line = normalize_command(argv)
            kind = command_kind(line, simple.kind) or script_kind(line)
            if not kind and len(cues) == 1 and (" " in line or "/" in line):
                kind = cues[0]  # `make ci` "to run the tests"; a lone word (`httpx`) is a name, not a command
            if not kind and _TOLD_TO_RUN.search(before[-40:]) and project_command(line):
                relation = OTHER_COMMAND if from_user else OTHER_SCRIPT
                k.fact(relation, k.b.entity("command", line, prov), prov, 0.75 if from_user else 0.7)
            if kind:
                relation = f"{kind}-command" if from_user else f"{kind}-script"
                k.fact(relation, k.b.entity("command", line, prov), prov, 0.85 if from_user else 0.75)
                program = line.split(" ", 1)[0]
                tech = vocabulary.lookup(PROGRAM_TECH.get(program) or program)
                if tech is not None and tech.curated:
                    k.stack(tech, prov, 0.8, slot=tech.category in _TOOL_CATEGORIES and program not in PROGRAM_TECH)
            break


_TOOL_CATEGORIES = ("test-framework", "e2e-framework", "linter", "formatter", "type-checker")


# -- commands given in fenced blocks and lists ----------------------------------------------------

_SHELL_LANGS = frozenset(
    {"", "bash", "sh", "shell", "console", "zsh", "fish", "terminal", "shell-session", "sh-session", "cmd", "bat",
     "powershell", "ps1", "pwsh", "text", "txt"}
)  # fmt: skip
_PROMPT = re.compile(r"^(?:\$|>|%|❯|PS [^>]*>)\s+")
FENCED_LINES = 12  # a longer block is a script or output, not commands given to type
_COMMAND_HEADING = re.compile(
    r"\b(?:commands?|scripts?|usage|how to (?:run|test|build|lint)|running|run|test(?:s|ing)?|build(?:ing)?|lint(?:ing)?|"
    r"develop(?:ment)?|getting started|quick ?start|setup|check(?:s)?|ci)\b",
    re.I,
)


def _label_kinds(label: str) -> list[str]:
    return [kind for kind, rx in _SAID_KINDS if rx.search(label)]


_TRAILING_COMMENT = re.compile(r"\s+#\s.*$")


def fenced_commands(k: Knowledge, blocks: Sequence[Fenced], prov: Provenance, *, from_user: bool) -> None:
    """Shell blocks ("**Start the worker:**" over a ```bash block): each line a command as typed;
    its kind from the command itself, else from the label when the block is one command. A
    console block's prompt lines are the commands, the rest their output. An install names the
    packages the project uses."""
    for block in blocks:
        if block.lang not in _SHELL_LANGS or _NOT_THE_WAY.found(block.label):
            continue
        lines = [line.strip() for line in block.code.splitlines() if line.strip()]
        prompted = [_PROMPT.sub("", line) for line in lines if _PROMPT.match(line)]
        commands = prompted or [line for line in lines if not line.startswith(("#", "//", "REM "))]
        commands = [_TRAILING_COMMENT.sub("", line) for line in commands]  # `./setup.sh logs  # Live logs`
        if not commands or len(commands) > FENCED_LINES:
            continue
        label_kinds = _label_kinds(block.label)
        for text in commands:
            _given(k, text, label_kinds if len(commands) == 1 else [], prov, from_user=from_user)


def listed_commands(k: Knowledge, items: Sequence[Bullet], prov: Provenance, *, from_user: bool) -> None:
    """List items under a heading about commands ("Commands:", "## Running it"): the backticked
    command of each, of the kind the item's words or the command say."""
    for item in items:
        if "`" not in item.text or not _COMMAND_HEADING.search(item.heading):
            continue
        m = BACKTICK.search(item.text)
        if m is not None and _is_program(m.group(1).strip()):
            words = BACKTICK.sub(" ", item.text)
            _given(k, m.group(1).strip(), _label_kinds(words) or _label_kinds(item.heading), prov, from_user=from_user)


def _known_program(line: str) -> bool:
    """A program the vocabulary or the shell reader knows (`make`, `mix`, `./run.sh`): not a word of prose."""
    program = line.split(" ", 1)[0]
    return (
        program.startswith(("./", "bin/"))
        or program in PROGRAM_TECH
        or program in INSTALLERS
        or program in SUBCOMMANDS
        or vocabulary.known(program, curated=True)
    )


def _given(k: Knowledge, text: str, label_kinds: list[str], prov: Provenance, *, from_user: bool) -> None:
    if not _is_program(text):
        return
    for argv in split_commands(text):
        simple = classify(argv)
        if simple is None or simple.kind in ("cd", "read", "list", "search", "git", "delete", "move"):
            continue
        if simple.kind == "install":
            _installed(k, simple.program.split(" ", 1)[0], simple.packages, prov, confidence=0.8 if from_user else 0.7)
            continue
        line = normalize_command(argv)
        kind = command_kind(line, simple.kind if simple.kind == "test" else "") or script_kind(line)
        if not kind and len(label_kinds) == 1 and " " in line:
            kind = label_kinds[0] if _known_program(line) else ""  # "**Run the checks:** `make ci`"
        if not kind:
            if from_user and _SCRIPT_RUN.match(line) and project_command(line):  # the user's own script, to run
                k.fact(OTHER_COMMAND, k.b.entity("command", line, prov), prov, 0.75)
            continue
        relation = f"{kind}-command" if from_user else f"{kind}-script"
        k.fact(relation, k.b.entity("command", line, prov), prov, 0.85 if from_user else 0.75)
        program = line.split(" ", 1)[0]
        script = _SCRIPT_TECH.get(_script_of(line), "")
        if script:
            record_named(k, script, prov, 0.75, slot=False)
        tech = vocabulary.lookup(PROGRAM_TECH.get(program) or program)
        if tech is not None and tech.curated:
            k.stack(tech, prov, 0.75, slot=tech.category in _TOOL_CATEGORIES and program not in PROGRAM_TECH)


def may_give_commands(text: str) -> bool:
    """Whether a text has a backticked command a known program starts (most answers have none)."""
    return any(_known_program(m.group(1)) for m in BACKTICK.finditer(text))


# a line that labels a command ("Comando: python tests/run_benchmark.py", "**Command:** `make ci`")
_LABELLED_COMMAND = re.compile(
    r"^(?:[>*_-]+[ \t]*)*(?:commands?|run(?:\s+it)?|comandos?|ejecuta(?:r)?|execute|команда|命令|运行)[*_]*\s*[:：][*_]*[ \t]*"
    r"`?([^`\n]{3,200}?)`?[ \t]*$",
    re.I | re.M,
)


def labelled_commands(k: Knowledge, text: str, prov: Provenance, *, from_user: bool) -> None:
    """Commands a message gives on a line of their own under a label, in any of the users' languages."""
    if ":" not in text and "：" not in text:
        return
    for m in _LABELLED_COMMAND.finditer(text[:20_000]):
        _given(k, m.group(1).strip(), [], prov, from_user=from_user)
