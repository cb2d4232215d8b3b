"""A Giraffe network on the site: it analyses with its family's probability-limited search unless
a user picks another, and its pages say why it has no attention explorer and no head atlas."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from io import StringIO

import pytest
import torch
from django.core.management import call_command

from tests.conftest import ROOT, _missing
from tests.web.conftest import SHORT_GAME

# The sentence only Giraffe's family gives (analysis/models/giraffe/family.py).
GIRAFFE_REASON = "plain multilayer perceptrons"


@pytest.fixture
def giraffe_network(db, tmp_path):
    from analysis.checkpoint import save_checkpoint
    from analysis.models import get_family
    from webapp.networks.registry import register_checkpoint

    family = get_family("giraffe")
    torch.manual_seed(0)
    path = save_checkpoint(tmp_path / "giraffe-tiny.safetensors", family.build(family.preset("giraffe-2015")),
                           trained=False)
    return register_checkpoint(path, "giraffe-test")


def _selected(body: str, select_id: str) -> str:
    """The value of the option rendered as selected in the <select> with this id."""
    select = re.search(rf'<select name="\w+" id="{select_id}"[^>]*>(.*?)</select>', body, re.S).group(1)
    return re.search(r'<option value="([^"]+)"[^>]*\bselected\b', select).group(1)


def test_the_network_reports_its_family_default_search_and_reason(giraffe_network, tiny_network, material_network):
    assert giraffe_network.family == "giraffe" and giraffe_network.caps.attention is None
    assert giraffe_network.default_search == "probability"
    assert GIRAFFE_REASON in giraffe_network.no_attention_reason
    # A family with attention, and the material baseline (no family), keep the site's defaults.
    assert tiny_network.default_search == "value" and tiny_network.no_attention_reason == ""
    assert material_network.default_search == "value" and material_network.no_attention_reason == ""


def test_the_home_form_preselects_the_default_networks_search(client, giraffe_network, tiny_network):
    body = client.get("/").content.decode()
    assert _selected(body, "id_network") == tiny_network.name and _selected(body, "id_search") == "value"
    # Every network option carries its default search, for the page to switch the search with it.
    assert f'<option value="{giraffe_network.name}" data-search="probability"' in body
    assert f'<option value="{tiny_network.name}" data-search="value"' in body

    giraffe_network.is_default, tiny_network.is_default = True, False
    giraffe_network.save(), tiny_network.save()
    body = client.get("/").content.decode()
    assert _selected(body, "id_network") == giraffe_network.name and _selected(body, "id_search") == "probability"


def test_a_users_search_is_kept_when_the_form_comes_back_with_an_error(client, giraffe_network):
    response = client.post("/", {"pgn": "1. e4 e5 2. Ke3", "network": giraffe_network.name, "search": "mcts"})
    assert response.status_code == 400
    assert _selected(response.content.decode(), "id_search") == "mcts"


def test_analyze_pgn_runs_the_networks_default_search_when_none_is_named(giraffe_network, tiny_network, tmp_path,
                                                                         monkeypatch):
    from webapp.jobs.management.commands import analyze_pgn

    searched = []

    class NoRun:  # the job as created is what this test is about, not the search itself
        def __init__(self, job, *args, **kwargs):
            searched.append((job.network.name, job.search, job.budget))
            self.job = job

        def run(self):
            self.job.status = "done"
            return self.job

    monkeypatch.setattr(analyze_pgn, "JobRun", NoRun)
    path = tmp_path / "game.pgn"
    path.write_text(SHORT_GAME)
    for name in (giraffe_network.name, tiny_network.name):
        call_command("analyze_pgn", str(path), "--network", name, "--json", stdout=StringIO())
    call_command("analyze_pgn", str(path), "--network", giraffe_network.name, "--search", "value", "--json",
                 stdout=StringIO())
    assert searched == [(giraffe_network.name, "probability", 200), (tiny_network.name, "value", 1),
                        (giraffe_network.name, "value", 1)]


def _job_page(client, network) -> str:
    from webapp.jobs.gameinput import parse_pgn
    from webapp.jobs.jobs import create_job

    job = create_job(parse_pgn(SHORT_GAME), network, network.default_search, 1, dispatch=False)
    return client.get(f"/jobs/{job.id}/").content.decode()


def test_a_giraffe_job_page_says_why_it_has_no_attention_explorer(client, giraffe_network):
    body = _job_page(client, giraffe_network)
    tab = re.search(r'<button id="explorer-open"[^>]*>', body).group(0)
    assert "disabled" in tab and 'aria-describedby="no-attention"' in tab
    note = re.search(r'<p class="muted small" id="no-attention">(.*?)</p>', body, re.S).group(1)
    assert GIRAFFE_REASON in note and "no attention" in note
    page = json.loads(re.search(r'<script id="page-data" type="application/json">(.*?)</script>', body, re.S).group(1))
    assert page["network"]["has_attention"] is False


def test_a_chessformer_job_page_has_its_explorer_and_no_such_note(client, tiny_network):
    body = _job_page(client, tiny_network)
    tab = re.search(r'<button id="explorer-open"[^>]*>', body).group(0)
    assert "disabled" not in tab
    assert 'id="no-attention"' not in body and GIRAFFE_REASON not in body


def test_the_material_job_page_falls_back_to_the_generic_note(client, material_network):
    body = _job_page(client, material_network)
    note = re.search(r'<p class="muted small" id="no-attention">(.*?)</p>', body, re.S).group(1)
    assert "material has no attention maps." in note


def test_the_head_atlas_page_gives_the_familys_reason(client, giraffe_network):
    body = client.get(f"/networks/{giraffe_network.name}/heads/").content.decode()
    assert GIRAFFE_REASON in body and "no head atlas" in body.lower()


def test_every_familys_default_search_is_one_the_site_offers():
    from analysis.models import load_families
    from webapp.jobs.searches import SEARCHES

    defaults = {family.name: family.about.default_search for family in load_families()}
    assert defaults["giraffe"] == "probability"
    assert all(name is None or name in SEARCHES for name in defaults.values())


# Stand-ins for the home form's elements (select, budget, unit), enough for home.js's wiring.
FAKE_FORM = """
class Select extends EventTarget {
  constructor(options) { super(); this.options = options; this.value = options[0].value; }
  get selectedOptions() { return this.options.filter((o) => o.value === this.value); }
}
const option = (value, dataset) => ({ value, dataset });
const network = new Select([option("cf", { search: "value" }), option("giraffe", { search: "probability" })]);
const search = new Select([option("value", { unit: "", min: "1", max: "1", default: "1" }),
                           option("probability", { unit: "nodes", min: "1", max: "20000", default: "200" })]);
const budget = { value: "" }, unit = { textContent: "" };
const elements = { "#id_network": network, "#id_search": search, "#id_budget": budget, "#budget-unit": unit };
const form = { querySelector: (selector) => elements[selector] };
"""


def test_choosing_a_network_chooses_its_search_and_that_searchs_budget():
    node = shutil.which("node")
    if node is None:
        _missing("node is not installed (apt-get install nodejs)")
    script = (f"import {{ wireBudget, wireSearchDefault }} from '{(ROOT / 'static/sightline/pages/home.js').as_uri()}';"
              + FAKE_FORM +
              "wireBudget(form); wireSearchDefault(form); const seen = [];"
              "const pick = (name) => { network.value = name; network.dispatchEvent(new Event('change'));"
              " seen.push([search.value, budget.value, budget.disabled]); };"
              "pick('giraffe'); budget.value = '900'; pick('cf'); pick('giraffe');"
              "console.log(JSON.stringify(seen));")
    out = subprocess.run([node, "--input-type=module", "-e", script], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == [["probability", "200", False], ["value", "", True], ["probability", "200", False]]
