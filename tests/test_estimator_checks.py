"""scikit-learn's estimator API conformance checks for the gpuforest trees.

``expected_failed_checks`` may only list deliberate design differences from
scikit-learn's conventions, with a one-line reason each, and at most three per
estimator. Today there are none: every check that fails is a bug to fix in
gpuforest, not an entry to add here.
"""

from sklearn.utils.estimator_checks import parametrize_with_checks

from gpuforest import DecisionTreeClassifier, DecisionTreeRegressor

MAX_EXPECTED_FAILURES = 3

# Deliberate design differences only: {estimator class name: {check name: reason}}.
EXPECTED_FAILED_CHECKS = {
    "DecisionTreeClassifier": {},
    "DecisionTreeRegressor": {},
}

ESTIMATORS = [DecisionTreeClassifier(random_state=0), DecisionTreeRegressor(random_state=0)]


def expected_failed_checks(estimator):
    return EXPECTED_FAILED_CHECKS[type(estimator).__name__]


def test_expected_failures_are_few_and_explained():
    for estimator in ESTIMATORS:
        failures = expected_failed_checks(estimator)
        assert len(failures) <= MAX_EXPECTED_FAILURES
        for check_name, reason in failures.items():
            assert check_name.startswith("check_")
            assert reason.strip() and "\n" not in reason


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=expected_failed_checks)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)
