"""Measuring agents: puzzles, STS, static metrics on annotated data, matches and Elo."""
