"""The ``alphaseed`` command: ``alphaseed cv`` runs one cross-validation and writes its run
record; ``alphaseed prepare`` fetches, verifies and converts named datasets.

Errors the user can fix (``AlphaseedError``) print one line and exit with status 2, as
argparse does for bad arguments.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .errors import AlphaseedError, ConfigError

METHODS = ("libsvm", "cold", "ato", "mir", "sir", "avg", "top")


def _k(text: str):
    if text == "loo":
        return text
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer >= 2 or 'loo', not {text!r}") from None


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="alphaseed",
        description="SVM k-fold cross-validation by alpha seeding (Wen et al., AAAI 2017).",
    )
    commands = parser.add_subparsers(dest="command", required=True)

    cv = commands.add_parser("cv", help="run one cross-validation and write its run record")
    source = cv.add_mutually_exclusive_group(required=True)
    source.add_argument("--dataset", metavar="NAME", help="a dataset of the config file")
    source.add_argument("--data", metavar="FILE", type=Path,
                        help="a LibSVM-format file with labels +1/-1 (needs --C and --gamma)")
    cv.add_argument("--config", metavar="FILE", type=Path,
                    help="config file (default: config.yaml of the checkout you are in)")
    cv.add_argument("--C", type=float, help="penalty C (default: the dataset's config entry)")
    cv.add_argument("--gamma", type=float, help="kernel gamma (default: the dataset's config entry)")
    cv.add_argument("--k", type=_k, default=10, help="number of folds, or 'loo' (default 10)")
    cv.add_argument("--method", choices=METHODS, default="cold")
    cv.add_argument("--seed", type=int, help="seed of folds and subsample (default: config seed, or 0)")
    cv.add_argument("--max-rounds", type=int, metavar="N",
                    help="run only the first N rounds and estimate the total time")
    cv.add_argument("--subsample", type=int, metavar="M",
                    help="use a stratified sample of M instances")
    cv.add_argument("--eps", type=float, help="stopping tolerance (default: config, or 0.001)")
    cv.add_argument("--cache-mb", type=float, help="kernel cache in MB (default: config, or 100)")
    cv.add_argument("--no-shrinking", action="store_true", help="switch LibSVM's shrinking off")
    cv.add_argument("--kernel-mode", choices=("cache", "shared", "gram", "auto"), default="auto",
                    help="how our solver keeps kernel values (default: auto; cache is the paper's setting)")
    cv.add_argument("--out", type=Path, required=True, metavar="FILE", help="run record (JSON)")

    prepare = commands.add_parser("prepare", help="fetch, verify and convert named datasets")
    prepare.add_argument("names", nargs="+", metavar="NAME")
    prepare.add_argument("--config", metavar="FILE", type=Path)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.command == "cv":
            _cv(args)
        else:
            _prepare(args)
    except AlphaseedError as error:
        print(f"alphaseed: error: {error}", file=sys.stderr)
        return 2
    return 0


def _prepare(args) -> None:
    from .config import load_config
    from .data import prepare_dataset

    config = load_config(args.config)
    for name in args.names:
        print(prepare_dataset(name, config))


def _setting(given, section: dict, key: str, default):
    return given if given is not None else section.get(key, default)


def _cv(args) -> None:
    from . import data
    from .cv import cross_validate
    from .folds import stratified_subsample
    from .provenance import collect_provenance
    from .records import build_run_record, write_run_record

    if args.dataset is not None:
        from .config import dataset_entry, load_config

        config = load_config(args.config)
        entry = dataset_entry(config, args.dataset)
        X, y = data.load_dataset(args.dataset, config)
        name, fingerprint = args.dataset, entry.get("fingerprint")
        C = _setting(args.C, entry, "C", None)
        gamma = _setting(args.gamma, entry, "gamma", None)
        described = {"file": str(args.config or "config.yaml"), "dataset": entry,
                     "solver": config.get("solver", {}), "seed": config.get("seed", 0)}
    else:
        if args.C is None or args.gamma is None:
            raise ConfigError("--data needs --C and --gamma (no config entry gives them)")
        config = {}
        X, y = data.load_dataset(args.data)
        name, C, gamma = args.data.stem, args.C, args.gamma
        fingerprint = data.fingerprint(y, X)
        described = {"file": None, "data": str(args.data)}
    solver = config.get("solver", {})
    seed = _setting(args.seed, config, "seed", 0)
    if args.subsample is not None:
        keep = stratified_subsample(y, args.subsample, seed)
        X, y = X[keep], y[keep]

    def progress(h: int, rounds: int, iterations: int, elapsed: float) -> None:
        print(f"{name} k={args.k} {args.method}: round {h}/{rounds}, {iterations} iterations, "
              f"{elapsed:.2f} s elapsed", file=sys.stderr, flush=True)

    result = cross_validate(
        X, y, C, gamma, args.k, args.method, seed=seed, max_rounds=args.max_rounds,
        progress=progress,
        eps=_setting(args.eps, solver, "eps", 1e-3),
        cache_mb=_setting(args.cache_mb, solver, "cache_mb", 100.0),
        shrinking=False if args.no_shrinking else solver.get("shrinking", True),
        kernel_mode=args.kernel_mode,
    )
    provenance = collect_provenance(described, fingerprint, result.started_utc, result.finished_utc)
    record = build_run_record(result, name, provenance, subsample=args.subsample)
    write_run_record(args.out, record)
    estimated = " (estimated)" if result.estimated else ""
    print(f"{name} k={args.k} {args.method}: accuracy {result.accuracy:.2f}%, "
          f"{result.iterations} iterations, {result.seconds:.3f} s{estimated} -> {args.out}")


if __name__ == "__main__":
    sys.exit(main())
