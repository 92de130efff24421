"""Which rules a session gets: every imported agent's sessions are coding sessions."""

from __future__ import annotations

from opmem_tui.backend.distill.collect import CODING_SOURCES
from opmem_tui.backend.distill.model import CODING
from opmem_tui.backend.home import Home
from opmem_tui.backend.importers import SOURCES

from .conftest import batches, extract_all


def test_every_coding_agent_opmem_imports_is_a_coding_source():
    assert {importer.source for importer in SOURCES.values() if importer.coding} <= CODING_SOURCES
    assert not {"jsonl", "chatgpt", "claude-ai"} & CODING_SOURCES  # conversations may be personal


def test_a_question_in_an_agents_chat_is_not_a_personal_conversation(home: Home):
    # Cursor's chat, no tool call, no folder: it was read with the LoCoMo-style rules, which made
    # "the assistant ──does──► updating" and events that quote "the user: ...".
    store = home.sessions
    user = store.append_message("c1", "user", "how do I keep the header color when updating the theme?")
    store.append_message("c1", "assistant", "I'm updating the theme file and running the build.", parent_id=user.id)
    store.update_session("c1", source="cursor")
    store.commit_turn("c1")
    [batch] = batches(home)
    assert batch.session.kind == CODING
    [extraction] = extract_all(home).values()
    assert not [e for e in extraction.edges if e.relation == "does"]
    assert not [e for e in extraction.events if e.summary.startswith(("the user:", "the assistant:"))]
