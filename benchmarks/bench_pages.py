"""Mapping a Gram matrix's memory: huge pages against 4 KB pages, with the memory just used or idle.

A virtual machine's host may take back the memory its guest frees (a balloon's free page reporting,
as on the 2-core development VMs): the next first touch of a page then waits for the host as well.
This measures both effects, one after the other in one process, nothing else running:

- ``reused``: ``--gb`` of memory touched and freed once (untimed), then right away an n x n float32
  array mapped up front, as ``alphaseed.kernel.gram.new_gram`` maps the Gram matrix (``huge``) and
  in 4 KB pages by Linux's MAP_POPULATE (``4k``);
- ``idle``: the same after ``--idle`` seconds with nothing touched, long enough for such a host to
  take the freed memory back.

Each of the ``--rounds`` rounds measures every (state, pages) once, alternating; the table (median
and every time) goes to stdout and ``results/bench/pages.csv``.

    python benchmarks/bench_pages.py                    # 60,000 digits' Gram matrix: 14.4 GB
    python benchmarks/bench_pages.py --n 20000 --gb 4 --rounds 3
"""

from __future__ import annotations

import argparse
import mmap
import time

import numpy as np

from common import ROOT, write_csv


def touch_and_free(gb: float) -> None:
    """Touch one byte in every page of ``gb`` gigabytes, then free them."""
    pages = np.empty(int(gb * 1e9), dtype=np.uint8)
    pages[::mmap.PAGESIZE] = 0
    del pages


def map_up_front(n: int, pages: str) -> float:
    """Seconds to map an n x n float32 array's pages up front, in huge or 4 KB pages; the
    array is unmapped after."""
    from alphaseed.kernel.gram import new_gram

    start = time.perf_counter()
    if pages == "huge":
        K = new_gram(n)
    else:
        flags = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | mmap.MAP_POPULATE
        K = mmap.mmap(-1, 4 * n * n, flags=flags)
    seconds = time.perf_counter() - start
    del K
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=60000, help="the Gram matrix's instances")
    parser.add_argument("--gb", type=float, default=20.0, help="memory touched and freed before 'reused'")
    parser.add_argument("--idle", type=float, default=15.0, help="seconds idle before 'idle'")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    import pandas as pd

    rows = []
    for round_ in range(args.rounds):
        for state in ("reused", "idle"):
            for pages in ("huge", "4k") if round_ % 2 == 0 else ("4k", "huge"):
                if state == "reused":
                    touch_and_free(args.gb)
                else:
                    time.sleep(args.idle)
                seconds = map_up_front(args.n, pages)
                rows.append({"state": state, "pages": pages, "seconds": seconds})
                print(f"round {round_ + 1}, {state}, {pages} pages: {seconds:.2f} s", flush=True)
    times = pd.DataFrame(rows)
    table = (times.groupby(["state", "pages"], sort=False).seconds
             .agg(median="median", every=lambda s: " ".join(f"{v:.2f}" for v in s)).reset_index())
    table.insert(2, "gb_mapped", 4 * args.n**2 / 1e9)
    print(table.to_string(index=False, float_format=lambda v: f"{v:.2f}"))
    write_csv(table, ROOT / "results" / "bench" / "pages.csv")


if __name__ == "__main__":
    main()
