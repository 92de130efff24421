"""Recognisers for the things coding sessions name: URLs, ports, issues, errors, test results, models.

Each is a small pure function over text; the coding rules call them on prompts, replies and
tool results. Kept strict on purpose: a missed fact costs less than a wrong one in memory.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

URL = re.compile(r"https?://[^\s<>()\[\]{}'\"`|\\^]+", re.IGNORECASE)
_URL_TAIL = ".,;:!?*_~"
PORT_HOST = re.compile(r"\b(?:localhost|127\.0\.0\.1|0\.0\.0\.0|\[::1?\]|::)(?::)(\d{2,5})\b")
PORT_WORD = re.compile(r"\bport\s+:?(\d{2,5})\b", re.IGNORECASE)
PORT_FLAG = re.compile(r"(?:--port|-p|--listen|PORT)[= ](\d{2,5})\b")
LISTEN = re.compile(
    r"\b(?:the\s+)?([A-Za-z][\w.-]{1,40})\s+(?:now\s+)?(?:listens|is listening|runs|is running|is served|serves|is up|started|starts|running)"
    r"\s+(?:on|at)\s+(?:(?:https?://)?(?:localhost|127\.0\.0\.1|0\.0\.0\.0)?:|port\s+:?)(\d{2,5})\b",
    re.IGNORECASE,
)
# a port that changes: "move the API to port 9000", "change the worker's port to 9100", "the API port is now 9000"
MOVE_PORT = re.compile(
    r"\b(?:(?:move|moved|moving|switch|switched|put|run|runs)\s+(?:the\s+)?([A-Za-z][\w.-]{1,40})\s+(?:over\s+)?"
    r"(?:to|on|onto)\s+(?:port\s+:?|:)(\d{2,5})|(?:change|changed|set|setting)?\s*(?:the\s+)?([A-Za-z][\w.-]{1,40})(?:'s)?\s+"
    r"port\s+(?:to|is now|is|=)\s+:?(\d{2,5}))\b",
    re.IGNORECASE,
)
SERVING_LINE = re.compile(
    r"(?:listening|running|serving|started|available|server|ready)\b[^\n]{0,60}?"
    r"(?:https?://)?(?:localhost|127\.0\.0\.1|0\.0\.0\.0|\[::\])?:(\d{2,5})\b",
    re.IGNORECASE,
)
ISSUE_REF = re.compile(
    r"(?:(?<![\w/&#])#(\d{1,6})\b|\b(?:issue|bug|ticket|PR|pull request)\s+#?(\d{1,6})\b|\b([A-Z][A-Z0-9]{1,9}-\d{1,6})\b"
    r"|github\.com/[\w.-]+/[\w.-]+/(?:issues|pull)/(\d+))",
    re.IGNORECASE,
)
_JIRA_EXCLUDE = frozenset(
    {"UTF", "ISO", "SHA", "RFC", "CVE", "GPT", "HTTP", "TLS", "SSL", "X", "COVID", "PEP", "ES", "MD"}
)
FIXES = re.compile(r"\b(?:fix(?:es|ed)?|close[sd]?|resolve[sd]?)\s+#(\d{1,6})\b", re.IGNORECASE)
GIT_COMMIT_OUT = re.compile(r"^\[([\w./-]+)(?: \(root-commit\))? ([0-9a-f]{7,40})\] (.+)$", re.MULTILINE)
MODEL = re.compile(
    r"\b(gpt-[\w.-]*\d[\w.-]*|o[134](?:-mini|-pro|-preview)?|claude-[\w.-]*\d[\w.-]*|gemini-[\w.-]*\d[\w.-]*|"
    r"llama[- ]?\d[\w.-]*|mistral-[\w.-]+|mixtral-[\w.-]+|qwen[\d.]*-[\w.-]+|deepseek-[\w.-]+|phi-\d[\w.-]*|gemma-?\d[\w.-]*)\b",
    re.IGNORECASE,
)

_PY_ERROR = re.compile(
    r"^\s*(?:E\s+)?([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Failure|Warning))(?::\s*(.*))?$"
)
_GENERIC_ERROR = re.compile(
    r"^\s*(?:\*\* \((\w+(?:\.\w+)*)\)\s*(.*)|(error(?:\[[A-Z]\d+\])?|ERROR|Error|fatal|FATAL|npm ERR!|panic)[:!]?\s+(.+))$"
)
# a compiler's located diagnostic: `src/App.tsx(3,21): error TS2307: ...`, `main.c:3:5: error: ...`,
# `./main.go:12:2: undefined: foo` (warnings and notes are not errors)
_LOCATED_ERROR = re.compile(
    r"^\s*(?:\./)?[\w./@-]+\.(?:go|c|h|cc|cpp|hpp|rs|ts|tsx|mts|cts|js|jsx|mjs|vue|svelte|java|kt|swift|cs|scala|zig)"
    r"(?::\d+:\d+:|\(\d+,\d+\):)\s*(?:(?:fatal )?error(?:\s+([A-Z]{2,4}\d+))?\s*:\s*)?(?!\s*(?:warning|note|info|hint)\b)\s*(\S.{3,})$"
)
_NOT_FOUND = re.compile(r"(?:^|: )([\w./-]+): (command not found|No such file or directory|Permission denied)\s*$")

_TEST_COUNTS = re.compile(
    r"\b(\d+)\s+(passed|failed|failures?|errors?|error|skipped|xfailed|xpassed|tests?|pending|todo|ignored)\b",
    re.IGNORECASE,
)
_PYTEST_LINE = re.compile(r"^=+ .*\b(?:passed|failed|error|skipped|no tests ran)\b.* in [\d.]+s.*=+$", re.MULTILINE)
_JEST_LINE = re.compile(r"^Tests:\s+(.+)$", re.MULTILINE)
_CARGO_LINE = re.compile(r"^test result: \w+\. (.+?)(?:; finished.*)?$", re.MULTILINE)
_MIX_LINE = re.compile(r"^(\d+ (?:tests?|doctests?|propert(?:y|ies))(?:, \d+ \w+)*, \d+ failures?.*)$", re.MULTILINE)
_FAILED_TEST = re.compile(
    r"^(?:FAILED ([\w./-]+::[\w\[\]:.,/-]+)(?: - (.*))?|--- FAIL: (\w+)|test ([\w:]+) \.\.\. FAILED|\s*[✕×] (.+?)(?: \(\d+ ?ms\))?)$",
    re.MULTILINE,
)
_ORDER = {"passed": 0, "failed": 1, "errors": 2, "skipped": 3, "xfailed": 4, "xpassed": 5}


def urls(text: str) -> list[str]:
    out = []
    for match in URL.finditer(text):
        url = match.group(0).rstrip(_URL_TAIL)
        if url.count("(") < url.count(")"):
            url = url.rstrip(")")
        if len(url) > 12:
            out.append(url)
    return list(dict.fromkeys(out))


_TWO_DIGITS = re.compile(r"\d\d")  # what each port pattern needs (\d{2,5}): most commands have none


def ports(text: str) -> list[str]:
    if _TWO_DIGITS.search(text) is None:
        return []
    found = [m.group(1) for rx in (PORT_HOST, PORT_WORD, PORT_FLAG) for m in rx.finditer(text)]
    return [f":{p}" for p in dict.fromkeys(found) if 1 <= int(p) <= 65535]


def listeners(text: str) -> list[tuple[str, str]]:
    """(service, ":port") from sentences such as `the worker listens on :18109`."""
    out = []
    found = [(m.group(1), m.group(2)) for m in LISTEN.finditer(text)]
    found += [(m.group(1) or m.group(3), m.group(2) or m.group(4)) for m in MOVE_PORT.finditer(text)]
    for name, port in found:
        if name.lower() not in ("it", "this", "that", "which", "server", "app", "and", "now", "is", "also", "the", "a",
                                "its", "our", "my", "your", "default", "dev", "local", "new", "old"):  # fmt: skip
            out.append((name, f":{port}"))
        elif name.lower() in ("server", "app"):
            out.append((name.lower(), f":{port}"))
    return out


# SERVING_LINE needs one of these words; for ASCII text a lowercased `in` decides as its
# IGNORECASE does (other text may case-fold otherwise, U+017F long s for `s`: it runs the pattern)
_SERVING_WORDS = ("listening", "running", "serving", "started", "available", "server", "ready")


def serving_port(text: str) -> str | None:
    """The port a command's output says it listens on (`Running ... at http://localhost:4000`)."""
    if ":" not in text:
        return None
    if text.isascii():
        low = text.lower()
        if not any(word in low for word in _SERVING_WORDS):
            return None
    match = SERVING_LINE.search(text)
    return f":{match.group(1)}" if match else None


_JIRA_HINT = re.compile(r"[A-Z]-\d|\bPR\b")
_ISSUE_WORDS = ("#", "issue", "ticket", "bug", "pull")
_MODEL_WORDS = (
    "gpt",
    "claude",
    "gemini",
    "llama",
    "mistral",
    "mixtral",
    "qwen",
    "deepseek",
    "phi-",
    "gemma",
    "o1",
    "o3",
    "o4",
)
_MODEL_HINT = re.compile("|".join(re.escape(w) for w in _MODEL_WORDS))  # one search, not a loop of `in`
_PORT_HINT = re.compile(r":\d{2,5}\b|\bport\b", re.IGNORECASE)


def may_name_a_port(text: str) -> bool:
    if ":" not in text and text.isascii() and "port" not in text.lower():
        return False  # what _PORT_HINT needs is absent (ASCII: lower() folds as IGNORECASE does)
    return _PORT_HINT.search(text) is not None


def issue_refs(text: str) -> list[str]:
    low = text.lower()
    if not any(w in low for w in _ISSUE_WORDS) and (
        ("-" not in text and "PR" not in text) or _JIRA_HINT.search(text) is None  # the hint's literals first
    ):
        return []
    out = []
    for match in ISSUE_REF.finditer(text):
        number = match.group(1) or match.group(2) or match.group(4)
        if number:
            out.append(f"#{number}")
        elif match.group(3):
            key = match.group(3).upper()
            if key.split("-", 1)[0] not in _JIRA_EXCLUDE:
                out.append(key)
    return list(dict.fromkeys(out))


def fixed_issues(text: str) -> list[str]:
    return [f"#{m.group(1)}" for m in FIXES.finditer(text)]


def git_commits_in_output(text: str) -> list[tuple[str, str]]:
    """(short hash, message) from `git commit` output lines `[main 1a2b3c4] message`."""
    return [(m.group(2), m.group(3).strip()) for m in GIT_COMMIT_OUT.finditer(text)]


def models(text: str) -> list[str]:
    if _MODEL_HINT.search(text.lower()) is None:
        return []
    return list(dict.fromkeys(m.group(1).lower().replace(" ", "-") for m in MODEL.finditer(text)))


_VOLATILE = [
    (re.compile(r"0x[0-9a-fA-F]+"), "0x…"),
    (re.compile(r"\b[0-9a-f]{12,}\b"), "…"),
    (re.compile(r"line \d+"), "line N"),
    (re.compile(r":\d+:\d+\b"), ":N:N"),
    (re.compile(r"\s+"), " "),
]


def normalize_error(text: str) -> str:
    """An error line with addresses, long hashes and line numbers generalized, cut to 120 chars."""
    out = text.strip()
    for pattern, repl in _VOLATILE:
        out = pattern.sub(repl, out)
    out = out.strip(" .:")
    return out if len(out) <= 120 else out[:119] + "…"


def errors(text: str, *, limit: int = 3) -> list[str]:
    """The error lines of a failed command's output, most specific first (a traceback's last line)."""
    return list(_errors(text, limit))


@lru_cache(maxsize=16)  # a failed action's output is read for its errors twice (its facts, its records)
def _errors(text: str, limit: int) -> tuple[str, ...]:
    found: list[str] = []
    lines = text.splitlines()[-400:]
    for line in reversed(lines):
        if len(found) >= limit:
            break
        match = _PY_ERROR.match(line)
        if match and (match.group(2) or "Error" in match.group(1)):
            message = f"{match.group(1).split('.')[-1]}: {match.group(2)}" if match.group(2) else match.group(1)
            found.append(normalize_error(message))
            continue
        match = _NOT_FOUND.search(line)
        if match:
            found.append(normalize_error(f"{match.group(1)}: {match.group(2)}"))
            continue
        match = _LOCATED_ERROR.match(line)
        if match:
            found.append(normalize_error(f"{match.group(1)}: {match.group(2)}" if match.group(1) else match.group(2)))
            continue
        match = _GENERIC_ERROR.match(line)
        if match:
            head = match.group(1) or match.group(3)
            body = match.group(2) if match.group(1) else match.group(4)
            if body and len(body) > 3:
                found.append(normalize_error(f"{head.rstrip(':!')}: {body}"))
    return tuple(dict.fromkeys(found))


# each summary line's pattern with a literal it cannot match without (most outputs have none:
# a plain `in` skips the pattern's pass over up to 20,000 characters)
_SUMMARY_LINES = (
    (_PYTEST_LINE, " in "),
    (_JEST_LINE, "Tests:"),
    (_CARGO_LINE, "test result: "),
    (_MIX_LINE, " failure"),
)
_GO_OK = re.compile(r"^ok\s+\S+\s+[\d.]+s", re.MULTILINE)
_GO_FAIL = re.compile(r"^FAIL\s+\S+", re.MULTILINE)


def test_summary(text: str) -> str:
    """`12 passed, 1 failed` from pytest, jest, cargo, go or mix output; "" when there is none."""
    for rx, literal in _SUMMARY_LINES:
        lines = rx.findall(text) if literal in text else ()
        if lines:
            return _counts(lines[-1] if isinstance(lines[-1], str) else lines[-1][0])
    if ("ok" in text and _GO_OK.search(text)) or ("FAIL" in text and _GO_FAIL.search(text)):
        passed = len(re.findall(r"^ok\s+\S+", text, re.MULTILINE))
        failed = len(re.findall(r"^FAIL\s+\S+\s", text, re.MULTILINE))
        return _join({"passed": passed, "failed": failed}, unit=" packages")
    return ""


def _counts(line: str) -> str:
    counts: dict[str, int] = {}
    tests_total = None
    failures = None
    for number, word in _TEST_COUNTS.findall(line):
        word = word.lower()
        if word.startswith("test"):
            tests_total = int(number)
            continue
        if word.startswith("failure"):
            failures = int(number)
            continue
        key = {"error": "errors", "ignored": "skipped", "pending": "skipped", "todo": "skipped"}.get(word, word)
        counts[key] = counts.get(key, 0) + int(number)
    if failures is not None:
        counts["failed"] = failures
        if tests_total is not None:
            counts.setdefault("passed", max(0, tests_total - failures - counts.get("skipped", 0)))
    return _join(counts)


def _join(counts: dict[str, int], unit: str = "") -> str:
    parts = [f"{n} {k}" for k, n in sorted(counts.items(), key=lambda kv: _ORDER.get(kv[0], 9)) if n or k == "passed"]
    return ", ".join(parts) + (unit if parts else "")


def failed_tests(text: str) -> list[tuple[str, str]]:
    """(test id, error) pairs of the failures a test run lists."""
    out = []
    for match in _FAILED_TEST.finditer(text):
        name = match.group(1) or match.group(3) or match.group(4) or match.group(5)
        if name:
            out.append((name.strip(), normalize_error(match.group(2)) if match.group(2) else ""))
    return out


def first_sentence(text: str, limit: int = 100) -> str:
    flat = " ".join(text.split())
    match = re.match(r"(.+?[.!?])(?:\s|$)", flat)
    sentence = match.group(1) if match else flat
    return sentence if len(sentence) <= limit else sentence[: limit - 1].rstrip() + "…"


def unique(items: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(filter(None, items)))  # (filter: the same test as `if i`, in C)
