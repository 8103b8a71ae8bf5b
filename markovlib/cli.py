"""Command line: ``python -m markovlib {bench,train,sweep} ...``.

Each sub-command lives with the module it exercises; this file only parses arguments and dispatches.
"""
from __future__ import annotations

import argparse
import sys


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m markovlib", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    bench = sub.add_parser("bench", help="print benchmark figures beside a baseline measured in the same run")
    bench.add_argument("what", choices=["sampler", "flow", "train"])
    bench.add_argument("--quick", action="store_true", help="smaller sizes (for smoke tests)")

    train = sub.add_parser("train", help="train the single-layer transformer on a binary Markov chain")
    from .trainer import add_train_arguments

    add_train_arguments(train)

    sweep = sub.add_parser("sweep", help="run a papermill notebook over a parameter grid on dask")
    sweep.add_argument("notebook")
    sweep.add_argument("--grid", action="append", default=[], metavar="NAME=V1,V2,...")
    sweep.add_argument("--out", required=True)
    sweep.add_argument("--scheduler", default=None, help="address of an existing dask scheduler")
    sweep.add_argument("--workers", type=int, default=2, help="LocalCluster workers (ignored with --scheduler)")
    sweep.add_argument("--timeout", type=int, default=1800, help="seconds per notebook")
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "bench":
        if args.what == "sampler":
            from .benchmarks import bench_sampler as run
        elif args.what == "flow":
            from .benchmarks import bench_flow as run
        else:
            from .trainer import bench_train as run
        run(quick=args.quick)
        return 0
    if args.command == "train":
        from .trainer import train_from_args

        train_from_args(args)
        return 0
    if args.command == "sweep":
        from .sweep import sweep_from_args

        return sweep_from_args(args)
    return 2


if __name__ == "__main__":
    sys.exit(main())
