"""Project briefs (issue 22): how much of what a project's sessions established its core.md block states.

  python bench/brief_bench.py [--quick] [--seed N] [--distill]

A generator of multi-session coding histories (our own templates, nothing from a benchmark): for
each project a stack drawn from one of several ecosystems, the facts introduced over sessions in
varied ways (a manifest written, an install command, a conversational "we use X", imports in code
the agent wrote, a test run), commands run successfully, conventions stated once in one of several
phrasings, a cross-project preference, one or two decisions that replace a technology midway
("let's move from A to B", "replace A with B", "use B instead of A", ...), and noise turns
("Good.", questions, edits). Each history is distilled by the real stages (extract, link,
reconcile, memory writes) and its project block rendered as core.md. Figures, each beside the
block as it was before the brief (timeline and graph only), in the same run:
  - brief coverage: the share of the expected current facts (stack, commands, conventions) the
    block states;
  - stale facts stated as current: a replaced technology named in the brief other than as
    "(was X)", in a decision or a dropped line;
  - block size: the largest block, in bytes (limit 2,048).
--distill also runs bench/distill_bench.py's throughput and no-op figures (--quick sizes).
"""

from __future__ import annotations

import random
import re
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import parser  # noqa: E402

from opmem_tui.backend.distill.extract.knowledge.conventions import clause  # noqa: E402
from opmem_tui.backend.memory.core import CORE_BUDGET, compose_core, event_lines, fact_lines  # noqa: E402
from opmem_tui.backend.memory.records import project_scope  # noqa: E402
from tests.backend.distill.history import Call, Session, Turn, brief_of, distil_history, package_json  # noqa: E402


@dataclass
class Stack:
    language: str
    version: str
    ext: str
    framework: list[str]
    database: list[str]
    extra: list[str]  # cache, queue, css, ...
    manager: list[str]  # package managers (the first is the initial one)
    tests: list[tuple[str, str]]  # (framework, command)
    lint: list[tuple[str, str]]
    run: list[str]
    manifest: str  # "pyproject" | "package" | "gomod" | "cargo" | "mix" | "gemfile"
    imports: dict[str, str] = field(default_factory=dict)  # tech -> an import line


STACKS = [
    Stack("Python", "3.11", "py", ["Django", "Flask", "FastAPI"], ["PostgreSQL", "MySQL", "SQLite"],
          ["Celery", "Redis", "SQLAlchemy", "httpx"], ["pip", "Poetry", "uv"],
          [("nose", "nosetests"), ("pytest", "pytest -q"), ("unittest", "python -m unittest")],
          [("Flake8", "flake8 ."), ("Ruff", "ruff check .")], ["python manage.py runserver", "uvicorn app.main:app"],
          "pyproject", {"SQLAlchemy": "from sqlalchemy import select", "httpx": "import httpx", "Celery": "from celery import shared_task"}),
    Stack("TypeScript", "20", "ts", ["Next.js", "React", "Vue", "Svelte"], ["PostgreSQL", "MongoDB"],
          ["Prisma", "Tailwind CSS", "Zod", "Redux"], ["npm", "pnpm", "Yarn"],
          [("Jest", "npm test"), ("Vitest", "npx vitest run"), ("Mocha", "npx mocha")],
          [("ESLint", "npx eslint ."), ("Biome", "npx biome check .")], ["npm run dev", "pnpm dev"],
          "package", {"Zod": "import { z } from 'zod'", "Prisma": "import { PrismaClient } from '@prisma/client'"}),
    Stack("Go", "1.22", "go", ["chi", "Gin", "Echo"], ["PostgreSQL", "SQLite"],
          ["golang-migrate", "Redis", "NATS"], ["Go modules"],
          [("testify", "go test ./..."), ("Ginkgo", "ginkgo -r")],
          [("golangci-lint", "golangci-lint run"), ("staticcheck", "staticcheck ./...")], ["go run ./cmd/server", "make dev"],
          "gomod", {}),
    Stack("Rust", "", "rs", ["Axum", "Actix Web"], ["SQLite", "PostgreSQL"], ["Diesel", "Redis"], ["Cargo"],
          [("cargo test", "cargo test"), ("nextest", "cargo nextest run")], [("Clippy", "cargo clippy")], ["cargo run"],
          "cargo", {}),
    Stack("Elixir", "1.16", "ex", ["Phoenix"], ["PostgreSQL"], ["Ecto", "Oban"], ["Mix"],
          [("ExUnit", "mix test")], [("Credo", "mix credo")], ["mix phx.server"], "mix", {}),
    Stack("Ruby", "3.3", "rb", ["Ruby on Rails", "Sinatra"], ["PostgreSQL", "MySQL"], ["Sidekiq", "Redis"], ["Bundler"],
          [("Minitest", "bin/rails test"), ("RSpec", "bundle exec rspec")], [("RuboCop", "bundle exec rubocop")],
          ["bin/rails server"], "gemfile", {}),
]  # fmt: skip

CONVENTIONS = [
    "Always write docstrings for public functions.",
    "Never commit directly to main.",
    "Don't add new dependencies without asking me first.",
    "I prefer small, focused commits with imperative messages.",
    "Always add a test for every bug fix.",
    "Never use print for logging; use the logger.",
    "Keep functions under fifty lines.",
    "Please don't touch the generated files in the vendor folder.",
    "Make sure to run the formatter before committing.",
    "Avoid global state in the request handlers.",
]
GLOBAL_PREFS = [
    "In every project I want conventional commit messages.",
    "Across all my projects, always use type hints or types.",
    "In all my repos, keep the README up to date with each feature.",
]
SAY_USE = ["We use {x} for this project.", "Let's use {x}.", "Add {x} to the project.", "We're on {x}.",
           "The project is built with {x}."]  # fmt: skip
SAY_SWAP = ["Let's move from {a} to {b}.", "We're switching from {a} to {b}.", "Replace {a} with {b} everywhere.",
            "Use {b} instead of {a} from now on.", "Let's migrate from {a} to {b}."]  # fmt: skip
NOISE = ["Good.", "Thanks!", "What does this error mean?", "Rename the helper in utils to something clearer.",
         "Can you explain how the caching works here?", "ok go on"]  # fmt: skip


def manifest(stack: Stack, names: list[str]) -> tuple[str, str]:
    slug = [n.lower().replace(" ", "-").replace(".", "") for n in names]
    if stack.manifest == "pyproject":
        deps = ", ".join(f'"{s}"' for s in slug)
        return (
            "pyproject.toml",
            f'[project]\nname = "app"\nrequires-python = ">={stack.version}"\ndependencies = [{deps}]\n',
        )
    if stack.manifest == "package":
        return "package.json", package_json({s: "^1" for s in slug}, engines={"node": f">={stack.version}"})
    if stack.manifest == "gomod":
        mods = {"chi": "github.com/go-chi/chi/v5", "gin": "github.com/gin-gonic/gin", "echo": "github.com/labstack/echo/v4",
                "testify": "github.com/stretchr/testify", "golang-migrate": "github.com/golang-migrate/migrate/v4"}  # fmt: skip
        req = "\n".join(f"\t{mods[s]} v1.0.0" for s in slug if s in mods)
        return "go.mod", f"module example.com/app\n\ngo {stack.version}\n\nrequire (\n{req}\n)\n"
    if stack.manifest == "cargo":
        return "Cargo.toml", '[package]\nname = "app"\n\n[dependencies]\n' + "".join(f'{s} = "1"\n' for s in slug)
    if stack.manifest == "mix":
        deps = ", ".join(f'{{:{s.replace("-", "_")}, "~> 1.0"}}' for s in slug)
        return (
            "mix.exs",
            f'defmodule App.MixProject do\n  def project, do: [elixir: "~> {stack.version}", deps: deps()]\n  defp deps, do: [{deps}]\nend\n',
        )
    gems = "".join(f"gem '{s}'\n" for s in slug)
    return "Gemfile", f"source 'https://rubygems.org'\nruby '{stack.version}'\n{gems}"


INSTALL = {"pip": "pip install {p}", "Poetry": "poetry add {p}", "uv": "uv add {p}", "npm": "npm install {p}",
           "pnpm": "pnpm add {p}", "Yarn": "yarn add {p}", "Go modules": "go get {p}", "Cargo": "cargo add {p}",
           "Mix": "mix deps.get", "Bundler": "bundle add {p}"}  # fmt: skip


@dataclass
class Project:
    name: str
    sessions: list[Session]
    current: list[str]  # technologies the brief should state as current
    commands: list[str]
    conventions: list[str]
    replaced: list[str]  # technologies replaced midway: never current


def make_project(rng: random.Random, index: int, sessions: int) -> Project:
    stack = rng.choice(STACKS)
    name = f"proj{index}"
    root = f"/work/{name}"
    framework = rng.choice(stack.framework)
    database = rng.choice(stack.database)
    extras = rng.sample(stack.extra, k=min(2, len(stack.extra)))
    tests = list(stack.tests)
    test_old = tests[0]
    swap_tests = len(tests) > 1 and rng.random() < 0.8
    test_new = rng.choice(tests[1:]) if swap_tests else test_old
    lint_old = stack.lint[0]
    swap_lint = len(stack.lint) > 1 and rng.random() < 0.5
    lint_new = stack.lint[1] if swap_lint else lint_old
    manager = stack.manager[0]
    swap_manager = len(stack.manager) > 1 and rng.random() < 0.5
    manager_new = rng.choice(stack.manager[1:]) if swap_manager else manager
    run = rng.choice(stack.run)
    conventions = rng.sample(CONVENTIONS, k=3)
    midway = max(2, sessions // 2)
    out: list[Session] = []

    def session(i: int, turns: list[Turn]) -> None:
        out.append(Session(f"{name}-s{i:02d}", turns, day=i * 2 + index * 0.01, project=name, root=root))

    # session 0: the manifest, the language, the first test framework, a run
    first = [framework, database, *extras]
    path, text = manifest(stack, [*first, test_old[0]])
    intro = rng.choice(SAY_USE).format(x=f"{stack.language} {stack.version}".strip())
    session(0, [Turn(f"Set up a new {framework} app. {intro}",
                     [Call("write", path=f"{root}/{path}", content=text),
                      Call("bash", command=test_old[1], output="3 passed", exit_code=0)]),
                Turn("Good.")])  # fmt: skip
    # the rest: facts said or shown in varied ways, noise, the swaps midway, conventions once
    pending_conventions = list(conventions)
    for i in range(1, sessions):
        turns: list[Turn] = []
        test = test_new if i >= midway else test_old
        lint = lint_new if i >= midway else lint_old
        mgr = manager_new if i >= midway else manager
        if i == midway:
            swaps = [(test_old[0], test_new[0])] if swap_tests else []
            swaps += [(lint_old[0], lint_new[0])] if swap_lint else []
            swaps += [(manager, manager_new)] if swap_manager else []
            for a, b in swaps:
                turns.append(Turn(rng.choice(SAY_SWAP).format(a=a, b=b), []))
        kind = rng.random()
        file = f"{root}/src/module{i}.{stack.ext}"
        usable = {t: line for t, line in stack.imports.items() if t in extras}
        if kind < 0.3 and usable:
            _, line = rng.choice(list(usable.items()))
            turns.append(Turn(f"Add the feature number {i} to the service layer.",
                              [Call("edit", path=file, content=f"{line}\n\n# feature {i}\n")]))  # fmt: skip
        elif kind < 0.5:
            x = rng.choice(first)
            turns.append(Turn(rng.choice(SAY_USE).format(x=x), []))
        elif kind < 0.7 and mgr in INSTALL:
            p = rng.choice(extras).lower().replace(" ", "-")
            turns.append(
                Turn("Install what the jobs need.", [Call("bash", command=INSTALL[mgr].format(p=p), output="ok")])
            )
        else:
            turns.append(Turn(rng.choice(NOISE), []))
        turns.append(Turn(f"Fix the failing check in module {i}.",
                          [Call("edit", path=file, content=f"# fix {i}\n"),
                           Call("bash", command=test[1], output=f"{5 + i} passed", exit_code=0),
                           Call("bash", command=lint[1], output="All checks passed!", exit_code=0)]))  # fmt: skip
        if i % 3 == 0:
            if stack.manifest == "package":  # the dev server through the package manager of the day
                run = {"npm": "npm run dev", "pnpm": "pnpm dev", "Yarn": "yarn dev"}[mgr]
            turns.append(
                Turn("Start the server and check it.", [Call("bash", command=run, output="Listening", exit_code=0)])
            )
        if pending_conventions and i % 2 == 1:
            turns.append(Turn(pending_conventions.pop(0), [], reply="Noted."))
        if i == 2 and index % 2 == 0:
            turns.append(Turn(GLOBAL_PREFS[index % len(GLOBAL_PREFS)], [], reply="Noted."))
        session(i, turns)
    current = [stack.language, framework, database, *extras, test_new[0], lint_new[0]]
    if manager_new != manager or manager in INSTALL:
        current.append(manager_new) if swap_manager else None
    replaced = [
        x for x, swapped in ((test_old[0], swap_tests), (lint_old[0], swap_lint), (manager, swap_manager)) if swapped
    ]
    commands = [test_new[1], lint_new[1]]
    if sessions > 3:
        commands.append(run)
    return Project(name, out, current, commands, conventions[: (sessions - 1 + 1) // 2], replaced)


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text.lower())


def brief_part(block: str) -> str:
    """The [Project · ...] section: what the block states as current."""
    lines = block.splitlines()
    try:
        start = next(i for i, line in enumerate(lines) if line.startswith("[Project"))
    except StopIteration:
        return ""
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("[")), len(lines))
    return "\n".join(lines[start + 1 : end])


def _command_in(command: str, text: str) -> bool:
    return _norm(command.replace("python -m ", "")) in _norm(text)


def score(project: Project, block: str) -> tuple[int, int, int]:
    """(facts expected, facts stated, replaced facts stated as current)."""
    text = _norm(block)
    expected = [*project.current, *project.commands, *project.conventions]
    found = sum(1 for t in project.current if _norm(t) in text)
    found += sum(1 for c in project.commands if _command_in(c, block))
    found += sum(1 for c in project.conventions if _norm(clause(c)) in text)  # stated as its clause
    stale = 0
    for line in brief_part(block).splitlines():
        if line.startswith(("· decided", "· dropped")):
            continue
        current = re.sub(r"\(was [^)]*\)", "", line.split("  ↪")[0])
        for old in project.replaced:
            if re.search(rf"(?<![\w.-]){re.escape(_norm(old))}(?![\w.-])", _norm(current)):
                stale += 1
    return len(expected), found, stale


def main() -> None:
    p = parser(__doc__.splitlines()[0])
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--distill", action="store_true", help="also run distill_bench (throughput, no-op run)")
    args = p.parse_args()
    projects, sessions = (6, 8) if args.quick else (24, 14)
    rng = random.Random(args.seed)
    totals = {"brief": [0, 0, 0], "before": [0, 0, 0]}
    sizes = {"brief": 0, "before": 0}
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        for index in range(projects):
            project = make_project(rng, index, sessions)
            memory = distil_history(Path(tmp) / project.name, project.sessions)
            day = date(2026, 6, 1)
            block = brief_of(memory, project.name, day)
            scope = project_scope(project.name)
            before = compose_core(project.name, day, event_lines(memory, scope, day), fact_lines(memory, scope))
            memory.close()
            for label, text in (("brief", block), ("before", before)):
                expected, found, stale = score(project, text)
                totals[label][0] += expected
                totals[label][1] += found
                totals[label][2] += stale
                sizes[label] = max(sizes[label], len(text.encode("utf-8")))
    seconds = time.perf_counter() - started
    cov = totals["brief"][1] / totals["brief"][0]
    base = totals["before"][1] / totals["before"][0]
    print(f"{projects} projects x {sessions} sessions, seed {args.seed}, distilled and rendered in {seconds:.1f} s")
    print(f"brief coverage: {cov:.3f} ({totals['brief'][1]}/{totals['brief'][0]} facts)  vs the block before the brief: "
          f"{base:.3f}  ratio {cov / base if base else float('inf'):.2f}  target >= 0.8: {'MET' if cov >= 0.8 else 'MISSED'}")  # fmt: skip
    stale = totals["brief"][2]
    print(f"replaced facts stated as current: {stale}  vs before: {totals['before'][2]}  target 0: {'MET' if stale == 0 else 'MISSED'}")  # fmt: skip
    print(f"largest block: {sizes['brief']:,} bytes  vs before: {sizes['before']:,} bytes  ratio "
          f"{sizes['brief'] / sizes['before']:.2f}  target <= {CORE_BUDGET}: {'MET' if sizes['brief'] <= CORE_BUDGET else 'MISSED'}")  # fmt: skip
    sys.stdout.flush()
    if args.distill:
        import distill_bench
        from harness import OUT

        OUT.mkdir(parents=True, exist_ok=True)
        distill_bench.throughput(40, 10)
        distill_bench.incremental(10_000 if not args.quick else 1_000)


if __name__ == "__main__":
    main()
