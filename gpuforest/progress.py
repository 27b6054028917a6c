"""Progress and control of a fit: tqdm bars, the boosting log, callbacks, checkpoints, ``eval_set`` forms.

Every estimator's ``verbose`` (0 by default) shows a tqdm bar on stderr with an
ETA, advanced per batch of trees (forests, bagging), per member (AdaBoost) or per
round (boosting). Boosting also writes its training and validation scores every
``verbose`` rounds and why early stopping ended the fit, and calls its
``callbacks`` after each round (the protocol of XGBoost's ``TrainingCallback``
and LightGBM's callbacks, reduced to ``callback(round, scores)``).
"""

import copy
import os
import pickle
import sys

from tqdm import tqdm


class StopTraining(Exception):
    """Raised by a boosting callback to end the fit after the current round, whose trees are kept."""


class TrainingCallback:
    """Base of the boosting callbacks; any callable ``callback(round, scores)`` works too.

    ``before_training(estimator)`` is called once at the start of each ``fit`` with
    the estimator being fitted, and ``__call__(round, scores)`` after every round.
    ``round`` counts the rounds grown so far (1 after the first; it continues from
    the rounds already grown under ``warm_start``); ``scores`` is
    ``{"train": float, "validation": float}`` (higher is better: minus the mean loss
    with ``scoring="loss"``) when the fit has a validation set, else ``{}``. A true
    return value, or raising ``StopTraining``, ends the fit after this round.
    """

    def before_training(self, estimator):
        """Called at the start of ``fit`` with the estimator being fitted."""

    def __call__(self, round, scores):
        return False


class Checkpoint(TrainingCallback):
    """Pickle the estimator every ``every`` rounds, to resume an interrupted fit.

    The file is replaced atomically (written aside, then renamed), so it always
    holds a whole estimator, less its ``callbacks`` (a lambda does not pickle).
    To resume, load it with ``pickle.load``, then ``set_params(warm_start=True)``
    (and the callbacks again, if wanted) and ``fit`` on the same data: the
    remaining rounds are grown as an uninterrupted fit would have grown them.

    Parameters
    ----------
    path : str or os.PathLike
        The checkpoint file.
    every : int, default=1
        Rounds between checkpoints.
    """

    def __init__(self, path, every=1):
        if not isinstance(every, int) or every < 1:
            raise ValueError(f"Checkpoint: every must be a positive int; got {every!r}.")
        self.path = os.fspath(path)
        self.every = every
        self._estimator = None

    def before_training(self, estimator):
        self._estimator = estimator

    def __call__(self, round, scores):
        if round % self.every == 0:
            staging = f"{self.path}.partial"
            checkpoint = copy.copy(self._estimator)
            checkpoint.callbacks = None
            with open(staging, "wb") as file:
                pickle.dump(checkpoint, file)
            os.replace(staging, self.path)
        return False


def progress_bar(verbose, total, unit, description):
    """A tqdm bar of ``total`` steps on stderr (ETA included); when ``verbose`` is 0 or False, a ``NoBar``."""
    if not verbose:
        return NoBar()
    return tqdm(total=total, unit=unit, desc=description, file=sys.stderr, leave=True)


class NoBar:
    """The bar of a quiet fit: tqdm's methods that the estimators call, doing nothing (a disabled tqdm costs
    0.02-0.03 ms to make, 2% of a small tree's fit)."""

    def update(self, n=1):
        pass

    def set_postfix(self, ordered_dict=None, refresh=True, **kwargs):
        pass

    def close(self):
        pass


def log_line(text):
    """Write a line to stderr without breaking an open tqdm bar."""
    tqdm.write(text, file=sys.stderr)


def eval_sets(eval_set):
    """``eval_set`` as a list of tuples ``(X_val, y_val[, sample_weight_val])``, empty for None.

    Parameters
    ----------
    eval_set : None, tuple or list
        One tuple, or XGBoost's list of ``(X_val, y_val)`` pairs (any number of them).

    Returns
    -------
    list of tuples of length 2 or 3
    """
    if eval_set is None:
        return []
    if isinstance(eval_set, list):
        if not eval_set:
            raise ValueError("eval_set is an empty list: pass None or a list of (X_val, y_val) pairs.")
        if not all(isinstance(pair, (tuple, list)) and len(pair) in (2, 3) for pair in eval_set):
            raise TypeError("eval_set as a list must hold (X_val, y_val) pairs, as in XGBoost.")
        return [tuple(pair) for pair in eval_set]
    if not isinstance(eval_set, tuple) or len(eval_set) not in (2, 3):
        raise TypeError(
            "eval_set must be a tuple (X_val, y_val[, sample_weight_val]) or a list of (X_val, y_val) pairs."
        )
    return [eval_set]


def eval_pair(eval_set):
    """The one validation set of a pruned tree: ``eval_set`` as a tuple ``(X_val, y_val[, sample_weight_val])``,
    or None; a list must hold exactly one pair (``eval_sets`` gives the forms)."""
    pairs = eval_sets(eval_set)
    if len(pairs) > 1:
        raise ValueError(
            f"eval_set holds {len(pairs)} pairs; a tree's pruning uses one validation set: pass [(X_val, y_val)]."
        )
    return pairs[0] if pairs else None
