"""OpenProgram session folders: each field-layout era, branches, spills, discovery, skipped IPC folders."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from opmem_tui.backend.importers import SOURCES
from opmem_tui.backend.importers.base import ImportFormatError, ImportReport
from opmem_tui.backend.importers.openprogram import ROLE_MAP, parse_node

from .dag_helpers import assert_well_formed, branch, by_id, leaves, tools_of, turn_count

openprogram = SOURCES["openprogram"]

ERAS = ("called_by+metadata.parent_id", "caller+metadata.predecessor", "caller+predecessor")


class Folder:
    """Writes a session folder the way OpenProgram did in one era of its schema."""

    def __init__(self, root: Path, session_id: str = "local_0123456789", era: str = ERAS[2]) -> None:
        self.path = root / session_id
        (self.path / "history").mkdir(parents=True)
        (self.path / ".git").mkdir()
        self.era = era
        self.seq = 0
        self.clock = 1_780_000_000.0

    def node(
        self,
        role: str,
        node_id: str,
        output: object = "",
        *,
        caller: str | None = "",
        pred: str | None = None,
        name: str = "",
        input: object = None,
        metadata: dict | None = None,
        seq: int | None = None,
    ) -> str:
        meta = dict(metadata or {})
        data: dict = {
            "id": node_id,
            "created_at": self.clock,
            "seq": self.seq if seq is None else seq,
            "role": role,
            "name": name,
            "input": input,
            "output": output,
        }
        if self.era == ERAS[0]:
            data["called_by"] = caller
            if pred is not None:
                meta["parent_id"] = pred
        elif self.era == ERAS[1]:
            data["caller"] = caller
            if pred is not None:
                meta["predecessor"] = pred
        else:
            data["caller"] = caller
            data["predecessor"] = pred
        data["reads"] = []
        data["metadata"] = meta
        (self.path / "history" / f"{data['seq']:04d}-{role[0]}-{node_id}.json").write_text(json.dumps(data))
        self.seq += 1
        self.clock += 1
        return node_id

    def root(self) -> None:
        self.node("user", "ROOT", "", caller=None, metadata={"display": "root"})

    def turn(self, user_id: str, text: str, answer: str, pred: str, tools: int = 0) -> str:
        self.node("user", user_id, text, caller="ROOT", pred=pred, metadata={"source": "tui"})
        reply = f"{user_id}_reply"
        meta = {"status": "completed", "model": "claude-sonnet-4", "input_tokens": 10}
        if self.era == ERAS[2]:
            meta["predecessor"] = user_id  # the stray copy finalize leaves in metadata
        self.node("llm", reply, answer, pred=user_id, metadata=meta)
        for n in range(tools):
            self.node(
                "code",
                f"{reply}_t_call{n}",
                f"result {n}",
                caller=reply,
                name="bash",
                input=json.dumps({"command": f"ls {n}"}),
                metadata={"tool_call_id": f"call{n}", "is_error": False},
            )
        return reply

    def meta(self, **fields) -> None:
        data = {
            "id": self.path.name,
            "title": "Fix the build",
            "source": "tui",
            "agent_id": "main",
            "project_id": "default",
        }
        data.update(fields)
        (self.path / "meta.json").write_text(json.dumps(data))


def read(folder: Path, **kwargs):
    report = ImportReport()
    kwargs.setdefault("final", True)
    sessions = openprogram.parse_file(folder, report, **kwargs)
    for session in sessions:
        assert_well_formed(session)
    return sessions, report


@pytest.mark.parametrize("era", ERAS)
def test_each_schema_era_gives_the_same_dag(tmp_path: Path, era: str):
    f = Folder(tmp_path / "sessions", era=era)
    f.root()
    r1 = f.turn("u1", "build it", "Built.", pred="ROOT", tools=2)
    f.node(
        "code",
        "ctxsp_abc",
        "You are a helpful agent.",
        caller="ROOT",
        name="context/system_prompt",
        metadata={"display": "runtime", "anchor_head_id": "u1"},
    )
    r2 = f.turn("u2", "test it", "Tested.", pred=r1)
    f.meta(head_id=r2, model="claude-sonnet-4", work_dir="/work/app")
    (session,), report = read(f.path)
    assert report.warnings == []
    assert session.native_id == "local_0123456789" and session.title == "Fix the build"
    assert session.cwd == "/work/app" and session.model == "claude-sonnet-4"
    assert "ROOT" not in by_id(session)
    chain = branch(session)
    assert [n.id for n in chain] == ["u1", "u1_reply", "u2", "u2_reply"]
    assert [n.role for n in chain] == ["user", "assistant", "user", "assistant"]
    assert chain[0].parent_id is None and chain[1].name == "claude-sonnet-4"
    assert turn_count(session) == 2 and leaves(session) == {"u2_reply"}
    tools = tools_of(session, "u1_reply")
    assert [(t.name, t.input, t.content) for t in tools] == [
        ("bash", {"command": "ls 0"}, "result 0"),
        ("bash", {"command": "ls 1"}, "result 1"),
    ]
    prompt = by_id(session)["ctxsp_abc"]
    assert (prompt.role, prompt.called_by) == ("system", "u1")  # hangs off its anchor, not a branch
    assert chain[0].metadata["openprogram_role"] == "user" and chain[1].metadata["openprogram_role"] == "llm"
    assert {n.metadata["edge_era"] for n in chain} == {era.split("+")[1]}


def test_rewound_turn_and_spawned_branch(tmp_path: Path):
    f = Folder(tmp_path)
    f.root()
    r1 = f.turn("u1", "first", "1", pred="ROOT")
    f.node("user", "u2", "second", caller="ROOT", pred=r1, metadata={"rewound": True})
    f.node("llm", "u2_reply", "2", pred="u2", metadata={"rewound": True})
    r3 = f.turn("u3", "second, edited", "2b", pred=r1)
    f.node("user", "spawn1", "research X", caller=r1, metadata={"spawn_branch_root": True, "source": "spawn"})
    f.node("llm", "spawn1_reply", "X is Y", pred="spawn1")
    f.meta(head_id=r3)
    (session,), _ = read(f.path)
    assert session.head == "u3_reply"
    assert leaves(session) == {"u2_reply", "u3_reply", "spawn1_reply"}
    assert by_id(session)["u2"].metadata["rewound"] is True
    assert [n.id for n in branch(session, "spawn1_reply")] == ["u1", "u1_reply", "spawn1", "spawn1_reply"]


def test_function_runs_summaries_and_spills(tmp_path: Path):
    f = Folder(tmp_path)
    f.root()
    big = "x" * 40_000
    r1 = f.turn("u1", "go", big[:200] + "… (spilled)", pred="ROOT")
    (f.path / "large_nodes").mkdir()
    (f.path / "large_nodes" / f"0002-{r1}.txt").write_text(big)
    f.node(
        "code",
        "fn1",
        {"ok": True},
        caller="",
        pred=r1,
        name="deploy",
        input={"target": "prod"},
        metadata={"status": "completed"},
    )
    f.node("llm", "fn1_llm", "plan: ship", caller="fn1", name="gpt-5", input={"system": "be careful"})
    f.node(
        "llm", "sum1", "Summary: deployed.", pred="ROOT", name="context/summary", metadata={"covers_ids": ["u1", r1]}
    )
    (session,), report = read(f.path)
    assert report.warnings == []
    nodes = by_id(session)
    assert nodes[r1].content == big and nodes[r1].metadata["spilled"] == f"0002-{r1}.txt"
    fn = nodes["fn1"]
    assert (fn.role, fn.parent_id, fn.content, fn.input) == ("system", r1, '{"ok": true}', {"target": "prod"})
    assert fn.metadata["top_level_function"] is True
    inner = nodes["fn1_llm"]
    assert (inner.role, inner.called_by, inner.name) == ("assistant", "fn1", "gpt-5")
    summary = nodes["sum1"]
    assert summary.role == "system" and summary.metadata["compaction"] and summary.parent_id is None


def test_seq_order_not_file_name_order(tmp_path: Path):
    f = Folder(tmp_path)
    f.node("user", "late", "second", caller="ROOT", pred="early", seq=10000)
    f.node("user", "early", "first", caller="ROOT", pred="ROOT", seq=9999)
    names = sorted(p.name for p in (f.path / "history").iterdir())
    assert names[0].startswith("10000")  # the name sorts first, the seq says second
    (session,), _ = read(f.path)
    assert [n.id for n in session.nodes] == ["early", "late"]
    assert by_id(session)["late"].parent_id == "early"


def test_files_without_any_chat_edge_keep_seq_order(tmp_path: Path):
    f = Folder(tmp_path)
    for n, (role, text) in enumerate([("user", "a"), ("llm", "b"), ("user", "c")]):
        data = {"id": f"n{n}", "seq": n, "role": role, "output": text, "metadata": {}}
        (f.path / "history" / f"{n:04d}-{role[0]}-n{n}.json").write_text(json.dumps(data))
    (session,), _ = read(f.path)
    assert [n.id for n in branch(session)] == ["n0", "n1", "n2"]
    assert session.nodes[1].metadata["linear_fallback"] is True


def test_running_turn_is_held_back_while_live(tmp_path: Path):
    f = Folder(tmp_path)
    f.root()
    r1 = f.turn("u1", "first", "1", pred="ROOT")
    f.node("user", "u2", "second", caller="ROOT", pred=r1)
    f.node("llm", "u2_reply", "", pred="u2", metadata={"status": "running"})
    f.node("code", "u2_reply_t_c", "partial", caller="u2_reply", name="bash")
    f.meta(head_id="u2_reply")
    (live,), _ = read(f.path, final=False)
    assert set(by_id(live)) == {"u1", "u1_reply", "u2"} and live.head == "u2"
    (whole,), _ = read(f.path, final=True)
    assert whole.head == "u2_reply" and len(whole.nodes) == 5
    old = time.time() - 3600
    for path in [f.path / "history", *(f.path / "history").iterdir()]:
        os.utime(path, (old, old))
    (default,), _ = read(f.path, final=None)  # quiet for an hour: final
    assert len(default.nodes) == 5


def test_broken_files_are_reported_and_skipped(tmp_path: Path):
    f = Folder(tmp_path)
    f.root()
    r1 = f.turn("u1", "first", "1", pred="ROOT")
    f.node("llm", "lost", "orphan", pred="nowhere")
    (f.path / "history" / "0009-u-bad.json").write_text("{broken")
    (f.path / "history" / "0010-x-odd.json").write_text(json.dumps({"id": "odd", "role": "wizard", "seq": 10}))
    (f.path / "meta.json").write_text("[]")
    (session,), report = read(f.path)
    problems = "\n".join(report.warnings)
    assert "0009-u-bad.json" in problems and "not valid JSON" in problems
    assert "unknown role 'wizard'" in problems and "'nowhere' is not in the session" in problems
    assert "meta.json is not a JSON object" in problems
    lost = by_id(session)["lost"]
    assert lost.parent_id is None and lost.metadata["missing_edge"] == "predecessor=nowhere"
    assert session.native_id == f.path.name and session.head == "lost"
    assert r1 in by_id(session)


def test_discovery_state_roots_projects_and_ipc_folders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(tmp_path)
    state = home / ".openprogram"
    plain = Folder(state / "sessions", "local_aaaaaaaaaa")
    plain.root()
    plain.turn("u1", "hi", "hello", pred="ROOT")
    legacy = Folder(home / ".openprogram-work" / "sessions-git", "local_bbbbbbbbbb")
    legacy.turn("u1", "hi", "hello", pred="ROOT")
    project = Folder(tmp_path / "proj" / ".openprogram" / "sessions", "local_cccccccccc")
    project.turn("u1", "hi", "hello", pred="ROOT")
    (state / "sessions" / "locations.json").write_text(json.dumps({"local_cccccccccc": str(project.path)}))
    ipc = state / "sessions" / "ask_1234"
    ipc.mkdir()
    (ipc / "meta.json").write_text(json.dumps({"question": "Proceed?", "pid": 4242, "status": "waiting"}))
    (ipc / "answer").write_text("yes")
    (state / "sessions" / "index.json").write_text("{}")

    roots = openprogram.default_paths()
    assert roots == [state, home / ".openprogram-work"]
    found = openprogram.discover(roots)
    assert found == [plain.path, project.path, legacy.path]
    assert openprogram.discover([tmp_path / "proj"]) == [project.path]
    assert openprogram.discover([plain.path]) == [plain.path]
    report = ImportReport()
    assert openprogram.parse_file(ipc, report) == [] and report.warnings == []
    (session,), _ = read(project.path)
    assert session.cwd == str(tmp_path / "proj")
    assert openprogram.parse_file(tmp_path / "proj", report) == []
    assert "no history/" in report.warnings[-1]


@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(
            [
                "id",
                "role",
                "seq",
                "caller",
                "called_by",
                "predecessor",
                "metadata",
                "output",
                "content",
                "created_at",
                "name",
                "input",
                "reads",
            ]
        ),
        st.none()
        | st.booleans()
        | st.integers()
        | st.text(max_size=8)
        | st.sampled_from(["user", "llm", "code", "ROOT"])
        | st.dictionaries(
            st.sampled_from(["predecessor", "parent_id", "status"]), st.none() | st.integers() | st.text(max_size=5)
        ),
        max_size=10,
    )
    | st.none()
    | st.integers()
    | st.lists(st.integers())
)
def test_parse_node_raises_only_format_errors(data):
    try:
        node = parse_node(data)
    except ImportFormatError:
        return
    assert node["role"] in ROLE_MAP and isinstance(node["seq"], int)
    assert node["caller"] is None or isinstance(node["caller"], str)
