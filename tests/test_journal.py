"""A cross-validation cut short resumes from its journal at the first unfinished round, and ends where
the uncut run ends."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from alphaseed import cross_validate
from alphaseed.cv import RoundJournal, cross_validation
from alphaseed.cv.journal import _write_solution
from alphaseed.errors import ConfigError


class Cut(Exception):
    """Stands for the end of a sitting."""


def data(n: int = 90):
    rng = np.random.default_rng(3)
    y = np.where(rng.random(n) < 0.45, 1.0, -1.0)
    X = rng.normal(size=(n, 4)) + 0.8 * y[:, None]
    return X, y


def cut_after(rounds: int):
    def progress(done: int, total: int, iterations: int, elapsed: float) -> None:
        if done == rounds:
            raise Cut
    return progress


@pytest.mark.parametrize("k, method, max_rounds", [(10, "sir", None), (10, "ato", None), (10, "mir", None),
                                                   (5, "cold", None), (5, "libsvm", None), ("loo", "top", 20),
                                                   ("loo", "avg", 20)])
def test_a_run_cut_short_resumes_to_the_uncut_runs_result(tmp_path, monkeypatch, k, method, max_rounds):
    """Catches a resumed seeded round started cold or from a solution other than the round before's (its
    iterations differ), finished rounds run again or their predictions lost, and avg's and top's full
    model trained again instead of read back (with its own seconds)."""
    X, y = data()
    uncut = cross_validate(X, y, 10.0, 0.3, k, method, max_rounds=max_rounds)
    with pytest.raises(Cut):
        cross_validate(X, y, 10.0, 0.3, k, method, max_rounds=max_rounds, journal=RoundJournal(tmp_path),
                       progress=cut_after(3))
    kept = RoundJournal(tmp_path).full_model()
    ran = []
    for engine in (cross_validation._SolverEngine, cross_validation._LibsvmEngine):
        def counted(self, h, split, previous, run=engine.run_round):
            ran.append(h)
            return run(self, h, split, previous)
        monkeypatch.setattr(engine, "run_round", counted)
    resumed = cross_validate(X, y, 10.0, 0.3, k, method, max_rounds=max_rounds, journal=RoundJournal(tmp_path))
    assert resumed.rounds_resumed == 3 and ran == list(range(4, resumed.rounds_run + 1))
    assert [(r.round, r.iterations, r.objective, r.n_correct) for r in resumed.rounds] == \
        [(r.round, r.iterations, r.objective, r.n_correct) for r in uncut.rounds]
    assert np.array_equal(resumed.predictions, uncut.predictions)
    assert (resumed.iterations, resumed.iterations_full_model) == (uncut.iterations, uncut.iterations_full_model)
    if kept is not None:
        assert resumed.seconds_full_model == kept[1]
    assert (kept is not None) == (method in ("avg", "top"))
    assert len(list(tmp_path.glob("previous-*.npz"))) == (1 if method in ("ato", "mir", "sir") else 0)


def test_a_run_that_stops_at_its_interval_stops_at_the_same_round_resumed(tmp_path):
    """Catches a stopping rule that reads the clock (seconds), so that where a run stops, and with it its predictions
    and accuracy, would differ from run to run, and from a resumed run."""
    X, y = data(150)
    uncut = cross_validate(X, y, 10.0, 0.3, "loo", "sir", max_rounds=100, until_interval=0.3)
    again = cross_validate(X, y, 10.0, 0.3, "loo", "sir", max_rounds=100, until_interval=0.3)
    assert 4 <= uncut.rounds_run == again.rounds_run < 100
    with pytest.raises(Cut):
        cross_validate(X, y, 10.0, 0.3, "loo", "sir", max_rounds=100, until_interval=0.3,
                       journal=RoundJournal(tmp_path), progress=cut_after(3))
    resumed = cross_validate(X, y, 10.0, 0.3, "loo", "sir", max_rounds=100, until_interval=0.3,
                             journal=RoundJournal(tmp_path))
    assert resumed.rounds_run == uncut.rounds_run
    assert np.array_equal(resumed.predictions, uncut.predictions)


def test_a_journal_of_another_run_is_refused(tmp_path):
    """Catches rounds of one setting (C = 10) mixed into a run of another (C = 1), or of other data."""
    X, y = data()
    with pytest.raises(Cut):
        cross_validate(X, y, 10.0, 0.3, 5, "sir", journal=RoundJournal(tmp_path), progress=cut_after(2))
    with pytest.raises(ConfigError, match="settings"):
        cross_validate(X, y, 1.0, 0.3, 5, "sir", journal=RoundJournal(tmp_path))
    with pytest.raises(ConfigError, match="data"):
        cross_validate(X[::-1], y[::-1], 10.0, 0.3, 5, "sir", journal=RoundJournal(tmp_path))
    with pytest.raises(ConfigError, match="stamp"):
        cross_validate(X, y, 10.0, 0.3, 5, "sir", journal=RoundJournal(tmp_path, stamp={"git": "another"}))


def test_a_cut_between_a_rounds_solution_and_its_record_reruns_that_round(tmp_path):
    """Catches a resume that trusts the newest solution file over the records: a cut after round 3's
    solution is written but before its record must redo round 3 from round 2's solution."""
    X, y = data()
    uncut = cross_validate(X, y, 10.0, 0.3, 10, "sir")
    with pytest.raises(Cut):
        cross_validate(X, y, 10.0, 0.3, 10, "sir", journal=RoundJournal(tmp_path), progress=cut_after(2))
    second = RoundJournal(tmp_path).solution(2)
    cold = dataclasses.replace(second, alpha=np.zeros_like(second.alpha), gradient=-np.ones_like(second.gradient),
                               gradient_bar=np.zeros_like(second.gradient_bar))
    _write_solution(tmp_path / "previous-000003.npz", cold)
    resumed = cross_validate(X, y, 10.0, 0.3, 10, "sir", journal=RoundJournal(tmp_path))
    assert resumed.rounds_resumed == 2
    assert [r.iterations for r in resumed.rounds] == [r.iterations for r in uncut.rounds]


def test_a_journal_takes_one_chain(tmp_path):
    """Catches chains run at once writing one journal, whose resumed rounds would follow no single chain."""
    X, y = data()
    with pytest.raises(ConfigError, match="one chain"):
        cross_validate(X, y, 10.0, 0.3, 10, "sir", chains=2, journal=RoundJournal(tmp_path))


def test_the_cli_removes_the_journal_once_the_record_is_written(tmp_path, monkeypatch):
    """Catches a journal left behind, which would make the next run of the same job resume a finished one."""
    from alphaseed.cli import main

    X, y = data(40)
    source = tmp_path / "toy.txt"
    source.write_text("".join(f"{int(label)} " + " ".join(f"{j + 1}:{v:.6f}" for j, v in enumerate(row)) + "\n"
                              for row, label in zip(X, y)))
    journal = tmp_path / "journal"
    status = main(["cv", "--data", str(source), "--C", "1", "--gamma", "0.5", "--k", "5", "--method", "sir",
                   "--journal", str(journal), "--out", str(tmp_path / "run.json")])
    assert status == 0
    assert not journal.exists()
    assert json.loads((tmp_path / "run.json").read_text())["summary"]["rounds_resumed"] == 0


def test_the_cli_starts_afresh_on_a_journal_timed_on_another_cpu(tmp_path, capsys):
    """Catches a record whose rounds were timed on two kinds of machine (a journal of one CPU resumed on another)."""
    from alphaseed.cli import _journal
    from alphaseed.pipeline.provenance import cpu_model

    X, y = data()
    with pytest.raises(Cut):
        cross_validate(X, y, 10.0, 0.3, 5, "sir", journal=RoundJournal(tmp_path / "j", stamp={"cpu": "Other CPU"}),
                       progress=cut_after(2))
    journal = _journal(tmp_path / "j")
    assert "timed on Other CPU" in capsys.readouterr().err and not (tmp_path / "j").exists()
    assert journal.stamp["cpu"] == cpu_model()
    assert cross_validate(X, y, 10.0, 0.3, 5, "sir", journal=journal).rounds_resumed == 0


def _counting_rounds(monkeypatch) -> list[int]:
    ran = []

    def counted(self, h, split, previous, run=cross_validation._SolverEngine.run_round):
        ran.append(h)
        return run(self, h, split, previous)
    monkeypatch.setattr(cross_validation._SolverEngine, "run_round", counted)
    return ran


@pytest.mark.parametrize("method", ["ato", "mir", "sir"])
def test_a_seeder_takes_round_1_from_the_cold_start_that_left_it(tmp_path, monkeypatch, method):
    """Catches a seeded run that trains its cold round 1 again where a cold start of the same folds left it
    (hours on full MNIST), that seeds round 2 from anything but that round's solution (its iterations would
    differ from the uncut run's), or that does not say the round was another run's."""
    X, y = data()
    shared = tmp_path / "first-round-cache"
    cold = cross_validate(X, y, 10.0, 0.3, 10, "cold", max_rounds=1,
                          journal=RoundJournal(tmp_path / "cold", first_round=shared))
    alone = cross_validate(X, y, 10.0, 0.3, 10, method, max_rounds=4)
    ran = _counting_rounds(monkeypatch)
    seeded = cross_validate(X, y, 10.0, 0.3, 10, method, max_rounds=4,
                            journal=RoundJournal(tmp_path / method, first_round=shared))
    assert ran == [2, 3, 4] and (seeded.rounds_shared, alone.rounds_shared) == (1, 0)
    assert [(r.iterations, r.objective, r.n_correct) for r in seeded.rounds] == \
        [(r.iterations, r.objective, r.n_correct) for r in alone.rounds]
    assert seeded.rounds[0].seconds == cold.rounds[0].seconds
    assert np.array_equal(seeded.predictions, alone.predictions)


def test_round_1_of_another_run_or_machine_is_not_taken(tmp_path, monkeypatch):
    """Catches a shared round 1 taken whatever run left it: another C (another optimum), another CPU (seconds
    of another machine in one record), or a run whose round 1 is not cold (LibSVM's, TOP's)."""
    X, y = data()
    shared = tmp_path / "first-round"
    cross_validate(X, y, 10.0, 0.3, 10, "cold", max_rounds=1, journal=RoundJournal(tmp_path / "a", first_round=shared))
    ran = _counting_rounds(monkeypatch)
    other_C = cross_validate(X, y, 20.0, 0.3, 10, "sir", max_rounds=2,
                             journal=RoundJournal(tmp_path / "b", first_round=shared))
    assert ran == [1, 2] and other_C.rounds_shared == 0
    ran.clear()
    # other_C left its own round 1 there; a run of C = 20 on another CPU does not take it, and replaces it
    elsewhere = cross_validate(X, y, 20.0, 0.3, 10, "mir", max_rounds=2,
                               journal=RoundJournal(tmp_path / "c", stamp={"cpu": "other"}, first_round=shared))
    assert ran == [1, 2] and elsewhere.rounds_shared == 0
    assert json.loads((shared / "identity.json").read_text())["stamp"] == {"cpu": "other"}
    for k, method in (("loo", "top"), ("loo", "avg"), (10, "libsvm")):
        cross_validate(X, y, 20.0, 0.3, k, method, max_rounds=3,
                       journal=RoundJournal(tmp_path / method, first_round=tmp_path / f"first-{method}"))
        assert not (tmp_path / f"first-{method}").exists()
