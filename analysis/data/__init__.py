"""Training data: position sources, Stockfish annotation and Parquet shard storage.

Pipeline: ``generate`` collects positions (PGN games, Stockfish self-play from
ECO openings, Giraffe-style random-move perturbations), deduplicates them,
splits train/test by game and orders them tactics-first into a plan;
``annotate`` runs Stockfish over the plan in a process pool and writes
Parquet shards (see ``analysis.data.store`` for the format).
"""
