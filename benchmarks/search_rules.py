"""Grid search under other settings of ``solver="auto"``'s rules, point by point, and each point's best.

``alphaseed.GridSearchCV(SVC(), grid)`` with every default runs on the same splits as
``bench_search.py`` (StratifiedKFold shuffled with the config seed), once with the rules as they
are ("defaults") and once under each ``--rule``: a name and the ``solver.training`` constants it
sets for that search only (``AUTO_DIRECT_FREE_SHARE``: 0 starts a chain's run in the active set
only where the run before left no support vector free, 1 wherever the run before was a tail;
``AUTO_DIRECT_PATH_TURNS``: the share of the free set the path must carry out of its box for a
run the active set finished to send the next C straight on whatever its free set, inf never;
``AUTO_DIRECT_ITERATIONS``: how long a run SMO ended must have been to count as a tail;
``AUTO_SMO_ITERATIONS`` and ``AUTO_SMO_MIN_ITERATIONS``: SMO's budget before the finish;
``AUTO_FINISH_ROW_VALUE`` and ``AUTO_FINISH_FACTOR_FLOP``: the finish's start priced in SMO
iterations, which SMO goes on past its budget to spend, 0 never). Each
point's time is its fits' (``cv_results_``'s ``mean_fit_time`` times the splits), the median over
``--repeats``; the rules alternate within each repeat, each repeat starting at the next (a repeat
count that is a multiple of the rules' gives each rule each place equally). The sum over the
points of each point's fastest setting bounds what choosing among these settings point by point
could save: it takes each point's seed as fixed, and a minimum of noisy medians is biased low.

Prints each rule's searches, the points where the rules differ, the sums, and how many points each
rule scores unlike the defaults. Writes the points to results/bench/search_rules.csv and every
search, with its place in its repeat and the search before it, to search_rules-searches.csv beside
it.

    python benchmarks/search_rules.py --case adult:5000 --C=-5:15:2 --gamma=3:-15:-2 \\
        --rule never:AUTO_DIRECT_FREE_SHARE=0 --rule always:AUTO_DIRECT_FREE_SHARE=1
    python benchmarks/search_rules.py --case adult --folds 1 --C=-5:11:2 --gamma=-5:-5:1 --threads 2 \\
        --repeats 2 --rule budget6:AUTO_SMO_ITERATIONS=6,AUTO_SMO_MIN_ITERATIONS=15000

(the second: one gamma column's chain on the first of 5 folds of all of Adult; with ``--threads``
above 1 and several gamma columns, the columns' points overlap in time).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from common import ROOT, add_grid_arguments, check_grid_arguments, grid_points, load_case, search_splits, write_csv

# The constants a rule may set: auto's, none of which changes what is optimal.
RULE_CONSTANTS = ("AUTO_DIRECT_FREE_SHARE", "AUTO_DIRECT_PATH_TURNS", "AUTO_DIRECT_ITERATIONS",
                  "AUTO_SMO_ITERATIONS", "AUTO_SMO_MIN_ITERATIONS", "AUTO_FINISH_ROW_VALUE",
                  "AUTO_FINISH_FACTOR_FLOP")
BASELINE = "defaults"
# A point is shown where its slowest rule takes this much longer than its fastest, and
# SHOWN_MARGIN seconds more: shorter points differ by the clock's noise alone.
SHOWN_SPREAD = 1.1
SHOWN_MARGIN = 0.01


def parse_rule(text: str, training, parser: argparse.ArgumentParser) -> tuple[str, dict]:
    """``name:CONSTANT=value,...`` as (name, {constant: value}); an integer constant takes only a
    whole number, as the solver uses it as a count."""
    name, _, settings = text.partition(":")
    rule = {}
    for setting in filter(None, settings.split(",")):
        constant, _, value = setting.partition("=")
        if constant not in RULE_CONSTANTS:
            parser.error(f"--rule {text!r}: {constant!r} is not one of {', '.join(RULE_CONSTANTS)}")
        if constant in rule:
            parser.error(f"--rule {text!r}: {constant} is set twice")
        try:
            number = float(value)
        except ValueError:
            parser.error(f"--rule {text!r}: {constant}'s value {value!r} is not a number")
        if isinstance(getattr(training, constant), int):
            if not number.is_integer():
                parser.error(f"--rule {text!r}: {constant} counts iterations; {value!r} is not a whole number")
            number = int(number)
        rule[constant] = number
    if not name or not rule:
        parser.error(f"--rule {text!r}: write it name:CONSTANT=value[,CONSTANT=value]")
    if name == BASELINE:
        parser.error(f"--rule {text!r}: {BASELINE!r} names the search with the rules as they are")
    return name, rule


def main() -> None:
    import numba

    import alphaseed
    from alphaseed.errors import ConfigError
    from alphaseed.pipeline.grid import log2_range
    from alphaseed.solver import training

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_grid_arguments(parser, case="adult:3000", C="-1:11:4", gamma="-1:-13:-4")
    parser.add_argument("--rule", action="append", default=[], dest="rules",
                        help="name:CONSTANT=value[,CONSTANT=value], repeat for more")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1,
                        help="n_jobs and Numba's threads; 1 keeps each point's time its own")
    parser.add_argument("--out", type=Path, default=ROOT / "results" / "bench" / "search_rules.csv")
    args = parser.parse_args()
    check_grid_arguments(parser, args)
    if args.repeats < 1 or args.threads < 1:
        parser.error(f"--repeats and --threads must be at least 1; got {args.repeats} and {args.threads}")
    try:
        grid = {"C": [2.0**v for v in log2_range(args.C)], "gamma": [2.0**v for v in log2_range(args.gamma)]}
    except ConfigError as error:
        parser.error(str(error))
    rules = {BASELINE: {}}
    for text in args.rules:
        name, constants = parse_rule(text, training, parser)
        if name in rules:
            parser.error(f"--rule {text!r}: the name {name!r} is taken by an earlier rule")
        rules[name] = constants
    if args.repeats % len(rules):
        print(f"note: {args.repeats} repeats of {len(rules)} rules give them the places in a repeat unequally",
              file=sys.stderr)
    numba.set_num_threads(args.threads)
    name, _, size = args.case.partition(":")
    X, y, _, seed = load_case(name, int(size) if size else None)
    splits = search_splits(X, y, args.k, seed, args.folds)

    def search(points):
        found = alphaseed.GridSearchCV(alphaseed.SVC(), points, cv=splits, refit=False, n_jobs=args.threads)
        start = time.perf_counter()
        found.fit(X, y)
        return time.perf_counter() - start, found.cv_results_

    search({"C": grid["C"][:1], "gamma": grid["gamma"][:1]})   # compiled, pools started
    searches, per_point = [], []
    for repeat in range(args.repeats):
        # each repeat starts at the next rule: at one run the first search of every repeat took
        # longer at its first points, by a cause not found, and that must not fall on one rule
        order = list(rules)[repeat % len(rules):] + list(rules)[:repeat % len(rules)]
        before = "warm-up" if repeat == 0 else searches[-1]["rule"]
        for place, rule in enumerate(order):
            kept = {constant: getattr(training, constant) for constant in rules[rule]}
            vars(training).update(rules[rule])
            try:
                search_seconds, results = search(grid)
            finally:
                vars(training).update(kept)
            best = int(np.argmax(results["mean_test_score"]))
            searches.append({"rule": rule, "repeat": repeat, "place": place, "after": before,
                             "seconds": search_seconds, "iterations": int(results["total_iterations"].sum()),
                             "best_log2_C": np.log2(results["param_C"][best]),
                             "best_log2_gamma": np.log2(results["param_gamma"][best])})
            before = rule
            per_point.append(grid_points(results, len(splits)).assign(rule=rule))
            print(f"  {repeat} {rule:>10} {search_seconds:8.3f} s", flush=True)
    runs = pd.DataFrame(searches)
    print(runs.groupby("rule", sort=False).agg(seconds=("seconds", "median"), iterations=("iterations", "first"),
                                               best_log2_C=("best_log2_C", "first"),
                                               best_log2_gamma=("best_log2_gamma", "first")).to_string())
    points = (pd.concat(per_point).groupby(["log2_gamma", "log2_C", "rule"], sort=False)
              .agg(fit_seconds=("fit_seconds", "median"), iterations=("iterations", "first"),
                   accuracy=("accuracy", "first")).reset_index())
    point_seconds = points.pivot(index=["log2_gamma", "log2_C"], columns="rule", values="fit_seconds")[list(rules)]
    spread = point_seconds.max(axis=1) > SHOWN_SPREAD * point_seconds.min(axis=1) + SHOWN_MARGIN
    print(point_seconds[spread].round(3).to_string())
    totals = point_seconds.sum()
    print("fit seconds summed over the points:", ", ".join(f"{rule} {totals[rule]:.3f}" for rule in rules) +
          f"; the best rule at each point {point_seconds.min(axis=1).sum():.3f}")
    accuracy = points.pivot(index=["log2_gamma", "log2_C"], columns="rule", values="accuracy")
    print("points scoring unlike the defaults:",
          ", ".join(f"{rule} {int((accuracy[rule] != accuracy[BASELINE]).sum())}" for rule in list(rules)[1:]))
    settings = {rule: ",".join(f"{c}={v}" for c, v in constants.items()) for rule, constants in rules.items()}
    for table in (points, runs):
        table.insert(0, "case", args.case)
        table.insert(1, "folds", len(splits))
        table.insert(2, "threads", args.threads)
        table.insert(table.columns.get_loc("rule") + 1, "settings", table["rule"].map(settings))
    points.insert(3, "repeats", args.repeats)
    write_csv(points, args.out)
    write_csv(runs, args.out.with_name(f"{args.out.stem}-searches.csv"))


if __name__ == "__main__":
    main()
