"""The analysis task on small games: phases, caching, cancel, failure, the command, attention."""

import base64
import json
from io import StringIO

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from analysis.evaluator import MaterialEvaluator
from tests.web.conftest import OPERA_GAME, SHORT_GAME
from webapp.jobs.attention_maps import dequantise, encode_maps
from webapp.jobs.gameinput import node_boards, parse_pgn
from webapp.jobs.jobs import create_job
from webapp.jobs.models import AnalysisJob, AttentionMap, PositionResult
from webapp.jobs import tasks
from webapp.lens import tasks as lens_tasks
from webapp.networks.model_cache import ModelCache
from webapp.jobs.run.runner import JobRun

pytestmark = pytest.mark.django_db


class Counting:
    """Wraps an evaluator and counts positions evaluated (to prove caching)."""

    def __init__(self, inner):
        self.inner = inner
        self.positions = 0
        self.calls = 0
        for name in ("name", "capabilities"):
            setattr(self, name, getattr(inner, name))

    def evaluate(self, boards, **kwargs):
        self.calls += 1
        self.positions += len(boards)
        return self.inner.evaluate(boards, **kwargs)

    def cache_key(self, board):
        return self.inner.cache_key(board)


def run(job, evaluator):
    messages = []
    finished = JobRun(job, evaluator, lambda kind, payload: messages.append((kind, payload))).run()
    return finished, messages


def test_task_on_a_small_game_with_a_network(tiny_network):
    job = create_job(parse_pgn(SHORT_GAME), tiny_network, "mcts", 16, dispatch=False)
    evaluator = Counting(ModelCache().get(tiny_network))
    finished, messages = run(job, evaluator)
    assert finished.status == "done", finished.error
    assert finished.evaluated == finished.searched == finished.total_positions == 9
    kinds = [k for k, _ in messages]
    assert kinds[0] == "status" and kinds[-1] == "status" and messages[-1][1]["status"] == "done"
    evals = [item for k, p in messages if k == "plies" for item in p["items"]]
    searches = [p for k, p in messages if k == "ply"]
    assert [p["node"] for p in evals] == list(range(9))
    # Evaluations go out one message per batch (the first batch is small), searches one per ply.
    assert [len(p["items"]) for k, p in messages if k == "plies"] == [4, 5]
    assert [p["node"] for p in searches] == list(range(9))  # main line first, then the variation
    first = evals[0]["eval"]
    assert abs(sum(p for _, p, _ in first["policy"]) - 1) < 1e-2 and len(first["wdl"]) == 3
    assert first["policy"][0][2]  # SAN included
    search = searches[0]["search"]
    assert search["algo"] == "mcts" and search["nodes"] >= 1 and search["bestmove"] and search["pv_san"]
    # Messages are small (the channel layer caps them at 1 MB).
    assert max(len(json.dumps(p)) for _, p in messages) < 20_000
    # Everything is stored per (position, network, settings).
    assert PositionResult.objects.filter(settings_key="eval").count() == 9
    assert PositionResult.objects.filter(settings_key="mcts:16").count() == 9

    # Re-analysing the same game is instant: no forward pass at all.
    again = create_job(parse_pgn(SHORT_GAME), tiny_network, "mcts", 16, dispatch=False)
    counting = Counting(ModelCache().get(tiny_network))
    finished, messages = run(again, counting)
    assert finished.status == "done" and counting.positions == 0
    assert len([1 for k, p in messages if k == "ply"]) == 9
    assert sum(len(p["items"]) for k, p in messages if k == "plies") == 9


def test_policy_search_reuses_the_evaluations(tiny_network):
    job = create_job(parse_pgn(SHORT_GAME), tiny_network, "policy", 1, dispatch=False)

    class Keys(Counting):
        def evaluate(self, boards, **kwargs):
            self.keys = getattr(self, "keys", []) + [self.cache_key(b) for b in boards]
            return super().evaluate(boards, **kwargs)

    counting = Keys(ModelCache().get(tiny_network))
    finished, _ = run(job, counting)
    assert finished.status == "done" and finished.searched == 9
    # The two evaluation batches evaluate the game's 9 positions; the searches none of them again
    # (later batches are the move judgements' best-move successors: see test_judgements).
    game = [counting.cache_key(b) for b in node_boards(finished.nodes)]
    assert counting.keys[:9] == game and not set(counting.keys[9:]) & set(game)


def test_transpositions_are_computed_once(material_network):
    # 1. Nf3 Nf6 2. Ng1 Ng8 returns to the start position, but the network sees history,
    # so only positions with equal keys (for material: equal boards and side) are shared.
    job = create_job(parse_pgn("1. Nf3 Nf6 2. Ng1 Ng8 3. Nf3 Nf6 *"), material_network, "value", 1, dispatch=False)
    counting = Counting(MaterialEvaluator())
    finished, _ = run(job, counting)
    assert finished.status == "done"
    keys = {n["key"] for n in AnalysisJob.objects.get(pk=job.pk).nodes}
    assert len(keys) == 4  # start, after Nf3, after Nf6, after Ng1 (then repeats)
    eval_positions = PositionResult.objects.filter(settings_key="eval").count()
    assert eval_positions == 4


def test_cancelled_job_stops(material_network):
    job = create_job(parse_pgn(OPERA_GAME), material_network, "value", 1, dispatch=False)

    class CancelAfterFirstBatch(Counting):
        def evaluate(self, boards, **kwargs):
            AnalysisJob.objects.filter(pk=job.pk).update(status="cancelled")
            return super().evaluate(boards, **kwargs)

    evaluator = CancelAfterFirstBatch(MaterialEvaluator())
    finished, messages = run(job, evaluator)
    assert finished.status == "cancelled"
    assert evaluator.calls == 1 and finished.searched == 0
    assert messages[-1] == ("status", messages[-1][1]) and messages[-1][1]["status"] == "cancelled"


def test_job_cancelled_before_it_starts_is_not_run(material_network):
    job = create_job(parse_pgn(SHORT_GAME), material_network, "value", 1, dispatch=False)
    AnalysisJob.objects.filter(pk=job.pk).update(status="cancelled")
    evaluator = Counting(MaterialEvaluator())
    finished, messages = run(job, evaluator)
    assert finished.status == "cancelled" and evaluator.calls == 0 and messages == []


def test_failure_is_recorded_with_the_error(material_network):
    job = create_job(parse_pgn(SHORT_GAME), material_network, "value", 1, dispatch=False)

    class Broken(Counting):
        def evaluate(self, boards, **kwargs):
            raise RuntimeError("GPU fell off the bus")

    finished, messages = run(job, Broken(MaterialEvaluator()))
    assert finished.status == "failed" and finished.error == "RuntimeError: GPU fell off the bus"
    assert messages[-1][1]["status"] == "failed" and "GPU fell off" in messages[-1][1]["error"]


def test_the_celery_task_function_runs_the_job(material_network, monkeypatch):
    sent = []
    monkeypatch.setattr(tasks, "GroupPublisher", lambda job_id: lambda kind, payload: sent.append(kind))
    job = create_job(parse_pgn(SHORT_GAME), material_network, "value", 1, dispatch=False)
    assert tasks.run_analysis.run(str(job.id)) == "done"
    assert sent.count("ply") == 9 and sent.count("plies") == 2
    assert tasks.run_analysis.run("00000000-0000-0000-0000-000000000000") == "missing"


def test_analyze_pgn_command_prints_json_lines(tiny_network, tmp_path):
    path = tmp_path / "game.pgn"
    path.write_text(SHORT_GAME)
    out = StringIO()
    call_command("analyze_pgn", str(path), "--network", tiny_network.name, "--search", "policy", "--json", stdout=out)
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert len(lines) == 9
    assert {"ply", "san", "fen", "score", "wdl", "policy_top", "best", "pv"} <= set(lines[0])
    assert lines[0]["san"] is None and lines[1]["san"] == "e4" and lines[1]["ply"] == 1
    assert all(0 <= line["score"] <= 1 for line in lines)
    assert lines[1]["best"] == lines[1]["policy_top"][0][0] and lines[1]["pv"] == [lines[1]["best"]]


@pytest.mark.parametrize("args, message", [
    (["--network", "nope"], "unknown network 'nope'"),
    (["--search", "alphabeta", "--budget", "50"], "budget 50 is out of range"),
])
def test_analyze_pgn_command_errors(tiny_network, tmp_path, args, message):
    path = tmp_path / "game.pgn"
    path.write_text(SHORT_GAME)
    with pytest.raises(CommandError, match=message):
        call_command("analyze_pgn", str(path), *args, "--json", stdout=StringIO())


def test_analyze_pgn_command_bad_pgn(tmp_path, material_network):
    path = tmp_path / "bad.pgn"
    path.write_text("1. e4 e5 2. Ke3")
    with pytest.raises(CommandError, match=r"Ply 3 \(2. Ke3\): illegal move"):
        call_command("analyze_pgn", str(path), "--json", stdout=StringIO())
    with pytest.raises(CommandError, match="cannot read"):
        call_command("analyze_pgn", str(tmp_path / "missing.pgn"), "--json", stdout=StringIO())


def test_attention_encoding_round_trip():
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(2, 3, 64, 64)) * 3
    maps = np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)
    blob = encode_maps(maps)
    assert len(blob) < maps.astype(np.float32).nbytes / 3
    from webapp.jobs.attention_maps import decode_layer

    q, scale = decode_layer(blob, 2, 3, 1)
    back = dequantise(q, scale, 3)
    assert np.abs(back - maps[1]).max() <= maps[1].max(axis=-1).max() / 255 + 1e-6


@pytest.fixture
def analysed_job(tiny_network, monkeypatch):
    """A job whose analysis has run, and the list its attention requests are queued on."""
    job = create_job(parse_pgn(SHORT_GAME), tiny_network, "policy", 1, dispatch=False)
    run(job, ModelCache().get(tiny_network))
    queued = []
    monkeypatch.setattr("workers.dispatch.send_task",
                        lambda name, args, queue: queued.append((args, queue)))
    return job, queued


def test_attention_endpoint_computes_on_demand(client, analysed_job):
    job, queued = analysed_job
    url = f"/api/jobs/{job.id}/nodes/3/attention/?layer=1"
    first = client.get(url)
    row = AttentionMap.objects.get()  # the one task protocol of on-demand work: job, node, row
    assert first.status_code == 202 and queued == [([str(job.id), 3, row.pk], "ondemand")]  # the on-demand lane
    assert client.get(url).status_code == 202 and len(queued) == 1  # requested once only
    assert lens_tasks.compute_attention.run(str(job.id), 3) == "ready"
    response = client.get(url)
    assert response.status_code == 200
    body = response.json()
    assert body["layers"] == 2 and body["heads"] == 4 and body["layer"] == 1
    maps = dequantise(base64.b64decode(body["maps"]), base64.b64decode(body["scales"]), body["heads"])
    assert np.allclose(maps.sum(axis=-1), 1.0, atol=0.05)  # each query row is a softmax
    assert client.get(f"/api/jobs/{job.id}/nodes/3/attention/?layer=7").status_code == 422  # not this network's
    assert client.get(f"/api/jobs/{job.id}/nodes/3/attention/?layer=-1").status_code == 400  # never a layer
    assert client.get(f"/api/jobs/{job.id}/nodes/99/attention/").status_code == 404
    assert AttentionMap.objects.get().status == "ready"


def test_attention_bad_layer_is_refused_before_any_work(client, analysed_job):
    job, queued = analysed_job
    response = client.get(f"/api/jobs/{job.id}/nodes/2/attention/?layer=5")
    assert response.status_code == 422 and "between 0 and 1" in response.json()["error"]
    assert queued == [] and not AttentionMap.objects.exists()


def test_failed_attention_reports_and_retries(client, analysed_job):
    job, queued = analysed_job
    url = f"/api/jobs/{job.id}/nodes/2/attention/"
    assert client.get(url).status_code == 202
    AttentionMap.objects.update(status=AttentionMap.Status.FAILED, error="out of memory")
    failed = client.get(url)
    assert failed.status_code == 503 and "out of memory" in failed.json()["error"]
    assert len(queued) == 1  # no retry unless asked
    retried = client.get(url + "?retry=1")
    assert retried.status_code == 202 and len(queued) == 2
    assert AttentionMap.objects.get().status == AttentionMap.Status.PENDING


def test_attention_needs_a_network_with_attention(client, material_network):
    job = create_job(parse_pgn(SHORT_GAME), material_network, "value", 1, dispatch=False)
    response = client.get(f"/api/jobs/{job.id}/nodes/0/attention/")
    assert response.status_code == 404 and "has no attention maps" in response.json()["error"]


def test_quick_searches_are_saved_before_each_is_announced(tiny_network):
    """Quick searches share commits, yet every ply message finds its result and count stored."""
    job = create_job(parse_pgn(OPERA_GAME), tiny_network, "policy", 1, dispatch=False)
    checked = []

    def publish(kind, payload):
        if kind == "ply":
            key = AnalysisJob.objects.get(pk=job.pk).nodes[payload["node"]]["key"]
            stored = PositionResult.objects.filter(position_key=key, settings_key=job.search_settings_key)
            assert stored.exists()
            assert AnalysisJob.objects.get(pk=job.pk).searched >= len(checked) + 1
            assert all(r["san"] for r in payload["search"]["root"])  # SAN (reused from the evaluation)
            checked.append(payload["node"])

    finished = JobRun(job, ModelCache().get(tiny_network), publish).run()
    assert finished.status == "done" and finished.searched == finished.total_positions
    assert sorted(checked) == list(range(finished.total_positions))
