"""The boards the project plays on, by name, and their sizes (no chess import: the CLI reads it)."""

BOARD_SIZE = {"chess": 8, "gardner": 5}  # "gardner": 5x5 Gardner chess (analysis.gardner)
VARIANTS = tuple(BOARD_SIZE)
