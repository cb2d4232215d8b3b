"""Neurons through the API (issue 28, item 7): a layer's most active units, one unit's map, a move's
carriers with exact re-measures, and where else a unit fires over a pool, checked before anything
is queued, computed by the worker's task (the scan with stored progress), cached like the lens."""

from __future__ import annotations

import json

import chess
import numpy as np
import pytest
import torch

from analysis.checkpoint import load_evaluator
from analysis.heads.sample import load_sample
from analysis.lens import lens_for
from tests.web.test_lens_api import GAME, job, sent  # noqa: F401 - fixtures: a cf-tiny job, the tasks sent
from webapp.jobs.gameinput import board_for, parse_pgn
from webapp.jobs.jobs import create_job
from webapp.jobs.models import LensResult
from analysis.lens.checks import MAX_POOL
from analysis.positions import MAX_FULLMOVE_NUMBER, MAX_HALFMOVE_CLOCK
from webapp.lens.tasks import compute_lens

EDGE = "4k3/8/8/8/8/8/4P3/4K3 w - - {clock} {move}"
POOL = ["r1bq1rk1/ppp2ppp/2np1n2/2b1p3/2B1P3/2NP1N2/PPP2PPP/R1BQ1RK1 w - - 0 7",
        "8/8/4k3/8/2K5/8/3P4/8 b - - 0 50",
        "4r1k1/pp3ppp/8/3q4/8/1P3Q2/P4PPP/4R1K1 b - - 3 25",
        "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3"]  # mate: no legal move, skipped


@pytest.fixture(scope="module")
def adapter(tiny_checkpoint):
    evaluator = load_evaluator(tiny_checkpoint, "cpu")
    return lens_for(evaluator.model, evaluator.encoding)


def url(job, node, quantity, query=""):
    return f"/api/jobs/{job.id}/nodes/{node}/lens/{quantity}/{query}"


def ready(client, sent, address, method="get", **kwargs):
    """Ask, run what the worker was sent, ask again: the answer."""
    first = getattr(client, method)(address, **kwargs)
    assert first.status_code == 202, first.json()
    for name, args in sent:
        assert name == "sightline.compute_lens" and compute_lens(*args) == "ready"
    sent.clear()
    answer = client.get(first.json()["poll"])
    assert answer.status_code == 200, answer.json()
    return first.json(), answer.json()


def acts(adapter, board, layer) -> np.ndarray:
    with torch.no_grad():
        return adapter.activations([adapter.prepare(board)], "mlp", layer)[0].numpy()  # (64, units)


def test_the_capabilities_name_the_units_with_activations(client, job):
    about = client.get(f"/api/jobs/{job.id}/nodes/0/lens/").json()
    assert about["neurons"] == {"mlp": {"squares": True}} and "neurons" not in about["unavailable"]


def test_a_layer_s_most_active_units(client, job, sent, adapter):
    _, body = ready(client, sent, url(job, 1, "neurons", "?layer=1&top=5"))
    truth = acts(adapter, board_for(job.nodes, 1), 1)
    assert [u["index"] for u in body["units"]] == np.argsort(-truth.max(0), kind="stable")[:5].tolist()
    assert body["units"][0]["peak"] == pytest.approx(float(truth.max()), abs=1e-5)
    assert body["request"] == {"quantity": "neurons", "unit": "mlp", "layer": 1, "top": 5}
    assert client.get(url(job, 1, "neurons", "?layer=1&top=5")).status_code == 200 and sent == []  # cached


def test_a_unit_s_map_is_its_activation_per_real_square(client, job, sent, adapter):
    _, body = ready(client, sent, url(job, 1, "neuron", "?layer=0&index=7"))
    truth = acts(adapter, board_for(job.nodes, 1), 0)[:, 7]
    np.testing.assert_allclose(body["map"], truth, atol=1e-5)
    assert body["square"] == chess.SQUARE_NAMES[int(truth.argmax())]


def test_a_move_s_carriers_are_re_measured_exactly(client, job, sent, adapter):
    _, body = ready(client, sent, url(job, 0, "carriers", "?move=e2e4&top=4"))
    assert body["move"] == "e2e4" and body["units"] == 2 * 32 and len(body["carriers"]) == 4
    prepared = adapter.prepare(chess.Board())
    column = [m.uci() for m in prepared.moves].index("e2e4")
    with torch.no_grad():
        clean = adapter.run(prepared)[1].logits[0, column]
    for c in body["carriers"]:
        scales = torch.ones(1, 2, 32)
        scales[0, c["layer"], c["index"]] = 0
        with torch.no_grad():
            ablated = adapter.run(prepared, 1, {"mlp": scales})[1].logits[0, column]
        assert c["exact"] == pytest.approx(float(ablated - clean), abs=1e-5)


def test_where_else_over_the_atlas_sample_stores_its_progress(client, job, sent, adapter, monkeypatch):
    from analysis.lens import answers
    from webapp.lens import tasks

    stored = []

    def watched(hold, request, progress):  # the stored progress after each batch
        return answers.scan(hold, request, lambda done, total: (
            progress(done, total), stored.append(LensResult.objects.values_list("done", "total").get())))
    monkeypatch.setattr(tasks, "scan_neuron", watched)
    first, body = ready(client, sent, url(job, 0, "where-else", "?layer=1&index=3&top=4"))
    assert (first["done"], first["total"]) == (0, 0) and "scan=" in first["poll"]
    assert stored == [(64, 256), (128, 256), (192, 256), (256, 256)]
    sample = load_sample()
    peaks = [acts(adapter, b, 1)[:, 3].max() for b in sample]
    assert [f["index"] for f in body["top"]] == np.argsort(-np.array(peaks), kind="stable")[:4].tolist()
    assert body["top"][0]["fen"] == sample[body["top"][0]["index"]].fen()
    assert body["top"][0]["peak"] == pytest.approx(max(peaks), abs=1e-5)
    assert body["scanned"] == body["size"] == 256 and body["skipped"] == 0 and len(body["mean"]) == 64
    assert body["request"]["pool"] == "atlas"


def test_where_else_over_this_game_and_a_pending_scan_shows_progress(client, job, sent):
    first = client.get(url(job, 0, "where-else", "?layer=0&index=1&pool=game"))
    entry = LensResult.objects.get()
    LensResult.objects.filter(pk=entry.pk).update(done=2, total=4)
    polled = client.get(first.json()["poll"])
    assert polled.status_code == 202 and (polled.json()["done"], polled.json()["total"]) == (2, 4)
    assert entry.request["fens"] == [n["fen"] for n in job.nodes]
    (_, args), = sent
    assert compute_lens(*args) == "ready"
    body = client.get(first.json()["poll"]).json()
    assert body["size"] == body["scanned"] == len(job.nodes) and "fens" not in body["request"]


def test_where_else_over_an_uploaded_fen_list(client, job, sent, adapter):
    text = "# my positions\n" + "\n".join(POOL) + "\n\n"
    first, body = ready(client, sent, url(job, 0, "where-else"), method="post",
                        data=json.dumps({"layer": 1, "index": 5, "top": 2, "fens": text}),
                        content_type="application/json")
    peaks = [acts(adapter, chess.Board(f), 1)[:, 5].max() for f in POOL[:3]]
    assert [f["index"] for f in body["top"]] == np.argsort(-np.array(peaks), kind="stable")[:2].tolist()
    assert body["size"] == 4 and body["scanned"] == 3 and body["skipped"] == 1
    again = client.post(url(job, 0, "where-else"), data=json.dumps({"layer": 1, "index": 5, "top": 2, "fens": POOL}),
                        content_type="application/json")
    assert again.status_code == 200 and sent == [] and again.json()["top"] == body["top"]  # the same pool: cached


def test_a_fen_list_at_the_position_rules_edges_is_queued(client, job, sent):
    edges = [EDGE.format(clock=MAX_HALFMOVE_CLOCK, move=1), EDGE.format(clock=0, move=MAX_FULLMOVE_NUMBER)]
    response = client.post(url(job, 0, "where-else"), data=json.dumps({"layer": 0, "index": 0, "fens": edges}),
                           content_type="application/json")
    assert response.status_code == 202 and len(sent) == 1, response.json()
    assert LensResult.objects.get().request["fens"] == edges


# 400: the request breaks the schema; 422: well-formed, but not for this network or position.
BAD_GETS = [
    ("neurons", "?layer=2", 422, "layer 2 is out of range"),
    ("neurons", "", 400, "layer is required"),
    ("neurons", "?layer=x", 400, "layer must be a whole number"),
    ("neurons", "?layer=0&top=33", 400, "top must be between 1 and 32"),
    ("neurons", "?layer=0&unit=head", 422, "'head' units have no activations"),
    ("neurons", "?layer=0&unit=channel", 422, "'channel' units have no activations"),
    ("neuron", "?layer=0&index=32", 422, "mlp 32 is out of range"),
    ("neuron", "?layer=0&index=-1", 400, "index must be 0 or more"),
    ("neuron", "?layer=0", 400, "index is required"),
    ("carriers", "?move=e2e5", 422, "not a legal move"),
    ("carriers", "?move=zz", 400, "not a UCI move"),
    ("carriers", "", 400, "not a UCI move"),
    ("where-else", "?layer=0&index=99", 422, "out of range"),
    ("where-else", "?layer=0&index=0&pool=moon", 400, "pool must be one of atlas, game, fens"),
    ("where-else", "?layer=0&index=0&pool=fens", 400, "sent with post"),
]


@pytest.mark.parametrize("quantity, query, status, fragment", BAD_GETS)
def test_a_bad_request_is_one_refusal_and_nothing_is_stored(client, job, sent, quantity, query, status, fragment):
    response = client.get(url(job, 0, quantity, query))
    assert response.status_code == status and fragment.lower() in response.json()["error"].lower(), response.json()
    assert LensResult.objects.count() == 0 and sent == []


BAD_POSTS = [
    ({"layer": 0, "index": 0, "fens": POOL[:1] * (MAX_POOL + 1)}, 400, f"at most {MAX_POOL}"),
    ({"layer": 0, "index": 0, "fens": "\n".join(POOL[:1] * (MAX_POOL + 1))}, 422, f"at most {MAX_POOL}"),
    ({"layer": 0, "index": 0, "fens": ["not a fen"]}, 422, "fens[0]: invalid fen"),
    ({"layer": 0, "index": 0, "fens": [POOL[0], "8/8/8/8/8/8/8/8 w - - 0 1"]}, 422, "fens[1]: illegal position"),
    # The issue's: a clock over 65,535 was answered 202 and failed in the worker; 10**30 was taken as a move number.
    ({"layer": 0, "index": 0, "fens": [POOL[0], EDGE.format(clock=65_536, move=1)]}, 422, "fens[1]: the half-move clock 65536"),
    ({"layer": 0, "index": 0, "fens": [EDGE.format(clock=MAX_HALFMOVE_CLOCK + 1, move=1)]}, 422, "fens[0]: the half-move clock 151"),
    ({"layer": 0, "index": 0, "fens": [POOL[1], POOL[2], EDGE.format(clock=0, move=10 ** 30)]}, 422,
     "fens[2]: the move number of 31 digits"),
    ({"layer": 0, "index": 0, "fens": [EDGE.format(clock=0, move=MAX_FULLMOVE_NUMBER + 1)]}, 422, "move number 10,001"),
    ({"layer": 0, "index": 0, "fens": [EDGE.format(clock=0, move=0)]}, 422, "fens[0]: the move number 0"),
    ({"layer": 0, "index": 0, "fens": POOL[0] + "\n# next\n" + EDGE.format(clock=151, move=1)}, 422, "line 3: the half"),
    ({"layer": 0, "index": 0, "fens": []}, 400, "empty"),
    ({"layer": 0, "index": 0, "fens": POOL[3:]}, 422, "no position of the list has a legal move"),
    ({"layer": 0, "index": 0, "fens": [1, 2]}, 400, "list of fen strings"),
    ({"layer": 0, "index": 0}, 400, "fens is required"),
    ({"layer": "0", "index": 0, "fens": POOL}, 400, "layer must be a whole number (a JSON integer)"),
    ({"layer": 0, "index": 0, "unit": 3, "fens": POOL}, 400, "unit must be a string"),
    ({"layer": 5, "index": 0, "fens": POOL}, 422, "layer 5 is out of range"),
    ([POOL], 400, "json object"),
    ({"layer": 0, "index": 0, "fens": "x" * (200 * 1024)}, 413, "at most 131,072"),
]


@pytest.mark.parametrize("body, status, fragment", BAD_POSTS)
def test_a_bad_upload_is_one_4xx_and_nothing_is_stored(client, job, sent, body, status, fragment):
    response = client.post(url(job, 0, "where-else"), data=json.dumps(body), content_type="application/json")
    assert response.status_code == status and fragment.lower() in response.json()["error"].lower(), response.json()
    assert LensResult.objects.count() == 0 and sent == []


def test_an_unknown_scan_or_job_is_404(client, job, sent):
    assert client.get(url(job, 0, "where-else", "?scan=abc")).status_code == 404
    assert client.get(url(job, 9, "neurons", "?layer=0")).status_code == 404 and sent == []


def test_a_network_without_a_lens_says_why(client, material_network, sent):
    job = create_job(parse_pgn(GAME), material_network, "value", 1, dispatch=False)
    response = client.get(url(job, 0, "neurons", "?layer=0"))
    assert response.status_code == 422 and "not a network" in response.json()["error"]
    assert LensResult.objects.count() == 0 and sent == []


def test_a_unit_without_squares_has_no_map():
    from analysis.lens import LensUnavailable
    from analysis.lens.description import LensDescription
    from analysis.lens.requests import parse

    described = LensDescription.from_json({"units": {"mlp": {"layers": 1, "per_layer": 4}},
                                           "neurons": {"mlp": {"squares": False}}, "unavailable": {}})
    with pytest.raises(LensUnavailable, match="no squares"):
        parse("neuron", {"layer": "0", "index": "1"}, described, chess.Board())
    without = LensDescription.from_json({**described.to_json(), "neurons": {},
                                         "unavailable": {"neurons": "it has no mlp"}})
    with pytest.raises(LensUnavailable, match="has no mlp"):
        parse("neurons", {"layer": "0"}, without, chess.Board())


@pytest.mark.parametrize("name, kind, squares", [("cf-small", "mlp", True), ("giraffe", "mlp", False),
                                                 ("maia-1100", "channel", True), ("ag-cpu", "channel", True),
                                                 ("cb-sv", "mlp", True)])
def test_which_units_have_activations_each_family_says(name, kind, squares):
    """The capabilities the site reads: the kinds with activations, or the family's reason."""
    from analysis.checkpoint import load_checkpoint
    from analysis.lens.description import neuron_kinds
    from tests.conftest import ROOT

    kinds, why = neuron_kinds(lens_for(load_checkpoint(ROOT / "weights" / f"{name}.safetensors")[0]))
    if kind is None:
        assert kinds == {} and squares in why, why
    else:
        assert kinds == {kind: squares} and why is None


def test_without_a_unit_kind_the_first_with_activations_is_taken():
    from analysis.lens.description import LensDescription
    from analysis.lens.requests import parse

    described = LensDescription.from_json({"units": {"block": {"layers": 6, "per_layer": 1},
                                                     "channel": {"layers": 6, "per_layer": 64}},
                                           "neurons": {"channel": {"squares": True}}, "unavailable": {}})
    assert parse("neuron", {"layer": "5", "index": "63"}, described, chess.Board()).unit == "channel"


def test_a_scan_holds_the_network_one_batch_at_a_time(adapter):
    """The worker lets the shared network go between batches, so its analyses run beside a long scan."""
    from contextlib import contextmanager

    from analysis.lens.answers import SCAN_BATCH, scan
    from analysis.lens.neurons import where_else
    from analysis.lens.requests import stored

    held = []

    @contextmanager
    def hold():
        held.append(len(held))
        yield adapter
    request = {"quantity": "where_else", "unit": "mlp", "layer": 1, "index": 9, "top": 5, "pool": "atlas"}
    progress = []
    body = scan(hold, stored(request), lambda done, total: progress.append((done, total)))
    assert len(held) == 256 // SCAN_BATCH and progress[-1] == (256, 256)
    whole = where_else(adapter, load_sample(), 1, 9, top=5)  # one call over the pool: the same answer
    assert [f["index"] for f in body["top"]] == [f.index for f in whole.top]
    np.testing.assert_allclose(body["mean"], whole.mean, atol=1e-5)


def test_a_chessbench_network_s_units_through_the_api(client, sent, db):
    """cb-cpu (shipped, action value): the description lists its SwiGLU units with squares, and the
    neurons and carriers answers are its activations and exact removals."""
    from analysis.checkpoint import load_checkpoint
    from tests.conftest import ROOT
    from webapp.networks.registry import register_checkpoint

    network = register_checkpoint(ROOT / "weights" / "retired" / "cb-cpu.safetensors", "cb-cpu-test")
    job = create_job(parse_pgn(GAME), network, "policy", 1, dispatch=False)
    about = client.get(f"/api/jobs/{job.id}/nodes/0/lens/").json()
    assert about["neurons"] == {"mlp": {"squares": True}} and "neurons" not in about["unavailable"]
    model, meta = load_checkpoint(ROOT / "weights" / "retired" / "cb-cpu.safetensors")
    adapter = lens_for(model, meta.input_encoding)
    _, body = ready(client, sent, url(job, 1, "neurons", "?layer=2&top=3"))
    truth = acts(adapter, board_for(job.nodes, 1), 2)
    assert [u["index"] for u in body["units"]] == np.argsort(-truth.max(0), kind="stable")[:3].tolist()
    assert body["units"][0]["square"] == chess.SQUARE_NAMES[int(truth[:, body["units"][0]["index"]].argmax())]
    _, body = ready(client, sent, url(job, 0, "carriers", "?move=e2e4&top=2"))
    assert body["units"] == 4 * 256 and len(body["carriers"]) == 2
    prepared = adapter.prepare(chess.Board())
    column = [m.uci() for m in prepared.moves].index("e2e4")
    with torch.no_grad():
        clean = adapter.run(prepared)[1].logits[0, column]
        for c in body["carriers"]:
            scales = torch.ones(1, 4, 256)
            scales[0, c["layer"], c["index"]] = 0
            ablated = adapter.run(prepared, 1, {"mlp": scales})[1].logits[0, column]
            assert c["exact"] == pytest.approx(float(ablated - clean), abs=1e-4)
