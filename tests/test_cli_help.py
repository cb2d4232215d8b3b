"""The command line answers --help without importing torch (nor numpy, numba, pyarrow or python-chess):
each command imports what it runs. Checked in a fresh interpreter's ``sys.modules``, not by timing."""

import json
import subprocess
import sys

from tests.conftest import ROOT

HEAVY = ("torch", "numpy", "numba", "pyarrow", "chess")

# Every command's --help in one fresh interpreter; then which heavy modules got imported.
PROBE = """
import contextlib, io, json, sys
from analysis.cli import build_parser, main
commands = sorted(build_parser()._subparsers._group_actions[0].choices)
for argv in [["--help"]] + [[name, "--help"] for name in commands]:
    with contextlib.redirect_stdout(io.StringIO()):
        try:
            main(argv)
        except SystemExit as exc:
            assert exc.code == 0, (argv, exc.code)
print(json.dumps({"commands": commands, "heavy": [m for m in %r if m in sys.modules]}))
""" % (HEAVY,)


def test_every_commands_help_imports_nothing_heavy():
    result = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    probe = json.loads(result.stdout)
    assert {"init", "describe", "evaluate", "search", "uci", "heads", "import-lc0"} <= set(probe["commands"])
    assert probe["heavy"] == []


def test_declared_importers_match_the_real_ones():
    from analysis.models import IMPORTERS, load_families

    declared = {name: tuple(endings) for name, endings in IMPORTERS.items()}
    found = {f.importer.name: tuple(f.importer.suffixes) for f in load_families() if f.importer is not None}
    assert declared == found
