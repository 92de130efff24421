"""A sync error names the remote, and a remote URL may carry a token: the message is redacted."""

from __future__ import annotations

from pathlib import Path

import pytest

from opmem_tui.backend.sync.gitcli import SyncError, ls_remote

TOKEN = "ghp_" + "R7nQ2xLk9VbT4mWc8ZsH1pYd6FjA3gUe5Kio"


def test_an_unreachable_remote_with_a_token_in_its_url_is_named_without_it(tmp_path: Path) -> None:
    remote = f"https://dev:{TOKEN}@127.0.0.1:9/store.git"  # port 9: nothing listens
    with pytest.raises(SyncError) as caught:
        ls_remote(tmp_path, remote)
    message = str(caught.value)
    assert "cannot reach the sync remote https://dev:" in message
    assert TOKEN not in message and TOKEN[4:20] not in message and "[secret:" in message
