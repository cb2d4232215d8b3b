"""Model families as plug-ins: the registry, capabilities, encodings, the one evaluator, specs,
and the bad input a checkpoint can bring (issue 10, part A)."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import chess
import pytest
import torch

from analysis import checkpoint as checkpoint_module
from analysis.checkpoint import CheckpointError, load_checkpoint, load_evaluator, save_checkpoint
from analysis.encoding import INPUT_FORMAT, get_encoding
from analysis.eval.agents import MaterialGreedyAgent, SearchAgent
from analysis.eval.prefetch import PrefetchedEvaluator
from analysis.evaluator import Capabilities, MaterialEvaluator, NoActionValues, key_digest
from analysis.models.inference import TorchEvaluator
from analysis.models import FAMILIES, get_family
from analysis.models.chessformer import PRESETS, Chessformer
from analysis.search import Budget, run_search
from analysis.eval.specs import parse_spec, resolve_agent, resolve_evaluator
from tests import toy_family

BLACK_TO_MOVE = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 2 2"


@pytest.fixture
def toy_registered(monkeypatch):
    """The toy family registered the way a real one is: one line in FAMILIES."""
    monkeypatch.setitem(FAMILIES, toy_family.NAME, "tests.toy_family")
    return get_family(toy_family.NAME)


def test_the_registry_finds_families_by_name_and_names_the_known_ones():
    assert get_family("chessformer").build is not None and get_family("chessformer").presets["cf-small"].layers == 6
    known = "alphagateau, chessbench, chessformer, giraffe, lc0-attention, lc0-resnet"
    with pytest.raises(ValueError, match=f"unknown model family 'alphazero'; known: {known}$"):
        get_family("alphazero")


def test_capabilities_come_from_the_config_and_survive_json():
    caps = get_family("chessformer").capabilities(PRESETS["cf-small"])
    assert caps == Capabilities(policy=True, value=True, wdl=True, action_values=False, attention=(6, 8))
    assert Capabilities.from_dict(json.loads(json.dumps(caps.to_dict()))) == caps
    assert MaterialEvaluator.capabilities.attention is None and not MaterialEvaluator.capabilities.policy


def test_a_family_says_why_its_networks_have_no_attention_exactly_when_they_have_none():
    without = {name for name in FAMILIES
               if any(get_family(name).capabilities(p).attention is None for p in get_family(name).presets.values())}
    assert {"giraffe", "lc0-resnet"} <= without and "chessformer" not in without
    assert {name for name in FAMILIES if get_family(name).about.no_attention_reason} == without
    assert "multilayer perceptron" in get_family("giraffe").about.no_attention_reason


def test_a_preset_is_named_from_its_config():
    family = get_family("chessformer")
    assert family.preset_name(PRESETS["cf-tiny"].to_dict()) == "cf-tiny"
    assert family.preset_name(dict(PRESETS["cf-tiny"].to_dict(), layers=3)) == "custom"


def test_the_position_key_needs_only_the_board_and_equals_the_evaluators_cache_key():
    evaluator = TorchEvaluator(Chessformer(PRESETS["cf-tiny"]), device="cpu")
    board = chess.Board(BLACK_TO_MOVE)
    assert get_encoding(INPUT_FORMAT).position_key(board) == evaluator.cache_key(board)
    with pytest.raises(ValueError, match="unknown input encoding 'planes-9'"):
        get_encoding("planes-9")


def test_attention_comes_back_in_real_squares_for_black_to_move():
    """The lc0 encoding mirrors black's board; the evaluator un-mirrors the maps."""
    evaluator = TorchEvaluator(Chessformer(PRESETS["cf-tiny"]), device="cpu")
    board = chess.Board(BLACK_TO_MOVE)
    raw = evaluator.forward([board], need_attention=True)["attention"][0]  # mover's frame
    maps = evaluator.evaluate([board], attention=True)[0].attention
    assert maps.shape == (2, 4, 64, 64)
    e5, f3 = chess.E5, chess.F3  # e5 is token e4 (28) in black's mirrored frame, f3 is token f6 (45)
    assert maps[1, 2, e5, f3] == raw[1, 2, e5 ^ 56, f3 ^ 56]


def test_a_family_without_action_values_says_so():
    evaluator = TorchEvaluator(Chessformer(PRESETS["cf-tiny"]), device="cpu")
    with pytest.raises(NoActionValues, match="has no action-value head"):
        evaluator.evaluate_actions([chess.Board()])
    with pytest.raises(NoActionValues):
        MaterialEvaluator().evaluate_actions([chess.Board()])


def test_a_new_family_is_one_module_and_one_registration_line(toy_registered, tmp_path):
    torch.manual_seed(0)
    path = save_checkpoint(tmp_path / "toy.safetensors", toy_registered.build(toy_family.ToyConfig()), trained=False)
    evaluator = load_evaluator(path, device="cpu")
    assert evaluator.capabilities == Capabilities(action_values=True)
    boards = [chess.Board(), chess.Board(BLACK_TO_MOVE)]
    values = evaluator.evaluate_actions(boards)
    assert [set(v) for v in values] == [set(b.legal_moves) for b in boards]
    assert all(0 < p < 1 for v in values for p in v.values())
    # The value search asks for action values when the capabilities say there are some.
    result = run_search("value", chess.Board(), evaluator, budget=Budget(nodes=1))
    assert result.extras.get("action_values") and result.best_move in values[0]
    # Wrappers forward it too.
    assert PrefetchedEvaluator(evaluator).evaluate_actions(boards[:1]) == evaluator.evaluate_actions(boards[:1])


def test_wrappers_forward_a_fixed_set_of_names():
    from workers.batching import SharedBatcher

    for wrapper in (SharedBatcher(MaterialEvaluator()), PrefetchedEvaluator(MaterialEvaluator())):
        assert wrapper.name == "material" and wrapper.capabilities == MaterialEvaluator.capabilities
        assert not hasattr(type(wrapper), "__getattr__")
        with pytest.raises(AttributeError):
            wrapper.layers  # noqa: B018 (no longer leaks through from the wrapped evaluator)


def test_specs_are_read_in_one_place(tiny_checkpoint, tmp_path):
    assert isinstance(resolve_evaluator("material"), MaterialEvaluator)
    assert isinstance(resolve_evaluator(str(tiny_checkpoint), "cpu"), TorchEvaluator)
    with pytest.raises(FileNotFoundError, match="model checkpoint not found"):
        resolve_evaluator(str(tmp_path / "none.safetensors"))
    with pytest.raises(ValueError, match="evaluates no positions"):
        resolve_evaluator("material-greedy")
    assert [parse_spec(s).kind for s in ("material", "greedy", "stockfish:elo=1350", "net.safetensors")] == \
        ["material", "material-greedy", "stockfish", "checkpoint"]
    assert isinstance(resolve_agent("material-greedy"), MaterialGreedyAgent)
    assert isinstance(resolve_agent("material"), MaterialGreedyAgent)
    searching = resolve_agent("material", algo="alphabeta", nodes=50)  # --algo was ignored for material
    assert isinstance(searching, SearchAgent) and searching.algo == "alphabeta" and searching.budget.nodes == 50
    agent = resolve_agent(f"{tiny_checkpoint}:mcts:8", device="cpu")
    assert isinstance(agent, SearchAgent) and agent.algo == "mcts" and agent.budget.nodes == 8
    with pytest.raises(ValueError, match="bad agent spec"):
        resolve_agent(str(tiny_checkpoint))


def _with_metadata(source: Path, target: Path, **metadata) -> Path:
    raw = source.read_bytes()
    (length,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + length])
    header["__metadata__"].update(metadata)
    encoded = json.dumps(header).encode()
    target.write_bytes(struct.pack("<Q", len(encoded)) + encoded + raw[8 + length:])
    return target


@pytest.mark.parametrize("metadata, message", [
    ({"family": "alphazero"}, "unknown model family 'alphazero'"),
    ({"family": ""}, "unknown model family ''"),
    ({"input_encoding": "chessbench/fen-77"}, "input encoding 'chessbench/fen-77' is not one chessformer accepts"),
    ({"config": json.dumps(dict(PRESETS["cf-tiny"].to_dict(), depth=3))}, "bad chessformer config: .*depth"),
    ({"config": json.dumps(["not", "an", "object"])}, "metadata 'config' must be a JSON object"),
    ({"config": json.dumps(dict(PRESETS["cf-tiny"].to_dict(), embed=64))},
     "tensor .* has shape .*, the config needs"),
])
def test_bad_input_is_one_checkpoint_error_and_nothing_is_loaded(tiny_checkpoint, tmp_path, monkeypatch,
                                                                 metadata, message):
    path = _with_metadata(Path(tiny_checkpoint), tmp_path / "bad.safetensors", **metadata)

    def never(*args, **kwargs):
        raise AssertionError("tensor data was read")

    monkeypatch.setattr(checkpoint_module, "load_file", never)
    with pytest.raises(CheckpointError, match=message):
        load_checkpoint(path)


def test_checkpoints_record_the_family_and_its_encoding(tiny_checkpoint):
    _, meta = load_checkpoint(tiny_checkpoint)
    assert meta.family == "chessformer" and meta.input_encoding == INPUT_FORMAT


def test_material_and_network_keys_digest_alike():
    board = chess.Board()
    assert key_digest(MaterialEvaluator.cache_key(board)) != key_digest(get_encoding(INPUT_FORMAT).position_key(board))
    assert len(key_digest(b"x")) == 64


def test_each_familys_about_is_the_one_the_site_reads_without_it():
    """``get_about`` (torch-free, for the web process) finds the very object each family carries."""
    from analysis.models import FAMILIES, get_about, get_family

    for name in FAMILIES:
        assert get_about(name) is get_family(name).about, name
    assert get_about("giraffe").default_search == "probability" and get_about("lc0-resnet").lc0_search
    with pytest.raises(ValueError, match="unknown model family"):
        get_about("no-such-family")
