"""``python manage.py analyze_pgn FILE --json``: the worker's analysis, run synchronously.

Prints one JSON object per position once its search is done, main line first:
``node``, ``parent``, ``main``, ``ply``, ``san`` (the move that led here; null
for the start), ``fen``, ``score`` and ``wdl`` (White's point of view; the
search's when it gives one, else the network's), ``network_score``,
``policy_top`` ([uci, probability] for the side to move), ``best`` and ``pv``
(UCI), ``engine`` (the engine lane's value, for the side to move: ``cp`` and ``mate``, one of
them null, ``best`` (UCI), ``score`` (expected score, lichess's win-% curve), ``pv``, ``depth``,
``nodes``; null with ``--no-engine`` or without Stockfish), ``judgement`` (of the move that led
here: ``glyph``, ``name``, ``drop``, ``best``, ``best_score``, ``played_score``, ``source``: the
engine's, source "engine", where the engine valued the move, else the network's; see
``webapp.jobs.judgements`` and ``analysis.game_review``) and ``network_judgement`` (the
network's, always). Results land in the same cache as the site's.

The engine lane runs by default where Stockfish is installed (``--engine-nodes N`` nodes per
position, ``--no-engine`` for none); a line is printed once its search, and its engine value and
judgement where the engine gives them, are known.
"""

from __future__ import annotations

import json
import sys

from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

from django.conf import settings

from analysis.pov import score_for_white, wdl_for_white, white_to_move
from analysis.engines.reference import check_nodes
from webapp.jobs.gameinput import GameInputError, MultipleGames, parse_pgn
from webapp.jobs.jobs import create_job
from webapp.jobs.live.publish import NullPublisher
from webapp.jobs.run.runner import JobRun, PlyOutput
from webapp.jobs.searches import SEARCHES
from webapp.networks.model_cache import models
from webapp.networks.lookup import out_of_service
from webapp.networks.models import Network


class Command(BaseCommand):
    help = "Analyse one game synchronously and print one JSON line per position."

    def add_arguments(self, parser):
        parser.add_argument("file", help="PGN file, or - for standard input")
        parser.add_argument("--network", help="network name (default: the site's default network)")
        parser.add_argument("--search", choices=sorted(SEARCHES),
                            help="default: the network's (its family's search, else value)")
        parser.add_argument("--budget", type=int, help="nodes or depth, depending on the search")
        parser.add_argument("--game", type=int, help="which game of a multi-game file (1-based)")
        parser.add_argument("--top", type=int, default=5, help="policy moves per line")
        parser.add_argument("--json", action="store_true", help="JSON lines (the only output format)")
        parser.add_argument("--engine-nodes", type=int, default=None,
                            help=f"Stockfish's nodes per position in the engine lane (default "
                                 f"{settings.SIGHTLINE_ENGINE_NODES:,})")
        parser.add_argument("--no-engine", action="store_true", help="no engine lane: the network's marks only")

    def handle(self, *args, **opts):
        call_command("migrate", interactive=False, verbosity=0)
        text = self._read(opts["file"])
        try:
            tree = parse_pgn(text, None if opts["game"] is None else opts["game"] - 1)
        except MultipleGames as exc:
            listing = "; ".join(f"{g.index + 1}: {g.label}" for g in exc.games[:20])
            raise CommandError(f"{exc} Use --game N. Games: {listing}") from None
        except GameInputError as exc:
            raise CommandError(str(exc)) from None
        network = self._network(opts["network"])
        spec = SEARCHES[opts["search"] or network.default_search]
        budget = 1 if spec.fixed else (opts["budget"] or spec.budget_default)
        if not spec.budget_min <= budget <= spec.budget_max:
            raise CommandError(f"budget {budget} is out of range for {spec.name}: "
                               f"{spec.budget_min} to {spec.budget_max} {spec.budget_unit}")
        if spec.needs_policy and not network.caps.policy:
            raise CommandError(f"the {spec.name} search needs a policy head; {network.name} has none")
        engine_nodes = self._engine_nodes(opts)
        job = create_job(tree, network, spec.name, budget, dispatch=False, engine_nodes=engine_nodes)
        lines = _Lines(job.nodes, engine_nodes > 0, lambda node, parts: self._print(node, parts, opts["top"]))
        finished = JobRun(job, models.get(network), NullPublisher(), on_node=lines.take).run()
        lines.flush()
        if finished.engine_note:
            self.stderr.write(finished.engine_note)
        if finished.status != "done":
            raise CommandError(f"analysis {finished.status}: {finished.error}")

    @staticmethod
    def _engine_nodes(opts) -> int:
        if opts["no_engine"]:
            return 0
        nodes = settings.SIGHTLINE_ENGINE_NODES if opts["engine_nodes"] is None else opts["engine_nodes"]
        try:
            return check_nodes(nodes)
        except ValueError as exc:
            raise CommandError(f"--engine-nodes: {exc}") from None

    def _print(self, node: dict, parts: dict, top: int) -> None:
        ev, search, engine = parts.get("eval"), parts["search"], parts.get("engine")
        white = white_to_move(node["fen"])
        source = search if search.get("score") is not None else ev
        score = score_for_white(source["score"], white)
        wdl = wdl_for_white(source.get("wdl") or (ev or {}).get("wdl"), white)
        network_score = score_for_white(ev["score"], white) if ev else None
        line = {
            "node": node["id"], "parent": node["parent"], "main": node["main"], "ply": node["ply"],
            "san": node["san"], "fen": node["fen"], "score": round(score, 4),
            "wdl": [round(x, 4) for x in wdl] if wdl else None,
            "network_score": round(network_score, 4) if network_score is not None else None,
            "policy_top": (ev or {}).get("policy", [])[:top], "best": search.get("bestmove"), "pv": search.get("pv", []),
            "engine": None if engine is None else {k: engine[k] for k in ENGINE_FIELDS},
            "judgement": parts.get("engine_judgement") or parts.get("judgement"),
            "network_judgement": parts.get("judgement"),
        }
        self.stdout.write(json.dumps(line))

    @staticmethod
    def _read(name: str) -> str:
        if name == "-":
            return sys.stdin.read()
        try:
            with open(name, "rb") as handle:
                raw = handle.read()
        except OSError as exc:
            raise CommandError(f"cannot read {name}: {exc.strerror}") from None
        try:
            return raw.decode("utf-8-sig")
        except UnicodeDecodeError:
            return raw.decode("latin-1")

    @staticmethod
    def _network(name: str | None) -> Network:
        if not Network.objects.filter(kind=Network.Kind.CHECKPOINT).exists():
            from webapp.networks.shipped import register_shipped

            register_shipped()
        if name is None:
            network = Network.objects.offered().first()
        else:
            network = Network.objects.offered().filter(name=name).first()
        named = Network.objects.filter(name=name).first() if name is not None else None
        refusal = out_of_service(named) if named is not None else None
        if network is None and refusal is not None:  # withdrawn or retired: say why, as the site does
            raise CommandError(refusal.message)
        if network is None:
            known = ", ".join(Network.objects.offered().values_list("name", flat=True))
            raise CommandError(f"unknown network {name!r}; known: {known}")
        return network


ENGINE_FIELDS = ("cp", "mate", "best", "score", "pv", "depth", "nodes")


class _Lines:
    """Collects each node's parts as the runner hands them over; a node's line goes out once its
    search is known and, with the engine lane on, its engine value and the engine's judgement of
    its move (where the lane ends early, ``flush`` prints the rest as they are)."""

    def __init__(self, nodes: list[dict], engine: bool, emit):
        self.nodes, self.engine, self.emit = nodes, engine, emit
        self.parts: dict[int, dict] = {}
        self.printed: set[int] = set()

    def take(self, out: PlyOutput) -> None:
        parts = self.parts.setdefault(out.node_id, {})
        for name in ("eval", "search", "judgement", "engine", "engine_judgement"):
            if getattr(out, name) is not None:
                parts[name] = getattr(out, name)
        for node_id in (out.node_id, *self.nodes[out.node_id]["children"]):
            if node_id not in self.printed and self._ready(node_id):
                self._emit(node_id)

    def _ready(self, node_id: int) -> bool:
        parts, parent = self.parts.get(node_id, {}), self.nodes[node_id]["parent"]
        if "search" not in parts:
            return False
        return not self.engine or ("engine" in parts and (parent is None or "engine_judgement" in parts))

    def _emit(self, node_id: int) -> None:
        self.printed.add(node_id)
        self.emit(self.nodes[node_id], self.parts[node_id])

    def flush(self) -> None:
        for node in self.nodes:
            if node["id"] not in self.printed and "search" in self.parts.get(node["id"], {}):
                self._emit(node["id"])
