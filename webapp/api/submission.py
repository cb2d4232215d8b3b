"""What POST /api/jobs/ takes: the contract its OpenAPI schema publishes, checked before the form.

Exactly one of ``pgn`` and ``fen`` (a field counts as given when it holds a non-space character),
the search by name, every number within the bounds the site holds it to, read from the constants
the form and the searches use. A body that breaks the contract is a 400; one that keeps it but is
not a game this site can analyse as asked (an unreadable PGN, an unknown network, a budget outside
its search's own range) is the form's refusal, a 422. The JSON form allows null for "not sent"; a
form post cannot send null, so its shape has none.
"""

from __future__ import annotations

import re

from drf_spectacular.utils import PolymorphicProxySerializer, extend_schema_field
from rest_framework import serializers

from analysis.engines.reference import MAX_NODES as ENGINE_MAX_NODES
from analysis.engines.reference import MIN_NODES as ENGINE_MIN_NODES
from webapp.jobs.forms import PGN_TOO_LARGE, AnalyseForm, engine_budget_allowed
from webapp.jobs.gameinput import MAX_INPUT_BYTES
from webapp.jobs.searches import SEARCHES

GIVEN = r"^[^\x00]*[^\s\x00][^\x00]*$"  # a non-space character counts as given (the form strips them); no NUL
BUDGET_MIN = min(spec.budget_min for spec in SEARCHES.values())
BUDGET_MAX = max(spec.budget_max for spec in SEARCHES.values())
ENGINE_NODES_SCHEMA = {"oneOf": [{"type": "integer", "enum": [0]},
                                 {"type": "integer", "minimum": ENGINE_MIN_NODES, "maximum": ENGINE_MAX_NODES}]}
BUDGETS = "; ".join(f"{s.name} {s.budget_min} to {s.budget_max} {s.budget_unit}" for s in SEARCHES.values()
                    if not s.fixed)


def _max_length(name: str) -> int:
    return AnalyseForm.base_fields[name].max_length


@extend_schema_field(ENGINE_NODES_SCHEMA)
class EngineNodesField(serializers.IntegerField):
    """0 (no engine) or within the engine lane's range: two ranges, so a oneOf in the schema."""

    def __init__(self, **kwargs):
        super().__init__(validators=[self._allowed], **kwargs)

    @staticmethod
    def _allowed(nodes: int) -> None:
        if not engine_budget_allowed(nodes):
            raise serializers.ValidationError(f"engine_nodes must be 0 or from {ENGINE_MIN_NODES:,} to "
                                              f"{ENGINE_MAX_NODES:,}.")


BLANK = r"^\s*$"  # the other field of a branch: absent, empty or spaces (so the branches never overlap)


def _text(mode: str, nullable: bool, max_length: int, help_text: str, too_long: str) -> serializers.CharField:
    """``pgn`` or ``fen`` as a branch of the oneOf has it (``given`` or ``blank``), or as the site's
    check reads it (``either``: any text within its length, the count of given ones checked after)."""
    limits = dict(max_length=max_length, trim_whitespace=False, help_text=help_text,
                  error_messages={"max_length": too_long})
    if mode == "given":
        return serializers.RegexField(GIVEN, **limits)
    options = dict(required=False, allow_null=nullable, allow_blank=True, **limits)
    if mode == "blank":
        return serializers.RegexField(BLANK, **options)
    return serializers.CharField(**options)


def _fields(pgn: str, fen: str, nullable: bool) -> dict:
    optional = dict(required=False, allow_null=nullable)
    return {
        "pgn": _text(pgn, nullable, MAX_INPUT_BYTES, "A game in PGN (at most 1 MB and 1,000 plies).",
                     f"The PGN is over {MAX_INPUT_BYTES:,} characters; {PGN_TOO_LARGE}"),
        "fen": _text(fen, nullable, _max_length("fen"), "A position instead of a game.",
                     f"A FEN has at most {_max_length('fen')} characters."),
        "network": serializers.CharField(min_length=1, max_length=_max_length("network"), trim_whitespace=False,
                                         help_text="A network's name (the site's network list)."),
        "search": serializers.ChoiceField(choices=list(SEARCHES), **optional, help_text="The search; default the "
                                          "network's own."),
        "budget": serializers.IntegerField(min_value=BUDGET_MIN, max_value=BUDGET_MAX, **optional,
                                           help_text=f"The search's budget, within its own range: {BUDGETS} "
                                                     "(outside it: 422)."),
        "game_index": serializers.IntegerField(min_value=0, **optional,
                                               help_text="Which game of a PGN that holds several."),
        "engine_nodes": EngineNodesField(**optional, help_text=(
            f"Stockfish's nodes per position in the engine lane beside the network (its marks, accuracy and "
            f"line): {ENGINE_MIN_NODES} to {ENGINE_MAX_NODES}, 0 for no engine; not sent: the site's default.")),
    }


def _serializer(name: str, pgn: str, fen: str, nullable: bool) -> type[serializers.Serializer]:
    return type(name, (serializers.Serializer,), _fields(pgn, fen, nullable))


def _one_of(name: str, nullable: bool) -> PolymorphicProxySerializer:
    """Exactly one of pgn and fen: each branch gives one and leaves the other blank or absent."""
    suffix = "" if nullable else "Form"
    return PolymorphicProxySerializer(
        component_name=f"{name}{suffix}", resource_type_field_name=None,
        serializers=[_serializer(f"PgnSubmission{suffix}", "given", "blank", nullable),
                     _serializer(f"FenSubmission{suffix}", "blank", "given", nullable)])


SUBMISSION_JSON = _one_of("Submission", nullable=True)
SUBMISSION_FORM = _one_of("Submission", nullable=False)
REQUEST = {"application/json": SUBMISSION_JSON, "application/x-www-form-urlencoded": SUBMISSION_FORM,
           "multipart/form-data": SUBMISSION_FORM}


class _ExactlyOne(serializers.Serializer):
    def validate(self, attrs: dict) -> dict:
        given = [name for name in ("pgn", "fen") if re.search(GIVEN, attrs.get(name) or "")]
        if len(given) != 1:
            raise serializers.ValidationError("Give exactly one of pgn (a game) and fen (a position).")
        return attrs


# The site's check of the contract: both text fields optional, then exactly one given (the oneOf).
SubmissionContract = type("SubmissionContract", (_ExactlyOne,), _fields("either", "either", nullable=True))


def contract_errors(data) -> dict[str, list[str]]:
    """The body's breaches of the contract by field (``non_field_errors``: pgn and fen); empty when kept."""
    checked = SubmissionContract(data=data)
    return {} if checked.is_valid() else {k: [str(m) for m in v] for k, v in checked.errors.items()}
