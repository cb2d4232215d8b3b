"""The start-a-study form: its fields in the page's words, read into a ``StudyRequest``."""

from __future__ import annotations

import json

from django import forms

from webapp.studies.library import KINDS, MAX_LIMIT, MAX_SOURCE_BYTES, Source
from webapp.studies.submit import StudyRequest

SOURCE_CHOICES = [("puzzles", "A shipped puzzle set"), ("csv", "A Lichess puzzle CSV (upload or paste)"),
                  ("pgn", "PGN (upload or paste): every position of its games"),
                  ("fens", "FENs, one a line"),
                  ("games", "Mined from the master games: where the network's own line is confident for three plies")]
assert [k for k, _ in SOURCE_CHOICES] == list(KINDS)


class StudyForm(forms.Form):
    network = forms.CharField(max_length=100)
    method = forms.CharField(max_length=32)
    kind = forms.ChoiceField(choices=SOURCE_CHOICES, initial="puzzles", label="Positions")
    name = forms.CharField(max_length=100, required=False, label="Shipped set")
    text = forms.CharField(widget=forms.Textarea(attrs={"rows": 5}), required=False, label="Paste",
                           max_length=MAX_SOURCE_BYTES)
    upload = forms.FileField(required=False, label="or upload a file")
    limit = forms.IntegerField(min_value=1, max_value=MAX_LIMIT, initial=50, label="At most (positions)")
    seed = forms.IntegerField(min_value=0, max_value=2**31 - 1, initial=0)
    sparring = forms.CharField(max_length=100, required=False, label="Sparring network")
    settings = forms.CharField(required=False, max_length=4000, label="Settings (JSON)",
                               widget=forms.TextInput(attrs={"placeholder": "{}"}))

    def clean_settings(self) -> dict:
        text = (self.cleaned_data.get("settings") or "").strip()
        if not text:
            return {}
        try:
            value = json.loads(text)
        except ValueError:
            raise forms.ValidationError("Settings must be a JSON object, e.g. {} or {\"points\": 4}.") from None
        if not isinstance(value, dict):
            raise forms.ValidationError("Settings must be a JSON object.")
        return value

    def clean(self):
        data = super().clean()
        kind = data.get("kind")
        upload = data.get("upload")
        if upload is not None:
            if upload.size > MAX_SOURCE_BYTES:
                raise forms.ValidationError(f"The file is over {MAX_SOURCE_BYTES:,} bytes.")
            try:
                data["text"] = upload.read().decode("utf-8-sig")
            except UnicodeDecodeError:
                raise forms.ValidationError("The file is not UTF-8 text.") from None
        if kind == "puzzles" and not data.get("name"):
            self.add_error("name", "Choose a shipped set.")
        elif kind in ("csv", "pgn", "fens") and not (data.get("text") or "").strip():
            self.add_error("text", "Paste the positions or upload a file.")
        return data

    def request(self) -> StudyRequest:
        d = self.cleaned_data
        source = Source(d["kind"], d.get("name") or "" if d["kind"] == "puzzles" else "",
                        "" if d["kind"] == "puzzles" else d.get("text") or "", d["limit"])
        return StudyRequest(d["network"], d["method"], source, d.get("settings") or {}, d["seed"],
                            d.get("sparring") or "")
