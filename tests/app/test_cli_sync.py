"""`opmem sync init|status` and `opmem sync` through the CLI, with two homes and a bare remote."""

from __future__ import annotations

import subprocess
from pathlib import Path

from click.testing import CliRunner

from opmem_tui.backend.home import Home
from opmem_tui.cli import main
from tests.backend.sync.helpers import T0, add_turn, bare_remote, machine_home, refs_of


def opmem(home: Path, *args: str) -> tuple[int, str, str]:
    out = CliRunner().invoke(main, ["--home", str(home), *args])
    return out.exit_code, out.stdout, out.stderr


def test_init_sync_and_status_on_two_machines(tmp_path: Path) -> None:
    remote = bare_remote(tmp_path / "remote.git")
    a = machine_home(tmp_path / "a", "laptop", "")
    b = machine_home(tmp_path / "b", "desk", "")
    add_turn(a, "sa1", "from the laptop", "ok")
    add_turn(b, "sb1", "from the desk", "ok", at=T0 + 5)
    for home in (a, b):
        code, out, _ = opmem(home.path, "sync", "init", str(remote))
        assert code == 0 and "this machine:" in out
    for home in (a, b, a):
        code, out, err = opmem(home.path, "sync")
        assert code == 0, err
        assert out.startswith("pulled ")
    code, out, _ = opmem(a.path, "sync", "status")
    assert code == 0
    assert "machine: laptop" in out and "desk" in out
    code, out, _ = opmem(b.path, "sessions", "list")
    assert "sa1" in out and "@laptop" in out
    assert code == 0
    before = refs_of(remote)
    code, out, _ = opmem(b.path, "sync")
    assert code == 0 and "pushed 0 ref(s)" in out
    assert refs_of(remote) == before
    code, out, _ = opmem(a.path, "verify", "--no-repair")
    assert code == 0


def test_an_unreachable_remote_is_one_line_and_exit_1(tmp_path: Path) -> None:
    home = machine_home(tmp_path / "a", "laptop", str(tmp_path / "gone.git"))
    add_turn(home, "sa1", "one", "ok")
    code, _, err = opmem(home.path, "sync")
    assert code == 1
    assert err.count("\n") == 1 and err.startswith("opmem sync: cannot reach the sync remote")
    code, _, err = opmem(home.path, "sync", "init", "ssh://127.0.0.1:1/nothing.git")
    assert code == 1 and err.count("\n") == 1


def test_a_forced_remote_is_refused_with_exit_1(tmp_path: Path) -> None:
    remote = bare_remote(tmp_path / "remote.git")
    a = machine_home(tmp_path / "a", "laptop", str(remote))
    b = machine_home(tmp_path / "b", "desk", str(remote))
    add_turn(a, "sa1", "one", "ok")
    assert opmem(a.path, "sync")[0] == 0
    assert opmem(b.path, "sync")[0] == 0
    subprocess.run(["git", f"--git-dir={remote}", "update-ref", "-d", "refs/opmem/meta/laptop"], check=True)
    code, _, err = opmem(b.path, "sync")
    assert code == 1 and "refs/opmem/meta/laptop" in err and "rewritten" in err
    assert [m.id for m in Home(b.path).sessions.list_sessions().sessions] == ["sa1"]
    code, _, err = opmem(b.path, "sync")  # refused again: nothing moved on
    assert code == 1
    assert opmem(b.path, "sync", "init", str(remote))[0] == 0  # the user accepts the remote as it is
    code, _, err = opmem(b.path, "sync")
    assert code == 0, err
    assert "refs/opmem/meta/desk" in {
        line.split()[-1]
        for line in subprocess.run(
            ["git", f"--git-dir={remote}", "for-each-ref"], capture_output=True, text=True, check=True
        ).stdout.splitlines()
    }
    assert [m.id for m in Home(b.path).sessions.list_sessions().sessions] == ["sa1"]


def test_status_counts_and_json(tmp_path: Path) -> None:
    remote = bare_remote(tmp_path / "remote.git")
    a = machine_home(tmp_path / "a", "laptop", str(remote))
    b = machine_home(tmp_path / "b", "desk", str(remote))
    add_turn(a, "sa1", "one", "ok")
    add_turn(a, "sa2", "two", "ok")
    add_turn(b, "sb1", "three", "ok")
    for home in (a, b):
        assert opmem(home.path, "sync")[0] == 0
    code, out, _ = opmem(b.path, "sync", "status", "--json")
    import json

    status = json.loads(out)
    assert code == 0
    assert status["machine"] == "desk" and status["machines"] == ["laptop"]
    assert status["sessions_pushed"] == 1 and status["sessions_pulled"] == 2
    code, out, _ = opmem(machine_home(tmp_path / "c", "c", "").path, "sync", "status")
    assert code == 0 and "opmem sync init" in out


def test_status_says_a_session_deleted_here_stays_on_the_remote(tmp_path: Path) -> None:
    remote = bare_remote(tmp_path / "remote.git")
    a = machine_home(tmp_path / "a", "laptop", str(remote))
    b = machine_home(tmp_path / "b", "desk", str(remote))
    add_turn(a, "sa1", "one", "ok")
    add_turn(a, "sa2", "two", "ok")
    for home in (a, b, a):
        assert opmem(home.path, "sync")[0] == 0
    code, out, _ = opmem(a.path, "sync", "status")
    assert code == 0 and "deleted here" not in out
    Home(a.path).sessions.delete_session("sa2")
    Home(b.path).sessions.delete_session("sa1")  # a pulled copy deleted: not this machine's to count
    for home in (a, b):
        assert opmem(home.path, "sync")[0] == 0
    code, out, _ = opmem(a.path, "sync", "status")
    assert code == 0 and "deleted here, still on the remote: 1 session(s)" in out
    assert "refs/opmem/sessions/sa2/heads/main" in refs_of(remote)
    import json

    assert json.loads(opmem(a.path, "sync", "status", "--json")[1])["sessions_deleted_here_on_remote"] == 1
    assert json.loads(opmem(b.path, "sync", "status", "--json")[1])["sessions_deleted_here_on_remote"] == 0


def test_a_token_in_the_remote_url_never_reaches_the_output(tmp_path: Path) -> None:
    token = "ghp_" + "R7nQ2xLk9VbT4mWc8ZsH1pYd6FjA3gUe5Kio"
    home = machine_home(tmp_path / "a", "laptop", f"https://dev:{token}@127.0.0.1:9/store.git")
    add_turn(home, "sa1", "one", "ok")
    for args, exit_code in ((["sync"], 1), (["sync", "status"], 0), (["sync", "status", "--json"], 0)):
        code, out, err = opmem(home.path, *args)
        assert code == exit_code and "127.0.0.1:9" in out + err, args  # the remote is still named
        assert token not in out + err and token[4:20] not in out + err, args


def test_init_on_a_missing_local_path_offers_to_create_the_bare_repository(tmp_path: Path, monkeypatch) -> None:
    """`opmem sync init PATH` on a folder that is not there: not just "cannot reach" but how to
    make it; `--create` makes a bare repository there, and the remote is kept as an absolute
    path, so a sync from another folder still finds it."""
    home = machine_home(tmp_path / "a", "laptop", "")
    add_turn(home, "sa1", "one", "ok")
    monkeypatch.chdir(tmp_path)
    code, _, err = opmem(home.path, "sync", "init", "./remote.git")
    assert code == 1 and "does not exist" in err and "--create" in err and "cannot reach" not in err
    assert not (tmp_path / "remote.git").exists()
    code, out, err = opmem(home.path, "sync", "init", "--create", "./remote.git")
    assert code == 0, err
    assert "created a bare repository" in out
    bare = subprocess.run(
        ["git", "-C", str(tmp_path / "remote.git"), "rev-parse", "--is-bare-repository"], capture_output=True, text=True
    )
    assert bare.stdout.strip() == "true"
    assert Home(home.path).config.sync.remote == str(tmp_path / "remote.git")
    monkeypatch.chdir(home.path)
    code, out, err = opmem(home.path, "sync")
    assert code == 0, err


def test_two_machines_with_the_same_hostname_are_told_apart(tmp_path: Path) -> None:
    """Two VMs both called `vm`: the sessions each recorded are labelled with its own machine
    (its id), not both `@vm`."""
    from opmem_tui.backend.store.files import write_atomic
    from opmem_tui.backend.sync.outbox import dump_json

    remote = bare_remote(tmp_path / "remote.git")
    homes = []
    for name, machine_id in (("a", "vm-11111111"), ("b", "vm-22222222"), ("c", "desk-33333333")):
        home = machine_home(tmp_path / name, machine_id, str(remote))
        write_atomic(home.path / "machine.json", dump_json({"id": machine_id, "name": machine_id.split("-")[0]}))
        add_turn(home, f"s{name}", f"from {name}", "ok")
        homes.append(home)
    for home in (*homes, homes[2]):
        code, _, err = opmem(home.path, "sync")
        assert code == 0, err
    code, out, _ = opmem(homes[2].path, "sessions", "list")
    assert code == 0
    assert "@vm-11111111" in out and "@vm-22222222" in out and "@vm " not in out
