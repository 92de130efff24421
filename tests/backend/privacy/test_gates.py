"""Each gate alone: where session text is cut, it is masked first (half a value is no longer
found by the detector, yet still half a secret)."""

from __future__ import annotations

import json

from opmem_tui.backend.config import LlmSettings
from opmem_tui.backend.distill.titles import conversation_excerpt
from opmem_tui.backend.llm import ChatClient
from opmem_tui.backend.memory.index_update import TOOL_CHARS, tool_text
from opmem_tui.backend.memory.snippets import Snippets
from opmem_tui.backend.model import Node
from opmem_tui.backend.projects.agent_commit import agent_message
from opmem_tui.backend.recall.reply import cut_text
from tests.app.secret_sessions import COMMIT, GITHUB, OPENAI, UUID, leaks
from tests.backend.distill.llm_server import ChatServer, Reply


def test_an_agent_commit_in_the_users_repo_never_quotes_a_value() -> None:
    message = agent_message("s1", 3, f"GITHUB_TOKEN={GITHUB} deploy it")
    assert not leaks(message) and "[secret:github-token#" in message
    assert message.startswith("[agent s1] turn 3: GITHUB_TOKEN=[secret:")


def test_a_value_on_the_index_cut_is_masked_not_halved() -> None:
    pad = "x " * ((TOOL_CHARS - 20) // 2)
    node = Node(
        id="t",
        seq=2,
        role="tool",
        called_by="a",
        name="Bash",
        input={"command": f"{pad}curl -H 'Authorization: Bearer {OPENAI}'"},
    )
    text = tool_text(node)
    assert len(text) <= TOOL_CHARS and not leaks(text)


def test_a_snippet_window_never_holds_half_a_value(tmp_path) -> None:
    text = ("word " * 30) + f"GITHUB_TOKEN={GITHUB} " + ("more " * 30) + COMMIT
    snippets = Snippets(store=None, width=60)  # type: ignore[arg-type]  # around() reads no store
    for terms in (["word"], ["more"], ["github_token"]):
        assert not leaks(snippets.around(text, terms))
    assert COMMIT[:20] in snippets.around(text, [COMMIT])


def test_the_title_excerpt_is_masked_before_it_is_cut() -> None:
    nodes = [Node(id="u", seq=0, role="user", content=("a" * 1480) + f" {GITHUB}")]
    assert not leaks(conversation_excerpt(nodes, limit=1500))


def test_every_llm_request_body_is_masked_whoever_built_it() -> None:
    with ChatServer() as server:
        server.default = Reply("ok")
        client = ChatClient(LlmSettings(base_url=server.base_url, model="m", max_retries=0))
        try:
            client.chat([{"role": "user", "content": f"token {GITHUB} for run {UUID}"}])
        finally:
            client.close()
        body = json.dumps(server.requests[0])
    assert not leaks(body) and UUID in body and "[secret:github-token#" in body


def test_cutting_a_masked_reply_keeps_it_masked() -> None:
    from opmem_tui.backend.privacy import redact_text

    masked = redact_text("line\n" * 3 + f"GITHUB_TOKEN={GITHUB}\n")
    for chars in range(5, len(masked)):
        assert not leaks(cut_text(masked, max_lines=10, max_chars=chars).text)
