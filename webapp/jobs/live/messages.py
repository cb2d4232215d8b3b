"""What a job's page receives: one frozen dataclass per websocket message kind, and the page's
JSON of a job's stored state (``job_snapshot``: the page's data, its state endpoint and the
socket's first message).

Point of view: every value here is WHITE's. An expected score is White's expected score, a WDL
is [White wins, draw, White loses], a mate distance is positive when White mates, a bound
("upper"/"lower") bounds White's score, action values are White's expected score after each
move. Results are stored for the side to move, as evaluators and searches give them; they are
turned to White's view here, once, with ``analysis.pov``, and the page never turns a value
round. Not points of view: probabilities of moves (policy, prior), visits, and a judgement's
``drop``, the size of the mover's loss (the page names the mover beside it). Values the page
does not read and whose point of view is each network's own (an evaluation's ``extras``, the
search's ``root_values`` that judgements are made from) stay in the database and the API.

Each message is built where the runner, the deep-search runner, the views and the consumer
send it (``Message.send`` hands ``kind`` and the JSON payload to a publisher); the page's one
dispatcher (static/sightline/game/socket.js) has a handler per kind.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Callable, ClassVar

import chess

from analysis.lens.decisions import for_ply
from analysis.pov import bound_for_white, mate_for_white, score_for_white, wdl_for_white, white_to_move
from webapp.jobs.models import AnalysisJob
from webapp.jobs.queue_wait import waiting_sentence
from webapp.jobs.results import job_results, san_line
from webapp.jobs.review import disagreements, engine_review, network_marks, network_swing

Publisher = Callable[[str, dict], None]
DEEP_SCORE_DIGITS, DEEP_WDL_DIGITS = 5, 4


# -- stored (side to move) JSON as White's ------------------------------------------------
def played_move(nodes: list[dict], node: dict) -> str | None:
    """The move played from ``node`` in the game (its first child's), None at the end of a line."""
    children = node.get("children") or ()
    return nodes[children[0]]["uci"] if children and children[0] < len(nodes) else None


def eval_for_white(data: dict, white: bool, played: str | None = None) -> dict:
    """A stored evaluation (``results.evaluation_json``) as White's; ``white``: White to move.
    Its decision timeline goes out for the move ``played`` from the position (``decisions.for_ply``):
    readout points are no point of view."""
    out = {k: v for k, v in data.items() if k != "extras"}
    if data.get("timeline") is not None:
        out["timeline"] = for_ply(data["timeline"], played)
    out["score"] = score_for_white(data["score"], white)
    out["wdl"] = wdl_for_white(data.get("wdl"), white)
    if data.get("static_score") is not None:  # a family whose shown value is a search's
        out["static_score"] = score_for_white(data["static_score"], white)
    if data.get("action_values") is not None:
        out["action_values"] = {uci: score_for_white(v, white) for uci, v in data["action_values"].items()}
    return out


def lens_for_white(data: dict, white: bool) -> dict:
    """A stored lens answer (``analysis.lens.answers.answer``) as White's: expected scores and WDL
    per readout point, a scaled unit's scores, a grid's clean score and score changes (a change
    of White's score is the mover's change, negated when Black moves)."""
    out = dict(data)
    if data.get("score") is not None and isinstance(data["score"], list) and "readouts" in data:
        out["score"] = [score_for_white(s, white) for s in data["score"]]
        out["wdl"] = None if data.get("wdl") is None else [wdl_for_white(w, white) for w in data["wdl"]]
    for key in ("clean_score", "scaled_score"):
        if data.get(key) is not None:
            out[key] = score_for_white(data[key], white)
    if "exact" in data and data.get("score") is not None:
        sign = 1 if white else -1
        out["score"] = [[None if x is None else sign * x for x in row] for row in data["score"]]
    return out


def root_move_for_white(data: dict, white: bool) -> dict:
    out = dict(data)
    for key in ("q", "score"):
        if key in data:
            out[key] = score_for_white(data[key], white)
    if data.get("wdl") is not None:
        out["wdl"] = wdl_for_white(data["wdl"], white)
    return out


def search_for_white(data: dict, white: bool) -> dict:
    """A stored search (``results.search_json``) as White's."""
    out = {k: v for k, v in data.items() if k != "root_values"}
    out.update(score=score_for_white(data.get("score"), white), wdl=wdl_for_white(data.get("wdl"), white),
               mate=mate_for_white(data.get("mate"), white),
               root=[root_move_for_white(r, white) for r in data.get("root") or []])
    return out


def judgement_for_white(data: dict, mover_white: bool) -> dict:
    """A stored judgement (``judgements.judgement_json``, the mover's scores) as White's."""
    out = dict(data)
    for key in ("best_score", "played_score"):
        out[key] = score_for_white(data[key], mover_white)
    out["bound"] = bound_for_white(data["bound"], mover_white)
    return out


def engine_for_white(data: dict, white: bool) -> dict:
    """A stored engine value (``analysis.engines.reference.EngineValue.to_json``) as White's, with
    White's win % (lichess's curve). A checkmated side to move has mate 0 either way (the node's
    outcome says who)."""
    score = score_for_white(data["score"], white)
    return {**data, "cp": None if data.get("cp") is None else (data["cp"] if white else -data["cp"]),
            "mate": mate_for_white(data.get("mate"), white), "score": score, "win": round(100 * score, 1)}


def results_for_white(node: dict, parts: dict, played: str | None = None) -> dict:
    """One node's stored {eval, search, judgement, engine, engine_judgement} as White's.

    A judgement is of the move that led to the node: its mover is the side NOT to move at the node.
    ``judgement`` is the mark to show: the engine's where the engine valued the move (its ``source``
    is "engine"), else the network's; ``network_judgement`` is always the network's. ``played``:
    the move played from the node (for the evaluation's decision timeline).
    """
    white = white_to_move(node["fen"])
    out = {}
    if parts.get("eval") is not None:
        out["eval"] = eval_for_white(parts["eval"], white, played)
    if parts.get("search") is not None:
        out["search"] = search_for_white(parts["search"], white)
    if parts.get("engine") is not None:
        out["engine"] = engine_for_white(parts["engine"], white)
    if parts.get("judgement") is not None:
        out["network_judgement"] = out["judgement"] = judgement_for_white(parts["judgement"], not white)
    if parts.get("engine_judgement") is not None:
        out["judgement"] = judgement_for_white(parts["engine_judgement"], not white)
    return out


def deep_lines_for_white(lines: dict, white: bool) -> dict:
    """A deeper search's lines (``deep_runner.lines_json``) as White's, rounded as sent."""
    def score(v):
        return None if v is None else round(score_for_white(v, white), DEEP_SCORE_DIGITS)

    def wdl(v):
        return None if v is None else [round(x, DEEP_WDL_DIGITS) for x in wdl_for_white(v, white)]

    moves = [{**line, "q": score(line["q"]), "score": score(line["score"]), "wdl": wdl(line["wdl"])}
             for line in lines["lines"]]
    return {**lines, "score": score(lines["score"]), "lines": moves}


# -- the messages ----------------------------------------------------------------------------
@dataclass(frozen=True)
class Message:
    """A field whose default is None is left out of the JSON while it is None."""

    kind: ClassVar[str]

    def to_json(self) -> dict[str, Any]:
        """The payload (``publish.encode`` adds ``kind`` and ``sent_at_ms``)."""
        return {f.name: _plain(getattr(self, f.name)) for f in fields(self)
                if not (f.default is None and getattr(self, f.name) is None)}

    def wire(self) -> dict[str, Any]:
        return {"kind": self.kind, **self.to_json()}

    def send(self, publish: Publisher) -> None:
        publish(self.kind, self.to_json())

    @classmethod
    def from_json(cls, data: dict) -> "Message":
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


def _plain(value):
    """Lists and nested dataclasses as JSON; as in ``Message.to_json``, a field whose default is None
    is left out while it is None."""
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if hasattr(value, "__dataclass_fields__"):
        return {f.name: _plain(getattr(value, f.name)) for f in fields(value)
                if not (f.default is None and getattr(value, f.name) is None)}
    return value


@dataclass(frozen=True)
class Status(Message):
    """The job's state and counts: sent when it starts, changes and ends."""

    kind: ClassVar[str] = "status"
    status: str
    evaluated: int
    searched: int
    total: int
    error: str | None
    search: str
    budget: int
    engine_nodes: int = 0  # the engine lane's nodes per position; 0: no engine line asked for
    engine_name: str = ""
    engine_note: str = ""  # why the engine line is absent or stopped early, in a sentence
    waiting: str = ""  # a queued job's wait: behind what and for about how long (webapp.jobs.queue_wait)

    @classmethod
    def of(cls, job: AnalysisJob) -> "Status":
        return cls(status=job.status, evaluated=job.evaluated, searched=job.searched,
                   total=job.total_positions or len(job.nodes), error=job.error, search=job.search,
                   budget=job.budget, engine_nodes=job.engine_nodes, engine_name=job.engine_name,
                   engine_note=job.engine_note, waiting=waiting_sentence(job))


@dataclass(frozen=True)
class Snapshot(Message):
    """Everything stored for the job: the socket's first message (late joiners miss nothing)."""

    kind: ClassVar[str] = "snapshot"
    job: Status
    results: dict[str, dict]  # node id -> {"eval", "search", "engine", "judgement", "network_judgement"}, White's
    # The game review (``webapp.jobs.review``): {"engine": lichess's figures per player or None,
    # "network_marks": the network's marks per player}, and where the network and the engine disagree.
    review: dict | None = None
    disagreements: list[dict] | None = None
    # The network's side-to-move bias and whether its line swings (``review.network_swing``).
    network_swing: dict | None = None

    @classmethod
    def of(cls, job: AnalysisJob) -> "Snapshot":
        stored = job_results(job)
        results = {str(k): results_for_white(job.nodes[k], v, played_move(job.nodes, job.nodes[k]))
                   for k, v in stored.items()}
        return cls(job=Status.of(job), results=results, **review_parts(job, stored))

    @classmethod
    def from_json(cls, data: dict) -> "Snapshot":
        return cls(job=Status.from_json(data["job"]), results=data["results"], review=data.get("review"),
                   disagreements=data.get("disagreements"), network_swing=data.get("network_swing"))


def review_parts(job: AnalysisJob, stored: dict | None = None) -> dict:
    """The snapshot's review fields alone: what the page refreshes as engine values and marks
    arrive (``views.job_review``), without node results that would mask a missed message."""
    stored = job_results(job) if stored is None else stored
    return {"review": {"engine": engine_review(job, stored), "network_marks": network_marks(job, stored)},
            "disagreements": disagreements(job, stored), "network_swing": network_swing(job.network)}


def job_snapshot(job: AnalysisJob) -> dict:
    """The page's JSON of the job's stored state: ``{"job": ..., "results": ...}``."""
    return Snapshot.of(job).to_json()


@dataclass(frozen=True)
class Ply(Message):
    """A node's search (or evaluation), saved just before."""

    kind: ClassVar[str] = "ply"
    node: int
    eval: dict | None = None
    search: dict | None = None

    @classmethod
    def of(cls, node: dict, eval: dict | None = None, search: dict | None = None) -> "Ply":
        white = white_to_move(node["fen"])
        return cls(node=node["id"], eval=None if eval is None else eval_for_white(eval, white),
                   search=None if search is None else search_for_white(search, white))


@dataclass(frozen=True)
class NodeEval:
    node: int
    eval: dict


@dataclass(frozen=True)
class Plies(Message):
    """A batch's evaluations, together."""

    kind: ClassVar[str] = "plies"
    items: list[NodeEval]

    @classmethod
    def of(cls, evals: list[tuple[dict, dict]], nodes: list[dict] | None = None) -> "Plies":
        """``evals``: (node, its stored evaluation) pairs; ``nodes``: the job's, which name the move
        played from each node (for the decision timeline)."""
        return cls(items=[NodeEval(node["id"], eval_for_white(data, white_to_move(node["fen"]),
                                                              played_move(nodes, node) if nodes else None))
                          for node, data in evals])

    @classmethod
    def from_json(cls, data: dict) -> "Plies":
        return cls(items=[NodeEval(**item) for item in data["items"]])


@dataclass(frozen=True)
class NodeJudgement:
    """``judgement``: the mark to show (the network's here unless the engine has judged the move);
    ``network_judgement``: the network's."""

    node: int
    judgement: dict | None = None
    network_judgement: dict | None = None


@dataclass(frozen=True)
class Judgements(Message):
    """The network's judgements of moves, each after its parent's search: ``node`` is where the move leads."""

    kind: ClassVar[str] = "judgements"
    items: list[NodeJudgement]

    @classmethod
    def of(cls, judged: list[tuple[dict, dict]], engine_judged: frozenset | set = frozenset()) -> "Judgements":
        """``judged``: (node the move leads to, the network's stored judgement) pairs; ``engine_judged``:
        nodes whose move the engine has judged already (its mark stays the one shown)."""
        items = []
        for node, data in judged:
            white = judgement_for_white(data, not white_to_move(node["fen"]))
            items.append(NodeJudgement(node["id"], None if node["id"] in engine_judged else white, white))
        return cls(items=items)

    @classmethod
    def from_json(cls, data: dict) -> "Judgements":
        return cls(items=[NodeJudgement(**item) for item in data["items"]])


@dataclass(frozen=True)
class NodeEngine:
    """The engine's value of a node and its judgement of the move that led there (``judgement``)."""

    node: int
    engine: dict | None = None
    judgement: dict | None = None


@dataclass(frozen=True)
class Engine(Message):
    """The engine lane's values as they come, with the judgements they complete."""

    kind: ClassVar[str] = "engine"
    items: list[NodeEngine]

    @classmethod
    def of(cls, items: list[tuple[dict, dict | None, dict | None]]) -> "Engine":
        """``items``: (node, its stored engine value or None, the engine's judgement of its move or None)."""
        out = []
        for node, value, judgement in items:
            white = white_to_move(node["fen"])
            out.append(NodeEngine(node["id"], None if value is None else engine_for_white(value, white),
                                  None if judgement is None else judgement_for_white(judgement, not white)))
        return cls(items=out)

    @classmethod
    def from_json(cls, data: dict) -> "Engine":
        return cls(items=[NodeEngine(**item) for item in data["items"]])


@dataclass(frozen=True)
class Progress(Message):
    """A running search's totals and line, a few times a second."""

    kind: ClassVar[str] = "progress"
    node: int
    nodes: int
    nps: int
    elapsed_s: float
    best: str | None
    pv_san: list[str]
    score: float
    depth: int

    @classmethod
    def of(cls, node_id: int, snapshot, board: chess.Board) -> "Progress":
        """``snapshot``: the search's ``SearchResult`` so far, at ``board``."""
        return cls(node=node_id, nodes=snapshot.nodes, nps=snapshot.nps, elapsed_s=round(snapshot.elapsed_s, 3),
                   best=snapshot.best_move.uci() if snapshot.best_move else None,
                   pv_san=san_line(board, snapshot.pv[:8]),
                   score=score_for_white(round(float(snapshot.score), 5), board.turn == chess.WHITE),
                   depth=snapshot.depth)


@dataclass(frozen=True)
class Nodes(Message):
    """Nodes a line played on the board added (``variations``): other viewers add them too."""

    kind: ClassVar[str] = "nodes"
    items: list[dict]


@dataclass(frozen=True)
class Deep(Message):
    """A deeper search's state and lines ("analyse this position deeper")."""

    kind: ClassVar[str] = "deep"
    deep: int
    node: int
    budget: int
    status: str  # running, done or failed
    nodes: int | None = None
    nps: int | None = None
    elapsed_s: float | None = None
    depth: int | None = None
    best: str | None = None
    score: float | None = None
    lines: list[dict] | None = None
    stopped: bool | None = None
    final: bool | None = None
    error: str | None = None

    @classmethod
    def of(cls, header: dict, lines: dict | None, white: bool, **state) -> "Deep":
        """``header``: deep, node, budget; ``lines``: ``deep_runner.lines_json`` (the mover's)."""
        return cls(**header, **state, **(deep_lines_for_white(lines, white) if lines else {}))


@dataclass(frozen=True)
class EngineDeep(Message):
    """The deeper engine's state and lines ("go deeper" with Stockfish): each line an engine value
    (``engine_for_white``) with its ``rank``, best first."""

    kind: ClassVar[str] = "engine_deep"
    deep: int
    node: int
    budget: int  # nodes; 0: until stopped (within max_seconds)
    lines_asked: int
    max_seconds: int
    status: str  # running, done or failed
    engine: str | None = None
    depth: int | None = None
    seldepth: int | None = None
    nodes: int | None = None
    nps: int | None = None
    elapsed_s: float | None = None
    lines: list[dict] | None = None
    stopped: bool | None = None
    final: bool | None = None
    error: str | None = None

    @classmethod
    def of(cls, header: dict, found: dict | None, white: bool, **state) -> "EngineDeep":
        """``header``: deep, node, budget, lines_asked, max_seconds; ``found``: ``LinesSnapshot.to_json``
        (the side to move's)."""
        if found is None:
            return cls(**header, **state)
        lines = [engine_for_white(line, white) for line in found["lines"]]
        return cls(**header, **state, **{**found, "lines": lines})


@dataclass(frozen=True)
class Live(Message):
    """Live updates stopped (the message queue is down); the socket closes with 1013 next."""

    kind: ClassVar[str] = "live"
    state: str
    message: str


@dataclass(frozen=True)
class Pong(Message):
    """The answer to a client's ping (the page sends none: other clients measure round trips)."""

    kind: ClassVar[str] = "pong"
    t: Any


@dataclass(frozen=True)
class Error(Message):
    """A client's message was refused (the socket closes after it when it was junk)."""

    kind: ClassVar[str] = "error"
    error: str


MESSAGES: dict[str, type[Message]] = {cls.kind: cls for cls in (
    Status, Snapshot, Ply, Plies, Judgements, Engine, Progress, Nodes, Deep, EngineDeep, Live, Pong, Error)}
# Sent only in answer to a client's own message; the page sends none.
REPLIES = frozenset({Pong.kind})
