"""The C4.5-against-J48 harness (benchmarks/bench_c45.py): its ARFF reader and writer, the
removal of values, and its reading of J48's output, on texts written here; J48 itself runs
only where Java and Weka are installed (``apt-get install weka``)."""

import importlib.util
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from gpuforest.datasets import load_weather

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "benchmarks" / "bench_c45.py"


def _load_script():
    # The script imports bench_common from its own folder, as it does when run.
    sys.path.insert(0, str(SCRIPT.parent))
    try:
        spec = importlib.util.spec_from_file_location("bench_c45", SCRIPT)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(SCRIPT.parent))
    return module


bench = _load_script()

# Weka's layouts: quoted names with spaces, a nominal list spaced as in soybean.arff, quoted
# values holding commas and quotes, missing values of both kinds, comments.
ARFF = """\
% a comment
@RELATION test

@ATTRIBUTE 'age group' {'10-19', '20-29','<30, or not'}
@attribute size REAL
@attribute colour { red,  green, 'it\\'s blue'}
@attribute class {yes,no}

@DATA
'10-19',1.5,red,yes
% a comment among the rows
'<30, or not',?, 'it\\'s blue' ,no
?,-2e-3,green,no
'20-29',7,?,yes
"""


def test_parse_arff_reads_nominal_numeric_and_missing_values():
    dataset = bench.parse_arff(ARFF, "test")
    expected_X = np.array([[0, 1.5, 0], [2, np.nan, 2], [np.nan, -0.002, 1], [1, 7, np.nan]])
    np.testing.assert_array_equal(dataset.X, expected_X)
    np.testing.assert_array_equal(dataset.y, [0, 1, 1, 0])
    assert dataset.feature_names == ["age group", "size", "colour"]
    assert dataset.categories == [("10-19", "20-29", "<30, or not"), None, ("red", "green", "it's blue")]
    assert (dataset.class_name, dataset.classes) == ("class", ("yes", "no"))
    np.testing.assert_array_equal(dataset.nominal_mask, [True, False, True])


def test_arff_text_reads_back_as_the_chosen_rows():
    dataset = bench.parse_arff(ARFF, "test")
    rows = np.array([3, 1, 2])
    again = bench.parse_arff(bench.arff_text(dataset, rows), "test")
    np.testing.assert_array_equal(again.X, dataset.X[rows])
    np.testing.assert_array_equal(again.y, dataset.y[rows])
    assert (again.feature_names, again.categories, again.classes) == (
        dataset.feature_names, dataset.categories, dataset.classes
    )


@pytest.mark.parametrize(
    "text, message",
    [
        ("@attribute a string\n@attribute c {x}\n@data\nu,x\n", "only numeric and nominal"),
        ("@attribute a numeric\n@attribute c {x}\n@data\n1,x,2\n", "3 fields for 2 attributes"),
        ("@attribute a {p,q}\n@attribute c {x}\n@data\nr,x\n", "'r' is not a value of attribute 'a'"),
        ("@attribute a numeric\n@attribute c {x}\n@data\n1,?\n", "missing class values"),
        ("@attribute a {p,q}\n@attribute c numeric\n@data\np,1\n", "class, must be nominal"),
        ("@attribute a {p,q}\n@attribute c {x}\n@data\n'p,x\n", "unbalanced quotes"),
        ("@attribute a {p,q}\n@attribute c {x}\n@data\n{0 q}\n", "sparse rows"),
    ],
)
def test_parse_arff_rejects_what_it_does_not_read(text, message):
    with pytest.raises(ValueError, match=message):
        bench.parse_arff(text, "bad")


def test_remove_values_removes_the_fraction_of_cells_with_the_seed():
    dataset = bench.parse_arff(ARFF, "test")
    full = dataset._replace(X=np.arange(40.0).reshape(10, 4), y=np.zeros(10, dtype=np.int64))
    removed = bench.remove_values(full, 0.2, seed=3)
    assert np.isnan(removed.X).sum() == 8
    kept = ~np.isnan(removed.X)
    np.testing.assert_array_equal(removed.X[kept], full.X[kept])
    np.testing.assert_array_equal(np.isnan(bench.remove_values(full, 0.2, seed=3).X), ~kept)
    assert not np.isnan(full.X).any()


# The output of Weka 3.6's ``J48 -C 0.25 -M 2 -t labor.arff -T test.arff``, with different
# figures on the training and the test data.
J48_OUTPUT = """
Options: -C 0.25 -M 2

J48 pruned tree
------------------

wage-increase-first-year <= 2.5: bad (15.27/2.27)
wage-increase-first-year > 2.5
|   statutory-holidays <= 10: bad (10.77/4.77)
|   statutory-holidays > 10: good (30.96/1.0)

Number of Leaves  : \t3

Size of the tree : \t5


Time taken to build model: 0.03 seconds
Time taken to test model on training data: 0.01 seconds

=== Error on training data ===

Correctly Classified Instances          50               87.7193 %
Incorrectly Classified Instances         7               12.2807 %
Total Number of Instances               57


=== Error on test data ===

Correctly Classified Instances          16               84.2105 %
Incorrectly Classified Instances         3               15.7895 %
Kappa statistic                          0.6667
Total Number of Instances               19
"""


def test_parse_j48_output_reads_the_tree_size_and_the_test_errors():
    assert bench.parse_j48_output(J48_OUTPUT) == {"leaves": 3, "nodes": 5, "errors": 3.0, "n_test": 19.0}


def test_parse_j48_output_rejects_an_output_without_the_figures():
    with pytest.raises(ValueError, match="Weka exception: No source has been specified"):
        bench.parse_j48_output("\nWeka exception: No source has been specified\n\nGeneral options:\n")


@pytest.mark.skipif(
    shutil.which("java") is None or not bench.WEKA_JAR.is_file(), reason="needs Java and Weka (apt-get install weka)"
)
def test_j48_grows_quinlans_weather_tree(tmp_path):
    # Quinlan (1986), Figure 2: outlook at the root, humidity under sunny, windy under rain;
    # 3 decision nodes and 5 leaves, all 14 rows right. Pruning at C = 0.25 keeps it.
    weather = load_weather()
    dataset = bench.Dataset(
        "weather", weather.data, weather.target, weather.feature_names, [tuple(c) for c in weather.categories],
        "play", tuple(weather.target_names),
    )
    path = tmp_path / "weather.arff"
    path.write_text(bench.arff_text(dataset, np.arange(14)))
    assert bench.run_j48(bench.WEKA_JAR, path, path) == {"leaves": 5, "nodes": 8, "errors": 0.0, "n_test": 14.0}
