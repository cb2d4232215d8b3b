"""The search catalogue is the only list of searches: a toy search registered once shows up in
the CLI, the UCI engine (with its own option), the worker and (tests/web/test_search_catalogue_site.py)
the site's form; every registered search's entry agrees with its class."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import time
from dataclasses import dataclass

import chess
import pytest

from analysis import search_catalogue as catalogue
from analysis.evaluator import MaterialEvaluator
from analysis.search.base import Budget, RootMove, Search, SearchControl, SearchResult
from analysis.search.registry import make_settings, search_class
from analysis.search.uci import UCIEngine
from analysis.search_catalogue import SearchSpec, UCIOption


@dataclass
class ToySettings:
    """``pick``: which legal move (in UCI order) to play."""

    pick: int = 0


TOY = SearchSpec("toy", "Toy (a legal move by number)", "tests.test_search_catalogue:ToySearch",
                 "nodes", 1, 50, 5, needs_policy=False,
                 uci_options=(UCIOption("ToyPick", "pick", "spin", 0, 0, 10),))


class ToySearch(Search):
    spec = TOY
    settings_type = ToySettings

    def _run(self, board: chess.Board, control: SearchControl) -> SearchResult:
        moves = sorted(board.legal_moves, key=lambda m: m.uci())
        move = moves[min(self.settings.pick, len(moves) - 1)]
        return SearchResult(self.name, move, [move], 0.5, None, 1, 0.0, depth=1,
                            root=[RootMove(move, score=0.5)])


@pytest.fixture
def toy():
    catalogue.register(TOY)
    yield TOY
    catalogue.unregister(TOY.name)


def test_a_search_carries_its_name_from_its_entry():
    assert ToySearch.name == "toy"
    for name in catalogue.search_names():
        cls = search_class(name)
        assert cls.spec is catalogue.SEARCHES[name] and cls.name == name


def test_each_uci_option_default_is_the_settings_default():
    for spec in catalogue.SEARCHES.values():
        defaults = {f.name: f.default for f in dataclasses.fields(search_class(spec.name).settings_type)}
        for option in spec.uci_options:
            assert defaults[option.setting] == option.default, (spec.name, option.name)


def test_the_toy_is_in_the_cli_choices_and_runs_there(toy):
    from analysis.cli import build_parser, main

    parser = build_parser()
    commands = parser._subparsers._group_actions[0].choices
    for command in ("search", "uci"):
        algo = next(a for a in commands[command]._actions if a.dest == "algo")
        assert list(algo.choices) == list(catalogue.search_names()) and "toy" in algo.choices
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["search", "--model", "material", "--algo", "toy", "--set", "pick=1", "--json"]) == 0
    moves = sorted(m.uci() for m in chess.Board().legal_moves)
    assert json.loads(out.getvalue())["bestmove"] == moves[1]


def test_the_toy_is_in_the_worker(toy):
    from webapp.jobs.searching import budget_for, make_search

    assert isinstance(make_search("toy", MaterialEvaluator()), ToySearch)
    assert budget_for("toy", 7) == Budget(nodes=7)


def _bestmove(out: io.StringIO) -> str:
    end = time.monotonic() + 10
    while time.monotonic() < end:
        lines = [line for line in out.getvalue().splitlines() if line.startswith("bestmove")]
        if lines:
            return lines[-1].split()[1]
        time.sleep(0.01)
    raise AssertionError(out.getvalue())


def test_the_toy_and_its_option_are_in_the_uci_engine(toy):
    out = io.StringIO()
    engine = UCIEngine(lambda device: MaterialEvaluator(), algorithm="toy", out=out)
    engine.handle("uci")
    lines = out.getvalue().splitlines()
    algorithm = next(line for line in lines if line.startswith("option name Algorithm"))
    assert algorithm.split(" var ")[1:] == list(catalogue.search_names())
    assert "option name ToyPick type spin default 0 min 0 max 10" in lines
    assert "option name CPuct type string default 1.745" in lines
    engine.handle("setoption name ToyPick value 11")
    assert out.getvalue().splitlines()[-1].startswith("info string option ToyPick")
    engine.handle("setoption name ToyPick value 2")
    engine.handle("position startpos")
    engine.handle("go nodes 1")
    assert _bestmove(out) == sorted(m.uci() for m in chess.Board().legal_moves)[2]
    engine.handle("quit")


def test_a_shared_uci_option_reaches_every_search_that_takes_it():
    out = io.StringIO()
    engine = UCIEngine(lambda device: MaterialEvaluator(), algorithm="gumbel", out=out)
    engine.handle("setoption name MinibatchSize value 7")
    engine.handle("setoption name CPuct value 2.5")
    assert engine._current_search().settings.batch_size == 7
    engine.handle("setoption name Algorithm value mcts")
    settings = engine._current_search().settings
    assert (settings.batch_size, settings.cpuct) == (7, 2.5)
    engine.handle("setoption name CPuct value -1")  # MCTSSettings refuses it
    assert out.getvalue().splitlines()[-1].startswith("info string option CPuct")
    assert engine._current_search().settings.cpuct == 2.5


def test_registration_refuses_a_taken_name_and_a_clashing_option(toy):
    with pytest.raises(ValueError, match="registered already"):
        catalogue.register(TOY)
    clash = dataclasses.replace(TOY, name="toy2", uci_options=(UCIOption("ToyPick", "pick", "spin", 1, 0, 10),))
    with pytest.raises(ValueError, match="differs"):
        catalogue.register(clash)
    assert "toy2" not in catalogue.SEARCHES
    with pytest.raises(ValueError, match="unknown search"):
        make_settings("toy3", {})
