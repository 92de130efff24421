from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from opmem_tui.backend.home import Home
from opmem_tui.cli import main


def _store(tmp_path: Path) -> Home:
    home = Home(tmp_path / "h")
    s = home.sessions
    s.append_message("s1", "user", "Hello [bold red]there[/] \x1b[2J")
    s.append_message("s1", "assistant", "Hi!")
    s.commit_turn("s1")
    return home


def test_sessions_list_show_rename_delete(tmp_path: Path) -> None:
    home = _store(tmp_path)
    runner = CliRunner()
    args = ["--home", str(home.path)]
    out = runner.invoke(main, [*args, "sessions", "list"])
    assert out.exit_code == 0 and out.output.startswith("1 session\n") and "s1" in out.output
    out = runner.invoke(main, [*args, "sessions", "show", "s1"])
    assert out.exit_code == 0 and "[bold red]there[/]" in out.output and "\x1b[2J" not in out.output
    out = runner.invoke(main, [*args, "sessions", "rename", "s1", "Greeting"])
    assert out.exit_code == 0 and home.sessions.get_meta("s1").title == "Greeting"
    out = runner.invoke(main, [*args, "sessions", "delete", "s1"], input="n\n")
    assert out.exit_code == 0 and Home(home.path).sessions.exists("s1")
    out = runner.invoke(main, [*args, "sessions", "delete", "s1", "--yes"])
    assert out.exit_code == 0 and not Home(home.path).sessions.exists("s1")


def test_errors_are_one_clear_line(tmp_path: Path) -> None:
    home = _store(tmp_path)
    runner = CliRunner()
    out = runner.invoke(main, ["--home", str(home.path), "sessions", "show", "../etc"])
    assert out.exit_code == 1 and "no session '../etc'" in out.output and "Traceback" not in out.output
    out = runner.invoke(main, ["--home", str(home.path), "sessions", "show", "missing"])
    assert out.exit_code == 1 and "no session 'missing'" in out.output
    (home.path / "config.toml").write_text("[store\n")
    out = runner.invoke(main, ["--home", str(home.path), "sessions", "list"])
    # a config.toml that does not parse stops nothing: a warning naming it, the defaults used
    assert out.exit_code == 0 and "config.toml: invalid TOML at line 1" in out.output and "Traceback" not in out.output


def test_verify_reports_and_repairs(tmp_path: Path) -> None:
    home = _store(tmp_path)
    (home.sessions_dir / "broken").mkdir()
    (home.sessions_dir / "broken" / "meta.json").write_text("{")
    out = CliRunner().invoke(main, ["--home", str(home.path), "verify"])
    # every session examined is counted, the unreadable one included, and named
    assert out.exit_code == 2 and "checked 2 sessions" in out.output and "broken/meta.json" in out.output
    assert "unreadable: 1 session(s): broken" in out.stderr


def test_demo_builds_without_app(tmp_path: Path) -> None:
    out = CliRunner().invoke(main, ["demo", str(tmp_path / "d"), "--no-app"])
    assert out.exit_code == 0, out.output
    assert len(Home(tmp_path / "d" / "home").sessions.list_sessions().sessions) == 13
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "x").write_text("mine")
    out = CliRunner().invoke(main, ["demo", str(tmp_path / "other"), "--no-app"])
    assert out.exit_code == 1 and "not empty" in out.output


def test_projects_group_uses_the_home_option(tmp_path: Path) -> None:
    out = CliRunner().invoke(main, ["demo", str(tmp_path / "d"), "--no-app"])
    assert out.exit_code == 0
    out = CliRunner().invoke(main, ["--home", str(tmp_path / "d" / "home"), "projects", "list"])
    assert out.exit_code == 0 and "weather-cli" in out.output and "paused" in out.output


def test_unbind_clears_the_sessions_project_and_keeps_git(tmp_path: Path) -> None:
    CliRunner().invoke(main, ["demo", str(tmp_path / "d"), "--no-app"])
    home = Home(tmp_path / "d" / "home")
    project = next(p for p in home.projects.list_projects() if p.name == "shop-api")
    head = (Path(project.workdir) / ".git" / "HEAD").read_bytes()
    out = CliRunner().invoke(main, ["--home", str(home.path), "projects", "unbind", project.id])
    assert out.exit_code == 0, out.output
    fresh = Home(home.path)
    assert all(p.id != project.id for p in fresh.projects.list_projects())
    assert fresh.sessions.get_meta("codex-shop-discounts").project_id == ""
    assert (Path(project.workdir) / ".git" / "HEAD").read_bytes() == head


def test_import_says_when_nothing_was_found(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    out = CliRunner().invoke(main, ["--home", str(tmp_path / "h"), "import", "codex", str(tmp_path / "empty")])
    assert out.exit_code == 0 and "nothing to import" in out.output and "codex" in out.output
