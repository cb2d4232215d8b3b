"""Whether a network's value may be trusted: the value sanity suite's verdict, read from its metrics.

The suite itself lives in ``analysis.eval``. The site runs it itself when it registers or checks a
network (``site_verdict``) and keeps the result in ``Network.metrics["value_sanity"]`` = {"passed":
bool, "checks": [{"name", "passed", "detail"}, ...], "suite_version": int}: a file's own metadata is
anyone's claim (an upload may carry a copied "passed"), so it never decides the flag. A verdict of
another suite version counts as not verified. Until a network has passed, every page that shows its
values flags them, as pages flag untrained networks. The material baseline is not a network: its value is the
material count by its own definition, so the suite does not apply to it and nothing is flagged.
"""

from __future__ import annotations

from dataclasses import dataclass

from analysis.eval.value_sanity import SUITE_VERSION, run_sanity

METRICS_KEY = "value_sanity"
PASSED, FAILED, UNVERIFIED, NOT_A_NETWORK = "passed", "failed", "unverified", "not a network"
LABELS = {FAILED: "value fails the sanity suite", UNVERIFIED: "value not verified"}


@dataclass(frozen=True)
class ValueSanity:
    state: str
    failed_checks: tuple[str, ...] = ()
    failed_details: tuple[str, ...] = ()  # each failed check's own "detail", in the same order
    suite_version: int | None = None
    problem: str = ""  # why a stored entry could not be read

    @property
    def flagged(self) -> bool:
        return self.state in LABELS

    @property
    def label(self) -> str:
        return LABELS.get(self.state, "")

    @property
    def failed(self) -> list[tuple[str, str]]:
        """[(name, detail)] of the failed checks (for the network panel)."""
        return list(zip(self.failed_checks, self.failed_details))

    @property
    def detail(self) -> str:
        """A sentence for tooltips and the network panel."""
        version = f" (version {self.suite_version})" if self.suite_version is not None else ""
        if self.state == PASSED:
            return f"passed the value sanity suite{version}"
        if self.state == NOT_A_NETWORK:
            return "the material count by definition; not a network, so the value sanity suite does not apply"
        if self.state == FAILED:
            names = ", ".join(self.failed_checks) or "no check named"
            return f"failed the value sanity suite{version}: {names}; its values may be wrong"
        why = f" ({self.problem})" if self.problem else ""
        return f"not verified by the value sanity suite{why}; its values may be wrong"


def read_value_sanity(metrics: dict | None, *, is_network: bool = True) -> ValueSanity:
    """The verdict in ``metrics``; a missing or unreadable entry counts as not verified."""
    if not is_network:
        return ValueSanity(NOT_A_NETWORK)
    entry = (metrics or {}).get(METRICS_KEY)
    if entry is None:
        return ValueSanity(UNVERIFIED)
    if not isinstance(entry, dict) or not isinstance(entry.get("passed"), bool):
        return ValueSanity(UNVERIFIED, problem="its value_sanity entry is malformed")
    checks = entry.get("checks") if isinstance(entry.get("checks"), list) else []
    failed = [c for c in checks if isinstance(c, dict) and c.get("passed") is not True]
    version = entry.get("suite_version") if isinstance(entry.get("suite_version"), int) else None
    if version != SUITE_VERSION:
        return ValueSanity(UNVERIFIED, suite_version=version,
                           problem=f"its verdict is from suite version {version}; this site runs version {SUITE_VERSION}")
    return ValueSanity(PASSED if entry["passed"] else FAILED, tuple(str(c.get("name", "?")) for c in failed),
                       tuple(str(c.get("detail", "")) for c in failed), version)


def site_verdict(evaluator) -> dict | None:
    """The suite's verdict on ``evaluator``, run here; None for a network without a value head."""
    return run_sanity(evaluator) if evaluator.capabilities.value else None
