"""Studies: a method measured over a set of positions, with intervals and controls (issue 38).

No Django here. A study is a ``StudySpec`` (method, network, ``PositionSource``, settings, seed);
``run_study`` reads the positions, measures each item with the method (``methods`` registry) and
summarises them (a table of interval cells, figures). ``export`` writes JSON, CSV, PNG and SVG.
Bad input is a ``StudyInputError`` (one line); a stop asked for between items is ``StudyStopped``.

``run_study`` and ``code_version`` load on first use (PEP 562): their module imports torch and
every method, and the web process imports this package for the torch-free ``catalogue``.
"""

from analysis.studies.errors import StudyInputError, StudyStopped
from analysis.studies.positions import Item, PositionSource, read_positions
from analysis.studies.spec import StudySpec

__all__ = ["Item", "PositionSource", "StudyInputError", "StudySpec", "StudyStopped", "code_version",
           "read_positions", "run_study"]

_LAZY = {"run_study": "analysis.studies.run", "code_version": "analysis.studies.run"}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'analysis.studies' has no attribute {name!r}")
