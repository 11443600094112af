"""The config's experiments expand into the pipeline's jobs."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from alphaseed.config import load_config
from alphaseed.errors import ConfigError
from alphaseed.experiments import Job, all_jobs, expand_experiments, job_mem_mb, results_root, studies

REPO = Path(__file__).resolve().parents[1]


def _overlay(name: str) -> dict:
    return yaml.safe_load((REPO / "workflow" / "configs" / f"{name}.yaml").read_text())


def test_paper_config_lists_every_job_of_the_paper():
    config = load_config(REPO / "config.yaml")
    jobs = expand_experiments(config)
    paper = {kind: [j for j in kind_jobs if j.kernel_mode == "cache" or j.method == "libsvm"]
             for kind, kind_jobs in jobs.items()}
    assert len(paper["table1"]) == 5 * 5 and len(paper["table3"]) == 5 * 3 * 3 and len(paper["loo"]) == 5 * 7
    fast = [j for j in all_jobs(config, "paper") if j.kernel_mode == "auto"]
    assert len(fast) == 5 * 3 * 2  # cold and sir at k = 3, 10, 100; Table 1's k = 10 ones are among them
    # Table 3's k = 10 runs are Table 1's
    assert len(all_jobs(config, "paper")) == 25 + 45 + 35 - 5 * 3 + len(fast)
    by_key = {(j.dataset, j.k, j.method): j for j in all_jobs(config, "paper") if j.kernel_mode != "auto"}
    assert by_key[("mnist", "100", "libsvm")].max_rounds == 30
    assert by_key[("adult", "loo", "sir")].max_rounds == 100
    assert by_key[("webdata", "loo", "avg")].max_rounds == 30
    assert by_key[("heart", "loo", "sir")].max_rounds is None
    assert by_key[("madelon", "10", "sir")].kernel_mode == "cache"
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
    assert {j.max_rounds for j in all_jobs(config, "informative") if j.dataset == "mnist_scale"} == {2}


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
