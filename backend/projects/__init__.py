"""Projects (ARCHITECTURE §4): folders bound as projects, their own git history, and what agents
did in them.

    registry.py      ProjectRegistry: projects.json, warnings, the facade Home.projects hands out
    repository.py    ProjectGit: a project's repository, read (log, diffs, commit windows)
    records.py       the frozen records handed to the UI and the tools
    agent_commit.py  AgentCommitter: one agent turn committed in a project
    tool_paths.py    which files a turn's tool calls wrote; which calls ran `git commit`
    tool_writes.py   what each write call did to its file
    write_replay.py  what a turn's writes make of each file (so user edits are never committed)
    links.py         commit <-> turn links and their store
    binding.py       imported sessions bound to the project of their cwd, and linked
    autocommit.py    live turns of `opmem watch` committed when they end
"""
