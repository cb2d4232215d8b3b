"""Admin: upload checkpoints, or another program's network file that a family imports (a worker
converts it). The request only stores the file (Django streams uploads over
FILE_UPLOAD_MAX_MEMORY_SIZE to a temporary file, which storage then moves into place) and
hashes it; a worker task loads and probes it, and the network is offered only once that
check marks it ready. A refused file shows the loader's reason on its admin page."""

from __future__ import annotations

import hashlib
import logging

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.db import transaction
from django.utils.html import format_html

from webapp.networks import kept_uploads
from webapp.networks.cards import card_html

from analysis.models import importer_for, load_families
from webapp.networks.models import Network
from webapp.ondemand.refused import Refused
from workers import dispatch
from workers.dispatch import BrokerUnavailable

log = logging.getLogger(__name__)


def _imported() -> str:
    """The other programs' network files that families import, by name and ending."""
    importers = {f.importer.name: f.importer for f in load_families() if f.importer is not None}
    return ", ".join(f"{name} {' / '.join(i.suffixes)}" for name, i in sorted(importers.items())) or "nothing else"


class NetworkUploadForm(forms.ModelForm):
    # A file that passed its checks in a form refused for another field (see kept_uploads).
    kept_file = forms.CharField(required=False, widget=forms.HiddenInput)

    class Meta:
        model = Network
        fields = ["name", "file", "card", "queue", "active", "is_default"]

    checksum: str | None = None  # set when a new file was uploaded
    used_kept: str | None = None  # the token of a kept file this form uses

    def clean_file(self):
        upload = self.cleaned_data.get("file")
        token = self.data.get("kept_file") if self.is_bound else None
        if not upload and token and "file" not in self.files:
            upload = kept_uploads.recall(token)
            if upload is None:
                raise forms.ValidationError("The file kept from your last try has expired; choose it again.")
            self.used_kept = token
        if not upload:
            if self.instance.pk is None:
                raise forms.ValidationError(f"Choose a .safetensors checkpoint (or {_imported()}) to upload.")
            return upload
        if not hasattr(upload, "chunks"):  # unchanged file on an edit
            return upload
        if not upload.name.lower().endswith(".safetensors") and importer_for(upload.name) is None:
            raise forms.ValidationError("Only .safetensors checkpoints are accepted (pickled files can run code), "
                                        f"or {_imported()} networks, which a worker converts.")
        if upload.size > settings.SIGHTLINE_MAX_CHECKPOINT_BYTES:
            raise forms.ValidationError(
                f"The file is {upload.size:,} bytes; the limit is {settings.SIGHTLINE_MAX_CHECKPOINT_BYTES:,}.")
        digest = hashlib.sha256()
        for chunk in upload.chunks():
            digest.update(chunk)
        checksum = digest.hexdigest()
        duplicate = Network.objects.filter(checksum=checksum).exclude(pk=self.instance.pk).first()
        if duplicate is not None:
            raise forms.ValidationError(f"This checkpoint is already registered as {duplicate.name!r}.")
        upload.seek(0)
        self.checksum = checksum
        return upload

    def full_clean(self):
        """A refused form keeps a file that passed its own checks, and says so on the file field."""
        super().full_clean()
        if not self._errors or self.checksum is None or "file" not in self.cleaned_data:
            return
        upload = self.cleaned_data["file"]
        self.data = self.data.copy()
        self.data["kept_file"] = kept_uploads.keep(upload)
        kept = f"Kept from your last try: {upload.name} (checked, {upload.size:,} bytes). Choose a file only to replace it."
        self.fields["file"].help_text = self["file"].help_text = kept  # a bound field copies its help text

    def save(self, commit=True):
        network = super().save(commit=False)
        if self.checksum is not None:  # a new file: nothing is known about it until a worker checks it
            network.checksum, network.size_bytes = self.checksum, self.cleaned_data["file"].size
            network.kind, network.family, network.preset, network.config = Network.Kind.CHECKPOINT, "", "", {}
            network.parameters, network.trained, network.provenance, network.metrics = 0, False, {}, {}
            network.input_encoding, network.capabilities, network.lens_description = "", {}, {}
            network.status, network.status_message = Network.Status.CHECKING, ""
        if network.is_default:
            Network.objects.exclude(pk=network.pk).update(is_default=False)
        if commit:
            network.save()
        return network


def dispatch_check(network: Network) -> None:
    """Queue the worker's check on the background lane (never behind analyses); raises
    ``BrokerUnavailable`` when the broker cannot take it, for the caller to withdraw."""
    dispatch.send_task("sightline.check_network", [network.pk], queue=settings.SIGHTLINE_BACKGROUND_QUEUE)


def withdraw_unchecked(network: Network, created: bool) -> str:
    """The broker could not take the check of a file just saved: a new network is removed with
    its stored file (nothing half-written); an existing one whose file was replaced cannot be
    offered unchecked, so it is rejected with the reason and 'Check again' re-queues it."""
    if created:
        network.file.delete(save=False)
        network.delete()
        return f"{network.name} was not added (nothing was stored); upload it again then."
    Network.objects.filter(pk=network.pk).update(
        status=Network.Status.REJECTED,
        status_message="Not checked: the workers' queue could not be reached when the file was saved; "
                       "use the action 'Check again' once it is back.")
    return f"{network.name} was saved but not checked; use the action 'Check again' then."


@admin.register(Network)
class NetworkAdmin(admin.ModelAdmin):
    form = NetworkUploadForm
    list_display = ["name", "family", "preset", "parameters", "training_status", "status", "queue", "active",
                    "is_default"]
    list_filter = ["status", "kind", "trained", "active", "queue"]
    search_fields = ["name", "checksum"]
    readonly_fields = ["status", "status_message", "kind", "family", "preset", "checksum", "size_bytes", "parameters",
                       "trained", "config", "input_encoding", "capabilities", "lens_description", "provenance",
                       "metrics", "created_at", "card_rendered"]
    actions = ["check_again"]

    def get_readonly_fields(self, request, obj=None):
        """What a worker learns about the file: nothing to show before there is one."""
        return self.readonly_fields if obj is not None else []
    @admin.display(description="model card as shown")
    def card_rendered(self, obj: Network) -> str:
        """The saved card rendered as Markdown (the field above holds its text)."""
        if not obj.card:
            return "-"
        return format_html('<div class="model-card">{}</div>', card_html(obj.card))

    @admin.display(description="trained?")
    def training_status(self, obj: Network) -> str:
        if obj.kind == Network.Kind.MATERIAL:
            return "baseline (no network)"
        if obj.status != Network.Status.READY:
            return "not known yet" if obj.status == Network.Status.CHECKING else "-"
        return "trained" if obj.trained else "UNTRAINED"

    def changeform_view(self, request, object_id=None, form_url="", extra_context=None):
        """The upload's check is sent once the row is committed (``save_model``); when the broker
        cannot take it, the upload is withdrawn and the answer is a 503 that says so."""
        try:
            return super().changeform_view(request, object_id, form_url, extra_context)
        except BrokerUnavailable as exc:
            list(messages.get_messages(request))  # "added", "a worker is checking": not so, so not shown
            network, created = request.unchecked_network
            outcome = withdraw_unchecked(network, created)
            return Refused(f"{exc.message(f'the check of {network.name}')} {outcome}", status=503,
                           retry_after=exc.retry_after_s).text()

    def save_model(self, request, obj, form, change):
        super().save_model(request, obj, form, change)
        if form.used_kept:  # the network has its own copy now
            transaction.on_commit(lambda: kept_uploads.forget(form.used_kept))
        if form.checksum is not None:
            request.unchecked_network = (obj, not change)
            transaction.on_commit(lambda: dispatch_check(obj))
            self.message_user(request, f"A worker is checking {obj.name}; it is offered for analysis once its "
                                       f"status is ready (reload this page to see it).", messages.INFO)

    @admin.action(description="Check again (in a worker)")
    def check_again(self, request, queryset):
        """Each network is marked checking (committed: admin actions run in autocommit) and its
        check sent; when the broker cannot take one, that network is put back as it was."""
        networks = list(queryset.filter(kind=Network.Kind.CHECKPOINT))
        for done, network in enumerate(networks):
            Network.objects.filter(pk=network.pk).update(status=Network.Status.CHECKING, status_message="")
            try:
                dispatch_check(network)
            except BrokerUnavailable as exc:
                Network.objects.filter(pk=network.pk).update(status=network.status,
                                                             status_message=network.status_message)
                self.message_user(request, exc.message(f"the check of {len(networks) - done} network(s)"),
                                  messages.ERROR)
                return
        self.message_user(request, f"{len(networks)} network(s) queued for checking.", messages.INFO)
