"""Margins of voting ensembles and the AdaBoost bound on the training-margin distribution.

An ensemble's normalised vote ``v_k(x)`` for class ``k`` (non-negative, summing
to 1 over the classes) gives the margin of a labelled row

    margin(x, y) = v_y(x) - max_{k != y} v_k(x)   in [-1, 1],

positive exactly when the ensemble's vote is right with room to spare
(Schapire, Freund, Bartlett and Lee 1998, for two classes and for several;
Breiman 2001's margin function ``mg``). With two classes it is
``y f(x)`` for ``y`` in {-1, 1} and ``f = v_1 - v_0``.

The votes of each ensemble:

- AdaBoost (SAMME): ``v_k = sum_t alpha_t [h_t(x) = k] / sum_t alpha_t``;
- forests: ``predict_proba`` (the mean class proportions for ``voting="soft"``,
  the trees' vote shares for the other rules);
- ``VotingClassifier``: ``predict_proba`` for ``voting="soft"``, else the
  members' weighted vote shares.

``AdaBoostMargins.margin_bound`` is Schapire et al.'s Theorem 5 for
AdaBoost's weights, in the form that its proof gives for SAMME's (Zhu et al.
2009) re-weighting by ``exp(alpha_t [h_t(x) != y])``: the training weights after
``T`` rounds are ``D_1(i) exp(sum_t alpha_t [h_t(x_i) != y_i]) / prod_t Z_t`` with
``Z_t = (1 - eps_t) + eps_t exp(alpha_t)``, and a margin at most ``theta`` means a
wrong share of the vote ``u >= (1 - theta) / 2`` (the margin is at least
``1 - 2u``), so Markov's inequality on ``exp(A u)``, ``A = sum_t alpha_t``, gives

    P_D1[margin <= theta] <= prod_t ((1 - eps_t) + eps_t exp(alpha_t)) exp(-alpha_t (1 - theta) / 2).

With two classes and ``alpha_t = log((1 - eps_t) / eps_t)`` (``learning_rate=1``)
each factor is Theorem 5's ``2 sqrt(eps_t^(1 - theta) (1 - eps_t)^(1 + theta))``.
"""

import numpy as np
from sklearn.utils.validation import check_is_fitted


def vote_margins(votes, class_index):
    """``v_y - max_{k != y} v_k`` of each row.

    Parameters
    ----------
    votes : ndarray of shape (n_samples, n_classes)
        Normalised votes, rows summing to 1.
    class_index : ndarray of shape (n_samples,), int
        Column of each row's true class.

    Returns
    -------
    margins : ndarray of shape (n_samples,), in [-1, 1]
    """
    rows = np.arange(votes.shape[0])
    own = votes[rows, class_index]
    others = votes.copy()
    others[rows, class_index] = -np.inf
    return own - others.max(axis=1)


class MarginsMixin:
    """``margins(X, y)`` of a fitted classifier ensemble; ``_margin_votes(X)`` gives its normalised votes."""

    def margins(self, X, y):
        """The ensemble's margin on each labelled row (``gpuforest.margins``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Labels, each one of ``classes_``.

        Returns
        -------
        margins : ndarray of shape (n_samples,)
            ``v_y(x) - max_{k != y} v_k(x)`` in [-1, 1]: positive where the vote is right.
        """
        check_is_fitted(self)
        y = np.asarray(y)
        if y.ndim != 1:
            raise ValueError(f"y must be 1-dimensional; got shape {y.shape}.")
        class_index = np.searchsorted(self.classes_, y)
        n_classes = len(self.classes_)
        known = (class_index < n_classes) & (self.classes_[np.minimum(class_index, n_classes - 1)] == y)
        if not known.all():
            raise ValueError(f"y holds labels that are no class of the ensemble: {np.unique(y[~known])[:5]!r}.")
        votes = self._margin_votes(X)
        if votes.shape[0] != y.shape[0]:
            raise ValueError(f"X has {votes.shape[0]} rows but y has {y.shape[0]}.")
        return vote_margins(votes, class_index)


class ForestMargins(MarginsMixin):
    """Margins of a forest classifier: its combined class scores as votes."""

    def _margin_votes(self, X):
        return self.predict_proba(X)


class VotingMargins(MarginsMixin):
    """Margins of ``VotingClassifier``: mean probabilities (soft) or the members' weighted vote shares."""

    def _margin_votes(self, X):
        from .voting import tally_votes  # voting.py imports this module

        if self.voting == "soft":
            return self.predict_proba(X)
        return tally_votes(self._predict(X).T, len(self.classes_), self._weights_not_none)


class AdaBoostMargins(MarginsMixin):
    """Margins of SAMME AdaBoost and Schapire et al.'s bound on their training distribution."""

    def _check_samme(self):
        check_is_fitted(self)
        if self.algorithm != "SAMME":
            raise ValueError(
                "Margins are those of a weighted vote of classes: they need algorithm='SAMME', "
                f"not {self.algorithm!r}."
            )

    def _margin_votes(self, X):
        from .voting import tally_votes  # voting.py imports this module

        self._check_samme()
        X = self._check_X(X)
        weights = self.estimator_weights_[:len(self.estimators_)]
        labels = np.array([member.predict(X) for member in self.estimators_])
        return tally_votes(np.searchsorted(self.classes_, labels), self.n_classes_, weights)

    def margin_bound(self, theta):
        """Bound on the share of training weight with a margin at most ``theta`` (module docstring).

        Schapire, Freund, Bartlett and Lee (1998), Theorem 5, from ``estimator_errors_`` and
        ``estimator_weights_``: ``prod_t ((1 - eps_t) + eps_t exp(alpha_t)) exp(-alpha_t (1 - theta) / 2)``,
        for two classes and ``learning_rate=1`` ``prod_t 2 sqrt(eps_t^(1 - theta) (1 - eps_t)^(1 + theta))``.
        It holds for the training rows weighted by ``fit``'s ``sample_weight`` (up to the weights
        clipped at machine epsilon during boosting).

        Parameters
        ----------
        theta : float or array-like of floats in [-1, 1]

        Returns
        -------
        bound : float or ndarray of the shape of ``theta``
            May exceed 1 (then it says nothing).
        """
        self._check_samme()
        theta = np.asarray(theta, dtype=np.float64)
        if not np.all((theta >= -1.0) & (theta <= 1.0)):
            raise ValueError(f"theta must lie in [-1, 1]; got {theta!r}.")
        n_members = len(self.estimators_)
        errors, alphas = self.estimator_errors_[:n_members], self.estimator_weights_[:n_members]
        # In logarithms: the product of hundreds of factors under- or overflows.
        log_z = np.log1p(errors * np.expm1(alphas))
        log_bound = log_z.sum() - alphas.sum() * (1.0 - theta) / 2.0
        bound = np.exp(log_bound)
        return float(bound) if bound.ndim == 0 else bound
