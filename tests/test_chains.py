"""Chains of rounds (``cross_validate(chains=...)``): the layout, the seeding inside each chain, and a result that
depends on the chains and never on the threads that run them; and processes that compile one at a time."""

from __future__ import annotations

import numba
import numpy as np
import pytest

from alphaseed import cross_validate
from alphaseed.cv import chain_layout
from alphaseed.cv import cross_validation as cv_module
from alphaseed.errors import ConfigError
from alphaseed.kernel import concurrent_launches_are_safe
from alphaseed.kernel import threads as threads_module
from alphaseed.solver import SolverOptions


def synthetic(seed: int = 3, n: int = 300, dim: int = 5):
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < 0.4, 1.0, -1.0)
    X = rng.normal(size=(n, dim)) + 0.8 * y[:, None]
    return X, y


def test_the_layout_runs_every_round_once_in_consecutive_runs():
    """Catches a layout that drops, repeats or reorders rounds, makes the later chains the longer ones, or takes a
    chain count it cannot honour."""
    assert chain_layout(10, 3) == [[1, 2, 3, 4], [5, 6, 7], [8, 9, 10]]
    assert chain_layout(10, 1) == [list(range(1, 11))]
    assert chain_layout(3, 3) == [[1], [2], [3]]
    for chains in (0, 4, True, 2.0):
        with pytest.raises(ConfigError, match="chains"):
            chain_layout(3, chains)


@pytest.mark.parametrize("method", ["sir", "full"])
def test_each_chain_starts_as_round_one_and_seeds_from_its_own_rounds(method):
    """Catches a chain seeded from another chain's last round, or not seeded at all: with two chains SIR's rounds
    1-5 are those of the single chain and round 6 is the cold start's, while FULL's rounds, each seeded from the
    one model on all instances, are the same whatever the chains."""
    X, y = synthetic()
    one = cross_validate(X, y, 2.0, 0.3, 10, method, options=SolverOptions(kernel_mode="gram"))
    two = cross_validate(X, y, 2.0, 0.3, 10, method, chains=2, options=SolverOptions(kernel_mode="gram"))
    cold = cross_validate(X, y, 2.0, 0.3, 10, "cold", options=SolverOptions(kernel_mode="gram"))
    iterations = {name: [r.iterations for r in result.rounds] for name, result in
                  (("one", one), ("two", two), ("cold", cold))}
    if method == "sir":
        assert iterations["two"][:5] == iterations["one"][:5]
        assert iterations["two"][5] == iterations["cold"][5] != iterations["one"][5]
        assert iterations["two"][6:] != iterations["cold"][6:]
    else:
        assert iterations["two"] == iterations["one"]
    assert two.chains == 2 and [r.round for r in two.rounds] == list(range(1, 11))
    assert two.accuracy == cold.accuracy


@pytest.mark.parametrize("kernel_mode", ["gram", "cache"])
def test_the_result_does_not_depend_on_the_threads(monkeypatch, kernel_mode):
    """Catches results that change with the thread count (a layout drawn from the threads, chains that share a
    seed or a row cache) and chains that never run at once where the threading layer allows it."""
    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("needs 2 Numba threads")
    X, y = synthetic()
    pools = []
    real_pool = threads_module.ThreadPoolExecutor
    monkeypatch.setattr(threads_module, "ThreadPoolExecutor",
                        lambda workers, **kw: pools.append(workers) or real_pool(workers, **kw))
    results = []
    for threads in (1, 2):
        results.append(cross_validate(X, y, 2.0, 0.3, 10, "sir", chains=2, n_jobs=threads,
                                      options=SolverOptions(kernel_mode=kernel_mode, cache_mb=0.05)))
    first, second = results
    assert [r.iterations for r in first.rounds] == [r.iterations for r in second.rounds]
    assert [r.objective for r in first.rounds] == [r.objective for r in second.rounds]
    assert np.array_equal(first.predictions, second.predictions)
    if concurrent_launches_are_safe():
        assert pools == [2]  # the 2-thread run only, threads of this process
    assert second.seconds == second.seconds_measured


@pytest.mark.parametrize("options, message", [
    (dict(method="sir", max_rounds=4), "max_rounds"),
    (dict(method="libsvm"), "libsvm"),
    (dict(method="sir", options=SolverOptions(kernel_mode="shared")), "shared"),
])
def test_chains_refuse_what_they_cannot_run(options, message):
    """Catches chains that would estimate from rounds that are not the first ones, run LibSVM, or write one
    shared row cache from two threads."""
    X, y = synthetic()
    options = {"options": SolverOptions(kernel_mode="gram"), **options}
    with pytest.raises(ConfigError, match=message):
        cross_validate(X, y, 2.0, 0.3, 10, options.pop("method"), chains=2, **options)


def _hold_compile_lock(log: str, label: str) -> None:
    import time

    from alphaseed.solver import compile_lock

    with compile_lock():
        with open(log, "a") as out:
            out.write(f"{label} in {time.time()}\n")
        time.sleep(0.5)
        with open(log, "a") as out:
            out.write(f"{label} out {time.time()}\n")


def test_processes_compile_one_at_a_time(tmp_path):
    """Catches a compile lock that only threads of one process respect (or none): two pipeline jobs of a fresh
    clone compiling at once wrote each other's Numba cache entries and one died with SIGSEGV."""
    import multiprocessing

    log = str(tmp_path / "lock.log")
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_hold_compile_lock, args=(log, label)) for label in "ab"]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
    events = [line.split()[:2] for line in open(log).read().splitlines()]
    assert len(events) == 4 and events[0][0] == events[1][0] and events[2][0] == events[3][0]
    assert [kind for _, kind in events] == ["in", "out", "in", "out"]


def test_n_jobs_spends_the_cores_on_chains_of_rounds():
    """Catches n_jobs that does not reach the chains (None must be the paper's one sequence, n chains the
    same rounds as chains=n), a layout drawn from the machine's cores rather than from n_jobs, a derived
    count that leaves SIR a chain of one round (a cold start: SIR would seed nothing) while the cold start
    takes a chain per round, and a derived count that refuses what a single sequence would run (max_rounds,
    LibSVM)."""
    X, y = synthetic()
    assert cross_validate(X, y, 2.0, 0.3, 10, "sir").chains == 1
    derived = cross_validate(X, y, 2.0, 0.3, 10, "sir", n_jobs=3)
    given = cross_validate(X, y, 2.0, 0.3, 10, "sir", chains=3)
    assert derived.chains == 3
    assert [r.iterations for r in derived.rounds] == [r.iterations for r in given.rounds]
    assert cross_validate(X, y, 2.0, 0.3, 4, "cold", n_jobs=16).chains == 4
    spread = cross_validate(X, y, 2.0, 0.3, 4, "sir", n_jobs=16)
    assert spread.chains == 2
    assert [r.iterations for r in spread.rounds] == [
        r.iterations for r in cross_validate(X, y, 2.0, 0.3, 4, "sir", chains=2).rounds]
    assert cross_validate(X, y, 2.0, 0.3, 10, "sir", n_jobs=2, max_rounds=3).chains == 1
    assert cross_validate(X, y, 2.0, 0.3, 10, "libsvm", n_jobs=2, max_rounds=2).chains == 1
    with pytest.raises(ConfigError, match="n_jobs"):
        cross_validate(X, y, 2.0, 0.3, 10, "sir", n_jobs=0)


def test_a_negative_n_jobs_counts_numbas_pool(monkeypatch):
    """Catches n_jobs=-1 taken as one core, -2 as anything but all but one, or a positive count capped by the
    machine (the chains, and so SIR's iterations, would then depend on the machine)."""
    from alphaseed.kernel import resolve_n_jobs

    monkeypatch.setattr(numba.config, "NUMBA_NUM_THREADS", 12)
    assert [resolve_n_jobs(n) for n in (None, -1, -2, -20, 5, 40)] == [1, 12, 11, 1, 5, 40]


def test_chains_it_cannot_run_are_refused_before_compiling(monkeypatch):
    """Catches the chains checked only after the solver's compilation, which takes a minute in a fresh
    environment: a user's typo would cost that minute before its error."""
    X, y = synthetic()

    def compile_fails(verbose=0):
        raise AssertionError("compiled before the chains were checked")

    monkeypatch.setattr(cv_module, "warmup", compile_fails)
    for chains, extra in ((0, {}), (11, {}), (2, {"max_rounds": 3})):
        with pytest.raises(ConfigError, match="chains"):
            cross_validate(X, y, 2.0, 0.3, 10, "sir", chains=chains, **extra)
