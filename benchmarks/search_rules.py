"""The defaults' grid search under other settings of ``solver="auto"``'s rules, point by point, and
what taking the best setting at every point would save: a bound on what a finer rule choosing
among them could gain (a point's choice also changes the seeds of the points after it, which this
takes as fixed).

``alphaseed.GridSearchCV(SVC(), grid)`` with every default runs on the same splits as
``bench_search.py`` (StratifiedKFold shuffled with the config seed), once with the rules as they
are ("defaults") and once under each ``--rule``: a name and the ``solver.training`` constants it
sets for that search only (``AUTO_DIRECT_FREE_SHARE``: 0 never starts a chain's run in the active
set, 1 starts it there wherever the run before was a tail; ``AUTO_SMO_ITERATIONS`` and
``AUTO_SMO_MIN_ITERATIONS``: SMO's budget before the finish). Each point's time is its fits'
(``cv_results_``'s ``mean_fit_time`` times the splits), the median over ``--repeats``; the rules
alternate within each repeat, each repeat starting at the next. Prints each rule's search, the
points where the rules differ, the sum of the per-point best, and how many points each rule scores
unlike the defaults, and writes results/bench/search_rules.csv.

    python benchmarks/search_rules.py --case adult:5000 --C=-5:15:2 --gamma=3:-15:-2 \\
        --rule never:AUTO_DIRECT_FREE_SHARE=0 --rule always:AUTO_DIRECT_FREE_SHARE=1
    python benchmarks/search_rules.py --case adult --folds 1 --C=-5:11:2 --gamma=-5:-5:1 --threads 2 \\
        --repeats 2 --rule budget6:AUTO_SMO_ITERATIONS=6,AUTO_SMO_MIN_ITERATIONS=15000

(the second: one gamma column's chain on the first of 5 folds of all of Adult).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd
from common import ROOT, load_case, write_csv

# The constants a rule may set: auto's, none of which changes what is optimal.
RULE_CONSTANTS = ("AUTO_DIRECT_FREE_SHARE", "AUTO_DIRECT_ITERATIONS", "AUTO_SMO_ITERATIONS",
                  "AUTO_SMO_MIN_ITERATIONS")
# A point is shown where its slowest rule takes this much longer than its fastest, and 10 ms more.
SHOWN_SPREAD = 1.1


def parse_rule(text: str, training) -> tuple[str, dict]:
    """``name:CONSTANT=value,...`` as (name, {constant: value in the constant's type})."""
    name, _, settings = text.partition(":")
    rule = {}
    for setting in filter(None, settings.split(",")):
        constant, _, value = setting.partition("=")
        if constant not in RULE_CONSTANTS or not value:
            raise SystemExit(f"--rule {text!r}: each setting is CONSTANT=value, CONSTANT one of "
                             f"{', '.join(RULE_CONSTANTS)}")
        kind = type(getattr(training, constant))
        rule[constant] = kind(float(value))
    if not name or not rule:
        raise SystemExit(f"--rule {text!r}: write it name:CONSTANT=value[,CONSTANT=value]")
    return name, rule


def main() -> None:
    import numba
    from sklearn.model_selection import StratifiedKFold

    import alphaseed
    from alphaseed.pipeline.grid import log2_range
    from alphaseed.solver import training

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", default="adult:3000", help="dataset[:stratified sample size]")
    parser.add_argument("--C", default="-1:11:4", help="log2 C, begin:end:step (grid.py's)")
    parser.add_argument("--gamma", default="-1:-13:-4", help="log2 gamma, begin:end:step")
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--folds", type=int, help="search on the first FOLDS of the k splits only (a look "
                        "at full size within a sitting); all k if not given")
    parser.add_argument("--rule", action="append", default=[], dest="rules",
                        help="name:CONSTANT=value[,CONSTANT=value], repeat for more")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1,
                        help="n_jobs and Numba's threads; 1 keeps each point's time its own")
    parser.add_argument("--out", default=str(ROOT / "results" / "bench" / "search_rules.csv"))
    args = parser.parse_args()
    if args.folds is not None and not 1 <= args.folds <= args.k:
        parser.error(f"--folds must lie in [1, k = {args.k}]; got {args.folds}")
    rules = dict([("defaults", {})] + [parse_rule(text, training) for text in args.rules])
    numba.set_num_threads(args.threads)
    name, _, size = args.case.partition(":")
    X, y, _, seed = load_case(name, int(size) if size else None)
    splits = list(StratifiedKFold(args.k, shuffle=True, random_state=seed).split(X, y))[:args.folds]
    grid = {"C": [2.0**v for v in log2_range(args.C)], "gamma": [2.0**v for v in log2_range(args.gamma)]}

    def search(grid):
        found = alphaseed.GridSearchCV(alphaseed.SVC(), grid, cv=splits, refit=False, n_jobs=args.threads)
        start = time.perf_counter()
        found.fit(X, y)
        return time.perf_counter() - start, found.cv_results_

    search({"C": grid["C"][:1], "gamma": grid["gamma"][:1]})   # compiled, pools started
    searches, points = [], []
    for repeat in range(args.repeats):
        # each repeat starts at the next rule: a search's place in the order can cost its first
        # points time (the first of each repeat did, once, by a cause not found), and that must
        # not fall on one rule every time
        order = list(rules)[repeat % len(rules):] + list(rules)[:repeat % len(rules)]
        for rule in order:
            constants = rules[rule]
            kept = {constant: getattr(training, constant) for constant in constants}
            vars(training).update(constants)
            try:
                seconds, results = search(grid)
            finally:
                vars(training).update(kept)
            best = int(np.argmax(results["mean_test_score"]))
            searches.append({"rule": rule, "repeat": repeat, "seconds": seconds,
                             "iterations": int(results["total_iterations"].sum()),
                             "best_log2_C": np.log2(results["param_C"][best]),
                             "best_log2_gamma": np.log2(results["param_gamma"][best])})
            points.append(pd.DataFrame({
                "rule": rule, "repeat": repeat, "log2_C": np.log2(results["param_C"].astype(float)),
                "log2_gamma": np.log2(results["param_gamma"].astype(float)),
                "fit_seconds": results["mean_fit_time"] * len(splits),
                "iterations": results["total_iterations"], "accuracy": 100.0 * results["mean_test_score"]}))
            print(f"  {repeat} {rule:>10} {seconds:8.3f} s", flush=True)
    runs = pd.DataFrame(searches)
    print(runs.groupby("rule", sort=False).agg(seconds=("seconds", "median"), iterations=("iterations", "first"),
                                               best_log2_C=("best_log2_C", "first"),
                                               best_log2_gamma=("best_log2_gamma", "first")).to_string())
    table = (pd.concat(points).groupby(["log2_gamma", "log2_C", "rule"], sort=False)
             .agg(fit_seconds=("fit_seconds", "median"), iterations=("iterations", "first"),
                  accuracy=("accuracy", "first")).reset_index())
    seconds = table.pivot(index=["log2_gamma", "log2_C"], columns="rule", values="fit_seconds")[list(rules)]
    spread = seconds.max(axis=1) > SHOWN_SPREAD * seconds.min(axis=1) + 0.01
    print(seconds[spread].round(3).to_string())
    totals = seconds.sum()
    accuracy = table.pivot(index=["log2_gamma", "log2_C"], columns="rule", values="accuracy")
    differing = {rule: int((accuracy[rule] != accuracy["defaults"]).sum()) for rule in rules}
    print("fit seconds summed over the points:", ", ".join(f"{rule} {totals[rule]:.3f}" for rule in rules) +
          f"; the best rule at each point {seconds.min(axis=1).sum():.3f}")
    print("points scoring unlike the defaults:", ", ".join(f"{rule} {n}" for rule, n in differing.items()))
    table.insert(0, "case", args.case)
    table.insert(1, "folds", len(splits))
    write_csv(table, args.out)


if __name__ == "__main__":
    main()
