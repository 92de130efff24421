"""The virtual memory: timeline, knowledge graph, core.md, entity views, search index (ARCHITECTURE.md §5)."""
