"""Giraffe's training, as the paper (Lai 2015, sections 4.3-4.5 and 6): a material-only
bootstrap, TD-Leaf(lambda) self-play, then the move evaluator on positions sampled from
searches, labelled with the best move of a deeper search. ``run.train`` runs the stages
with resume and a wall-clock limit; ``python -m analysis giraffe-train`` is its CLI."""
