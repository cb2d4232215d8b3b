"""``python -m analysis``: one sub-command per module in this package.

Each command module defines ``register(subparsers)``, which adds its parser
and sets ``handler`` to a function taking the parsed arguments and returning
an exit code. A command that meets bad input raises ``CommandError``: the CLI
prints its one-line message to stderr and exits with status 2.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

# Modules under analysis.cli, in the order ``--help`` lists them.
COMMAND_MODULES = [
    "model_cmds",
    "heads_cmd",
    "lens_cmd",
    "probe_cmd",
    "data_cmds",
    "corpus_cmds",
    "train_cmd",
    "ablation_cmd",
    "selfplay_cmd",
    "eval_cmds",
    "elo_cmd",
    "value_cmds",
    "search_cmds",
    "import_cmds",
    "giraffe_cmds",
    "study_cmd",
]


class CommandError(Exception):
    """Bad user input: printed as one line, exit status 2."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m analysis", description=__doc__.splitlines()[0])
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(f"analysis.cli.{name}").register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.handler(args) or 0)
    except CommandError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # output piped into `head` and the like
        sys.stdout = open(os.devnull, "w")
        return 0
