"""The web process never loads torch (issue 37 item 1: serve's first answer within 10 s on a warm
install): importing torch costs seconds on this machine, and only the workers compute with it.
A fresh interpreter imports what the web server serves (settings, every URL's view, the ASGI app
and the ``serve`` command) and reports which of torch's importers, if any, ran."""

from __future__ import annotations

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
