"""No import cycle among the backend's modules, lazy imports (inside functions) counted: a
package never imports back into one that imports it; what spans packages sits above them
(backend/orchestration.py). Imports under `if TYPE_CHECKING:` do not run and do not count."""

from __future__ import annotations

from .import_graph import cycles, graph

# Cycles inside a part being reworked on another branch of issue 38 (remove the line when it lands):
# distill/extract's coding <-> knowledge (the `extract` branch splits knowledge.py).
PENDING = ("opmem_tui.backend.distill.extract.",)


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_the_backend_has_no_import_cycle() -> None:
    edges = graph()
    assert len(edges) > 150 and sum(map(len, edges.values())) > 500  # the tree was read
    found = [c for c in cycles(edges) if not all(m.startswith(PENDING) for m in c)]
    shown = "\n".join(
        " <-> ".join(m.removeprefix("opmem_tui.backend.") for m in group)
        + "".join(f"\n    {m} -> {sorted(edges[m] & set(group))}" for m in group)
        for group in found
    )
    assert not found, f"import cycles (strongly connected groups of modules):\n{shown}"
