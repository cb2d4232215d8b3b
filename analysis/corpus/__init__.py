"""The position corpus: Maia self-play and master games, Stockfish-labelled, in write-once shards.

``config`` (the recipe), ``selfplay`` (batched Maia games from named openings), ``masters`` (the
master games' positions), ``label`` (Stockfish at a fixed node budget, top-k moves), ``shard``
(one shard from its index alone), ``build`` (the resumable build loop and its status) and
``reader`` (the shards as the training loop's annotated table). See docs/training.md,
"The position corpus".
"""
