"""The studies' torch-free catalogue (``analysis.studies.catalogue``) says what the methods say: the
same titles, settings and defaults, and the same why-not from a network's stored lens description as
the method gives from the live adapter; and ``run_study`` brings the ``games`` miner with it."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest

from analysis.lens.description import LensDescription, describe_adapter
from analysis.studies import StudyInputError, catalogue, methods
from analysis.studies.networks import load_network
from analysis.studies.spec import parse_settings

ROOT = Path(__file__).resolve().parent.parent


def _fields(kind: type) -> list[tuple]:
    return [(f.name, f.type, f.default) for f in dataclasses.fields(kind)]


@pytest.mark.parametrize("name", methods.names())
def test_each_method_s_title_and_settings_are_the_catalogue_s(name):
    method, about = methods.get(name), catalogue.get_about(name)
    assert method.title == about.title
    assert _fields(method.settings) == _fields(about.settings)
    assert about.takes_sparring == ("sparring" in {f.name for f in dataclasses.fields(method.settings)})


def test_the_catalogue_names_every_method_and_refuses_others():
    assert catalogue.names() == methods.names()
    with pytest.raises(StudyInputError, match="unknown study method 'astrology'"):
        catalogue.get_about("astrology")


@pytest.mark.parametrize("network", ["tiny", "giraffe", "maia-1100"])
def test_why_not_from_the_stored_description_is_the_live_adapter_s(network, tiny_checkpoint):
    """A transformer (every capability), giraffe (no squares to patch) and an lc0 ResNet (no heads)."""
    _, adapter, why = load_network(str(tiny_checkpoint) if network == "tiny" else network)
    stored = LensDescription.from_json(describe_adapter(adapter).to_json())  # what the site keeps
    answers = {name: methods.get(name).why_not(adapter) for name in methods.names()}
    assert {name: catalogue.get_about(name).why_not(stored) for name in methods.names()} == answers
    if network == "maia-1100":
        assert answers["heads"] and not answers["lookahead"]


def test_a_submission_s_settings_are_checked_against_the_catalogue():
    about = catalogue.get_about("probe")
    assert parse_settings(about.settings, {"rank": 8}, "probe").rank == 8
    with pytest.raises(StudyInputError, match="rule kept needs a sparring network"):
        parse_settings(about.settings, {"rule": "kept"}, "probe")
    with pytest.raises(StudyInputError, match="has no setting 'astrology'"):
        parse_settings(catalogue.get_about("lookahead").settings, {"astrology": 1}, "lookahead")


def test_run_study_brings_the_games_miner_whichever_method_runs():
    """A fresh interpreter that imports ``run_study`` alone (no method, no mining) can mine games."""
    code = ("from analysis.studies import run_study\nfrom analysis.studies.positions import miner_for\n"
            "print(miner_for('games') is not None)")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "True", done.stderr[-2000:]


def test_the_catalogue_loads_without_torch():
    code = ("import sys\nfrom analysis.studies import catalogue, StudySpec\ncatalogue.get_about('heads').defaults()\n"
            "print('torch' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "False", done.stderr[-2000:]
