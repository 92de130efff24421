"""What the app's background git-mirror writer could not do is said as a warning (the node files
are whole either way): here, a store whose change hint cannot be written."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from opmem_tui.backend.home import Home

from .conftest import make_app, settle, wait_until


def _chat(path: Path) -> Path:
    lines = [
        {"session": "c1", "id": str(i), "role": "assistant" if i % 2 else "user", "content": f"m{i}"} for i in range(4)
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


async def test_a_background_mirror_problem_is_a_warning_naming_the_file(tmp_path: Path) -> None:
    home = Home(tmp_path / "home")
    home.ensure()
    # an import that ends before writing its mirrors (as one killed midway): the next start writes them
    script = (
        "import sys; from pathlib import Path; from opmem_tui.backend.home import Home; "
        "from opmem_tui.backend.importers import run_import; "
        "r = run_import(Home(Path(sys.argv[1])), 'jsonl', [Path(sys.argv[2])], defer_mirror=True, bind=False); "
        "print(*r.mirror_pending)"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(home.path), str(_chat(tmp_path / "c.jsonl"))],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    (sid,) = done.stdout.split()
    changed = home.sessions.changed_path
    changed.unlink(missing_ok=True)
    changed.mkdir()  # the change token cannot be written (as on a read-only disk)
    app = make_app(Home(tmp_path / "home"))
    async with app.run_test(size=(120, 30), notifications=True) as pilot:
        await settle(pilot)
        await wait_until(pilot, lambda: any(n.title == "git mirror" for n in app.notes), "a git-mirror warning")
        (note,) = [n for n in app.notes if n.title == "git mirror"]
        assert note.severity == "warning"
        assert "sessions/.changed: cannot write" in note.message and str(tmp_path) not in note.message
    store = Home(tmp_path / "home").sessions
    assert store.pending_mirrors() == [] and len(store.session_commits(sid)) == 2
