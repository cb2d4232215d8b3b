"""Does the training loader keep up with the trainer? Samples/s of each, for any family.

    python bench/loader.py --data datasets/cb-v1 --family chessbench --preset cb-small
    python bench/loader.py --data datasets/sf-v3 --preset cf-small --threads 1
    python bench/loader.py --data datasets/cb-v1 --family alphagateau --preset ag-5 --batch 512 --device cuda

On CUDA the trainer step runs under bf16 autocast, as the trainer's ``amp = "auto"``
does there, and the peak GPU memory is printed.

The loader figure is one process building batches (the family's dataset: ChessBench
tokenises FENs at load time); the trainer figure is forward + backward + optimiser step on
those batches (Adam; the loss is the family's). The loader keeps up when its rate is
well above the trainer's (a run has ``num_workers`` loader processes).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from analysis.models import DEFAULT_FAMILY, get_family  # noqa: E402
from analysis.train.config import TrainConfig  # noqa: E402
from analysis.train.loop import training_dataset  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True, type=Path, help="annotated dataset directory")
    parser.add_argument("--family", default=DEFAULT_FAMILY)
    parser.add_argument("--preset", default=None)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--loader-batches", type=int, default=40)
    parser.add_argument("--train-steps", type=int, default=3)
    parser.add_argument("--threads", type=int, default=0, help="torch CPU threads (0: torch's default)")
    parser.add_argument("--device", default="cpu", help="cpu or cuda (bf16 autocast on cuda)")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    family = get_family(args.family)
    preset = args.preset or family.default_preset
    config = family.preset(preset)
    cfg = TrainConfig(data=args.data, out=Path("unused"), family=args.family, model=preset)

    started = time.perf_counter()
    dataset = training_dataset(family, cfg, "train", config)
    print(f"{family.name} {preset}: {len(dataset):,} training samples, loaded in {time.perf_counter() - started:.1f} s")
    rng = np.random.default_rng(0)
    started = time.perf_counter()
    batches = [dataset[rng.integers(0, len(dataset), args.batch)] for _ in range(args.loader_batches)]
    loader_rate = args.loader_batches * args.batch / (time.perf_counter() - started)

    device = torch.device(args.device)
    model = family.build(config).train().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)
    batches = [{k: v.to(device) for k, v in batch.items()} for batch in batches]

    def step(batch):
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=device.type == "cuda"):
            out = model(batch["tokens"])
        terms = family.losses(out, batch, cfg.loss)
        optimizer.zero_grad(set_to_none=True)
        terms["total"].backward()
        optimizer.step()
        return terms["total"]

    step(batches[0])  # warm-up
    if device.type == "cuda":
        torch.cuda.synchronize()
    started = time.perf_counter()
    for i in range(args.train_steps):
        total = step(batches[1 + i % (len(batches) - 1)])
    total = float(total.detach())  # waits for the device
    trainer_rate = args.train_steps * args.batch / (time.perf_counter() - started)
    where = (f"{torch.cuda.get_device_name(device)}, bf16, peak {torch.cuda.max_memory_allocated(device) / 2**30:.1f} GiB"
             if device.type == "cuda" else f"{torch.get_num_threads()} threads")
    print(f"loader  {loader_rate:>10,.0f} samples/s (one process)")
    print(f"trainer {trainer_rate:>10,.1f} samples/s ({where}, batch {args.batch}, loss {total:.3f})")
    print(f"loader / trainer = {loader_rate / trainer_rate:,.0f}x")


if __name__ == "__main__":
    main()
