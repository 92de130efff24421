"""What a coding session says about its project: stack, commands, conventions, decisions, state.

The activity rules (coding.py) record what a turn did; these record what it teaches about the
project, as edges from the project entity (the session's, when it has no project), each with
the provenance of the node that showed it:

- stack: `project ──uses──► tech` (a language, framework, database, ... from vocabulary.tsv)
  found in manifests read or written (package.json, pyproject.toml, requirements*.txt,
  Cargo.toml, go.mod, mix.exs, Gemfile, docker-compose.yml, Dockerfile, lock files), install
  commands, the programs run, imports of code the agent wrote, the files' languages, and what
  the conversation says is used or chosen ("use httpx", "we're on Python 3.11"); a technology
  of a slot category (test framework, ORM, package manager, ...) also fills the slot:
  `project ──test-framework──► Vitest`, single-valued, so the next value supersedes it;
  language versions: `project ──python-version──► Python 3.11`;
- replacements: "move from Jest to Vitest", "dropping Redux", "use X instead of Y":
  `project ──dropped──► Jest` (reconcile retires the older stack edges to it) and the new value;
- commands that ran successfully, by kind: `project ──test-command──► pytest -q` (single-valued:
  the latest is current, the older ones are history);
- state: `project ──test-status──► tests failing: 3 failed` (the latest run's outcome);
- conventions the user states ("always ...", "never ...", "prefer ...", "don't ..."):
  `project ──convention──► <the sentence>`, or from the user, in the global scope, when the
  sentence says it holds in every project;
- environment variable names (`project ──env-var──► DATABASE_URL`, never a value), endpoints
  (`project ──endpoint──► GET /api/items`) and ports exposed (`project ──exposes──► :8000`);
- layout a message states: `project ──architecture──► hexagonal layout` ("we use a hexagonal
  layout", "it's a monorepo") and `project ──component──► API: services/api` ("the API is in
  services/api, the worker in services/worker"); never from a sentence about an error or a fix;
- progress a message states: `project ──task-done──► X` / `──task-pending──► Y` from "Done: X",
  "TODO: Y", "Pending:" / "## Remaining" over a list, and `- [x]` / `- [ ]` checklists.

Within a batch each (subject, relation, value) is recorded once, with its latest sighting.

One module per fact kind (stack, commands, conventions, decisions, state, environment) over one
shared reader (evidence: sentences, fenced code, Markdown structure; techs: technology names;
manifests: what files say); turn.py reads a turn and hands each piece to the kinds. The relations
written, and what each is, are declared once in memory/relations.py.
"""

from .commands import command_kind, normalize_command
from .conventions import is_convention, is_global
from .decisions import dropped, replacements
from .environment import env_names, exposed_ports, routes
from .facts import CONVENTION, DROPPED, ENDPOINT, ENV_VAR, USES, Knowledge
from .instructed import INSTRUCTION_FILES
from .manifests import extension_languages, imports, is_manifest, manifest_facts, script_commands
from .named import record_named_often
from .progress import progress_items
from .state import layout_facts
from .techs import IMPLIED_LANGUAGE, mentioned_techs, versions
from .turn import record_turn

__all__ = [
    "CONVENTION", "DROPPED", "ENDPOINT", "ENV_VAR", "IMPLIED_LANGUAGE", "INSTRUCTION_FILES", "USES", "Knowledge",
    "command_kind", "dropped", "env_names", "exposed_ports", "extension_languages", "imports", "is_convention",
    "is_global", "is_manifest", "layout_facts", "manifest_facts", "mentioned_techs", "normalize_command",
    "progress_items", "record_named_often", "record_turn", "replacements", "routes", "script_commands", "versions",
]  # fmt: skip
