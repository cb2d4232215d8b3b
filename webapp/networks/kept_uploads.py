"""A checked upload kept for the next try when the admin form is refused for another field.

Browsers never re-fill a file input (a page may not choose a file for its user), so a form sent
back with an error loses the file the user chose. A file that passed its own checks is kept
here instead, under MEDIA_ROOT, and the form carries a signed token naming it: sent again
without a new file, the form takes the kept one. Tokens expire after ``MAX_AGE_S``; files older
than that are removed whenever another is kept.
"""

from __future__ import annotations

import shutil
import time
import uuid
from pathlib import Path

from django.conf import settings
from django.core import signing
from django.core.files import File

MAX_AGE_S = 3600
SALT = "sightline.kept-upload"


def _root() -> Path:
    return Path(settings.MEDIA_ROOT) / "kept-uploads"


def keep(upload) -> str:
    """Copy ``upload`` aside; the signed token that recalls it."""
    _remove_expired()
    folder = _root() / uuid.uuid4().hex
    folder.mkdir(parents=True)
    name = Path(upload.name).name
    upload.seek(0)
    with (folder / name).open("wb") as out:
        for chunk in upload.chunks():
            out.write(chunk)
    upload.seek(0)
    return signing.dumps({"folder": folder.name, "name": name}, salt=SALT)


def recall(token: str) -> File | None:
    """The kept file (open for reading, named as uploaded), or None when the token is bad or expired."""
    try:
        kept = signing.loads(token, salt=SALT, max_age=MAX_AGE_S)
        path = _root() / Path(kept["folder"]).name / Path(kept["name"]).name
    except (signing.BadSignature, KeyError, TypeError):
        return None
    if not path.is_file():
        return None
    return File(path.open("rb"), name=path.name)


def forget(token: str) -> None:
    """Remove a kept file once the network that used it is saved."""
    try:
        kept = signing.loads(token, salt=SALT)
    except signing.BadSignature:
        return
    shutil.rmtree(_root() / Path(str(kept.get("folder", ""))).name, ignore_errors=True)


def _remove_expired() -> None:
    if not _root().is_dir():
        return
    cutoff = time.time() - MAX_AGE_S
    for folder in _root().iterdir():
        if folder.is_dir() and folder.stat().st_mtime < cutoff:
            shutil.rmtree(folder, ignore_errors=True)
