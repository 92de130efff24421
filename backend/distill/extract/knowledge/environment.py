"""Environment: variable names (never values), endpoints and ports a project has."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence

from ....model import Provenance
from ..caseless import Caseless
from .evidence import Bullet, Fenced
from .facts import ENDPOINT, ENV_VAR, Knowledge

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


_ENDPOINT_WORD = Caseless(
    re.compile(r"\b(?:endpoints?|routes?|exposes?|serves?|api|get|post|put|patch|delete)\b", re.I)
)


_SAID_ROUTE = re.compile(
    r"(?:\b(GET|POST|PUT|PATCH|DELETE)\s+)?`?(?<![\w/.~@-])(/[a-z][\w{}:-]*(?:/[\w{}:-]+)*)/?`?(?![\w/.])"
)


def said_endpoints(k: Knowledge, sentence: str, prov: Provenance) -> None:
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


def said_env(k: Knowledge, sentence: str, prov: Provenance, *, confidence: float = 0.8) -> None:
    """Environment variable names the user names (`set DATABASE_URL in .env`), never a value."""
    if not _ENV_WORD.found(sentence):
        return
    for name in _ENV_NAME.findall(sentence):
        if name not in _NOT_ENV and (f"`{name}`" in sentence or "env" in sentence.lower()):
            k.fact(ENV_VAR, k.b.entity("env-var", name, prov), prov, confidence)


_ENV_LANGS = frozenset({"env", "dotenv", "bash", "sh", "shell", "zsh", "", "ini", "properties", "conf", "text", "txt"})
_ENV_LABEL = re.compile(r"\b(?:env(?:ironment)?|\.env|variables?|secrets?|config(?:uration)?)\b", re.I)
ENV_PER_BLOCK = 30


def fenced_env(k: Knowledge, blocks: Sequence[Fenced], prov: Provenance, *, confidence: float) -> None:
    """Variable names a block sets (`DATABASE_URL=...`, `export X_Y=...`, a `.env` listing, a
    compose `environment:` list) or code in it reads (`os.environ["X"]`); never their values."""
    for block in blocks:
        env_file = block.lang in _ENV_LANGS or bool(_ENV_LABEL.search(block.label))
        for name in env_names(block.code, env_file=env_file)[:ENV_PER_BLOCK]:
            k.fact(ENV_VAR, k.b.entity("env-var", name, prov), prov, confidence)


def listed_env(k: Knowledge, items: Sequence[Bullet], prov: Provenance, *, confidence: float) -> None:
    """Names listed under a heading about the environment ("Environment variables:", "## Config")."""
    for item in items:
        if not _ENV_LABEL.search(item.heading):
            continue
        m = _ENV_NAME.match(item.text.strip("`*_ "))
        if m is not None and m.group(1) not in _NOT_ENV:
            k.fact(ENV_VAR, k.b.entity("env-var", m.group(1), prov), prov, confidence)
