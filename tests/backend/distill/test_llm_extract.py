"""The LLM extractor against a real local server: it adds to the rules, never replaces them."""

from __future__ import annotations

import json

import pytest

from opmem_tui.backend.config import LlmSettings
from opmem_tui.backend.distill.extract import extract_rules
from opmem_tui.backend.distill.extract.llm import extract_llm
from opmem_tui.backend.distill.model import SessionBatch
from opmem_tui.backend.home import Home
from opmem_tui.backend.llm import ChatClient, TokenBudget

from .conftest import batches
from .llm_server import ChatServer, Reply

PROMPTS = [
    "We decided the worker should listen on port 18109. Ask Dana at Acme Corp if that clashes.",
    "Please rename handler.py to api.py",
    "Caroline said the demo is on Friday",
]


@pytest.fixture
def server():
    with ChatServer() as srv:
        yield srv


def conversation(home: Home) -> SessionBatch:
    parent = None
    for k, prompt in enumerate(PROMPTS):
        user = home.sessions.append_message("s1", "user", prompt, parent_id=parent, created_at=1_700_000_000.0 + k)
        reply = home.sessions.append_message("s1", "assistant", "Noted.", parent_id=user.id)
        parent = reply.id
    home.sessions.commit_turn("s1")
    [batch] = batches(home)
    return batch


def turn_reply(turn_id: str, **parts) -> dict:
    return {"turn": turn_id, **parts}


def client(server: ChatServer, **overrides) -> ChatClient:
    settings = LlmSettings(base_url=server.base_url, model="m", max_retries=1, **overrides)
    return ChatClient(settings, backoff_s=0.01, sleep=lambda s: None)


def test_good_reply_adds_checked_records(tmp_path, server: ChatServer):
    batch = conversation(Home(tmp_path / "h"))
    first = batch.turns[0].anchor.id
    server.default = Reply(
        json.dumps(
            {
                "turns": [
                    turn_reply(
                        first,
                        entities=[
                            {"name": "worker", "type": "service"},
                            {"name": "Dana", "type": "person"},
                            {"name": "Acme Corp", "type": "organisation"},
                            {"name": "Globex", "type": "organisation"},  # not in the turn: left out
                            {"name": "port", "type": "spaceship"},  # unknown type: left out
                        ],
                        relations=[
                            {"from": "Dana", "relation": "Works At", "to": "Acme Corp", "confidence": 0.95},
                            {"from": "Dana", "relation": "knows", "to": "Globex"},  # an end left out
                        ],
                        events=[{"summary": "Team decided the worker listens on 18109", "kind": "decision"}],
                    )
                ]
            }
        )
    )
    with client(server, batch_size=8) as c:
        outcome = extract_llm(batch, c, TokenBudget(100_000), ingestion_time=5.0, batch_size=8)
    assert (outcome.batches, outcome.failed) == (1, 0) and outcome.tokens == 120
    names = {(e.type, e.name) for e in outcome.extraction.entities}
    assert names == {("service", "worker"), ("person", "Dana"), ("organisation", "Acme Corp")}
    [edge] = outcome.extraction.edges
    assert edge.relation == "works-at" and edge.confidence == 0.8  # capped: an LLM edge is never certain
    [event] = outcome.extraction.events
    assert event.kind == "decision" and event.key.startswith(f"llm:decision:s1:{first}:")
    assert event.provenance.node_ids[0] == first
    rules = extract_rules(batch, ingestion_time=5.0)
    merged = rules.merged(outcome.extraction)
    assert {e.id for e in rules.entities} <= {e.id for e in merged.entities}
    assert {e.id for e in rules.events} <= {e.id for e in merged.events}


@pytest.mark.parametrize(
    "replies, problem",
    [
        ([Reply('{"turns": [ {"turn": "x", }]}')], "not valid JSON"),
        ([Reply('{"turns": [{"entities": []}]}')], "'turn' is a required property"),
        ([Reply(status=429, body="{}"), Reply(status=429, body="{}")], "HTTP 429"),
        ([Reply(hang=True), Reply(hang=True)], "timed out"),
    ],
)
def test_a_failed_batch_keeps_the_rules_result(tmp_path, server: ChatServer, replies, problem):
    batch = conversation(Home(tmp_path / "h"))
    server.replies.extend(replies)
    with client(server, timeout_s=0.3) as c:
        outcome = extract_llm(batch, c, TokenBudget(100_000), ingestion_time=5.0, batch_size=8)
    assert outcome.failed == 1 and outcome.extraction.entities == () and outcome.extraction.events == ()
    assert problem in outcome.extraction.notes[0]


def test_429_then_success_is_retried(tmp_path, server: ChatServer):
    batch = conversation(Home(tmp_path / "h"))
    server.replies.extend([Reply(status=429, body="{}"), Reply(json.dumps({"turns": []}))])
    with client(server) as c:
        outcome = extract_llm(batch, c, TokenBudget(100_000), ingestion_time=5.0)
    assert (outcome.batches, outcome.failed) == (1, 0) and len(server.requests) == 2


def test_the_budget_stops_the_calls_and_the_rest_keeps_the_rules(tmp_path, server: ChatServer):
    batch = conversation(Home(tmp_path / "h"))
    server.default = Reply(json.dumps({"turns": []}), usage=(900, 100))
    with client(server) as c:
        budget = TokenBudget(3500)
        outcome = extract_llm(batch, c, budget, ingestion_time=5.0, batch_size=1)
    # one turn a call, each estimated at about 1,800 tokens (prompt + max_tokens) and charged
    # 1,000 (the usage the server reports): two fit, then 1,500 are left, too few for a third
    assert len(server.requests) == 2 and budget.used == 2000
    assert outcome.failed == 1 and "token budget spent" in outcome.extraction.notes[0]


def test_a_run_with_the_llm_keeps_every_rules_record(tmp_path, server: ChatServer):
    from opmem_tui.backend.distill.pipeline import RunOptions, run

    home = Home(tmp_path / "h")
    home.path.mkdir(parents=True)
    (home.path / "config.toml").write_text(f'[llm]\nbase_url = "{server.base_url}"\nmodel = "m"\nmax_retries = 0\n')
    batch = conversation(home)
    rules = extract_rules(batch, ingestion_time=5.0)
    first = batch.turns[0].anchor.id
    server.default = Reply(
        json.dumps({"turns": [turn_reply(first, events=[{"summary": "The worker moves to 18109", "kind": "event"}])]})
    )
    report = run(home, RunOptions(llm=True, project=False))
    assert report.llm_batches == 1 and report.llm_failed == 0 and report.tokens == 120
    stored = {e.summary for e in home.memory.timeline(limit=None).events}
    assert {e.summary for e in rules.events} | {"The worker moves to 18109"} == stored
    # the endpoint down: the run still writes the rules' records and says what happened
    server.default = Reply(status=503, body="{}")
    again = run(home, RunOptions(llm=True, again=True, project=False))
    assert again.llm_failed == 1 and "kept the rules' result" in again.notes[0]


def test_the_llm_gives_the_briefs_facts_checked_against_the_turn(tmp_path, server: ChatServer):
    home = Home(tmp_path / "h")
    user = home.sessions.append_message(
        "s1",
        "user",
        "Let's move the tests from Jest to Vitest; run them with `pnpm vitest run`. Always use named exports. "
        "The API key is read from STRIPE_KEY.",
        created_at=1_700_000_000.0,
    )
    home.sessions.append_message("s1", "assistant", "Done.", parent_id=user.id)
    home.sessions.commit_turn("s1")
    [batch] = batches(home)
    facts = [
        {"kind": "replacement", "name": "Vitest", "replaces": "Jest", "category": "test-framework"},
        {"kind": "command", "name": "pnpm vitest run", "command_kind": "test"},
        {"kind": "convention", "name": "Always use named exports"},
        {"kind": "env-var", "name": "STRIPE_KEY"},
        {"kind": "stack", "name": "Django", "category": "web-framework"},  # not in the turn: left out
        {"kind": "env-var", "name": "sk_live_123"},  # not a name: left out
    ]
    server.default = Reply(json.dumps({"turns": [turn_reply(user.id, facts=facts)]}))
    with client(server) as c:
        outcome = extract_llm(batch, c, TokenBudget(100_000), ingestion_time=5.0)
    assert outcome.failed == 0
    names = {e.id: e.name for e in outcome.extraction.entities}
    edges = {(e.relation, names[e.to_id]) for e in outcome.extraction.edges}
    assert edges == {
        ("dropped", "Jest"),
        ("uses", "Vitest"),
        ("test-framework", "Vitest"),
        ("test-command", "pnpm vitest run"),
        ("convention", "Always use named exports"),
        ("env-var", "STRIPE_KEY"),
    }
    assert all(e.confidence <= 0.8 for e in outcome.extraction.edges)


def test_an_llm_replacement_that_names_no_old_one_takes_the_slot(tmp_path, server: ChatServer):
    home = Home(tmp_path / "h")
    user = home.sessions.append_message(
        "s1", "user", "We migrated the database to PostgreSQL and use Vitest now.", created_at=1_700_000_000.0
    )
    home.sessions.append_message("s1", "assistant", "Noted.", parent_id=user.id)
    home.sessions.commit_turn("s1")
    [batch] = batches(home)
    facts = [
        {"kind": "replacement", "name": "PostgreSQL", "category": "database"},
        {"kind": "replacement", "name": "Vitest", "replaces": "Jest", "category": "test-framework"},  # Jest unsaid
        {"kind": "replacement", "name": "Docker", "category": "infra"},  # no slot to take: nothing replaced
    ]
    server.default = Reply(json.dumps({"turns": [turn_reply(user.id, facts=facts)]}))
    with client(server) as c:
        outcome = extract_llm(batch, c, TokenBudget(100_000), ingestion_time=5.0)
    names = {e.id: e.name for e in outcome.extraction.entities}
    edges = {(e.relation, names[e.to_id]) for e in outcome.extraction.edges}
    assert edges == {
        ("database", "PostgreSQL"),
        ("uses", "PostgreSQL"),
        ("uses", "Vitest"),
        ("test-framework", "Vitest"),
    }


def test_a_reply_whose_facts_break_the_schema_keeps_the_rules_result(tmp_path, server: ChatServer):
    batch = conversation(Home(tmp_path / "h"))
    bad = {"turns": [turn_reply(batch.turns[0].anchor.id, facts=[{"kind": "stack", "name": "x", "category": "car"}])]}
    server.default = Reply(json.dumps(bad))
    with client(server) as c:
        outcome = extract_llm(batch, c, TokenBudget(100_000), ingestion_time=5.0)
    assert outcome.failed == 1 and not outcome.extraction.edges
