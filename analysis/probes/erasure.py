"""Is a concept used? Erase it at its best point, inside the network's forward, and measure what
the policy and the value do, against as many random directions.

The eraser is LEACE (``concept_erasure.LeaceEraser``: the least-squares edit after which no linear
probe beats a constant) fitted on the training split, in the space the probe reads: a square
concept's per-square C-vector (the same edit on all 64 squares), a position-level concept's PCA
features (lifted back to the flattened stream as x + (erase(z) - z) V). A fresh probe is then
trained on the erased training rows and scored on the erased test rows; while its AUROC is above
0.6 (``TARGET``). On small sets the fresh probe can score below 0.5: it fits what noise the
training rows keep, which the test rows hold with the opposite sign; ``probe_after`` is reported as
it is, so a figure well under 0.5 says the set was too small to erase cleanly the erasure is repeated on the erased features (at most ``rounds`` times), each
round removing one more direction. The random baseline removes the same number of random
directions of that space (orthogonal projections about the training mean), ``draws`` times, drawn
with the study's seed; its figure is the median over the draws.

Applied through ``ResidualPatch`` (the point's every square replaced by its erased version): the
policy KL(clean || erased) over the legal moves, the mean absolute change of the expected score
and, for ``opp_en_prise``, the change of the probability of capturing an en-prise piece, each the
mean over the test positions used (at most ``positions``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from concept_erasure import LeaceEraser

from analysis.models.lens import LensAdapter, ResidualPatch
from analysis.probes.concepts import en_prise_map
from analysis.probes.fit import FitConfig, predict, score_rows, score_squares, fit, square_rows
from analysis.probes.positions import TEST, TRAIN, VAL, ConceptSet, ProbeData

TARGET = 0.6


@dataclass(frozen=True)
class EraseConfig:
    draws: int = 10
    positions: int = 200
    rounds: int = 4
    seed: int = 0


class Edit:
    """An affine edit of the probe space composed of rounds; ``lift`` maps it to the stream."""

    def __init__(self, erasers: list, pca=None):
        self.erasers, self.pca = erasers, pca

    def space(self, x: np.ndarray) -> np.ndarray:
        return x if self.pca is None else self.pca.transform(x).astype(np.float32)

    def apply(self, z: np.ndarray) -> np.ndarray:
        t = torch.from_numpy(np.ascontiguousarray(z, dtype=np.float32))
        for eraser in self.erasers:
            t = eraser(t)
        return t.numpy()

    def lift(self, x: np.ndarray) -> np.ndarray:
        """Rows of the stream (C-vectors or flattened points) with the edit applied."""
        if self.pca is None:
            return self.apply(x)
        z = self.space(x)
        return x + (self.apply(z) - z) @ self.pca.components_


class Projection:
    """Removes ``k`` random unit directions (orthonormalised) about ``mean``: the random baseline."""

    def __init__(self, directions: np.ndarray, mean: np.ndarray):
        self.q, self.mean = np.linalg.qr(directions.T)[0].T.astype(np.float32), mean.astype(np.float32)

    def __call__(self, z: torch.Tensor) -> torch.Tensor:
        q, mean = torch.from_numpy(self.q), torch.from_numpy(self.mean)
        return z - ((z - mean) @ q.T) @ q


def _space_rows(cset: ConceptSet, x: np.ndarray, part: int, limit: int, seed: int):
    rows = cset.rows(part)
    if cset.concept.kind == "square":
        return square_rows(x[cset.index[rows]], cset.labels[rows], limit, seed)
    return x[cset.index[rows]], cset.labels[rows]


def fit_erasure(cset: ConceptSet, x: np.ndarray, pca, config: EraseConfig, fit_config: FitConfig):
    """(Edit, fresh probe's score after it, directions removed). ``x``: (N, 64, C) for a square
    concept, else the point's flattened stream (N, D) (``pca`` its reduction, or None)."""
    z = x if pca is None else pca.transform(x).astype(np.float32)
    erasers: list = []
    edit = Edit(erasers, pca)
    for _ in range(config.rounds):
        train_x, train_y = _space_rows(cset, z, TRAIN, fit_config.square_rows, config.seed)
        erasers.append(LeaceEraser.fit(torch.from_numpy(edit.apply(train_x)), torch.from_numpy(train_y[:, None])))
        after = fresh_probe(cset, lambda rows: edit.apply(rows), z, fit_config)
        if cset.concept.kind == "regression" or after.score <= TARGET:
            break
    return edit, after, len(erasers)


def fresh_probe(cset: ConceptSet, erase, z: np.ndarray, fit_config: FitConfig):
    """A probe trained on the erased training rows, chosen on validation, scored on test."""
    parts = []
    for part in (TRAIN, VAL):
        x, y = _space_rows(cset, z, part, fit_config.square_rows, fit_config.seed)
        parts += [erase(x), y]
    model = fit(cset.concept.kind, *parts, fit_config)
    test = cset.rows(TEST)
    if cset.concept.kind == "square":
        xt = z[cset.index[test]]
        pred = predict(model, erase(xt.reshape(-1, xt.shape[-1]))).reshape(len(test), 64)
        return score_squares(pred, cset.labels[test], fit_config)
    return score_rows(cset.concept.kind, predict(model, erase(z[cset.index[test]])), cset.labels[test], fit_config)


def random_edits(edit: Edit, directions: int, z_train: np.ndarray, config: EraseConfig) -> list[Edit]:
    """``config.draws`` edits each removing ``directions`` random directions of the probe space."""
    rng = np.random.default_rng(config.seed)
    mean = z_train.mean(axis=0)
    return [Edit([Projection(rng.standard_normal((directions, z_train.shape[1])), mean)], edit.pca)
            for _ in range(config.draws)]


@torch.no_grad()
def measure(adapter: LensAdapter, data: ProbeData, cset: ConceptSet, point: str, edits: list[Edit],
            config: EraseConfig) -> dict[str, np.ndarray]:
    """Per edit, over the test positions: mean policy KL, mean |score change| and (opp_en_prise)
    the mean change of the probability of capturing an en-prise piece."""
    test = cset.index[cset.rows(TEST)][:config.positions]
    kl, dscore, dcap = [], [], []
    for i in test:
        board = data.boards[i]
        prepared = adapter.prepare(board)
        seen, clean = adapter.run(prepared, capture=True)
        k = adapter.check_point(point)
        stream = adapter.square_stream(prepared, point, seen[k])[0].numpy()  # (64, C)
        flat = cset.concept.kind != "square"
        rows = np.stack([e.lift(stream.reshape(1, -1)).reshape(64, -1) if flat else e.lift(stream) for e in edits])
        source = _source(adapter, prepared, point, seen[k], torch.from_numpy(rows))
        squares = torch.ones(len(edits), 64, dtype=torch.bool)
        _, out = adapter.run(prepared, variants=len(edits), patches=[ResidualPatch(point, source, squares)])
        kl.append(_kl(clean.logits[0], out.logits) if out.logits is not None else np.full(len(edits), np.nan))
        dscore.append(np.abs((out.score - clean.score[0]).numpy()) if out.score is not None
                      else np.full(len(edits), np.nan))
        if cset.concept.name == "opp_en_prise" and out.logits is not None:
            dcap.append(_capture_change(board, prepared.moves, clean.logits[0], out.logits))
    result = {"kl": np.mean(kl, axis=0), "score": np.mean(dscore, axis=0)}
    if dcap:
        result["capture"] = np.mean(dcap, axis=0)
    return result


def _source(adapter, prepared, point, clean: torch.Tensor, squares_rows: torch.Tensor) -> torch.Tensor:
    """The point's clean tensor with its 64 square rows replaced by ``squares_rows`` (V, 64, C),
    in the point's own layout (the source of an all-squares ``ResidualPatch``)."""
    tokens = adapter.to_tokens(prepared, point, clean).expand(len(squares_rows), -1, -1).clone()
    rows = adapter.square_rows(prepared, point)
    tokens[:, rows] = squares_rows.to(tokens.dtype)
    return adapter.from_tokens(prepared, point, tokens)


def _kl(clean: torch.Tensor, edited: torch.Tensor) -> np.ndarray:
    p = torch.log_softmax(clean.float(), -1)
    q = torch.log_softmax(edited.float(), -1)
    return (p.exp() * (p - q)).sum(-1).numpy()


def _capture_change(board, moves, clean, edited) -> np.ndarray:
    prise = en_prise_map(board, not board.turn)
    hits = torch.tensor([prise[m.to_square] == 1 for m in moves])
    if not hits.any():
        return np.zeros(len(edited))
    pc = torch.softmax(clean.float(), -1)[hits].sum()
    return (torch.softmax(edited.float(), -1)[:, hits].sum(-1) - pc).numpy()


def erase(adapter: LensAdapter, data: ProbeData, cset: ConceptSet, point: str, x: np.ndarray, pca,
          config: EraseConfig = EraseConfig(), fit_config: FitConfig = FitConfig()) -> dict[str, Any]:
    """The erasure entry of the CLI contract at ``point`` (``x``: the point's square view (N, 64, C)
    for a square concept, else the flattened stream (N, D) with its ``pca``)."""
    why = adapter.why_not("patch")
    if why is not None:
        return {"why": why}
    edit, after, directions = fit_erasure(cset, x, pca, config, fit_config)
    z = edit.space(x.reshape(-1, x.shape[-1]) if cset.concept.kind == "square" else x)
    z_train = _space_rows(cset, z.reshape(x.shape[:-1] + (-1,)) if cset.concept.kind == "square" else z,
                          TRAIN, fit_config.square_rows, config.seed)[0]
    randoms = random_edits(edit, directions, z_train, config)
    effects = measure(adapter, data, cset, point, [edit] + randoms, config)
    out = {"point": point, "directions": directions, "probe_after": after.to_dict(),
           "positions": int(min(len(cset.rows(TEST)), config.positions)),
           "policy_kl": round(float(effects["kl"][0]), 5), "random_kl_median": round(float(np.median(effects["kl"][1:])), 5),
           "score_change": round(float(effects["score"][0]), 5),
           "random_score_change_median": round(float(np.median(effects["score"][1:])), 5)}
    if "capture" in effects:
        out["capture_change"] = round(float(effects["capture"][0]), 5)
        out["random_capture_change_median"] = round(float(np.median(effects["capture"][1:])), 5)
    return out
