from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from opmem_tui.backend.recall.context import Recall, recall_for
from opmem_tui.backend.recall.registry import call_json

from .stores import T0, Built, build_store


@pytest.fixture
def built(tmp_path: Path) -> Built:
    return build_store(tmp_path)


@pytest.fixture
def recall(built: Built) -> Recall:
    return recall_for(built.home, cwd=built.workdir, now=T0 + 400)


def ask(recall: Recall, name: str, **args: Any) -> dict[str, Any]:
    """Call a tool the way front ends do; the JSON reply must fit the budget."""
    text, is_error = call_json(recall, name, args)
    assert len(text.encode("utf-8")) <= recall.max_reply_bytes
    reply = json.loads(text)
    assert is_error == ("error" in reply)
    return reply
