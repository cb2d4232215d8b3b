"""The shipped cf-small gives the outputs of its pins (``tests/pin_cf_small.py``).

Any refactor of the model, the encoding, the evaluator or the checkpoint loader
must keep them: moves exactly, numbers to float32 rounding. Not bit for bit: the
pins were bit-identical on the machine that made them, but another CPU's oneDNN
kernels sum in another order (an AMD EPYC with AVX-512 moved logits by up to
4e-6 against pins made elsewhere, with the same code and wheels). A real change of
behaviour moves them by orders of magnitude more.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tests.pin_cf_small import PINS, WEIGHTS, compute_pins, file_sha256, pin_boards, raw_outputs


@pytest.fixture(scope="module")
def pins():
    stored = dict(np.load(PINS))
    sha = file_sha256(WEIGHTS)
    if str(stored["weights_sha256"]) != sha:
        pytest.fail(f"{WEIGHTS.name}: its weights changed (tensor sha256 {sha}, pins are for {stored['weights_sha256']}): "
                    "if it was retrained on purpose, re-pin with `python -m tests.pin_cf_small` "
                    "using code known to be right, and say so in the commit")
    return stored


@pytest.fixture(scope="module")
def single_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # the pins' reduction order
    yield
    torch.set_num_threads(threads)


def test_positions_are_the_pinned_ones(pins):
    assert [b.fen() for b in pin_boards()] == pins["fens"].tolist()


def _same(key: str, value: np.ndarray, pin: np.ndarray) -> None:
    if value.dtype.kind in "fc":
        np.testing.assert_allclose(value, pin, rtol=1e-5, atol=2e-5, err_msg=f"{key} differs from the pin")
    else:
        assert np.array_equal(value, pin), f"{key} differs from the pin"


def test_evaluations_match_the_pins(pins, single_thread):
    from analysis.checkpoint import load_evaluator

    now = compute_pins(load_evaluator(WEIGHTS, device="cpu"), pin_boards())
    assert set(now) == {k for k in pins if k.startswith(("batch/", "single/"))}
    for key, value in now.items():
        _same(key, value, pins[key])


def test_raw_outputs_match_the_pins(pins, single_thread):
    from analysis.checkpoint import load_checkpoint
    from analysis.encoding import encode_tokens

    model, _ = load_checkpoint(WEIGHTS)
    now = raw_outputs(model, torch.from_numpy(encode_tokens(pin_boards())))
    assert set(now) == {k for k in pins if k.startswith("raw/")}
    for key, value in now.items():
        _same(key, value, pins[key])
