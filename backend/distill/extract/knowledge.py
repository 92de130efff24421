"""What a coding session says about its project: stack, commands, conventions, decisions, state.

The activity rules (coding.py) record what a turn did; these record what it teaches about the
project, as edges from the project entity (the session's, when it has no project), each with
the provenance of the node that showed it:

- stack: `project ──uses──► tech` (a language, framework, database, ... from vocabulary.tsv)
  found in manifests read or written (package.json, pyproject.toml, requirements*.txt,
  Cargo.toml, go.mod, mix.exs, Gemfile, docker-compose.yml, Dockerfile, lock files), install
  commands, the programs run, imports of code the agent wrote, the files' languages, and what
  the conversation says is used or chosen ("use httpx", "we're on Python 3.11"); a technology
  of a slot category (test framework, ORM, package manager, ...) also fills the slot:
  `project ──test-framework──► Vitest`, single-valued, so the next value supersedes it;
  language versions: `project ──python-version──► Python 3.11`;
- replacements: "move from Jest to Vitest", "dropping Redux", "use X instead of Y":
  `project ──dropped──► Jest` (reconcile retires the older stack edges to it) and the new value;
- commands that ran successfully, by kind: `project ──test-command──► pytest -q` (single-valued:
  the latest is current, the older ones are history);
- state: `project ──test-status──► tests failing: 3 failed` (the latest run's outcome);
- conventions the user states ("always ...", "never ...", "prefer ...", "don't ..."):
  `project ──convention──► <the sentence>`, or from the user, in the global scope, when the
  sentence says it holds in every project;
- environment variable names (`project ──env-var──► DATABASE_URL`, never a value), endpoints
  (`project ──endpoint──► GET /api/items`) and ports exposed (`project ──exposes──► :8000`);
- layout a message states: `project ──architecture──► hexagonal layout` ("we use a hexagonal
  layout", "it's a monorepo") and `project ──component──► API: services/api` ("the API is in
  services/api, the worker in services/worker"); never from a sentence about an error or a fix;
- progress a message states: `project ──task-done──► X` / `──task-pending──► Y` from "Done: X",
  "TODO: Y", "Pending:" / "## Remaining" over a list, and `- [x]` / `- [ ]` checklists.

Within a batch each (subject, relation, value) is recorded once, with its latest sighting.
"""

from __future__ import annotations

import functools
import json
import posixpath
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from ...memory.records import GLOBAL
from ...model import Node, Provenance
from ..model import CollectedTurn, TurnFacts
from . import patterns, vocabulary
from .builder import RecordBuilder
from .caseless import Caseless
from .shell import SUBCOMMANDS, classify, split_commands
from .tools import ToolAction, arguments

USES = "uses"
CHOSE = "chose"  # a library the user said to use ("use Loguru for logging"): on the stack line
DROPPED = "dropped"
CONVENTION = "convention"
ENV_VAR = "env-var"
ENDPOINT = "endpoint"
EXPOSES = "exposes"
PROBLEM = "has-problem"
ARCHITECTURE = "architecture"  # project ──architecture──► "hexagonal architecture"
COMPONENT = "component"  # project ──component──► "API: services/api"
TASK_DONE = "task-done"  # what a session says is done / still to do ("done: X", "TODO: Y", "- [x] Z")
TASK_PENDING = "task-pending"
COMMAND_KINDS = ("test", "build", "run", "lint", "format", "typecheck", "migrate", "deploy")
STATUS_KINDS = ("test", "build", "typecheck", "lint")
SLOT_RELATIONS = frozenset({*vocabulary.SLOTS.values(), *vocabulary.SWITCH_SLOTS.values()})
SWITCH_RELATIONS = frozenset(vocabulary.SWITCH_SLOTS.values())
STACK_RELATIONS = frozenset({USES, "depends-on", *SLOT_RELATIONS})
KNOWLEDGE_RELATIONS = frozenset(
    {
        USES,
        DROPPED,
        CONVENTION,
        ENV_VAR,
        ENDPOINT,
        EXPOSES,
        "depends-on",
        "listens-on",
        "fixed-by",
        *SLOT_RELATIONS,
        *(f"{k}-command" for k in COMMAND_KINDS),
        *(f"{k}-script" for k in COMMAND_KINDS),
        *(f"{k}-status" for k in STATUS_KINDS),
        PROBLEM,
        ARCHITECTURE,
        COMPONENT,
        TASK_DONE,
        TASK_PENDING,
    }
)


def single_valued(relation: str) -> bool:
    """Relations that hold one value per subject at a time, whatever the config says."""
    return relation in SLOT_RELATIONS or relation.endswith(("-command", "-version", "-status"))


def is_knowledge(relation: str) -> bool:
    return relation in KNOWLEDGE_RELATIONS or relation.endswith("-version")


# -- commands ------------------------------------------------------------------------------------

_KIND_WORDS = (
    ("typecheck", re.compile(r"^(?:mypy|pyright|basedpyright|pyre|pytype|ty check|tsc --noemit|vue-tsc|flow)\b")),
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
            r"pnpm (?:run )?lint|yarn (?:run )?lint|bun (?:run )?lint|make lint)\b"
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
            r"hatch build|nuxt build|astro build)"
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
            r"python3? -m http\.server|dotnet run|swift run|air$|vite$|next dev|nuxt dev|astro dev)"
        ),
    ),
)
_DROP_ARG = re.compile(r"^(?:\d+>&?\d*|/dev/null)$")


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
    r"(?:vitest|jest|mocha|playwright|cypress|ava))"
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
        if rx.match(low):
            return kind
    return ""


def normalize_command(argv: Sequence[str]) -> str:
    """A command as the brief names it: wrappers and env assignments off, file operands and
    `-k` selections dropped (`pytest -q tests/test_x.py -k foo` -> `pytest -q`)."""
    return _normalized(tuple(argv))


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
    for arg in args:
        if skip:
            skip = False
            continue
        if arg in (">", ">>", "2>", "&>", "<", "|"):
            break
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
        if out and not interpreter and _selects_files(arg):
            continue
        out.append(arg)
    if out:
        out[0] = posixpath.basename(out[0]) if out[0].startswith("/") else out[0]
    return " ".join(out)[:80]


def _words(text: str) -> list[str]:
    """A list of names written as one string (long lists read better so)."""
    return text.split()


# -- stack sources -------------------------------------------------------------------------------

EXTENSION_LANGUAGES = {
    ".py": "Python", ".pyi": "Python", ".ts": "TypeScript", ".tsx": "TypeScript", ".js": "JavaScript",
    ".jsx": "JavaScript", ".mjs": "JavaScript", ".go": "Go", ".rs": "Rust", ".rb": "Ruby", ".ex": "Elixir",
    ".exs": "Elixir", ".heex": "Elixir", ".erl": "Erlang", ".java": "Java", ".kt": "Kotlin", ".scala": "Scala",
    ".swift": "Swift", ".c": "C", ".h": "C", ".cpp": "C++", ".cc": "C++", ".hpp": "C++", ".cs": "C#",
    ".php": "PHP", ".lua": "Lua", ".dart": "Dart", ".zig": "Zig", ".hs": "Haskell", ".ml": "OCaml",
    ".clj": "Clojure", ".vue": "Vue", ".svelte": "Svelte", ".sql": "SQL", ".sh": "Bash",
}  # fmt: skip
LOCKFILES = {
    "pnpm-lock.yaml": "pnpm", "yarn.lock": "Yarn", "package-lock.json": "npm", "bun.lockb": "Bun", "bun.lock": "Bun",
    "poetry.lock": "Poetry", "uv.lock": "uv", "Pipfile": "Pipenv", "Pipfile.lock": "Pipenv", "pdm.lock": "PDM",
    "Cargo.lock": "Cargo", "go.sum": "Go modules", "mix.lock": "Mix", "Gemfile.lock": "Bundler",
    "composer.lock": "Composer", "alembic.ini": "Alembic", "manage.py": "Django", "Makefile": "Make",
    "docker-compose.yml": "Docker Compose", "docker-compose.yaml": "Docker Compose", "compose.yaml": "Docker Compose",
    "Dockerfile": "Docker", "tailwind.config.js": "Tailwind CSS", "tailwind.config.ts": "Tailwind CSS",
    "vite.config.ts": "Vite", "vite.config.js": "Vite", "vitest.config.ts": "Vitest", "jest.config.js": "Jest",
    "jest.config.ts": "Jest", "next.config.js": "Next.js", "next.config.mjs": "Next.js", "next.config.ts": "Next.js",
    "tsconfig.json": "TypeScript", "pytest.ini": "pytest", "conftest.py": "pytest", "tox.ini": "tox",
    "ruff.toml": "Ruff", ".eslintrc.json": "ESLint", "eslint.config.js": "ESLint", ".prettierrc": "Prettier",
    "playwright.config.ts": "Playwright", "schema.prisma": "Prisma", "drizzle.config.ts": "Drizzle",
    "webpack.config.js": "webpack", "svelte.config.js": "SvelteKit", "nuxt.config.ts": "Nuxt", "astro.config.mjs": "Astro",
    "Procfile": "Heroku", "fly.toml": "Fly.io", "vercel.json": "Vercel", "netlify.toml": "Netlify",
    "wrangler.toml": "Cloudflare Workers", "serverless.yml": "Serverless Framework", "main.tf": "Terraform",
    "Chart.yaml": "Helm", "mypy.ini": "mypy", "pyrightconfig.json": "Pyright", ".golangci.yml": "golangci-lint",
    ".rubocop.yml": "RuboCop", "phpunit.xml": "PHPUnit", "build.gradle": "Gradle", "pom.xml": "Maven",
    "build.gradle.kts": "Gradle", "deno.json": "Deno", "biome.json": "Biome", ".python-version": "Python",
    ".nvmrc": "Node.js", "Cargo.toml": "Cargo", "go.mod": "Go modules", "mix.exs": "Mix", "Gemfile": "Bundler",
    "pyproject.toml": "Python", "package.json": "npm", "requirements.txt": "pip",
}  # fmt: skip
INSTALLERS = {
    "pip": "pip", "pip3": "pip", "uv": "uv", "poetry": "Poetry", "pdm": "PDM", "npm": "npm", "pnpm": "pnpm",
    "yarn": "Yarn", "bun": "Bun", "cargo": "Cargo", "go": "Go modules", "gem": "RubyGems", "bundle": "Bundler",
    "composer": "Composer", "mix": "Mix", "conda": "conda", "pipx": "pipx",
}  # fmt: skip
BUILD_TOOLS = {"mix": "Mix", "cargo": "Cargo", "gradle": "Gradle", "mvn": "Maven", "make": "Make", "bundle": "Bundler"}
PROJECT_INSTALLERS = frozenset({"uv", "poetry", "pdm", "pnpm", "yarn", "bun", "cargo", "bundle", "composer", "mix"})
PROGRAM_TECH = {
    "python": "Python", "python3": "Python", "node": "Node.js", "cargo": "Rust", "go": "Go", "mix": "Elixir",
    "iex": "Elixir", "ruby": "Ruby", "bundle": "Bundler", "rails": "Ruby on Rails", "php": "PHP", "deno": "Deno",
    "bun": "Bun", "dotnet": ".NET", "swift": "Swift", "java": "Java", "gradle": "Gradle", "mvn": "Maven",
    "manage.py": "Django", "docker": "Docker", "kubectl": "Kubernetes",
}  # fmt: skip
_NODE_BUILTINS = frozenset(
    _words(
        "assert buffer child_process cluster crypto dgram dns events fs http http2 https net os path perf_hooks process "
        "querystring readline stream string_decoder timers tls tty url util v8 vm worker_threads zlib module"
    )
)
_PY_STDLIB = frozenset(getattr(sys, "stdlib_module_names", ())) - {"sqlite3", "unittest", "tkinter", "asyncio"}
_PY_IMPORT = re.compile(r"^[ \t+]*(?:from\s+([A-Za-z_][\w]*)[\w.]*\s+import\b|import\s+([A-Za-z_][\w]*))", re.MULTILINE)
_JS_IMPORT = re.compile(
    r"""(?:\bfrom\s+|\brequire\(\s*|\bimport\(\s*|^[ \t+]*import\s+)['"]([^'"\s]+)['"]""", re.MULTILINE
)
_GO_IMPORT = re.compile(
    r'^[ \t+]*(?:import\s+)?(?:\w+\s+)?"((?:github\.com|gitlab\.com|golang\.org|gorm\.io|entgo\.io|go\.uber\.org|google\.golang\.org|[\w-]+\.(?:io|dev|org))/[\w./-]+)"',
    re.MULTILINE,
)
_RUST_USE = re.compile(r"^[ \t+]*use\s+([a-z_][\w]*)::", re.MULTILINE)
_EX_USE = re.compile(r"^[ \t+]*(?:use|alias|import)\s+([A-Z]\w+)", re.MULTILINE)
_VERSIONED = Caseless(
    re.compile(  # (written in lower case, which IGNORECASE makes the same: matched lowercased)
        r"\b(python|node(?:\.js)?|go|golang|ruby|elixir|erlang/otp|otp|rust|java|php|typescript|django|rails|react|vue|"
        r"next\.js|postgresql|postgres|mysql|redis|kotlin|swift|deno|bun|\.net|phoenix|angular|svelte|laravel)\s+v?(\d+(?:\.\d+){0,2})\b",
        re.IGNORECASE,
    )
)
VERSIONED_LANGUAGES = frozenset({"Python", "Node.js", "Go", "Ruby", "Elixir", "Rust", "Java", "PHP", "TypeScript",
                                 "Kotlin", "Swift", "Deno", "Bun", ".NET"})  # fmt: skip
_IMAGE = re.compile(r"^\s*(?:FROM|image:)\s*[\"']?(?:[\w.-]+/)?([a-z][\w.-]*?)(?::v?(\d+(?:\.\d+)?))?(?:[-@][\w.-]*)?[\"']?\s*(?:AS\s+\w+)?\s*$",
                    re.MULTILINE | re.IGNORECASE)  # fmt: skip
_IMAGE_TECH = {"python": "Python", "node": "Node.js", "golang": "Go", "rust": "Rust", "ruby": "Ruby", "elixir": "Elixir",
               "postgres": "PostgreSQL", "postgis": "PostgreSQL", "mysql": "MySQL", "mariadb": "MariaDB", "redis": "Redis",
               "mongo": "MongoDB", "rabbitmq": "RabbitMQ", "nginx": "Nginx", "memcached": "Memcached",
               "elasticsearch": "Elasticsearch", "openjdk": "Java", "eclipse-temurin": "Java", "php": "PHP",
               "kafka": "Kafka", "minio": "MinIO", "clickhouse": "ClickHouse", "caddy": "Caddy", "traefik": "Traefik",
               "valkey": "Valkey", "nats": "NATS", "localstack": "AWS", "oven/bun": "Bun", "bun": "Bun", "deno": "Deno"}  # fmt: skip

# -- conversation cues ----------------------------------------------------------------------------

_SENT = re.compile(r"(?:[^.!?\n]|[.!?](?=[\w/]))+[.!?]*")  # `mix phx.server`, `v1.2` stay whole
_CODE_BLOCK = re.compile(r"```.*?(?:```|$)", re.DOTALL)
_BACKTICK = re.compile(r"`([^`\n]{1,60})`")
_NAME = (
    r"`?([A-Za-z@][\w.+#/@-]*(?: (?:CSS|UI|ORM|DB|Query|Router|Migrate|on Rails|Framework|Compose|Test|Library|"
    r"Actions|CI|React App))?)`?"
)
_REPLACE = [
    re.compile(
        rf"\b(?:mov|migrat|switch|port|chang|go|transition|upgrad)(?:e|es|ed|ing)?\b(?:\s+\w+){{0,4}}?\s+from\s+{_NAME}\s+(?:over\s+)?to\s+{_NAME}",
        re.I,
    ),
    re.compile(rf"\breplac(?:e|es|ed|ing)\s+{_NAME}\s+(?:with|by)\s+{_NAME}", re.I),
    # "swap axios for the native fetch API"
    re.compile(
        rf"\bswap(?:s|ped|ping)?\s+(?:out\s+)?{_NAME}\s+(?:out\s+)?for\s+(?:the\s+)?(?:native\s+|built-in\s+)?{_NAME}",
        re.I,
    ),
    re.compile(rf"\b{_NAME}\s+instead\s+of\s+{_NAME}", re.I),  # Y instead of X (the new one first)
    re.compile(rf"\binstead\s+of\s+{_NAME},?\s+(?:let'?s\s+|we(?:'ll| will)?\s+)?use\s+{_NAME}", re.I),
    re.compile(rf"\b{_NAME}(?:\s+please)?,?\s+(?:not|never)\s+{_NAME}\b", re.I),  # Y, not X; "pnpm please, never npm"
    re.compile(rf"\bprefer\s+{_NAME}\s+(?:over|to)\s+{_NAME}", re.I),
    re.compile(rf"\b{_NAME}\s+(?:replaces|replaced|supersedes|takes over from)\s+{_NAME}", re.I),  # Y replaces X
    # "use lmstudio instead of their initial implementation of ollama": Y instead of (a part) of X
    re.compile(
        rf"\b{_NAME}\s+instead\s+of\s+(?:(?:the|their|our|its|my|your|an?)\s+)?(?:[a-z]+\s+){{1,2}}?(?:of|with|on)\s+{_NAME}",
        re.I,
    ),
]
_REPLACE_ORDER = ("old-new", "old-new", "old-new", "new-old", "old-new", "new-old", "new-old", "new-old", "new-old")
# what may follow a dropped name: the sentence goes on ("drop Redux for Zustand", "we dropped Redux
# last month"), not the name's part ("remove the React import", "removed the Django admin")
_DROP_END = (
    r"(?=\s*(?:[,.;:!?)]|$)|\s+(?:and|or|for|from|in|since|last|this|because|entirely|completely|altogether|now|"
    r"today|yesterday|already|as|with|here|there|too|anymore|any more|in favou?r)\b|\s+[A-Z])"
)
_DROP = re.compile(
    rf"\b(?:(?:we(?:'re| are)\s+)?dropping|drop(?:ped)?|remov(?:e|ed|ing)|get(?:ting)? rid of|got rid of|"
    rf"stop(?:ped)? using|no more|ditch(?:ing|ed)?|rip(?:ping|ped)? out|deprecat(?:e|ed|ing)|"
    rf"mov(?:e|ed|ing) (?:off(?: of)?|away from)|migrat(?:e|ed|ing) (?:off(?: of)?|away from)|phas(?:e|ed|ing) out|"
    rf"get(?:ting)? off|got off|abandon(?:ed|ing)?|retir(?:e|ed|ing)|done with|swap(?:s|ped|ping)?(?: out)?|"
    rf"(?:let'?s|we(?:'ll| will)?|i'?d rather|we'?d rather)\s+not\s+use|(?:we\s+)?no longer use)\s+(?:the\s+)?{_NAME}(?-i:{_DROP_END})",
    re.I,
)
_CHOOSE = Caseless(
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
# (one alternative, which needs a capital, is _FOLLOWS_NAME: the rest are matched lowercased)
_CONVENTION = Caseless(
    re.compile(
        r"\b(?:always|never|prefer|avoid|make sure (?:to|that|you)|from now on|going forward|by default|as a rule|"
        r"(?:please\s+)?(?:don'?t|do not|no need to)\s+(?:ever\s+)?(?:use|add|commit|push|write|put|call|import|mock|"
        r"create|run|touch|change|leave|modify|edit|rename|delete|install|bump|hardcode|hard-code|log|print|skip|"
        r"disable|force|merge|rebase|include)|(?:we|i) (?:want|like|use|keep|write|name|put)\s+(?:\w+\s+){0,3}"
        r"(?:in|for|as|with) (?:every|all|each)|keep (?:\w+ ){0,3}(?:under|below|short|small|thin|lean|simple|minimal|pure|flat|sorted|consistent|typed|private|separate)|keep (?:\w+ ){1,3}(?:at|to|within) \d+|"
        r"(?:should|must) (?:always|never|be|have|use|follow)|stick to|(?:please\s+)?(?:use|write|import|export)\s+(?:\w+\s+){1,4}only|"
        r"conventions?\b|style guide|naming|"
        r"(?:every|all|each|any)\s+(?:\w+\s+){0,2}(?:needs?|must|should|has to|have to|gets?)\b|"
        r"(?:we|i)\s+follow|(?:please\s+)?stop\s+(?:using|adding|writing|putting|calling)|"
        r"(?:i|we)(?:'d)? (?:want|like|prefer|expect)\s+(?!you\b|to\b|it\b|this\b|that\b|the\b|a\b|an\b)\w+)\b",
        re.I,
    )
)
# "we follow the Google style guide", "follows PEP 8": a named style
_FOLLOWS_NAME = re.compile(r"\bfollows?\s+(?:the\s+)?(?-i:[A-Z])\w*\b", re.I)
_NOT_CONVENTION = Caseless(
    re.compile(
        r"\b(?:don'?t (?:know|think|worry|understand|see|have|get|remember)|never mind|always wanted|"
        r"do not (?:know|understand)|why does|what does|how do)\b",
        re.I,
    )
)
_GLOBAL = Caseless(
    re.compile(
        r"\b(?:in (?:every|all|any)(?: of)?(?: my)?(?: \w+){0,2} (?:projects?|repos?|repositories|codebases?)|"
        r"across (?:all )?(?:my )?(?:projects|repos)|globally|in general|for all my|whatever the project|"
        r"all my (?:\w+ )?(?:projects|code|repos))\b",
        re.I,
    )
)
_ENV_CODE = re.compile(
    r"""(?:os\.environ(?:\.get)?\s*[\[(]\s*|os\.getenv\(\s*|getenv\(\s*|process\.env\[\s*|env::var\(\s*|"""
    r"""os\.Getenv\(\s*|System\.(?:get_env|getenv)\(\s*|ENV(?:\.fetch)?\s*[\[(]\s*|Deno\.env\.get\(\s*|"""
    r"""import\.meta\.env\[\s*)["']([A-Z][A-Z0-9_]{2,60})["']|process\.env\.([A-Z][A-Z0-9_]{2,60})|"""
    r"""import\.meta\.env\.([A-Z][A-Z0-9_]{2,60})|\$\{?([A-Z][A-Z0-9]*_[A-Z0-9_]{2,60})\}?"""
)
_ENV_FILE = re.compile(r"^[ \t+]*(?:-[ \t]+)?[\"']?(?:export\s+)?([A-Z][A-Z0-9]*_[A-Z0-9_]+)\s*[=:]", re.MULTILINE)
_ENV_WORD = Caseless(re.compile(r"\b(?:env(?:ironment)?(?: var(?:iable)?s?)?|\.env|export|set)\b", re.I))
_ENV_NAME = re.compile(r"\b([A-Z][A-Z0-9]*_[A-Z0-9_]{2,60})\b")
_NOT_ENV = frozenset({"TODO_LIST", "README_MD", "UTF_8", "HTTP_200", "HTTP_404", "ISO_8601", "MAX_INT"})
_ROUTE = re.compile(
    r"""(?:@(?:app|router|bp|blueprint|api|\w+_router)\.(get|post|put|patch|delete|route|websocket)|"""
    r"""\b(?:app|router|server|r|e|mux|api|route)\.(get|post|put|patch|delete|all|Get|Post|Put|Patch|Delete|HandleFunc|Handle|GET|POST|PUT|DELETE))"""
    r"""\(\s*["'`](/[\w/:{}<>.*-]*)["'`]|@(Get|Post|Put|Patch|Delete|Request)Mapping\(\s*(?:value\s*=\s*)?"(/[\w/{}.-]*)"|"""
    r"""^[ \t+]*(get|post|put|patch|delete|live|resources?|forward|scope)\s+["'](/[\w/:{}.-]*)["']""",
    re.MULTILINE,
)
_PORT_CODE = re.compile(
    r"""(?:^\s*EXPOSE\s+(\d{2,5})|["']?(\d{2,5}):(\d{2,5})["']?\s*$|\bport\s*[=:]\s*(\d{4,5})\b|\.listen\(\s*(\d{4,5})\b|"""
    r"""PORT\s*(?:\|\||\?\?|or|,)\s*["']?(\d{4,5}))""",
    re.MULTILINE | re.IGNORECASE,
)


def sentences(text: str) -> list[str]:
    text = _CODE_BLOCK.sub(" ", text)
    out = []
    for m in _SENT.finditer(text):
        s = " ".join(m.group(0).split()).strip(" -*#>•")
        if 6 <= len(s) <= 400:
            out.append(s)
    return out


@functools.lru_cache(maxsize=16384)  # the rules look up the same words again and again (every n-gram of a sentence)
def _tech_name(raw: str, *, curated: bool) -> vocabulary.Tech | None:
    name = raw.strip("`'\".,;:()[]!?")
    if not name or len(name) > 60:
        return None
    tech = vocabulary.lookup(name)
    if tech is None and name.lower().endswith((".js", "js")) and len(name) > 4:
        tech = vocabulary.lookup(name[:-3] if name.lower().endswith(".js") else name[:-2])
    if tech is None or (curated and not tech.curated):
        return None
    return tech


def mentioned_techs(sentence: str) -> list[vocabulary.Tech]:
    """The curated technologies a sentence names (backticked names of any kind too)."""
    return list(_mentioned_techs(sentence))


@functools.lru_cache(maxsize=1024)  # several rules ask it of one sentence
def _mentioned_techs(sentence: str) -> tuple[vocabulary.Tech, ...]:
    found: list[vocabulary.Tech] = []
    for m in _BACKTICK.finditer(sentence):
        tech = _tech_name(m.group(1), curated=False)
        if tech is not None:
            found.append(tech)
    words = re.findall(r"[A-Za-z@][\w.+#/@-]*", _BACKTICK.sub(" ", sentence))
    i = 0
    while i < len(words):
        hit = None
        for width in (3, 2):
            if i + width <= len(words):
                hit = _tech_name(" ".join(words[i : i + width]), curated=True)
                if hit is not None:
                    i += width
                    break
        if hit is None:
            word = words[i].rstrip(".")
            # single plain words: curated names, and not a lower-case English word that is also a name
            hit = _tech_name(word, curated=True)
            # a lower-case English word; one that qualifies the next ("Hex color 014073"); a verb
            # opening the sentence ("Make it shorter", "Go ahead", "Just run it")
            common = hit is not None and word.lower() in _COMMON_WORDS
            after = words[i + 1] if i + 1 < len(words) else ""
            opening = i == 0 and (after.lower() in _AFTER_VERB or (word == "Just" and after.islower()))
            if common and (word.islower() or _QUALIFIED.match(after) or opening):
                hit = None
            i += 1
        if hit is not None:
            found.append(hit)
    return tuple({t.name: t for t in found}.values())


_AFTER_VERB = frozenset(
    _words(
        "it sure the a an this that these those them me us him her ahead back to up down on out over through away "
        "into some any all your my our their its"
    )
)
# what follows a word used as an adjective, not a name: "Hex color", "Hex E2F0FF", "Stack trace"
_QUALIFIED = re.compile(
    r"(?:colou?rs?|codes?|values?|strings?|digits?|numbers?|literals?|traces?|overflows?|frames?|"
    r"#?(?=[A-Fa-f]*[0-9])[0-9A-Fa-f]{3,8}|[0-9][\w-]*)$",  # a hex literal has a digit ("Go add" is no colour)
    re.I,
)
# lower-case words that are technology names too but mostly mean something else in a sentence
_COMMON_WORDS = frozenset(
    _words(
        "go rust make task just c r dash play echo warp tide express koa next remix turbo lit flow stack dart nim crystal "
        "hex mix pub spring sequel kind flux render railway fly tap chai sinon pest ent sqlx react vue svelte bootstrap "
        "foundation less stylus skeleton emotion relay got ky req tesla hyper rocket atlas bats rich textual ray dagger "
        "earthly vault consul chef puppet salt packer nomad envoy caddy guardian lucia clerk ory rest mcp sse ember backbone "
        "stimulus hotwire solid qwik inferno stencil astro gatsby expo ionic capacitor electron tauri flutter blitz "
        "prometheus neon turso chroma milvus solr etcd oracle redis celery temporal pulsar luigi prefect huey arq "
        "objection knex bookshelf doctrine eloquent sorbet steep pyre black prettier standard biome taplo spotless "
        "sentry datadog loki jaeger grafana kibana hetzner render linode heroku vercel netlify cloudflare "
        "docker podman helm terraform ansible vagrant kubernetes nginx traefik gunicorn uvicorn puma unicorn supervisor "
        "jest mocha jasmine cypress karma behave locust storybook hypothesis nose unittest pip uv npm pnpm yarn bun cargo "
        "poetry pipenv conda mamba pixi rye gradle maven composer bundler vite webpack rollup esbuild parcel babel gulp "
        "grunt nx lerna tailwind sass postcss mui antd mantine vuetify quasar zustand mobx recoil jotai pinia vuex swr "
        "requests httpx axios undici ruff pylint flake8 eslint mypy pyright tsc django flask fastapi starlette sanic "
        "tornado pyramid bottle quart phoenix rails sinatra hanami laravel symfony gin fiber chi axum streamlit gradio "
        "htmx preact angular jquery lit postgres postgresql mysql mariadb sqlite mongodb cassandra dynamodb duckdb "
        "memcached valkey rabbitmq kafka nats sidekiq oban dramatiq alembic flyway liquibase goose dbmate prisma drizzle "
        "typeorm sequelize mongoose ecto sqlalchemy peewee diesel gorm pytest vitest playwright selenium puppeteer rspec "
        "minitest exunit junit phpunit ginkgo testify nextest python ruby elixir erlang java kotlin scala swift php perl "
        "lua julia haskell ocaml clojure zig gleam elm bash zsh sql html css typescript javascript node deno pandas numpy "
        "polars scipy matplotlib jupyter dask torch pytorch tensorflow keras langchain ollama openai anthropic pydantic "
        "marshmallow zod yup joi graphql grpc protobuf websocket websockets three exposed shell compose nest spark "
        "motor slim brew bull drone tilt vapor varnish apt hatch lambda iced leaflet pika ninja alpine apache gem "
        "hugo elk otp"
    )
) - frozenset(
    # names that, written in lower case, are still almost always the technology
    _words(
        "django flask fastapi postgres postgresql mysql sqlite mongodb redis celery kafka rabbitmq pytest vitest jest "
        "mocha cypress playwright selenium puppeteer rspec minitest phpunit pip uv npm pnpm yarn cargo poetry pipenv conda "
        "gradle maven composer vite webpack rollup esbuild parcel babel tailwind sass postcss zustand mobx pinia vuex "
        "httpx axios ruff pylint flake8 eslint mypy pyright tsc sqlalchemy alembic prisma drizzle typeorm sequelize "
        "mongoose ecto peewee gorm pandas numpy polars scipy matplotlib pytorch tensorflow keras langchain pydantic zod "
        "graphql grpc protobuf docker kubernetes terraform ansible nginx gunicorn uvicorn htmx angular jquery duckdb "
        "memcached valkey sidekiq oban dramatiq flyway liquibase dbmate typescript javascript python elixir kotlin "
        "haskell ocaml clojure golang rustc deno laravel symfony streamlit gradio prettier sentry storybook nextest "
        "hypothesis unittest tox nox webpack vuetify quasar mantine antd mui htmx svelte vue react dynamodb cassandra "
        "sveltekit nextjs nuxt"
    )
)


_SWAP_WORDS = Caseless(
    re.compile(r"\b(?:from|replac\w*|swap\w*|instead|not|never|prefer|supersedes|takes over)\b", re.I)
)
_ASSISTANT_SWAP = Caseless(re.compile(r"\b(?:from \S+ to|replac\w* \S+ with|instead of)\b", re.I))
_SWAP_LITERALS = ("from ", "replac", "instead of")


def _may_swap(text: str) -> bool:
    """`_ASSISTANT_SWAP.search(text)`; ASCII text without its literals (lowercased: IGNORECASE folds
    ASCII as lower() does) cannot match, so the pattern runs only on the rest."""
    if text.isascii():
        low = text.lower()
        if not any(literal in low for literal in _SWAP_LITERALS):
            return False
    return _ASSISTANT_SWAP.found(text)


def replacements(sentence: str) -> list[tuple[str, str]]:
    """(old, new) technology names a sentence replaces, one of them at least known to the vocabulary."""
    out: list[tuple[str, str]] = []
    if not _SWAP_WORDS.found(sentence):
        return out
    for rx, order in zip(_REPLACE, _REPLACE_ORDER, strict=True):
        for m in rx.finditer(sentence):
            a, b = _widened(sentence, m, 1), _widened(sentence, m, 2)
            old, new = (a, b) if order == "old-new" else (b, a)
            old_t, new_t = _tech_name(old, curated=False), _tech_name(new, curated=False)
            if old_t is None and new_t is None:
                continue
            unknown = new if new_t is None else old
            marked = _marked(old, sentence) or _marked(new, sentence) or re.match(r"^[A-Z@`]", unknown)
            if (old_t is None or new_t is None) and not marked:
                continue  # one name unknown: taken when the text marks it (backticks, capitals) as a name
            if order == "new-old" and rx is _REPLACE[5] and (old_t is None or new_t is None):
                continue  # "X, not Y" only between two known names
            if old_t is not None and new_t is not None and old_t.name == new_t.name:
                continue
            out.append((old.strip("`'\".,"), new.strip("`'\".,")))
    return out


def _widened(sentence: str, m: re.Match[str], group: int) -> str:
    """A name with the word before it when the two are one technology ("LM Studio", "Spring Boot")."""
    name = m.group(group)
    before = sentence[: m.start(group)].rstrip()
    word = re.search(r"[A-Za-z][\w.+-]*$", before)
    if word is not None and _tech_name(f"{word.group()} {name}", curated=True):
        return f"{word.group()} {name}"
    return name


def _marked(name: str, sentence: str) -> bool:
    return f"`{name.strip('`')}`" in sentence


# "webpack is gone", "npm is banned here": the name first
_DROP_AFTER = re.compile(
    rf"{_NAME}\s+(?:is|are|was|has been|have been)\s+(?:now\s+)?(?:gone|banned|deprecated|removed|dropped|"
    rf"not allowed|no longer used|history)\b",
    re.I,
)


_DROP_AFTER_LITERALS = (
    "gone",
    "banned",
    "deprecated",
    "removed",
    "dropped",
    "not allowed",
    "no longer used",
    "history",
)


# every form of _DROP holds one of these (case-blind): most sentences hold none
_DROP_HINT = re.compile(
    "drop|remov|rid of|stop|no more|ditch|rip|deprecat|mov|migrat|phas|off|abandon|retir|done with|swap|not|no longer"
)


def dropped(sentence: str) -> list[str]:
    out = []
    after = _DROP_AFTER.finditer(sentence) if _may_hold(sentence, _DROP_AFTER_LITERALS) else ()
    low = sentence.lower()
    drops = _DROP.finditer(sentence) if not sentence.isascii() or _DROP_HINT.search(low) else ()
    for m in (*drops, *after):
        tech = _tech_name(m.group(1), curated=not _marked(m.group(1), sentence))
        if tech is not None:
            out.append(m.group(1).strip("`'\".,"))
    return out


_PROBLEM = Caseless(
    re.compile(
        r"\b(?:(?:does|do|did|will|would|can|could|is|are|was)(?:n'?t| not)|doesnt|dont|wont|cant|isnt|cannot)\s+"
        r"(?:seem to\s+|even\s+)?(?:start|work|run|build|compile|load|connect|open|render|boot|install|pass)\b|"
        r"\b(?:is|are|keeps?|still)\s+(?:broken|failing|crashing|hanging|timing out|dying|leaking|erroring)\b|"
        r"\b(?:crashes|segfaults|hangs)\b",
        re.I,
    )
)
_EVERYWHERE = Caseless(re.compile(r"\b(?:everywhere|throughout|across the (?:code ?base|project|repo))\b", re.I))
_WANT = Caseless(re.compile(r"\b(?:want|use|like|prefer|need|write|keep|name|put)\b", re.I))


def is_convention(sentence: str) -> bool:
    if sentence.endswith("?") or _NOT_CONVENTION.found(sentence):
        return False
    if _CONVENTION.found(sentence) or ("ollow" in sentence.lower() and _FOLLOWS_NAME.search(sentence)):
        return True
    # "we use table-driven tests everywhere": a rule of this project; "in every project I want ...": of all
    return (_GLOBAL.found(sentence) or _EVERYWHERE.found(sentence)) and _WANT.found(sentence)


def is_global(sentence: str) -> bool:
    return _GLOBAL.found(sentence)


def versions(text: str) -> list[tuple[vocabulary.Tech, str]]:
    out = []
    for m in _VERSIONED.finditer(text):
        tech = vocabulary.lookup(m.group(1)) or vocabulary.lookup(m.group(1).rstrip(".js"))
        if tech is not None:
            out.append((tech, m.group(2)))
    return out


# -- manifests -----------------------------------------------------------------------------------


def _body(text: str) -> str:
    return re.sub(r"^\s*\d+[→\t|:]\s?", "", text, flags=re.MULTILINE)


Found = tuple[list[str], list[tuple[str, str]]]  # (dependency or technology names, (technology, version))
_SIMPLE_VERSIONS = {
    "go.mod": ("Go", re.compile(r"^go\s+(\d+\.\d+)", re.MULTILINE)),
    "mix.exs": ("Elixir", re.compile(r"elixir:\s*\"[^\d]*(\d+\.\d+)")),
    "Gemfile": ("Ruby", re.compile(r"^ruby\s+['\"][^\d]*(\d+\.\d+)", re.MULTILINE)),
    "Cargo.toml": ("Rust", re.compile(r"^rust-version\s*=\s*[\"'](\d+\.\d+)", re.MULTILINE)),
}
_COMPOSE = frozenset({"docker-compose.yml", "docker-compose.yaml", "compose.yaml", "compose.yml"})


def _package_json(body: str) -> Found:
    deps: list[str] = []
    found: list[tuple[str, str]] = []
    try:
        data = json.loads(body)
    except ValueError:
        return deps, found
    if not isinstance(data, dict):
        return deps, found
    engines = data.get("engines")
    if isinstance(engines, dict) and isinstance(engines.get("node"), str):
        v = re.search(r"(\d+(?:\.\d+)?)", engines["node"])
        if v:
            found.append(("Node.js", v.group(1)))
    manager = data.get("packageManager")
    if isinstance(manager, str) and "@" in manager:
        deps.append(manager.split("@", 1)[0])
    scripts = data.get("scripts")
    for script in scripts.values() if isinstance(scripts, dict) else ():
        first = script.split()[0] if isinstance(script, str) and script.split() else ""
        if first and vocabulary.known(first, curated=True):
            deps.append(first)
    return deps, found


def _pyproject(body: str) -> Found:
    found: list[tuple[str, str]] = []
    m = re.search(r"requires-python\s*=\s*[\"'][^\d]*(\d+\.\d+)", body)
    if m:
        found.append(("Python", m.group(1)))
    deps = re.findall(r"^\[tool\.([\w-]+)", body, re.MULTILINE)
    block = re.search(
        r"(?:optional-dependencies|dependency-groups|dev-dependencies)[^\n]*\n(.*?)(?:^\[|\Z)",
        body,
        re.DOTALL | re.MULTILINE,
    )
    if block:
        deps += re.findall(r"[\"']([A-Za-z0-9][\w.-]*)", block.group(1))
    if "[tool.poetry" in body:
        deps.append("Poetry")
        deps += re.findall(r"^([A-Za-z0-9][\w.-]*)\s*=\s*[\"'{]", body, re.MULTILINE)
    return deps, found


def _version_file(base: str, body: str) -> Found:
    found: list[tuple[str, str]] = []
    for m in re.finditer(r"^(?:(python|nodejs|node|elixir|erlang|ruby|golang)\s+)?v?(\d+\.\d+)", body, re.MULTILINE):
        lang = {"nodejs": "Node.js", "node": "Node.js", "golang": "Go"}.get(m.group(1) or "", m.group(1) or "")
        lang = lang or ("Python" if base == ".python-version" else "Node.js")
        found.append((lang.title() if lang.islower() else lang, m.group(2)))
    return [], found


def _images(body: str) -> Found:
    deps: list[str] = []
    found: list[tuple[str, str]] = []
    for m in _IMAGE.finditer(body):
        tech = _IMAGE_TECH.get(m.group(1).lower())
        if tech:
            deps.append(tech)
            if m.group(2) and tech in VERSIONED_LANGUAGES | {"PostgreSQL", "MySQL", "Redis"}:
                found.append((tech, m.group(2)))
    return deps, found


def manifest_facts(path: str, text: str) -> Found:
    """(dependency names, (technology, version) pairs) a manifest names."""
    from .coding import manifest_packages  # the activity rules' parser: one reading of a manifest

    base = posixpath.basename(path)
    body = _body(text)
    deps: list[str] = []
    found: list[tuple[str, str]] = []
    if base.startswith("requirements") and base.endswith(".txt"):
        deps = manifest_packages("requirements.txt", text)
    elif base in ("package.json", "pyproject.toml", "mix.exs", "go.mod", "Cargo.toml", "Gemfile"):
        deps = manifest_packages(base, text)
    more: Found = ([], [])
    if base == "package.json":
        more = _package_json(body)
    elif base == "pyproject.toml":
        more = _pyproject(body)
    elif base in _SIMPLE_VERSIONS:
        language, rx = _SIMPLE_VERSIONS[base]
        m = rx.search(body)
        more = ([], [(language, m.group(1))] if m else [])
    elif base in (".python-version", ".nvmrc", ".tool-versions"):
        more = _version_file(base, body)
    elif base == "Dockerfile" or base.startswith("Dockerfile.") or base in _COMPOSE:
        more = _images(body)
    return deps + more[0], found + more[1]


_SCRIPT_KINDS = (
    ("test", re.compile(r"^test$")),
    ("build", re.compile(r"^build$")),
    ("run", re.compile(r"^(?:dev|start|serve)$")),
    ("lint", re.compile(r"^lint$")),
    ("format", re.compile(r"^(?:format|fmt|format:write|prettier)$")),
    ("typecheck", re.compile(r"^(?:type-?check|typecheck|tsc|types)$")),
    ("migrate", re.compile(r"^(?:migrate|db[:-]migrate)$")),
    ("deploy", re.compile(r"^deploy$")),
)


def script_commands(text: str) -> list[tuple[str, str]]:
    """(kind, command) a package.json's scripts give as the way: `npm test`, `npm run build`."""
    try:
        data = json.loads(_body(text))
    except ValueError:
        return []
    scripts = data.get("scripts") if isinstance(data, dict) else None
    if not isinstance(scripts, dict):
        return []
    manager = "npm"
    if isinstance(data.get("packageManager"), str):
        manager = data["packageManager"].split("@", 1)[0] or "npm"
    out = []
    for kind, rx in _SCRIPT_KINDS:
        name = next((n for n in scripts if isinstance(n, str) and rx.match(n)), None)
        if name is not None:
            command = f"{manager} test" if name == "test" else f"{manager} run {name}"
            out.append((kind, command))
    return out


def is_manifest(path: str) -> bool:
    base = posixpath.basename(path)
    return (
        base in ("package.json", "pyproject.toml", "Cargo.toml", "go.mod", "mix.exs", "Gemfile", ".python-version",
                 ".nvmrc", ".tool-versions", "docker-compose.yml", "docker-compose.yaml", "compose.yaml", "compose.yml")
        or (base.startswith("requirements") and base.endswith(".txt"))
        or base == "Dockerfile" or base.startswith("Dockerfile.")
    )  # fmt: skip


def imports(path: str, text: str) -> list[str]:
    """Third-party names a piece of code imports (the standard libraries left out)."""
    ext = posixpath.splitext(path)[1].lower()
    out: list[str] = []
    if ext in (".py", ".pyi"):
        for m in _PY_IMPORT.finditer(text):
            name = m.group(1) or m.group(2)
            if name and name not in _PY_STDLIB:
                out.append(name)
    elif ext in (".js", ".jsx", ".ts", ".tsx", ".mjs", ".cjs", ".vue", ".svelte", ".astro"):
        for m in _JS_IMPORT.finditer(text):
            spec = m.group(1)
            if spec.startswith((".", "/", "~", "#", "$")) or spec.startswith("node:"):
                continue
            parts = spec.split("/")
            name = "/".join(parts[:2]) if spec.startswith("@") else parts[0]
            if name not in _NODE_BUILTINS:
                out.append(name)
    elif ext == ".go":
        for m in _GO_IMPORT.finditer(text):
            parts = m.group(1).split("/")
            out.append("/".join(parts[:3]))
    elif ext == ".rs":
        out += [n for n in _RUST_USE.findall(text) if n not in ("std", "core", "alloc", "crate", "super", "self")]
    elif ext in (".ex", ".exs"):
        out += [n for n in _EX_USE.findall(text) if n in ("Ecto", "Phoenix", "Oban", "Absinthe", "Tesla", "Req")]
    return list(dict.fromkeys(out))


def env_names(text: str, *, env_file: bool = False) -> list[str]:
    found = []
    for m in _ENV_CODE.finditer(text):
        name = next((g for g in m.groups() if g), "")
        if name:
            found.append(name)
    if env_file:
        found += _ENV_FILE.findall(text)
    return [n for n in dict.fromkeys(found) if n not in _NOT_ENV and not n.startswith(("HTTP_", "E_"))]


def routes(text: str) -> list[str]:
    out = []
    for m in _ROUTE.finditer(text):
        groups = m.groups()
        method = next((g for g in (groups[0], groups[1], groups[3], groups[5]) if g), "")
        path = next((g for g in (groups[2], groups[4], groups[6]) if g), "")
        if not path:
            continue
        method = method.upper()
        if method in ("ROUTE", "HANDLEFUNC", "HANDLE", "ALL", "REQUEST", "RESOURCES", "RESOURCE", "SCOPE", "FORWARD"):
            method = "ANY"
        out.append(f"{method} {path}")
    return list(dict.fromkeys(out))


def exposed_ports(path: str, text: str) -> list[str]:
    base = posixpath.basename(path)
    out = []
    for m in _PORT_CODE.finditer(text):
        if m.group(2) and not (base.startswith(("docker-compose", "compose"))):
            continue
        port = next((g for g in (m.group(1), m.group(2), m.group(4), m.group(5), m.group(6)) if g), "")
        if port and 1 <= int(port) <= 65535:
            out.append(f":{port}")
    return list(dict.fromkeys(out))


# technologies that are one language's only: naming one names the language (JavaScript and
# TypeScript share theirs, and Spring serves Java and Kotlin: those say nothing)
IMPLIED_LANGUAGE = {
    name: language
    for language, names in (
        ("Python", "Django Flask FastAPI Starlette Litestar Sanic Tornado Pyramid Bottle aiohttp Quart SQLAlchemy "
                   "SQLModel Peewee Alembic pytest Celery Poetry Pipenv PDM uv Ruff mypy Black Pydantic Streamlit"),
        ("Ruby", "Ruby_on_Rails Sinatra Hanami RSpec Minitest Sidekiq Bundler RuboCop"),
        ("Elixir", "Phoenix Ecto Oban ExUnit Mix LiveView"),
        ("Go", "Gin Echo Fiber chi GORM sqlc golangci-lint Go_modules"),
        ("Rust", "Axum Actix_Web Rocket Diesel SeaORM Cargo nextest"),
        ("PHP", "Laravel Symfony Composer PHPUnit Pest Eloquent Doctrine"),
        ("Kotlin", "Ktor"),
    )
    for name in (n.replace("_", " ") for n in names.split())
}  # fmt: skip


# -- the records --------------------------------------------------------------------------------


@dataclass(slots=True)
class Knowledge:
    """One batch's knowledge, gathered turn by turn, recorded at the end (latest sighting wins)."""

    b: RecordBuilder
    subject: str
    pending: dict[tuple[str, str, str, str], tuple[Provenance, float]] = field(default_factory=dict)
    user: str = ""
    decided: set[str] = field(default_factory=set)  # nodes whose text gave a replacement or a drop
    told: bool = False  # the current turn's messages gave a fact (its work event need not retell them)

    # entity helpers
    def tech(self, tech: vocabulary.Tech, prov: Provenance) -> str:
        return self.b.entity(
            "tech", tech.name, prov, attrs={"category": tech.category}, key=f"tech:{tech.name.lower()}"
        )

    def fact(self, relation: str, target: str, prov: Provenance, confidence: float, *, subject: str = "",
             scope: str = "") -> str:  # fmt: skip
        key = (subject or self.subject, relation, target, scope or self.b.scope)
        old = self.pending.get(key)
        if old is None or (prov.event_time, confidence) >= (old[0].event_time, old[1]):
            self.pending[key] = (prov, max(confidence, old[1]) if old else confidence)
        return target

    def stack(self, tech: vocabulary.Tech, prov: Provenance, confidence: float, *, slot: bool = True,
              subject: str = "", scope: str = "") -> str:  # fmt: skip
        eid = self.tech(tech, prov)
        self.fact(USES, eid, prov, confidence, subject=subject, scope=scope)
        if slot and tech.slot:
            self.fact(tech.slot, eid, prov, confidence, subject=subject, scope=scope)
        implied = IMPLIED_LANGUAGE.get(tech.name)
        language = vocabulary.lookup(implied) if implied else None
        if language is not None:  # "a Flask app" is a Python project
            self.stack(language, prov, min(confidence, 0.7), slot=False, subject=subject, scope=scope)
        return eid

    def version(self, tech: vocabulary.Tech, number: str, prov: Provenance, confidence: float) -> None:
        self.stack(tech, prov, confidence, slot=False)
        name = f"{tech.name} {number}"
        eid = self.b.entity("tech", name, prov, attrs={"category": tech.category, "version": number},
                            key=f"tech:{name.lower()}")  # fmt: skip
        relation = re.sub(r"[^a-z0-9]+", "-", tech.name.lower()).strip("-") + "-version"
        self.fact(relation, eid, prov, confidence)

    def drop(self, tech: vocabulary.Tech, prov: Provenance, confidence: float = 0.9) -> str:
        eid = self.tech(tech, prov)
        self.fact(DROPPED, eid, prov, confidence)
        return eid

    def person(self, prov: Provenance) -> str:
        if not self.user:
            self.user = self.b.entity("person", "user", prov, key="user")
        return self.user

    def flush(self) -> None:
        for (subject, relation, target, scope), (prov, confidence) in sorted(
            self.pending.items(), key=lambda item: (item[1][0].event_time, item[0])
        ):
            self.b.edge(subject, relation, target, prov, confidence, scope=scope)
        self.pending.clear()


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
        p = prov(action.node)
        if action.kind in ("edit", "create", "patch"):
            text = _written_text(action)
            for path in action.paths:
                _code_facts(k, path, text, p, languages_seen)
                if posixpath.basename(path) in INSTRUCTION_FILES:
                    _instructions(k, text, p)
        elif action.kind == "read" and not action.failed:
            _read_facts(k, action, p, languages_seen)
        if action.kind in ("run", "test", "install", "git", "list", "read", "search", "edit") and action.command:
            _command_facts(k, action, p, facts)
    before = len(k.pending)
    for node in turn.nodes:
        if node.role == "user" and node.content and not node.is_tool:
            if _WRITE_INSTRUCTIONS.found(node.content[:1000]):
                continue  # a request to write an instruction file (see above)
            _text_facts(k, node.content, prov(node), from_user=True)
            _layout_facts(k, node.content, prov(node), from_user=True)
        elif node.role == "assistant" and node.content and not node.is_tool:
            _text_facts(k, node.content, prov(node), from_user=False)
            _layout_facts(k, node.content, prov(node), from_user=False)
    k.told = len(k.pending) > before or any(n.id in k.decided for n in turn.nodes)
    return k.decided


# the files a project keeps its instructions for agents in: what they state is the user's word
# (an agent's `/init` writes one from the code; the user edits it)
INSTRUCTION_FILES = frozenset(
    {"CLAUDE.md", "AGENTS.md", "AGENT.md", "GEMINI.md", "QWEN.md", "CRUSH.md", "OpenCode.md", "opencode.md",
     "CONVENTIONS.md", ".cursorrules", ".windsurfrules", ".clinerules", ".roorules", ".goosehints",
     "copilot-instructions.md", "CLAUDE.local.md"}
)  # fmt: skip
# "Please analyze this codebase and create a CLAUDE.md file containing: 1. Build/lint/test
# commands ... 2. Code style guidelines ..." (an agent's /init prompt, or the user's own): it
# says what the file should cover, not how the project works; what is written is read from the file
_WRITE_INSTRUCTIONS = Caseless(
    re.compile(
        r"\b(?:create|write|generate|produce|draft|update|improve|init\w*)\b[^\n]{0,80}?(?<![\w.-])(?:"
        + "|".join(re.escape(name.lower()) for name in sorted(INSTRUCTION_FILES, key=len, reverse=True))
        + r")(?![\w.-])",
        re.IGNORECASE,
    )
)
# what opmem itself keeps in such a file (`opmem core --write`, `opmem connect`): its own output, never read back
_OPMEM_BLOCK = re.compile(r"<!-- opmem:[\w:-]*begin.*?(?:<!-- opmem:[\w:-]*end -->|\Z)", re.DOTALL)


def _instructions(k: Knowledge, text: str, prov: Provenance) -> None:
    """An instruction file's stack, commands, conventions and layout, as if the user said them."""
    text = _OPMEM_BLOCK.sub("\n", text[:40_000])
    if "opmem memory · project:" in text:  # a core block pasted in by hand: opmem's words, not the user's
        text = text.split("opmem memory · project:", 1)[0]
    lines = [line for line in text.splitlines() if not line.lstrip().startswith("<")]  # tags, comments
    body = "\n".join(lines)
    if body.strip():
        _text_facts(k, body, prov, from_user=True)
        _layout_facts(k, body, prov, from_user=False)


def _read_facts(k: Knowledge, action: ToolAction, prov: Provenance, languages_seen: set[str]) -> None:
    """What a file the agent read says: a manifest's stack, a lockfile's manager, an instruction file's rules."""
    for path in action.paths:
        base = posixpath.basename(path)
        if base in INSTRUCTION_FILES:
            _instructions(k, _body(action.node.content or ""), prov)
        if is_manifest(path):
            _manifest(k, path, action.node.content or "", prov, 0.85)
        elif base in LOCKFILES:
            _named(k, LOCKFILES[base], prov, 0.8)
        _language(k, path, prov, 0.75, languages_seen)


def _named(k: Knowledge, name: str, prov: Provenance, confidence: float, *, slot: bool = True) -> str:
    tech = vocabulary.lookup(name)
    if tech is None:
        return ""
    return k.stack(tech, prov, confidence, slot=slot)


def _language(k: Knowledge, path: str, prov: Provenance, confidence: float, seen: set[str]) -> None:
    ext = posixpath.splitext(path)[1].lower()
    language = EXTENSION_LANGUAGES.get(ext)
    if language and language not in seen:
        seen.add(language)
        _named(k, language, prov, confidence)


def _manifest(k: Knowledge, path: str, text: str, prov: Provenance, confidence: float) -> None:
    deps, found_versions = manifest_facts(path, text)
    base = posixpath.basename(path)
    if base in LOCKFILES:
        _named(k, LOCKFILES[base], prov, confidence - 0.05, slot=base not in ("package.json", "requirements.txt"))
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


def _code_facts(k: Knowledge, path: str, text: str, prov: Provenance, seen: set[str]) -> None:
    base = posixpath.basename(path)
    _language(k, path, prov, 0.85, seen)
    if is_manifest(path):
        _manifest(k, path, text, prov, 0.9)
    elif base in LOCKFILES:
        _named(k, LOCKFILES[base], prov, 0.85)
    if not text:
        return
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


def _command_facts(k: Knowledge, action: ToolAction, prov: Provenance, facts: TurnFacts) -> None:
    for argv in split_commands(action.command):
        line = normalize_command(argv)
        if not line or line.split(" ", 1)[0] in ("cd", "echo", "cat", "ls", "git", "grep", "rg", "sed", "tail", "head"):
            continue
        program = line.split(" ", 1)[0]
        if action.program and action.program.split(" ", 1)[0] not in line.split():
            continue  # the action is another simple command of the same line
        tech_name = PROGRAM_TECH.get(program) or program
        script = _SCRIPT_TECH.get(_script_of(line), "")
        if script and not action.failed:  # `mix phx.server` is Phoenix as well as Elixir
            _named(k, script, prov, 0.8, slot=False)
        tech = vocabulary.lookup(tech_name)
        failed = action.failed or ("failed" in (facts.tests or "") and action.kind == "test")
        if program in BUILD_TOOLS and not failed:
            _named(k, BUILD_TOOLS[program], prov, 0.8, slot=False)
        if tech is not None and tech.curated and not failed:
            fills = tech.category in ("test-framework", "e2e-framework", "linter", "formatter", "type-checker")
            k.stack(tech, prov, 0.8, slot=fills and program not in PROGRAM_TECH)
        if action.kind == "install":
            if not failed:
                _installed(k, program, action.packages, prov)
            continue
        kind = command_kind(line, action.kind)
        if kind:
            _checked(k, kind, line, action, prov, facts, failed)
        break


# what a script or task names (`python manage.py migrate`, `mix phx.server`, `php artisan migrate`)
_SCRIPT_TECH = {"manage.py": "Django", "phx": "Phoenix", "artisan": "Laravel", "ecto": "Ecto"}
_SCRIPT = re.compile(r"\b(manage\.py|artisan)\b|\bmix (phx|ecto)\.")


def _script_of(line: str) -> str:
    found = _SCRIPT.search(line)
    return (found.group(1) or found.group(2)) if found else ""


def _installed(k: Knowledge, program: str, packages: Sequence[str], prov: Provenance) -> None:
    manager = vocabulary.lookup(INSTALLERS.get(program, ""))
    if manager is not None:
        k.stack(manager, prov, 0.85, slot=program in PROJECT_INSTALLERS)
    for package in packages:
        tech = vocabulary.lookup(package)
        if tech is not None and tech.curated:
            k.stack(tech, prov, 0.85)


def _checked(
    k: Knowledge, kind: str, line: str, action: ToolAction, prov: Provenance, facts: TurnFacts, failed: bool
) -> None:
    """A command of a kind that ran: the way to do it (when it worked, or the tests ran), and its outcome."""
    b = k.b
    if not failed:
        k.fact(f"{kind}-command", b.entity("command", line, prov), prov, 0.9)
    elif kind == "test" and facts.tests:  # the tests ran (some failed): still the way to test
        k.fact(f"{kind}-command", b.entity("command", line, prov), prov, 0.8)
    if kind not in STATUS_KINDS:
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


def _text_facts(k: Knowledge, text: str, prov: Provenance, *, from_user: bool) -> None:
    if from_user and text.lstrip().startswith("<"):
        return  # injected context (<environment_context>, <system-reminder>, ...)
    if not from_user and not _may_swap(text[:20_000]):
        return  # an assistant's text gives only replacements it reports, and names none here
    b = k.b
    pasted = from_user and _pasted_output(text[:20_000])  # its "make sure ..." is the tool's advice, not the user's
    for sentence in sentences(text[:20_000]):
        question = sentence.endswith("?")
        swaps = [] if question else replacements(sentence)
        for old, new in swaps:
            _replace(k, old, new, prov, from_user)
        if from_user:
            _owned(k, sentence, prov)  # "why does the React component re-render?": asked, still the stack
        if not from_user or question:
            continue
        replaced = bool(swaps) or _switches(k, sentence, prov) or _drops(k, sentence, prov)  # a decision
        chosen = _CHOOSE.search(sentence)
        stated = chosen is not None  # the sentence says what is used: its versions are the stack's
        if chosen and not replaced:
            _chosen(k, sentence, chosen.start(), prov)
        elif not replaced:
            stated = _listed(k, sentence, prov)
        _said_commands(k, sentence, prov)
        if not replaced:
            _tool_for(k, sentence, prov)
        for tech, number in versions(sentence):
            if tech.name in VERSIONED_LANGUAGES or stated:
                k.version(tech, number, prov, 0.9)
        if is_convention(sentence) and not pasted and (not replaced or is_global(sentence)):
            said = _EMPHASIS.sub("", sentence).strip()  # "**Error Handling**: Always ..." (markdown bold)
            name = said if len(said) <= 160 else said[:159].rstrip() + "…"
            entity = b.entity("convention", name, prov, key=f"convention:{name.lower()}")
            if is_global(sentence):
                k.fact(CONVENTION, entity, prov, 0.85, subject=k.person(prov), scope=GLOBAL)
            else:
                k.fact(CONVENTION, entity, prov, 0.85)
            k.decided.add(prov.node_ids[0])
        if _PROBLEM.found(sentence) and not replaced and len(sentence) <= 200:
            name = sentence if len(sentence) <= 120 else sentence[:119].rstrip() + "…"
            k.fact(PROBLEM, b.entity("problem", name, prov, key=f"problem:{name.lower()}"), prov, 0.75)
        _said_env(k, sentence, prov)
        _said_endpoints(k, sentence, prov)


# markdown emphasis around a convention's words ("**Error Handling**: Always ...")
_EMPHASIS = re.compile(r"\*\*|(?<![\w*])\*(?=\S)|(?<=\S)\*(?![\w*])")


# a line of a stack trace or a log: "at foo (app.js:12:3)", "loadIcon @ main.js:23", 'File "x.py",
# line 3', "Traceback (most recent call last):", "    at com.x.Y.z(Y.java:42)"
_TRACE_LINE = re.compile(
    r"^\s*(?:at\s+\S.*[:(]\d+|\S.*\s@\s\S+:\d+|File \".+\", line \d+|Traceback \(most recent call last\)"
    r"|\(anonymous\)|\[?\d{4}-\d\d-\d\d[T ]\d\d:\d\d|(?:ERROR|WARN(?:ING)?|INFO|DEBUG)\b)"
)


def _pasted_output(text: str) -> bool:
    """A message that is mostly a pasted trace or log (three lines of one at least)."""
    if text.count("\n") < 3:
        return False
    return sum(1 for line in text.splitlines()[:400] if _TRACE_LINE.match(line)) >= 3


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


def _chosen(k: Knowledge, sentence: str, start: int, prov: Provenance) -> None:
    """The technologies a sentence says are used: up to four after each cue (a list after
    "with" runs on into unrelated words), less those it says are not ("use pytest fixtures, no
    unittest classes"); of two for one slot the first named takes it."""
    named: dict[str, vocabulary.Tech] = {}
    for cue in _CHOOSE.finditer(sentence, start):
        for tech in mentioned_techs(sentence[cue.start() :])[:4]:
            named.setdefault(tech.name, tech)
    for m in _DIRECT.finditer(sentence, start):
        word = m.group(1)
        tech = _tech_name(word, curated=True) if word in _COMMON_WORDS else _chosen_library(word, sentence)
        if tech is not None:
            named.setdefault(tech.name, tech)
    for m in _NEGATED.finditer(sentence):
        for tech in mentioned_techs(m.group(1)):
            named.pop(tech.name, None)
    slots: set[str] = set()
    for tech in named.values():
        eid = k.stack(tech, prov, 0.9, slot=tech.slot not in slots)
        slots.add(tech.slot)
        if not tech.curated:  # a library the user picked: the brief's, unlike every dependency a manifest lists
            k.fact(CHOSE, eid, prov, 0.9)


# what "use X for ..." may name that is no package
_NOT_A_PACKAGE = frozenset(
    _words(
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
    marked = _marked(name, sentence) or bool(re.search(r"[a-z][-_][a-z]|[a-z]\d", name))
    if not (marked or name[0].isupper()):
        return None
    tech = _tech_name(name, curated=False)
    if tech is not None:
        return tech
    return vocabulary.Tech(name, "library") if marked else None


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


def _owned(k: Knowledge, sentence: str, prov: Provenance) -> None:
    if not _may_hold(sentence, ("the ", "our ", "my ", "this ", "your ")):
        return
    for m in _OWNED.finditer(sentence):
        for tech in mentioned_techs(m.group(1))[:1]:
            k.stack(tech, prov, 0.8, slot=False)  # a mention: it fills no slot another holds


_NOT_A_LIST = Caseless(
    re.compile(r"\b(?:or|vs\.?|versus|compare\w*|comparison|difference|alternatives?|between|which|whether)\b", re.I)
)
_LIST_WORD = re.compile(r"[A-Za-z@][\w.+#/@-]*")


def _listed(k: Knowledge, sentence: str, prov: Provenance) -> bool:
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
_COMMANDISH = re.compile(r"^(?:\./)?[a-z][\w.+/-]*(?: |$)")
_NOT_THE_WAY = Caseless(re.compile(r"\b(?:don'?t|do not|never|not|no longer|instead of|stop|avoid|without)\b", re.I))


def _said_commands(k: Knowledge, sentence: str, prov: Provenance) -> None:
    """Commands the user gives as the way ("run the tests with `make test`", "we deploy with
    `fly deploy`"): the kind the command is, or else the one kind the sentence names. A command
    the sentence says not to use is not the way."""
    if "`" not in sentence:
        return
    cues = [kind for kind, rx in _SAID_KINDS if rx.search(_BACKTICK.sub(" ", sentence))]
    last = 0
    for m in _BACKTICK.finditer(sentence):
        before, last = sentence[last : m.start()], m.end()
        snippet = m.group(1).strip()
        if not _COMMANDISH.match(snippet) or _NOT_THE_WAY.found(before):
            continue
        for argv in split_commands(snippet):
            simple = classify(argv)
            if simple is None or simple.kind not in ("run", "test"):
                break
            line = normalize_command(argv)
            kind = command_kind(line, simple.kind)
            if not kind and len(cues) == 1 and (" " in line or "/" in line):
                kind = cues[0]  # `make ci` "to run the tests"; a lone word (`httpx`) is a name, not a command
            if kind:
                k.fact(f"{kind}-command", k.b.entity("command", line, prov), prov, 0.85)
                program = line.split(" ", 1)[0]
                tech = vocabulary.lookup(PROGRAM_TECH.get(program) or program)
                if tech is not None and tech.curated:
                    k.stack(tech, prov, 0.8, slot=tech.category in _TOOL_CATEGORIES and program not in PROGRAM_TECH)
            break


_TOOL_CATEGORIES = ("test-framework", "e2e-framework", "linter", "formatter", "type-checker")
# "we format with black", "lint using ruff", "tests run with jest": a common word (black, standard,
# jest) is the tool when the sentence says it is what that kind of check is done with
_TOOL_FOR = Caseless(
    re.compile(
        r"\b(format|lint|type[- ]?check|test)\w*\s+(?:\w+\s+){0,2}?(?:with|using|via|through|by)\s+`?([\w.+-]+)", re.I
    )
)
_TOOL_FOR_KIND = {"format": "formatter", "lint": "linter", "test": "test-framework"}


def _tool_for(k: Knowledge, sentence: str, prov: Provenance) -> None:
    if not _may_hold(sentence, ("format", "lint", "check", "test")):
        return
    for m in _TOOL_FOR.finditer(sentence):
        kind = m.group(1).lower()
        category = _TOOL_FOR_KIND.get(kind, "type-checker")
        tech = _tech_name(m.group(2), curated=False)
        if tech is not None and (tech.category == category or (kind == "test" and tech.category == "e2e-framework")):
            k.stack(tech, prov, 0.85)


_ENDPOINT_WORD = Caseless(
    re.compile(r"\b(?:endpoints?|routes?|exposes?|serves?|api|get|post|put|patch|delete)\b", re.I)
)
_SAID_ROUTE = re.compile(
    r"(?:\b(GET|POST|PUT|PATCH|DELETE)\s+)?`?(?<![\w/.~@-])(/[a-z][\w{}:-]*(?:/[\w{}:-]+)*)/?`?(?![\w/.])"
)


def _said_endpoints(k: Knowledge, sentence: str, prov: Provenance) -> None:
    """Endpoints the user names ("it exposes /healthz and GET /api/v1/orders"); a file path (one
    with a dot in it, or the session's own root) is not one."""
    if "/" not in sentence or not _ENDPOINT_WORD.found(sentence):
        return
    for m in _SAID_ROUTE.finditer(sentence):
        path = m.group(2)
        if path.split("/")[1] in _NOT_ROUTE_ROOTS:
            continue
        name = f"{m.group(1)} {path}" if m.group(1) else path
        k.fact(ENDPOINT, k.b.entity("endpoint", name, prov), prov, 0.8)


_NOT_ROUTE_ROOTS = frozenset({"home", "users", "usr", "etc", "tmp", "var", "opt", "bin", "dev", "proc", "mnt", "srv"})


def _said_env(k: Knowledge, sentence: str, prov: Provenance) -> None:
    """Environment variable names the user names (`set DATABASE_URL in .env`), never a value."""
    if not _ENV_WORD.found(sentence):
        return
    for name in _ENV_NAME.findall(sentence):
        if name not in _NOT_ENV and (f"`{name}`" in sentence or "env" in sentence.lower()):
            k.fact(ENV_VAR, k.b.entity("env-var", name, prov), prov, 0.8)


def _replace(k: Knowledge, old: str, new: str, prov: Provenance, from_user: bool) -> None:
    """`new` takes `old`'s place: old dropped (reconcile retires its stack edges), new used, a decision."""
    new_t = _tech_name(new, curated=False) or _unknown(new, _tech_name(old, curated=False))
    old_t = _tech_name(old, curated=False) or _unknown(old, new_t)
    if new_t is None or old_t is None or (not from_user and not (old_t.curated and new_t.curated)):
        return
    old_id = k.drop(old_t, prov, 0.9 if from_user else 0.8)
    new_id = k.stack(new_t, prov, 0.95 if from_user else 0.85)
    k.decided.add(prov.node_ids[0])
    what = f" as {new_t.slot.replace('-', ' ')}" if new_t.slot else ""
    label = "Decided" if from_user else "Changed"
    k.b.event(
        f"{label}: {new_t.name} replaces {old_t.name}{what}",
        "decision",
        0.85 if from_user else 0.7,
        prov,
        [k.subject, old_id, new_id],
        key=f"replace:{prov.session_id}:{prov.node_ids[0]}:{old_t.name}",
    )


_SWITCH_TO = Caseless(
    re.compile(
        r"\b(?:switch(?:ing|ed)?|mov(?:e|ing|ed)|migrat(?:e|ing|ed)|port(?:ing|ed)?)\s+(?:the |our |it |everything )?"
        r"(?:(\w+) )?(?:over )?to\s+`?([\w.+#/@-]+?)`?(?=[\s,.;:!]|$)",
        re.I,
    )
)
# what a switch of a kind a project may hold several of must be about to make it the one:
# "migrate the database to X", "move our jobs over to Y", "switch to Z"; not "move the analytics to X"
_SWITCH_OBJECTS = {
    "database": frozenset({"database", "databases", "db", "datastore", "storage", "persistence", "data"}),
    "cache": frozenset({"cache", "caching", "caches"}),
    "queue": frozenset({"queue", "queues", "jobs", "broker", "tasks", "workers", "messaging"}),
}


def _may_hold(text: str, literals: Sequence[str]) -> bool:
    """False only when a case-blind pattern needing one of these (lower-case, ASCII) literals
    cannot match: ASCII text lacking all of them. Other text is always searched (IGNORECASE
    folds the long s and the Kelvin sign to s and k, which lower() does not)."""
    if not text.isascii():
        return True
    low = text.lower()
    return any(literal in low for literal in literals)


def _switches(k: Knowledge, sentence: str, prov: Provenance) -> bool:
    """A switch to one of a kind ("switching the migrations to goose, golang-migrate keeps
    breaking"): the one other of its kind the sentence names is what it replaces. A switch to a
    database, cache or queue that names none ("we migrated the database to PostgreSQL") fills that
    kind's slot, so reconcile retires the others of the kind the project used. True when it replaced one."""
    if not _may_hold(sentence, ("to",)):
        return False
    for m in _SWITCH_TO.finditer(sentence):
        new = _tech_name(m.group(2), curated=False)
        if new is None:
            continue
        switch_slot = vocabulary.SWITCH_SLOTS.get(new.category, "")
        if not new.slot and not switch_slot:
            continue
        others = [t for t in mentioned_techs(sentence) if t.category == new.category and t.name != new.name]
        if len(others) == 1:
            _replace(k, others[0].name, new.name, prov, True)
            return True
        obj = (m.group(1) or "").lower()
        if switch_slot and not others and (not obj or obj in _SWITCH_OBJECTS[new.category]):
            eid = k.stack(new, prov, 0.9, slot=False)
            k.fact(switch_slot, eid, prov, 0.9)
            k.decided.add(prov.node_ids[0])
            k.b.event(
                f"Decided: {new.name} as the {new.category}",
                "decision",
                0.8,
                prov,
                [k.subject, eid],
                key=f"switch:{prov.session_id}:{prov.node_ids[0]}:{new.name}",
            )
            return True
    return False


def _drops(k: Knowledge, sentence: str, prov: Provenance) -> bool:
    """Technologies the sentence drops; True when one was replaced by another it names."""
    replaced = False
    names = dropped(sentence)
    gone = {t.name for t in (_tech_name(n, curated=False) for n in names) if t is not None}
    others = [t for t in mentioned_techs(sentence) if t.name not in gone] if names else []
    for name in names:
        tech = _tech_name(name, curated=False)
        taking = [t for t in others if tech is not None and tech.category and t.category == tech.category]
        if tech is not None and len(taking) == 1:
            # "stop using requests, use httpx": the one other of its kind named takes its place
            _replace(k, name, taking[0].name, prov, True)
            replaced = True
        elif tech is not None:
            eid = k.drop(tech, prov)
            k.decided.add(prov.node_ids[0])
            k.b.event(
                f"Decided: drop {tech.name}",
                "decision",
                0.8,
                prov,
                [k.subject, eid],
                key=f"drop:{prov.session_id}:{prov.node_ids[0]}:{tech.name}",
            )
    return replaced


def _unknown(name: str, other: vocabulary.Tech | None) -> vocabulary.Tech | None:
    """A name the vocabulary lacks, taken in the category of what it replaces (or is replaced by)."""
    clean = name.strip("`'\".,;:")
    if not clean or other is None or not re.fullmatch(r"[\w.+#/@-]{2,40}", clean):
        return None
    return vocabulary.Tech(clean, other.category, "")


def extension_languages(paths: Iterable[str]) -> list[str]:
    return list(
        dict.fromkeys(
            EXTENSION_LANGUAGES[e] for p in paths if (e := posixpath.splitext(p)[1].lower()) in EXTENSION_LANGUAGES
        )
    )


# -- layout and progress -------------------------------------------------------------------------
# What a message states about the project's shape ("the API is in services/api", "we use a
# hexagonal layout") and its progress ("done: X", "TODO: Y", a "- [x]" checklist), user or agent.

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
TASKS_PER_MESSAGE = 8
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
    body = _CODE_BLOCK.sub(" ", text[:20_000])
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


def progress_items(text: str, *, from_user: bool = False) -> list[tuple[bool, str]]:
    """(done?, task) a text states: `Done: X` / `TODO: Y` lines (or such a heading over a list)
    and markdown checklists; code blocks and code comments are not read. A user's long message
    is a pasted document or a prompt template (a compaction request lists "Pending Tasks:" as
    what to write), not a statement of progress: only a short one is read."""
    if from_user and len(text) > USER_PROGRESS_CHARS:
        return []
    low = text[:20_000].lower()
    if _PROGRESS_HINT.search(low) is None:
        return []
    out: list[tuple[bool, str]] = []
    under: bool | None = None  # the status of a heading whose list follows
    for raw in _CODE_BLOCK.sub("\n", text[:20_000]).splitlines():
        line = raw.strip()
        if not line:
            under = None
            continue
        heading = _PROGRESS_HEADING.match(line)
        if heading is not None:
            under = (heading.group("a") or heading.group("b")).lower() in _DONE_LABELS
            continue
        label = _PROGRESS_LINE.match(line)
        if label is not None:
            done = label.group("label").lower() in _DONE_LABELS
            rest = label.group("items").strip()
            if rest:
                out += [(done, item) for item in _task_list(rest)]
                under = None
            else:
                under = done
            continue
        said = [(True, m.group("item")) for m in _SAID_DONE.finditer(line)]
        said += [(False, m.group("item")) for m in _SAID_NEXT.finditer(line)]
        if said:
            out += [
                (done, item)
                for done, raw_item in said
                for item in _task_list(raw_item, split=False)
                if item.lower() not in _PRONOUNS  # "I'm done with this": not a task
            ]
            under = None
            continue
        box = _CHECKBOX.match(line)
        if box is not None:
            out += [(box.group("mark") != " ", item) for item in _task_list(box.group("item"), split=False)]
            continue
        bullet = _BULLET.match(line) if under is not None else None
        if bullet is not None and under is not None and not bullet.group("item").endswith(":"):  # not a heading
            out += [(under, item) for item in _task_list(bullet.group("item"), split=False)]
        else:
            under = None
    return list(dict.fromkeys(out))[:TASKS_PER_MESSAGE]


def _task_list(text: str, *, split: bool = True) -> list[str]:
    items = re.split(r"\s*;\s*|\s+·\s+", text) if split else [text]
    out = []
    for item in items:
        clean = re.sub(r"\*\*|`|~~", "", item).strip(" .,:;-–—*")  # markdown marks (a `__init__` stays)
        clean = " ".join(clean.split())
        if len(clean) > TASK_CHARS:
            clean = clean[: TASK_CHARS - 1].rstrip() + "…"
        placeholder = clean.startswith("[") and clean.endswith("]")  # a template's "[Task 1]", "[...]"
        if len(clean) >= 3 and clean.lower() not in _NOTHING and not clean.endswith("?") and not placeholder:
            out.append(clean)
    return out


def _layout_facts(k: Knowledge, text: str, prov: Provenance, *, from_user: bool) -> None:
    if from_user and text.lstrip().startswith("<"):
        return  # injected context
    b = k.b
    styles, parts = layout_facts(text)
    for style in styles:
        k.fact(ARCHITECTURE, b.entity("concept", style, prov, key=f"architecture:{style}"), prov, 0.8)
    for what, path in parts:
        name = f"{what}: {path}"
        k.fact(COMPONENT, b.entity("component", name, prov, key=f"component:{name.lower()}"), prov, 0.8)
    for done, task in progress_items(text, from_user=from_user):
        eid = b.entity("task", task, prov, key=f"task:{' '.join(task.lower().split())}")
        k.fact(TASK_DONE if done else TASK_PENDING, eid, prov, 0.8 if from_user else 0.75)
