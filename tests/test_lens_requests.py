"""The lens's contract (``analysis.lens.requests``): each quantity's request checked against a
``LensDescription`` and the position, every refusal one ``LensError`` with its sentence, the request's
one JSON form read back, and the description's JSON round trip from a loaded network."""

from __future__ import annotations

import chess
import pytest

from analysis.lens import LensError, LensUnavailable
from analysis.lens.checks import MAX_POOL, parse_fens
from analysis.lens.description import LensDescription, UnitShape, describe_model
from analysis.lens.requests import (QUANTITIES, Ablate, Carriers, Grid, LogitLens, Neuron, Neurons, Split, WhereElse,
                                    parse, stored)

BOARD = chess.Board()
DESCRIBED = LensDescription(
    family="chessformer", readouts=("embed", "0.attn", "0.mlp", "1.attn", "1.mlp"),
    units={"head": UnitShape(2, 4, "attention head"), "mlp": UnitShape(2, 16, "MLP hidden unit")},
    neurons={"mlp": True}, unavailable={}, norms="")


def test_every_quantity_is_one_request_class():
    assert QUANTITIES == ("lens", "ablate", "grid", "split", "neurons", "neuron", "carriers", "where_else")


GOOD = [
    ("lens", {"moves": "e2e4,d2d4"}, LogitLens(("e2e4", "d2d4"))),
    ("lens", {"moves": ["g1f3"], "readout": "0.mlp"}, LogitLens(("g1f3",), "0.mlp")),
    ("ablate", {"layer": "1", "index": "3", "scale": "-1"}, Ablate("head", 1, 3, -1.0)),
    ("ablate", {"unit": "mlp", "layer": 0, "index": 15}, Ablate("mlp", 0, 15, 0.0)),
    ("grid", {"move": "e2e4"}, Grid("head", "e2e4")),
    ("split", {}, Split(0)),
    ("neurons", {"layer": "1"}, Neurons("mlp", 1, 10)),
    ("neuron", {"layer": "1", "index": "15"}, Neuron("mlp", 1, 15)),
    ("carriers", {"move": "g1f3", "top": "3"}, Carriers("mlp", "g1f3", 3)),
    ("where_else", {"layer": "0", "index": "2"}, WhereElse("mlp", 0, 2, 8, "atlas")),
]


@pytest.mark.parametrize("quantity, query, expected", GOOD)
def test_a_good_query_is_its_request_and_its_json_reads_back(quantity, query, expected):
    request = parse(quantity, query, DESCRIBED, BOARD)
    assert request == expected and request.to_json()["quantity"] == quantity
    assert stored(request.to_json()) == request


def test_the_site_s_cache_keys_are_the_json_they_always_were():
    """The JSON form is the site's cache key: the keys it had before the contract."""
    assert parse("ablate", {"layer": "0", "index": "1"}, DESCRIBED, BOARD).to_json() == {
        "quantity": "ablate", "unit": "head", "layer": 0, "index": 1, "scale": 0.0}
    assert parse("lens", {}, DESCRIBED, BOARD).to_json() == {"quantity": "lens", "moves": []}
    assert parse("grid", {"move": "e2e4"}, DESCRIBED, BOARD).to_json() == {"quantity": "grid", "unit": "head",
                                                                           "move": "e2e4"}
    fens = [chess.Board().fen()]
    scan = parse("where_else", {"layer": "0", "index": "0", "pool": "game"}, DESCRIBED, BOARD, fens)
    assert scan.to_json() == {"quantity": "where_else", "unit": "mlp", "layer": 0, "index": 0, "top": 8,
                              "pool": "game", "fens": fens}


BAD = [
    ("lens", {"moves": "a2a3,b2b3,c2c3,d2d3,e2e3"}, "at most 4"),
    ("lens", {"moves": "e2e5"}, "e2e5 is not a legal move in this position"),
    ("lens", {"readout": "9.mlp"}, "unknown readout point '9.mlp'"),
    ("ablate", {"layer": "2", "index": "0"}, "layer 2 is out of range: the network has 2 layers (0 to 1)"),
    ("ablate", {"layer": "0", "index": "4"}, "head 4 is out of range: each layer has 4 (0 to 3)"),
    ("ablate", {"layer": "0", "index": "0", "scale": "5"}, "scale 5 is outside [-4, 4]"),
    ("ablate", {"layer": "0", "index": "0", "scale": "inf"}, "scale must be a finite number"),
    ("ablate", {"index": "0"}, "layer is required"),
    ("ablate", {"layer": "1.5", "index": "0"}, "layer must be a whole number"),
    ("ablate", {"unit": "channel", "layer": "0", "index": "0"}, "no 'channel' units"),
    ("grid", {"move": "zz"}, "'zz' is not a UCI move"),
    ("split", {"layer": "-1"}, "layer must be 0 or more"),
    ("neurons", {"layer": "0", "top": "33"}, "top must be between 1 and 32, not 33"),
    ("neurons", {"layer": "0", "unit": "head"}, "'head' units have no activations"),
    ("neuron", {"layer": "0", "index": "16"}, "mlp 16 is out of range"),
    ("neuron", {"layer": "0", "index": "-1"}, "index must be 0 or more"),
    ("carriers", {"move": "e7e5"}, "not a legal move"),
    ("where_else", {"layer": "0", "index": "0", "pool": "moon"}, "pool must be one of atlas, game, fens"),
    ("atlas", {}, "unknown lens quantity 'atlas'"),
]


@pytest.mark.parametrize("quantity, query, message", BAD)
def test_a_bad_query_is_one_lens_error_with_its_sentence(quantity, query, message):
    with pytest.raises(LensError) as refused:
        parse(quantity, query, DESCRIBED, BOARD)
    assert message in str(refused.value)


def test_what_the_network_lacks_is_refused_with_the_family_s_sentence():
    no_policy = LensDescription(**{**DESCRIBED.__dict__, "unavailable": {"policy": "a state-value net has no policy",
                                                                         "split": "no split here"}})
    for quantity, query, why in [("grid", {"move": "e2e4"}, "no policy"), ("carriers", {"move": "e2e4"}, "no policy"),
                                 ("split", {}, "no split here")]:
        with pytest.raises(LensUnavailable, match=why):
            parse(quantity, query, no_policy, BOARD)
    with pytest.raises(LensUnavailable, match="not a network"):
        parse("lens", {}, LensDescription.none("the material count is not a network"), BOARD)
    with pytest.raises(LensError, match="no legal moves"):
        parse("lens", {}, DESCRIBED, chess.Board("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1"))


def test_a_grid_s_top_is_the_command_line_s_alone():
    """The site never reads ``top`` or ``exact`` for a grid (an exact grid of a big net is costly)."""
    assert parse("grid", {"move": "e2e4", "top": "0", "exact": "1"}, DESCRIBED, BOARD) == Grid("head", "e2e4")
    with pytest.raises(LensError, match="top must be 0 or more"):
        Grid("head", "e2e4", top=-1)
    assert Grid("head", "e2e4", top=3, exact=True).to_json() == {"quantity": "grid", "unit": "head", "move": "e2e4",
                                                                 "top": 3, "exact": True}


def test_one_fen_list_reader():
    assert parse_fens("# a comment\n\n" + chess.Board().fen() + "\n") == [chess.Board().fen()]
    for value, message in [([], "empty"), ([1], "list of FEN strings"), (["nope"], "fens[0]: invalid FEN"),
                           ("# pool\n\nnope", "line 3: invalid FEN"),
                           ([chess.Board().fen(), "8/8/8/8/8/8/8/8 w - - 0 1"], "fens[1]: illegal position"),
                           ([chess.Board().fen()] * (MAX_POOL + 1), f"at most {MAX_POOL}"),
                           (["7k/5Q2/6K1/8/8/8/8/8 b - - 0 1"], "no position of the list has a legal move")]:
        with pytest.raises(LensError, match=message.replace("[", r"\[")):
            parse_fens(value)


def test_a_description_round_trips_through_json(tiny_checkpoint):
    from analysis.checkpoint import load_evaluator

    evaluator = load_evaluator(tiny_checkpoint, "cpu")
    described = describe_model(evaluator.model, evaluator.encoding)
    assert described.units["head"].layers >= 1 and described.readouts[0] == "embed"
    assert LensDescription.from_json(described.to_json()) == described
    assert LensDescription.from_json(LensDescription.none("why").to_json()) == LensDescription.none("why")
