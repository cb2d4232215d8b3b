"""Each study method's settings dataclass, torch-free: the site parses a submission's settings with
them (``analysis.studies.catalogue``) without loading a method, and each method module runs with the
same class."""

from __future__ import annotations

from dataclasses import dataclass

from analysis.studies.errors import StudyInputError
from analysis.studies.lookahead_set import PuzzleRules


@dataclass(frozen=True)
class ProbeConfig:
    """The paper's settings: rank 32, Adam at lr 1e-2, 5 epochs of batches of 64, a 70/30 split, 5 seeds."""

    rank: int = 32
    lr: float = 1e-2
    epochs: int = 5
    batch: int = 64
    train_share: float = 0.7
    seeds: int = 5

    def __post_init__(self):
        if self.rank < 1 or self.epochs < 1 or self.batch < 1 or self.seeds < 1:
            raise ValueError("rank, epochs, batch and seeds must each be at least 1")
        if not 0.0 < self.train_share < 1.0:
            raise ValueError(f"train_share must lie strictly between 0 and 1, not {self.train_share}")


@dataclass(frozen=True)
class LookaheadSettings(PuzzleRules):
    sparring: str | None = None  # the weaker net the puzzle set is built with (a name or a path)


@dataclass(frozen=True)
class HeadsSettings(PuzzleRules):  # the look-ahead set's rules, as lookahead takes them
    sparring: str | None = None  # the weaker net the look-ahead set is built with (required)
    threshold: float = 1.5  # log-odds drop that counts as a hit in the single-entry test (the paper's)
    atlas_positions: int = 256  # the head atlas's sample, for the piece-movement heads
    top: int = 3  # heads listed from the head-patching ranking


RULES = ("auto", "kept", "correct", "line")


@dataclass(frozen=True)
class ProbeSettings(PuzzleRules):  # the look-ahead set's rules, as lookahead takes them
    sparring: str | None = None  # the weaker net the look-ahead set is built with (rule "kept")
    rule: str = "auto"  # which puzzles: "kept", "correct", "line" (structural only: the item's own line); auto:
    # "kept" with a sparring net, else "correct"
    mined: int = 200  # master-game positions added (0: none; ignored when the positions are mined already)
    rank: int = 32
    lr: float = 1e-2
    epochs: int = 5
    batch: int = 64
    train_share: float = 0.7
    seeds: int = 5

    def __post_init__(self):
        if self.rule not in RULES:
            raise StudyInputError(f"rule must be one of {', '.join(RULES)}, not {self.rule!r}")
        if self.rule == "kept" and not self.sparring:
            raise StudyInputError("rule kept needs a sparring network (--sparring NAME)")
        if self.mined < 0:
            raise StudyInputError(f"mined must be 0 or more, not {self.mined}")
        try:
            self.config()
        except ValueError as exc:
            raise StudyInputError(f"bad probe setting: {exc}") from None

    def puzzle_rule(self) -> str:
        return self.rule if self.rule != "auto" else "kept" if self.sparring else "correct"

    def config(self) -> ProbeConfig:
        return ProbeConfig(rank=self.rank, lr=self.lr, epochs=self.epochs, batch=self.batch,
                           train_share=self.train_share, seeds=self.seeds)


@dataclass(frozen=True)
class KnowingDoingSettings:
    positions: int = 400  # per concept's balanced probe set (train + validation + test)
    components: int = 64  # PCA dimensions of a position-level probe's features
    bootstrap: int = 200  # resamples for the probes' intervals


@dataclass(frozen=True)
class ForgottenSettings:
    nodes: int = 20_000  # Stockfish's budget per position (fixed nodes: reproducible)
    margin: float = 0.05  # expected score (0..1) by which an earlier move must beat the final one
