"""Distillation: sessions in, memory records out (ARCHITECTURE.md §6)."""
