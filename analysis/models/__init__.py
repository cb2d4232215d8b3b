"""Model families, one package each, registered by name.

Each family's package has a ``family`` module whose ``FAMILY`` is a
``ModelFamily`` (see ``analysis.models.family``). Checkpoints name their
family; ``get_family(name)`` finds it. Registering a family is one line here.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from analysis.models.family import ModelFamily

# family name -> module holding FAMILY
FAMILIES: dict[str, str] = {
    "chessformer": "analysis.models.chessformer.family",
}
# The family of the site's untrained stand-in and of ``init`` / training by default.
DEFAULT_FAMILY = "chessformer"


def get_family(name: str) -> "ModelFamily":
    """The registered family ``name`` (ValueError naming the known ones otherwise)."""
    try:
        module = FAMILIES[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown model family {name!r}; known: {', '.join(sorted(FAMILIES))}") from None
    return importlib.import_module(module).FAMILY
