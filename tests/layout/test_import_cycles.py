"""No import cycle among the backend's modules, lazy imports (inside functions) counted: a
package never imports back into one that imports it; what spans packages sits above them
(backend/orchestration.py). Imports under `if TYPE_CHECKING:` do not run and do not count."""

from __future__ import annotations

from .import_graph import cycles, graph


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_the_backend_has_no_import_cycle() -> None:
    edges = graph()
    assert len(edges) > 150 and sum(map(len, edges.values())) > 500  # the tree was read
    found = cycles(edges)
    shown = "\n".join(
        " <-> ".join(m.removeprefix("opmem_tui.backend.") for m in group)
        + "".join(f"\n    {m} -> {sorted(edges[m] & set(group))}" for m in group)
        for group in found
    )
    assert not found, f"import cycles (strongly connected groups of modules):\n{shown}"


# Package-level edges left on purpose: to leaf modules (they import nothing of the backend but
# each other): how a folder names its project, read by the exclusions as by the projects.
LEAF_EDGES = {
    ("opmem_tui.backend.privacy.exclusions", "opmem_tui.backend.projects.folders"),
    ("opmem_tui.backend.privacy.exclusions", "opmem_tui.backend.projects.identity"),
}


def package_of(module: str) -> str:
    """The backend's package (or top-level module) a module belongs to: `memory`, `home`."""
    return module.removeprefix("opmem_tui.backend.").partition(".")[0] or "__init__"


def test_no_package_of_the_backend_imports_back_into_one_that_imports_it() -> None:
    edges = graph()
    packages: dict[str, set[str]] = {}
    why: dict[tuple[str, str], list[str]] = {}
    for module, targets in edges.items():
        packages.setdefault(package_of(module), set())
        for target in targets:
            a, b = package_of(module), package_of(target)
            if a != b and (module, target) not in LEAF_EDGES:
                packages[a].add(b)
                why.setdefault((a, b), []).append(f"{module} -> {target}")
    leaves = {b for _a, b in LEAF_EDGES}
    assert all(edges[b] <= leaves for b in leaves if b in edges)  # still leaves
    found = cycles(packages)
    shown = "\n".join(
        " <-> ".join(group) + "".join(f"\n    {w}" for a in group for b in group for w in why.get((a, b), [])[:3])
        for group in found
    )
    assert not found, f"packages importing back into one that imports them:\n{shown}"
