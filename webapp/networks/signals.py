"""A deleted network takes its weights file with it.

Files are named by checksum under MEDIA_ROOT (``checkpoint_upload_path``), one row each; the file
goes once the row's delete is committed, so a delete that rolls back keeps it.
"""

from __future__ import annotations

import logging
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.db.models.signals import post_delete
from django.dispatch import receiver

from webapp.networks.models import Network

log = logging.getLogger(__name__)


@receiver(post_delete, sender=Network, dispatch_uid="sightline.network-file")
def remove_weights_file(sender, instance: Network, **kwargs) -> None:
    if not instance.file:
        return
    name, storage = instance.file.name, instance.file.storage
    media = Path(settings.MEDIA_ROOT).resolve()
    if media not in Path(storage.path(name)).resolve().parents:
        return  # only the site's own copies are removed

    def remove() -> None:
        if Network.objects.filter(file=name).exists():
            return  # another row took the same file since
        storage.delete(name)
        log.info("network %s deleted: removed its file %s", instance.name, name)

    transaction.on_commit(remove)
