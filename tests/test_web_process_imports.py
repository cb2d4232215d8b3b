"""The web process never loads torch (issue 37 item 1: serve's first answer within 10 s on a warm
install): importing torch costs seconds on this machine, and only the workers compute with it.
A fresh interpreter imports what the web server serves (settings, every URL's view, the ASGI app
and the ``serve`` command) and reports which of torch's importers, if any, ran."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

PROBE = """
import os, sys, traceback
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "webapp.settings")

class TorchWatch:
    def find_spec(self, name, path=None, target=None):
        if name == "torch":
            chain = [f"{f.filename}:{f.lineno}" for f in traceback.extract_stack() if f.filename.startswith(os.getcwd())]
            print("torch imported via " + " <- ".join(reversed(chain[1:])))
            sys.exit(1)

sys.meta_path.insert(0, TorchWatch())
import django
django.setup()
import webapp.asgi, webapp.site.management.commands.serve
from django.urls import get_resolver
get_resolver()._populate()
print("views", len(get_resolver().reverse_dict))
"""


def test_the_web_process_serves_without_importing_torch():
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr[-2000:]
    assert done.stdout.startswith("views ") and int(done.stdout.split()[1]) > 20


WATCH = PROBE.split("import django")[0].replace("sys.meta_path.insert(0, TorchWatch())", "")
PAGES = WATCH + """
import django
django.setup()
from django.core.management import call_command
call_command("migrate", interactive=False, verbosity=0)  # serve's work (a data migration reads checkpoints)
from webapp.networks.models import Network
from webapp.networks.registry import ensure_material_network
ensure_material_network()
for i, family in enumerate(["giraffe", "lc0-resnet", "lc0-attention", "chessformer", "chessbench", "alphagateau"]):
    Network.objects.create(name=f"net-{family}", family=family, checksum=f"{i:064d}", status=Network.Status.READY,
                           trained=True, capabilities={"policy": True, "value": True, "wdl": False,
                                                        "action_values": False, "attention": None})
for name in [m for m in sys.modules if m == "torch" or m.startswith(("torch.", "analysis.models."))]:
    del sys.modules[name]  # what migrate loaded: the web server's process starts without it
sys.meta_path.insert(0, TorchWatch())
from django.test import Client
client = Client(HTTP_HOST="127.0.0.1")
for url in ["/", "/networks/net-giraffe/", "/api/networks/", "/api/"]:
    status = client.get(url).status_code
    print(url, status)
    assert status == 200, url
print("pages ok")
"""


def test_the_pages_that_name_networks_read_their_families_without_torch(tmp_path):
    """The home form, a network's page and the API say each family's default search, shown value and
    reasons (``analysis.models.get_about``) without loading a family's model code. (The networks list
    loads it: its ablation sections read the variants' training configs.)"""
    env = {**os.environ, "SIGHTLINE_VAR_DIR": str(tmp_path), "DJANGO_SETTINGS_MODULE": "webapp.settings"}
    env.pop("DATABASE_URL", None)
    done = subprocess.run([sys.executable, "-c", PAGES], cwd=ROOT, capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0 and "pages ok" in done.stdout, done.stdout + done.stderr[-3000:]


LAB = PAGES.split("from django.test import Client")[0].replace(
    'capabilities={"policy": True',
    'lens_description={"version": 2, "family": family, "readouts": ["embedding", "layer 0"], "unavailable": '
    '{"head_patch": "no heads"} if family == "giraffe" else {}}, file=f"networks/{family}.safetensors", '
    'capabilities={"policy": True') + """
from django.test import Client
from webapp.studies.models import Study, StudyItem
from webapp.probes.models import ConceptAtlas
network = Network.objects.get(name="net-lc0-attention")
figure = {"name": "drops", "title": "Drops", "x": ["embedding", "layer 0"], "ylabel": "drop",
          "series": [{"label": "1st-move target", "y": [0.1, 0.3], "low": [0.0, 0.2], "high": [0.2, 0.4]}]}
study = Study.objects.create(network=network, method="lookahead", source_kind="fens", source_text="8/8/8/8/8/8/8/K6k w - - 0 1",
                             positions=[["0", "8/8/8/8/8/8/8/K6k w - - 0 1"]], status=Study.Status.DONE, done=1, total=1,
                             result={"summary": {"table": [{"point": "layer 0", "drop": [0.3, 0.2, 0.4]}], "figures": [figure]}})
StudyItem.objects.create(study=study, index=0, result={"kept": True, "drop": 0.3})
running = Study.objects.create(network=network, method="forgotten", source_kind="fens", status=Study.Status.RUNNING, total=4)
ConceptAtlas.objects.create(network=network)
from webapp.probes.atlas import VERSION
Network.objects.filter(name="net-chessformer").update(input_encoding="lc0/INPUT_CLASSICAL_112_PLANE")
ConceptAtlas.objects.create(network=Network.objects.get(name="net-chessformer"), status=ConceptAtlas.Status.READY,
                            data={"version": VERSION, "stamp": "s0"})
start = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
client = Client(HTTP_HOST="127.0.0.1")
urls = {"/studies/": 200, f"/studies/{study.pk}/": 200, f"/studies/{study.pk}/state/": 200,
        f"/studies/{running.pk}/state/": 202, f"/studies/{study.pk}/export.json": 200,
        f"/studies/{study.pk}/export.csv": 200, f"/api/studies/{study.pk}/": 200,
        f"/api/studies/{study.pk}/items/": 200, f"/api/studies/{study.pk}/export.json": 200,
        f"/api/studies/{study.pk}/export.csv": 200, "/networks/net-lc0-attention/concepts/": 200,
        "/networks/net-giraffe/concepts/": 200, "/api/networks/net-lc0-attention/concepts/": 202,
        f"/api/networks/net-lc0-attention/concepts/position/?fen={start}": 409,  # the Concepts panel, no atlas yet
        f"/api/networks/net-chessformer/concepts/position/?fen={start}": 503}  # queued, and no broker here
for url, expected in urls.items():
    status = client.get(url).status_code
    print(url, status)
    assert status == expected, (url, status)
page = client.get("/studies/").content.decode()
assert "no heads" in page, "the heads method's why-not, read from the stored description"
for method, settings, expected in [("knowing_doing", '{"astrology": 1}', "has no setting"),
                                   ("heads", "{}", "no heads"), ("lookahead", "{}", "sparring"),
                                   ("knowing_doing", "{}", "queue")]:  # valid, read, then no broker here
    answer = client.post("/studies/", {"network": "net-giraffe" if method == "heads" else "net-lc0-attention",
                                       "method": method, "kind": "fens", "text": "8/8/8/8/8/8/8/K6k w - - 0 1",
                                       "limit": 5, "seed": 0, "settings": settings})
    print("POST", method, answer.status_code)
    body = answer.content.decode()
    assert answer.status_code in (400, 422, 503) and expected in body, (method, body[body.find("<form"):][:1500])
print("lab ok")
"""


def test_the_studies_and_concepts_pages_and_their_api_serve_without_torch(tmp_path):
    """The lab's list (every method's why-not per network, from the stored lens descriptions), a
    study's page, its state, its JSON and CSV exports, the same through the API, a submission refused
    for its settings, its network or its missing sparring net, and the concept atlas's page and API:
    none loads torch (``analysis.studies.catalogue``; ``run_study`` and the methods load in the worker)."""
    env = {**os.environ, "SIGHTLINE_VAR_DIR": str(tmp_path), "DJANGO_SETTINGS_MODULE": "webapp.settings"}
    env.pop("DATABASE_URL", None)
    done = subprocess.run([sys.executable, "-c", LAB], cwd=ROOT, capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0 and "lab ok" in done.stdout, done.stdout + done.stderr[-3000:]
