"""Progress as answers state it in any shape: status headings in other languages over lists and
tables, status marks on items, "Complete - <topic>" headings, the closing summary of a long answer."""

from __future__ import annotations

from pathlib import Path

import pytest

from opmem_tui.backend.distill.extract.knowledge.progress import progress_items
from opmem_tui.backend.distill.extract.knowledge.state import claimed_test_count, said_written, written_doc

from .history import Call, Session, Turn, brief_of, distil_history

SUMMARY_TABLES = """# 🎉 PHASE 3 - 100% COMPLETO!

## 📋 STATUS FINAL

### ✅ COMPLETO (100%)

| Item | Status | Data |
|------|--------|------|
| Importer rewrite | ✅ 100% | 14/10 |
| **Search index** | ✅ **100%** | **14/10** |

### ⏳ EM PROGRESSO (1)

| Item | Status | ETA |
|------|--------|-----|
| Load test | 🔄 Rodando | ~1h |

### 📋 PENDENTE (1)

| Item | Quando |
|------|--------|
| Phase 4 (sync) | later |
"""


def test_status_headings_in_another_language_over_tables():
    assert progress_items(SUMMARY_TABLES) == [
        (True, "PHASE 3"),
        (True, "Importer rewrite"),
        (True, "Search index"),
        (False, "Load test"),
        (False, "Phase 4 (sync)"),
    ]


def test_a_table_outside_a_status_heading_is_not_progress():
    metrics = "Results:\n\n| Metric | Value | Status |\n|---|---|---|\n| P50 | 74s | ✅ |\n| P95 | 230s | ✅ |\n"
    assert progress_items(metrics) == []


MARKED = """## ✅ Work Complete - Prompt Management + Model Removal

### 1. **Removed the local model** ✅
- Deleted the model loader

**Features:**
- ✅ Version history with rollback

**Remaining Phase 2 Tasks (4/6 complete):**
- ✅ Dynamic trigger patterns
- ⏳ Chat filter middleware
"""


def test_status_marks_say_the_status_where_a_list_or_heading_has_one():
    assert progress_items(MARKED) == [
        (True, "Prompt Management + Model Removal"),
        (True, "Removed the local model"),
        (False, "Phase 2 Tasks 4/6"),
        (True, "Dynamic trigger patterns"),  # its mark, not the heading over it
        (False, "Chat filter middleware"),
    ]


@pytest.mark.parametrize(
    "text, expected",
    [
        # a mark on a loose bullet (a feature list, a check) says no piece of work
        ("**Features:**\n- ✅ Version history\n- ✅ File upload", []),
        ("Now:\n⏳ Now compiling the wheel (this is the slow part)", []),
        # a section's title that opens with a mark, an aside in parentheses, a heading of one word
        ("## ✅ RESUMO EXECUTIVO FINAL\n\nok", []),
        ("## 🎯 WORK ACCOMPLISHED TODAY (Sessão Completa)\n\nok", []),
        ("## Fixed! ✅", []),
    ],
)  # fmt: skip
def test_marks_and_headings_that_name_no_work(text, expected):
    assert progress_items(text) == expected


def test_a_users_marks_count_too():
    said = "Remaining:\n- ✅ parser\n- the docs"
    assert progress_items(said, from_user=True) == [(True, "parser"), (False, "the docs")]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("## 下一步\n- 编写README文档\n\n## 已完成\n- 分析结构", [(False, "编写README文档"), (True, "分析结构")]),
        ("### Próximos passos\n1. Rodar o benchmark\n\n### Concluído\n- Filtros por perspectiva",
         [(False, "Rodar o benchmark"), (True, "Filtros por perspectiva")]),
        ("## Следующие шаги\n- добавить кэш\n\n## Сделано\n- парсер", [(False, "добавить кэш"), (True, "парсер")]),
        ("**Files created:**\n- `docs/report.md`", [(True, "docs/report.md")]),
    ],
)  # fmt: skip
def test_headings_in_the_languages_answers_are_written_in(text, expected):
    assert progress_items(text) == expected


def test_a_long_answer_is_read_for_its_closing_summary():
    filler = "Working on it, reading the files one by one.\n" * 600
    text = "- [ ] an early step\n" + filler + "## Done\n- the importer\n\n## Next steps\n- the docs\n"
    assert len(text) > 20_000
    assert progress_items(text) == [(True, "the importer"), (False, "the docs")]


def test_a_long_answer_cut_inside_code_starts_after_the_block():
    code = "```\n" + "DONE: not a list item\n" * 1500 + "```\n"
    text = code + "## Done\n- the parser\n"
    assert progress_items(text) == [(True, "the parser")]


def test_each_status_keeps_the_last_items_of_a_long_list():
    text = "## Done\n" + "".join(f"- step {n}\n" for n in range(12)) + "\n## Next steps\n- ship\n"
    done = [item for status, item in progress_items(text) if status]
    assert done == [f"step {n}" for n in range(4, 12)] and (False, "ship") in progress_items(text)


@pytest.mark.parametrize(
    "path, created, expected",
    [
        ("docs/ANALYSIS.md", True, "wrote docs/ANALYSIS.md"),
        ("./analyzer-report-hotkey.md", False, "updated analyzer-report-hotkey.md"),
        ("/home/me/app/dev.md", False, "updated dev.md"),  # where the file lives is the session's to say
        ("CLAUDE.md", True, ""),  # an instruction file: its rules are read as such
        (".cursor/plans/phase-2.plan.md", False, ""),  # a file that tracks the work: not work done
        ("TODO.md", False, ""),
        ("src/app.py", True, ""),  # code: the activity timeline tells it
    ],
)  # fmt: skip
def test_a_document_written_is_work_done(path, created, expected):
    assert written_doc(path, created=created) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("## Results\n- ✅ **22/22 testes aprovados** (100% sucesso)", "22/22"),
        ("All 48/48 tests passed.", "48/48"),
        ("| **E2E Tests Passing** | 100% | 100% (22/22) | ✅ |", "22/22"),
        # a step still to take, a question, a part of a suite, tasks, code
        ("Next:\n- Verify that 22/22 tests pass", ""),
        ("- [ ] Verificar 22/22 passando", ""),
        ("Did 3/3 tests pass?", ""),
        ("21/22 tests passing", ""),
        ("Phase 3: Continuous Learning (4/4 tasks) ✅", ""),
        ("```\n22/22 tests passed\n```", ""),
    ],
)  # fmt: skip
def test_an_answer_reporting_the_suite_green_gives_the_test_state(text, expected):
    assert claimed_test_count(text) == expected


def test_the_brief_states_the_claimed_test_state_and_the_document_written(tmp_path: Path):
    turns = [
        Turn("write the analysis", [Call("write", path="docs/analysis.md", content="# Analysis\n")],
             reply="Wrote it.\n\n- ✅ 12/12 tests passing"),
    ]  # fmt: skip
    core = brief_of(distil_history(tmp_path / "memory", [Session("s-d", turns)]))
    assert "· state: tests passing: 12/12" in core, core
    assert "wrote docs/analysis.md" in core, core


def test_a_commit_the_agent_made_is_work_done_by_its_subject(tmp_path: Path):
    calls = [
        Call("bash", command='git commit -m "docs: add markdown file conventions"',
             output="[main 77a7264] docs: add markdown file conventions\n 1 file changed, 9 insertions(+)"),
        Call("bash", command='git commit -m "wip"', output="[main 1b2c3d4] wip\n 1 file changed"),
        Call("bash", command='git commit -m "chore: bump deps"', output="[main 2c3d4e5] chore: bump deps\n 1 file"),
        Call("bash", command='git commit -m "feat(api): paginate"', output="error: nothing to commit", exit_code=1),
    ]  # fmt: skip
    core = brief_of(distil_history(tmp_path / "memory", [Session("s-c", [Turn("commit it", calls)])]))
    done = next(line for line in core.splitlines() if line.startswith("· done: "))
    assert "add markdown file conventions" in done and "docs:" not in done, core
    assert "wip" not in done and "paginate" not in done and "bump deps" not in done, core


def test_a_commit_subject_from_output_that_lost_its_newlines():
    from opmem_tui.backend.distill.extract.knowledge.progress import commit_subjects
    from opmem_tui.backend.distill.extract.tools import ToolAction
    from opmem_tui.backend.model import Node

    output = "[dev d38df25]    1 docs: expand the roadmap    2    3 Add documentation for planned features"
    node = Node(id="n1", seq=1, role="tool", content=output, name="bash", called_by="n0")
    action = ToolAction(node, "git", "bash", program="git commit", output=output)
    assert commit_subjects(action) == ["expand the roadmap"]


def test_the_work_a_heading_announced_leads_its_sessions_items(tmp_path: Path):
    reply = "## ✅ Poll System Implementation Complete!\n\n## Done\n- renamed a variable\n- fixed a typo\n"
    memory = distil_history(tmp_path / "memory", [Session("s-a", [Turn("add polls", reply=reply)])])
    done = next(line for line in brief_of(memory).splitlines() if line.startswith("· done: "))
    assert done.startswith("· done: Poll System; "), done


def test_a_working_checklist_then_a_summary_of_what_got_done_keeps_the_summary():
    text = (
        "- [x] read the plan\n- [ ] write docs/lessons/router.md\n\nWorking...\n\n"
        "## ✅ Done\n- 📊 lessons written\n\n## Next steps\n- run the benchmark\n"
    )
    assert progress_items(text) == [(True, "read the plan"), (True, "lessons written"), (False, "run the benchmark")]
    still = "- [x] read the plan\n- [ ] write the lessons\n\nNext steps: run the benchmark"
    assert (False, "write the lessons") in progress_items(still)  # nothing said done since: still open


@pytest.mark.parametrize(
    "text, expected",
    [
        ("I've updated the `launch.json` file with:\n1. the sandbox", [("launch.json", False)]),
        ("I created `docs/setup.md` and linked it.", [("docs/setup.md", True)]),
        ("I have added a new `README.md`.", [("README.md", True)]),
        ("Update `app.json` when you can.", []),  # the user's to do, not the answer's report
        ("I've updated `src/app.py`.", []),  # code: the tool calls and the timeline tell it
    ],
)  # fmt: skip
def test_an_answer_that_says_it_wrote_a_document_or_settings_file(text, expected):
    assert said_written(text) == expected


def test_a_heading_over_one_of_the_choices_offered_is_no_news():
    assert progress_items("Pick one:\n### **Opção A: TIER 3 COMPLETO** 🔥 (Recomendado)\n- 2h") == []
    assert progress_items("Pick one:\n## Option B - Migration Complete") == []


def test_a_trackers_tasks_file_the_agent_wrote_gives_each_task_and_its_status(tmp_path: Path):
    tasks = (
        '{"tags": {"dev": {"tasks": [\n'
        '  {"id": 1, "title": "Review the roadmap", "description": "x", "status": "pending", "dependencies": []},\n'
        '  {"id": 2, "title": "Write the PRD", "status": "in-progress"},\n'
        '  {"id": 3, "title": "Set up the tag", "status": "done"},\n'
        '  {"id": 4, "title": "Old idea", "status": "cancelled"}\n]}}}'
    )
    calls = [Call("write", path=".taskmaster/tasks/tasks.json", content=tasks)]
    core = brief_of(distil_history(tmp_path / "memory", [Session("s-t", [Turn("add the tasks", calls)])]))
    line = next(line for line in core.splitlines() if "· pending: " in line)
    assert "Review the roadmap" in line and "Write the PRD" in line and "Set up the tag" in line.split("pending")[0]
    assert "Old idea" not in core
    settings = [Call("write", path="package.json", content='{"name": "x", "title": "A thing", "status": "done"}')]
    core = brief_of(distil_history(tmp_path / "m2", [Session("s-p", [Turn("edit", settings)])]))
    assert "A thing" not in core  # not a tracker's file
