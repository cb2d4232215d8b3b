"""The two ways a study stops short, importable by every layer (the CLI and the site answer them)."""

from __future__ import annotations


class StudyInputError(ValueError):
    """Bad study input (a position set, a setting, a network a method cannot take): one line that says
    what to fix. The CLI exits 2 with it; the site answers 4xx; nothing has been computed or written."""


class StudyStopped(Exception):
    """``should_stop()`` said stop between two items; the items already measured went to ``on_item``,
    so a later run with ``done=`` resumes where this one stopped."""
