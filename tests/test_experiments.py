"""The config's experiments expand into the pipeline's jobs."""

from __future__ import annotations

import json
import math
import re
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from alphaseed.cli import main
from alphaseed.pipeline.config import load_config
from alphaseed.errors import ConfigError
from alphaseed.pipeline.experiments import (
    ATO_LOO_SHARE,
    COLD_FIRST_ROUND,
    COSTS,
    JOB_OVERHEAD_SECONDS,
    SEEDED_ROUND,
    Job,
    PlannedJob,
    all_jobs,
    choose_sitting,
    expand_experiments,
    expected_seconds,
    first_round_seconds,
    held_for_other_cpus,
    job_mem_mb,
    job_minutes,
    job_runtime_minutes,
    job_size,
    measured_seconds,
    plan_summary,
    planned_minutes,
    results_root,
    search_mem_mb,
    sitting_jobs,
    studies,
    taken_of_planned,
    wall_minutes,
)

REPO = Path(__file__).resolve().parents[1]


def _overlay(name: str) -> dict:
    return yaml.safe_load((REPO / "workflow" / "configs" / f"{name}.yaml").read_text())


def test_paper_config_lists_every_job_of_the_paper():
    """Catches a default config that drops a paper row on Adult, Heart, Madelon or Webdata, that plans MNIST's
    paper-faithful rows beyond the first round of the cold start that stands in for LibSVM (hours a round) and
    two rounds of ATO, MIR and SIR, that leaves a cell of MNIST's empty, or that loses the
    fast runs the tables take iterations from."""
    config = load_config(REPO / "config.yaml")
    jobs = expand_experiments(config)
    paper = {kind: [j for j in kind_jobs if j.kernel_mode == "cache" or j.method == "libsvm"]
             for kind, kind_jobs in jobs.items()}
    # ATO at k = 10 on all four, apart from the other methods (table1_ato); MNIST's cold stand-in in each, and
    # MNIST's ATO, MIR and SIR in Table 1, its SIR in Table 3
    assert len(paper["table1"]) == 4 * 5 + 4 and len(paper["table3"]) == 4 * 3 * 3 + 3 + 3
    assert len(paper["loo"]) == 4 * 7 + 1
    mnist = [j for kind_jobs in paper.values() for j in kind_jobs if j.dataset == "mnist"]
    assert {(j.method, j.max_rounds, j.stands_in) for j in mnist} == {
        ("cold", 1, True), ("ato", 2, False), ("mir", 2, False), ("sir", 2, False)}
    assert not any(j.stands_in for kind_jobs in jobs.values() for j in kind_jobs if j.dataset != "mnist")
    assert {j.k for j in mnist} == {"3", "10", "100", "loo"}
    fast = [j for j in all_jobs(config, "paper") if j.kernel_mode == "auto"]
    # cold and sir at k = 3, 10, 100 and mir at k = 10, on all five sets; Table 1's k = 10 ones are among them;
    # MNIST's leave-one-out but ATO
    assert len(fast) == 5 * (3 * 2 + 1) + 5
    # Table 3's k = 10 runs are Table 1's
    assert len(all_jobs(config, "paper")) == 24 + 42 + 29 - 4 * 3 - 2 + len(fast)
    by_key = {(j.dataset, j.k, j.method): j for j in all_jobs(config, "paper") if j.kernel_mode != "auto"}
    assert by_key[("adult", "100", "libsvm")].max_rounds == 3
    assert by_key[("adult", "loo", "sir")].max_rounds == 300 and by_key[("adult", "loo", "sir")].until_interval == 0.2
    assert by_key[("madelon", "loo", "sir")].max_rounds == 100 and by_key[("madelon", "loo", "sir")].until_interval is None
    assert by_key[("heart", "loo", "sir")].max_rounds is None and by_key[("heart", "loo", "sir")].until_interval is None
    assert by_key[("madelon", "10", "sir")].kernel_mode == "cache"
    assert by_key[("adult", "10", "ato")].max_rounds is None and by_key[("webdata", "10", "ato")].max_rounds is None
    assert results_root(config) == Path("results/paper")


def test_the_informative_study_runs_tables_1_and_3_on_the_scaled_datasets_apart_from_the_paper():
    """Catches study runs mixed into the paper's tables (expand_experiments ignoring the study), a study job
    missing from all_jobs (the pipeline would never run it), and the paper's datasets in the study."""
    config = load_config(REPO / "config.yaml")
    assert studies(config) == ["paper", "informative"]
    paper = {j for jobs in expand_experiments(config).values() for j in jobs}
    study = expand_experiments(config, "informative")
    scaled = {"heart_scale", "madelon_scale", "mnist_scale"}
    assert not {j.dataset for j in paper} & scaled and {j.dataset for j in study["table1"]} == scaled
    faithful = {(j.k, j.method) for j in study["table1"] + study["table3"] if j.kernel_mode == "cache"}
    assert faithful == {("10", m) for m in ("libsvm", "cold", "ato", "mir", "sir")} | {
        (k, m) for k in ("3", "10", "100") for m in ("libsvm", "cold", "sir")}
    assert {j.kernel_mode for j in study["table3"]} == {"cache", "auto"} and not study["loo"]
    assert set(all_jobs(config)) == paper | {j for jobs in study.values() for j in jobs}
    # Full mnist_scale in kernel mode auto only (a paper-faithful round is planned at hours, as raw
    # MNIST's), the seeders from two rounds; its paper-faithful rows in the exhaustive profile
    cut = {(j.k, j.method, j.kernel_mode): j.max_rounds for j in all_jobs(config, "informative")
           if j.dataset == "mnist_scale"}
    assert {mode for _, _, mode in cut} == {"auto"} and cut[("10", "sir", "auto")] == 2
    exhaustive = load_config(REPO / "config.yaml", overrides=_overlay("exhaustive"))
    assert {(j.k, j.method) for j in all_jobs(exhaustive, "informative")
            if j.dataset == "mnist_scale" and j.kernel_mode == "cache"} >= {("10", "libsvm"), ("100", "sir")}


def test_a_job_shared_across_studies_must_agree_in_both():
    """Catches the settings check done within one study only: the same run record would serve two
    settings, and which one ran would depend on the order of the experiments."""
    config = load_config(REPO / "config.yaml")
    config["experiments"]["table1_informative"]["datasets"].append("heart")
    config["experiments"]["table1_informative"]["subsample"] = {"heart": 100}
    with pytest.raises(ConfigError, match="heart at k = 10"):
        expand_experiments(config)


@pytest.mark.parametrize("profile", ["quick", "ci"])
def test_overlays_are_valid_and_write_under_their_profile(profile):
    config = load_config(REPO / "config.yaml", overrides=_overlay(profile))
    assert results_root(config) == Path("results") / profile
    assert all(job.dataset in config["datasets"] for job in all_jobs(config))


def test_the_ci_profile_plans_only_small_jobs():
    """Catches a CI profile that inherits a full-size job from config.yaml through an experiment it does
    not override (table1_ato's full Webdata: 45 minutes on CI's two cores)."""
    config = load_config(REPO / "config.yaml", overrides=_overlay("ci"))
    assert max(_planned(config).values()) <= 1.0


def test_quick_profile_subsamples():
    config = load_config(REPO / "config.yaml", overrides=_overlay("quick"))
    jobs = {(j.dataset, j.k, j.method): j for j in all_jobs(config)}
    assert jobs[("adult", "10", "sir")].subsample == 3000
    assert jobs[("heart", "10", "sir")].subsample is None
    assert jobs[("madelon", "loo", "sir")].subsample == 300
    assert {j.k for j in all_jobs(config) if j.method == "libsvm"} == {"3", "10", "30", "loo"}


def test_quick_profile_runs_the_informative_study_on_samples():
    """Catches a quick profile that would run the study on full mnist_scale (hours a job), keep the full
    config's 2-round estimates where the sample runs every round, or run k = 100."""
    config = load_config(REPO / "config.yaml", overrides=_overlay("quick"))
    study = all_jobs(config, "informative")
    assert {j.dataset: j.subsample for j in study} == {"heart_scale": None, "madelon_scale": 1000,
                                                       "mnist_scale": 2000}
    assert {(j.dataset, j.method, j.max_rounds) for j in study if j.max_rounds} == {("mnist_scale", "ato", 3)}
    assert {j.k for j in study} == {"3", "10"}


def test_record_path_names_the_kernel_mode():
    assert Job("heart", "10", "sir", "gram", None, None).record_path("runs") == Path("runs/heart/k10/sir-gram.json")
    assert Job("heart", "loo", "libsvm", "cache", None, None).record_path("runs") == Path("runs/heart/kloo/libsvm.json")


def test_a_job_shared_by_two_experiments_must_agree():
    config = load_config(REPO / "config.yaml", overrides={"experiments": {"table3": {"subsample": {"heart": 100}}}})
    with pytest.raises(ConfigError, match="table3"):
        expand_experiments(config)


def test_unknown_dataset_is_named():
    config = load_config(REPO / "config.yaml", overrides={"experiments": {"table1": {"datasets": ["iris"]}}})
    with pytest.raises(ConfigError, match="iris"):
        expand_experiments(config)


def test_memory_grows_with_the_dataset_and_the_gram_matrix():
    small = job_mem_mb(270, 13, "10", "sir", "cache", 100)
    large = job_mem_mb(60000, 780, "10", "sir", "cache", 100)
    gram = job_mem_mb(32561, 123, "10", "sir", "gram", 100)
    assert small < large and gram > 4 * 32561**2 / 2**20


def test_an_ato_job_declares_its_paths_column_store_and_factor():
    """Catches an ATO job declaring less than its path takes: on full Adult the factor of its
    15,302 free SVs (1.9 GB) beside the store of their columns and R's and T's (about 2.4 GB)."""
    assert job_mem_mb(32561, 123, "10", "ato", "cache", 100) * 2**20 >= 8 * 15402**2 + 4 * 29305 * 20600


def test_a_search_job_declares_its_kernel_and_the_dot_products_its_gammas_share(monkeypatch):
    """Catches a search job that declares less than it was measured to take (a full-Adult gamma
    column job peaked at 4,528 MB resident), a whole search that leaves out the n x n float64
    dot products its gammas share, and one that declares them where ``shared_dots`` would not
    keep them (a job declaring more than the machine has free is never started)."""
    import alphaseed.kernel as kernel

    config = load_config(REPO / "config.yaml")
    monkeypatch.setattr(kernel, "default_memory_budget", lambda: 20 << 30)
    column = search_mem_mb(config, "adult", 5, "auto", 1)
    dots = math.ceil(8 * 32561**2 / 2**20)
    assert column >= 4528
    assert search_mem_mb(config, "adult", 5, "auto", 10) == column + dots
    assert search_mem_mb(config, "adult", 5, "cache", 10) == search_mem_mb(config, "adult", 5, "cache", 1)
    monkeypatch.setattr(kernel, "default_memory_budget", lambda: 8 << 30)
    assert search_mem_mb(config, "adult", 5, "auto", 10) == column


def test_expected_time_counts_the_rounds_a_job_runs(monkeypatch):
    """Catches a cost model that ignores max_rounds (a cut job planned as a complete one), that counts a k-fold
    seeder's cold round 1 as a seeded one or forgets it, that leaves out AVG/TOP's model of all n instances
    or the Gram matrix of a fast job, that plans MIR's least squares or ATO's leave-one-out path at a multiple of
    the cold round (full MNIST's MIR took 1,555 s a seeded round where that said 90), that plans a leave-one-out
    round of AVG at the k-fold multiple (most of its rounds take no iteration), and that has no figure for
    a dataset it never measured."""
    cost = COSTS["adult"]
    n = 32561
    n_train = n - math.ceil(n / 10)
    cold_round = cost.cache * (n_train / cost.n_train) ** cost.exponent
    complete = expected_seconds(Job("adult", "10", "cold", "cache", None, None), n)
    two = expected_seconds(Job("adult", "10", "cold", "cache", None, 2), n)
    assert complete == pytest.approx(JOB_OVERHEAD_SECONDS + 10 * cold_round)
    assert two == pytest.approx(JOB_OVERHEAD_SECONDS + 2 * cold_round)
    sir = expected_seconds(Job("adult", "10", "sir", "cache", None, 3), n)
    assert sir == pytest.approx(JOB_OVERHEAD_SECONDS + cold_round * (1 + 2 * SEEDED_ROUND["sir"]))
    mir = expected_seconds(Job("adult", "10", "mir", "cache", None, 3), n)
    least_squares = cost.mir * (n_train / cost.n_train) ** cost.exponent
    assert mir == pytest.approx(JOB_OVERHEAD_SECONDS + cold_round * (1 + 2 * SEEDED_ROUND["mir"]) + 2 * least_squares)
    ato_loo = expected_seconds(Job("adult", "loo", "ato", "cache", None, 2), n)
    loo_size = ((n - 1) / cost.n_train) ** cost.exponent
    path = ATO_LOO_SHARE * cost.ato * loo_size
    assert ato_loo == pytest.approx(JOB_OVERHEAD_SECONDS + cost.cache * loo_size
                                    + max(path, SEEDED_ROUND["ato"] * cost.cache * loo_size))
    # where the path costs more than SMO's multiple of the cold round, the path is what is planned
    monkeypatch.setitem(COSTS, "adult", replace(cost, ato=100 * cost.ato))
    ato_loo = expected_seconds(Job("adult", "loo", "ato", "cache", None, 2), n)
    assert ato_loo == pytest.approx(JOB_OVERHEAD_SECONDS + cost.cache * loo_size + 100 * path)
    avg = expected_seconds(Job("adult", "loo", "avg", "cache", None, 2), n)
    full_model = cost.cache * (n / cost.n_train) ** cost.exponent
    loo_round = cost.cache * ((n - 1) / cost.n_train) ** cost.exponent
    # a leave-one-out round of AVG costs its measured share of the cold round, not the k-fold multiple
    assert avg == pytest.approx(JOB_OVERHEAD_SECONDS + full_model + 2 * cost.loo_seeded["avg"] * loo_round)
    fast = expected_seconds(Job("adult", "10", "cold", "auto", None, None), n)
    gram = cost.gram * (n / cost.n_train) ** 2
    assert fast == pytest.approx(JOB_OVERHEAD_SECONDS + gram + 10 * cost.auto * (n_train / cost.n_train) ** cost.exponent)
    unknown = expected_seconds(Job("ijcnn", "10", "cold", "cache", None, None), n)
    assert unknown == pytest.approx(complete)


def _planned(config: dict) -> dict[Job, float]:
    return {job: expected_seconds(job, job_size(config, job)[0]) / 60 for job in all_jobs(config)}


def _plan_total(config: dict, jobs: list[Job], journalled: frozenset = frozenset()) -> float:
    """A naive twin of the plan's total: each job's minutes without its cold round 1, then that round once per
    dataset, k and kernel mode at its longest estimate, and not at all where ``journalled`` holds it."""
    first_rounds: dict[tuple, float] = {}
    total = 0.0
    for job in jobs:
        n = job_size(config, job)[0]
        key = (job.dataset, job.k, job.kernel_mode)
        first_round = first_round_seconds(job, n) / 60
        total += expected_seconds(job, n) / 60 - first_round
        if first_round and key not in journalled:
            first_rounds[key] = max(first_rounds.get(key, 0.0), first_round)
    return total + sum(first_rounds.values())


def test_default_config_finishes_in_sittings(tmp_path):
    """Catches a default config whose timed jobs, one at a time, would take more than 40 hours at the seconds
    the published run took them (the cost model's where it has none), whose first round of a job would outlast
    a 3-hour sitting (a cut loses the round in flight, so such a round never finishes), that runs a
    paper-faithful job to the end when that takes more than about 20 minutes (ATO at k = 10 excepted: every
    round of it is measured, as the issue asks), or that cuts one that would finish within that (an estimate
    where a measurement was affordable); jobs within a factor of 2 of the 20 minutes may go either way."""
    config = load_config(REPO / "config.yaml")
    assert config["timed_jobs_alone"]
    published = REPO / "reproduction" / "runs"
    planned = {job: minutes for minutes, job in sitting_jobs(config, math.inf, tmp_path, measured=published)}
    assert sum(planned.values()) <= 40 * 60
    for job, minutes in planned.items():
        assert job_runtime_minutes(config, job) >= 1
        first_round = expected_seconds(replace(job, max_rounds=1, until_interval=None), job_size(config, job)[0]) / 60
        assert first_round <= 180, (job, first_round)
        # leave-one-out is cut by design, its stop rule or cap deciding where
        paper = job.kernel_mode == "cache" or job.method == "libsvm"
        if paper and job.k != "loo" and (job.method, job.k) != ("ato", "10"):
            earlier, whole = job.record_path(published), replace(job, max_rounds=None)
            complete = (measured_seconds(whole, json.loads(earlier.read_text()), job.dataset == "mnist")
                        if earlier.exists() else expected_seconds(whole, job_size(config, job)[0])) / 60
            # this machine's speed changes 2-3 fold between sittings, so within 2x of the line either choice holds
            if not 10 <= complete <= 40:
                assert (complete > 20) == (job.max_rounds is not None), (job, complete)
        if (job.method, job.k) == ("ato", "10"):
            assert (job.max_rounds is None) == (job.dataset != "mnist"), job


def test_the_plan_runs_timed_jobs_one_after_another():
    """Catches a plan that quotes a wall time on 2 cores for jobs that each take the whole machine."""
    config = load_config(REPO / "config.yaml")
    text = plan_summary(config)
    assert f"{_plan_total(config, all_jobs(config)) / 60:.1f} h in total, one job at a time" in text
    assert "on 2 cores" not in text


def test_default_config_has_a_complete_fast_run_beside_every_cut_table1_run():
    """Catches cutting a paper-faithful Table 1 run by max_rounds without the complete fast-mode run that gives
    its iterations and accuracy (LibSVM's: the complete cold run), where the memory allows one. (A cut fast
    run, MIR on MNIST, has its figures from the rounds it ran, marked, and so has MNIST's MIR in cache mode.)"""
    config = load_config(REPO / "config.yaml")
    jobs = all_jobs(config)
    complete_fast = {(j.dataset, j.k, j.method) for j in jobs if j.kernel_mode == "auto" and j.max_rounds is None}
    for job in expand_experiments(config)["table1"]:
        if job.max_rounds is not None and job.method != "ato" and job.kernel_mode == "cache" and \
                (job.dataset, job.method) != ("mnist", "mir"):
            method = "cold" if job.method == "libsvm" else job.method
            assert (job.dataset, job.k, method) in complete_fast, job


def test_exhaustive_profile_runs_every_round_of_every_paper_row():
    """Catches an exhaustive overlay that keeps a max_rounds rule (lists replace, so each experiment must
    clear its own) or leaves out a dataset the default config skips."""
    config = load_config(REPO / "config.yaml", overrides=_overlay("exhaustive"))
    jobs = all_jobs(config)
    assert all(job.max_rounds is None for job in jobs)
    paper = [j for j in all_jobs(config, "paper") if j.kernel_mode == "cache" or j.method == "libsvm"]
    assert len(paper) == 25 + 45 + 35 - 5 * 3
    assert results_root(config) == Path("results/exhaustive")


def test_plan_summary_totals_every_job():
    """Catches a summary whose total leaves jobs out, counts a cold round 1 that jobs share in each of them
    (hours on MNIST), or whose wall time ignores the cores."""
    config = load_config(REPO / "config.yaml", overrides={"timed_jobs_alone": False})
    jobs = all_jobs(config)
    total = _plan_total(config, jobs)
    assert total < sum(_planned(config).values()) - 60
    text = plan_summary(config, cores=(1, 2))
    assert f"{total / 60:.1f} h in total" in text
    assert f"{total / 60:.1f} h on 1 cores" in text
    assert len(text.splitlines()) == 1 + len(jobs)
    assert wall_minutes([60, 50, 40, 30], 2) == 90


def test_plan_summary_counts_the_finished_jobs_apart(tmp_path):
    """Catches a resumed run's plan that counts finished jobs as still to run, drops unfinished ones, charges
    the jobs left a cold round 1 that a finished one journalled, or whose whole-run total shrinks as jobs
    finish (the round 1 a finished job trained left out of its own time too)."""
    config = load_config(REPO / "config.yaml")
    jobs = all_jobs(config)
    whole = plan_summary(config).splitlines()[0]
    seeded = {(job.dataset, job.k, job.kernel_mode) for job in jobs if job.method in COLD_FIRST_ROUND[1:]}
    finished = sorted((job for job in jobs if job.method == "cold" and (job.dataset, job.k, job.kernel_mode) in seeded),
                      key=lambda job: -first_round_seconds(job, job_size(config, job)[0]))[:2]
    for job in finished:
        job.record_path(tmp_path).parent.mkdir(parents=True, exist_ok=True)
        job.record_path(tmp_path).write_text("{}")
    text = plan_summary(config, summaries=tmp_path)
    left = [job for job in jobs if job not in finished]
    journalled = frozenset((job.dataset, job.k, job.kernel_mode) for job in finished)
    assert text.splitlines()[0] == whole
    assert (f"{len(finished)} done (summaries in {tmp_path}); {len(left)} still to run: "
            f"{_plan_total(config, left, journalled) / 60:.1f} h in total") in text
    assert sum(line.endswith(" done") for line in text.splitlines()) == len(finished)
    assert "still to run" not in plan_summary(config, summaries=tmp_path / "none")


def _chosen(planned: list[PlannedJob], minutes: float) -> list[str]:
    return [job for _, job in choose_sitting(planned, minutes)]


def test_a_sitting_takes_whole_groups_largest_first():
    """Catches a sitting that takes the shortest jobs whatever their group (a ratio of adult k = 10
    would pair runs of two sittings, so of two machines), that takes a group larger than the time
    left, or that goes by the smallest groups first: groups of 2, 3, 4, 5 and 6 minutes then take
    three sittings of 10 (2+3+4, 5, 6) where two hold them (6+4, 5+3+2)."""
    planned = [PlannedJob(5, ("adult", "10"), "adult libsvm"), PlannedJob(1, ("adult", "10"), "adult sir"),
               PlannedJob(2, ("heart", "10"), "heart libsvm"), PlannedJob(1, ("heart", "10"), "heart sir"),
               PlannedJob(4, ("madelon", "10"), "madelon libsvm"), PlannedJob(3, ("madelon", "10"), "madelon sir")]
    assert _chosen(planned, 10) == ["madelon sir", "madelon libsvm", "heart sir", "heart libsvm"]
    assert _chosen(planned, 3) == ["heart sir", "heart libsvm"]
    left = [PlannedJob(m, (str(m), "10"), f"job {m}") for m in (2, 3, 4, 5, 6)]
    sittings = 0
    while left:
        done = _chosen(left, 10)
        left = [job for job in left if job.job not in done]
        sittings += 1
    assert sittings == 2


def test_a_sitting_splits_only_groups_too_long_for_it():
    """Catches splitting a group that one sitting could hold (heart's: its ratios would pair two
    machines' runs), never splitting one too long for any (it would never run), and an empty sitting
    where every job is longer than it (the job runs alone, resuming round by round)."""
    planned = [PlannedJob(4, ("webdata", "10"), "webdata mir"), PlannedJob(1, ("webdata", "10"), "webdata sir"),
               PlannedJob(7, ("webdata", "10"), "webdata ato"), PlannedJob(5, ("adult", "10"), "adult libsvm"),
               PlannedJob(4, ("adult", "10"), "adult sir"), PlannedJob(2, ("heart", "10"), "heart sir"),
               PlannedJob(2, ("heart", "10"), "heart mir")]
    # webdata's 12 minutes exceed the sitting; adult's 9 fit it and leave 2: one of webdata's, not half of heart
    assert _chosen(planned, 11) == ["adult sir", "adult libsvm", "webdata sir"]
    # of a split group, the largest job that fits, not the shortest ones
    split = [PlannedJob(m, ("mnist", "10"), f"mnist {name}") for m, name in ((5, "mir"), (3, "sir"), (3, "cold"))]
    assert _chosen(split, 7) == ["mnist mir"]
    assert choose_sitting([PlannedJob(200, ("mnist", "10"), "mnist ato"),
                           PlannedJob(150, ("mnist", "10"), "mnist cold")], 120) == [(150, "mnist cold")]
    assert choose_sitting([], 120) == []


def test_a_sitting_counts_a_shared_cold_round_1_once():
    """Catches a sitting that counts MNIST's shared cold round 1 for each job that would train it (the cold
    stand-in and SIR's round 2 then never share a sitting), or not at all (MIR's round 2 would join them
    though 43 more minutes do not fit), at other than its longest estimate (117 minutes for all three), or
    that charges the round to no job of the sitting."""
    shares = ("mnist", "10", "cache")
    planned = [PlannedJob(89, ("mnist", "10"), "cold", 89, shares),
               PlannedJob(91, ("mnist", "10"), "sir", 84, shares),
               PlannedJob(132, ("mnist", "10"), "mir", 106, shares)]
    assert choose_sitting(planned, 100) == [(89, "cold"), (7, "sir")]
    assert choose_sitting(planned, 140) == [(89, "cold"), (7, "sir"), (43, "mir")]
    assert _chosen(planned, 138) != ["cold", "sir", "mir"]


def test_a_sitting_of_every_job_trains_each_shared_cold_round_1_once(tmp_path):
    """Catches ``sitting_jobs`` giving no job a round 1 to share (each seeder then planned with its own cold
    round 1), or sharing one across k or kernel modes, whose rounds 1 differ."""
    config = load_config(REPO / "config.yaml")
    sharing: dict[tuple, list[Job]] = {}
    for job in all_jobs(config):
        if job.method in COLD_FIRST_ROUND:
            sharing.setdefault((job.dataset, job.k, job.kernel_mode), []).append(job)
    saved = sum((len(jobs) - 1) * first_round_seconds(jobs[0], job_size(config, jobs[0])[0]) / 60
                for jobs in sharing.values())
    total = sum(minutes for minutes, _ in sitting_jobs(config, math.inf, tmp_path))
    assert saved > 0 and total == pytest.approx(sum(planned_minutes(config, tmp_path).values()) - saved)


def test_sitting_jobs_leave_out_the_finished_and_print_as_targets(tmp_path, capsys):
    """Catches a sitting that plans jobs whose summaries are already there (run twice), that prints
    paths Snakemake would not take as the jobs' outputs, or that says nothing when its one job is
    longer than the sitting."""
    config = load_config(REPO / "config.yaml")
    planned = sitting_jobs(config, 30, tmp_path)
    first = [job for _, job in planned]
    assert first and sum(minutes for minutes, _ in planned) <= 30
    done = first[0].record_path(tmp_path)
    done.parent.mkdir(parents=True)
    done.write_text("{}")
    again = [job for _, job in sitting_jobs(config, 30, tmp_path)]
    assert again and first[0] not in again
    assert main(["sitting", "--minutes", "30", "--summaries", str(tmp_path),
                 "--config", str(REPO / "config.yaml")]) == 0
    out, err = capsys.readouterr()
    assert out.split() == [str(job.record_path(tmp_path.resolve())) for job in again]
    assert f"{len(again)} jobs" in err and "warning" not in err
    assert main(["sitting", "--minutes", "0.01", "--summaries", str(tmp_path),
                 "--config", str(REPO / "config.yaml")]) == 0
    out, err = capsys.readouterr()
    assert len(out.split()) == 1 and "never finishes" in err
    assert main(["sitting", "--minutes", "0", "--summaries", str(tmp_path)]) == 2


def test_a_sitting_plans_seeders_without_the_cold_round_1_left_them(tmp_path):
    """Catches a plan that counts the cold round 1 of ATO, MIR and SIR where the cold start of the same dataset,
    k and kernel mode has run (they take it from its journal: 1.5 hours a job on full MNIST), or that drops it
    where that cold start has not run, or for LibSVM, whose round 1 is its own."""
    config = load_config(REPO / "config.yaml")
    jobs = {(job.dataset, job.k, job.stem): job for job in all_jobs(config)}

    def planned(stem: str) -> float:
        return planned_minutes(config, tmp_path)[jobs["adult", "10", stem]]
    cold_round = first_round_seconds(jobs["adult", "10", "sir-cache"], job_size(config, jobs["adult", "10", "sir-cache"])[0])
    before = {stem: planned(stem) for stem in ("sir-cache", "mir-cache", "libsvm", "sir-auto")}
    cold = jobs["adult", "10", "cold-cache"].record_path(tmp_path)
    cold.parent.mkdir(parents=True)
    cold.write_text("{}")
    assert cold_round > 0 and planned("sir-cache") == pytest.approx(before["sir-cache"] - cold_round / 60)
    assert planned("mir-cache") == pytest.approx(before["mir-cache"] - cold_round / 60)
    assert (planned("libsvm"), planned("sir-auto")) == (before["libsvm"], before["sir-auto"])
    published = REPO / "reproduction" / "runs"
    earlier = json.loads(jobs["adult", "10", "sir-cache"].record_path(published).read_text())
    # its wall time holds a round 1 only where that run trained it rather than took it from the journal
    trained_round_1 = sum(earlier["rounds"][0]["seconds"].values()) * (not earlier["summary"].get("rounds_shared"))
    assert planned_minutes(config, tmp_path, published)[jobs["adult", "10", "sir-cache"]] == pytest.approx(
        (earlier["job"]["wall_seconds"] - trained_round_1) / 60)


def test_a_sitting_plans_a_job_at_the_seconds_an_earlier_run_of_it_took():
    """Catches an earlier run's seconds taken as they are where the job now runs more rounds (Webdata's LibSVM:
    one round then, three now), scaled where the earlier run stopped at its interval (it stops at the same
    round again), counting the cold round 1 that the job takes from another's journal, or scaling the wall
    time by rounds where a seeder's round 1 is cold and the rest short (MNIST's SIR at k = 3: 53 minutes for
    2 of 3 rounds that took 65; 340 s for 4 rounds after a shared round 1 where 2 more short ones take 40), or
    taking as time spent outside the rounds a wall time that never held the round 1 that run took from
    another job (45 s planned where training it takes 345)."""
    def summary(ran, total, cap, rounds, overhead=0.0, not_trained=0):
        return {"summary": {"rounds_run": ran, "rounds_total": total, "rounds_shared": not_trained},
                "params": {"max_rounds": cap}, "job": {"wall_seconds": sum(rounds[not_trained:]) + overhead},
                "rounds": [{"seconds": {"seed": 0.0, "train": seconds - 1.0, "predict": 1.0}} for seconds in rounds]}
    libsvm = Job("webdata", "10", "libsvm", "cache", None, 3)
    assert measured_seconds(libsvm, summary(1, 10, 1, [100.0]), first_round_shared=True) == 300.0
    sir_loo = Job("adult", "loo", "sir", "cache", None, 300, 0.2)
    assert measured_seconds(sir_loo, summary(120, 32561, 150, [0.5] * 120), first_round_shared=False) == 60.0
    sir = Job("mnist", "10", "sir", "cache", None, 2)
    assert measured_seconds(sir, summary(2, 10, 2, [4965.0, 400.0], 97.0), first_round_shared=True) == 497.0
    assert measured_seconds(sir, summary(2, 10, 2, [4965.0, 400.0], 97.0), first_round_shared=False) == 5462.0
    three = summary(3, 3, None, [2832.0, 1009.0, 839.0], 88.0)
    assert measured_seconds(Job("mnist", "3", "sir", "cache", None, 2), three, first_round_shared=False) == 3929.0
    assert measured_seconds(Job("adult", "10", "sir", "cache", None, 4), summary(2, 10, 2, [300.0, 20.0]),
                            first_round_shared=True) == 60.0
    shared_then = summary(3, 3, None, [300.0, 20.0, 20.0], 5.0, not_trained=1)
    all_rounds = Job("adult", "3", "sir", "cache", None, None)
    assert measured_seconds(all_rounds, shared_then, first_round_shared=False) == 345.0
    assert measured_seconds(all_rounds, shared_then, first_round_shared=True) == 45.0


def test_a_sitting_says_how_much_of_the_plan_this_runs_jobs_took(tmp_path, capsys, monkeypatch):
    """Catches a pace that sets a job whose round 1 was shared against a plan that counts it (0.125 where the
    job took half its plan), that counts a resumed job (its wall time is one sitting's part of it), or a job
    planned under a minute (compilation alone can make it 100 times its plan); a CPU's own pace that
    pools the other CPU's jobs (0.50 where this CPU's took 1.00) or names no CPU; and a pace by the plan's
    CPU that reads this run's CPU for the earlier run's (1.00 where the EPYC-planned jobs took 2.00)."""
    config = load_config(REPO / "config.yaml")
    jobs = {(job.dataset, job.k, job.stem): job for job in all_jobs(config)}

    def record(folder, job, rounds, wall, resumed=0, shared=0, cpu="Xeon"):
        path = job.record_path(folder)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"provenance": {"cpu": cpu},
            "summary": {"rounds_run": len(rounds), "rounds_total": len(rounds), "rounds_resumed": resumed,
                        "rounds_shared": shared},
            "params": {"max_rounds": None}, "job": {"wall_seconds": wall},
            "rounds": [{"seconds": {"train": seconds}} for seconds in rounds]}))

    earlier, now = tmp_path / "earlier", tmp_path / "now"
    for key in (("adult", "10", "sir-cache"), ("adult", "10", "mir-cache"), ("heart", "10", "sir-cache"),
                ("adult", "3", "libsvm")):
        record(earlier, jobs[key], [300.0, 100.0], 400.0)
    record(now, jobs["adult", "10", "sir-cache"], [150.0, 40.0], 200.0)
    record(now, jobs["adult", "10", "mir-cache"], [300.0, 45.0], 50.0, shared=1)
    record(now, jobs["adult", "3", "libsvm"], [100.0], 100.0, resumed=1)
    record(earlier, jobs["heart", "10", "sir-cache"], [10.0, 20.0], 30.0)
    record(now, jobs["heart", "10", "sir-cache"], [10.0, 20.0], 3000.0)
    assert taken_of_planned(config, now, earlier) == [0.5, 0.5]
    assert main(["sitting", "--minutes", "30", "--summaries", str(now), "--measured", str(earlier),
                 "--config", str(REPO / "config.yaml")]) == 0
    assert "2 finished jobs of a minute or more took 0.50 of their planned time" in capsys.readouterr().err

    for key in (("adult", "10", "cold-cache"), ("adult", "10", "cold-auto")):
        record(earlier, jobs[key], [300.0, 100.0], 400.0)
        record(now, jobs[key], [300.0, 100.0], 400.0, cpu="EPYC")
    assert taken_of_planned(config, now, earlier, cpu="EPYC") == [1.0, 1.0]
    monkeypatch.setattr("alphaseed.pipeline.provenance.cpu_model", lambda: "EPYC")
    assert main(["sitting", "--minutes", "30", "--summaries", str(now), "--measured", str(earlier),
                 "--config", str(REPO / "config.yaml")]) == 0
    said = capsys.readouterr().err
    assert "this run's 4 finished jobs of a minute or more took 0.75" in said
    assert "on this CPU (EPYC), its 2 finished jobs of a minute or more took 1.00" in said

    for key in (("adult", "10", "sir-auto"), ("adult", "10", "mir-auto")):
        record(earlier, jobs[key], [300.0, 100.0], 400.0, cpu="EPYC")
        record(now, jobs[key], [600.0, 200.0], 800.0, cpu="EPYC")
    assert taken_of_planned(config, now, earlier, cpu="EPYC", planned_on="EPYC") == [2.0, 2.0]
    assert taken_of_planned(config, now, earlier, cpu="EPYC", planned_on="Xeon") == [1.0, 1.0]
    assert main(["sitting", "--minutes", "30", "--summaries", str(now), "--measured", str(earlier),
                 "--config", str(REPO / "config.yaml")]) == 0
    said = capsys.readouterr().err
    assert "of those, planned by runs on EPYC, the 2 finished jobs of a minute or more took 2.00" in said
    assert "of those, planned by runs on Xeon, the 2 finished jobs of a minute or more took 1.00" in said


def test_a_sitting_leaves_jobs_to_the_cpu_their_closest_pairs_ran_on(tmp_path, capsys, monkeypatch):
    """Catches a plan blind to where a group ran (MNIST k = 10's MIR in auto mode on the EPYC, which drops the
    round 1 journalled on the Xeon and sets MIR beside SIR across two CPUs), one that holds back a whole group
    once any of its runs ran elsewhere (MNIST k = 10's ATO in cache mode, beside cache runs and a stand-in of the
    EPYC, would have no machine), one that skips LibSVM's tier (Webdata's auto runs would go anywhere), counts
    LibSVM among a kernel mode's runs (Webdata's cache runs would go anywhere), holds back where the closest
    runs ran on both CPUs (Heart) or name none (Adult k = 3), lets a group that ran on one CPU only go to the
    other (Adult k = 10), or plans a seeder to share a round 1 journalled on another CPU."""
    config = load_config(REPO / "config.yaml")
    jobs = {(job.dataset, job.k, job.stem): job for job in all_jobs(config)}
    every = list(jobs.values())
    ran = {("mnist", "10", "cold-cache"): "EPYC", ("mnist", "10", "sir-cache"): "EPYC",
           ("mnist", "10", "sir-auto"): "Xeon", ("webdata", "10", "sir-cache"): "Xeon",
           ("webdata", "10", "libsvm"): "EPYC", ("heart", "10", "cold-cache"): "EPYC",
           ("heart", "10", "sir-cache"): "Xeon", ("adult", "10", "sir-cache"): "Xeon", ("adult", "3", "libsvm"): None}
    for key, cpu in ran.items():
        path = jobs[key].record_path(tmp_path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({} if cpu is None else {"provenance": {"cpu": cpu}}))

    def named(*keys):
        return {jobs[key] for key in keys}
    adult = {job for key, job in jobs.items() if key[:2] == ("adult", "10") and key not in ran}
    on_xeon = named(("mnist", "10", "cold-auto"), ("mnist", "10", "mir-auto"), ("webdata", "10", "cold-cache"),
                    ("webdata", "10", "mir-cache"), ("webdata", "10", "ato-cache")) | adult
    on_epyc = named(("mnist", "10", "ato-cache"), ("mnist", "10", "mir-cache"), ("webdata", "10", "cold-auto"),
                    ("webdata", "10", "mir-auto"), ("webdata", "10", "sir-auto"))
    assert len(adult) == 7
    assert held_for_other_cpus(every, tmp_path, "EPYC") == on_xeon
    assert held_for_other_cpus(every, tmp_path, "Xeon") == on_epyc

    def plan(**cpu):
        return {job: minutes for minutes, job in sitting_jobs(config, math.inf, tmp_path, **cpu)}
    here, anywhere = plan(cpu="EPYC", held=on_xeon), plan(cpu="EPYC")
    assert set(here) == set(anywhere) - on_xeon and set(plan()) == set(anywhere)
    auto = named(("mnist", "10", "cold-auto"), ("mnist", "10", "mir-auto"))
    round_1 = first_round_seconds(jobs["mnist", "10", "mir-auto"], job_size(config, jobs["mnist", "10", "mir-auto"])[0])
    assert sum(anywhere[job] for job in auto) == pytest.approx(sum(plan()[job] for job in auto) + round_1 / 60)

    monkeypatch.setattr("alphaseed.pipeline.provenance.cpu_model", lambda: "EPYC")
    for flags, held in (([], on_xeon), (["--any-cpu"], set())):
        assert main(["sitting", "--minutes", "100000", "--summaries", str(tmp_path),
                     "--config", str(REPO / "config.yaml"), *flags]) == 0
        out, err = capsys.readouterr()
        assert set(out.split()) == {str(job.record_path(tmp_path.resolve())) for job in set(anywhere) - held}
        assert (f"{len(on_xeon)} jobs held for another CPU model" in err) == bool(held)
    for key in set(jobs) - set(ran):
        if jobs[key] not in on_xeon:
            jobs[key].record_path(tmp_path).parent.mkdir(parents=True, exist_ok=True)
            jobs[key].record_path(tmp_path).write_text(json.dumps({"provenance": {"cpu": "EPYC"}}))
    assert main(["sitting", "--minutes", "30", "--summaries", str(tmp_path),
                 "--config", str(REPO / "config.yaml")]) == 0
    out, err = capsys.readouterr()
    assert not out.split() and "every job still to run is held for another CPU model" in err

def test_the_plan_takes_the_published_runs_seconds_for_the_same_jobs_only(tmp_path):
    """Catches a dry run that ignores the published run's seconds (the cost model's stale ones: 89 hours where
    the runs took 33), or that plans a subsampled job (the quick profile's) at a full-size run's seconds."""
    published = REPO / "reproduction" / "runs"
    config = load_config(REPO / "config.yaml")
    measured = planned_minutes(config, tmp_path, published)
    model = planned_minutes(config, tmp_path)
    assert sum(measured.values()) < sum(model.values()) / 2
    first_rounds: dict[tuple, list[float]] = {}
    for job in all_jobs(config):
        if job.method in COLD_FIRST_ROUND:
            first_round = measured[job] - job_minutes(config, job, shared=True, measured=published)
            first_rounds.setdefault((job.dataset, job.k, job.kernel_mode), []).append(first_round)
    trained_once = sum(measured.values()) - sum(sum(each) - max(each) for each in first_rounds.values())
    text = plan_summary(config, summaries=tmp_path, measured=published)
    assert f"as the run in {published} took them" in text and f"{trained_once / 60:.1f} h in total" in text
    quick = load_config(REPO / "config.yaml", overrides=_overlay("quick"))
    sampled = [job for job in all_jobs(quick) if job.subsample is not None and job.record_path(published).exists()]
    assert sampled and all(planned_minutes(quick, tmp_path, published)[job] == planned_minutes(quick, tmp_path)[job]
                           for job in sampled)


def test_dry_run_prints_the_plans_expected_time():
    """Catches printing the plan only when ``workflow.dryrun`` says so, which Snakemake decides only after
    parsing the workflow: the dry run would print nothing."""
    snakemake = shutil.which("snakemake", path=str(Path(sys.executable).parent))
    result = subprocess.run(
        [snakemake, "--dry-run", "--nolock", "--cores", "1", "--configfile", "workflow/configs/ci.yaml"],
        cwd=REPO, capture_output=True, text=True, timeout=300,
    )
    assert result.returncode == 0, result.stderr
    assert "Expected time of the" in result.stderr and "h in total" in result.stderr



def test_the_guide_states_the_published_runs_plan(tmp_path):
    """Catches the guide's time budget left behind when ``reproduction/runs`` is republished: it said 14.5 and
    21.3 hours after rerun groups had moved the plan to 13.6 and 20.4."""
    published = REPO / "reproduction" / "runs"
    config = load_config(REPO / "config.yaml")
    guide = " ".join((REPO / "docs" / "user_guide" / "reproducing.md").read_text().split())
    shared = re.search(r"one thread each: ([\d.]+) hours† of job time", guide)
    own = re.search(r"each job planned with its own round 1 would make ([\d.]+) hours†", guide)
    assert shared and own
    assert f" {shared[1]} h in total" in plan_summary(config, summaries=tmp_path, measured=published).splitlines()[0]
    assert own[1] == f"{sum(planned_minutes(config, tmp_path, published).values()) / 60:.1f}"


def test_the_guide_counts_the_published_overlays():
    """Catches an overlay added to ``reproduction/configs`` that the guide's list neither counts nor names."""
    guide = " ".join((REPO / "docs" / "user_guide" / "reproducing.md").read_text().split())
    overlays = sorted(path.name for path in (REPO / "reproduction" / "configs").glob("*.yaml"))
    words = {3: "three", 4: "four", 5: "five", 6: "six", 7: "seven"}
    assert f"the {words[len(overlays)]} overlays on the tag's" in guide
    assert all(f"`{name}`:" in guide for name in overlays)
