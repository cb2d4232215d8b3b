"""Analysis jobs and the cache of per-position results they fill."""

from __future__ import annotations

import uuid

import chess
from django.conf import settings
from django.db import models

from analysis.displayed_value import DisplayedValue
from analysis.material import material_balance
from webapp.networks.models import Network
from webapp.ondemand.models import PositionCache


class AnalysisJob(models.Model):
    """One request to analyse one game (or one FEN) with one network and search."""

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed"
        CANCELLED = "cancelled"

    FINISHED = (Status.DONE, Status.FAILED, Status.CANCELLED)

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED, db_index=True)
    network = models.ForeignKey(Network, on_delete=models.PROTECT, related_name="jobs")
    search = models.CharField(max_length=32)
    budget = models.PositiveIntegerField(default=1)
    # The engine lane (webapp.jobs.run.engine_lane): Stockfish's nodes per position, 0 for none;
    # the engine's name once it ran (its results are cached under it), and a sentence when the
    # lane is absent or stopped early (no Stockfish, a crash, a hang), shown where its line would be.
    engine_nodes = models.PositiveIntegerField(default=0)
    engine_name = models.CharField(max_length=56, blank=True)
    engine_note = models.TextField(blank=True)
    headers = models.JSONField(default=dict, blank=True)
    start_fen = models.CharField(max_length=100)
    pgn = models.TextField(blank=True, help_text="The analysed game, re-exported")
    # The game tree: a list of nodes (see webapp.jobs.gameinput.Node.as_dict), each with
    # its position key ("key", see webapp.jobs.keys) set when the job is created.
    nodes = models.JSONField(default=list)
    total_positions = models.PositiveIntegerField(default=0)
    evaluated = models.PositiveIntegerField(default=0)
    searched = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)
    task_id = models.CharField(max_length=64, blank=True)
    # The lease (webapp.jobs.run.lease): the worker running the job renews ``lease_until``
    # while it works, so the job runs at most once at a time and a dead worker's job is
    # noticed and dispatched again (webapp.jobs.run.reaper). Empty owner: nobody holds it.
    lease_owner = models.CharField(max_length=64, blank=True)
    lease_until = models.DateTimeField(null=True, blank=True, db_index=True)
    # Who may see it under "Recent analyses" (webapp.jobs.ownership): the session that started
    # it, the signed-in user or API token holder who did (``owner``), and everyone once it is ``shared``.
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                              related_name="analysis_jobs")
    shared = models.BooleanField(default=False, db_index=True,
                                 help_text="Listed under Recent analyses for everyone (the owner's choice)")
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.title} [{self.status}]"

    @property
    def title(self) -> str:
        white, black = (self.headers.get(side, "?").strip() for side in ("White", "Black"))
        if white not in ("", "?") or black not in ("", "?"):
            return f"{white or '?'} - {black or '?'}"
        if len(self.nodes) > 1:
            plies = sum(1 for node in self.nodes if node.get("main")) - 1
            return f"Game, {plies} {'ply' if plies == 1 else 'plies'}"
        return self._position_title()

    def _position_title(self) -> str:
        """A set-up position's title: which move, who moves and the material, so that two FEN jobs
        read differently ("Position, move 24, Black to move, White up 2")."""
        try:
            board = chess.Board(self.start_fen)
        except ValueError:
            return f"Position, {self.side_to_move_at_start} to move"
        balance = material_balance(board, chess.WHITE)
        material = "material even" if balance == 0 else f"{'White' if balance > 0 else 'Black'} up {abs(balance)}"
        return f"Position, move {board.fullmove_number}, {self.side_to_move_at_start} to move, {material}"

    @property
    def side_to_move_at_start(self) -> str:
        return "Black" if self.start_fen.split()[1:2] == ["b"] else "White"

    @property
    def root_label(self) -> str:
        """What the move list calls the first position: a set-up position is not "the start"."""
        if self.start_fen == chess.STARTING_FEN:
            return "Start position"
        return f"Set-up position ({self.side_to_move_at_start} to move)"

    @property
    def finished(self) -> bool:
        return self.status in self.FINISHED

    @property
    def search_settings_key(self) -> str:
        return search_settings_key(self.search, self.budget)

    @property
    def eval_settings_key(self) -> str:
        """Where this job's evaluation-lane values are cached (they depend on the network's policy)."""
        return eval_settings_key(self.network.displayed_value)

    @property
    def group_name(self) -> str:
        return job_group_name(self.id)


def search_settings_key(search: str, budget: int) -> str:
    return f"{search}:{budget}"


# The raw network output (one forward pass, no search) is cached under this settings key.
EVAL_SETTINGS_KEY = "eval"


def eval_settings_key(displayed: DisplayedValue) -> str:
    """The evaluation lane's settings key: ``EVAL_SETTINGS_KEY`` for a network read as it is, else
    one naming its family's ``displayed_value`` policy (its rows hold the shown and the static value)."""
    return EVAL_SETTINGS_KEY if displayed.is_static else f"{EVAL_SETTINGS_KEY}/{displayed.name}"


def job_group_name(job_id: uuid.UUID | str) -> str:
    """Channel-layer group for a job (ASCII letters, digits and dots only)."""
    return f"job.{uuid.UUID(str(job_id)).hex}"


class PositionResult(models.Model):
    """What one network (and one search setting) said about one position.

    Keyed by what the network sees (a digest of ``evaluator.cache_key``), so
    transpositions and re-analysed games are never computed twice.
    ``data`` is JSON from the side to move's point of view.
    """

    position_key = models.CharField(max_length=64)
    network_checksum = models.CharField(max_length=64)
    settings_key = models.CharField(max_length=64)
    data = models.JSONField()
    compute_ms = models.FloatField(default=0.0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["position_key", "network_checksum", "settings_key"],
                                               name="unique_position_result")]

    def __str__(self) -> str:
        return f"{self.position_key[:12]} {self.settings_key}"


class AttentionMap(PositionCache):
    """Attention of every layer and head for one position, computed on demand.

    ``data`` holds zlib-compressed uint8 maps quantised per query row, followed
    by the float32 row scales (see webapp.jobs.attention_maps).
    """

    layers = models.PositiveSmallIntegerField(default=0)
    heads = models.PositiveSmallIntegerField(default=0)
    data = models.BinaryField(blank=True, default=b"")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["position_key", "network_checksum"],
                                               name="unique_attention_map")]


class DeepSearch(models.Model):
    """"Analyse this position deeper": the job's search on one node with a larger budget (or until
    stopped), run by a worker (the task ``sightline.deep_search``) that publishes its lines live.

    ``budget`` 0 means until stopped (within ``webapp.jobs.deeper.MAX_SECONDS``); ``result``
    holds the latest lines (see ``webapp.jobs.run.deep_runner.lines_json``), the final ones once done.

    With ``engine`` "stockfish" it is the deeper engine instead (``webapp.jobs.engine_deeper``, the task
    ``sightline.engine_deeper``): ``budget`` in the engine's nodes (0: until stopped), ``lines`` its
    principal variations, ``client`` the hashed key of who asked (``webapp.ondemand.clients``: the limits are per
    client) and ``cost`` its estimated worker seconds (``webapp.ondemand.limits``)."""

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        STOPPING = "stopping"
        DONE = "done"
        FAILED = "failed"

    job = models.ForeignKey(AnalysisJob, on_delete=models.CASCADE, related_name="deep_searches")
    node_id = models.PositiveIntegerField()
    budget = models.PositiveIntegerField(default=0)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    result = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    engine = models.CharField(max_length=16, blank=True, default="", help_text='"": the job\'s search; "stockfish"')
    lines = models.PositiveSmallIntegerField(default=0)
    client = models.CharField(max_length=64, blank=True, default="", db_index=True)
    cost = models.FloatField(default=0.0, help_text="estimated worker seconds (webapp.ondemand.limits)")

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"deeper {self.engine or 'search'} {self.job_id} node {self.node_id} [{self.status}]"



class LensResult(PositionCache):
    """One lens quantity (logit lens, a scaled unit, a head grid, a neuron quantity) for one position and network,
    computed by a worker on demand (``sightline.compute_lens``) and kept: the same request on the
    same position and network is answered from here. ``request`` is the checked request
    (``webapp.lens.lens``), ``data`` its answer for the side to move."""

    request_key = models.CharField(max_length=64, help_text="Digest of the canonical request")
    request = models.JSONField(default=dict)
    data = models.JSONField(default=dict, blank=True)
    # A neuron scan's progress (positions scanned of the pool's), written by the worker per batch.
    done = models.PositiveIntegerField(default=0)
    total = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["position_key", "network_checksum", "request_key"],
                                               name="unique_lens_result")]

    def __str__(self) -> str:
        return f"lens {self.request.get('quantity')} {self.position_key[:12]} [{self.status}]"


class Lc0Comparison(PositionCache):
    """"Compare with lc0" on one position: lc0's own search and Sightline's MCTS on the same network
    and nodes, run by a worker (``sightline.compare_lc0``) and kept: the same network, position and
    nodes are answered from here. ``data`` is ``webapp.lc0compare.runner.comparison_json`` (the side
    to move's view); ``error`` says why lc0 (or the search) gave no answer."""

    nodes = models.PositiveIntegerField()
    data = models.JSONField(default=dict, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["position_key", "network_checksum", "nodes"],
                                               name="unique_lc0_comparison")]

    def __str__(self) -> str:
        return f"lc0 comparison {self.position_key[:12]} {self.nodes} nodes [{self.status}]"
