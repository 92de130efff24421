"""config.toml: read and written with tomlkit so a user's comments survive a rewrite."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import tomlkit
from tomlkit.exceptions import ParseError
from tomlkit.toml_document import TOMLDocument

from .model import OpmemError

DEFAULT_CONFIG = """\
# opmem configuration. Comments you add here are kept when opmem rewrites the file.

[store]
# Open sessions kept in memory (OPENPROGRAM_SESSION_CACHE_CAP overrides it).
session_cache_cap = 256
# Each turn commit writes one small git pack; merge them into one delta-compressed pack
# once a session repo has this many.
pack_after_turns = 50

[projects]
# `opmem watch` commits the files each live turn's tools wrote in a bound project
# (only files that had no uncommitted changes when the turn started).
autocommit = true

[ui]
theme = "opmem-dark"

[keys]
# Remap a key binding by its id, e.g.
# "replay.next_turn" = "right,l"
"""


class ConfigError(OpmemError):
    pass


class Config:
    """One config.toml; values are read with dotted keys, e.g. get("store.session_cache_cap")."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._doc: TOMLDocument = self._load()

    def _load(self) -> TOMLDocument:
        if not self.path.exists():
            return tomlkit.parse(DEFAULT_CONFIG)
        try:
            text = self.path.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise ConfigError(f"{self.path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
        except OSError as exc:
            raise ConfigError(f"{self.path}: cannot read ({exc.strerror})") from None
        try:
            return tomlkit.parse(text)
        except ParseError as exc:
            raise ConfigError(
                f"{self.path}: invalid TOML at line {exc.line}, column {exc.col}: {str(exc).split(' at line')[0]}"
            ) from None

    def get(self, dotted: str, default: Any = None) -> Any:
        node: Any = self._doc
        for part in dotted.split("."):
            if not hasattr(node, "get"):
                return default
            node = node.get(part)
            if node is None:
                return default
        return node.unwrap() if hasattr(node, "unwrap") else node

    def get_int(self, dotted: str, default: int) -> int:
        value = self.get(dotted, default)
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{self.path}: {dotted} must be an integer, got {value!r}")
        return value

    def table(self, dotted: str) -> dict[str, Any]:
        value = self.get(dotted, {})
        return dict(value) if isinstance(value, dict) else {}

    def set(self, dotted: str, value: Any) -> None:
        parts = dotted.split(".")
        node: Any = self._doc
        for part in parts[:-1]:
            if part not in node:
                node[part] = tomlkit.table()
            node = node[part]
        node[parts[-1]] = value

    def save(self) -> None:
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
