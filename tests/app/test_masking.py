"""The data layer's masking (opmem_tui/masking.py) over real stores: what every pane gets has
each secret as its marker, detection runs once per message, ids stay readable."""

from __future__ import annotations

from pathlib import Path

import pygit2

from opmem_tui.backend.model import Node, Turn
from opmem_tui.data import StoreData
from opmem_tui.masking import NodeMasks, mask, mask_node

from .sample_store import NOW, _commit, fresh_home
from .secret_store import AWS, GIT_HASH, GITHUB, OPENAI, SECRETS, SID, UUID, build_secret_store


def everything(data) -> str:
    return repr(data)


def test_every_read_of_a_session_comes_masked_with_its_originals_aside(tmp_path):
    home = build_secret_store(tmp_path / "store")
    data = StoreData(fresh_home(home.path))
    replay = data.replay(SID, None, {})
    assert not any(secret in everything(replay.turns) for secret in SECRETS)
    assert not any(secret in everything(replay.meta) for secret in SECRETS)
    assert GIT_HASH in everything(replay.turns) and UUID in everything(replay.turns)
    originals = replay.originals
    assert {n.role for n in originals.values()} == {"user", "assistant", "tool"}
    assert all(secret in everything(originals) for secret in SECRETS)
    # The first paint, a read-only commit view, the listing, history and branch previews too.
    first = data.last_turn(SID, {})
    history = data.history(SID)
    listing = data.listing()
    commit = next(c for c in history.commits if c.turn == 1)
    at_commit = data.commit_view(SID, commit.oid, {})
    branches = data.branch_choices(SID, 1, replay.turns[0].fork_heads, None)
    for shown in (first.turns, first.meta, history, listing, at_commit.turns, branches):
        text = everything(shown)
        assert not any(secret in text for secret in SECRETS), shown
        assert GITHUB[:12] not in text and AWS[:8] not in text  # no cut token either
    assert "[secret:aws-access-key#" in everything(branches)
    assert "[secret:github-token#" in history.title


def test_detection_runs_once_per_message_across_reloads():
    nodes = tuple(Node(id=f"n{i}", seq=i, role="user", content=f"text {i} {GITHUB if i % 2 else ''}") for i in range(6))
    masks = NodeMasks()
    first = masks.turns("s", [Turn(1, nodes)])
    assert masks.detections == 6 and set(first.originals) == {"n1", "n3", "n5"}
    # A reload reads the files again: equal nodes, new objects; none is detected again.
    again = masks.turns("s", [Turn(1, tuple(Node(**{f: getattr(n, f) for f in n.__slots__}) for n in nodes))])
    assert masks.detections == 6
    assert [n.content for n in again.turns[0].nodes] == [n.content for n in first.turns[0].nodes]
    assert set(again.originals) == {"n1", "n3", "n5"}
    # A node that changed (same id) is masked again; another session has its own entries.
    changed = Node(id="n0", seq=0, role="user", content=f"now {AWS}")
    assert AWS not in masks.turns("s", [Turn(1, (changed,))]).turns[0].nodes[0].content
    masks.turns("t", [Turn(1, nodes)])
    assert masks.detections == 6 + 1 + 6


def test_short_texts_lose_cut_tokens_and_keep_markers_and_ids():
    assert mask(f"turn 1: push with {GITHUB[:30]}") == f"turn 1: push with [secret:github-token#{mask_fp(GITHUB[:30])}]"
    assert "[secret:aws-access-key#" in mask(f"key {AWS[:12]}…")
    assert "[secret:openai-key#" in mask(f"Bearer {OPENAI[:20]}")
    for ordinary in (
        "uses sk-learn-contrib",
        f"commit {GIT_HASH}",
        f"run {UUID}",
        "an AKIAbook",
        "ghp_ prefix alone",
    ):
        assert mask(ordinary) == ordinary
    marked = "already [secret:github-token#3f9a] masked"
    assert mask(marked) == marked
    node = Node(
        id="x", seq=1, role="user", content=f"{marked} and {AWS}", metadata={"thinking": f"[secret:jwt#0000] {AWS}"}
    )
    masked = mask_node(node)
    assert masked.content.startswith(marked) and AWS not in masked.content
    assert masked.metadata["thinking"].startswith("[secret:jwt#0000] [secret:aws-access-key#")


def mask_fp(value: str) -> str:
    from opmem_tui.backend.privacy import fingerprint

    return fingerprint(value)


def test_project_commits_and_diffs_come_masked(tmp_path):
    home = build_secret_store(tmp_path / "store")
    work = Path(tmp_path / "proj")
    work.mkdir()
    repo = pygit2.init_repository(str(work), initial_head="main")
    agent = ("agent (claude-sonnet-4 via opmem)", "agent@opmem.invalid")
    message = f"[agent {SID}] turn 1: Push the release with my token {GITHUB[:29]}\n\nOpmem-Turn: 1\n"
    body = "".join(f"TUlJRXZRSUJBREFOQmdrcWhraUc5dzBCQVFFRkFBU0NCS2N3Z2dTakFnRUFBb0lC{n:04d}\n" for n in range(12))
    key = f"-----BEGIN RSA PRIVATE KEY-----\n{body}-----END RSA PRIVATE KEY-----\n"
    _commit(repo, {"deploy.env": f"GITHUB_TOKEN={GITHUB}\nRUN={UUID}\n", "id_rsa": key}, message, NOW, agent)
    project = home.projects.resolve_project(work, "proj")
    data = StoreData(fresh_home(home.path))
    page = data.commit_page(project.id, None, {})
    assert len(page.commits) == 1
    text = everything(page)
    assert GITHUB[:12] not in text and "my token [secret:github-token#" in text
    detail = data.commit_detail(project.id, page.commits[0].oid)
    text = everything(detail)
    assert GITHUB[:12] not in text
    assert "GITHUB_TOKEN=[secret:github-token#" in text and UUID in text
    assert "TUlJRXZRSUJBREFOQmdrcWhraUc5dzBC" not in text  # a key block over many diff lines
    assert "[secret:private-key#" in text


def test_a_long_text_is_masked_in_pieces_as_it_would_be_whole():
    from opmem_tui.backend.privacy import redact_text
    from opmem_tui.masking import CHUNK, redact_long

    line = "src/app/module.py:12: a fairly ordinary line of grep output here\n"
    leak = f"env.py:3: GITHUB_TOKEN = '{GITHUB}'\n"
    lines = "".join(leak if n % 37 == 0 else line for n in range(3 * CHUNK // len(line)))
    pem = (
        "-----BEGIN RSA PRIVATE KEY-----\n"
        + ("QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo" * 2 + "\n") * (CHUNK // 40)
        + "-----END RSA PRIVATE KEY-----\n"
    )
    one_line = ('{"note": "' + "x" * 90 + f'", "key": "{AWS}"}}, ') * (3 * CHUNK // 120)
    for text in (lines, "x\n" * (CHUNK // 3) + pem + f"after {OPENAI}\n", one_line):
        assert len(text) > 2 * CHUNK
        masked = redact_long(text)
        assert masked == redact_text(text)
        assert not any(secret in masked for secret in SECRETS)
    assert "-----BEGIN RSA PRIVATE KEY-----" not in redact_long("x\n" * (CHUNK // 3) + pem)
