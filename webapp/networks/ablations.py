"""The ablations' variants on the site: which networks are variants, and each ablation's section of the
networks page, read from its TOML (``SIGHTLINE_ABLATIONS_DIR``) and its store
(``SIGHTLINE_WEIGHTS_DIR/ablations/<name>/``, as ``python -m analysis ablation run`` writes it).

A variant is registered as the network ``<ablation>-<variant>``. Its figures come from the store through
``analysis.ablation.summary.summarise`` (the same files the ablation's table is built from), turned into
the metrics dict ``ablation run`` attaches to the export, so ``figures.strength`` reads them as it reads
any card's and a very weak variant is marked as everywhere else.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path

from django.conf import settings

from analysis.ablation.config import AblationConfig, AblationOutline, Variant, load_ablation, read_outline
from analysis.ablation.measure import has_value, metric_names
from analysis.ablation.summary import Summary, metrics_cells, summarise, training_cell
from analysis.heads.patterns import UNLABELLED
from webapp.networks.figures import Strength, sanity_counts, strength
from webapp.networks.twins import pooled_metrics

log = logging.getLogger(__name__)

_SLUG = re.compile(r"^[-a-zA-Z0-9_]{1,64}$")
NOT_MEASURED = "not measured"


def variant_network_name(ablation: str, variant: str) -> str | None:
    """``<ablation>-<variant>``, or None where that is no network name (not a slug, over 64 characters)."""
    name = f"{ablation}-{variant}"
    return name if _SLUG.match(name) else None


def variant_files(weights_dir: Path | None = None) -> list[tuple[str, Path]]:
    """(network name, export) of every ``ablations/<ablation>/<variant>.safetensors`` under the weights
    folder, sorted; a file whose name makes no network name is left out and logged."""
    weights_dir = Path(weights_dir or settings.SIGHTLINE_WEIGHTS_DIR)
    found = []
    for path in sorted(weights_dir.glob("ablations/*/*.safetensors")):
        name = variant_network_name(path.parent.name, path.stem)
        if name is None:
            log.warning("%s: %s-%s is not a network name (letters, digits, - and _, at most 64): not registered",
                        path, path.parent.name, path.stem)
            continue
        found.append((name, path))
    return found


def load_ablations() -> list[AblationConfig]:
    """Every ``*.toml`` of ``SIGHTLINE_ABLATIONS_DIR`` (by file name), its store moved under the site's
    weights folder; an unreadable one is logged and left out. Parsed again only when a TOML under that
    folder changes."""
    directory = Path(settings.SIGHTLINE_ABLATIONS_DIR)
    return list(_parsed(directory, Path(settings.SIGHTLINE_WEIGHTS_DIR), _stamp(directory)))


def load_outlines() -> list[AblationOutline]:
    """The same files' names, titles and variant names only (``read_outline``): what the home picker,
    asked on every request, needs, read without the model families (and torch)."""
    directory = Path(settings.SIGHTLINE_ABLATIONS_DIR)
    return list(_outlined(directory, _stamp(directory)))


def _stamp(directory: Path) -> tuple:
    """The TOMLs under ``directory`` (the ablations and their variants' configs) with their sizes and times."""
    found = []
    for path in sorted(directory.rglob("*.toml")):
        try:
            stat = path.stat()
        except OSError:
            continue
        found.append((str(path), stat.st_size, stat.st_mtime_ns))
    return tuple(found)


@lru_cache(maxsize=4)
def _parsed(directory: Path, weights_dir: Path, stamp: tuple) -> tuple[AblationConfig, ...]:
    configs = []
    for path in sorted(directory.glob("*.toml")):
        try:
            cfg = load_ablation(path)
        except (OSError, ValueError) as exc:
            log.warning("ablation config %s cannot be read: %s", path, exc)
            continue
        configs.append(replace(cfg, store=weights_dir / "ablations" / cfg.name))
    return tuple(configs)


@lru_cache(maxsize=4)
def _outlined(directory: Path, stamp: tuple) -> tuple[AblationOutline, ...]:
    outlines = []
    for path in sorted(directory.glob("*.toml")):
        try:
            outlines.append(read_outline(path))
        except (OSError, ValueError) as exc:
            log.warning("ablation config %s cannot be read: %s", path, exc)
    return tuple(outlines)


def variant_groups(configs: list[AblationConfig] | list[AblationOutline] | None = None) -> dict[str, str]:
    """Network name -> the picker's group label (``Ablation variants: <title>``) for every variant file;
    a store without a TOML is labelled with its folder's name."""
    titles = {cfg.name: cfg.title for cfg in (load_outlines() if configs is None else configs)}
    return {name: f"Ablation variants: {titles.get(path.parent.name, path.parent.name)}"
            for name, path in variant_files()}


@dataclass(frozen=True)
class VariantRow:
    """One variant of an ablation section; ``problem`` set when its store could not be read."""

    name: str
    differs: str
    network_name: str | None
    network: object | None = None  # the registered Network, if any
    summary: Summary | None = None
    strength: Strength | None = None
    sanity: tuple[int, int] | None = None
    action: tuple[str, str] | None = None
    heads: str | None = None
    value_head: bool = True
    problem: str = ""

    @property
    def trained(self) -> bool:
        return self.summary is not None

    @property
    def steps(self) -> str:
        return training_cell(self.summary) if self.summary is not None else ""


def differs_by(variant: Variant) -> str:
    """The variant's ``model_overrides`` and budget: what sets it apart from the others."""
    overrides = ", ".join(f"{k} = {v}" for k, v in variant.train.model_overrides.items()) or "preset"
    return "; ".join(filter(None, [overrides, variant.budget]))


def sections(networks: dict, configs: list[AblationConfig] | None = None) -> list[dict]:
    """One entry per ablation config: its name, title, summary and a ``VariantRow`` per variant, in the
    config's order. ``networks``: registered networks by name."""
    return [{"name": cfg.name, "title": cfg.title, "summary": cfg.summary.strip(),
             "rows": [variant_row(cfg, v, networks) for v in cfg.variants]}
            for cfg in (load_ablations() if configs is None else configs)]


def variant_row(cfg: AblationConfig, variant: Variant, networks: dict) -> VariantRow:
    """The variant's figures from its store; a file that cannot be read makes it "unreadable" (logged)."""
    name = variant_network_name(cfg.name, variant.name)
    row = VariantRow(variant.name, differs_by(variant), name, networks.get(name))
    try:
        summary = summarise(cfg, variant)
        if summary is None:
            return row
        metrics = {metric_names(variant)[m]: r for m, r in summary.results.items()}
        twins = row.network.twins_metrics if row.network is not None else []
        return replace(row, summary=summary, strength=strength(pooled_metrics(metrics, twins)), sanity=sanity_counts(metrics),
                       action=metrics_cells(summary), heads=_labelled(summary.results.get("heads")),
                       value_head=has_value(variant))
    except Exception as exc:  # a broken file of one variant: show it as unreadable, keep the page
        log.exception("ablation %s, variant %s: its store in %s cannot be read", cfg.name, variant.name, cfg.store)
        where = str(exc).replace(str(cfg.store), f"weights/ablations/{cfg.name}")  # no server paths on the page
        return replace(row, problem=f"{type(exc).__name__}: {where}")


def _labelled(heads: dict | None) -> str | None:
    """``3 of 16 heads labelled`` from the stored head atlas (``analysis heads --json``)."""
    if heads is None:
        return None
    labels = [label for layer in heads["labels"] for label in layer]
    return f"{sum(label != UNLABELLED for label in labels)} of {len(labels)} heads labelled"


def picker_groups(offered) -> tuple[list, list[tuple[str, list]]]:
    """The home picker's networks: (the shipped ones, [(group label, its variants)]). The variants come
    after the shipped networks, one group per ablation, in the networks page's order (ablations by file
    name, variants in their config's order; a store without a config after them, by name)."""
    outlines = load_outlines()
    groups = variant_groups(outlines)
    order = {variant_network_name(cfg.name, variant): i for i, (cfg, variant) in
             enumerate((cfg, variant) for cfg in outlines for variant in cfg.variants)}
    shipped, grouped = [], {}
    for network in sorted(offered, key=lambda n: (n.name in groups, order.get(n.name, len(order)), n.name)):
        label = groups.get(network.name)
        (grouped.setdefault(label, []) if label else shipped).append(network)
    return shipped, list(grouped.items())
