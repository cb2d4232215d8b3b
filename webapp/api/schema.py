"""The shapes of the API's requests and answers, for its OpenAPI schema (drf-spectacular).

These serializers describe; the views build their answers themselves (the submission is
validated by the home page's form, so the page and the API refuse the same input with the
same words). ``tests/web/test_api_fuzz.py`` walks the schema and holds every answer to it.
"""

from __future__ import annotations

from drf_spectacular.utils import OpenApiExample, OpenApiResponse
from rest_framework import serializers


class Error(serializers.Serializer):
    """Every error: one message a person can act on, and for a refused submission each field's."""

    error = serializers.CharField(help_text="What is wrong, in words.")
    errors = serializers.DictField(child=serializers.ListField(child=serializers.CharField()), required=False,
                                   help_text="A refused submission: the messages for each field.")
    games = serializers.ListField(child=serializers.DictField(), required=False,
                                  help_text="A PGN of several games: each game's index and label; send one "
                                            "`game_index`.")
    retry = serializers.CharField(required=False, help_text="Attention that failed: the query that queues it again.")


SUBMISSION_EXAMPLES = [
    OpenApiExample("A game", request_only=True,
                   value={"pgn": "1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 *", "network": "material", "search": "value"}),
    OpenApiExample("A position, searched", request_only=True,
                   value={"fen": "6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1", "network": "material", "search": "alphabeta",
                          "budget": 2}),
]


class JobLinks(serializers.Serializer):
    id = serializers.UUIDField()
    status = serializers.CharField()
    title = serializers.CharField()
    page = serializers.URLField(help_text="The game page.")
    api = serializers.URLField(help_text="The job's state (this API).")
    pgn = serializers.URLField(help_text="The analysis as annotated PGN.")


class JobStatus(serializers.Serializer):
    status = serializers.CharField(help_text="queued, running, done, failed or cancelled.")
    evaluated = serializers.IntegerField()
    searched = serializers.IntegerField()
    total = serializers.IntegerField()
    error = serializers.CharField(allow_blank=True)
    search = serializers.CharField()
    budget = serializers.IntegerField()
    engine_nodes = serializers.IntegerField(help_text="The engine lane's nodes per position; 0: no engine line.")
    engine_name = serializers.CharField(allow_blank=True, help_text="The engine that valued the positions.")
    engine_note = serializers.CharField(allow_blank=True, help_text="Why the engine line is absent or stopped "
                                                                    "early, in a sentence; empty when all is well.")
    waiting = serializers.CharField(allow_blank=True, help_text="A queued job's wait, e.g. \"queued behind 1 "
                                                                "analysis, about 20 s\"; empty when it is not waiting.")


class Node(serializers.Serializer):
    """One position of the game tree (the root has no move)."""

    id = serializers.IntegerField()
    parent = serializers.IntegerField(allow_null=True)
    ply = serializers.IntegerField()
    san = serializers.CharField(allow_null=True)
    uci = serializers.CharField(allow_null=True)
    fen = serializers.CharField()
    children = serializers.ListField(child=serializers.IntegerField())
    main = serializers.BooleanField(help_text="On the main line.")
    outcome = serializers.DictField(allow_null=True, help_text="The rules' verdict when the game is over here.")


class NetworkBrief(serializers.Serializer):
    name = serializers.CharField()
    family = serializers.CharField()
    trained = serializers.BooleanField()
    page = serializers.URLField(help_text="Its page: model card and figures.")


class Figure(serializers.Serializer):
    value = serializers.FloatField(help_text="For ranking: a share of puzzles, STS points, Elo, or minus the MAE.")
    text = serializers.CharField()
    agent = serializers.CharField(help_text="The agent (or test set) that measured it.")


class Rating(serializers.Serializer):
    value = serializers.FloatField(help_text="Elo on Stockfish's UCI_Elo scale.")
    low = serializers.FloatField(allow_null=True, help_text="95% interval's low end (null without the match's W/D/L).")
    high = serializers.FloatField(allow_null=True)
    text = serializers.CharField(help_text='As the pages show it: "about 870 (730-1010)".')
    scale = serializers.CharField(help_text="What the scale is.")


class Figures(serializers.Serializer):
    puzzles = Figure(allow_null=True, help_text="Its best agent's share of 1,000 Lichess puzzles.")
    sts = Figure(allow_null=True, help_text="Strategic Test Suite, out of 15,000.")
    elo_vs_sf1350 = Figure(allow_null=True, help_text="Elo against Stockfish at UCI_Elo 1350, 100 games.")
    value_quality = Figure(allow_null=True, help_text="Its value against Stockfish's win probability.")
    elo = Rating(allow_null=True, help_text="elo_vs_sf1350 on one scale: 1350 + the difference, with its 95% interval.")
    puzzles_one_agent = Figure(allow_null=True, help_text="Puzzles by the one agent every network is shown with: the "
                               "raw policy's top move, or the value one ply ahead for a network with no policy head.")


class NetworkDetail(NetworkBrief):
    preset = serializers.CharField(allow_blank=True)
    kind = serializers.CharField(help_text="checkpoint or material.")
    parameters = serializers.IntegerField()
    size_bytes = serializers.IntegerField()
    offered = serializers.BooleanField(help_text="Whether a job may use it now.")
    withdrawn = serializers.CharField(allow_null=True, help_text="Why new computations on it are refused (withdrawn "
                                      "by an admin or retired by serve), or null while it is offered or being checked.")
    status = serializers.CharField(help_text="checking, ready or rejected.")
    default = serializers.BooleanField(help_text="The site's default network (docs/site.md says the rule).")
    very_weak = serializers.BooleanField(help_text="Under 5% of the puzzles or more than 700 Elo below Stockfish 1350.")
    headline = serializers.CharField(help_text="What the home dropdown shows of its strength.")
    value_sanity = serializers.CharField(help_text="passed, failed, unverified or not a network.")
    figures = Figures(help_text="Read from its model card's metrics.")
    head_atlas = serializers.URLField(allow_null=True)


class NetworkList(serializers.Serializer):
    networks = NetworkDetail(many=True)
    default_rule = serializers.CharField()


class JobState(serializers.Serializer):
    id = serializers.UUIDField()
    network = NetworkBrief(help_text="The network that analyses the job.")
    nodes = Node(many=True)
    job = JobStatus()
    results = serializers.DictField(child=serializers.DictField(),
                                    help_text="By node id, White's view: its eval, search and engine values; "
                                              "judgement (the engine's where it valued the move, source "
                                              "\"engine\", else the network's) and network_judgement.")
    review = serializers.DictField(help_text="engine: accuracy %, average centipawn loss and counts of "
                                             "inaccuracies, mistakes and blunders per player, from the engine "
                                             "(lichess's formulas), or null; network_marks: the network's own marks "
                                             "per player.")
    disagreements = serializers.ListField(child=serializers.DictField(),
                                          help_text="Positions both valued, largest gap first: the network's "
                                                    "and the engine's expected score for White, the policy's "
                                                    "top move and the engine's best.")


class Score(serializers.Serializer):
    cp = serializers.IntegerField(allow_null=True, help_text="Centipawns for White.")
    mate = serializers.IntegerField(allow_null=True, help_text="Mate in n for White (negative: White is mated).")


class Position(serializers.Serializer):
    job = serializers.UUIDField()
    node = Node()
    results = serializers.DictField(help_text="Its eval, search and judgement, as far as known.")
    eval = Score(allow_null=True)


class AttentionLayer(serializers.Serializer):
    layers = serializers.IntegerField()
    heads = serializers.IntegerField()
    layer = serializers.IntegerField()
    encoding = serializers.CharField(help_text="u8-row-scaled: uint8 maps, one float32 scale per query row.")
    maps = serializers.CharField(help_text="base64 of heads x 64 x 64 uint8.")
    scales = serializers.CharField(help_text="base64 of heads x 64 little-endian float32.")


class LensPending(serializers.Serializer):
    status = serializers.CharField(help_text="pending: a worker computes it; ask `poll` again after Retry-After.")
    poll = serializers.CharField(help_text="The address to ask again (this request).")


class LensAbout(serializers.Serializer):
    network = serializers.CharField()
    family = serializers.CharField(required=False)
    readouts = serializers.ListField(child=serializers.CharField(), required=False,
                                     help_text="Readout points in forward order; the last is the network's output.")
    units = serializers.DictField(child=serializers.DictField(), required=False,
                                  help_text="Unit kinds (head, mlp, ...): layers, per_layer, what.")
    neurons = serializers.DictField(child=serializers.DictField(), required=False,
                                    help_text="Unit kinds with activations (the neuron panel): {kind: {squares}}.")
    unavailable = serializers.DictField(child=serializers.CharField(),
                                        help_text="Each capability the network lacks, with the reason "
                                                  "(`lens`: it has no lens at all).")
    norms = serializers.CharField(required=False, allow_blank=True)
    moves = serializers.ListField(child=serializers.DictField(child=serializers.CharField()),
                                  help_text="The position's legal moves, [{uci, san}] (empty when the game is over).")


class LensAnswer(serializers.Serializer):
    """Scores are White's expected scores; probabilities and logits are the moves' own."""

    request = serializers.DictField(help_text="The checked request (quantity and its parameters).")
    network = serializers.CharField()
    readouts = serializers.ListField(child=serializers.CharField(), required=False)
    curves = serializers.DictField(required=False, help_text="lens: {uci: [{logit, prob, rank} per readout]}.")
    top = serializers.JSONField(required=False, allow_null=True,
                                help_text="lens: the top move per readout; where-else: the strongest positions "
                                          "[{index, fen, peak, square}].")
    top_prob = serializers.ListField(child=serializers.FloatField(), required=False)
    settles = serializers.DictField(required=False)
    score = serializers.JSONField(required=False, allow_null=True,
                                  help_text="lens: White's score per readout; grid: the score change per unit.")
    wdl = serializers.JSONField(required=False, allow_null=True)
    policy = serializers.ListField(child=serializers.DictField(), required=False,
                                   help_text="ablate: [{uci, clean, scaled}] sorted by the change.")
    clean_score = serializers.FloatField(required=False, allow_null=True)
    scaled_score = serializers.FloatField(required=False, allow_null=True)
    logit = serializers.JSONField(required=False, help_text="grid: layers x units, the move's logit change.")
    exact = serializers.JSONField(required=False, help_text="grid: layers x units, measured exactly.")
    move = serializers.CharField(required=False)
    unit = serializers.CharField(required=False)
    clean_logit = serializers.FloatField(required=False)
    layer = serializers.IntegerField(required=False, help_text="split: the layer taken apart.")
    heads = serializers.IntegerField(required=False, help_text="split: heads in each part.")
    encoding = serializers.CharField(required=False, help_text="split: f16, little-endian float16.")
    content = serializers.CharField(required=False, help_text="split: base64 of heads x 64 x 64, softmax(QK^T / sqrt(D)).")
    position = serializers.CharField(required=False, help_text="split: base64 of heads x 64 x 64, the position logits.")
    final = serializers.CharField(required=False, help_text="split: base64 of heads x 64 x 64, the network's own map.")
    units = serializers.JSONField(required=False, help_text="neurons: [{index, peak, square, mean}]; carriers: how "
                                                            "many units were attributed.")
    map = serializers.ListField(child=serializers.FloatField(), required=False,
                                help_text="neuron: the unit's activation on each square, a1 first.")
    peak = serializers.FloatField(required=False)
    square = serializers.CharField(required=False)
    carriers = serializers.ListField(child=serializers.DictField(), required=False,
                                     help_text="carriers: [{layer, index, attribution, exact}], largest |attribution| "
                                               "first; exact is the measured logit change.")
    mean = serializers.ListField(child=serializers.FloatField(), required=False,
                                 help_text="where-else: the unit's mean activation per square over the pool.")
    pool = serializers.CharField(required=False)
    size = serializers.IntegerField(required=False)
    scanned = serializers.IntegerField(required=False)
    skipped = serializers.IntegerField(required=False, help_text="where-else: pool positions without a legal move.")


class ScanPending(LensPending):
    done = serializers.IntegerField(help_text="Positions scanned so far.")
    total = serializers.IntegerField(help_text="Positions to scan (0 until the worker starts).")


class SearchLine(serializers.Serializer):
    move = serializers.CharField(help_text="UCI.")
    san = serializers.CharField()
    visits = serializers.IntegerField()
    prior = serializers.FloatField(allow_null=True, help_text="The network's raw policy for the move.")
    q = serializers.FloatField(allow_null=True, help_text="White's expected score; null for an unvisited move.")


class SearchSummary(serializers.Serializer):
    best = serializers.CharField(allow_null=True, help_text="The search's move (UCI).")
    best_san = serializers.CharField(allow_null=True)
    policy_move = serializers.CharField(allow_null=True, help_text="The raw policy's top move (UCI).")
    policy_san = serializers.CharField(allow_null=True)
    overruled = serializers.BooleanField(help_text="Whether the search chose another move than the raw policy.")
    nodes = serializers.IntegerField(help_text="Nodes the search reports.")
    lines = SearchLine(many=True, help_text="The root's moves by visits (at most 8).")


class Lc0Comparison(serializers.Serializer):
    network = serializers.CharField()
    node = serializers.IntegerField()
    nodes = serializers.IntegerField(help_text="The node budget both searches were given.")
    lc0 = SearchSummary(help_text="lc0's own search (lc0 0.32.1, its defaults) on the job's network.")
    sightline = SearchSummary(help_text="Sightline's MCTS with the same nodes.")
    visit_distance = serializers.FloatField(help_text="Total variation between the two searches' visit shares.")


class Pending(serializers.Serializer):
    status = serializers.CharField(help_text="pending: a worker computes it; ask again after Retry-After.")


class Review(serializers.Serializer):
    """What the game page refreshes as the engine's values and marks arrive."""

    review = serializers.DictField(help_text="engine: accuracy %, average centipawn loss and counts of inaccuracies, "
                                             "mistakes and blunders per player (lichess's formulas), or null; "
                                             "network_marks: the network's own marks per player.")
    disagreements = serializers.ListField(child=serializers.DictField(),
                                          help_text="Positions both valued, largest gap first.")
    network_swing = serializers.DictField(allow_null=True,
                                          help_text="The network's side-to-move bias from its card (bias, threshold, "
                                                    "swings, message), or null when its card has none.")


class Index(serializers.Serializer):
    schema = serializers.URLField(help_text="This API's OpenAPI 3 schema (YAML; ?format=json for JSON).")
    docs = serializers.URLField(help_text="This API's documentation to read in a browser (Swagger UI).")
    submit = serializers.URLField(help_text="Where to POST a game.")
    networks = serializers.URLField(help_text="The networks, with their measured figures.")


def error(description: str) -> OpenApiResponse:
    return OpenApiResponse(Error, description=description)


NOT_FOUND = error("No such job (or position), or the address is not one of the API's.")
# webapp.networks.lookup.out_of_service: the one refusal of new work on a withdrawn or retired network.
WITHDRAWN = error("The network was withdrawn by an admin or retired by serve (the reason); nothing was stored or "
                  "queued. What is already stored on it is still answered.")


def every_body_required(result: dict, generator, request, public) -> dict:
    """drf-spectacular hook: every request body the API takes is required (the site refuses a POST
    without one), which drf-spectacular cannot tell for a oneOf of shapes."""
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            if "requestBody" in operation:
                operation["requestBody"]["required"] = True
    return result


# DRF's text fields refuse a NUL character (a 400: the database could not store it), so the schema
# says so: every plain text field of a request holds no NUL.
NO_NUL = r"^[^\x00]*$"


def _request_components(result: dict) -> set[str]:
    """The component schemas a request body reaches, through $ref, allOf/oneOf/anyOf, items and properties."""
    schemas = result.get("components", {}).get("schemas", {})
    seen: set[str] = set()

    def walk(node):
        if isinstance(node, dict):
            ref = node.get("$ref", "")
            name = ref.rsplit("/", 1)[-1] if ref.startswith("#/components/schemas/") else None
            if name and name not in seen:
                seen.add(name)
                walk(schemas.get(name))
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            if isinstance(operation, dict):
                walk(operation.get("requestBody", {}))
    return seen


def text_holds_no_nul(result: dict, generator, request, public) -> dict:
    """drf-spectacular hook: each request component's text property without a pattern of its own
    (or a format) gets ``NO_NUL``; those with a pattern exclude NUL in the pattern itself."""
    schemas = result.get("components", {}).get("schemas", {})
    for name in _request_components(result):
        for prop in schemas.get(name, {}).get("properties", {}).values():
            if prop.get("type") == "string" and "pattern" not in prop and "format" not in prop and "enum" not in prop:
                prop["pattern"] = NO_NUL
    return result
