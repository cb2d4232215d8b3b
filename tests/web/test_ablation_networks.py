"""The ablations' variants on the site (issue 32): registered as ``<ablation>-<variant>`` and checked by a
worker, never the default, grouped after the shipped networks in the home picker; one section per
ablation on the networks page with each variant's figures from its store; their weights downloadable."""

from __future__ import annotations

import re
import shutil

import pytest

from tests.web.ablation_stores import ABLATIONS, results, write_configs, write_variant
from webapp.networks import picker
from webapp.networks.figures import default_rank
from webapp.networks.models import Network

CF_TITLE, CB_TITLE = ABLATIONS["cf-position"][0], ABLATIONS["cb-targets"][0]


def _no_value(measured: dict) -> dict:
    return {k: v for k, v in measured.items() if k not in ("value_quality", "value_sanity")}


@pytest.fixture
def stores(tmp_path, settings):
    """cf-position: shaw measured, relative_bias measured and very weak (1% of the puzzles), absolute
    trained but not measured; cb-targets: av-positions and bc-positions (no value head) measured,
    av-compute not trained."""
    weights = tmp_path / "weights"
    write_configs(tmp_path / "configs", tmp_path)
    write_variant(weights, "cf-position", "shaw", results("shaw", "policy", solved=300, sts=1234), seed=1)
    write_variant(weights, "cf-position", "relative_bias", results("relative_bias", "policy", solved=10, sts=900),
                  seed=2)
    write_variant(weights, "cf-position", "absolute", None, seed=3)
    write_variant(weights, "cb-targets", "av-positions", results("av-positions", "value", solved=120, sts=2000), seed=4)
    write_variant(weights, "cb-targets", "bc-positions",
                  _no_value(results("bc-positions", "policy", solved=80, sts=1500)), seed=5)
    settings.SIGHTLINE_WEIGHTS_DIR, settings.SIGHTLINE_ABLATIONS_DIR = weights, tmp_path / "configs"
    return weights


@pytest.fixture
def queued(monkeypatch):
    """The tasks ``register_variants`` queues (no broker here): [(name, args, queue)]."""
    sent = []
    monkeypatch.setattr("workers.dispatch.send_task", lambda name, args, queue, task_id=None: sent.append(
        (name, args, queue)))
    return sent


def _shipped(weights, tiny_checkpoint):
    """A trained top-level network without figures: the rule ranks every measured variant above it."""
    from analysis.checkpoint import load_checkpoint, save_checkpoint

    model, _ = load_checkpoint(tiny_checkpoint)
    save_checkpoint(weights / "cf-tiny.safetensors", model, trained=True, provenance={"source": "tests"})


def _section(html: str, name: str) -> str:
    start = html.index(f'id="ablation-{name}"')
    return html[start:html.index("</section>", start)]


def _row(html: str, ablation: str, variant: str) -> str:
    start = html.index(f'id="variant-{ablation}-{variant}"')
    return html[start:html.index("</tr>", start)]


@pytest.mark.django_db
def test_variants_are_registered_by_name_checked_by_a_worker_and_never_default(
        stores, queued, tiny_checkpoint, tmp_path, client, material_network, settings):
    from webapp.networks.registry import check_network
    from webapp.networks.shipped import register_shipped, register_variants

    _shipped(stores, tiny_checkpoint)
    register_shipped(stores, tmp_path / "var")
    variants = register_variants(stores)
    names = ["cb-targets-av-positions", "cb-targets-bc-positions", "cf-position-absolute",
             "cf-position-relative_bias", "cf-position-shaw"]
    assert [n.name for n in variants] == names
    assert all(n.status == Network.Status.CHECKING and not n.is_default for n in variants)
    assert [(name, queue) for name, _, queue in queued] == [("sightline.check_variant", settings.SIGHTLINE_BACKGROUND_QUEUE)] * 5
    assert Network.objects.get(name="cf-position-shaw").card.startswith("# cf-position / shaw")
    for _, (pk,), _ in queued:  # the worker's part
        assert check_network(pk) == Network.Status.READY

    queued.clear()  # the next start: nothing checked again, and the default is still the shipped one
    register_shipped(stores, tmp_path / "var")
    assert [n.name for n in register_variants(stores)] == names and queued == []
    ready = list(Network.objects.filter(kind=Network.Kind.CHECKPOINT))
    assert min(ready, key=default_rank).name == "cf-position-shaw"  # the rule would pick it, were it asked
    assert Network.objects.get(is_default=True).name == "cf-tiny"
    assert Network.objects.get(name="cf-position-shaw").metrics["puzzles_policy"]["solved"] == 300

    home = client.get("/").content.decode()
    select = home[home.index('id="id_network"'):home.index("</select>")]
    options = re.findall(r'<option value="([\w-]+)"', select)
    assert options[:2] == ["cf-tiny", "material"] and 'value="cf-tiny" data-search' in select
    assert re.search(r'value="cf-tiny"[^>]*selected', select)
    groups = re.findall(r'<optgroup label="([^"]+)">', select)
    assert groups == [picker.TAKING_APART, picker.OTHERS,  # cf-tiny (no match measured) and material first
                      f"Ablation variants: {CB_TITLE.replace(chr(39), '&#x27;')}",
                      f"Ablation variants: {CF_TITLE.replace(chr(39), '&#x27;')}"]
    assert options[2:] == ["cb-targets-av-positions", "cb-targets-bc-positions", "cf-position-shaw",
                           "cf-position-relative_bias", "cf-position-absolute"]  # each in its config's order


@pytest.mark.django_db
def test_a_variant_whose_file_is_removed_is_no_longer_offered_until_it_comes_back(stores, queued, client,
                                                                                 material_network):
    from webapp.networks.registry import check_network
    from webapp.networks.shipped import register_variants

    register_variants(stores)
    for _, (pk,), _ in queued:  # the worker's checks: every variant ready, so offered
        check_network(pk)
    shaw = stores / "ablations" / "cf-position" / "shaw.safetensors"
    kept = shaw.with_name("shaw.kept")
    shaw.rename(kept)
    register_variants(stores)  # the next start
    row = Network.objects.get(name="cf-position-shaw")
    assert not row.active and row.file  # kept for its jobs, with the site's copy of the file
    assert row.retired == "its file is gone from its ablation's store"
    home = client.get("/").content.decode()
    assert 'value="cf-position-shaw"' not in home and 'value="cf-position-absolute"' in home
    kept.rename(shaw)
    register_variants(stores)
    assert Network.objects.get(name="cf-position-shaw").active and Network.objects.get(name="cf-position-shaw").retired == ""


@pytest.mark.django_db
def test_a_retrained_variant_takes_its_name_and_a_clash_is_skipped(stores, queued, tiny_checkpoint):
    from webapp.networks.shipped import register_variants

    register_variants(stores)
    first = Network.objects.get(name="cf-position-shaw")
    write_variant(stores, "cf-position", "shaw", None, seed=9)  # trained again: a new file
    shutil.copy(stores / "ablations" / "cf-position" / "absolute.safetensors",
                stores / "ablations" / "cf-position" / "copy.safetensors")  # the same file as another variant
    names = [n.name for n in register_variants(stores)]
    assert "cf-position-copy" not in names and not Network.objects.filter(name="cf-position-copy").exists()
    first.refresh_from_db()
    assert first.name.startswith("cf-position-shaw@") and not first.active
    assert Network.objects.get(name="cf-position-shaw").checksum != first.checksum


@pytest.mark.django_db
def test_networks_page_shows_each_ablation_with_its_variants_figures(stores, client, material_network):
    html = client.get("/networks/").content.decode()
    assert html.index('id="ablation-cb-targets"') < html.index('id="ablation-cf-position"')
    cf = _section(html, "cf-position")
    assert CF_TITLE.replace("'", "&#x27;") in cf and "cf-tiny three times." in cf
    assert [m for m in re.findall(r'id="variant-cf-position-([\w-]+)"', cf)] == ["shaw", "relative_bias", "absolute"]
    shaw = _row(html, "cf-position", "shaw")
    for text in ("position = shaw", "6 steps x 16, 0.5 min", "30.0% (300 of 1,000)", "1,234 of 15,000",
                 "28.0% (n=2,908)", "0.125", "MAE 0.200, ECE 0.050", "sanity 2/2 checks", "1 of 4 heads labelled"):
        assert text in shaw, text
    assert "not measured" not in shaw and "very weak" not in shaw
    weak = _row(html, "cf-position", "relative_bias")
    assert 'class="very-weak' in weak and "very weak</span>" in weak and "1.0% (10 of 1,000)" in weak
    assert "sanity 1/2 checks" in weak
    bc = _row(html, "cb-targets", "bc-positions")
    assert "no value head" in bc and "8.0% (80 of 1,000)" in bc and "head = behavioural_cloning; positions: 6 x 16" in bc
    # Variants are compared in their sections, not in the main table.
    main = html[:html.index('id="ablation-')]
    assert 'id="net-material"' in main and "net-cf-position" not in main


@pytest.mark.django_db
def test_unmeasured_and_untrained_variants_show_no_figures(stores, client, material_network):
    html = client.get("/networks/").content.decode()
    absolute = _row(html, "cf-position", "absolute")
    assert "6 steps x 16" in absolute
    assert absolute.count("not measured") == 6 and "%" not in absolute and "of 15,000" not in absolute
    untrained = _row(html, "cb-targets", "av-compute")
    assert "not trained yet" in untrained and "steps" not in untrained and "not registered" in untrained


@pytest.mark.django_db
def test_a_broken_store_file_marks_its_variant_unreadable_and_logs_it(stores, client, material_network, caplog):
    (stores / "ablations" / "cf-position" / "shaw" / "sts.json").write_text("{not json")
    (stores / "ablations" / "cb-targets" / "av-positions.history.json").write_text("[")
    export = stores / "ablations" / "cb-targets" / "bc-positions.safetensors"
    export.write_bytes(export.read_bytes()[:100])  # cut short
    response = client.get("/networks/")
    assert response.status_code == 200
    html = response.content.decode()
    for ablation, variant, error in (("cf-position", "shaw", "JSONDecodeError"),
                                     ("cb-targets", "av-positions", "JSONDecodeError"),
                                     ("cb-targets", "bc-positions", "Error")):
        row = _row(html, ablation, variant)
        assert "unreadable" in row and error in row and "%" not in row and str(stores) not in row
        assert f"variant {variant}: its store" in caplog.text
    assert "30.0%" not in html and "1.0% (10 of 1,000)" in _row(html, "cf-position", "relative_bias")


@pytest.mark.django_db
def test_an_unreadable_ablation_config_is_left_out_and_logged(stores, client, material_network, caplog, settings):
    (settings.SIGHTLINE_ABLATIONS_DIR / "cb-targets.toml").write_text('name = "cb-targets"\n')
    html = client.get("/networks/").content.decode()
    assert 'id="ablation-cf-position"' in html and 'id="ablation-cb-targets"' not in html
    assert "cb-targets.toml cannot be read" in caplog.text


@pytest.mark.django_db
def test_weights_download_serves_only_registered_networks_files(stores, queued, client, material_network):
    from webapp.networks.registry import check_network
    from webapp.networks.shipped import register_variants

    shaw = next(n for n in register_variants(stores) if n.name == "cf-position-shaw")
    assert client.get("/networks/cf-position-shaw/weights").status_code == 404  # not checked yet
    check_network(shaw.pk)
    response = client.get("/networks/cf-position-shaw/weights")
    assert response.status_code == 200
    assert response["Content-Disposition"] == 'attachment; filename="cf-position-shaw.safetensors"'
    assert b"".join(response.streaming_content) == (stores / "ablations" / "cf-position" / "shaw.safetensors").read_bytes()
    html = client.get("/networks/").content.decode()
    assert 'href="/networks/cf-position-shaw/weights"' in _row(html, "cf-position", "shaw")
    for path in ("/networks/no-such-net/weights", "/networks/material/weights",  # unknown; no file
                 "/networks/..%2F..%2Fsettings/weights", "/networks/cf-position/shaw/weights"):
        assert client.get(path).status_code == 404, path
