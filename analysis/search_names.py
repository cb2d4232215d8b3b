"""The searches' names, outside ``analysis.search`` (whose package imports every search): the
CLI's --help lists them without importing numpy; ``analysis.search.registry`` checks at import
that this is exactly its list."""

SEARCH_NAMES = ("policy", "value", "mcts", "gumbel", "probability", "alphabeta")
