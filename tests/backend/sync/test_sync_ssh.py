"""Sync over ssh, to an sshd on 127.0.0.1 started by the test (Debian's openssh-server).

Skips, saying why, where sshd, ssh or ssh-keygen is not installed or sshd will not start."""

from __future__ import annotations

import getpass
import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from opmem_tui.backend.home import Home
from opmem_tui.backend.sync import Sync

from .helpers import SECRET, T0, add_event, add_turn, all_objects, bare_remote, machine_home, refs_of, turns

SSHD = "/usr/sbin/sshd"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def sshd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[int]:
    missing = [tool for tool in (SSHD, "ssh", "ssh-keygen") if shutil.which(tool) is None]
    if missing:
        pytest.skip(f"openssh is not installed ({', '.join(missing)} missing): apt-get install openssh-server")
    keys = tmp_path / "ssh"
    keys.mkdir()
    for name in ("host", "client"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(keys / name)], check=True)
    (keys / "authorized_keys").write_bytes((keys / "client.pub").read_bytes())
    port = _free_port()
    config = keys / "sshd_config"
    config.write_text(
        f"Port {port}\nListenAddress 127.0.0.1\nHostKey {keys / 'host'}\nAuthorizedKeysFile {keys / 'authorized_keys'}\n"
        f"PidFile {keys / 'sshd.pid'}\nPasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\n"
        "StrictModes no\nPermitRootLogin prohibit-password\n"
    )
    if os.geteuid() == 0:
        Path("/run/sshd").mkdir(exist_ok=True)  # Debian's privilege-separation folder
    proc = subprocess.Popen([SSHD, "-D", "-e", "-f", str(config)], stderr=subprocess.PIPE)
    deadline = time.monotonic() + 15
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                why = proc.communicate()[1].decode(errors="replace").strip().splitlines()
                pytest.skip(f"sshd did not start: {why[-1] if why else 'no output'}")
            time.sleep(0.1)
    monkeypatch.setenv(
        "GIT_SSH_COMMAND",
        f"ssh -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o BatchMode=yes -o LogLevel=ERROR "
        f"-o IdentitiesOnly=yes -i {keys / 'client'}",
    )
    try:
        yield port
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


def test_two_machines_sync_over_ssh(tmp_path: Path, sshd: int) -> None:
    remote_dir = bare_remote(tmp_path / "remote.git")
    url = f"ssh://{getpass.getuser()}@127.0.0.1:{sshd}{remote_dir}"
    a = machine_home(tmp_path / "a", "laptop", url)
    b = machine_home(tmp_path / "b", "desk", url)
    add_turn(a, "sa1", f"use the token {SECRET} to deploy", "deployed")
    add_turn(b, "sb1", "write the release notes", "written", at=T0 + 9)
    add_event(a, "releases are cut on fridays", "sa1")
    for home in (a, b, a, b):
        Sync(Home(home.path, durable=False)).run()
    a2, b2 = Home(a.path, durable=False), Home(b.path, durable=False)
    assert turns(b2, "sb1") == turns(a2, "sb1")
    assert [t[1] for t in turns(b2, "sa1")] == ["deployed"]
    assert [h.snippet for h in b2.search("fridays")][:1] == ["releases are cut on fridays"]
    assert SECRET.encode() not in all_objects(remote_dir)
    before = refs_of(remote_dir)
    for home in (a, b):
        report = Sync(Home(home.path, durable=False)).run()
        assert report.pushed_refs == 0 and not report.refs_changed
    assert refs_of(remote_dir) == before
    subprocess.run(["git", f"--git-dir={remote_dir}", "fsck", "--strict"], check=True, capture_output=True)
