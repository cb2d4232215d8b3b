"""The searches of the four papers, behind one call.

    from analysis.search import Budget, run_search

    result = run_search("mcts", board, evaluator, {"cpuct": 2.0},
                        budget=Budget(nodes=800), progress=callback)

* ``name``: "policy", "value", "mcts", "gumbel", "probability" or "alphabeta"
  (``search_names()``; the catalogue is ``analysis.search_catalogue``).
* ``board``: a ``chess.Board`` whose move stack is the game so far (networks
  see the history; repetitions are judged from it). It is not modified.
* ``evaluator``: anything implementing ``analysis.evaluator.Evaluator``.
* ``settings``: the search's dataclass (``PolicySettings``, ``ValueSettings``,
  ``MCTSSettings``, ``GumbelSettings``, ``ProbabilitySettings``,
  ``AlphaBetaSettings``), a dict of plain values (checked by
  ``make_settings``, which raises ``ValueError`` naming the bad field), or None
  for the defaults.
* ``budget``: ``Budget(nodes=, movetime_ms=, depth=)``; the first limit reached
  ends the search; None uses the search's default; ``Budget()`` runs until stopped.
* ``progress``: called in the search thread about 10 times a second with a
  ``SearchResult`` snapshot (``final=False``), and once more with the final result.

Every search returns a ``SearchResult``: ``best_move``, ``pv``, ``score``
(expected score in [0, 1] for the side to move), ``wdl`` (when known),
``mate`` (moves, when proven), ``nodes``, ``nps``, ``depth``, ``seldepth`` and
``root`` (per root move: visits, q, prior for MCTS/Gumbel; score for the
others). ``to_json()`` gives the CLI's JSON object. Gumbel's improved policy
(the self-play target) is in ``extras["improved_policy"]``.

To cancel from another thread, build the search yourself:
``search = make_search(name, evaluator, settings)``, call ``search.run(...)``
in a worker thread and ``search.stop()`` anywhere: it returns the best result
so far within 200 ms. Keeping the object between moves reuses the MCTS tree and
the alpha-beta transposition table; ``search.reset()`` forgets them.
"""

from analysis.search.alphabeta import AlphaBeta, AlphaBetaSettings
from analysis.search.base import Budget, RootMove, Search, SearchResult
from analysis.search.gumbel import GumbelMuZero, GumbelSettings
from analysis.search.mcts import MCTS, MCTSSettings
from analysis.search.policy import PolicySearch, PolicySettings
from analysis.search.probability import ProbabilitySearch, ProbabilitySettings
from analysis.search.registry import make_search, make_settings, run_search, search_class
from analysis.search.value import ValueSearch, ValueSettings
from analysis.search_catalogue import search_names

__all__ = [
    "AlphaBeta", "AlphaBetaSettings", "Budget", "GumbelMuZero", "GumbelSettings", "MCTS", "MCTSSettings",
    "PolicySearch", "PolicySettings", "ProbabilitySearch", "ProbabilitySettings", "RootMove",
    "Search", "SearchResult", "ValueSearch", "ValueSettings", "make_search", "make_settings", "run_search",
    "search_class", "search_names",
]
