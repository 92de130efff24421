"""Tokens and cost: what each agent recorded per reply (tokens.py), priced offline (prices.py),
kept in memory/usage.sqlite (index.py) and summed into reports (reports.py, blocks.py)."""
