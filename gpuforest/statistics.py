"""Per-row statistics of each criterion, in int64 fixed point.

The grower sums these in histograms. Fixed point makes every sum exact and so
independent of the order of the additions (threads, atomics, machines): the
determinism promise of docs/ARCHITECTURE.md. Each statistic gets a power-of-two
scale chosen so that the largest possible sum fits in 62 bits, as XGBoost's
GPU histograms do with gradients.
"""

from dataclasses import dataclass

import numpy as np

from .kernels import common
from .kernels.cpu import fixed_point as cpu_fixed_point

CLASSIFICATION_CRITERIA = {
    "gini": common.GINI,
    "entropy": common.ENTROPY,
    "log_loss": common.ENTROPY,
    "misclassification": common.MISCLASSIFICATION,
}
REGRESSION_CRITERIA = {
    "squared_error": common.SQUARED_ERROR,
    "poisson": common.POISSON,
}

_MAX_EXPONENT = 1000  # keeps the scale and its inverse finite in float64


@dataclass
class RowStatistics:
    """Fixed-point statistics of the training rows for one criterion.

    Attributes
    ----------
    criterion : int
        A criterion constant of ``kernels.common``.
    row_slot : ndarray of shape (n_stats_rows,), dtype int32
        First histogram slot of each row's statistics.
    row_stats : ndarray of shape (n_stats_rows, n_row_stats), dtype int64
    inv_scales : ndarray of shape (n_slots,), dtype float64
        ``1 / scale`` per histogram slot, shared by every tree; the last slot counts rows.
    l2_regularization, l1_regularization : float
        ``newton``'s L2 and L1 penalties on the leaf values (``kernels.common``).
    stats_stride : int
        Tree ``t`` of a batch reads row ``r``'s statistics at ``t * stats_stride + r``:
        0 when every tree shares them (``n_stats_rows = n_samples``), ``n_samples``
        when each tree has its own (``n_stats_rows = n_trees * n_samples``).
    constant_hessian : int or None
        ``newton`` only: the fixed-point hessian of every row when all are equal
        (squared error without sample weights), else None. A histogram's
        hessian slot is then its row count times it.
    count_bits : int
        ``newton`` only: the hessian's scale (the gradient's with
        ``constant_hessian``) leaves its sums' low ``count_bits`` bits free, and
        ``2**count_bits`` exceeds a tree's rows, so the CPU histogram kernel adds
        the row count into them (``kernels.cpu.histogram.build_histograms``). 0: not so.
    """

    criterion: int | tuple[int, int]  # common.multi_output_criterion
    row_slot: np.ndarray
    row_stats: np.ndarray
    inv_scales: np.ndarray
    l2_regularization: float = 0.0
    l1_regularization: float = 0.0
    stats_stride: int = 0
    constant_hessian: int | None = None
    count_bits: int = 0

    @property
    def n_slots(self):
        return self.inv_scales.shape[0]

    @property
    def n_outputs(self):
        """Outputs of the criterion (multi-output y; ``kernels.common``, "Several outputs")."""
        return int(common.criterion_outputs(self.criterion))

    @property
    def kernel_weight_outputs(self):
        """How many outputs the kernels' node weight sums (every output's block of classes; ``kernels.common``)."""
        return self.n_outputs if common.base_criterion(self.criterion) <= common.MISCLASSIFICATION else 1

    @property
    def regularization(self):
        """``(l2, l1)`` as the kernels take it: a 2-tuple of float (a numba ``UniTuple(float64, 2)``)."""
        return float(self.l2_regularization), float(self.l1_regularization)

    @property
    def stops_when_pure(self):
        """Whether a node with zero impurity is a leaf (every criterion but ``newton``,
        whose gradients can still be split when they sum to zero)."""
        return self.criterion != common.NEWTON


def fixed_point_scale(abs_total):
    """Largest power of two ``s`` with ``abs_total * s <= 2**62``."""
    if abs_total <= 0:
        return 1.0
    exponent = 62 - int(np.ceil(np.log2(abs_total)))
    return 2.0 ** min(max(exponent, -_MAX_EXPONENT), _MAX_EXPONENT)


def _to_fixed(columns, sum_factors, backend=None, out=None, n_draws=None):
    """``columns`` (a tuple of 1-D arrays of one length, on ``backend``'s device) in fixed point, as the columns
    of one int64 array (n_rows, n_columns) there, and their inverse scales (host).

    A column's scale is sized by its total of absolute values times its
    ``sum_factors`` entry (the largest multiplicity of a row, times
    ``2**count_bits`` for a column that shares its slot with a count), computed so
    that it does not depend on the order of the additions: the column goes to
    fixed point with a scale sized by its largest value (so no sum of it
    overflows) and is summed in int64. The passes are the backend's
    ``fixed_point`` kernels, which get the same total on the CPU and the GPU,
    hence the same scale. ``backend``: None for numpy columns on the CPU.
    ``out``: an int64 array of the result's shape to fill, else a new one.
    ``n_draws``: bootstrap samples of that many draws, whose sums are at most ``n_draws`` times a column's
    largest absolute value, whichever rows are drawn: the scales from that bound (``sum_factors`` unused), so
    that they do not depend on which samples a fit draws.
    """
    if backend is None:
        xp, fixed_point, to_host = np, cpu_fixed_point, np.asarray
        columns = tuple(np.ascontiguousarray(column, dtype=np.float64) for column in columns)
    else:
        xp, fixed_point, to_host = backend.xp, backend.kernels.fixed_point, backend.to_host
    n_rows, n_columns = columns[0].shape[0], len(columns)
    largest = xp.empty(n_columns)
    fixed_point.column_abs_max(columns, largest)
    largest = to_host(largest)
    if n_draws is not None:
        scales = np.array([fixed_point_scale(value * n_draws) for value in largest])
    else:
        first_scales = np.array([fixed_point_scale(value * n_rows) for value in largest])
        fixed_totals = xp.empty(n_columns, dtype=np.int64)
        fixed_point.column_fixed_abs_sums(columns, first_scales, fixed_totals)
        scales = np.array([
            fixed_point_scale(int(total) / first_scale * factor)
            for total, first_scale, factor in zip(to_host(fixed_totals), first_scales, sum_factors)
        ])
    fixed = xp.empty((n_rows, n_columns), dtype=np.int64) if out is None else out
    fixed_point.to_fixed_point(columns, scales, fixed)
    return fixed, 1.0 / scales


def classification_statistics(criterion, y_encoded, n_classes, sample_weight, max_multiplicity=1, n_draws=None):
    """Weighted class counts: row ``i`` adds its weight to slot ``y_encoded[i]``; with several outputs, to slot
    ``k * max(n_classes) + y_encoded[i, k]`` of each output ``k`` (``kernels.common``, "Several outputs").

    Parameters
    ----------
    criterion : str
        A key of ``CLASSIFICATION_CRITERIA``.
    y_encoded : ndarray of shape (n_samples,) or (n_samples, n_outputs), int
        Class index of each row (of each output).
    n_classes : int or sequence of int
        Classes (of each output).
    sample_weight : ndarray of shape (n_samples,), dtype float64
    max_multiplicity : int
        Largest number of times a row is drawn (bootstrap), to size the scale.
    n_draws : int or None
        Bootstrap samples of this many draws: the scale sized for any such sample (``_to_fixed``), instead of
        by ``max_multiplicity``.
    """
    row_stats, inv_scales = _to_fixed((sample_weight,), (max_multiplicity,), n_draws=n_draws)
    criterion_id = CLASSIFICATION_CRITERIA[criterion]
    row_slot = y_encoded.astype(np.int32)
    n_slots = int(np.max(n_classes))
    if y_encoded.ndim == 2:
        # Each row's weight in its class slot of every output's block: dense rows, one slot per class and output.
        n_outputs = y_encoded.shape[1]
        row_stats = _one_hot_rows(row_stats[:, 0], row_slot + n_slots * np.arange(n_outputs, dtype=np.int32),
                                  n_slots * n_outputs)
        row_slot = np.zeros(y_encoded.shape[0], dtype=np.int32)
        criterion_id = common.multi_output_criterion(criterion_id, n_outputs)
        n_slots *= n_outputs
    return RowStatistics(
        criterion=criterion_id,
        row_slot=row_slot,
        row_stats=row_stats,
        inv_scales=np.concatenate([np.repeat(inv_scales, n_slots), [1.0]]),
    )


def _one_hot_rows(fixed_weight, slots, n_slots):
    """``(n_rows, n_slots)`` int64 rows holding ``fixed_weight[r]`` at each of ``slots[r]`` (n_rows, n_outputs)."""
    rows = np.zeros((slots.shape[0], n_slots), dtype=np.int64)
    rows[np.arange(slots.shape[0])[:, None], slots] = fixed_weight[:, None]
    return rows


def regression_statistics(criterion, y, sample_weight, max_multiplicity=1, n_draws=None):
    """``(w, w y, w y^2)`` for squared error, ``(w, w y, w y log y)`` for Poisson; ``max_multiplicity`` and
    ``n_draws`` as in ``classification_statistics``. ``y`` of shape (n_samples, n_outputs): ``(w, w y_1 .. w y_K,
    sum_k w y_k^2)`` (``sum_k w y_k log y_k``), the criterion id of ``K`` outputs (``kernels.common``)."""
    criterion_id = REGRESSION_CRITERIA[criterion]
    targets = y.T if y.ndim == 2 else y[None, :]
    if criterion_id == common.POISSON:
        third = sum(sample_weight * np.where(y_k > 0, y_k * np.log(np.where(y_k > 0, y_k, 1.0)), 0.0)
                    for y_k in targets)
    else:
        third = sum(sample_weight * y_k * y_k for y_k in targets)
    columns = (sample_weight, *(sample_weight * y_k for y_k in targets), third)
    row_stats, inv_scales = _to_fixed(columns, (max_multiplicity,) * len(columns), n_draws=n_draws)
    return RowStatistics(
        criterion=common.multi_output_criterion(criterion_id, targets.shape[0]),
        row_slot=np.zeros(y.shape[0], dtype=np.int32),
        row_stats=row_stats,
        inv_scales=np.concatenate([inv_scales, [1.0]]),
    )


def newton_statistics(
    gradients, hessians, l2_regularization, l1_regularization=0.0, max_multiplicity=1, backend=None, previous=None
):
    """``(g, h)`` per row for second-order (Newton) boosting, kept where they are (numpy, or ``backend``'s device).

    Parameters
    ----------
    gradients, hessians : ndarray of shape (n_samples,) or (n_samples, n_trees), dtype float64
        One column per tree of a batch (the classes of a multinomial round):
        tree ``t``'s statistics of row ``r`` go to ``t * n_samples + r``
        (``stats_stride = n_samples``); 1-D: shared by every tree (``stats_stride = 0``).
        One scale per statistic over all the columns, as every tree's
        histograms use the same slots.
    l2_regularization, l1_regularization : float
        XGBoost's ``lambda`` and ``alpha``: leaf values ``-T(G) / (H + l2)``
        with ``T(G) = sign(G) max(|G| - l1, 0)`` (``kernels.common``).
    max_multiplicity : int
        Largest number of times a row is drawn, to size the scale.
    backend : Backend or None
        The backend whose device holds ``gradients`` and ``hessians``; None: numpy arrays on the CPU.
    previous : RowStatistics or None
        Statistics of the same shape no longer needed (a previous boosting
        round's): their arrays are reused (fresh memory costs as much as filling it).
    """
    # Transposed, then flattened: the trees' columns one after another (a 1-D input or one
    # column is not copied).
    columns = (gradients.T.reshape(-1), hessians.T.reshape(-1))
    # Equal hessians in float64 are equal in fixed point: the count goes with the gradient.
    constant = columns[1].shape[0] > 0 and bool((columns[1] == columns[1][0]).all())
    count_bits = int(gradients.shape[0]).bit_length()
    packed_factor = max_multiplicity * 2**count_bits
    sum_factors = (packed_factor, max_multiplicity) if constant else (max_multiplicity, packed_factor)
    row_stats, inv_scales = _to_fixed(columns, sum_factors, backend, None if previous is None else previous.row_stats)
    xp = np if backend is None else backend.xp
    return RowStatistics(
        criterion=common.NEWTON,
        row_slot=xp.zeros(row_stats.shape[0], dtype=np.int32) if previous is None else previous.row_slot,
        row_stats=row_stats,
        inv_scales=np.concatenate([inv_scales, [1.0]]),
        l2_regularization=float(l2_regularization),
        l1_regularization=float(l1_regularization),
        stats_stride=gradients.shape[0] if gradients.ndim == 2 else 0,
        constant_hessian=int(row_stats[0, 1]) if constant else None,
        count_bits=count_bits,
    )
