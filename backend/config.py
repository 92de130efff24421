"""config.toml as a typed, validated, frozen object; tomlkit reads and writes it so comments survive.

Every section is a frozen dataclass whose fields carry their default, their check and the comment
written into a new config.toml, so each default lives in one place. Values are checked when a
section is first read. A config.toml that does not parse, or a value that is refused, stops
nothing: what cannot be read keeps its default and `Config.problems()` says why, naming the file
and the line and column or the key, e.g. `~/.local/share/opmem/config.toml:
store.pack_after_turns must be an integer >= 2, got 0; using the default 50`. The CLI prints
them on stderr, the app shows them as notifications. A file that did not parse is never
overwritten (save refuses): the user's text is theirs to fix.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from datetime import time
from pathlib import Path
from typing import Any, ClassVar

import tomlkit
from tomlkit.exceptions import ParseError
from tomlkit.toml_document import TOMLDocument

from .model import OpmemError

CACHE_CAP_ENVS = ("OPMEM_SESSION_CACHE_CAP", "OPENPROGRAM_SESSION_CACHE_CAP")  # first set wins


class ConfigError(OpmemError):
    pass


# ---------------------------------------------------------------------------- value checks


@dataclass(frozen=True)
class Check:
    """How one key's raw TOML value becomes a typed value; returns None when the value is refused."""

    expected: str  # completes "<key> must be ..."

    def convert(self, value: Any) -> Any:
        raise NotImplementedError


@dataclass(frozen=True)
class IntAtLeast(Check):
    minimum: int = 0

    def convert(self, value: Any) -> Any:
        if isinstance(value, bool) or not isinstance(value, int) or value < self.minimum:
            return None
        return value


@dataclass(frozen=True)
class Number(Check):
    above: float | None = None  # exclusive lower bound
    low: float | None = None  # inclusive bounds
    high: float | None = None

    def convert(self, value: Any) -> Any:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return None
        number = float(value)
        if number != number:  # NaN
            return None
        if self.above is not None and not number > self.above:
            return None
        if self.low is not None and number < self.low:
            return None
        if self.high is not None and number > self.high:
            return None
        return number


@dataclass(frozen=True)
class Boolean(Check):
    def convert(self, value: Any) -> Any:
        return value if isinstance(value, bool) else None


@dataclass(frozen=True)
class Text(Check):
    pattern: str = ""  # full match, when the value is not empty
    allow_empty: bool = True

    def convert(self, value: Any) -> Any:
        if not isinstance(value, str):
            return None
        if not value:
            return value if self.allow_empty else None
        if self.pattern and not re.fullmatch(self.pattern, value):
            return None
        return value


@dataclass(frozen=True)
class OneOf(Check):
    options: tuple[str, ...] = ()

    def convert(self, value: Any) -> Any:
        return value if isinstance(value, str) and value in self.options else None


@dataclass(frozen=True)
class Names(Check):
    def convert(self, value: Any) -> Any:
        if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
            return None
        return tuple(value)


@dataclass(frozen=True)
class Table(Check):
    def convert(self, value: Any) -> Any:
        return dict(value) if isinstance(value, Mapping) else None


def _key(default: Any, check: Check, doc: str) -> Any:
    return field(default=default, metadata={"check": check, "doc": doc})


# ---------------------------------------------------------------------------- sections


@dataclass(frozen=True)
class StoreSettings:
    section: ClassVar[str] = "store"
    session_cache_cap: int = _key(
        256,
        IntAtLeast("an integer >= 1", 1),
        "Open sessions kept in memory (OPMEM_SESSION_CACHE_CAP, or OPENPROGRAM_SESSION_CACHE_CAP, overrides it).",
    )
    pack_after_turns: int = _key(
        50,
        IntAtLeast("an integer >= 2", 2),
        "Each turn commit writes one small git pack; merge them into one delta-compressed pack\n"
        "once a session repo has this many.",
    )
    lock_timeout_s: float = _key(
        120.0,
        Number("a number > 0", above=0.0),
        "Seconds a write waits for a session another opmem process is writing, then gives up\n"
        "with a message naming it. Reads never wait.",
    )


@dataclass(frozen=True)
class ProjectsSettings:
    section: ClassVar[str] = "projects"
    autocommit: bool = _key(
        True,
        Boolean("true or false"),
        "`opmem watch` commits the files each live turn's tools wrote in a bound project\n"
        "(only files that had no uncommitted changes when the turn started).",
    )


@dataclass(frozen=True)
class UiSettings:
    section: ClassVar[str] = "ui"
    theme: str = _key("opmem-dark", Text("a theme name", allow_empty=False), "opmem-dark or opmem-light.")


@dataclass(frozen=True)
class DistillSettings:
    section: ClassVar[str] = "distill"
    idle_minutes: int = _key(
        30, IntAtLeast("an integer >= 1", 1), "Distil a session once it has been idle this many minutes."
    )
    sleep_at: str = _key(
        "03:00",
        Text('a 24-hour time "HH:MM"', pattern=r"([01][0-9]|2[0-3]):[0-5][0-9]", allow_empty=False),
        'Daily "sleep" (consolidation and packing) at this local time, "HH:MM".',
    )
    extractor: str = _key(
        "rules",
        OneOf('one of "rules", "llm"', ("rules", "llm")),
        '"rules" works offline; "llm" needs [llm] base_url.',
    )
    single_valued: tuple[str, ...] = _key(
        ("listens-on", "version-of", "located-in", "prefers", "uses-version", "lives-in", "works-at"),
        Names("a list of relation names"),
        "Relations that hold one value at a time: a new value supersedes the old one.",
    )
    titles: bool = _key(True, Boolean("true or false"), "Give untitled sessions a title when they are distilled.")
    workers: int = _key(
        0,
        IntAtLeast("an integer >= 0", 0),
        "Processes that read and extract a large backlog with the rules (~10,000 new nodes or more),\n"
        "the distilling one included: 0 a worker per CPU beside it (up to 4), 1 only the distilling one,\n"
        "N that many.",
    )

    @property
    def sleep_time(self) -> time:
        hours, minutes = self.sleep_at.split(":")
        return time(int(hours), int(minutes))


@dataclass(frozen=True)
class LlmSettings:
    section: ClassVar[str] = "llm"
    base_url: str = _key(
        "",
        Text("an http:// or https:// URL, or empty", pattern=r"https?://\S+"),
        'OpenAI-compatible endpoint, e.g. "http://127.0.0.1:8080/v1"; empty = no LLM.',
    )
    model: str = _key("", Text("a string"), "Model name sent to the endpoint.")
    api_key_env: str = _key(
        "OPENAI_API_KEY",
        Text("an environment variable name", pattern=r"[A-Za-z_][A-Za-z0-9_]*"),
        "Environment variable holding the API key (the key itself never goes in this file).",
    )
    timeout_s: float = _key(60.0, Number("a number > 0", above=0.0), "Seconds to wait for one reply.")
    max_retries: int = _key(4, IntAtLeast("an integer >= 0", 0), "Retries after a failed or timed-out call.")
    batch_size: int = _key(8, IntAtLeast("an integer >= 1", 1), "Turns sent in one extraction call.")
    token_budget: int = _key(
        200000, IntAtLeast("an integer >= 0", 0), "Most LLM tokens one distillation run may spend."
    )
    temperature: float = _key(0.0, Number("a number from 0 to 2", low=0.0, high=2.0), "Sampling temperature.")
    via: str = _key(
        "",
        OneOf(
            'one of "", "openai", "claude", "codex", "gemini", "ollama"',
            ("", "openai", "claude", "codex", "gemini", "ollama"),
        ),
        'How the LLM extractor is reached: "openai" (base_url), or an agent CLI you are signed in to:\n'
        '"claude", "codex", "gemini" (their headless JSON modes), "ollama" (its local API); "" = base_url.',
    )
    max_calls: int = _key(40, IntAtLeast("an integer >= 0", 0), "Most LLM calls one distillation run makes.")
    ollama_url: str = _key(
        "http://127.0.0.1:11434",
        Text("an http:// URL", pattern=r"https?://\S+", allow_empty=False),
        'Where Ollama\'s local API listens (via = "ollama").',
    )


@dataclass(frozen=True)
class RecallSettings:
    section: ClassVar[str] = "recall"
    max_reply_bytes: int = _key(
        16384, IntAtLeast("an integer >= 1024", 1024), "Largest reply a recall tool returns, in bytes."
    )


@dataclass(frozen=True)
class SearchSettings:
    section: ClassVar[str] = "search"
    dense: str = _key("", Text("a string"), 'Embedding backend for dense search; "" = lexical only.')


@dataclass(frozen=True)
class MemorySettings:
    section: ClassVar[str] = "memory"
    exclude_projects: tuple[str, ...] = _key(
        (),
        Names("a list of project ids or names"),
        "Projects whose sessions are kept and browsable but never distilled, indexed or handed to agents.",
    )
    exclude_paths: tuple[str, ...] = _key(
        (),
        Names("a list of path globs"),
        'Globs over a session\'s working folder, e.g. ["~/work/secret-client/**"]: such sessions are\n'
        "kept and browsable but never distilled, indexed or handed to agents.",
    )


@dataclass(frozen=True)
class PrivacySettings:
    section: ClassVar[str] = "privacy"
    redact_on_import: bool = _key(
        False,
        Boolean("true or false"),
        "Store sessions with their secrets already redacted (from then on). By default the raw\n"
        "session stays the faithful record and only what is derived from it is redacted.",
    )


@dataclass(frozen=True)
class SyncSettings:
    section: ClassVar[str] = "sync"
    remote: str = _key(
        "",
        Text("a string"),
        "The git remote the store syncs with (`opmem sync init REMOTE`): a bare repository path,\n"
        "ssh://..., git@host:path or https://...; your own ssh agent or credential helper answers.",
    )
    redact: bool = _key(
        True,
        Boolean("true or false"),
        "Push sessions, titles and memory with their secrets redacted; false pushes raw sessions\n"
        "(only to a remote you trust).",
    )
    every_minutes: int = _key(
        0,
        IntAtLeast("an integer >= 0", 0),
        "`opmem watch` syncs every this many minutes (0: only when you run `opmem sync`).",
    )


SECTIONS: tuple[type, ...] = (
    StoreSettings,
    ProjectsSettings,
    UiSettings,
    DistillSettings,
    LlmSettings,
    RecallSettings,
    SearchSettings,
    MemorySettings,
    PrivacySettings,
    SyncSettings,
)

_KEYS_DOC = (
    '# Remap a key binding by its id (press ? in the app for the list), e.g.\n# "replay.next_turn" = "right,l"\n'
)


@dataclass(frozen=True)
class Settings:
    """Every section, checked."""

    store: StoreSettings
    projects: ProjectsSettings
    ui: UiSettings
    keys: Mapping[str, Any]
    distill: DistillSettings
    llm: LlmSettings
    recall: RecallSettings
    search: SearchSettings
    memory: MemorySettings
    privacy: PrivacySettings
    sync: SyncSettings


def _default_text() -> str:
    lines = [
        "# opmem configuration. Comments you add here are kept when opmem rewrites the file.",
        "# Each setting is shown with its default; remove the # in front of a line to change it.",
    ]
    for cls in SECTIONS:
        lines += ["", f"[{cls.section}]"]
        for f in fields(cls):
            lines += [f"# {line}" for line in f.metadata["doc"].splitlines()]
            default = f.default
            value = tomlkit.item(list(default) if isinstance(default, tuple) else default).as_string()
            lines.append(f"# {f.name} = {value}")
        if cls is UiSettings:
            lines += ["", "[keys]", _KEYS_DOC.rstrip("\n")]
    return "\n".join(lines) + "\n"


DEFAULT_CONFIG = _default_text()


def cache_cap_from_env(environ: Mapping[str, str] | None = None) -> int | None:
    """The session cache cap set in the environment, if any (OPMEM_ name first, the OpenProgram one honoured)."""
    env = os.environ if environ is None else environ
    for name in CACHE_CAP_ENVS:
        raw = env.get(name)
        if raw is None or not raw.strip():
            continue
        try:
            value = int(raw)
        except ValueError:
            value = 0
        if value < 1:
            raise ConfigError(f"{name} must be an integer >= 1, got {raw!r}")
        return value
    return None


class Config:
    """One config.toml: typed sections (`config.store.pack_after_turns`), plus set/save for the app's writes."""

    def __init__(self, path: Path, *, environ: Mapping[str, str] | None = None) -> None:
        self.path = Path(path)
        self._environ = environ
        self._problems: dict[str, None] = {}  # in the order found, each once
        self._unreadable: str | None = None  # why the file could not be read: it is never overwritten
        self._doc: TOMLDocument = self._load()
        self._sections: dict[str, Any] = {}

    def _load(self) -> TOMLDocument:
        if not self.path.exists():
            return tomlkit.parse(DEFAULT_CONFIG)
        try:
            text = self.path.read_text(encoding="utf-8")
            return tomlkit.parse(text)
        except UnicodeDecodeError as exc:
            why = f"{self.path}: not UTF-8 text ({exc.reason} at byte {exc.start})"
        except OSError as exc:
            why = f"{self.path}: cannot read ({exc.strerror})"
        except ParseError as exc:
            why = f"{self.path}: invalid TOML at line {exc.line}, column {exc.col}: {str(exc).split(' at line')[0]}"
        except RecursionError:
            why = f"{self.path}: TOML nested too deeply to read"
        self._unreadable = why
        self._problem(f"{why}; every setting keeps its default until it is fixed")
        return tomlkit.document()

    def _problem(self, message: str) -> None:
        self._problems[message] = None

    def problems(self) -> list[str]:
        """What could not be read (every section is checked), each naming the file and the line
        and column or the key; the default is used for each."""
        self.settings()
        return list(self._problems)

    # -- typed reads ---------------------------------------------------------------------------
    @property
    def store(self) -> StoreSettings:
        return self._section(StoreSettings)

    @property
    def projects(self) -> ProjectsSettings:
        return self._section(ProjectsSettings)

    @property
    def ui(self) -> UiSettings:
        return self._section(UiSettings)

    @property
    def distill(self) -> DistillSettings:
        return self._section(DistillSettings)

    @property
    def llm(self) -> LlmSettings:
        return self._section(LlmSettings)

    @property
    def recall(self) -> RecallSettings:
        return self._section(RecallSettings)

    @property
    def search(self) -> SearchSettings:
        return self._section(SearchSettings)

    @property
    def memory(self) -> MemorySettings:
        return self._section(MemorySettings)

    @property
    def privacy(self) -> PrivacySettings:
        return self._section(PrivacySettings)

    @property
    def sync(self) -> SyncSettings:
        return self._section(SyncSettings)

    @property
    def keys(self) -> Mapping[str, Any]:
        """[keys] as written: binding id -> keys; the app's keymap judges each entry."""
        raw = self._raw_table("keys")
        return {str(k): v for k, v in raw.items()}

    def settings(self) -> Settings:
        """Every section, checked at once (problems() says what fell back to its default)."""
        return Settings(
            store=self.store,
            projects=self.projects,
            ui=self.ui,
            keys=self.keys,
            distill=self.distill,
            llm=self.llm,
            recall=self.recall,
            search=self.search,
            memory=self.memory,
            privacy=self.privacy,
            sync=self.sync,
        )

    def _raw_table(self, name: str) -> dict[str, Any]:
        value = self._doc.get(name)
        if value is None:
            return {}
        value = value.unwrap() if hasattr(value, "unwrap") else value
        if not isinstance(value, dict):
            self._problem(f"{self.path}: [{name}] must be a table, got {value!r}; using the defaults")
            return {}
        return value

    def _section(self, cls: type) -> Any:
        cached = self._sections.get(cls.section)
        if cached is not None:
            return cached
        raw = self._raw_table(cls.section)
        known = {f.name: f for f in fields(cls)}
        for name in sorted(set(raw) - set(known)):
            self._problem(f"{self.path}: {cls.section}.{name} is not a setting (known: {', '.join(known)}); ignored")
        values: dict[str, Any] = {}
        for name, f in known.items():
            check: Check = f.metadata["check"]
            if name not in raw:
                continue
            converted = check.convert(raw[name])
            if converted is None:
                default = tomlkit.item(list(f.default) if isinstance(f.default, tuple) else f.default).as_string()
                self._problem(
                    f"{self.path}: {cls.section}.{name} must be {check.expected}, got {raw[name]!r}; "
                    f"using the default {default}"
                )
                continue
            values[name] = converted
        if cls is StoreSettings:
            try:
                env_cap = cache_cap_from_env(self._environ)
            except ConfigError as exc:
                self._problem(f"{exc}; ignored")
                env_cap = None
            if env_cap is not None:
                values["session_cache_cap"] = env_cap
        section = cls(**values)
        self._sections[cls.section] = section
        return section

    # -- writes (the app's theme and keys) -----------------------------------------------------
    def set(self, dotted: str, value: Any) -> None:
        """Set `section.key` (or a whole table); the typed sections are read again afterwards."""
        parts = dotted.split(".")
        node: Any = self._doc
        for part in parts[:-1]:
            if part not in node:
                node[part] = tomlkit.table()
            node = node[part]
        node[parts[-1]] = value
        self._sections.clear()

    def save(self) -> None:
        if self._unreadable:
            raise ConfigError(f"{self._unreadable}; not saved over it: fix or remove the file first")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".config-", suffix=".toml", dir=self.path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(tomlkit.dumps(self._doc))
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def dumps(self) -> str:
        return tomlkit.dumps(self._doc)
