"""What the lens can do on one network, computed once from the loaded network and kept as JSON.

A ``LensDescription`` is what every lens request is checked against (``analysis.lens.requests``):
readout points, unit kinds (layers x per layer), the kinds whose units have activations (the
neurons), and each capability the network lacks with the family's sentence. The site computes it
when a worker checks a network and stores it on the network's row, so the web process checks a
request without loading the checkpoint.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from analysis.lens import LensUnavailable

# Raised when a description learns something older ones lack (2: the patching capabilities ``patch``,
# ``head_patch``, ``attention_zero``): a stored one of an older version is stale, described again
# (webapp/networks/migrations/0008, and serve's registration of the shipped networks).
VERSION = 2

if TYPE_CHECKING:
    import torch

    from analysis.models.lens import LensAdapter


@dataclass(frozen=True)
class UnitShape:
    """One unit kind: ``layers`` x ``per_layer`` units; ``what`` names one in a sentence."""

    layers: int
    per_layer: int
    what: str = ""


@dataclass(frozen=True)
class LensDescription:
    """The lens's reach on a network. ``unavailable["lens"]`` set: no lens at all (and nothing else)."""

    family: str = ""
    readouts: tuple[str, ...] = ()
    units: dict[str, UnitShape] = field(default_factory=dict)
    neurons: dict[str, bool] = field(default_factory=dict)  # kind -> whether its units have squares
    unavailable: dict[str, str] = field(default_factory=dict)
    norms: str = ""

    @classmethod
    def none(cls, why: str) -> "LensDescription":
        """A network without a lens, and why."""
        return cls(unavailable={"lens": why})

    def why_not(self, capability: str) -> str | None:
        return self.unavailable.get(capability)

    def to_json(self) -> dict:
        """The JSON the site answers ``GET .../lens/`` with and stores on the network's row."""
        if "lens" in self.unavailable:
            return {"unavailable": dict(self.unavailable), "version": VERSION}
        return {"version": VERSION, "family": self.family, "readouts": list(self.readouts),
                "units": {name: {"layers": u.layers, "per_layer": u.per_layer, "what": u.what}
                          for name, u in self.units.items()},
                "neurons": {name: {"squares": squares} for name, squares in self.neurons.items()},
                "unavailable": dict(self.unavailable), "norms": self.norms}

    @staticmethod
    def is_current(data: dict | None) -> bool:
        """Whether a stored description (``to_json``) was made by this version (one before has no ``version``)."""
        return bool(data) and data.get("version", 1) >= VERSION

    @classmethod
    def from_json(cls, data: dict) -> "LensDescription":
        units = {name: UnitShape(u["layers"], u["per_layer"], u.get("what", "")) for name, u in
                 (data.get("units") or {}).items()}
        neurons = {name: bool(n["squares"]) for name, n in (data.get("neurons") or {}).items()}
        return cls(data.get("family", ""), tuple(data.get("readouts") or ()), units, neurons,
                   dict(data.get("unavailable") or {}), data.get("norms", ""))


def describe_adapter(adapter: "LensAdapter") -> LensDescription:
    """The description of a network's lens adapter (its neurons tried on the start position)."""
    from analysis.models.lens import CAPABILITIES

    units = {name: UnitShape(u.layers, u.per_layer, u.what) for name, u in adapter.units.items()}
    lacks = {cap: adapter.why_not(cap) for cap in CAPABILITIES if adapter.why_not(cap)}
    neurons, why = neuron_kinds(adapter)
    if why:
        lacks["neurons"] = why
    return LensDescription(adapter.family, tuple(adapter.readouts), units, neurons, lacks, adapter.norm_note)


def describe_model(model: "torch.nn.Module", encoding=None) -> LensDescription:
    """The description of a loaded network's lens, or the family's reason it has none."""
    from analysis.lens import lens_for

    try:
        return describe_adapter(lens_for(model, encoding))
    except LensUnavailable as exc:
        return LensDescription.none(str(exc))


def neuron_kinds(adapter: "LensAdapter") -> tuple[dict[str, bool], str | None]:
    """{kind: whether its units have squares} for each unit kind whose activations the adapter
    reads (tried on the start position), and the family's reason when there is none."""
    import chess
    import torch

    kinds, why = {}, {}
    prepared = [adapter.prepare(chess.Board())]
    for name in adapter.units:
        try:
            with torch.no_grad():
                acts = adapter.activations(prepared, name, 0)
        except ValueError as exc:
            why[name] = str(exc)
            continue
        kinds[name] = acts.shape[1] == 64
    if kinds:
        return kinds, None
    fallback = f"a {adapter.family} network has no units with activations"
    return kinds, why.get("mlp") or next(iter(why.values()), fallback)
