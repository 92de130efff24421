"""Recall: the navigation tools agents and users query the memory with (ARCHITECTURE.md §7)."""
