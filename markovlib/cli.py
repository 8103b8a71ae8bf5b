"""Command line: ``python -m markovlib {bench,train,sweep} ...``.

Each sub-command lives with the module it exercises; this file only parses arguments and dispatches. A bad
argument fails like a command-line tool: one line ``python -m markovlib: error: ...`` naming the argument and
what is allowed, on stderr, exit status 2, no traceback (argparse's own errors and every ValueError raised while
the arguments are validated, before any work starts).
"""
from __future__ import annotations

import argparse
import re
import sys

PROG = "python -m markovlib"


class UsageError(Exception):
    """A bad command-line argument (printed as one error line, exit status 2)."""


class _Parser(argparse.ArgumentParser):
    """argparse with a one-line error (no usage block): ``python -m markovlib: error: <message>``."""

    def error(self, message):
        raise UsageError(message)


def build_parser() -> argparse.ArgumentParser:
    from .transformer.train_cli import add_train_arguments

    parser = _Parser(prog=PROG, description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    bench = sub.add_parser("bench", help="print benchmark figures beside a baseline measured in the same run")
    bench.add_argument("what", choices=["sampler", "flow", "train", "relu-grid"])
    bench.add_argument("--quick", action="store_true", help="smaller sizes (for smoke tests)")
    bench.add_argument("--device", default=None,
                       help="bench train only: auto, cpu, cuda[:N], mps (default: auto); on an accelerator "
                            "the CPU figure is printed beside it")
    bench.add_argument("--threads", type=int, default=1, help="bench train only: CPU threads, >= 1 (default 1)")

    train = sub.add_parser("train", help="train the single-layer transformer on a binary Markov chain")
    add_train_arguments(train)

    sweep = sub.add_parser("sweep", help="run a papermill notebook over a parameter grid on dask")
    sweep.add_argument("notebook")
    sweep.add_argument("--grid", action="append", default=[], metavar="NAME=V1,V2,...")
    sweep.add_argument("--out", required=True)
    sweep.add_argument("--scheduler", default=None, help="address of an existing dask scheduler")
    sweep.add_argument("--workers", type=int, default=2, help="LocalCluster workers (ignored with --scheduler)")
    sweep.add_argument("--timeout", type=int, default=1800, help="seconds per notebook")
    return parser


def _name_argument(message: str, parser: argparse.ArgumentParser | None) -> str:
    """Prefix a validation message that starts with an option's name by ``argument --option:``."""
    message = " ".join(str(message).split())  # one line
    m = re.match(r"([A-Za-z_][A-Za-z0-9_]*)\b", message)
    if m and parser is not None and not message.startswith("argument "):
        dests = {a.dest: a.option_strings[0] for a in parser._actions if a.option_strings}
        if m.group(1) in dests:
            return f"argument {dests[m.group(1)]}: {message}"
    return message


def _fail(message, parser=None) -> int:
    print(f"{PROG}: error: {_name_argument(message, parser)}", file=sys.stderr)
    return 2


def _subparser(parser, name):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action.choices.get(name)
    return None


def main(argv=None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except UsageError as exc:
        return _fail(exc)
    sub = _subparser(parser, args.command)
    if args.command == "bench":
        if args.what != "train" and (args.device is not None or args.threads != 1):
            return _fail(f"argument --device/--threads: only for 'bench train', not 'bench {args.what}'")
        if args.what == "sampler":
            from .transformer.benchmarks import bench_sampler

            bench_sampler(quick=args.quick)
            return 0
        if args.what == "flow":
            from .transformer.benchmarks import bench_flow

            bench_flow(quick=args.quick)
            return 0
        if args.what == "relu-grid":
            from .richlazy.relu_grid import bench_relu_grid

            bench_relu_grid(quick=args.quick)
            return 0
        from .numerics import checks
        from .transformer.benchmarks import bench_train
        from .transformer.device import pick_device

        try:
            device = pick_device(args.device)
            threads = checks.positive_int("threads", args.threads)
        except ValueError as exc:
            return _fail(exc, sub)
        bench_train(quick=args.quick, device=device, threads=threads)
        return 0
    if args.command == "train":
        from .transformer.train_cli import build_trainer, run_trainer

        try:
            trainer = build_trainer(args)
        except ValueError as exc:
            return _fail(exc, sub)
        run_trainer(trainer)
        return 0
    if args.command == "sweep":
        from .book.sweep import check_sweep_args, sweep_from_args

        try:
            check_sweep_args(args)
        except ValueError as exc:
            return _fail(exc, sub)
        return sweep_from_args(args)
    return 2  # pragma: no cover (argparse requires a command)


if __name__ == "__main__":
    sys.exit(main())
