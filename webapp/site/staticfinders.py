"""Serve single files from installed pip packages as static files.

plotly ships ``plotly.min.js`` inside its wheel next to unrelated data sets;
this finder exposes that one file (and nothing else from the package) under
``vendor/``, so no third-party code is committed and collectstatic still works.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

from django.contrib.staticfiles.finders import BaseFinder
from django.core.checks import Error
from django.core.files.storage import FileSystemStorage

# static path -> (package, path inside the package)
PACKAGE_FILES = {
    "vendor/plotly.min.js": ("plotly", "package_data/plotly.min.js"),
}


def package_file(package: str, relative: str) -> Path | None:
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / relative
    return path if path.is_file() else None


class _SingleFileStorage(FileSystemStorage):
    """A storage rooted at the file's folder that lists only that file."""

    def __init__(self, path: Path):
        super().__init__(location=str(path.parent))
        self._name = path.name

    def listdir(self, path):
        return [], [self._name] if path in ("", ".") else []


class PackageFileFinder(BaseFinder):
    def check(self, **kwargs):
        return [
            Error(f"static file {name}: package {pkg} lacks {rel}", id="sightline.E001")
            for name, (pkg, rel) in PACKAGE_FILES.items() if package_file(pkg, rel) is None
        ]

    def find(self, path, find_all=False, **kwargs):
        if path not in PACKAGE_FILES:
            return []
        found = package_file(*PACKAGE_FILES[path])
        if found is None:
            return []
        return [str(found)] if find_all else str(found)

    def list(self, ignore_patterns):
        for name, (pkg, rel) in PACKAGE_FILES.items():
            found = package_file(pkg, rel)
            if found is None:
                continue
            storage = _SingleFileStorage(found)
            storage.prefix = os.path.dirname(name)
            yield found.name, storage
