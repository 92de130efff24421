"""`opmem connect --status` offers a signed-in agent CLI for distillation, found without an LLM call."""

from __future__ import annotations

import os
from pathlib import Path

from click.testing import CliRunner

from opmem_tui.cli import main

from ..backend.llm_cli.stand_ins import StandIn


def test_connect_status_offers_a_signed_in_cli(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    codex = StandIn(bin_dir, "codex")
    (tmp_path / "codex-home").mkdir()
    (tmp_path / "codex-home" / "auth.json").write_text("{}")
    env = {
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "HOME": str(tmp_path / "user"),
        "CODEX_HOME": str(tmp_path / "codex-home"),
        "XDG_CONFIG_HOME": str(tmp_path / "user" / ".config"),
    }
    out = CliRunner().invoke(main, ["--home", str(tmp_path / "home"), "connect", "--status"], env=env)
    assert out.exit_code == 0, out.output
    assert "tip: codex is signed in here" in out.output and '[llm] via = "codex"' in out.output
    assert codex.calls == []
    (tmp_path / "home").mkdir(exist_ok=True)
    (tmp_path / "home" / "config.toml").write_text('[llm]\nvia = "codex"\n')
    again = CliRunner().invoke(main, ["--home", str(tmp_path / "home"), "connect", "--status"], env=env)
    assert again.exit_code == 0 and "tip:" not in again.output  # set up already: no offer
