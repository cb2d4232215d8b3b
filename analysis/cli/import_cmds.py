"""``import``: convert another program's network file (a family's importer, e.g. ``import-lc0``
for lc0's ``.pb.gz``) into a Sightline checkpoint."""

from __future__ import annotations

import argparse
import resource

from analysis.cli import CommandError
from analysis.models import IMPORTERS


def register(subparsers) -> None:
    names = sorted(IMPORTERS)
    suffixes = sorted({s for endings in IMPORTERS.values() for s in endings})
    cmd = subparsers.add_parser("import", aliases=[f"import-{name}" for name in names],
                                help=f"convert a network file ({', '.join(suffixes)}) to a .safetensors checkpoint")
    cmd.add_argument("net", metavar="NET")
    cmd.add_argument("--out", required=True, help="path of the .safetensors file to write")
    cmd.add_argument("--float16", action="store_true",
                     help="store weights as float16 (refused if outputs move by more than 1e-3)")
    cmd.set_defaults(handler=run_import)


def run_import(args: argparse.Namespace) -> int:
    from analysis.checkpoint import CheckpointError, load_checkpoint
    from analysis.models import importer_for

    importer = importer_for(args.net)
    if importer is None:
        raise CommandError(f"{args.net}: no importer reads this kind of file (by its name's ending)")
    try:
        path = importer.convert(args.net, args.out, float16=args.float16)
        _, meta = load_checkpoint(path)
    except CheckpointError as exc:
        raise CommandError(str(exc)) from None
    except OSError as exc:
        raise CommandError(f"cannot read {args.net} or write {args.out}: {exc.strerror}") from None
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"wrote {path} ({meta.family}, {meta.input_encoding}, {meta.provenance.get('storage', 'float32')}; "
          f"peak memory {peak_mib:.0f} MiB)")
    return 0
