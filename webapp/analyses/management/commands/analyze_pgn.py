"""``python manage.py analyze_pgn FILE --json``: the worker's analysis, run synchronously.

Prints one JSON object per position once its search is done, main line first:
``node``, ``parent``, ``main``, ``ply``, ``san`` (the move that led here; null
for the start), ``fen``, ``score`` and ``wdl`` (White's point of view; the
search's when it gives one, else the network's), ``network_score``,
``policy_top`` ([uci, probability] for the side to move), ``best`` and ``pv``
(UCI), and ``judgement`` (of the move that led here: ``glyph``, ``drop``, ``best``,
``best_score``, ``played_score``, ``source``; see ``webapp.analyses.judgements``).
Results land in the same cache as the site's.
"""

from __future__ import annotations

import json
import sys

from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

from analysis.pov import score_for_white, wdl_for_white, white_to_move
from webapp.analyses.gameinput import GameInputError, MultipleGames, parse_pgn
from webapp.analyses.jobs import create_job
from webapp.analyses.publish import NullPublisher
from webapp.analyses.runner import JobRun, PlyOutput
from webapp.analyses.searches import SEARCHES
from webapp.networks.model_cache import models
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
        job = create_job(tree, network, spec.name, budget, dispatch=False)
        evals: dict[int, dict] = {}
        judgements: dict[int, dict] = {}
        nodes = job.nodes

        def on_node(out: PlyOutput) -> None:
            if out.eval is not None:
                evals[out.node_id] = out.eval
            if out.judgement is not None:
                judgements[out.node_id] = out.judgement
            if out.search is not None:
                self._print(nodes[out.node_id], evals.get(out.node_id), out.search, opts["top"],
                            judgements.get(out.node_id))

        finished = JobRun(job, models.get(network), NullPublisher(), on_node=on_node).run()
        if finished.status != "done":
            raise CommandError(f"analysis {finished.status}: {finished.error}")

    def _print(self, node: dict, ev: dict | None, search: dict, top: int, judgement: dict | None) -> None:
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
            "judgement": judgement,
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
        if network is None:
            known = ", ".join(Network.objects.offered().values_list("name", flat=True))
            raise CommandError(f"unknown network {name!r}; known: {known}")
        return network
