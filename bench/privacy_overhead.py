"""What the privacy gate costs: import and distillation with redaction beside the same work
without it, in the same run (issue: privacy). Target: each >= 0.9 x its speed without.

  python bench/privacy_overhead.py [--quick]

1. Distillation (rules, stage 5 included: core.md, views, the search index of the sessions)
   of a generated coding corpus (bench/distill_bench.py's, with env dumps, .env files and curl
   headers holding secrets in a tenth of the tool outputs), beside the same run with the gate
   switched off (every redaction call made the identity).
2. Import of the synthetic Claude Code corpus (bench/claude_corpus.py) with
   `[privacy] redact_on_import = true`, beside the default (raw store).

Runs alternate (off, on, off, on, ...) and the median of each is kept, in wall and CPU time:
this machine's load moves every figure, and each side gets the same chances.
"""

from __future__ import annotations

import contextlib
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parent))
import claude_corpus
import distill_bench
from harness import OUT, parser, report

from opmem_tui.backend.distill import collect, titles
from opmem_tui.backend.distill.pipeline import RunOptions, run
from opmem_tui.backend.home import Home
from opmem_tui.backend.importers import run_import
from opmem_tui.backend.memory import index_update, snippets
from opmem_tui.backend.privacy.redact import forget_clean

SECRET_OUTPUTS = [
    "AWS_ACCESS_KEY_ID=AKIA{up16}\nAWS_SECRET_ACCESS_KEY={b40}\nHOME=/home/dev\nPATH=/usr/bin",
    "DATABASE_URL=postgres://app:{al12}@db.internal:5432/app\nREDIS_URL=redis://cache:6379/0\nDEBUG=1",
    "> GET /v1/deploy HTTP/1.1\n> Authorization: Bearer sk-proj-{al32}\n< HTTP/1.1 200 OK",
    "GITHUB_TOKEN=ghp_{al36}\nSTRIPE_SECRET_KEY=sk_live_{al24}",
]
ALNUM = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


def _fill(template: str, rng: random.Random) -> str:
    def pick(n: int, chars: str = ALNUM) -> str:
        return "".join(rng.choice(chars) for _ in range(n))

    return template.format(
        up16=pick(16, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"),
        b40=pick(40, ALNUM + "/+"),
        al12=pick(12),
        al24=pick(24),
        al32=pick(32),
        al36=pick(36),
    )


def secret_corpus(sessions: int, turns: int) -> Path:
    """distill_bench's coding corpus plus one 'cat .env' / 'env' call in a tenth of the turns."""
    root = OUT / f"privacy-corpus-{sessions}x{turns}"
    if (root / "ready").exists():
        return root / "home"
    shutil.rmtree(root, ignore_errors=True)
    home = Home(root / "home", durable=False)
    rng = random.Random(5)
    for k in range(sessions):
        sid = f"p{k:05d}"
        distill_bench.write_session(home, sid, turns, rng, 1_700_000_000.0 + 3600 * k)
        with home.sessions.batch(sid) as batch:
            head = home.sessions.get_meta(sid).head_id
            for t in range(max(1, turns // 10)):
                user = batch.append(
                    "user", "show me the env for the deploy", parent_id=head, created_at=1_800_000_000.0 + t
                )
                reply = batch.append("assistant", "Reading it.", parent_id=user.id, name="claude-test-1")
                batch.append(
                    "tool", _fill(rng.choice(SECRET_OUTPUTS), rng), parent_id=reply.id, called_by=reply.id,
                    name="Bash", input={"command": rng.choice(["cat .env", "env", "curl -v https://api/deploy"])},
                )  # fmt: skip
                head = batch.append("assistant", "The deploy reads those.", parent_id=reply.id, name="claude-test-1").id
                batch.commit_turn()
    (root / "ready").write_text("ok")
    return root / "home"


@contextlib.contextmanager
def gate_off() -> Iterator[None]:
    """Every redaction call of the derived layers made the identity."""
    same = lambda value: value  # noqa: E731
    with contextlib.ExitStack() as stack:
        for module, name in (
            (collect, "redact_node"),
            (collect, "redact_text"),
            (index_update, "redact_text"),
            (snippets, "redact_text"),
            (titles, "redact_text"),
        ):
            stack.enter_context(mock.patch.object(module, name, same))
        yield


def distil_once(corpus: Path, off: bool) -> tuple[float, float, int]:
    work = Path(tempfile.mkdtemp(prefix="opmem-privacy-"))
    try:
        shutil.copytree(corpus, work / "home")
        home = Home(work / "home")
        forget_clean()  # each run starts cold, as a new process does
        with gate_off() if off else contextlib.nullcontext():
            wall, cpu = time.perf_counter(), time.process_time()
            result = run(home, RunOptions())
            return time.perf_counter() - wall, time.process_time() - cpu, result.nodes
    finally:
        shutil.rmtree(work, ignore_errors=True)


def import_once(corpus: Path, redact: bool) -> tuple[float, float, int]:
    work = Path(tempfile.mkdtemp(prefix="opmem-privacy-"))
    try:
        (work / "home").mkdir()
        if redact:
            (work / "home" / "config.toml").write_text("[privacy]\nredact_on_import = true\n")
        home = Home(work / "home")
        forget_clean()
        wall, cpu = time.perf_counter(), time.process_time()
        result = run_import(home, "claude", [corpus / "projects"])
        return time.perf_counter() - wall, time.process_time() - cpu, result.nodes
    finally:
        shutil.rmtree(work, ignore_errors=True)


def compare(name: str, unit_name: str, once, rounds: int) -> None:
    base, ours = [], []
    for _ in range(rounds):
        base.append(once(False))
        ours.append(once(True))
    count = base[0][2]
    assert all(r[2] == count for r in base + ours), "both sides must do the same work"
    for label, k in (("wall", 0), ("CPU", 1)):
        b = statistics.median(r[k] for r in base)
        o = statistics.median(r[k] for r in ours)
        report(
            f"{name} ({label})",
            count / o,
            count / b,
            "without redaction",
            ">= 0.9 x",
            count / o >= 0.9 * count / b,
            unit=unit_name,
        )


def main() -> None:
    args = parser(__doc__.splitlines()[0]).parse_args()
    sessions, turns, mb, rounds = (20, 10, 5, 3) if args.quick else (60, 20, 20, 5)
    corpus = secret_corpus(sessions, turns)
    nodes = sum(len(Home(corpus).sessions.get_nodes(m.id)) for m in Home(corpus).sessions.list_sessions().sessions)
    print(f"distillation corpus: {sessions} sessions, {nodes:,} nodes")
    compare("distillation with redaction", "nodes/s", lambda on: distil_once(corpus, off=not on), rounds)
    claude = claude_corpus.corpus(mb)
    print(f"import corpus: {mb} MB of Claude Code transcripts")
    compare("import with redact_on_import", "nodes/s", lambda on: import_once(claude, redact=on), rounds)


if __name__ == "__main__":
    main()
