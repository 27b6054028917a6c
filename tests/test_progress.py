"""Progress bars, the boosting log, callbacks, checkpoints and the forms of ``eval_set``."""

import pickle
import re

import numpy as np
import pytest

from gpuforest import (
    AdaBoostClassifier, BaggingRegressor, Checkpoint, DecisionTreeRegressor, GradientBoostingClassifier,
    GradientBoostingRegressor, RandomForestClassifier, StopTraining, TrainingCallback,
)


def regression_data(n_samples=120, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_samples, 3)).astype(np.float32)
    y = 2.0 * X[:, 0] - X[:, 1] + rng.normal(scale=0.5, size=n_samples)
    return X[:80], y[:80], X[80:], y[80:]


def half_squared_errors(model, X, y):
    """The mean of ``(y - prediction)^2 / 2`` after each round, from the staged predictions (a naive reference)."""
    return [0.5 * np.mean((y - prediction) ** 2) for prediction in model.staged_predict(X)]


def boosting(**params):
    defaults = dict(n_estimators=6, max_leaf_nodes=4, min_samples_leaf=5, learning_rate=0.3, device="cpu")
    return GradientBoostingRegressor(**{**defaults, "random_state": 0, **params})


# --- bars -------------------------------------------------------------------------------


def test_forest_bar_counts_the_trees(capsys):
    X, y, _, _ = regression_data()
    RandomForestClassifier(n_estimators=4, max_depth=2, device="cpu", verbose=1).fit(X, y > 0)
    err = capsys.readouterr().err
    assert "RandomForestClassifier" in err and "4/4" in err and "tree" in err


def test_bagging_of_gpuforest_trees_shows_its_forests_bar(capsys):
    X, y, _, _ = regression_data()
    BaggingRegressor(DecisionTreeRegressor(max_depth=3, device="cpu"), n_estimators=3, verbose=1).fit(X, y)
    err = capsys.readouterr().err
    assert "RandomForestRegressor" in err and "3/3" in err


def test_adaboost_bar_counts_the_members(capsys):
    X, y, _, _ = regression_data()
    model = AdaBoostClassifier(n_estimators=3, device="cpu", verbose=1).fit(X, y > 0)
    err = capsys.readouterr().err
    assert f"{len(model.estimators_)}/3" in err and "AdaBoostClassifier" in err


def test_boosting_bar_counts_the_rounds_and_quiet_by_default(capsys):
    X, y, _, _ = regression_data()
    boosting(early_stopping=False).fit(X, y)
    assert capsys.readouterr() == ("", "")
    boosting(early_stopping=False, verbose=1).fit(X, y)
    captured = capsys.readouterr()
    assert captured.out == "" and "6/6" in captured.err and "round" in captured.err


# --- the log ----------------------------------------------------------------------------


def test_boosting_logs_train_and_validation_loss_every_k_rounds(capsys):
    X, y, X_val, y_val = regression_data()
    model = boosting(early_stopping=False, verbose=2).fit(X, y, eval_set=(X_val, y_val))
    lines = re.findall(r"\[(\d+)\] train loss (\S+), validation loss (\S+)", capsys.readouterr().err)
    assert [int(round) for round, _, _ in lines] == [2, 4, 6]
    train, validation = half_squared_errors(model, X, y), half_squared_errors(model, X_val, y_val)
    for round, train_loss, validation_loss in lines:
        np.testing.assert_allclose(float(train_loss), train[int(round) - 1], rtol=1e-5)
        np.testing.assert_allclose(float(validation_loss), validation[int(round) - 1], rtol=1e-5)


def test_early_stopping_says_when_and_why(capsys):
    X, y, X_val, y_val = regression_data()
    model = boosting(n_estimators=40, n_iter_no_change=2, tol=0.05, verbose=10).fit(X, y, eval_set=[(X_val, y_val)])
    # The rule by hand: stop before round r + 1 once none of the last 2 scores beats the one before them by tol.
    losses = [0.5 * np.mean((y_val - y.mean()) ** 2)] + half_squared_errors(model, X_val, y_val)
    stop = next(r for r in range(2, 41) if min(losses[r - 1: r + 1]) >= losses[r - 2] - 0.05)
    assert model.n_iter_ == stop < 40
    best = int(np.argmin(losses))
    message = re.search(r"Early stopping after round (\d+): .*last 2 rounds.*tol=0.05; best round (\d+) "
                        r"\(validation loss (\S+)\)", capsys.readouterr().err)
    assert message and (int(message[1]), int(message[2])) == (stop, best)
    np.testing.assert_allclose(float(message[3]), losses[best], rtol=1e-5)


# --- callbacks --------------------------------------------------------------------------


def test_a_callback_returning_true_stops_at_its_round(capsys):
    X, y, X_val, y_val = regression_data()
    seen = []

    def stop_at_three(round, scores):
        seen.append((round, scores))
        return round == 3

    model = boosting(callbacks=[stop_at_three], early_stopping=False, verbose=1).fit(X, y, eval_set=(X_val, y_val))
    assert model.n_iter_ == 3 and [round for round, _ in seen] == [1, 2, 3]
    np.testing.assert_allclose(
        [-scores["validation"] for _, scores in seen], half_squared_errors(model, X_val, y_val), rtol=1e-6
    )
    np.testing.assert_array_equal(model.predict(X_val), boosting(n_estimators=3).fit(X, y).predict(X_val))
    assert "Training stopped after round 3: callback stop_at_three returned True." in capsys.readouterr().err


def test_stop_training_raised_by_a_callback_stops_and_scores_are_empty_without_validation():
    X, y, _, _ = regression_data()

    class StopAtTwo(TrainingCallback):
        def __call__(self, round, scores):
            assert scores == {}
            if round == 2:
                raise StopTraining("enough")

    model = boosting(callbacks=[StopAtTwo()], early_stopping=False).fit(X, y)
    assert model.n_iter_ == 2 and len(model.trees_) == 2


def test_callbacks_must_be_callable():
    X, y, _, _ = regression_data()
    with pytest.raises(TypeError, match="callbacks must be callables"):
        boosting(callbacks=["not a callback"]).fit(X, y)
    with pytest.raises(ValueError, match="every must be a positive int"):
        Checkpoint("model.pkl", every=0)


@pytest.mark.parametrize("make", [
    lambda: boosting(n_estimators=5, early_stopping=False),
    lambda: GradientBoostingClassifier(
        n_estimators=5, max_leaf_nodes=4, min_samples_leaf=5, early_stopping=False, device="cpu", random_state=0
    ),
])
def test_resuming_from_a_checkpoint_grows_the_uninterrupted_model(tmp_path, make):
    X, y, X_val, _ = regression_data()
    if isinstance(make(), GradientBoostingClassifier):
        y = np.digitize(y, [-1.0, 1.0])  # three classes: three trees a round
    path = tmp_path / "model.pkl"
    make().set_params(callbacks=[Checkpoint(path, every=2), lambda round, scores: round == 3]).fit(X, y)
    with open(path, "rb") as file:
        resumed = pickle.load(file)
    assert resumed.n_iter_ == 2 and resumed.callbacks is None  # round 2's checkpoint; round 3 was not written
    resumed.set_params(warm_start=True).fit(X, y)
    uninterrupted = make().fit(X, y)
    assert resumed.n_iter_ == uninterrupted.n_iter_ == 5
    for ours, theirs in zip(resumed.trees_, uninterrupted.trees_):
        np.testing.assert_array_equal(ours.threshold, theirs.threshold)
        np.testing.assert_array_equal(ours.value, theirs.value)
    np.testing.assert_array_equal(resumed.predict(X_val), uninterrupted.predict(X_val))


# --- eval_set ---------------------------------------------------------------------------


def test_eval_set_as_a_list_of_one_pair_equals_the_tuple():
    X, y, X_val, y_val = regression_data()
    as_tuple = boosting(n_iter_no_change=100).fit(X, y, eval_set=(X_val, y_val))
    as_list = boosting(n_iter_no_change=100).fit(X, y, eval_set=[(X_val, y_val)])
    assert as_list.validation_score_ == as_tuple.validation_score_
    np.testing.assert_allclose(
        -np.array(as_list.validation_score_[1:]), half_squared_errors(as_list, X_val, y_val), rtol=1e-6
    )


def test_eval_set_without_early_stopping_is_scored_not_ignored():
    X, y, X_val, y_val = regression_data()
    model = boosting(early_stopping=False).fit(X, y, eval_set=(X_val, y_val))
    assert model.n_iter_ == 6 and len(model.validation_score_) == 7
    np.testing.assert_allclose(-np.array(model.validation_score_[1:]), half_squared_errors(model, X_val, y_val),
                               rtol=1e-6)


@pytest.mark.parametrize("eval_set, error, match", [
    ("empty list", ValueError, "empty list"),
    ("not pairs", TypeError, "must hold \\(X_val, y_val\\) pairs"),
    ("array", TypeError, "must be a tuple"),
])
def test_bad_eval_sets_are_refused(eval_set, error, match):
    X, y, X_val, y_val = regression_data()
    eval_set = {"empty list": [], "not pairs": [X_val, y_val, y_val, y_val], "array": X_val}[eval_set]
    for model in (boosting(), DecisionTreeRegressor(pruning="reduced_error", device="cpu")):
        with pytest.raises(error, match=match):
            model.fit(X, y, eval_set=eval_set)


def test_tree_pruning_refuses_two_validation_sets():
    X, y, X_val, y_val = regression_data()
    with pytest.raises(ValueError, match="holds 2 pairs"):
        DecisionTreeRegressor(pruning="reduced_error", device="cpu").fit(X, y, eval_set=[(X, y), (X_val, y_val)])


def test_every_eval_set_pair_is_recorded_and_the_last_decides_early_stopping():
    X, y, X_val, y_val = regression_data()
    model = boosting(n_estimators=40, n_iter_no_change=2, tol=0.05).fit(X, y, eval_set=[(X, y), (X_val, y_val)])
    last_only = boosting(n_estimators=40, n_iter_no_change=2, tol=0.05).fit(X, y, eval_set=(X_val, y_val))
    assert model.n_iter_ == last_only.n_iter_ < 40
    assert model.validation_score_ == last_only.validation_score_
    assert list(model.evals_result_) == ["validation_0", "validation_1"]
    for name, (X_eval, y_eval) in (("validation_0", (X, y)), ("validation_1", (X_val, y_val))):
        np.testing.assert_allclose(model.evals_result_[name]["loss"], half_squared_errors(model, X_eval, y_eval),
                                   rtol=1e-6)


def test_eval_sets_without_early_stopping_are_recorded_and_logged(capsys):
    X, y, X_val, y_val = regression_data()
    X_other, y_other = X_val[:20], y_val[:20]
    model = boosting(early_stopping=False, verbose=3).fit(X, y, eval_set=[(X_val, y_val), (X_other, y_other)])
    assert model.n_iter_ == 6
    references = [half_squared_errors(model, X_val, y_val), half_squared_errors(model, X_other, y_other)]
    for index, reference in enumerate(references):
        np.testing.assert_allclose(model.evals_result_[f"validation_{index}"]["loss"], reference, rtol=1e-6)
    lines = re.findall(r"\[(\d+)\] train loss \S+, validation_0 loss (\S+), validation_1 loss (\S+)",
                       capsys.readouterr().err)
    assert [int(round) for round, _, _ in lines] == [3, 6]
    for round, first, second in lines:
        np.testing.assert_allclose([float(first), float(second)], [r[int(round) - 1] for r in references], rtol=1e-5)


def test_evals_result_is_empty_without_eval_set():
    X, y, _, _ = regression_data()
    assert boosting(early_stopping=True).fit(X, y).evals_result_ == {}


def test_tree_pruning_takes_eval_set_as_a_list_of_one_pair():
    X, y, X_val, y_val = regression_data()
    as_tuple = DecisionTreeRegressor(pruning="reduced_error", device="cpu").fit(X, y, eval_set=(X_val, y_val))
    as_list = DecisionTreeRegressor(pruning="reduced_error", device="cpu").fit(X, y, eval_set=[(X_val, y_val)])
    full = DecisionTreeRegressor(device="cpu").fit(X, y)
    assert as_list.tree_.node_count == as_tuple.tree_.node_count < full.tree_.node_count
    np.testing.assert_array_equal(as_list.predict(X_val), as_tuple.predict(X_val))


def test_a_single_tree_shows_one_bar_when_verbose_and_nothing_by_default(capsys):
    X, y, _, _ = regression_data()
    DecisionTreeRegressor(max_depth=3, device="cpu").fit(X, y)
    assert capsys.readouterr() == ("", "")
    tree = DecisionTreeRegressor(max_depth=3, device="cpu", verbose=1).fit(X, y)
    captured = capsys.readouterr()
    assert captured.out == "" and "DecisionTreeRegressor" in captured.err and "1/1" in captured.err
    assert f"nodes={tree.tree_.node_count}" in captured.err
