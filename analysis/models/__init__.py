"""Model families, one package each, registered by name.

Each family's package has a ``family`` module whose ``FAMILY`` is a
``ModelFamily`` (see ``analysis.models.family``). Checkpoints name their
family; ``get_family(name)`` finds it. Registering a family is one line here.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from analysis.models.about import FamilyAbout
    from analysis.models.family import Importer, ModelFamily

# family name -> module holding FAMILY (or "module:NAME" for a module that defines several)
FAMILIES: dict[str, str] = {
    "chessformer": "analysis.models.chessformer.family",
    "lc0-resnet": "analysis.models.lc0.family:RESNET_FAMILY",
    "lc0-attention": "analysis.models.lc0.family:ATTENTION_FAMILY",
    "chessbench": "analysis.models.chessbench.family",
    "giraffe": "analysis.models.giraffe.family",
    "alphagateau": "analysis.models.alphagateau.family",
}
# Other programs' network files the families read: importer name -> file-name endings. Declared
# here so the CLI's --help lists them without importing the families (and torch); a test checks
# that it is exactly what the families' importers say.
IMPORTERS: dict[str, tuple[str, ...]] = {"lc0": (".pb.gz", ".pb")}
# Where a family says more than ``analysis.models.about.PLAIN`` of its networks, the torch-free module
# holding its ``FamilyAbout`` ("module:NAME"); the web process reads it without importing the family.
ABOUTS: dict[str, str] = {
    "giraffe": "analysis.models.giraffe.about:ABOUT",
    "lc0-resnet": "analysis.models.lc0.about:RESNET_ABOUT",
    "lc0-attention": "analysis.models.lc0.about:ATTENTION_ABOUT",
}
# The family of the site's untrained stand-in and of ``init`` / training by default.
DEFAULT_FAMILY = "chessformer"


def get_family(name: str) -> "ModelFamily":
    """The registered family ``name`` (ValueError naming the known ones otherwise)."""
    try:
        module = FAMILIES[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown model family {name!r}; known: {', '.join(sorted(FAMILIES))}") from None
    module, _, attribute = module.partition(":")
    return getattr(importlib.import_module(module), attribute or "FAMILY")


def get_about(name: str) -> "FamilyAbout":
    """What the site says of family ``name``'s networks, without importing the family (or torch);
    ValueError for a family that is not registered."""
    from analysis.models.about import PLAIN

    if name not in FAMILIES:
        raise ValueError(f"unknown model family {name!r}; known: {', '.join(sorted(FAMILIES))}")
    if name not in ABOUTS:
        return PLAIN
    module, _, attribute = ABOUTS[name].partition(":")
    return getattr(importlib.import_module(module), attribute)


def load_families() -> list["ModelFamily"]:
    """Every registered family."""
    return [get_family(name) for name in FAMILIES]


def importer_for(path) -> "Importer | None":
    """The importer of a family that reads ``path``'s kind of file (another program's network), if any."""
    for family in load_families():
        if family.importer is not None and family.importer.reads(path):
            return family.importer
    return None
