"""Admin: upload checkpoints. Every upload is loaded once by analysis.checkpoint
before anything is saved, so a bad file is refused with the loader's reason."""

from __future__ import annotations

import tempfile
from pathlib import Path

from django import forms
from django.conf import settings
from django.contrib import admin

from analysis.checkpoint import CheckpointError
from webapp.networks.models import Network
from webapp.networks.registry import CheckpointFacts, apply_facts, default_card, inspect_checkpoint


class NetworkUploadForm(forms.ModelForm):
    class Meta:
        model = Network
        fields = ["name", "file", "card", "queue", "active", "is_default"]

    facts: CheckpointFacts | None = None

    def clean_file(self):
        upload = self.cleaned_data.get("file")
        if not upload:
            if self.instance.pk is None:
                raise forms.ValidationError("Choose a .safetensors checkpoint to upload.")
            return upload
        if not hasattr(upload, "chunks"):  # unchanged file on an edit
            return upload
        if not upload.name.lower().endswith(".safetensors"):
            raise forms.ValidationError("Only .safetensors checkpoints are accepted (pickled files can run code).")
        if upload.size > settings.SIGHTLINE_MAX_CHECKPOINT_BYTES:
            raise forms.ValidationError(
                f"The file is {upload.size:,} bytes; the limit is {settings.SIGHTLINE_MAX_CHECKPOINT_BYTES:,}.")
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "upload.safetensors"
            with path.open("wb") as out:
                for chunk in upload.chunks():
                    out.write(chunk)
            try:
                facts = inspect_checkpoint(path)
            except CheckpointError as exc:
                raise forms.ValidationError(str(exc).replace(str(path), upload.name)) from None
        duplicate = Network.objects.filter(checksum=facts.checksum).exclude(pk=self.instance.pk).first()
        if duplicate is not None:
            raise forms.ValidationError(f"This checkpoint is already registered as {duplicate.name!r}.")
        upload.seek(0)
        self.facts = facts
        return upload

    def save(self, commit=True):
        network = super().save(commit=False)
        if self.facts is not None:
            apply_facts(network, self.facts)
            if not network.card:
                network.card = default_card(self.facts, network.name)
        if network.is_default:
            Network.objects.exclude(pk=network.pk).update(is_default=False)
        if commit:
            network.save()
        return network


@admin.register(Network)
class NetworkAdmin(admin.ModelAdmin):
    form = NetworkUploadForm
    list_display = ["name", "family", "preset", "parameters", "training_status", "queue", "active", "is_default"]
    list_filter = ["kind", "trained", "active", "queue"]
    search_fields = ["name", "checksum"]
    readonly_fields = ["kind", "family", "preset", "checksum", "size_bytes", "parameters", "trained",
                       "config", "provenance", "metrics", "has_policy", "has_wdl", "has_attention", "created_at"]

    @admin.display(description="trained?")
    def training_status(self, obj: Network) -> str:
        if obj.kind == Network.Kind.MATERIAL:
            return "baseline (no network)"
        return "trained" if obj.trained else "UNTRAINED"
