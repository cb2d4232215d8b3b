"""Layers and heads count from 0 everywhere (docs/lens.md#words), the cards and pages too: every head
they name ("L3 H4 `pawn-moves`", "`pawn-moves` (L1 H6, L3 H4)") is checked against the network's own
head atlas, so a mention counted from 1 names the wrong head and fails.

The atlases: the one stored in a shipped file's header (cf-shaw, cb-sv), the Shaw ablation variant's
stored ``heads.json`` (docs/ablations.md's prose), and cf-small's, computed here once over the full
sample (weights/README.md's atlas section, its rows of docs/lens.md's causal atlas table). ag-cpu's
and the retired cb-cpu's cards are not checked here: each of their atlases costs a minute or two of CPU.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from analysis.checkpoint_file import read_header
from tests.conftest import ROOT

HEAD = r"L(\d+)\s+H(\d+)"
ANY_HEAD = re.compile(HEAD)
LABELLED = re.compile(rf"{HEAD}\s+`([a-z-]+)`(?:,?\s+\(?lift\s+([\d.]+))?")  # L3 H4 `pawn-moves`[, lift 2.5]
GROUP = re.compile(r"`([a-z-]+)` \((L\d+\s+H\d+(?:,\s+L\d+\s+H\d+)*)\)")  # `pawn-moves` (L1 H6, L3 H4)
TABLE_ROW = re.compile(rf"^\| [^|]*\| {HEAD} \| ([a-z-]+) \|", re.MULTILINE)  # | cf-small | L0 H0 | unlabelled |
MOST_IMPORTANT = re.compile(rf"most important head[^.]*?{HEAD}")
FOR_THE_VALUE = re.compile(rf"for the value, {HEAD}")
EMPTY_LAYER = re.compile(r"none in layer (\d+)|[Ll]ayer (\d+) is all unlabelled")
NUMBERING_LINK = "lens.md#words)"


@dataclass(frozen=True)
class Atlas:
    """A network's head atlas as the docs quote it: labels[layer][head], lift per pattern, importance."""
    labels: list[list[str]]
    lift: dict[str, list[list[float]]]
    kl: list[list[float]] | None = None
    score: list[list[float]] | None = None

    @classmethod
    def from_dict(cls, data: dict) -> "Atlas":
        importance = data.get("importance") or {}
        return cls(data["labels"], data["lift"], importance.get("kl"), importance.get("score"))

    def label(self, layer: int, head: int) -> str:
        assert 0 <= layer < len(self.labels) and 0 <= head < len(self.labels[layer]), f"no head L{layer} H{head}"
        return self.labels[layer][head]

    def counts(self) -> dict[str, list[int]]:
        out: dict[str, list[int]] = {}
        for layer, row in enumerate(self.labels):
            for label in row:
                out.setdefault(label, [0] * len(self.labels))[layer] += 1
        return out


def _argmax(grid: list[list[float]]) -> tuple[int, int]:
    return max(((l, h) for l, row in enumerate(grid) for h in range(len(row))), key=lambda lh: grid[lh[0]][lh[1]])


def stored_atlas(name: str) -> Atlas:
    return Atlas.from_dict(read_header(ROOT / "weights" / f"{name}.safetensors")[0].metrics["head_atlas"])


def variant_atlas(ablation: str, variant: str) -> Atlas:
    return Atlas.from_dict(json.loads((ROOT / "weights" / "ablations" / ablation / variant / "heads.json").read_text()))


@pytest.fixture(scope="module")
def cf_small_atlas() -> Atlas:
    """cf-small's atlas over the full sample, as ``python -m analysis heads`` computes it."""
    from analysis.checkpoint import load_evaluator
    from analysis.heads import AtlasConfig, compute_atlas

    atlas = compute_atlas(load_evaluator(str(ROOT / "weights" / "cf-small.safetensors"), device="cpu"), AtlasConfig())
    return Atlas(atlas.labels, atlas.lift)


def prose(path: str) -> str:
    """A hand-written page's text without the table rows a command generates (docs/ablations.md's)."""
    text = (ROOT / path).read_text()
    return "\n".join(line for line in text.splitlines() if not line.startswith("| `"))


def between(text: str, start: str, end: str) -> str:
    assert start in text and end in text, (start, end)
    return text[text.index(start):text.index(end, text.index(start))]


def named_heads(text: str) -> list[tuple[int, int, str]]:
    """Every (layer, head, label) the text names, in the forms the cards and pages use."""
    found = [(int(l), int(h), label) for l, h, label, _ in LABELLED.findall(text)]
    for label, heads in GROUP.findall(text):
        found += [(int(l), int(h), label) for l, h in ANY_HEAD.findall(heads)]
    return found + [(int(l), int(h), label) for l, h, label in TABLE_ROW.findall(text)]


def assert_heads_match(text: str, atlas: Atlas) -> None:
    """Each named head carries its label; each quoted lift is the atlas's; no head is named without
    its label (a bare ``L4 H5`` could not be checked)."""
    named = named_heads(text)
    assert len(named) == len(ANY_HEAD.findall(text)), f"a head named without its label in: {text[:200]}..."
    for layer, head, label in named:
        assert atlas.label(layer, head) == label, f"L{layer} H{head} is {atlas.label(layer, head)}, not {label}"
    for l, h, label, quoted in LABELLED.findall(text):
        if quoted:
            figure = round(atlas.lift[label][int(l)][int(h)], len(quoted.partition(".")[2]))
            assert figure == float(quoted), f"L{l} H{h} {label}: lift {figure}, not {quoted}"


def assert_importance_matches(text: str, atlas: Atlas) -> None:
    """"The most important head" is the one whose removal moves the policy most (the value for a
    network without a policy); "for the value" the one that moves the expected score most."""
    for l, h in MOST_IMPORTANT.findall(text):
        assert (int(l), int(h)) == _argmax(atlas.kl if atlas.kl is not None else atlas.score)
    for l, h in FOR_THE_VALUE.findall(text):
        assert (int(l), int(h)) == _argmax(atlas.score)


def assert_empty_layers_match(text: str, atlas: Atlas) -> None:
    for found in EMPTY_LAYER.findall(text):
        layer = int(next(x for x in found if x))
        assert set(atlas.labels[layer]) == {"unlabelled"}, f"layer {layer} has labelled heads"


def check_passage(text: str, atlas: Atlas) -> None:
    """Every check a passage's head mentions must pass against its network's atlas."""
    assert_heads_match(text, atlas)
    assert_importance_matches(text, atlas)
    assert_empty_layers_match(text, atlas)


def counted_from_1(text: str) -> str:
    """The same passage with every layer and head counted from 1: what the cards said before."""
    text = ANY_HEAD.sub(lambda m: f"L{int(m[1]) + 1} H{int(m[2]) + 1}", text)
    return EMPTY_LAYER.sub(lambda m: re.sub(r"\d+", lambda n: str(int(n[0]) + 1), m[0]), text)


def cf_small_readme() -> str:
    """cf-small's head atlas section, the last of weights/README.md."""
    text = (ROOT / "weights" / "README.md").read_text()
    assert text.count("### Head atlas") == 1 and "\n## " not in text[text.index("### Head atlas"):]
    return text[text.index("### Head atlas"):]


def lens_page(start: str, end: str) -> str:
    return between((ROOT / "docs" / "lens.md").read_text(), start, end)


# (passage, whose atlas, how many heads it names at least)
PASSAGES = {
    "cf-shaw card": (lambda: prose("weights/cf-shaw.md"), "cf-shaw", 9),
    "cb-sv card": (lambda: prose("weights/cb-sv.md"), "cb-sv", 5),
    "ablations.md, Shaw's encoding": (lambda: between(prose("docs/ablations.md"), "<!-- /ablation:cf-position -->",
                                                      "<!-- ablation:cb-targets -->"), "shaw variant", 8),
    "weights/README.md, cf-small's atlas": (cf_small_readme, "cf-small", 6),
    "lens.md, cf-small's causal atlas rows": (lambda: lens_page("| cf-small (6 x 8) |", "| cb-cpu"), "cf-small", 5),
    "lens.md, labels and effects": (lambda: lens_page("Labels and effects", "cb-cpu's KLs"), "cf-small", 1),
}


def atlas_of(network: str, request) -> Atlas:
    """The atlas a passage quotes; cf-small's (computed, a module fixture) only when a test needs it."""
    if network == "shaw variant":
        return variant_atlas("cf-position", "shaw")
    return request.getfixturevalue("cf_small_atlas") if network == "cf-small" else stored_atlas(network)


@pytest.mark.parametrize("passage", PASSAGES)
def test_a_passage_names_its_heads_from_0(passage, request):
    text, network, at_least = PASSAGES[passage]
    text = text()
    assert len(named_heads(text)) >= at_least
    check_passage(text, atlas_of(network, request))


@pytest.mark.parametrize("passage", PASSAGES)
def test_the_same_passage_counted_from_1_fails(passage, request):
    """The control: the checks tell the two numberings apart on every passage."""
    text, network, _ = PASSAGES[passage]
    with pytest.raises(AssertionError):
        check_passage(counted_from_1(text()), atlas_of(network, request))


def test_the_cards_name_the_most_important_head():
    for name in ("cf-shaw", "cb-sv"):
        assert MOST_IMPORTANT.search(prose(f"weights/{name}.md")), name


def test_cf_smalls_atlas_table_has_a_column_per_layer_from_0(cf_small_atlas):
    section = cf_small_readme()
    header = next(line for line in section.splitlines() if line.startswith("| label |"))
    assert header.split("|")[2:-2] == [f" L{i} " for i in range(len(cf_small_atlas.labels))]
    counts, rows = cf_small_atlas.counts(), 0
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if cells[0] in counts:
            assert [int(c) for c in cells[1:-1]] == counts[cells[0]], cells[0]
            rows += 1
    assert rows == len(counts)


def hand_written_pages() -> list[Path]:
    """README, docs/ and the cards, less what ``ablation table`` writes (weights/ablations/)."""
    generated = ROOT / "weights" / "ablations"
    cards = [p for p in sorted((ROOT / "weights").rglob("*.md")) if not p.is_relative_to(generated)]
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *cards]


def test_the_numbering_is_stated_once_and_linked_from_every_page_that_names_a_head():
    restated = re.compile(r"(?:layers?|heads?|units?)[^.]{0,60}?(?:count|counted|numbered)\s+from\s+[01]", re.I)
    statements = [(p.name, m.group(0)) for p in hand_written_pages() for m in restated.finditer(p.read_text())]
    assert [name for name, _ in statements] == ["lens.md"], statements
    for page in hand_written_pages():
        text = prose(str(page.relative_to(ROOT)))
        if page.name != "lens.md" and ANY_HEAD.search(text):
            assert NUMBERING_LINK in text, f"{page.relative_to(ROOT)} names a head without linking the numbering"
