"""Studies: experiments over position sets (``analysis.studies``) run by a worker on their own lane,
with live progress, cancel, resume, share by link, results, drill-down and export (issue 38)."""
