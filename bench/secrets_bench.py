"""Secret detection figures (opmem issue 21), each beside a baseline measured in the same run.

  python bench/secrets_bench.py [--quick] [--show-fixtures]

1. Recall on a seeded generator of 40+ secret kinds (provider tokens, PEM keys, JWTs, URLs with a
   password, auth headers, secret-named assignments) in realistic surroundings: shell exports,
   `.env` files printed by cat, curl headers, JSON and YAML configs, Python tracebacks,
   docker-compose environments, connection strings, log lines, and the same texts as the JSON
   lines of a transcript. A secret counts as caught when its value is fully covered by findings and
   nothing of it survives redact_text. Beside it, detect-secrets' own line scan (`scan_line` with its
   default plugins) on the same samples: a value counts as caught there when a reported secret
   covers it. Target: recall >= 0.98.
2. False positives: every file under the shared fixtures (read as text) and a generated corpus of
   must-never values (git hashes, UUIDs, sha1/256/512 hex, `sha256:` digests, paths, base64 image
   data and JSON blobs, versions, npm lockfile lines, env var references, placeholders, markers,
   code using `token`/`key`/`password` names), and the installed Python packages' own source
   (real code and docs full of such names). Each figure beside its line count.
   Target: <= 1 per 10,000 lines. `--show-fixtures` lists each fixture finding (kind, file, line,
   the name before it and the value's length, never the value) for review.
3. Throughput on the fixture transcripts (ordinary session text) and on plain prose with no
   candidate, beside `str.lower()` and a trivial `re.search` over the same text, as ratios; and
   detect-secrets' per-line scan on the same transcripts.
4. Redacting twice equals redacting once on every generated sample.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import best_of, parser
from secret_samples import Gen, caught, negatives, samples

from opmem_tui.backend.privacy import find_secrets, redact_text

FIXTURES = Path(__file__).resolve().parents[2] / "shared" / "fixtures"
if not FIXTURES.is_dir():
    FIXTURES = Path("/work/shared/fixtures")

# ---------------------------------------------------------------- detect-secrets, the library


def ds_scanner():
    """detect-secrets' own line scan with its default plugins, or None when it is not installed."""
    try:
        from detect_secrets.core.scan import scan_line
        from detect_secrets.settings import default_settings
    except ImportError:
        return None

    def scan(text: str) -> list[str]:
        with default_settings():
            return [s.secret_value or "" for line in text.splitlines() for s in scan_line(line)]

    return scan


def recall_figures(data: list[tuple[str, str, list[str]]], ds) -> None:
    """1 and 4: recall (ours beside detect-secrets' line scan) and idempotence."""
    misses: dict[str, int] = {}
    total_by_kind: dict[str, int] = {}
    for kind, text, values in data:
        total_by_kind[kind] = total_by_kind.get(kind, 0) + 1
        if not all(caught(text, v) for v in values):
            misses[kind] = misses.get(kind, 0) + 1
            if misses[kind] == 1:
                print(f"  missed {kind}: {text[:160]!r}")
    n = len(data)
    recall = 1 - sum(misses.values()) / n
    print(f"kinds: {len(total_by_kind)}  samples: {n}")
    ds_recall = None
    if ds is not None:
        ds_caught = 0
        for _kind, text, values in data:
            found = ds(text)
            if all(any(v in f or (f and f in v and len(f) >= 0.9 * len(v)) for f in found) for v in values):
                ds_caught += 1
        ds_recall = ds_caught / n
    print(
        f"recall: {recall:.4f} ({n - sum(misses.values())}/{n})  vs detect-secrets scan_line: "
        + (f"{ds_recall:.4f}  ratio {recall / ds_recall:.2f}" if ds_recall else "not installed")
        + f"  target >= 0.98: {'MET' if recall >= 0.98 else 'MISSED'}"
    )
    if misses:
        print("  misses by kind: " + ", ".join(f"{k} {v}/{total_by_kind[k]}" for k, v in sorted(misses.items())))
    twice = sum(1 for _k, text, _v in data if redact_text(redact_text(text)) != redact_text(text))
    print(f"redact twice != redact once: {twice} of {n} samples  target 0: {'MET' if twice == 0 else 'MISSED'}")


def fixture_figures(show: bool) -> list[str]:
    """2: findings in every fixture file; returns the transcripts' texts for the throughput figures."""
    fx_lines = fx_findings = fx_bytes = 0
    fx_text: list[str] = []
    shown: list[str] = []
    for path in sorted(p for p in FIXTURES.rglob("*") if p.is_file()):
        text = path.read_bytes().decode("utf-8", "replace")
        fx_bytes += len(text.encode())
        fx_lines += text.count("\n") + 1
        found = find_secrets(text)
        fx_findings += len(found)
        for f in found:
            line = text.count("\n", 0, f.start) + 1
            before = text[max(0, f.start - 40) : f.start].replace("\n", "\\n")
            shown.append(f"    {f.kind} {path.relative_to(FIXTURES)}:{line} after {before!r} ({f.end - f.start} chars)")
        if "transcripts" in path.parts:
            fx_text.append(text)
    per10k = fx_findings / fx_lines * 1e4
    print(
        f"fixtures: {fx_findings} findings in {fx_lines:,} lines ({fx_bytes / 1e6:.1f} MB, every file under shared/fixtures)"
        f" = {per10k:.2f} per 10k lines (each reviewed by hand: see the report; --show-fixtures lists them)"
    )
    if show:
        print("\n".join(shown))
    return fx_text


def negative_figures(lines_wanted: int) -> None:
    """2: findings in the generated must-never corpus, as one text per category and line by line."""
    cats = negatives(99, lines_wanted)
    neg_lines = neg_findings = 0
    for cat, lines in cats.items():
        text = "\n".join(lines)
        found = find_secrets(text)
        neg_lines += len(lines)
        neg_findings += len(found)
        for f in found[:3]:
            print(f"    FP {cat}: {f.kind} {text[max(0, f.start - 40) : f.end + 5]!r}")
        # each line alone as well: context from a neighbour must not hide or make a finding
        alone = [f for line in lines[:2000] for f in find_secrets(line)]
        neg_findings += len(alone)
        neg_lines += min(len(lines), 2000)
    per10k = neg_findings / neg_lines * 1e4
    print(
        f"must-never corpus: {neg_findings} findings in {neg_lines:,} lines ({len(cats)} categories)"
        f" = {per10k:.2f} per 10k lines  target <= 1: {'MET' if per10k <= 1 else 'MISSED'}"
    )


def installed_code_figures(max_files: int) -> None:
    """2: findings in the source and docs of the installed Python packages (real code full of
    token/key/password names, docstrings with example URLs and passwords)."""
    root = Path(sysconfig.get_paths()["purelib"])
    exts = {".py", ".md", ".txt", ".json", ".toml", ".yaml", ".yml", ".cfg", ".ini", ".rst", ".sh", ".js", ".ts"}
    files = sorted(p for p in root.rglob("*") if p.suffix in exts and p.is_file())[:max_files]
    lines = findings = 0
    kinds: dict[str, int] = {}
    for path in files:
        text = path.read_bytes().decode("utf-8", "replace")
        lines += text.count("\n") + 1
        for f in find_secrets(text):
            findings += 1
            kinds[f.kind] = kinds.get(f.kind, 0) + 1
    print(
        f"installed packages' source ({len(files):,} files under {root.name}): {findings} findings in {lines:,} lines"
        f" = {findings / max(lines, 1) * 1e4:.2f} per 10k lines  by kind {kinds}  target <= 1:"
        f" {'MET' if findings / max(lines, 1) * 1e4 <= 1 else 'MISSED'}"
    )


def throughput(name: str, corpus: list[str]) -> None:
    """3: find_secrets over `corpus` beside str.lower() and a trivial re.search over the same text."""
    size = sum(len(t.encode()) for t in corpus) / 1e6
    trivial = re.compile("zq#xj")
    ours = best_of(lambda: [find_secrets(t) for t in corpus], 5)
    base_lower = best_of(lambda: [t.lower() for t in corpus], 5)
    base_re = best_of(lambda: [trivial.search(t) for t in corpus], 5)
    print(
        f"throughput on {name} ({size:.2f} MB): find_secrets {size / ours:.1f} MB/s"
        f"  vs str.lower() {size / base_lower:.1f} MB/s  ratio {base_lower / ours:.3f}"
        f"  vs re.search(trivial) {size / base_re:.1f} MB/s  ratio {base_re / ours:.3f}"
    )


def library_figures(ds, fx_text: list[str], quick: bool) -> None:
    """3: detect-secrets' own line scan on the transcripts, and what importing it costs."""
    if ds is None:
        print("detect-secrets: not installed (pip install detect-secrets) - no library figures")
        return
    sample = fx_text[0] if quick else "".join(fx_text)
    ssize = len(sample.encode()) / 1e6
    t = time.perf_counter()
    ds(sample)
    ds_t = time.perf_counter() - t
    ours_s = best_of(lambda: find_secrets(sample), 3)
    print(
        f"detect-secrets scan_line on {ssize:.2f} MB of the transcripts: {ssize / ds_t:.3f} MB/s"
        f"  vs find_secrets {ssize / ours_s:.1f} MB/s  ratio {ours_s / ds_t:.3f}"
    )
    # Each in a fresh interpreter; ours after the packages it sits in (opmem_tui, backend.model),
    # which the app has imported anyway.
    code = "import {pre}; import time; t = time.perf_counter(); import {m}; print(time.perf_counter() - t)"
    ds_imp = min(
        float(subprocess.check_output([sys.executable, "-c", code.format(pre="re", m="detect_secrets.plugins.aws")]))
        for _ in range(3)
    )
    ours_imp = min(
        float(
            subprocess.check_output(
                [sys.executable, "-c", code.format(pre="opmem_tui.backend.model", m="opmem_tui.backend.privacy")]
            )
        )
        for _ in range(3)
    )
    print(
        f"import cost: detect-secrets (one plugin) {ds_imp * 1e3:.0f} ms  vs opmem_tui.backend.privacy"
        f" {ours_imp * 1e3:.1f} ms  ratio {ds_imp / ours_imp:.0f}"
    )


def main() -> None:
    ap = parser(__doc__ or "")
    ap.add_argument("--show-fixtures", action="store_true", help="list every finding in the fixtures for review")
    args = ap.parse_args()
    ds = ds_scanner()
    recall_figures(samples(1234, 12 if args.quick else 40), ds)
    fx_text = fixture_figures(args.show_fixtures)
    negative_figures(7_000 if args.quick else 70_000)
    installed_code_figures(2_000 if args.quick else 100_000)
    throughput("the fixture transcripts", fx_text * (1 if args.quick else 3))
    g = Gen(7)
    words = [
        "the",
        "parser",
        "now",
        "reads",
        "each",
        "line",
        "once",
        "and",
        "the",
        "tests",
        "run",
        "again",
        "after",
        "the",
        "cache",
        "fix",
    ]
    throughput("prose with no candidate", [" ".join(g.r.choice(words) for _ in range(40_000)) for _ in range(4)])
    throughput(
        "a JSON transcript with no candidate",
        [json.dumps({"content": " ".join(g.r.choice(words) for _ in range(40_000))})],
    )
    library_figures(ds, fx_text, args.quick)


if __name__ == "__main__":
    main()
