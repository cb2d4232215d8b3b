"""Studies: a method measured over a set of positions, with intervals and controls (issue 38).

No Django here. A study is a ``StudySpec`` (method, network, ``PositionSource``, settings, seed);
``run_study`` reads the positions, measures each item with the method (``methods`` registry) and
summarises them (a table of interval cells, figures). ``export`` writes JSON, CSV, PNG and SVG.
Bad input is a ``StudyInputError`` (one line); a stop asked for between items is ``StudyStopped``.
"""

from analysis.studies.errors import StudyInputError, StudyStopped
from analysis.studies.positions import Item, PositionSource, read_positions
from analysis.studies.run import code_version, run_study
from analysis.studies.spec import StudySpec

__all__ = ["Item", "PositionSource", "StudyInputError", "StudySpec", "StudyStopped", "code_version",
           "read_positions", "run_study"]
