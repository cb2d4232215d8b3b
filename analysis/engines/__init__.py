"""External engines, in one room: Stockfish and lc0 driven over UCI through python-chess.

``stockfish`` finds Stockfish (once, for every caller) and starts it; ``limit``, ``pool`` and
``scores`` are what the data annotator asks of it; ``reference`` is the engine lane's Stockfish
beside the network. ``lc0`` runs lc0's own search on a network, ``lc0_compare`` is its answer on one
position and ``lc0_versus_mcts`` puts it beside Sightline's MCTS (the site's "compare with lc0").
Nothing is imported here: each caller takes the module it needs.
"""
