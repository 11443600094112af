"""The rounds a cross-validation has finished, on disk, so that a run cut short resumes at its first
unfinished round.

A journal is a folder: ``identity.json`` (the run's settings, a digest of its data and the caller's
stamp, which a resumed run must match), ``round-HHHHHH.json`` per finished round (its record and
its test set's predictions), and for a method that seeds each round from the one before,
``previous-HHHHHH.npz``, the last finished round's solution (alpha, the gradient and G_bar, exactly),
from which the next round is seeded as it would have been without the cut. For `avg` and `top`
``full-model.npz`` keeps the model of all instances and its seconds. Each file is written whole or
not at all, the round's solution before its record, and the solution of the round before is
deleted only after it: a cut at any point leaves a journal that resumes.

Round 1 of a cold start and of ATO, MIR and SIR is the same cold training on the same fold, the
same in every figure but the seconds. A journal given a ``first_round`` folder keeps its round 1
there too (record, predictions and solution, with the identity of the run less its method and its
rounds), and takes round 1 from there where a run of the same folds, data, settings, code and CPU
left it: on full MNIST that round takes 1.5 hours a job in the paper's setting.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import shutil
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from ..atomic import atomic_path, write_json
from ..errors import ConfigError
from ..solver import KernelCounts, SolveResult
from .results import RoundRecord
from .rounds import RoundSeconds

_SCALARS = ("rho", "objective", "iterations", "iteration_cap_hit", "seconds_gradient_init", "seconds_train",
            "n_sv", "n_bounded_sv", "newton_steps")


class RoundJournal:
    """A folder of finished rounds (see the module doc).

    Parameters
    ----------
    folder : str or os.PathLike
        The journal's folder; created when the first round is written.
    stamp : dict, optional
        What else a resumed run must share with the first (the code's commit, say); JSON-able.
    first_round : str or os.PathLike, optional
        A folder that keeps a cold round 1 for the runs of other methods of the same identity
        (``keep_first_round``, ``kept_first_round``); None: nothing is shared.
    """

    def __init__(self, folder, stamp: dict | None = None, *, first_round=None):
        self.folder = Path(folder)
        self.stamp = dict(stamp or {})
        self._identity: dict | None = None
        self._first_round = None if first_round is None else Path(first_round)
        self._first_identity: dict | None = None

    def open(self, settings: dict, X, y, *, cold_first_round: bool = False) -> None:
        """Bind the journal to one run: a folder written by another run (other settings, data or stamp)
        is refused, never mixed in.

        Parameters
        ----------
        settings : dict
            The run's settings (JSON-able): method, folds, penalty, kernel, stopping rule, rounds.
        X, y : array-like
            The run's data, of which a digest is kept.
        cold_first_round : bool, default False
            Whether the run's round 1 is a cold training of our solver, which runs of other methods
            share through the ``first_round`` folder.
        """
        identity = json.loads(json.dumps({"settings": settings, "data": data_digest(X, y), "stamp": self.stamp},
                                         default=_plain))
        if self._first_round is not None and cold_first_round:
            shared = {**identity["settings"], "method": "cold", "max_rounds": None, "until_interval": None}
            self._first_identity = {**identity, "settings": shared}
        found = self.folder / "identity.json"
        if found.exists():
            written = json.loads(found.read_text(encoding="utf-8"))
            if written != identity:
                differing = sorted(key for key in identity if written.get(key) != identity[key])
                raise ConfigError(f"the journal {self.folder} holds the rounds of another run (its "
                                  f"{', '.join(differing)} differ); delete it to start afresh")
        self._identity = identity

    def written_stamp(self) -> dict | None:
        """The stamp of the run that wrote the folder, as JSON kept it; None where nothing is written yet.

        Returns
        -------
        dict or None
        """
        found = self.folder / "identity.json"
        return json.loads(found.read_text(encoding="utf-8"))["stamp"] if found.exists() else None

    def finished(self) -> dict[int, tuple[RoundRecord, np.ndarray]]:
        """Every finished round's record and its test set's predicted labels, by round."""
        rounds = {}
        for path in sorted(self.folder.glob("round-*.json")):
            content = json.loads(path.read_text(encoding="utf-8"))
            record = content["record"]
            kernel = record.pop("kernel")
            rounds[record["round"]] = (
                RoundRecord(**{**record, "seconds": RoundSeconds(**record["seconds"]),
                               "kernel": None if kernel is None else KernelCounts(**kernel)}),
                np.asarray(content["predicted"], dtype=np.int8))
        return rounds

    def solution(self, h: int) -> SolveResult:
        """Round ``h``'s solution, which the journal keeps for the round seeded from it.

        Parameters
        ----------
        h : int
            The last finished round, from 1.

        Returns
        -------
        SolveResult
            Its alpha, gradient and G_bar as they were, and its figures.
        """
        solution = _read_solution(self.folder / f"previous-{h:06d}.npz")
        if solution is None:
            raise ConfigError(f"the journal {self.folder} lacks the solution of round {h}, which seeds the next "
                              "round; delete it to start afresh")
        return solution

    def write_round(self, record: RoundRecord, predicted: np.ndarray, solution: SolveResult | None = None) -> None:
        """Keep a finished round, and ``solution`` when the next round is seeded from it.

        Parameters
        ----------
        record : RoundRecord
            The round's record, ``n_correct`` set.
        predicted : ndarray
            Its test set's predicted labels, in the test set's order.
        solution : SolveResult, optional
            Its solution, for a method that seeds each round from the one before; the previous
            round's is deleted once this round is kept.
        """
        if self._identity is None:
            raise RuntimeError("open the journal before writing to it")
        if not (self.folder / "identity.json").exists():
            write_json(self.folder / "identity.json", self._identity)
        h = record.round
        if solution is not None:
            _write_solution(self.folder / f"previous-{h:06d}.npz", solution)
        write_json(self.folder / f"round-{h:06d}.json",
                   {"record": dataclasses.asdict(record), "predicted": np.asarray(predicted).astype(int).tolist()})
        for older in self.folder.glob("previous-*.npz"):
            if older.name != f"previous-{h:06d}.npz":
                older.unlink()

    def kept_first_round(self) -> tuple[RoundRecord, np.ndarray, SolveResult] | None:
        """Round 1 as a run of another method left it in the ``first_round`` folder, if one of the same
        identity did (its seconds are that run's).

        Returns
        -------
        tuple of (RoundRecord, ndarray, SolveResult) or None
            Its record, its test set's predicted labels and its solution.
        """
        if self._first_identity is None:
            return None
        shared = RoundJournal(self._first_round)
        found = shared.folder / "identity.json"
        if not found.exists() or json.loads(found.read_text(encoding="utf-8")) != self._first_identity:
            return None
        solution = _read_solution(shared.folder / "previous-000001.npz")
        first = shared.finished().get(1)
        return None if solution is None or first is None else (*first, solution)

    def keep_first_round(self, record: RoundRecord, predicted: np.ndarray, solution: SolveResult) -> None:
        """Keep round 1 in the ``first_round`` folder for the runs of other methods, in place of a round 1
        of another identity (other code, say, or another CPU); nothing where the run shares none.

        Parameters
        ----------
        record : RoundRecord
            Round 1's record, ``n_correct`` set.
        predicted : ndarray
            Its test set's predicted labels.
        solution : SolveResult
            Its solution, which seeds round 2 of ATO, MIR and SIR.
        """
        if self._first_identity is None:
            return
        shared = RoundJournal(self._first_round)
        found = shared.folder / "identity.json"
        if found.exists() and json.loads(found.read_text(encoding="utf-8")) != self._first_identity:
            shared.remove()
        shared._identity = self._first_identity
        shared.write_round(record, predicted, solution)

    def full_model(self) -> tuple[SolveResult, float] | None:
        """The kept model of all instances and the seconds it took, if any.

        Returns
        -------
        tuple of (SolveResult, float) or None
            None when no model is kept yet.
        """
        solution = _read_solution(self.folder / "full-model.npz")
        if solution is None:
            return None
        with np.load(self.folder / "full-model.npz", allow_pickle=False) as saved:
            return solution, float(saved["seconds"])

    def write_full_model(self, solution: SolveResult, seconds: float) -> None:
        """Keep the model of all instances of `avg` and `top`, and its seconds.

        Parameters
        ----------
        solution : SolveResult
            The model of every training instance.
        seconds : float
            What training it took, which a resumed run reports as its own.
        """
        if self._identity is None:
            raise RuntimeError("open the journal before writing to it")
        if not (self.folder / "identity.json").exists():
            write_json(self.folder / "identity.json", self._identity)
        _write_solution(self.folder / "full-model.npz", solution, seconds=seconds)

    def remove(self) -> None:
        """Delete the folder, once the run's result is written elsewhere."""
        shutil.rmtree(self.folder, ignore_errors=True)


def data_digest(X, y) -> str:
    """SHA-256 of the data's shape, values and labels (of a sparse matrix: its CSR arrays)."""
    digest = hashlib.sha256()
    matrix = sp.csr_matrix(X) if sp.issparse(X) else np.ascontiguousarray(X)
    parts = (matrix.data, matrix.indices, matrix.indptr) if sp.issparse(matrix) else (matrix,)
    digest.update(repr(matrix.shape).encode())
    for part in (*parts, np.ascontiguousarray(y)):
        digest.update(str(part.dtype).encode())
        digest.update(memoryview(np.ascontiguousarray(part)).cast("B"))
    return digest.hexdigest()


def _write_solution(path: Path, solution: SolveResult, **extra) -> None:
    with atomic_path(path) as temporary, open(temporary, "wb") as file:
        np.savez(file, alpha=solution.alpha, gradient=solution.gradient, gradient_bar=solution.gradient_bar,
                 **{name: getattr(solution, name) for name in _SCALARS}, **extra)


def _read_solution(path: Path) -> SolveResult | None:
    if not path.exists():
        return None
    with np.load(path, allow_pickle=False) as saved:
        scalars = {name: saved[name].item() for name in _SCALARS}
        return SolveResult(alpha=saved["alpha"], gradient=saved["gradient"], gradient_bar=saved["gradient_bar"],
                           **scalars)


def _plain(value):
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(f"{type(value).__name__} is not JSON-able")
