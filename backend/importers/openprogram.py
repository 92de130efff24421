"""OpenProgram session folders (``<state>/sessions/<id>/history/NNNN-<r>-<id>.json``) -> ImportedSession.

Where they live: ``~/.openprogram/`` or ``~/.openprogram-<profile>/`` (``sessions/``, once
``sessions-git/``), plus project folders ``<project>/.openprogram/sessions/<id>/`` listed in
``<state>/sessions/locations.json``. ask_user IPC folders (a meta.json with question/pid, no
``history/``) share the tree and are skipped.

One node file = one ``Call``. Three field layouts are read:

==============  ===================  ======================================
era             sub-call edge        chat edge
==============  ===================  ======================================
to 2026-06-29   ``called_by``        ``metadata.parent_id``
to 2026-08-02   ``caller``           ``metadata.predecessor``
since           ``caller``           top-level ``predecessor``
==============  ===================  ======================================

Roles: user -> user, llm -> assistant, code -> tool (a code node on the chat chain, a
top-level function run, -> system). ``"ROOT"`` is both the sentinel node (skipped) and the
edge value meaning "none". Text over 32,000 characters is spilled to
``large_nodes/<seq>-<id>.txt`` and read back from there. Files sort by their JSON ``seq``,
not by name (the 4-digit name stops sorting at 10000).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from types import MappingProxyType
from typing import Any

from .base import ImportedSession, Importer, ImportFormatError, ImportReport, is_final
from .drafts import Draft, DraftGraph
from .shape import Probe, Shape

SOURCE = "openprogram"
ROOT = "ROOT"
ROLE_MAP = {
    "user": "user",
    "llm": "assistant",
    "assistant": "assistant",
    "code": "tool",
    "tool": "tool",
    "system": "system",
}
STATE_GLOBS = (".openprogram", ".openprogram-*")


# ---------------------------------------------------------------------------------------------
# the node parser


def parse_node(data: Any) -> dict[str, Any]:
    """A history file's JSON -> normalized fields. Raises only ImportFormatError."""
    if not isinstance(data, dict):
        raise ImportFormatError("node file is not a JSON object")
    node_id = data.get("id")
    if not isinstance(node_id, str) or not node_id:
        raise ImportFormatError("node has no 'id'")
    role = data.get("role")
    if not isinstance(role, str) or role not in ROLE_MAP:
        raise ImportFormatError(f"node {node_id!r} has an unknown role {role!r}")
    seq = data.get("seq", -1)
    if isinstance(seq, bool) or not isinstance(seq, int):
        raise ImportFormatError(f"node {node_id!r}: 'seq' must be an integer")
    meta = data.get("metadata") or {}
    if not isinstance(meta, dict):
        raise ImportFormatError(f"node {node_id!r}: 'metadata' must be an object")
    caller = _edge(data.get("caller", data.get("called_by")), "caller")
    if "predecessor" in data:
        predecessor, era = _edge(data.get("predecessor"), "predecessor"), "predecessor"
    elif "predecessor" in meta:
        predecessor, era = _edge(meta.get("predecessor"), "metadata.predecessor"), "metadata.predecessor"
    elif "parent_id" in meta:
        predecessor, era = _edge(meta.get("parent_id"), "metadata.parent_id"), "metadata.parent_id"
    else:
        predecessor, era = None, "none"
    created = data.get("created_at", 0.0)
    name = data.get("name")
    output = data.get("output", data.get("content"))
    return {
        "id": node_id,
        "role": role,
        "seq": seq,
        "name": name if isinstance(name, str) else "",
        "input": data.get("input"),
        "output": output,
        "caller": caller,
        "predecessor": predecessor,
        "edge_era": era,
        "created_at": float(created) if isinstance(created, (int, float)) and not isinstance(created, bool) else 0.0,
        "metadata": meta,
        "reads": data.get("reads") if isinstance(data.get("reads"), list) else [],
    }


def _edge(value: Any, field: str) -> str | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise ImportFormatError(f"'{field}' must be a node id")
    return value


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


def _arguments(value: Any) -> Any:
    if isinstance(value, str) and value[:1] in ("{", "["):
        try:
            return json.loads(value)
        except (ValueError, RecursionError):
            return value
    return value


# ---------------------------------------------------------------------------------------------
# a session folder


def is_session_dir(path: Path) -> bool:
    return (path / "history").is_dir()


def is_ipc_dir(path: Path) -> bool:
    """An ask_user IPC folder: meta.json with a question and a pid, and no history/."""
    if (path / "history").exists():
        return False
    try:
        meta = json.loads((path / "meta.json").read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return False
    return isinstance(meta, dict) and "question" in meta and "pid" in meta


def read_session(folder: Path, report: ImportReport, *, live: bool = False) -> ImportedSession | None:
    meta = _read_meta(folder, report)
    graph = _graph(folder, _read_nodes(folder, report), report, live)
    nodes = graph.nodes(end_offset=0, live=live)
    if not nodes and not meta:
        return None
    head = meta.get("head_id") if isinstance(meta.get("head_id"), str) else None
    if head not in graph.by_id:
        chain = [d for d in graph.drafts if d.called_by is None]
        head = chain[-1].id if chain else None
    extra: dict[str, Any] = {"end_offset": 0, "folder": str(folder)}
    if isinstance(meta.get("title"), str) and meta["title"]:
        extra["title_source"] = "llm" if meta.get("_auto_titled") else "user"
    for key in ("project_id", "agent_id", "source", "status", "branches", "channel", "created_at", "updated_at"):
        if key in meta:
            extra[f"openprogram_{key}" if key == "source" else key] = meta[key]
    return ImportedSession(
        source=SOURCE,
        native_id=meta.get("id") if isinstance(meta.get("id"), str) and meta.get("id") else folder.name,
        source_file=str(folder),
        nodes=nodes,
        title=meta.get("title") if isinstance(meta.get("title"), str) else "",
        cwd=_work_dir(folder, meta),
        model=meta.get("model") if isinstance(meta.get("model"), str) else graph.last_model(),
        head=graph.visible_head(head),
        extra=MappingProxyType(extra),
    )


def _read_nodes(folder: Path, report: ImportReport) -> dict[str, dict[str, Any]]:
    """The node files by id, in seq order; unreadable files and repeated ids are warnings."""
    parsed: list[dict[str, Any]] = []
    for file in sorted((folder / "history").glob("*.json")):
        try:
            parsed.append(parse_node(json.loads(file.read_text(encoding="utf-8"))))
        except (OSError, UnicodeDecodeError) as exc:
            report.warn(file, None, f"cannot read node file: {exc}")
        except (ValueError, RecursionError) as exc:
            report.warn(file, None, f"node file is not valid JSON ({exc})")
        except ImportFormatError as exc:
            report.warn(file, None, str(exc))
    parsed.sort(key=lambda n: (n["seq"], n["created_at"]))
    seen: set[str] = set()
    nodes: dict[str, dict[str, Any]] = {}
    for node in parsed:
        if node["id"] in seen:
            report.warn(folder, None, f"node id {node['id']!r} appears twice; keeping the first")
            continue
        seen.add(node["id"])
        if node["id"] == ROOT and node["role"] == "user" and not _text(node["output"]):
            continue  # the ROOT sentinel
        nodes[node["id"]] = node
    return nodes


def _graph(folder: Path, nodes: dict[str, dict[str, Any]], report: ImportReport, live: bool) -> DraftGraph:
    spilled = _spill_files(folder)
    graph = DraftGraph()
    last_chain: str | None = None
    for node in _topological(nodes, report, folder):
        draft = graph.add(_draft(node, nodes, spilled, last_chain, graph.by_id))
        if draft.called_by is None and draft.role in ("user", "assistant"):
            last_chain = draft.id
        if live and node["metadata"].get("status") == "running":
            continue  # a turn in progress: its placeholder is rewritten at turn end
        graph.settle(draft, 0)
    return graph


def _draft(
    node: dict[str, Any],
    nodes: dict[str, dict[str, Any]],
    spilled: dict[str, Path],
    last_chain: str | None,
    added: dict[str, Draft],
) -> Draft:
    meta = dict(node["metadata"])
    meta["openprogram_role"] = node["role"]
    meta["seq"] = node["seq"]
    meta["edge_era"] = node["edge_era"]
    content = _text(node["output"])
    spill = spilled.get(node["id"])
    if spill is not None:
        try:
            content = spill.read_text(encoding="utf-8", errors="replace")
            meta["spilled"] = spill.name
        except OSError:
            pass
    if node.get("orphan"):
        meta["missing_edge"] = node["orphan"]
    kind = ROLE_MAP[node["role"]]
    caller = node["caller"] if node["caller"] in nodes else None
    pred = node["predecessor"] if node["predecessor"] in nodes else None
    name = node["name"] or None
    is_context = bool(name and name.startswith("context/"))
    if pred is None and caller is None and node["edge_era"] == "none" and kind in ("user", "assistant"):
        pred = last_chain  # files without any chat edge: keep them in seq order
        meta["linear_fallback"] = True
    role, parent, called_by = kind, pred, None
    if kind == "user":
        parent = pred or caller  # a spawned branch forks off the node that spawned it
    elif kind == "assistant":
        name = meta.get("model") or meta.get("token_model") or name
        if is_context:
            role, name = "system", node["name"]  # context/summary: a compaction summary
            meta["compaction"] = True
        elif caller is not None and pred is None:
            called_by = parent = caller  # a model call inside a function
    elif kind == "tool":
        if caller is not None:
            called_by = parent = caller
        elif is_context and pred is None:
            # context/system_prompt: hangs off the head it was written for, not on the chain
            anchor = meta.get("anchor_head_id")
            anchor = anchor if isinstance(anchor, str) and anchor in added else last_chain
            role, called_by, parent = "system", anchor, anchor
        else:
            role = "system"  # a function run on the chat chain
            meta["top_level_function"] = True
    if called_by is not None or kind == "tool":
        tool_input = _arguments(node["input"])
    else:
        tool_input = node["input"] if node["input"] not in (None, "", {}) else None
    return Draft(
        node["id"],
        role,
        content,
        parent_id=parent,
        called_by=called_by,
        name=name if isinstance(name, str) else None,
        input=tool_input,
        created_at=node["created_at"],
        metadata=meta,
    )


def _topological(nodes: dict[str, dict[str, Any]], report: ImportReport, folder: Path) -> list[dict[str, Any]]:
    """Nodes in seq order, each after the nodes it points to; dangling edges and cycles are cut."""
    order: list[dict[str, Any]] = []
    done: set[str] = set()
    for start in nodes.values():
        stack = [start]
        visiting: set[str] = set()
        while stack:
            node = stack[-1]
            if node["id"] in done:
                stack.pop()
                continue
            visiting.add(node["id"])
            pending = None
            for key in ("predecessor", "caller"):
                ref = node[key]
                if ref is None or ref == ROOT or ref in done:
                    continue
                if ref not in nodes:
                    report.warn(folder, None, f"node {node['id']!r}: {key} {ref!r} is not in the session")
                    node["orphan"] = f"{key}={ref}"
                    node[key] = None
                    continue
                if ref in visiting:
                    report.warn(folder, None, f"node {node['id']!r}: {key} {ref!r} makes a cycle; cut")
                    node[key] = None
                    continue
                pending = nodes[ref]
                break
            if pending is not None:
                stack.append(pending)
                continue
            stack.pop()
            visiting.discard(node["id"])
            done.add(node["id"])
            order.append(node)
    return order


def _read_meta(folder: Path, report: ImportReport) -> dict[str, Any]:
    path = folder / "meta.json"
    if not path.exists():
        return {}
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as exc:
        report.warn(path, None, f"meta.json unreadable ({exc}); importing the nodes without it")
        return {}
    if not isinstance(meta, dict):
        report.warn(path, None, "meta.json is not a JSON object; importing the nodes without it")
        return {}
    return meta


def _spill_files(folder: Path) -> dict[str, Path]:
    spill = folder / "large_nodes"
    if not spill.is_dir():
        return {}
    out: dict[str, Path] = {}
    for file in spill.glob("*.txt"):
        _seq, sep, node_id = file.stem.partition("-")
        if sep and node_id:
            out[node_id] = file
    return out


def _work_dir(folder: Path, meta: dict[str, Any]) -> str:
    for key in ("work_dir", "cwd"):
        if isinstance(meta.get(key), str) and meta[key]:
            return meta[key]
    dirs = meta.get("workdirs")
    if isinstance(dirs, list) and dirs and isinstance(dirs[0], str):
        return dirs[0]
    # <project>/.openprogram/sessions/<id>: the project folder
    if folder.parent.name == "sessions" and folder.parent.parent.name == ".openprogram":
        return str(folder.parent.parent.parent)
    return ""


# ---------------------------------------------------------------------------------------------
# the importer


def _sessions_dirs(path: Path) -> list[Path]:
    if path.name in ("sessions", "sessions-git"):
        return [path]
    out = [path / name for name in ("sessions", "sessions-git") if (path / name).is_dir()]
    project = path / ".openprogram" / "sessions"
    if project.is_dir():
        out.append(project)
    return out


def _locations(index: Path) -> list[Path]:
    try:
        data = json.loads(index.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return []
    if not isinstance(data, dict):
        return []
    return [Path(p) for p in data.values() if isinstance(p, str) and is_session_dir(Path(p))]


class OpenProgramImporter(Importer):
    name = "openprogram"
    source = SOURCE
    label = "OpenProgram"
    id_prefix = "op"
    locations = ("~/.openprogram/sessions", "~/.openprogram-<profile>/sessions", "./.openprogram/sessions")
    shape = Shape(("meta.json",), folder=True, also=("history/NNNN-<role>-<id>.json",))

    def claims(self, probe: Probe) -> Path | None:
        folder = probe.path.parent
        if probe.path.name != "meta.json" or not is_session_dir(folder) or is_ipc_dir(folder):
            return None
        return folder

    reads = "each node file of history/ (calls, their sub-calls and chat edges)"
    looks_for = "session folders holding a history/ folder"

    def default_paths(self) -> list[Path]:
        home = Path.home()
        found = [p for pattern in STATE_GLOBS for p in sorted(home.glob(pattern)) if p.is_dir()]
        state = os.environ.get("OPENPROGRAM_STATE_DIR")
        if state:
            found.append(Path(state).expanduser())
        project = Path.cwd() / ".openprogram"
        if project.is_dir() and project not in found:
            found.append(project)
        return found

    def discover(self, paths: Iterable[Path | str]) -> list[Path]:
        """Session folders under state roots, `sessions/` folders, projects, or given directly."""
        found: dict[Path, None] = {}
        for raw in paths:
            path = Path(raw).expanduser()
            if is_session_dir(path):
                found[path] = None
            elif path.is_dir():
                for sessions in _sessions_dirs(path):
                    for child in sorted(sessions.iterdir()) if sessions.is_dir() else []:
                        if child.is_dir() and is_session_dir(child):
                            found[child] = None
                    for located in _locations(sessions / "locations.json"):
                        found[located] = None
        return list(found)

    def is_complete(self, path: Path) -> bool:
        """A session folder whose history/ has not changed for LIVE_SECONDS is taken as finished."""
        return is_final(path / "history", None)

    def parse_file(self, path: Path, report: ImportReport, *, final: bool | None = None) -> list[ImportedSession]:
        """A session folder -> one session; its node files are read whole each time."""
        folder = path.parent if path.name in ("history", "meta.json") else path
        if is_ipc_dir(folder):
            return []
        if not is_session_dir(folder):
            report.warn(folder, None, "not an OpenProgram session folder (no history/)")
            return []
        session = read_session(folder, report, live=not is_final(folder / "history", final))
        return [session] if session is not None else []
