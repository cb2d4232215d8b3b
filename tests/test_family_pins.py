"""The shipped cf-small gives bit-identical outputs to its pins (``tests/pin_cf_small.py``).

The pins were made before the model families became plug-ins; any refactor
of the model, the encoding, the evaluator or the checkpoint loader must keep
them exactly.
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


def test_evaluations_are_bit_identical(pins, single_thread):
    from analysis.checkpoint import load_evaluator

    now = compute_pins(load_evaluator(WEIGHTS, device="cpu"), pin_boards())
    assert set(now) == {k for k in pins if k.startswith(("batch/", "single/"))}
    for key, value in now.items():
        assert np.array_equal(value, pins[key]), f"{key} differs from the pin"


def test_raw_outputs_are_bit_identical(pins, single_thread):
    from analysis.checkpoint import load_checkpoint
    from analysis.encoding import encode_tokens

    model, _ = load_checkpoint(WEIGHTS)
    now = raw_outputs(model, torch.from_numpy(encode_tokens(pin_boards())))
    assert set(now) == {k for k in pins if k.startswith("raw/")}
    for key, value in now.items():
        assert np.array_equal(value, pins[key]), f"{key} differs from the pin"
