"""The lab is reachable: the top bar's Studies link, the networks' links, and the admin's read-only
list of studies (status and network; nothing added or edited there)."""

from __future__ import annotations

from webapp.studies.models import Study


def test_the_top_bar_and_the_networks_link_to_the_lab(client, tiny_network):
    for url in ["/", "/networks/", f"/networks/{tiny_network.name}/concepts/"]:
        page = client.get(url).content.decode()
        assert 'id="studies-link" href="/studies/"' in page, url
    assert '<a href="/studies/">studies</a>' in client.get("/networks/").content.decode()


def test_the_admin_lists_studies_read_only(admin_client, tiny_network):
    study = Study.objects.create(network=tiny_network, method="forgotten", source_kind="fens", total=4,
                                 status=Study.Status.FAILED, error="no Stockfish")
    listing = admin_client.get("/admin/studies/study/")
    page = listing.content.decode()
    assert listing.status_code == 200 and str(study.pk) in page and tiny_network.name in page and "failed" in page
    assert admin_client.get("/admin/studies/study/add/").status_code == 403
    shown = admin_client.get(f"/admin/studies/study/{study.pk}/change/")
    assert shown.status_code == 200 and 'name="_save"' not in shown.content.decode()
