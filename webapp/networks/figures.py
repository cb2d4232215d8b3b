"""A network's measured strength, read from the figures its checkpoint carries (its card's tables).

``analysis report`` writes each measurement into the file's metadata under a name that says what
was run: ``puzzles_<agent>``, ``sts_<agent>``, ``match_<agent>_vs_sf1350``, ``value_quality``; the
comparison rows a card quotes are stored as ``baseline_*`` and ``reference_*`` and are not this
network's. The site shows these figures (the networks page, the home dropdown) and picks its
default network from them (``default_rank``), so nothing about a network's strength is typed into a
template or the code.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from analysis.eval.elo import PairResult, fit_elo

# A network this weak is marked so wherever it is chosen: its best agent solves under 5% of the
# puzzles (material-greedy, a one-ply material count, solves 8.0%: cf-small's card) or loses by
# more than 700 Elo to Stockfish 1350 (material-greedy: -921).
VERY_WEAK_PUZZLES = 0.05
VERY_WEAK_ELO = -700.0

_OWN = re.compile(r"^(puzzles|sts|match)_(.+)$")

# Every card's match is against Stockfish limited with ``UCI_Elo`` 1350, so 1350 + the measured difference
# puts every network on one scale: Stockfish's own, which its authors calibrated against CCRL-like
# engine lists, not against human players' online ratings.
STOCKFISH_ELO = 1350
SCALE_NOTE = ("Elo on Stockfish's UCI_Elo scale (roughly that of computer rating lists such as CCRL; not "
              "Lichess's): 1350 plus the difference measured in 100 games against Stockfish at UCI_Elo 1350, "
              "with its 95% interval from those games' wins, draws and losses.")
# The one puzzle agent every network is shown with: its raw policy's top move; a network without a policy
# head plays the move its value prefers one ply ahead.
PUZZLE_AGENTS = {"policy": "raw policy, top move", "value": "value, one ply (no policy head)"}


@dataclass(frozen=True)
class Rating:
    """An absolute Elo on Stockfish's scale; ``low``/``high`` the 95% interval (None without W/D/L)."""

    value: float
    low: float | None = None
    high: float | None = None

    @property
    def text(self) -> str:
        interval = f" ({_tens(self.low)}-{_tens(self.high)})" if self.low is not None else ""
        return f"about {_tens(self.value)}{interval}"


def _tens(x: float) -> str:
    """Rounded to ten: a 100-game match measures no finer."""
    return f"{10 * round(x / 10):.0f}"


def rating(wins: int, draws: int, losses: int, anchor: float = STOCKFISH_ELO) -> Rating:
    """The rating and 95% interval of a player who scored ``wins``/``draws``/``losses`` against an opponent
    rated ``anchor``, by the site's one Elo fit (``analysis.eval.elo``, anchored at the opponent)."""
    fit = fit_elo([PairResult("network", "stockfish", wins, draws, losses)], anchor="stockfish",
                  anchor_rating=anchor)
    low, high = fit.interval("network")
    return Rating(fit.ratings["network"], low, high)


@dataclass(frozen=True)
class Measured:
    """One figure: ``value`` for ranking, ``text`` for people, ``agent`` that produced it."""

    value: float
    text: str
    agent: str


@dataclass(frozen=True)
class Strength:
    puzzles: Measured | None = None
    sts: Measured | None = None
    elo: Measured | None = None
    value_quality: Measured | None = None
    rating: Rating | None = None  # ``elo``'s match on Stockfish's scale
    one_agent: Measured | None = None  # puzzles by the one agent every network is shown with

    @property
    def measured(self) -> bool:
        return any((self.puzzles, self.sts, self.elo))

    @property
    def very_weak(self) -> bool:
        return ((self.puzzles is not None and self.puzzles.value < VERY_WEAK_PUZZLES)
                or (self.elo is not None and self.elo.value < VERY_WEAK_ELO))

    @property
    def headline(self) -> str:
        """The few words the home dropdown shows: Elo on Stockfish's scale with its interval, and puzzles
        solved by the one agent (``one_agent``, named), else by the best agent."""
        parts = []
        if self.rating is not None:
            parts.append(f"Elo {self.rating.text}")
        elif self.elo is not None:
            parts.append(f"Elo {self.elo.value:+.0f} vs SF 1350")
        if self.one_agent is not None:
            parts.append(f"puzzles {100 * self.one_agent.value:.1f}% ({self.one_agent.agent})")
        elif self.puzzles is not None:
            parts.append(f"puzzles {100 * self.puzzles.value:.1f}%")
        if not parts and self.sts is not None:
            parts.append(f"STS {self.sts.text}")
        text = ", ".join(parts) if parts else "strength not measured"
        return f"VERY WEAK: {text}" if self.very_weak else text


def strength(metrics: dict | None, puzzle_agent: str | None = None) -> Strength:
    """This network's own best figure of each kind (over its agents) in ``metrics``; with ``puzzle_agent``
    (a key of ``PUZZLE_AGENTS``) also that agent's puzzles (``puzzles_<agent>``) as ``one_agent``."""
    metrics = metrics or {}
    best: dict[str, Measured] = {}
    entries: dict[str, dict] = {}
    for key, entry in metrics.items():
        match = _OWN.match(key)
        if not match or not isinstance(entry, dict):
            continue
        kind = match.group(1)
        figure = _READERS[kind](entry)
        if figure is not None and (kind not in best or figure.value > best[kind].value):
            best[kind], entries[kind] = figure, entry
    return Strength(best.get("puzzles"), best.get("sts"), best.get("match"),
                    _value_quality(metrics.get("value_quality")),
                    rating=_rating(entries["match"]) if "match" in entries else None,
                    one_agent=_one_agent(metrics, puzzle_agent))


def _rating(entry: dict) -> Rating:
    """From the match's W/D/L where the card has them; else the difference alone, with no interval."""
    record = [entry.get(k) for k in ("wins", "draws", "losses")]
    if all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in record) and sum(record):
        return rating(*record)
    return Rating(STOCKFISH_ELO + _number(entry, "elo_diff"))


def _one_agent(metrics: dict, agent: str | None) -> Measured | None:
    entry = metrics.get(f"puzzles_{agent}") if agent in PUZZLE_AGENTS else None
    figure = _puzzles(entry) if isinstance(entry, dict) else None
    return None if figure is None else Measured(figure.value, figure.text, PUZZLE_AGENTS[agent])


def _number(entry: dict, key: str) -> float | None:
    value = entry.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def _puzzles(entry: dict) -> Measured | None:
    solved, total = _number(entry, "solved"), _number(entry, "total")
    if solved is None or not total:
        return None
    return Measured(solved / total, f"{100 * solved / total:.1f}% ({solved:,.0f} of {total:,.0f})",
                    str(entry.get("agent", "")))


def _sts(entry: dict) -> Measured | None:
    """STS on the full suite, or scaled to 15,000 where a subset was run (``per_15000``)."""
    score, maximum = _number(entry, "score"), _number(entry, "maximum")
    per = _number(entry, "per_15000")
    if maximum == 15000 and score is not None:
        per = score
    if per is None or (maximum is not None and maximum < 1500):  # a 30-position sample ranks nothing
        return None
    return Measured(per, f"{per:,.0f} of 15,000", str(entry.get("agent", "")))


def _match(entry: dict) -> Measured | None:
    """Only matches against Stockfish at UCI_Elo 1350, the one opponent every card shares."""
    elo = _number(entry, "elo_diff")
    if entry.get("b") != "stockfish-1350" or elo is None:
        return None
    record = f"+{entry.get('wins', 0)} ={entry.get('draws', 0)} -{entry.get('losses', 0)}"
    ci = entry.get("ci95")
    interval = (f" [{ci[0]:+.0f}, {ci[1]:+.0f}]" if isinstance(ci, list) and len(ci) == 2
                and all(isinstance(x, (int, float)) for x in ci) else "")
    return Measured(elo, f"{elo:+.0f}{interval} ({record})", str(entry.get("a", "")))


def _value_quality(entry) -> Measured | None:
    """MAE against Stockfish's win probability; lower is better, so ``value`` is its negative."""
    overall = entry.get("overall") if isinstance(entry, dict) else None
    if not isinstance(overall, dict) or _number(overall, "mae") is None:
        return None
    mae, ece, bias = (_number(overall, k) for k in ("mae", "ece", "side_to_move_bias"))
    text = f"MAE {mae:.3f}" + (f", ECE {ece:.3f}" if ece is not None else "")
    text += f", side-to-move bias {bias:+.3f}" if bias is not None else ""
    return Measured(-mae, text, f"{entry.get('positions', '?')} test positions of {entry.get('data', '?')}")


_READERS = {"puzzles": _puzzles, "sts": _sts, "match": _match}


DEFAULT_RULE = ("The default network is, among the trained networks whose value passes the value sanity suite "
                "(the eval graph rests on the value), the one with the best Elo against Stockfish 1350 on its "
                "card; then the most puzzles solved; then the name. With no such network, the same order "
                "over every trained network.")


def default_rank(network) -> tuple:
    """Sort key for ``DEFAULT_RULE`` (lower is preferred); ``network`` is a ``Network``."""
    found = strength(network.metrics)
    elo = found.elo.value if found.elo is not None else -math.inf
    puzzles = found.puzzles.value if found.puzzles is not None else -math.inf
    return (not network.trained, network.value_sanity.state != "passed", -elo, -puzzles, network.name)


def card_lead(card: str, name: str) -> str:
    """The card's lead paragraph (what the network is and is for): the first paragraph that is not a
    heading, within the section headed with the network's name where the card covers several."""
    blocks = [b.strip() for b in (card or "").split("\n\n") if b.strip()]
    start = next((i + 1 for i, b in enumerate(blocks) if b.startswith("#") and b.lstrip("# ").startswith(name)
                  and i > 0), 0)
    return next((b for b in blocks[start:] if not b.startswith(("#", "-", "|", "```", "!["))), "")


GOOD_FOR = re.compile(r"^Good for:\s*(.+)$", re.MULTILINE)
# What a user has no use for in a lead: a repository path in code (`../shared/papers/`), a link to a
# repository file ([docs/ablations.md](../docs/ablations.md): its words kept unless they are a path),
# and the brackets and commas those leave empty.
REPO_CODE = re.compile(r"`[^`]*/[^`]*`")
REPO_LINK = re.compile(r"\[([^\]]*)\]\((?!https?:)[^)]*\)")
EMPTY = re.compile(r"\s*\(\s*[,;]?\s*\)|,\s*(?=[,)])")


def good_for(card: str, name: str) -> str:
    """What the network is good for, in a user's words: the card's ``Good for:`` line within its
    section, else its lead without repository paths."""
    lead_and_rest = _section(card, name)
    found = GOOD_FOR.search(lead_and_rest)
    if found:
        return found.group(1).strip()
    text = REPO_LINK.sub(lambda m: "" if "/" in m.group(1) else m.group(1), REPO_CODE.sub("", card_lead(card, name)))
    return EMPTY.sub("", text)


def _section(card: str, name: str) -> str:
    """The card's part about ``name``: from its heading to the next of the same depth, else all of it."""
    heading = re.search(rf"^(#+) {re.escape(name)}\b.*$", card or "", re.MULTILINE)
    if heading is None or heading.start() == 0:
        return card or ""
    rest = card[heading.end():]
    end = re.search(rf"^{heading.group(1)} ", rest, re.MULTILINE)
    return rest[:end.start()] if end else rest


def sanity_counts(metrics: dict | None) -> tuple[int, int] | None:
    """(passed, total) checks of the site's own value sanity run, None when it has none."""
    checks = ((metrics or {}).get("value_sanity") or {}).get("checks")
    if not isinstance(checks, list) or not checks:
        return None
    return sum(1 for c in checks if isinstance(c, dict) and c.get("passed") is True), len(checks)
