"""Link (alias resolution) and reconcile (single-valued relations, duplicate events) on plain records."""

from __future__ import annotations

from opmem_tui.backend.distill.link import Known, acronym, compact, link, relink
from opmem_tui.backend.distill.memory_port import MemoryPort
from opmem_tui.backend.distill.model import Extraction, Linked, Reconciled
from opmem_tui.backend.distill.reconcile import reconcile, resolve_chain
from opmem_tui.backend.memory.records import Edge, Entity, Event, Patch, entity_id
from opmem_tui.backend.memory.store import MemoryStore
from opmem_tui.backend.model import Provenance


def ent(kind: str, name: str, **attrs) -> Entity:
    return Entity(entity_id(kind, name + attrs.pop("key", "")), kind, name, attrs=attrs)


def known(kind: str, name: str, **attrs) -> Known:
    return Known.of(ent(kind, name, **attrs))


def merges(new: list[Entity], stored: list[Known]) -> dict[str, tuple[str, str]]:
    """merged id -> (into id, reason)"""
    linked = link(Extraction(entities=tuple(new)), stored, at=5.0)
    return {m.merged: (m.into, m.reason) for m in linked.merges}


def test_names_that_differ_in_case_spacing_or_punctuation_merge():
    stored = [known("package", "LM Studio")]
    new = [ent("package", "lm-studio"), ent("package", "LMStudio"), ent("package", "lmstudio2")]
    found = merges(new, stored)
    assert found[new[0].id][0] == stored[0].id and "punctuation" in found[new[0].id][1]
    assert found[new[1].id][0] == stored[0].id
    assert new[2].id not in found
    assert compact("LM Studio") == compact("lm_studio") == "lmstudio"


def test_types_are_never_mixed():
    assert not merges([ent("place", "Phoenix")], [known("package", "phoenix")])


def test_path_forms_of_one_file_merge():
    stored = [known("file", "src/a.py", key="P::", path="/home/me/proj/src/a.py")]
    other_root = ent("file", "/home/me/proj/src/a.py", key="/tmp::", path="/home/me/proj/src/a.py")
    elsewhere = ent("file", "src/a.py", key="Q::", path="/home/me/other/src/a.py")
    found = merges([other_root, elsewhere], stored)
    assert found == {other_root.id: (stored[0].id, "same path /home/me/proj/src/a.py")}


def test_acronyms_merge_only_when_one_long_form_fits():
    assert acronym("World Health Organization") == "WHO" and acronym("Department of Energy") == "DE"
    stored = [known("organisation", "World Health Organization")]
    who = ent("organisation", "WHO")
    assert merges([who], stored)[who.id] == (stored[0].id, "acronym of World Health Organization")
    stored.append(known("organisation", "Wildlife Heritage Office"))
    assert not merges([who], stored)


def test_short_forms_of_people_and_fuzzy_names():
    stored = [known("person", "Melanie"), known("person", "Caroline Smith")]
    mel, typo, close = ent("person", "Mel"), ent("person", "Carolline Smith"), ent("person", "Carolina")
    found = merges([mel, typo, close], stored)
    assert found[mel.id] == (stored[0].id, "short form of Melanie")
    assert found[typo.id][0] == stored[1].id and found[typo.id][1].startswith("similar name (97%")
    assert close.id not in found  # 87.5 < 92
    # two people whose names start alike: "Ann" could be either, so it is left alone
    assert not merges([ent("person", "Ann")], [known("person", "Anna"), known("person", "Annie")])


def test_link_is_deterministic_and_relink_finds_old_pairs():
    stored = [known("package", "scikit-learn")]
    new = [ent("package", "scikit_learn")]
    assert link(Extraction(entities=tuple(new)), stored, at=1.0) == link(
        Extraction(entities=tuple(new)), stored, at=1.0
    )
    pairs = relink([known("tool", "WebFetch"), known("tool", "web_fetch"), known("tool", "Bash")], at=2.0)
    assert [(m.reason, m.into != m.merged) for m in pairs] == [("same name up to case, spacing and punctuation", True)]


def prov(t: float, node: str = "n1", session: str = "s1") -> Provenance:
    return Provenance("", session, (node,), None, t, t + 1000)


def edge(src: str, rel: str, dst: str, t: float, node: str = "n1", scope: str = "global") -> Edge:
    p = prov(t, node)
    return Edge(Edge.make_id(src, rel, dst, p), src, dst, rel, p, 1.0, scope)


def test_a_newer_value_retires_the_old_and_a_late_older_one_never_retires_the_current():
    old = edge("worker", "listens-on", ":4000", 10.0, "a")
    new = edge("worker", "listens-on", ":4001", 20.0, "b")
    patches, found = resolve_chain([new, old], at=99.0)
    assert [(p.id, p.by) for p in patches] == [(old.id, new.id)]
    assert found[0].kept == new.id and found[0].retired == old.id
    # ingested late with an older event_time: it is the one retired, by the current value
    late = edge("worker", "listens-on", ":3000", 5.0, "c")
    stored = {("worker", "listens-on"): [new]}
    result = reconcile(
        Linked(Extraction(edges=(late,))),
        current_edges=lambda s, r, sc: stored.get((s, r), []),
        current_events=lambda key: (),
        at=100.0,
    )
    assert [(p.id, p.by) for p in result.edge_patches] == [(late.id, new.id)]
    assert len(result.contradictions) == 1


def test_a_restated_value_retires_nothing_and_a_change_retires_each_statement():
    first = edge("worker", "listens-on", ":4000", 10.0, "a")
    again = edge("worker", "listens-on", ":4000", 15.0, "b")
    assert resolve_chain([again, first, first], at=99.0) == ([], [])
    new = edge("worker", "listens-on", ":4001", 20.0, "c")
    patches, found = resolve_chain([new, again, first], at=99.0)
    assert [(p.id, p.by) for p in patches] == [(first.id, new.id), (again.id, new.id)]
    assert [(c.retired, c.kept) for c in found] == [(first.id, new.id), (again.id, new.id)]


def test_the_port_reads_one_subject_stored_and_staged_without_what_a_staged_patch_retires(tmp_path):
    memory = MemoryStore(tmp_path)
    old = edge("worker", "listens-on", ":4000", 10.0, "a")
    other = edge("api", "listens-on", ":5000", 11.0, "b")
    with memory.batch() as writer:
        writer.append([old, other])
    port = MemoryPort(memory)
    assert [e.id for e in port.current_edges("worker", "listens-on", "global")] == [old.id]
    new = edge("worker", "listens-on", ":4001", 20.0, "c")
    port.stage(Reconciled(Linked(Extraction(edges=(new,))), edge_patches=(Patch(old.id, new.id, 30.0, "newer"),)))
    assert [e.id for e in port.current_edges("worker", "listens-on", "global")] == [new.id]
    assert [e.id for e in port.current_edges("api", "listens-on", "global")] == [other.id]
    assert port.current_edges("nobody", "listens-on", "global") == ()
    port.flush()
    memory.refresh()
    assert [e.id for e in port.current_edges("worker", "listens-on", "global")] == [new.id]  # read again from the store


def test_only_single_valued_relations_in_one_scope_contradict():
    a = edge("me", "uses", "vim", 1.0, "a")
    b = edge("me", "uses", "emacs", 2.0, "b")
    c = edge("me", "lives-in", "Paris", 3.0, "c", scope="project:p")
    d = edge("me", "lives-in", "Rome", 4.0, "d", scope="project:q")
    same = edge("me", "lives-in", "Paris", 5.0, "e", scope="project:p")
    stored = {("me", "lives-in"): [c, d]}
    result = reconcile(
        Linked(Extraction(edges=(a, b, same))),
        current_edges=lambda s, r, sc: stored.get((s, r), []),
        current_events=lambda key: (),
        at=9.0,
    )
    assert result.edge_patches == () and result.contradictions == ()  # a restatement is no contradiction


def event(summary: str, t: float, key: str, nodes=("u1",)) -> Event:
    p = Provenance("", "s1", tuple(nodes), None, t, t)
    return Event(Event.make_id(summary, "work", p), summary, "work", 0.5, p, key=key)


def test_a_re_distilled_event_supersedes_its_older_copy_only():
    old = event("Read a.py", 10.0, "work:s1:u1", ("u1", "t1"))
    other = event("Read b.py", 11.0, "work:s1:u2", ("u2",))
    grown = event("Edited a.py and read a.py", 12.0, "work:s1:u1", ("u1", "t1", "t2"))
    stored = {e.key: [e] for e in (old, other)}
    result = reconcile(
        Linked(Extraction(events=(grown,))),
        current_edges=lambda s, r, sc: [],
        current_events=lambda key: stored.get(key, []),
        at=20.0,
    )
    assert [(p.id, p.by) for p in result.event_patches] == [(old.id, grown.id)]
    # the same copy again (a rerun) patches nothing
    stored[grown.key] = [grown]
    again = reconcile(
        Linked(Extraction(events=(grown,))),
        current_edges=lambda s, r, sc: [],
        current_events=lambda key: stored.get(key, []),
        at=21.0,
    )
    assert again.event_patches == ()
