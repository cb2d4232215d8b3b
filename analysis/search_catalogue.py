"""The one catalogue of searches: every other list (CLI choices, the site's form, the worker,
the UCI engine's options) is read from here.

A search is one class in ``analysis.search`` and one ``register`` call below; the class
points at its entry (``spec``), and ``analysis.search.registry`` imports the class from
``implementation`` only when it is asked for. This module imports nothing heavy, so the
CLI's --help lists the searches without loading numpy or python-chess.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class UCIOption:
    """A UCI option that sets one field of a search's settings.

    ``kind``: "spin" (an integer in [``min``, ``max``]) or "number" (a float, offered as
    UCI type string). ``default`` is the settings dataclass's own default (a test holds them
    equal); searches sharing an option name must define it alike.
    """

    name: str
    setting: str
    kind: str
    default: int | float
    min: int | None = None
    max: int | None = None

    def __post_init__(self):
        if self.kind not in ("spin", "number"):
            raise ValueError(f"UCI option {self.name}: kind must be spin or number, not {self.kind!r}")
        if self.kind == "spin" and (self.min is None or self.max is None):
            raise ValueError(f"UCI option {self.name}: a spin needs min and max")

    def declaration(self) -> str:
        """The ``option`` line the engine sends after ``uci``."""
        if self.kind == "spin":
            return f"option name {self.name} type spin default {self.default} min {self.min} max {self.max}"
        return f"option name {self.name} type string default {self.default}"


@dataclass(frozen=True)
class SearchSpec:
    """What is known of a search without importing it.

    ``budget_unit``: "nodes", "depth" or "" (fixed work: the budget is ignored);
    ``needs_policy``: the search reads the network's policy head;
    ``implementation``: "module:Class" of the ``analysis.search.base.Search`` subclass.
    """

    name: str
    label: str
    implementation: str
    budget_unit: str
    budget_min: int
    budget_max: int
    budget_default: int
    needs_policy: bool
    uci_options: tuple[UCIOption, ...] = ()

    def __post_init__(self):
        if self.budget_unit not in ("nodes", "depth", ""):
            raise ValueError(f"search {self.name}: budget_unit must be nodes, depth or empty")
        if not 1 <= self.budget_min <= self.budget_default <= self.budget_max:
            raise ValueError(f"search {self.name}: budget range must hold its default")

    @property
    def fixed(self) -> bool:
        return not self.budget_unit

    def nodes_per_position(self, budget: int) -> int:
        """Search nodes one position costs at this budget: the node budget itself; for a depth,
        alpha-beta's growth (about 2,500 nodes at depth 3, 25,000 at depth 4)."""
        if self.budget_unit == "nodes":
            return budget
        if self.budget_unit == "depth":
            return 25 * 10 ** (budget - 1)
        return 1

    def budget_kwargs(self, budget: int) -> dict[str, int]:
        """Keyword arguments for ``analysis.search.base.Budget``."""
        return {self.budget_unit: budget} if self.budget_unit else {"nodes": 1}


SEARCHES: dict[str, SearchSpec] = {}


def register(spec: SearchSpec) -> SearchSpec:
    """Add ``spec`` to the catalogue; a name taken or a UCI option defined two ways is refused."""
    if spec.name in SEARCHES:
        raise ValueError(f"a search named {spec.name!r} is registered already")
    known = {option.name.lower(): option for option in uci_options()}
    for option in spec.uci_options:
        other = known.get(option.name.lower())
        if other is not None and (other.kind, other.default, other.min, other.max) != \
                (option.kind, option.default, option.min, option.max):
            raise ValueError(f"UCI option {option.name} of {spec.name} differs from the one registered already")
    SEARCHES[spec.name] = spec
    return spec


def unregister(name: str) -> None:
    """Remove a search (for tests that register a toy one)."""
    del SEARCHES[name]


def search_names() -> tuple[str, ...]:
    return tuple(SEARCHES)


def search_spec(name: str) -> SearchSpec:
    try:
        return SEARCHES[name]
    except KeyError:
        raise ValueError(f"unknown search {name!r}; choose one of {', '.join(SEARCHES)}") from None


def uci_options() -> list[UCIOption]:
    """Every search's UCI options, each name once, in catalogue order."""
    seen: dict[str, UCIOption] = {}
    for spec in SEARCHES.values():
        for option in spec.uci_options:
            seen.setdefault(option.name.lower(), option)
    return list(seen.values())


_MINIBATCH = UCIOption("MinibatchSize", "batch_size", "spin", 32, 1, 1024)

# name, label, implementation, budget unit, min, max, default
POLICY = register(SearchSpec("policy", "Policy (the network's top move, no search)",
                             "analysis.search.policy:PolicySearch", "", 1, 1, 1, needs_policy=True))
VALUE = register(SearchSpec("value", "Value (best move by 1-ply value)", "analysis.search.value:ValueSearch",
                            "", 1, 1, 1, needs_policy=False))
MCTS = register(SearchSpec("mcts", "MCTS (PUCT)", "analysis.search.mcts:MCTS", "nodes", 1, 20_000, 200,
                           needs_policy=True, uci_options=(UCIOption("CPuct", "cpuct", "number", 1.745), _MINIBATCH)))
GUMBEL = register(SearchSpec("gumbel", "Gumbel MuZero (sequential halving)", "analysis.search.gumbel:GumbelMuZero",
                             "nodes", 2, 20_000, 64, needs_policy=True, uci_options=(_MINIBATCH,)))
PROBABILITY = register(SearchSpec("probability", "Probability search", "analysis.search.probability:ProbabilitySearch",
                                  "nodes", 1, 20_000, 200, needs_policy=True))
ALPHABETA = register(SearchSpec("alphabeta", "Alpha-beta (network value at the leaves)",
                                "analysis.search.alphabeta:AlphaBeta", "depth", 1, 6, 2, needs_policy=False))

DEFAULT_SEARCH = VALUE.name
"""The search named when none is: it needs only a value, so every network can run it."""
