"""Estimated totals: how the rounds not run are extrapolated, and how the benchmarks flag them."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from alphaseed import cross_validate
from alphaseed.cv import RoundRecord, RoundSeconds
from alphaseed.cv.estimate import double_sampled, extrapolate, half_width, settled
from alphaseed.cv.cross_validation import _Outcome, _summarise
from alphaseed.errors import ConfigError

REPO = Path(__file__).resolve().parents[1]


def summarise(method: str, n_folds: int, seeds: list[float], rests: list[float], full_model: float = 0.0,
              iterations: list[int] | None = None):
    """``_summarise`` over hand-made rounds with the given seeding and rest seconds (and iterations, 10
    a round unless given)."""
    iterations = iterations or [10] * len(seeds)
    rounds = [
        RoundRecord(round=h, train_size=9, test_size=1, iterations=its, n_sv=3, n_bounded_sv=1, objective=-1.0,
                    rho=0.0, n_correct=1, iteration_cap_hit=False,
                    seconds=RoundSeconds(seed=seed, train=rest))
        for h, (seed, rest, its) in enumerate(zip(seeds, rests, iterations), start=1)
    ]
    n = n_folds
    predictions = np.zeros(n, dtype=np.int8)
    predictions[: len(rounds)] = 1
    engine = SimpleNamespace(seconds_kernel=0.5, seconds_full_model=full_model, seconds_compile=0.0,
                             seconds_conversion=0.0, iterations_full_model=0)
    settings = dict(method=method, k=n_folds, n_folds=n_folds, n=n, dim=2, seed=0, max_rounds=len(rounds), until_interval=None,
                    kernel_mode="cache", C=1.0, gamma=0.5, eps=1e-3, cache_mb=100.0, shrinking=True,
                    folds=np.arange(n), started_utc="")
    return _summarise(_Outcome(rounds, predictions, np.ones(n)), engine, settings)


@pytest.mark.parametrize("method", ["ato", "mir", "sir"])
def test_kfold_seeders_extrapolate_from_their_seeded_rounds_only(method):
    """Catches averaging over every round run: the cold round 1 (rest 4 s, no seeding) would
    make the 7 rounds left cost 2.33 s of rest and 0.33 s of seeding each instead of 1.5 and 0.5."""
    result = summarise(method, 10, seeds=[0.0, 0.25, 0.75], rests=[4.0, 1.0, 2.0])
    assert result.estimated
    assert result.seconds_init == 1.0 + 0.5 * 7
    assert result.seconds_rest == 7.0 + 1.5 * 7
    assert result.seconds == 0.5 + result.seconds_init + result.seconds_rest
    assert result.seconds_measured == 0.5 + 1.0 + 7.0


@pytest.mark.parametrize("method", ["avg", "top", "full"])
def test_full_model_seeders_extrapolate_from_every_round(method):
    """Catches dropping round 1 for avg/top as well: their round 1 is seeded from the full model like
    every other, so skipping it would give 1/3 s of seeding and 4/3 s of rest per round left."""
    result = summarise(method, 8, seeds=[1.0, 0.5, 0.25, 0.25], rests=[4.0, 1.0, 1.0, 2.0], full_model=2.0)
    assert result.seconds_init == 2.0 + 2.0 + 0.5 * 4
    assert result.seconds_rest == 8.0 + 2.0 * 4
    assert result.seconds == 0.5 + result.seconds_init + result.seconds_rest


@pytest.mark.parametrize("method", ["cold", "libsvm"])
def test_unseeded_methods_extrapolate_from_every_round(method):
    """Catches treating round 1 of cold or LibSVM as special: all their rounds are alike."""
    result = summarise(method, 10, seeds=[0.0, 0.0, 0.0], rests=[4.0, 1.0, 1.0])
    assert result.seconds_init == 0.0
    assert result.seconds_rest == 6.0 + 2.0 * 7


def test_every_round_run_is_not_extrapolated():
    """Catches an estimate (or a NaN from an empty mean) when no round is left."""
    result = summarise("sir", 3, seeds=[0.0, 0.25, 0.25], rests=[4.0, 1.0, 1.0])
    assert not result.estimated
    assert result.seconds_init == 0.5 and result.seconds_rest == 6.0


@pytest.mark.parametrize("method, expected", [("sir", 160 + 30 * 7), ("cold", 180 + 60 * 7)])
def test_iterations_are_estimated_as_the_seconds_are(method, expected):
    """Catches a cut run's iterations left as the rounds run's sum (beside seconds scaled to every round),
    or scaled over the cold round 1 of a seeder (mean 60, not 30, for the 7 rounds left)."""
    result = summarise(method, 10, seeds=[0.0, 0.1, 0.1], rests=[1.0, 1.0, 1.0],
                       iterations=[100, 20, 40] if method == "sir" else [100, 20, 60])
    assert result.iterations_measured == sum(r.iterations for r in result.rounds)
    assert result.iterations == expected


def test_the_interval_is_students_over_the_alike_rounds():
    """Catches a normal quantile for Student's (1.96 for 4.30 at two degrees of freedom), the cold round 1
    counted among a seeder's alike rounds, or the interval set against the rounds' mean, not the total."""
    rests = [9.0, 1.0, 2.0, 3.0]
    result = summarise("sir", 20, seeds=[0.0] * 4, rests=rests)
    low, high = stats.t.interval(0.95, 2, loc=np.mean(rests[1:]), scale=stats.sem(rests[1:]))
    left = 16
    assert result.interval == pytest.approx((high - low) / 2 * left / result.seconds)
    assert summarise("sir", 20, seeds=[0.0] * 2, rests=rests[:2]).interval is None
    assert summarise("sir", 4, seeds=[0.0] * 4, rests=rests).interval == 0.0


def test_a_run_stops_at_the_first_round_whose_interval_is_narrow_enough():
    """Catches a run that ignores until_interval (runs all 60 rounds), stops before three alike rounds,
    or stops later than the first round at which the iterations' interval is within the share asked for."""
    rng = np.random.default_rng(1)
    y = np.where(rng.random(60) < 0.5, 1.0, -1.0)
    X = rng.normal(size=(60, 3)) + y[:, None]
    result = cross_validate(X, y, 1.0, 0.5, "loo", "cold", max_rounds=60, until_interval=0.1)
    assert 3 <= result.rounds_run < 60
    assert result.interval_iterations <= 0.1
    iterations = [r.iterations for r in result.rounds]
    assert all(not settled(iterations[:m], 60 - m, "cold", 0.1) for m in range(result.rounds_run))
    assert settled(iterations, 60 - result.rounds_run, "cold", 0.1)


def test_a_sample_of_rounds_that_took_no_iteration_settles_nothing():
    """Catches stopping on three seeded leave-one-out rounds that each took no iteration (an interval of zero
    width): where a few rounds cost the most, the sample must hold five that worked, or be all of that kind."""
    wide = 0.99   # every interval here is narrower: only the rule on the rounds that worked decides
    assert not settled([400, 0, 0, 0], 100, "sir", wide)
    assert not settled([400, 0, 0, 0, 30, 30, 31, 30], 100, "sir", wide)   # four of seven worked
    assert settled([400, 30, 30, 31], 100, "sir", wide)                    # three of three worked
    assert settled([400, 0, 30, 30, 31, 30, 30], 100, "sir", wide)        # five of six worked
    assert not settled([400, 30, 30], 100, "sir", wide)                    # two alike rounds only


@pytest.mark.parametrize("options", [{"until_interval": 0.2}, {"until_interval": 1.5, "max_rounds": 9}])
def test_until_interval_needs_max_rounds_and_a_share(options):
    """Catches an interval asked for where no round is cut, or one that no estimate can be within."""
    X, y = np.eye(12), np.tile([1.0, -1.0], 6)
    with pytest.raises(ConfigError, match="until_interval"):
        cross_validate(X, y, 1.0, 0.5, "loo", "cold", **options)


def test_one_round_of_a_kfold_seeder_is_refused():
    """Catches extrapolating a k-fold seeder from its cold round 1 alone (or from nothing), which
    would report the cold start's time as the seeder's; a cold run of one round stays allowed."""
    rng = np.random.default_rng(0)
    y = np.where(rng.random(30) < 0.5, 1.0, -1.0)
    X = rng.normal(size=(30, 2)) + y[:, None]
    with pytest.raises(ConfigError, match="max_rounds >= 2"):
        cross_validate(X, y, 1.0, 0.5, 5, "sir", max_rounds=1)
    assert cross_validate(X, y, 1.0, 0.5, 5, "cold", max_rounds=1).estimated


@pytest.fixture(scope="module")
def bench_cv():
    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        import bench_cv
    finally:
        sys.path.remove(str(REPO / "benchmarks"))
    return bench_cv


def test_a_benchmark_row_is_estimated_when_any_figure_in_it_is(bench_cv):
    """Catches flagging a row by its own time only: with LibSVM estimated from its first rounds, every
    vs_libsvm divides by an estimate; with a cold start estimated, the vs_cold_same_mode of its mode does.
    Catches flagging rows whose figures are all measured (the other thread count, the other mode), and a
    vs_one_thread that divides by an estimate (1-thread SIR here) without saying so or compares other chains."""
    def row(method, mode, threads, seconds, estimated=False, chains=1):
        return dict(dataset="adult", k=10, threads=threads, chains=chains, method=method, requested_mode=mode,
                    mode=mode, seconds=seconds, estimated=estimated, predictions=None, us_per_iteration=np.nan,
                    bytes_per_iteration=np.nan, triad_gbs=np.nan, solver="" if method == "libsvm" else "smo")

    table = bench_cv.with_ratios(pd.DataFrame([
        row("libsvm", "cache", 1, 100.0, estimated=True), row("cold", "gram", 1, 50.0),
        row("sir", "gram", 1, 10.0, estimated=True),
        row("libsvm", "cache", 2, 80.0), row("cold", "gram", 2, 40.0, estimated=True), row("sir", "gram", 2, 8.0),
        row("cold", "shared", 2, 20.0), row("sir", "shared", 2, 4.0), row("sir", "gram", 2, 5.0, chains=2),
    ]), peers=bench_cv.PEERS)
    # LibSVM at 2 threads is measured, but its vs_one_thread divides by LibSVM's estimated 1-thread time.
    assert table["estimated"].tolist() == [True, True, True, True, True, True, False, False, True]
    assert table["vs_libsvm"].tolist() == [1.0, 2.0, 10.0, 1.0, 2.0, 10.0, 4.0, 20.0, 16.0]
    assert table["vs_cold_same_mode"].fillna(-1.0).tolist() == [-1.0, 1.0, 5.0, -1.0, 1.0, 5.0, 1.0, 5.0, -1.0]
    assert table["vs_one_thread"].fillna(-1.0).tolist() == [1.0, 1.0, 1.0, 1.25, 1.25, 1.25, -1.0, -1.0, 2.0]


def test_a_seeded_row_is_set_against_the_cold_start_of_its_own_solver(bench_cv):
    """Catches a vs_cold_same_mode that divides an active-set SIR row by SMO's cold start (the
    solver, not seeding, would then make the ratio), one that mixes up two solvers' one-thread
    rows, and predictions compared with another solver's cold start (or none for the peers)."""
    rows = [dict(dataset="adult", k=10, threads=1, chains=1, method=method, requested_mode="auto", mode="gram",
                 seconds=seconds, estimated=False, predictions=predictions, us_per_iteration=np.nan,
                 bytes_per_iteration=np.nan, triad_gbs=np.nan, solver=solver)
            for method, solver, seconds, predictions in [
                ("cold", "smo", 40.0, "++--"), ("sir", "smo", 20.0, "++-+"), ("cold", "auto", 10.0, "+---"),
                ("sir", "auto", 5.0, "+---"), ("sir", "active_set", 8.0, "+--+"), ("intelex", "", 30.0, "-+--")]]
    table = bench_cv.with_ratios(pd.DataFrame(rows), peers=bench_cv.PEERS)
    assert table["vs_cold_same_mode"].fillna(-1.0).tolist() == [1.0, 2.0, 1.0, 2.0, -1.0, -1.0]
    assert table["vs_one_thread"].tolist() == [1.0] * 6
    # The predictions too: each solver's against its own cold start, the peer's against SMO's.
    assert table["differs_from_cold"].fillna(-1.0).tolist() == [0, 1, 0, 0, -1.0, 1]


def test_the_machine_floor_divides_by_the_chains_that_run_at_once(bench_cv):
    """Two chains on two threads each take 40 us an iteration side by side: the machine takes 20 us
    an iteration against the triad's 10 us for its bytes. Catches dividing by the chains even where
    they share one thread (they then take turns), or not at all."""
    rows = [dict(dataset="adult", k=10, threads=threads, chains=chains, method="sir", requested_mode="cache",
                 mode="cache", seconds=1.0, estimated=False, predictions=None, us_per_iteration=40.0,
                 bytes_per_iteration=100e3, triad_gbs=10.0, solver="smo")
            for threads, chains in [(2, 2), (1, 2), (2, 1)]]
    table = bench_cv.with_ratios(pd.DataFrame(rows), peers=bench_cv.PEERS)
    assert table["floor_ratio"].tolist() == [4.0, 4.0, 4.0]
    assert table["machine_floor_ratio"].tolist() == [2.0, 4.0, 4.0]


TIME_FIGURE = re.compile(r"(\d[\d.,]*)\s*(million\s+)?(s|seconds?|minutes?|hours?|days?)\b(†?)", re.IGNORECASE)


def test_every_time_figure_in_the_readme_is_marked_estimated_or_was_measured():
    """Catches a README that states an extrapolated run time (LibSVM's 2,772 s† on full Adult, the paper's
    estimated 2.5 million seconds on MNIST) as if it had been measured: each time figure carries †, sits in a
    sentence that says it is estimated, or is the total of a run measured in full, ours (reproduction/runs.csv)
    or the paper's."""
    runs = pd.read_csv(REPO / "reproduction" / "runs.csv")
    paper = pd.read_csv(REPO / "workflow" / "resources" / "paper_results.csv")
    measured_by_paper = paper[paper["note"].isna()]
    paper_totals = [*measured_by_paper.loc[measured_by_paper["metric"] == "seconds_total", "value"],
                    # ATO's time, which the paper gives as init and rest only
                    *measured_by_paper[measured_by_paper["metric"].isin(["seconds_init", "seconds_rest"])]
                    .groupby(["table", "dataset", "k", "method"])["value"].sum()]
    measured = {round(float(value)) for value in [*runs.loc[~runs["estimated"], "seconds_total"], *paper_totals]}
    text = " ".join((REPO / "README.md").read_text(encoding="utf-8").split())
    sentences = re.split(r"(?<=[.;:])\s+(?=[A-Z`(])", text)
    figures = [(match, sentence) for sentence in sentences for match in TIME_FIGURE.finditer(sentence)]
    assert sum(bool(match.group(4)) for match, _ in figures) >= 2  # the README quotes estimated times, marked
    unmarked = [match.group(0) for match, sentence in figures
                if not match.group(4) and "estimat" not in sentence.lower()
                and round(float(match.group(1).replace(",", ""))) not in measured]
    assert not unmarked


@pytest.mark.parametrize("method, k", [("sir", 10), ("top", "loo"), ("cold", 10)])
def test_a_run_written_before_iterations_were_estimated_reads_as_one_written_now(tmp_path, method, k):
    """Catches an older cut run (no iterations_measured, its iterations the rounds run's) read with its iterations
    unscaled, scaled over the cold round 1 or without its full model's, or without its interval."""
    from alphaseed.pipeline.provenance import collect_provenance
    from alphaseed.pipeline.records import build_run_record, write_run_record
    from alphaseed.pipeline.summaries import read_run

    rng = np.random.default_rng(2)
    y = np.where(rng.random(80) < 0.5, 1.0, -1.0)
    X = rng.normal(size=(80, 3)) + 0.7 * y[:, None]
    result = cross_validate(X, y, 5.0, 0.4, k, method, max_rounds=6)
    record = build_run_record(result, "toy", collect_provenance({"dataset": "toy"}, "f" * 64, "", ""))
    now = tmp_path / "now.json"
    write_run_record(now, record)
    older = tmp_path / "older.json"
    totals = record["summary"]
    record["summary"] = {key: value for key, value in totals.items()
                         if key not in ("iterations_measured", "interval", "rounds_resumed")}
    record["summary"]["iterations"] = totals["iterations_measured"]
    write_run_record(older, record)
    read_now, read_older = read_run(now)["summary"], read_run(older)["summary"]
    assert read_older["iterations"] == read_now["iterations"] == result.iterations
    assert read_older["iterations_measured"] == result.iterations_measured
    assert read_older["interval"] == pytest.approx(result.interval)


def test_counted_by_one_kind_the_estimate_and_interval_are_the_plain_ones():
    """Catches a double-sampled estimate that departs from the plain one where every round is of one kind: a
    wrong second-phase variance (no division by n_h), a first-phase term that is not zero for one kind, or
    degrees of freedom other than n - 1."""
    seconds = [40.0, 3.0, 5.0, 4.5, 3.5]
    kinds = [True] * 5
    total, width = double_sampled(seconds, kinds, [True] * 300, 95, "sir")
    assert total == pytest.approx(extrapolate(seconds, 95, "sir"))
    assert width == pytest.approx(half_width(seconds, 95, "sir"))


def test_the_kinds_are_counted_in_the_longer_runs_shares():
    """Catches counting the rounds left at this run's own mixture (three costly rounds of five: 60 a round,
    not 0.25 * 100 + 0.75 * 1 = 25.75), shares taken over the longer run's cold round 1, the interval's
    first-phase term left out (then only the two kinds' zero spreads would count) or divided by n', not n' - 1."""
    seconds = [500.0, 1.0, 1.0, 100.0, 100.0, 100.0]
    kinds = [True, False, False, True, True, True]
    # then 25 % costly over the 100 alike rounds, each costly one alone, so that neighbours are unalike
    first = kinds + [False, False, False, True] * 22 + [False] * 7
    indicator = np.asarray(first[1:], dtype=float)
    assert np.corrcoef(indicator[1:], indicator[:-1])[0, 1] < 0
    total, width = double_sampled(seconds, kinds, first, 94, "sir")
    assert total == pytest.approx(sum(seconds) + 94 * (0.25 * 100.0 + 0.75 * 1.0))
    t = stats.t.ppf(0.975, 99)
    assert width == pytest.approx(t * np.sqrt(99.0 ** 2 * 0.25 * 0.75 / 99) * 94)


def test_neighbouring_rounds_of_one_kind_widen_the_interval():
    """Catches an interval that takes the first phase's rounds as independent where their kinds come in runs
    (a leave-one-out round's kind may follow from the instance the round before left out): the same shares
    in blocks of ten carry less news of the share than one run of them alternating."""
    kinds = [True, False, True, True, False, False]
    seconds = [500.0, 1.0, 100.0, 101.0, 1.2, 0.9]
    blocks = kinds + ([True] * 10 + [False] * 10) * 10
    mixed = kinds + [True, False] * 100
    _, narrow = double_sampled(seconds, kinds, mixed, 300, "sir")
    _, wide = double_sampled(seconds, kinds, blocks, 300, "sir")
    assert wide > 1.5 * narrow


def test_a_kind_this_run_never_drew_leaves_the_rounds_left_uncounted():
    """Catches a kind of the longer run silently counted at zero (an estimate as if its rounds cost nothing),
    an interval claimed from a kind of one round here or of fewer than five in the longer run, and a longer
    run that is not of the same rounds accepted."""
    first = [True, False, False, True] + [True, False] * 48
    assert double_sampled([500.0, 1.0, 1.0], [True, False, False], first, 97, "sir") is None
    total, width = double_sampled([500.0, 1.0, 1.5, 90.0], [True, False, False, True], first, 96, "sir")
    assert total == pytest.approx(592.5 + 96 * (49 / 99 * 90.0 + 50 / 99 * 1.25)) and width is None
    rare = [True, False, False, True, True] + [False] * 95     # three costly rounds in the longer run
    assert double_sampled([500.0, 1.0, 1.5, 90.0, 91.0], rare[:5], rare, 95, "sir")[1] is None
    with pytest.raises(ValueError, match="begin with this run's rounds"):
        double_sampled([500.0, 1.0, 1.5], [True, False, True], first, 97, "sir")


@pytest.mark.parametrize("dependent", [False, True])
def test_the_interval_counted_by_kind_covers_the_mean_as_often_as_it_says(dependent):
    """Catches an interval that ignores how far the first phase pins the shares down (with the kinds' own
    spreads small, an interval from them alone covers the true mean in about half the samples), or that takes
    rounds whose kind follows from their neighbour's (a round is costly where the instance it leaves out and the
    one it puts back differ in class) as independent."""
    rng = np.random.default_rng(5)
    costly_share = 0.18 if dependent else 0.45
    population_mean = costly_share * 1200.0 + (1 - costly_share) * 2.0
    covered, trials, seen = 0, 400, 16
    while trials:
        if dependent:      # classes of share 0.1: neighbours differ with probability 2 * 0.1 * 0.9
            classes = rng.random(301) < 0.1
            first = np.concatenate([[True], classes[1:-1] != classes[2:]])
        else:
            first = np.concatenate([[True], rng.random(299) < costly_share])
        kinds = first[:seen]
        if kinds[1:].sum() < 2 or (~kinds[1:]).sum() < 2:
            continue
        trials -= 1
        seconds = np.where(kinds, rng.normal(1200.0, 30.0, seen), rng.normal(2.0, 0.2, seen))
        total, width = double_sampled(seconds, kinds, first, 60_000 - seen, "sir")
        mean = (total - seconds.sum()) / (60_000 - seen)
        covered += abs(mean - population_mean) <= width / (60_000 - seen)
    assert covered / 400 >= 0.9
