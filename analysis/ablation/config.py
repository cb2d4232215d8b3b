"""An ablation's TOML file: the variants (each a training config under configs/), where their
measurements are kept, what they are measured on, and the paper's finding beside ours."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from analysis.tomlconfig import check_settings, read_toml
from analysis.train.config import TrainConfig, load_config

MEASURES = ("puzzles", "sts", "metrics", "value_quality", "value_sanity", "heads", "match")
# The cards' match: 100 games against Stockfish limited to UCI_Elo 1350, from ECO openings (``limit``: that many games).
MATCH_OPPONENT = "stockfish:elo=1350,movetime=0.02"
MATCH_GAMES = 100
MATCH_MAX_PLIES = 300


@dataclass(frozen=True)
class Variant:
    """One network of the ablation: its training config and the agent its card measures."""

    name: str
    config: Path
    algo: str  # policy | value: the agent of puzzles, STS and the action metrics
    budget: str = ""  # the budget this variant shares with the others of its group (ChessBench's two)

    @property
    def train(self) -> TrainConfig:
        return load_config(self.config)


@dataclass(frozen=True)
class Paper:
    """What the paper says about this comparison (its text in ../shared/papers/ holds no table figures)."""

    source: str
    scale: str
    finding: str


@dataclass(frozen=True)
class AblationConfig:
    name: str
    title: str
    data: Path  # the annotated dataset whose test split every variant is measured on
    store: Path  # weights/ablations/<name>: exports, histories, measurements, cards
    variants: tuple[Variant, ...]
    paper: Paper
    doc: Path = Path("docs/ablations.md")
    puzzles: Path = Path("../shared/data/puzzles/lichess_puzzles_1000.csv")
    sts: Path = Path("../shared/data/suites/sts_v3.epd")
    openings: Path = Path("../shared/data/openings")  # the match's ECO openings
    parallel: int = 2  # variants trained (and commands measured) at once, one torch thread each
    threads: int = 1
    heads_positions: int = 256  # the head atlas's sample (all of it by default)
    limit: int | None = None  # only the first N items of every suite and split (tests)
    summary: str = ""  # one paragraph on the setup, for the table's section
    measures: tuple[str, ...] = MEASURES
    # Check before training that every variant reads the same datasets and every training position
    # has action values, so an action-value net sees the positions the others do.
    same_positions: bool = False

    def variant(self, name: str) -> Variant:
        for v in self.variants:
            if v.name == name:
                return v
        raise ValueError(f"{self.name}: no variant {name!r} (known: {', '.join(v.name for v in self.variants)})")


@dataclass(frozen=True)
class AblationOutline:
    """An ablation file's name, title and variants' names: what lists its networks (the site's picker),
    read without loading the variants' training configs, whose check imports the model families."""

    name: str
    title: str
    variants: tuple[str, ...]


def read_outline(path: str | Path) -> AblationOutline:
    """The outline of an ablation file; ValueError when it has no name, title or named variants."""
    raw = read_toml(path)
    try:
        return AblationOutline(str(raw["name"]), str(raw["title"]), tuple(str(v["name"]) for v in raw["variants"]))
    except (KeyError, TypeError) as exc:
        raise ValueError(f"{path}: bad ablation file: {exc}") from None


def load_ablation(path: str | Path) -> AblationConfig:
    """Parse and check an ablation file; every variant's training config must load too."""
    raw = read_toml(path)
    check_settings(raw, AblationConfig, path, required=("name", "title", "data", "store", "variants", "paper"))
    try:
        variants = tuple(Variant(name=v["name"], config=Path(v["config"]), algo=v["algo"], budget=v.get("budget", ""))
                         for v in raw.pop("variants"))
        paper = Paper(**raw.pop("paper"))
    except (KeyError, TypeError) as exc:
        raise ValueError(f"{path}: bad variant or paper table: {exc}") from None
    for key in ("data", "store", "doc", "puzzles", "sts", "openings"):
        if key in raw:
            raw[key] = Path(raw[key])
    if "measures" in raw:
        raw["measures"] = tuple(raw["measures"])
    cfg = AblationConfig(variants=variants, paper=paper, **raw)
    _check(cfg, path)
    return cfg


def _check(cfg: AblationConfig, path) -> None:
    names = [v.name for v in cfg.variants]
    if len(names) < 2 or len(set(names)) != len(names):
        raise ValueError(f"{path}: an ablation needs two or more variants with distinct names")
    unknown = set(cfg.measures) - set(MEASURES)
    if unknown:
        raise ValueError(f"{path}: unknown measure(s) {', '.join(sorted(unknown))}; known: {', '.join(MEASURES)}")
    if cfg.parallel < 1 or cfg.threads < 1 or not 1 <= cfg.heads_positions <= 256:
        raise ValueError(f"{path}: parallel and threads must be positive, heads_positions 1 to 256")
    for v in cfg.variants:
        if v.algo not in ("policy", "value"):
            raise ValueError(f"{path}: variant {v.name}: algo must be policy or value, not {v.algo!r}")
        try:
            train = v.train
        except ValueError as exc:
            raise ValueError(f"{path}: variant {v.name}: {exc}") from None
        if train.export is None:
            raise ValueError(f"{path}: variant {v.name}: its training config must name its export")
    outs = [v.train.out for v in cfg.variants]
    if len(set(outs)) != len(outs):
        raise ValueError(f"{path}: two variants share a run directory")
