"""EntityFinder: fuzzy names and aliases, merged names folding onto their entity, and a reload
when new entities are appended."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from rapidfuzz import utils

from opmem_tui.backend.memory.entity_finder import SCORED, EntityFinder, NameIndex, rank
from opmem_tui.backend.memory.store import MemoryStore

from .sample import entity


def test_fuzzy_names_aliases_and_merges(tmp_path: Path):
    store = MemoryStore(tmp_path / "memory")
    middleware = entity("file", "src/auth/middleware.py")
    dotted = entity("file", "./src/auth/middleware.py")
    pg = entity("tool", "PostgreSQL", aliases=("postgres",))
    store.append([middleware, dotted, pg, entity("person", "Ann")])
    store.merge(middleware.id, dotted.id, "same path", score=0.9)
    finder = EntityFinder(store)

    found = finder.find("middlewar")
    assert found[0].id == middleware.id and found[0].matched == ""
    assert [m.id for m in found].count(middleware.id) == 1  # the merged record folds onto it
    via_merge = finder.find("./src/auth/middleware.py")
    assert via_merge[0].id == middleware.id and via_merge[0].name == "src/auth/middleware.py"
    alias = finder.find("postgres")
    assert alias[0].id == pg.id and alias[0].matched == "postgres"
    assert finder.find("") == () and finder.find("zzzzqqq") == ()
    assert len(finder.find("a", limit=1)) <= 1

    store.append([entity("service", "billing-api")])
    assert finder.find("billing")[0].name == "billing-api"  # the log changed: reloaded


def test_empty_memory_finds_nothing(tmp_path: Path):
    assert EntityFinder(MemoryStore(tmp_path / "memory")).find("anything") == ()


SYLLABLES = ("ka", "fo", "ri", "mel", "an", "to", "sql", "post", "gres", "re", "dis", "auth", "py", "ne", "lo", "ve")
WORDS = tuple(a + b + c for a in SYLLABLES[:8] for b in SYLLABLES for c in ("", "n", "er", "s"))


def made_up_names(rng: random.Random, count: int) -> list[str]:
    """Names like a memory holds: paths, identifiers, people, services, versions, phrases."""
    shapes = (
        lambda: f"src/{rng.choice(WORDS)}/{rng.choice(WORDS)}.py",
        lambda: "".join(w.capitalize() for w in rng.sample(WORDS, rng.randint(2, 3))),
        lambda: f"{rng.choice(WORDS).capitalize()} {rng.choice(WORDS).capitalize()}",
        lambda: "-".join(rng.sample(WORDS, 2)),
        lambda: f"{rng.choice(WORDS)} {rng.randint(1, 20)}.{rng.randint(0, 30)}",
        lambda: " ".join(rng.sample(WORDS, rng.randint(2, 4))),
    )
    return list(dict.fromkeys(rng.choice(shapes)() for _ in range(count)))


def queries_for(rng: random.Random, names: list[str]) -> list[str]:
    """What people type: a name a key at a time, with a typo, one word of it, words swapped."""
    out = []
    for name in rng.sample(names, 12):
        out += [name[:n] for n in range(1, len(name) + 1, 2)]
        cut = rng.randrange(len(name))
        out.append(name[:cut] + name[cut + 1 :])
        words = name.replace("/", " ").split()
        out.append(rng.choice(words))
        out.append(" ".join(reversed(words)))
    return out + [rng.choice(WORDS) for _ in range(10)] + ["zzzzqqq", "e", "s 1"]


STRONG = 90.0  # an exact word, a prefix, a near-exact typo: what must never go missing


def strong_scores_agree(ours: list[float], plain: list[float]) -> bool:
    """Every rank where a plain scan scores >= STRONG has the same score in ours. Below that,
    among hundreds of near-equal weak matches (one shared short word), the tails may differ."""
    strong = [s for s in plain if s >= STRONG]
    return ours[: len(strong)] == strong


@pytest.mark.parametrize("seed", [1, 2])
def test_prefilter_finds_what_a_plain_scan_finds(seed: int):
    """Scoring the shortlist (1 name in 20, as SCORED is of the bench's 40,000) ranks the
    strong matches like scoring every name; the same best hit whenever its score is unique."""
    rng = random.Random(seed)
    names = made_up_names(rng, 6_000)
    keys = [utils.default_process(name) for name in names]
    index = NameIndex(keys)
    limit = len(keys) // 20
    checked = 0
    for query in queries_for(rng, names):
        wanted = utils.default_process(query)
        if not wanted:
            continue
        ours = rank(wanted, keys, index.candidates(wanted, limit=limit), 30)
        plain = rank(wanted, keys, range(len(keys)), 30)
        assert strong_scores_agree([s for s, _ in ours], [s for s, _ in plain]), query
        if len(plain) > 1 and plain[0][0] > plain[1][0] and plain[0][0] >= STRONG:
            assert ours[0] == plain[0], query
            checked += 1
    assert checked > 10  # the unique-best case was met often enough to mean something


def test_finder_with_the_prefilter_on_answers_like_a_plain_scan(tmp_path: Path):
    rng = random.Random(5)
    names = made_up_names(rng, SCORED + 500)
    store = MemoryStore(tmp_path / "memory")
    store.append([entity(rng.choice(("file", "tool", "person")), name) for name in names])
    finder = EntityFinder(store)
    assert finder.load() > SCORED  # so find() scores a shortlist, not every name
    for query in queries_for(rng, names)[::3]:
        ours, plain = finder.find(query, 10), finder.find(query, 10, scan_all=True)
        assert strong_scores_agree([m.score for m in ours], [m.score for m in plain]), query
        assert len({m.id for m in ours}) == len(ours)
