"""Shell command lines as the coding rules read them: unwrap, split, classify.

`bash -lc "cd x && pytest -q | tail"` becomes the line `cd x && pytest -q | tail` (what the
turn ran) and the simple commands `cd x`, `pytest -q`, `tail`; each simple command is
classified (read, search, list, edit, install, test, git, run) with the files, patterns and
packages it names. Pure functions over strings: no shell is ever run.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

SHELLS = frozenset({"bash", "sh", "zsh", "dash", "fish", "ksh"})
WRAPPERS = frozenset({"sudo", "time", "nohup", "env", "command", "exec", "nice", "timeout", "xargs", "stdbuf"})
READERS = frozenset({"cat", "head", "tail", "less", "more", "nl", "bat", "batcat", "wc", "view", "type", "od", "xxd"})
SEARCHERS = frozenset({"rg", "grep", "egrep", "fgrep", "ag", "ack", "fd", "find", "locate"})
LISTERS = frozenset({"ls", "tree", "exa", "eza", "du", "stat", "file", "pwd"})
SUBCOMMANDS = frozenset(
    {
        "git",
        "npm",
        "pnpm",
        "yarn",
        "bun",
        "pip",
        "pip3",
        "uv",
        "poetry",
        "cargo",
        "go",
        "mix",
        "docker",
        "docker-compose",
        "kubectl",
        "gh",
        "make",
        "bundle",
        "rails",
        "rake",
        "dotnet",
        "deno",
        "conda",
        "brew",
        "apt",
        "apt-get",
        "systemctl",
        "gem",
        "composer",
        "opmem",
        "pdm",
        "hatch",
        "terraform",
        "helm",
    }
)
GIT_INSPECT = frozenset(
    {
        f"git {s}"
        for s in ("status", "diff", "log", "show", "branch", "remote", "rev-parse", "blame", "ls-files", "describe")
    }
    | {"git"}
)
RUNNERS = frozenset({"npx", "uvx", "pnpx", "bunx", "pipx"})
INSTALL = {
    ("pip", "install"),
    ("pip3", "install"),
    ("uv", "add"),
    ("uv", "pip"),
    ("poetry", "add"),
    ("pdm", "add"),
    ("npm", "install"),
    ("npm", "i"),
    ("npm", "add"),
    ("yarn", "add"),
    ("pnpm", "add"),
    ("pnpm", "install"),
    ("pnpm", "i"),
    ("bun", "add"),
    ("bun", "install"),
    ("cargo", "add"),
    ("cargo", "install"),
    ("go", "get"),
    ("go", "install"),
    ("gem", "install"),
    ("bundle", "add"),
    ("apt", "install"),
    ("apt-get", "install"),
    ("brew", "install"),
    ("conda", "install"),
    ("composer", "require"),
    ("pipx", "install"),
}
# `uv run X`, `bundle exec X`: X runs, in the project's environment
RUN_IN_ENV = frozenset(
    {("uv", "run"), ("poetry", "run"), ("pdm", "run"), ("pipenv", "run"), ("hatch", "run"), ("rye", "run"),
     ("bundle", "exec"), ("pnpm", "exec"), ("yarn", "exec"), ("pixi", "run")}
)  # fmt: skip
_INTERPRETER = re.compile(r"^(?:python[\d.]*|node|ruby|php|perl|Rscript)$")
_SCRIPT = re.compile(r"(?:\.(?:py|js|mjs|cjs|ts|rb|php|pl|R)|^artisan)$")
SCRIPT_SUBCOMMANDS = frozenset({"manage.py", "artisan"})  # Django's and Laravel's: the subcommand is the command
TEST_PROGRAMS = frozenset(
    {"pytest", "py.test", "jest", "vitest", "mocha", "rspec", "phpunit", "tox", "nox", "ctest", "ava"}
)
TEST_SUBCOMMANDS = {
    ("npm", "test"),
    ("npm", "t"),
    ("yarn", "test"),
    ("pnpm", "test"),
    ("bun", "test"),
    ("cargo", "test"),
    ("go", "test"),
    ("mix", "test"),
    ("make", "test"),
    ("make", "check"),
    ("dotnet", "test"),
    ("deno", "test"),
    ("rails", "test"),
    ("rake", "test"),
    ("gradle", "test"),
    ("mvn", "test"),
}
_ASSIGN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_OPERATORS = frozenset({"&&", "||", ";", "|", "&", ";;", "|&"})
_REDIRECTS = frozenset({">", ">>", "&>", "&>>", "1>", "2>", "1>>", "2>>"})
_VERSION = re.compile(r"^([@A-Za-z0-9][A-Za-z0-9._/@-]*?)(?:\[[^\]]*\])?(?:[=<>!~^@]{1,3}[\w.*+-]+.*)?$")


@dataclass(frozen=True, slots=True)
class SimpleCommand:
    argv: tuple[str, ...]
    program: str  # `pytest`, `git commit`, `npm install`, `mix phx.server`
    kind: str  # read | search | list | edit | delete | move | install | test | git | cd | run
    files: tuple[str, ...] = ()  # files it reads (read) or writes (edit)
    pattern: str = ""  # search pattern
    packages: tuple[str, ...] = ()  # install


def command_text(value: Any) -> str:
    """The script a shell tool ran, from the argument shapes agents use."""
    if isinstance(value, Mapping):
        for key in ("command", "cmd", "script", "commandLine", "command_line", "input"):
            if key in value:
                return command_text(value[key])
        return ""
    if isinstance(value, (list, tuple)):
        argv = [str(v) for v in value]
        if len(argv) >= 3 and os_basename(argv[0]) in SHELLS and argv[1].startswith("-") and "c" in argv[1]:
            return argv[2]
        return shlex.join(argv)
    return value if isinstance(value, str) else ""


def os_basename(path: str) -> str:
    return posixpath.basename(path)


def command_line(script: str) -> str:
    """One line for a script: a heredoc's body is cut, other newlines become `; `."""
    text = script.strip()
    if "<<" in text:
        text = text.split("\n", 1)[0].strip()
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    line = "; ".join(lines)
    return line if len(line) <= 300 else line[:299] + "…"


_CACHED_SCRIPT = 2000  # sessions run the same short commands again and again (tests, git status)
_PLAIN = re.compile(r"[^\"'\\`$(){}<>]*")
_OPERATOR_SPLIT = re.compile(r"(&&|\|\||;;|\|&|[;&|])")


# a Windows path (`.\venv\Scripts\python.exe`, `D:\src`): its backslashes are separators, not escapes
_WINDOWS_PATH = re.compile(r"(?<![\w$\\])(?:[A-Za-z]:|\.{1,2})\\[\w.-]")


def _tokens(script: str) -> list[str]:
    first = script.split("\n", 1)[0] if "<<" in script else script.replace("\n", " ; ")
    if "\\" in first and _WINDOWS_PATH.search(first):
        first = first.replace("\\", "/")
    if _PLAIN.fullmatch(first):  # no quoting, no redirects: what shlex would give, faster
        return [
            t for part in _OPERATOR_SPLIT.split(first) for t in (part.split() if part not in _OPERATORS else [part])
        ]
    try:
        lexer = shlex.shlex(first, posix=True, punctuation_chars=";&|<>")
        lexer.whitespace_split = True
        lexer.commenters = ""
        return list(lexer)
    except ValueError:  # an unbalanced quote: split on blanks, good enough to classify
        return first.split()


def split_commands(script: str) -> list[list[str]]:
    """The simple commands of a script, as argv lists, with their `> file` redirects kept."""
    if len(script) <= _CACHED_SCRIPT:
        return [list(argv) for argv in _split(script)]
    return _split_commands(script)


@lru_cache(maxsize=4096)
def _split(script: str) -> tuple[tuple[str, ...], ...]:
    return tuple(tuple(argv) for argv in _split_commands(script))


# The shell's own words (bash(1), "Reserved Words"): never a program. A loop or `case` header is
# no command at all; `do`, `then`, `else`, `!`, `{` lead the command that follows them; `done`,
# `fi`, `esac`, `}` end a compound command (a redirect may follow: `done < list`). `[`/`[[` test.
_LEADING_WORDS = frozenset({"do", "then", "else", "elif", "if", "while", "until", "!", "{", "(", "time"})
_HEADER_WORDS = frozenset({"for", "select", "case", "function", "in", "coproc"})
_CLOSING_WORDS = frozenset({"done", "fi", "esac", "}", ")", "[", "[[", "]]", ";;"})
_CASE_PATTERN = re.compile(r"^\(?[^()\s]*\)$")  # `*.py)` `(a|b))`: a case branch's pattern


def shell_command(argv: Sequence[str]) -> list[str]:
    """A simple command without the shell's reserved words before it; [] for a loop or case
    header, a compound command's end, or a test (`for f in *.py`, `done`, `[ -f x ]`)."""
    args = list(argv)
    while args and (args[0] in _LEADING_WORDS or _CASE_PATTERN.match(args[0])):
        args = args[1:]
    if args and args[0] == "case":  # `case $x in start) ./run.sh`: the branch's command follows its pattern
        branch = next((i for i, a in enumerate(args[3:], 3) if a.endswith(")")), None)
        return shell_command(args[branch + 1 :]) if branch is not None else []
    if not args or args[0] in _HEADER_WORDS or args[0] in _CLOSING_WORDS or args[0].endswith("()"):
        return []
    return args


def _split_commands(script: str) -> list[list[str]]:
    out: list[list[str]] = [[]]
    for token in _tokens(script):
        if token in _OPERATORS:
            out.append([])
        elif token.startswith("<<"):
            out[-1].append("<<")
        else:
            out[-1].append(token)
    return [argv for argv in map(shell_command, out) if argv]


def _strip_wrappers(argv: list[str]) -> list[str]:
    args = list(argv)
    while args and (_ASSIGN.match(args[0]) or os_basename(args[0]) in WRAPPERS):
        args = args[1:]
        while args and args[0].startswith("-") and len(args) > 1:  # `timeout 10`, `env -i`
            args = args[1:]
        if args and re.fullmatch(r"\d+[smh]?", args[0]):
            args = args[1:]
    if args and os_basename(args[0]) in RUNNERS and len(args) > 1:
        args = [a for a in args[1:] if not a.startswith("-")][:1] + args[2:]
    elif len(args) > 2 and (os_basename(args[0]), args[1]) in RUN_IN_ENV:  # `uv run pytest` runs pytest
        args = args[2:]
    if len(args) >= 3 and os_basename(args[0]).startswith("python") and args[1] == "-m":
        args = args[2:]
    return args


_VALUE_OPTIONS = frozenset(
    {"-A", "-B", "-C", "-m", "-g", "-t", "--glob", "--type", "-name", "-iname", "-path", "-type", "-maxdepth", "-d"}
)


def _operands(args: Sequence[str]) -> list[str]:
    """Arguments that are not options nor option values; `-e PATTERN` counts as an operand."""
    out: list[str] = []
    skip = False
    for i, arg in enumerate(args):
        if skip:
            skip = False
            continue
        if arg in _REDIRECTS or arg in _VALUE_OPTIONS:
            skip = True
            continue
        if arg in ("-e", "--regexp") and i + 1 < len(args):
            out.append(args[i + 1])
            skip = True
            continue
        if arg.startswith("-") and arg != "-":
            continue
        out.append(arg)
    return out


def _redirect_targets(argv: Sequence[str]) -> list[str]:
    out = []
    for i, arg in enumerate(argv[:-1]):
        if arg in _REDIRECTS and argv[i + 1] not in ("/dev/null", "&1", "&2"):
            out.append(argv[i + 1])
    return out


def _looks_like_path(arg: str) -> bool:
    if not arg or arg in (".", "..", "-", "/") or arg.startswith(("$", "<", "http://", "https://")):
        return False
    if any(c in arg for c in "*?{}'\"\n|;=") or (arg.endswith("p") and re.fullmatch(r"\d+(,\d+)?p", arg)):
        return False
    return "/" in arg or bool(re.search(r"\.[A-Za-z0-9]{1,8}$", arg)) or (arg[:1].isupper() and "." in arg)


def _program(args: Sequence[str]) -> str:
    name = os_basename(args[0])
    if _INTERPRETER.match(name) and len(args) > 1:
        # `python manage.py migrate`, `node server.js`: the script says what ran, not the interpreter
        script = next((a for a in args[1:] if not a.startswith("-")), "")
        if script and args[1] == script and _SCRIPT.search(script):
            program = f"{name} {script}"
            sub = args[2] if len(args) > 2 else ""
            if os_basename(script) in SCRIPT_SUBCOMMANDS and re.fullmatch(r"[A-Za-z][\w.:-]*", sub):
                program += f" {sub}"
            return program
    if name in SUBCOMMANDS and len(args) > 1:
        sub = next((a for a in args[1:] if not a.startswith("-")), "")
        if sub and re.fullmatch(r"[A-Za-z][\w.:-]*", sub):
            if sub == "run" and name in ("npm", "pnpm", "yarn", "bun"):  # `npm run build`: the script is what ran
                rest = args[args.index(sub) + 1 :]
                script = next((a for a in rest if not a.startswith("-")), "")
                if script and re.fullmatch(r"[A-Za-z][\w.:-]*", script):
                    return f"{name} run {script}"
            return f"{name} {sub}"
    return name


def classify(argv: Sequence[str]) -> SimpleCommand | None:
    raw = list(argv)
    args = _strip_wrappers([a for a in raw if a != "<<"])
    if not args:
        return None
    name = os_basename(args[0])
    program = _program(args)
    rest = args[1:]
    redirects = tuple(t for t in _redirect_targets(raw) if _looks_like_path(t))
    parts = program.split(" ")
    pair = (parts[0], parts[1]) if len(parts) > 1 else None
    if name == "cd":
        return SimpleCommand(tuple(args), "cd", "cd", files=tuple(rest[:1]))
    if name == "sed" and any(a.startswith("-i") or a == "--in-place" for a in rest):
        files = tuple(a for a in _operands(rest)[1:] if _looks_like_path(a))
        return SimpleCommand(tuple(args), "sed -i", "edit", files=files)
    if name in ("tee", "touch") or redirects:
        files = tuple(a for a in _operands(rest) if _looks_like_path(a)) if name in ("tee", "touch") else ()
        return SimpleCommand(tuple(args), program, "edit", files=files + redirects)
    if name in ("rm", "unlink", "rmdir") or program == "git rm":
        files = tuple(a for a in _operands(args[2:] if program == "git rm" else rest) if _looks_like_path(a))
        return SimpleCommand(tuple(args), program, "delete", files=files)
    if name == "mv" or program == "git mv":
        files = tuple(a for a in _operands(args[2:] if program == "git mv" else rest) if a not in (".", ".."))
        return SimpleCommand(tuple(args), program, "move", files=files) if len(files) >= 2 else None
    if name == "apply_patch":
        return SimpleCommand(tuple(args), "apply_patch", "edit")
    if name in READERS or name == "sed":
        operands = _operands(rest)
        if name == "sed" and operands:
            operands = operands[1:]  # the script
        return SimpleCommand(tuple(args), name, "read", files=tuple(a for a in operands if _looks_like_path(a)))
    if name in SEARCHERS or program == "git grep":
        operands = _operands(rest)
        pattern = "" if name in ("find", "fd", "locate") else (operands[0] if operands else "")
        files = tuple(a for a in operands[1 if pattern else 0 :] if _looks_like_path(a))
        return SimpleCommand(tuple(args), name, "search", files=files, pattern=pattern)
    if name in LISTERS:
        return SimpleCommand(tuple(args), name, "list")
    if pair in INSTALL or (name == "uv" and rest[:2] == ["pip", "install"]):
        return SimpleCommand(tuple(args), program, "install", packages=_packages(args, pair))
    if (
        name in TEST_PROGRAMS
        or pair in TEST_SUBCOMMANDS
        or (pair and pair[0] in ("npm", "pnpm", "yarn") and "test" in rest)
        or program.endswith((" manage.py test", " artisan test"))
    ):
        return SimpleCommand(tuple(args), program, "test")
    if name == "git":
        return SimpleCommand(tuple(args), program, "list" if program in GIT_INSPECT else "git")
    return SimpleCommand(tuple(args), program, "run")


def _packages(args: Sequence[str], pair: tuple[str, str] | None) -> tuple[str, ...]:
    start = 3 if args[:3] and len(args) > 2 and args[1] == "pip" else 2
    found: list[str] = []
    skip = False
    for arg in args[start:]:
        if skip:
            skip = False
            continue
        if arg in (
            "-r",
            "--requirement",
            "-c",
            "--constraint",
            "-e",
            "--editable",
            "-t",
            "--target",
            "-i",
            "--index-url",
            "--group",
            "-G",
            "--extra-index-url",
        ):
            skip = True
            continue
        if arg.startswith("-") or arg in (".", "..") or ("/" in arg and not arg.startswith("@")):
            continue
        match = _VERSION.match(arg)
        if match and match.group(1):
            name = match.group(1)
            if pair and pair[0] in ("npm", "pnpm", "yarn", "bun") and name.count("@") == 2:
                name = "@" + name[1:].split("@", 1)[0]
            found.append(name)
    return tuple(dict.fromkeys(found))


def parse_script(script: str) -> list[SimpleCommand]:
    if len(script) <= _CACHED_SCRIPT:
        return list(_parsed(script))
    return [command for argv in split_commands(script) if (command := classify(argv)) is not None]


@lru_cache(maxsize=4096)
def _parsed(script: str) -> tuple[SimpleCommand, ...]:
    return tuple(command for argv in split_commands(script) if (command := classify(argv)) is not None)
