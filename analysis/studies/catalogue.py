"""What the site says of each study method without loading it: a ``MethodAbout`` per method.

The web process lists the methods, parses a submission's settings and says why a method does not
apply to a network from the network's stored lens description; the method modules (``methods``)
import torch, so only the worker loads them (``run_study``). Each method's ``title`` and
``settings`` come from here, and its live ``why_not`` asks the same capabilities of the adapter
(tests/test_studies_catalogue.py holds the two equal).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Callable

from analysis.studies.errors import StudyInputError
from analysis.studies.settings import (ForgottenSettings, HeadsSettings, KnowingDoingSettings, LookaheadSettings,
                                       ProbeSettings)


def _no_stockfish() -> str | None:
    from analysis.engines.stockfish import find_stockfish

    if find_stockfish() is None:
        return "Stockfish is not installed here (apt-get install stockfish): it judges which move is better"
    return None


@dataclass(frozen=True)
class MethodAbout:
    """``needs``: the lens capabilities the method reads, in the order a missing one is reported;
    ``wording``: per capability, how to word its absence ({why}: the description's sentence);
    ``also``: a check beyond the network (Stockfish installed), None when it passes."""

    name: str
    title: str
    settings: type
    needs: tuple[str, ...] = ("policy",)
    wording: dict[str, str] = dataclasses.field(default_factory=dict)
    also: Callable[[], str | None] | None = None

    @property
    def takes_sparring(self) -> bool:
        """Whether the method plays a second, weaker network (a ``sparring`` setting)."""
        return "sparring" in self.defaults()

    def defaults(self) -> dict[str, Any]:
        return {f.name: f.default for f in dataclasses.fields(self.settings)}

    def why_not(self, lens: Any) -> str | None:
        """None when the method applies, else the sentence why not. ``lens``: anything with
        ``why_not(capability)``: a stored ``LensDescription`` (the site) or a live adapter (the worker)."""
        for capability in self.needs:
            why = lens.why_not(capability)
            if why:
                return self.wording.get(capability, "{why}").format(why=why)
        return self.also() if self.also else None


ABOUTS: dict[str, MethodAbout] = {about.name: about for about in [
    MethodAbout("forgotten", "Forgotten moves: a better move top at an earlier readout point, dropped at the output",
                ForgottenSettings, also=_no_stockfish),
    MethodAbout("lookahead", "Look-ahead: residual patching of the 1st- and 3rd-move target squares (Jenner et al. 2024)",
                LookaheadSettings, ("policy", "patch")),
    MethodAbout("probe", "Bilinear probe of the whole 3rd move per readout point, trained net against an untrained copy",
                ProbeSettings, ("policy", "patch"), {"patch": "the probe reads each square's vector, and {why}"}),
    MethodAbout("heads", "Look-ahead heads: head patching, the single attention entry, piece-movement heads "
                "(Jenner et al. 2024)", HeadsSettings, ("policy", "head_patch", "attention_zero")),
    MethodAbout("knowing_doing", "Knowing vs doing: a probe's best AUROC for en prise and mate beside how often the "
                "top move acts on it", KnowingDoingSettings),
]}


def names() -> list[str]:
    return sorted(ABOUTS)


def get_about(name: str) -> MethodAbout:
    if name not in ABOUTS:
        raise StudyInputError(f"unknown study method {name!r}: one of {', '.join(names())}")
    return ABOUTS[name]
