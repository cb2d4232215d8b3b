"""The lens: take a network apart (logit lens, unit ablation and steering, causal grids, attribution).

No Django here. Every family plugs in through ``ModelFamily.lens`` (an ``analysis.models.lens.
LensAdapter``, built in the family's own package); this package names no family.

- ``lens_for(model)``: the network's adapter, or ``LensUnavailable`` with the family's reason.
- ``LensError``: bad input (unknown readout, layer, unit or move, an illegal move, a scale out
  of range, a capability the network lacks); the CLI and the API answer it with one message,
  nothing computed.
- The contract the CLI and the site share: ``description.LensDescription`` (what the lens can do
  on a network, JSON the site stores at check time), ``requests`` (one checked request per
  quantity, one JSON form), ``answers`` (each request's answer, one JSON shape) and ``checks``
  (every input check and its sentence, written once).

The adapters register forward hooks on the network for the length of one call: a worker that
shares a loaded network between threads must not run it elsewhere during a lens call (hold the
network's lock, or give the lens its own copy).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch

    from analysis.models.lens import LensAdapter

__all__ = ["LensError", "LensMismatch", "LensUnavailable", "MAX_SCALE", "lens_for"]

# Steering scales the lens accepts: 0 removes a unit's write, 1 is clean, 2 doubles, -1 flips.
MAX_SCALE = 4.0


class LensError(ValueError):
    """A lens request that cannot be answered as asked (the message says why)."""


class LensMismatch(LensError):
    """A well-formed request that does not fit this network or position (a layer or unit it does not
    have, an illegal move, an unreadable FEN): the site answers 422, keeping 400 for a request that
    breaks the API's published contract (its schema)."""


class LensUnavailable(LensMismatch):
    """The network's family has no lens (or lacks the capability asked for)."""


def lens_for(model: "torch.nn.Module", encoding=None) -> "LensAdapter":
    """The lens adapter of ``model``'s family (``LensUnavailable`` with the family's reason).
    ``encoding``: its ``Encoding`` or encoding name (default: the family's first)."""
    from analysis.encoding import get_encoding
    from analysis.models import get_family

    family = get_family(model.family)
    if family.lens is None:
        reason = family.no_lens_reason or f"the {family.name} family has no lens yet"
        raise LensUnavailable(reason)
    if encoding is None or isinstance(encoding, str):
        encoding = get_encoding(encoding or family.encodings[0])
    return family.lens(model, encoding)
