"""The home page form: one game (PGN text, .pgn upload or FEN), a network, a search and its budget.

Every bad input ends as a form error with a message a user can act on; the
view maps errors to 4xx statuses (``status_code``) and saves nothing.
"""

from __future__ import annotations

import codecs

from django import forms
from django.conf import settings

from analysis.engines.reference import MAX_NODES as ENGINE_MAX_NODES
from analysis.engines.reference import MIN_NODES as ENGINE_MIN_NODES
from analysis.engines.stockfish import find_stockfish
from webapp.jobs.gameinput import (
    MAX_INPUT_BYTES, MAX_PLIES, GameInputError, GameTree, MultipleGames, parse_fen, parse_pgn,
)
from webapp.jobs.searches import DEFAULT_SEARCH, MAX_JOB_NODES, SEARCHES, job_nodes
from webapp.networks.lookup import out_of_service
from webapp.networks.models import Network


# One limit for pasted text and uploaded files, in the UTF-8 bytes of the PGN itself (not of
# the request, whose encoding may be up to three times larger: settings.DATA_UPLOAD_MAX_MEMORY_SIZE).
PGN_LIMITS = (f"A PGN, pasted or uploaded, may be up to 1 MB ({MAX_INPUT_BYTES:,} bytes) and "
              f"{MAX_PLIES:,} plies, variations included.")
PGN_TOO_LARGE = "the limit is 1 MB ({:,} bytes).".format(MAX_INPUT_BYTES)


def engine_help(default: int, engine_path: str | None) -> str:
    """The engine budget's help text: what the engine adds, its range, and whether it is installed."""
    text = (f"Stockfish values every position beside the network: its line, marks and accuracy. "
            f"Default {default:,}; {ENGINE_MIN_NODES:,} to {ENGINE_MAX_NODES:,}; 0 turns it off.")
    return text if engine_path else text + " Stockfish is not installed on this site: analyses run without it."


def as_typed(number: int, grouped: bool = False) -> str:
    """A number for an error message: as typed, or its length where echoing it would flood the page."""
    digits = len(str(abs(number)))
    if digits > 15:
        return f"of {digits:,} digits"
    return f"{number:,}" if grouped else str(number)


def engine_budget_allowed(nodes: int) -> bool:
    """Stockfish's budget per position: 0 (no engine) or within the engine lane's range."""
    return nodes == 0 or ENGINE_MIN_NODES <= nodes <= ENGINE_MAX_NODES


class AnalyseForm(forms.Form):
    pgn = forms.CharField(required=False, strip=False, label="PGN", help_text=PGN_LIMITS,
                          widget=forms.Textarea(attrs={"rows": 8, "placeholder": "Paste a PGN here",
                                                       "spellcheck": "false"}))
    pgn_file = forms.FileField(required=False, label="or upload a .pgn file")
    fen = forms.CharField(required=False, label="or a FEN", max_length=200,
                          widget=forms.TextInput(attrs={"placeholder": "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
                                                        "spellcheck": "false"}))
    game_index = forms.IntegerField(required=False, min_value=0, widget=forms.HiddenInput)
    network = forms.CharField(max_length=64)
    search = forms.CharField(max_length=32, initial=DEFAULT_SEARCH)
    budget = forms.IntegerField(required=False, min_value=None)
    # The engine lane beside the network (webapp.jobs.run.engine_lane): Stockfish's nodes per position.
    engine_nodes = forms.IntegerField(
        required=False, label="Stockfish nodes per position")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.games = None  # set when the PGN holds several games
        self.games_prompt = ""
        self.status_code = 400
        self.fields["engine_nodes"].initial = settings.SIGHTLINE_ENGINE_NODES
        self.fields["engine_nodes"].help_text = engine_help(settings.SIGHTLINE_ENGINE_NODES,
                                                            find_stockfish(settings.SIGHTLINE_ENGINE_PATH or None))
        default = Network.objects.offered().first()
        if default is not None:
            self.fields["network"].initial = default.name
            self.fields["search"].initial = default.default_search

    @staticmethod
    def network_choices():
        return Network.objects.offered()

    @staticmethod
    def search_choices():
        return list(SEARCHES.values())

    def clean_network(self) -> Network:
        name = self.cleaned_data["network"].strip()
        network = Network.objects.filter(name=name).first()
        refusal = out_of_service(network) if network is not None else None
        if refusal is not None:  # withdrawn or retired: the reason, not "unknown"
            self.status_code = refusal.status
            raise forms.ValidationError(refusal.message)
        if network is None or network.status != Network.Status.READY:
            raise forms.ValidationError(f"Unknown network {name!r}.")
        return network

    def clean_search(self) -> str:
        name = self.cleaned_data["search"].strip()
        if name not in SEARCHES:
            raise forms.ValidationError(f"Unknown search {name!r}; choose one of {', '.join(SEARCHES)}.")
        return name

    def clean_pgn_file(self):
        upload = self.cleaned_data.get("pgn_file")
        if not upload:
            return None
        if upload.size > MAX_INPUT_BYTES:
            self.status_code = 413
            raise forms.ValidationError(f"The file is {upload.size:,} bytes; {PGN_TOO_LARGE}")
        raw = upload.read()
        if raw.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):  # saved as "Unicode" on Windows
            try:
                return raw.decode("utf-16")
            except UnicodeDecodeError:
                raise forms.ValidationError("The file starts like UTF-16 text but is not valid UTF-16.") from None
        try:
            return raw.decode("utf-8-sig")
        except UnicodeDecodeError:
            return raw.decode("latin-1")  # old PGN files are often Latin-1

    def clean(self):
        data = super().clean()
        self._clean_budget(data)
        self._clean_engine(data)
        text, fen = self._pick_input(data)
        if text is None and fen is None:
            return data
        try:
            data["tree"] = parse_fen(fen) if fen is not None else parse_pgn(text, data.get("game_index"))
        except MultipleGames as exc:
            self._offer_games(exc, text, from_file=bool(data.get("pgn_file")))
        except GameInputError as exc:
            if "larger than" in str(exc):
                self.status_code = 413
            self.add_error("fen" if fen is not None else ("pgn_file" if data.get("pgn_file") else "pgn"), str(exc))
        self._clean_work(data)
        return data

    def _offer_games(self, exc: MultipleGames, text: str, *, from_file: bool) -> None:
        """Ask which game (a prompt, not an error). A browser clears the file input when the form
        comes back, so an uploaded file's text is put in the PGN box to travel with the pick."""
        self.games, self.games_prompt = exc.games, str(exc)
        self.add_error("game_index", str(exc))
        if from_file:
            self.data = self.data.copy()
            self.data["pgn"] = text

    def _clean_work(self, data) -> None:
        """One job stays within ``MAX_JOB_NODES`` (positions x nodes per position)."""
        spec, tree = SEARCHES.get(data.get("search") or ""), data.get("tree")
        if spec is None or tree is None or self.has_error("budget"):
            return
        nodes = job_nodes(spec, data["budget"], len(tree.nodes))
        if nodes > MAX_JOB_NODES:
            self.add_error("budget", f"This analysis would search about {nodes:,} nodes ({_positions(len(tree.nodes))} "
                                     f"x {spec.nodes_per_position(data['budget']):,}); one analysis may search at most "
                                     f"{MAX_JOB_NODES:,}. Choose a smaller budget or a shorter game.")

    def _pick_input(self, data) -> tuple[str | None, str | None]:
        """(pgn text, fen): exactly one is set, or an error is added."""
        if self.has_error("pgn_file"):
            return None, None
        text = data.get("pgn_file") or data.get("pgn") or ""
        fen = (data.get("fen") or "").strip()
        given = sum(bool(x) for x in (data.get("pgn_file"), (data.get("pgn") or "").strip(), fen))
        if given == 0:
            self.add_error(None, "Paste a PGN, upload a .pgn file or enter a FEN.")
            return None, None
        if given > 1:
            self.add_error(None, "Give one game only: a PGN, a .pgn file or a FEN, not several.")
            return None, None
        if len(text.encode("utf-8")) > MAX_INPUT_BYTES:
            self.status_code = 413
            self.add_error("pgn", f"The PGN is {len(text.encode('utf-8')):,} bytes; {PGN_TOO_LARGE}")
            return None, None
        return (None, fen) if fen else (text, None)

    def _clean_budget(self, data) -> None:
        spec = SEARCHES.get(data.get("search") or "")
        network = data.get("network")
        if spec is None:
            return
        budget = data.get("budget")
        if spec.fixed:
            data["budget"] = 1
        elif budget is None:
            if not self.has_error("budget"):
                data["budget"] = spec.budget_default
        elif not spec.budget_min <= budget <= spec.budget_max:
            self.add_error("budget", f"Budget {as_typed(budget)} is out of range for {spec.name}: "
                                     f"{spec.budget_min} to {spec.budget_max} {spec.budget_unit}.")
        if isinstance(network, Network) and spec.needs_policy and not network.caps.policy:
            self.add_error("search", f"The {spec.name} search needs a policy head; {network.name} has none.")

    def _clean_engine(self, data) -> None:
        """Blank: the site's default budget; 0: no engine; else within the engine lane's range."""
        nodes = data.get("engine_nodes")
        if nodes is None:
            if not self.has_error("engine_nodes"):
                data["engine_nodes"] = settings.SIGHTLINE_ENGINE_NODES
        elif not engine_budget_allowed(nodes):
            self.add_error("engine_nodes", f"Stockfish's budget {as_typed(nodes, grouped=True)} is out of range: {ENGINE_MIN_NODES:,} to "
                                           f"{ENGINE_MAX_NODES:,} nodes per position, or 0 for no engine.")

    @property
    def tree(self) -> GameTree:
        return self.cleaned_data["tree"]


def _positions(count: int) -> str:
    return "1 position" if count == 1 else f"{count:,} positions"
