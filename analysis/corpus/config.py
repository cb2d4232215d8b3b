"""The corpus recipe: everything a shard's bytes depend on, and where the inputs live."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
SHARED_DATA = REPO_ROOT.parent / "shared" / "data"
MAIA_NAMES = ("maia-1100", "maia-1500", "maia-1900")


def default_maias() -> list[Path]:
    """The shipped Maia checkpoints (weights/maia-*.safetensors)."""
    return [REPO_ROOT / "weights" / f"{name}.safetensors" for name in MAIA_NAMES]


@dataclass(frozen=True)
class CorpusConfig:
    """What a shard contains. Two builds with equal configs write equal bytes (see ``recipe``)."""

    seed: int = 0
    nodes: int = 2000  # Stockfish's node budget per position (docs/training.md: how it was chosen)
    top_k: int = 3  # Stockfish lines (multipv) kept for the soft policy target (chosen by measurement)
    hash_mb: int = 4  # cleared before every position (ucinewgame): labels do not depend on order
    games_per_maia: int = 12  # self-play games per Maia per shard, played in one batch
    masters_per_shard: int = 4  # master games per shard, in file order, until they run out
    temperature: float = 1.0  # Maia's policy softmax temperature when sampling a move
    max_plies: int = 200  # a self-play game stops here if it has not ended
    test_share: float = 0.05  # games given split "test" (analysis.data.plan.game_split)
    # Positions before this ply are kept once per game, not once overall (as analysis.data.plan's):
    # deduplicated away, the start position and the first moves, the only inputs with empty or short
    # history planes, were each in the corpus once, and the value learnt nothing of them.
    opening_plies: int = 8
    maias: tuple[Path, ...] = field(default_factory=lambda: tuple(default_maias()))
    openings_dir: Path = SHARED_DATA / "openings"
    pgn_files: tuple[Path, ...] = field(default_factory=lambda: tuple(sorted((SHARED_DATA / "pgn").glob("*.pgn"))))
    puzzle_files: tuple[Path, ...] = field(
        default_factory=lambda: tuple(sorted((SHARED_DATA / "puzzles").glob("*.csv"))))
    suite_files: tuple[Path, ...] = field(
        default_factory=lambda: tuple(sorted((SHARED_DATA / "suites").glob("*.epd"))))

    def __post_init__(self) -> None:
        if self.nodes <= 0 or self.top_k <= 0 or self.hash_mb <= 0:
            raise ValueError("nodes, top_k and hash_mb must be positive")
        if self.games_per_maia < 0 or self.masters_per_shard < 0 or self.max_plies <= 0:
            raise ValueError("games_per_maia and masters_per_shard must be >= 0, max_plies > 0")
        if self.temperature <= 0:
            raise ValueError("temperature must be positive")
        if self.opening_plies < 0:
            raise ValueError("opening_plies must be >= 0")
        if not 0 <= self.test_share < 1:
            raise ValueError("test_share must be in [0, 1)")
        if not self.maias:
            raise ValueError("at least one Maia is needed")

    def recipe(self, stockfish_version: str) -> dict:
        """The card's ``recipe``: a resumed build must have the same one (inputs named by content)."""
        return {
            "seed": self.seed, "nodes": self.nodes, "top_k": self.top_k, "hash_mb": self.hash_mb,
            "threads": 1, "stockfish": stockfish_version,
            "games_per_maia": self.games_per_maia, "masters_per_shard": self.masters_per_shard,
            "temperature": self.temperature, "max_plies": self.max_plies, "test_share": self.test_share,
            "opening_plies": self.opening_plies,
            "maias": _digests(self.maias), "openings": _digests(sorted(self.openings_dir.glob("*.tsv"))),
            "pgn": _digests(self.pgn_files), "held_out": _digests([*self.puzzle_files, *self.suite_files]),
        }


def _digests(paths) -> dict[str, str]:
    """{file name: first 16 hex digits of its sha256}."""
    return {Path(p).name: hashlib.sha256(Path(p).read_bytes()).hexdigest()[:16] for p in paths}
