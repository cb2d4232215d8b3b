"""lc0's own search settings as a preset for Sightline's MCTS (lc0 v0.32.1, UCI defaults).

lc0's rules are the default (``MCTSSettings()``, ``--algo mcts``, the site's MCTS): with maia-1900
they solve more Lichess puzzles at the same node budget than Sightline's earlier rules, which stay
one option away as ``preset="sightline"`` (``search --set preset=sightline``). The default keeps
Sightline's batches of 32 leaves (a network call's throughput), which solved the same puzzles as
lc0's batches of 7; ``mcts.lc0_settings()`` adds those for comparisons with lc0 itself. Each setting names the lc0 source it follows (github.com/LeelaChessZero/lc0, tag v0.32.1; paths and
line ranges in that tree). Where Sightline already does what lc0 does, the docstring says so.

- ``cpuct`` 1.745, ``cpuct_base`` 38739, ``cpuct_factor`` 3.894: ``src/search/classic/params.cc``
  l.543-549 (``Populate``; the root uses the same, ``RootHasOwnCpuctParams`` false, l.639-650).
  Formula ``cpuct = init + factor * log((N + base) / base)``: ``search.cc`` l.446-452
  (``ComputeCpuct``), and U = cpuct * sqrt(children's visits) * P / (1 + started visits):
  ``search.cc`` l.1708-1734, ``node.h`` l.408-410 (``GetU``). Sightline did the same already.
- ``fpu_reduction`` 0.330 at every node, the root included: ``params.cc`` l.564-568 (FpuStrategy
  "reduction", FpuValue 0.330, FpuStrategyAtRoot "same") and l.654-662 (kFpuAbsoluteAtRoot and
  kFpuValueAtRoot take the non-root values when "same"). The unvisited child's value is the parent's
  Q minus 0.330 * sqrt(prior mass of visited children): ``search.cc`` l.428-444 (``GetFpu``),
  ``node.cc`` l.219-223 (``GetVisitedPolicy``). Sightline did the same already; the root does not get
  the "absolute" FPU that lc0's self-play training uses.
- ``policy_temperature`` 1.359: ``src/neural/shared_params.cc`` l.69 (PolicyTemperature). The
  "sightline" preset uses 1.0, the network's own softmax.
- ``batch_size`` 7: the eigen/blas backend's ``GetMiniBatchSize`` is 7 (``src/neural/backends/blas/
  network_blas.cc`` l.172), taken when MinibatchSize is 0, its default (``params.cc`` l.542,
  ``search.h`` l.230-233). Not in the default, which keeps 32 (see above).
- ``max_collisions`` 1 (also only in ``mcts.lc0_settings()``): lc0 allows one collision visit per batch until the tree has 28 nodes, then
  slowly more (MaxCollisionVisitsScalingStart 28, ScalingEnd 145000, Power 1.25: ``params.cc``
  l.570-576); at a few hundred nodes a batch ends at about its first collision.
- ``in_flight_as_loss`` False: an edge's Q is the mean of its finished visits only, visits still in
  flight only raise its started count in U: ``node.h`` l.375-377 (``GetQ``: N > 0, else the FPU) and
  l.408-410 (``GetU``: 1 + GetNStarted()). The "sightline" preset counts in-flight visits as losses.
- ``count_reused_visits`` True: ``go nodes N`` stops when the playouts of this search plus the visits
  the reused tree already had reach N (``search.cc`` l.168 ``initial_visits_``, l.939;
  ``stoppers/stoppers.cc`` l.59-70, ``VisitsStopper``). The "sightline" preset spends N new ones.
- Terminals and proven results (unchanged: Sightline already does this): checkmate, stalemate, the
  50-move rule and a repetition inside the tree are exact draws or losses (``search.cc`` l.1930-1962,
  TwoFoldDraws true ``params.cc`` l.550); proven values propagate up ("sticky endgames",
  ``params.cc`` l.579, ``search.cc`` l.2213-2257 ``MaybeSetBounds``).
- Move choice (unchanged): a proven win first (the shortest), then most visits, then higher Q,
  then higher prior; proven losses last (the longest): ``search.cc`` l.725-823
  (``GetBestChildrenNoTemperature``); Sightline's ``tree.best_child`` is the same rule.
- Not carried over: moves-left utility (MovesLeftMaxEffect, ``params.cc`` l.593-600; none of the
  Maia nets has a moves-left head), and smart pruning (``SmartPruningFactor`` 1.33), which ends a
  search early once the best move can no longer change, saving time without changing the move.
"""

from __future__ import annotations

LC0 = "lc0"
SIGHTLINE = "sightline"
# The search rules in which the two presets differ; every other MCTSSettings field is shared.
VALUES = {
    LC0: dict(policy_temperature=1.359, in_flight_as_loss=False, count_reused_visits=True),
    SIGHTLINE: dict(policy_temperature=1.0, in_flight_as_loss=True, count_reused_visits=False),
}
DEFAULT = LC0  # it solves more puzzles at the same nodes (bench/lc0_parity.py; issue 30's closing note)
LC0_BATCHING = dict(batch_size=7, max_collisions=1)  # lc0's eigen backend (module docstring)

