"""``import-lc0``: convert an lc0 ``.pb.gz`` network into a Sightline checkpoint."""

from __future__ import annotations

import argparse
import resource

from analysis.checkpoint import CheckpointError
from analysis.cli import CommandError


def register(subparsers) -> None:
    cmd = subparsers.add_parser("import-lc0", help="convert an lc0 .pb.gz network to a .safetensors checkpoint")
    cmd.add_argument("net", metavar="NET.pb.gz")
    cmd.add_argument("--out", required=True, help="path of the .safetensors file to write")
    cmd.add_argument("--float16", action="store_true",
                     help="store weights as float16 (refused if outputs move by more than 1e-3)")
    cmd.set_defaults(handler=run_import)


def run_import(args: argparse.Namespace) -> int:
    from analysis.models.lc0.convert import convert, load_converted

    try:
        path = convert(args.net, args.out, float16=args.float16)
        _, meta = load_converted(path)
    except CheckpointError as exc:
        raise CommandError(str(exc)) from None
    except OSError as exc:
        raise CommandError(f"cannot write {args.out}: {exc.strerror}") from None
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    fmt = meta.provenance["format"]
    print(f"wrote {path} ({meta.family}, {fmt['network']}, {fmt['input']}, "
          f"{meta.provenance['storage']}; peak memory {peak_mib:.0f} MiB)")
    return 0
