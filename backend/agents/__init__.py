"""What opmem writes into agents' own configs: the MCP entry, hooks, instruction blocks.

connect.py is the facade (connect, disconnect, status, refresh); one module per agent
(claude, codex, gemini, cursor, opencode, copilot) says where its files are and what goes in
them; parts.py, jsonc.py and textblock.py edit those files as text. session_start.py is the
SessionStart hook, imported on its own by opmem_tui/entry.py: this package file stays empty of
imports so that path stays light.
"""
