"""The Gram matrix alone: all 60,000 MNIST digits' float32 kernel matrix, this checkout against another.

The data is ``mnist_scale``'s pixels (float data: every value from a BLAS product is certified, see
``alphaseed.kernel.gram``) at the config's gamma, or a stratified sample of them (``--subsample``).
Each checkout builds the matrix ``--repeats`` times into one array whose pages are already mapped, in a
fresh subprocess whose threads are set before any library loads, after one untimed build of a small
sample (compiling). With ``--against`` another checkout (a ``git worktree``) runs alternately with this
one, ``--rounds`` times each, so that both meet the same drift of the machine; its matrix must be the
same bit for bit (a checksum over a grid of values). The table (median seconds per checkout,
``speedup`` = the other's median over this one's) goes to stdout and ``results/bench/gram.csv``.

    python benchmarks/bench_gram.py
    python benchmarks/bench_gram.py --against /tmp/base --rounds 2   # git worktree add --detach /tmp/base <commit>
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from bench_multiclass import load_digits
from common import ROOT, write_csv

# Rows of the untimed first build, which compiles or loads the compiled code.
WARMUP_ROWS = 2000


def build(data: Path, repeats: int) -> dict:
    """Runs inside the child process: the seconds of each build and a checksum of the matrix."""
    from alphaseed.kernel import squared_norms
    from alphaseed.kernel.gram import gram_matrix, new_gram

    saved = np.load(data)
    X, gamma = saved["X"], float(saved["gamma"])
    sqnorm = squared_norms(X)
    gram_matrix(X[:WARMUP_ROWS], sqnorm[:WARMUP_ROWS], gamma, False)
    K = new_gram(X.shape[0])
    seconds = []
    for _ in range(repeats):
        start = time.perf_counter()
        gram_matrix(X, sqnorm, gamma, False, out=K)
        seconds.append(time.perf_counter() - start)
    checksum = float(K[::101, ::7].astype(np.float64).sum())
    return {"seconds": seconds, "checksum": checksum}


def run_checkout(source: Path, data: Path, repeats: int, threads: int) -> dict:
    """One child process on the package under ``source`` (a checkout's ``src``)."""
    env = dict(os.environ, PYTHONPATH=str(source), OMP_NUM_THREADS=str(threads), NUMBA_NUM_THREADS=str(threads))
    command = [sys.executable, __file__, "--child", "--data", str(data), "--repeats", str(repeats)]
    out = subprocess.run(command, env=env, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--subsample", type=int, default=None, help="a stratified sample of this size")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=2, help="builds per child process")
    parser.add_argument("--rounds", type=int, default=1, help="child processes per checkout, alternated")
    parser.add_argument("--against", type=Path, help="another checkout to time alternately with this one")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--data", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(build(args.data, args.repeats)))
        return
    import pandas as pd

    if args.against is not None and not (args.against / "src" / "alphaseed").is_dir():
        parser.error(f"--against {args.against}: no src/alphaseed there (a checkout's root is expected)")
    X, _, _, gamma, _ = load_digits(args.subsample)
    checkouts = {"this": ROOT / "src"} | ({"against": args.against / "src"} if args.against else {})
    seconds = {name: [] for name in checkouts}
    checksums = {}
    with tempfile.TemporaryDirectory() as folder:
        data = Path(folder) / "digits.npz"
        np.savez(data, X=np.ascontiguousarray(X, dtype=np.float64), gamma=gamma)
        for round_ in range(args.rounds):
            for name in (list(checkouts) if round_ % 2 == 0 else list(checkouts)[::-1]):
                result = run_checkout(checkouts[name], data, args.repeats, args.threads)
                seconds[name] += result["seconds"]
                checksums.setdefault(name, result["checksum"])
                print(f"{name}: " + " ".join(f"{s:.2f}" for s in result["seconds"]) + " s", flush=True)
    if len(set(checksums.values())) > 1:
        sys.exit(f"the checkouts' matrices differ: checksums {checksums}")
    table = pd.DataFrame([{"checkout": str(checkouts[name].parent), "n": X.shape[0], "threads": args.threads,
                           "builds": len(times), "median_seconds": float(np.median(times)),
                           "min_seconds": min(times)} for name, times in seconds.items()])
    table["speedup"] = table.median_seconds.iloc[-1] / table.median_seconds
    print(table.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    write_csv(table, ROOT / "results" / "bench" / "gram.csv")


if __name__ == "__main__":
    main()
