"""Issue 37's stack and command rules: libraries by role, languages and platforms from files and
manifests, what the user says the project is, the model a setting names, and commands as typed."""

from __future__ import annotations

from pathlib import Path

import pytest

from opmem_tui.backend.distill.extract import vocabulary
from opmem_tui.backend.distill.extract.knowledge import manifests, techs
from opmem_tui.backend.distill.extract.knowledge.turn import _shown_edit
from opmem_tui.backend.distill.extract.shell import split_commands
from opmem_tui.backend.distill.extract.tools import ToolAction
from opmem_tui.backend.model import Node

from .history import Call, Session, Turn, brief_of, distil_history


def _core(tmp_path: Path, *turns: Turn) -> str:
    return brief_of(distil_history(tmp_path / "memory", [Session("s-1", list(turns))]))


def _stack(core: str) -> str:
    return " ".join(line for line in core.splitlines() if line.startswith(("· stack: ", "· tools: ")))


def _commands(core: str) -> str:
    return " ".join(
        line for line in core.splitlines() if line.startswith(("· test: ", "· build: ", "· other: ", "· run: "))
    )


# -- the dictionary by role ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "display", "category"),
    [
        ("android", "Android", "platform"),
        ("Business Central", "Business Central", "platform"),
        ("okhttp3", "OkHttp", "http-client"),  # a JVM package root
        ("com.squareup.retrofit2", "Retrofit", "http-client"),
        ("androidx.recyclerview", "RecyclerView", "ui-kit"),
        ("kotlinx.coroutines", "Kotlin Coroutines", "concurrency"),
        ("dagger.hilt", "Hilt", "di"),
        ("tokio", "Tokio", "concurrency"),
        ("serde_json", "Serde", "serialization"),
        ("loguru", "Loguru", "logging"),
        ("@logtape/logtape", "LogTape", "logging"),
        ("clap", "clap", "cli"),
        ("anyhow", "anyhow", "error-handling"),
        ("openai-whisper", "Whisper", "speech"),
        ("syncthing", "Syncthing", "sync"),
        ("obsidian", "Obsidian", "integration"),
        ("pyo3", "PyO3", "ffi"),
        ("pytest-xdist", "pytest-xdist", "test-tool"),
        ("langchain_core", "LangChain", "ai"),  # a package of the family names it
        ("@typescript-eslint/parser", "ESLint", "linter"),
    ],
)
def test_the_dictionary_knows_libraries_by_role(name: str, display: str, category: str):
    tech = vocabulary.lookup(name)
    assert tech is not None and (tech.name, tech.category) == (display, category)


@pytest.mark.parametrize(
    "sentence",
    ["Click the button to continue.", "a whisper of a chance", "the river runs", "she felt a sharp pain"],
)
def test_a_name_that_is_a_word_is_not_taken_from_a_plain_sentence(sentence: str):
    low = sentence[0].lower() + sentence[1:]
    assert not [t for t in techs.mentioned_techs(low) if t.category not in ("language",)]


def test_a_name_inside_cjk_text_is_a_word_of_its_own():
    assert [t.name for t in techs.mentioned_techs("我想架构一个Android的下载库")] == ["Android"]


# -- files, imports and manifests --------------------------------------------------------------------


def test_jvm_swift_csharp_and_dart_imports_name_their_libraries():
    kotlin = (
        "import androidx.recyclerview.widget.RecyclerView\nimport okhttp3.OkHttpClient\n"
        "import java.util.List\nimport com.example.app.Thing\nimport android.os.Bundle\n"
    )
    assert manifests.imports("Main.kt", kotlin) == ["androidx.recyclerview", "okhttp3", "android"]
    assert manifests.imports("App.swift", "import UIKit\nimport Alamofire\n") == ["Alamofire"]
    assert manifests.imports("A.cs", "using System.Text;\nusing Newtonsoft.Json;\n") == ["Newtonsoft.Json"]
    assert manifests.imports("a.dart", "import 'package:dio/dio.dart';\n") == ["dio"]


def test_a_gradle_build_and_an_al_app_manifest_give_their_stack():
    gradle = (
        'plugins { id("com.android.application") }\ndependencies {\n'
        '    implementation("com.squareup.okhttp3:okhttp:4.12.0")\n'
        "    implementation 'androidx.recyclerview:recyclerview:1.3.2'\n}\n"
    )
    deps, _ = manifests.manifest_facts("app/build.gradle.kts", gradle)
    names = {vocabulary.lookup(d).name for d in deps if vocabulary.known(d, curated=True)}
    assert {"OkHttp", "RecyclerView", "Android"} <= names
    app = '{"name": "Connector", "application": "23.0.0.0", "runtime": "16.0", "idRanges": [{"from": 51000}]}'
    assert manifests.manifest_facts("app.json", app) == (["AL", "Business Central"], [("AL", "runtime 16.0")])
    assert manifests.manifest_facts("app.json", '{"expo": {"name": "x"}}') == ([], [])  # not every app.json


def test_kotlin_code_written_gives_the_platform_and_its_libraries(tmp_path: Path):
    code = "package com.x\n\nimport android.os.Bundle\nimport okhttp3.OkHttpClient\n\nclass Main\n"
    core = _core(tmp_path, Turn("add the client", [Call("write", path="/work/demo/app/src/Main.kt", content=code)]))
    stack = _stack(core)
    for name in ("Kotlin", "Android", "OkHttp"):
        assert name in stack, core


def test_a_tools_config_file_is_not_the_projects_language(tmp_path: Path):
    core = _core(
        tmp_path,
        Turn("fix lint", [Call("edit", path="/work/demo/.eslintrc.cjs", content="module.exports = {}\n")]),
        Turn("and the object", [Call("write", path="/work/demo/src/Tab51000.Setup.al", content="table 51000 X {}\n")]),
    )
    stack = _stack(core)
    assert "AL" in stack and "ESLint" in stack, core
    assert "JavaScript" not in stack, core


def test_a_listing_of_the_project_names_its_tools_a_long_one_does_not(tmp_path: Path):
    listing = "README.md\njest.config.cjs\npackage.json\nsrc\n"
    home = "\n".join(f"folder{i}" for i in range(80)) + "\nCargo.toml\n"
    core = _core(tmp_path, Turn("what is here?", [Call("bash", command="ls", output=listing)]))
    assert "Jest" in _stack(core), core
    core = _core(tmp_path / "home", Turn("what is here?", [Call("bash", command="ls ~", output=home)]))
    assert "Cargo" not in _stack(core), core


# -- what the user says the project is -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("said", "named"),
    [
        ("Hello, we have successfully worked on this rust crate. Any plans?", "Rust"),
        ("我想架构一个Android的下载库，要求api简洁", "Android"),
        ("Quero criar um app em Flutter para a loja.", "Flutter"),
        ("Это проект на Rust, помоги с тестами.", "Rust"),
        ("Please fix the rust error in the build script.", ""),
        ("the c library it wraps is old", ""),
    ],
)
def test_what_the_user_says_the_project_is(tmp_path: Path, said: str, named: str):
    stack = _stack(_core(tmp_path, Turn(said)))
    if named:
        assert named in stack
    else:
        assert not stack


def test_the_model_a_setting_names_is_the_projects_llm_a_model_talked_about_is_not(tmp_path: Path):
    env = "OPENAI_API_KEY=\nAUTO_METADATA_MODEL=gpt-4o-mini  # cheap and fast\n"
    core = _core(tmp_path, Turn("add the setting", [Call("write", path="/work/demo/.env.example", content=env)]))
    assert "gpt-4o-mini" in _stack(core), core
    core = _core(tmp_path / "talk", Turn("How much would it cost?", reply="About $1.20 with GPT-4o-mini."))
    assert "gpt-4o" not in _stack(core).lower(), core


def test_a_warning_raised_at_the_projects_own_code_names_its_package(tmp_path: Path):
    out = (
        "platform linux -- Python 3.12.6, pytest-7.4.3, pluggy-1.6.0\ncollected 3 items\n\n"
        "=== warnings summary ===\n"
        "  /home/me/My Project/src/tools/__init__.py:4: LangChainDeprecationWarning: As of langchain-core 0.3.0\n"
        "  /home/me/My Project/venv/lib/python3.12/site-packages/x/y.py:9: FooBarDeprecationWarning: old\n"
        "=== 3 passed in 0.5s ===\n"
    )
    core = _core(tmp_path, Turn("run the tests", [Call("bash", command="pytest -q", output=out)]))
    stack = _stack(core)
    assert "LangChain" in stack and "Python 3.12" in stack, core


def test_the_shell_a_one_liner_runs_in_is_not_the_stack(tmp_path: Path):
    command = "powershell -Command \"(Get-Content 'a.txt') | Set-Content 'b.txt'\""
    core = _core(tmp_path, Turn("copy it", [Call("bash", command=command, output="")]))
    assert "PowerShell" not in _stack(core), core


# -- commands as typed -------------------------------------------------------------------------------


def test_a_test_run_keeps_the_files_it_runs_a_picked_test_is_one_check(tmp_path: Path):
    passed = "=== 22 passed in 40s ==="
    core = _core(
        tmp_path,
        Turn(
            "run the e2e suite in parallel",
            [
                Call("bash", command="pytest tests/integration/test_e2e.py -n 6 -v 2>&1 | tail -20", output=passed),
                Call("bash", command="pytest tests/integration/test_e2e.py::TestX::test_y -v -s", output="1 passed"),
            ],
        ),
    )
    assert "test: pytest tests/integration/test_e2e.py -n 6 -v" in _commands(core), core
    assert "::" not in core and "test_y" not in _commands(core), core


def test_a_windows_venv_python_runs_the_tests(tmp_path: Path):
    command = 'cd "D:\\Users\\me\\proj" && .\\venv\\Scripts\\python.exe -m pytest tests -q'
    core = _core(tmp_path, Turn("run them", [Call("bash", command=command, output="=== 3 passed in 1s ===")]))
    assert "test: pytest tests -q" in _commands(core), core
    [_, argv] = split_commands(command)
    assert argv[0] == "./venv/Scripts/python.exe"


def test_an_install_of_a_package_and_a_build_script_are_commands(tmp_path: Path):
    core = _core(
        tmp_path,
        Turn(
            "install xdist and rebuild the index",
            [
                Call("bash", command="pip install pytest-xdist==3.5.0", output="Successfully installed"),
                Call("bash", command="pip install no-such-package-qq", output="ERROR: No matching", exit_code=1),
                Call("bash", command="python scripts/build_knowledge_base.py", output="indexed 5 books"),
            ],
        ),
    )
    commands = _commands(core)
    assert "pip install pytest-xdist==3.5.0" in commands, core
    assert "no-such-package" not in core, core
    assert "build: python scripts/build_knowledge_base.py" in commands, core


def test_a_script_an_answer_says_to_run_in_portuguese(tmp_path: Path):
    reply = "Pronto. **Precisa rodar** `python scripts/build_index.py` novamente."
    core = _core(tmp_path, Turn("reindexe os documentos", reply=reply))
    assert "python scripts/build_index.py" in _commands(core), core


def test_an_edit_an_export_shows_as_a_diff_is_read_as_the_edit():
    content = "**Chunk 1**\n\n```diff\n@@ -1,2 +1,3 @@\n  A=1\n+ AUTO_MODEL=gpt-4o-mini\n- B=2\n```\n"
    node = Node(
        "n1", 1, "tool", content, "p", "p", "search_replace", {"summary": "Edit file: .env.example"}, (), 0.0, {}
    )
    assert _shown_edit(ToolAction(node, "other", "search_replace")) == (".env.example", "AUTO_MODEL=gpt-4o-mini")
    plain = Node("n2", 2, "tool", "done", "p", "p", "search_replace", {"summary": "Searched"}, (), 0.0, {})
    assert _shown_edit(ToolAction(plain, "other", "search_replace")) is None


def test_a_language_asked_its_version_states_it(tmp_path: Path):
    core = _core(
        tmp_path,
        Turn("which python?", [Call("bash", command="python --version", output="Python 3.12.6\n")]),
        Turn("and node?", [Call("bash", command="node -v", output="v20.11.1\n")]),
    )
    stack = _stack(core)
    assert "Python 3.12" in stack and "Node.js 20" in stack, core


def test_an_index_module_reexporting_many_names_the_tools_its_modules_are_named_after(tmp_path: Path):
    exports = "".join(f"export * from './part{i}.ts';\n" for i in range(60)) + "export * from './logtape.shared.ts';\n"
    core = _core(tmp_path, Turn("sort the exports", [Call("write", path="/work/demo/src/index.ts", content=exports)]))
    assert "LogTape" in _stack(core), core


def test_a_platform_talked_about_in_every_turn_is_not_the_stack(tmp_path: Path):
    turns = [Turn(f"The menu breaks on iOS Safari again ({n}), can you check the CSS?") for n in range(4)]
    assert "iOS" not in _stack(_core(tmp_path, *turns))


def test_dotnet_flutter_and_swift_manifests_give_their_packages():
    csproj = (
        '<Project Sdk="Microsoft.NET.Sdk.Web"><PropertyGroup><TargetFramework>net8.0</TargetFramework>'
        '</PropertyGroup><ItemGroup><PackageReference Include="Serilog.AspNetCore" Version="8.0.0" />'
        '<PackageReference Include="Microsoft.EntityFrameworkCore.SqlServer" Version="8.0.0" /></ItemGroup></Project>'
    )
    deps, found = manifests.manifest_facts("src/Api/Api.csproj", csproj)
    assert {vocabulary.lookup(d).name for d in deps} == {"Serilog", "Entity Framework"}
    assert found == [(".NET", "8")]
    pubspec = "name: app\ndependencies:\n  flutter:\n    sdk: flutter\n  dio: ^5.4.0\n\ndev_dependencies:\n  mocktail: ^1.0.0\n"
    deps, _ = manifests.manifest_facts("pubspec.yaml", pubspec)
    assert {"Flutter", "dio"} <= set(deps)
    swift = '.package(url: "https://github.com/Alamofire/Alamofire.git", from: "5.8.0")'
    assert manifests.manifest_facts("Package.swift", swift)[0] == ["Alamofire"]
    assert manifests.imports("A.cs", "using System;\nusing Microsoft.EntityFrameworkCore;\nusing MyApp.Models;\n") == [
        "Microsoft.EntityFrameworkCore"
    ]


@pytest.mark.parametrize(
    ("command", "kind"),
    [
        ("./gradlew test", "test"),
        ("./gradlew assembleDebug", "build"),
        ("./gradlew lint", "lint"),
        ("flutter test", "test"),
        ("flutter run", "run"),
        ("just test", "test"),
        ("mvn test", "test"),
    ],
)
def test_the_runners_of_other_ecosystems_are_classified(command: str, kind: str):
    from opmem_tui.backend.distill.extract.knowledge import command_kind, normalize_command

    line = normalize_command(split_commands(command)[0])
    assert line == command and command_kind(line, "run") == kind


def test_a_command_the_user_labels_on_a_line_of_its_own(tmp_path: Path):
    said = "Execute o benchmark completo.\n\nComando: python tests/bench/run_benchmark.py\n\nExecute em background."
    core = _core(tmp_path, Turn(said))
    assert "python tests/bench/run_benchmark.py" in _commands(core), core
    core = _core(tmp_path / "prose", Turn("Run: the tests please, then tell me."))
    assert not _commands(core), core


def test_an_api_the_user_says_the_project_uses_is_named_by_its_site(tmp_path: Path):
    said = "The extension should use the API from https://restdocs.example-books.com/ for every call."
    assert "example-books API" in _stack(_core(tmp_path, Turn(said)))
    said = "It serves the API at http://localhost:8000/docs now."
    assert "API" not in _stack(_core(tmp_path / "local", Turn(said)))


def test_a_compose_files_command_key_is_no_labelled_command(tmp_path: Path):
    said = "My compose file:\n\nservices:\n  bot:\n    command: python bot.py\n\nWhy does it exit?"
    assert not _commands(_core(tmp_path, Turn(said)))


def test_a_name_two_ecosystems_share_is_read_in_the_lists_own(tmp_path: Path):
    reply = "Plan:\n\n- **Architecture**: Kotlin + Coroutines + Flow + Room\n- **UI**: Kotlin + Compose\n"
    stack = _stack(_core(tmp_path, Turn("how should we build it?", reply=reply)))
    assert "Kotlin Flow" in stack and "Jetpack Compose" in stack
    assert "Docker Compose" not in stack and not any(part.strip() == "Flow" for part in stack.split(","))


def test_a_cjk_sentence_after_a_label_is_no_list_of_names(tmp_path: Path):
    reply = "特点：\n\n- **Flow批量监听**：使用Flow监听多个任务的进度\n- **架构**：使用Kotlin + Room\n"
    stack = _stack(_core(tmp_path, Turn("总结一下", reply=reply)))
    assert "Kotlin" in stack and "Room" in stack
    assert not any(part.strip().endswith("Flow") for part in stack.split(",")), stack


def test_a_technology_named_only_to_be_ruled_out_is_not_the_stack(tmp_path: Path):
    turns = [Turn(f"Step {n}: no SQL scripts please, only the extension code.") for n in range(4)]
    assert "SQL" not in _stack(_core(tmp_path, *turns))
