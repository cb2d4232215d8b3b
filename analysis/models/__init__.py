"""Model families. Each family module exposes FAMILY, INPUT_ENCODING, a config
dataclass, PRESETS, ``build(config_dict)`` and ``make_evaluator(model, ...)``.

Checkpoints name their family; ``family_module(name)`` finds its module.
"""

from __future__ import annotations

import importlib
from types import ModuleType

# family name -> module under analysis.models
FAMILIES: dict[str, str] = {
    "chessformer": "analysis.models.chessformer",
}


def family_module(name: str) -> ModuleType:
    try:
        return importlib.import_module(FAMILIES[name])
    except KeyError:
        raise ValueError(f"unknown model family {name!r}; known: {', '.join(sorted(FAMILIES))}") from None
