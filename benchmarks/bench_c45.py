"""Benchmark: gpuforest's decision trees (C4.5, CART) against Weka's J48 on standard data sets.

J48 is Weka's implementation of C4.5 release 8 (Quinlan, 1993). Each learner sees the same
stratified 10-fold cross-validation folds of each data set: J48 reads each fold's training
and test rows from ARFF files written here (``java -cp weka.jar weka.classifiers.trees.J48
-t train.arff -T test.arff``, with its defaults ``-C 0.25 -M 2``), and gpuforest gets the
same rows as arrays, nominal attributes as category codes and missing values as NaN.
Reported per data set and learner: the test error (the percentage of rows misclassified by
the model of the fold that held them out) and the mean tree size over the folds (all nodes,
J48's "Size of the tree", and leaves); then the averages over the data sets and the ratios
to J48.

Ten folds, not repeated holdout: stratified 10-fold cross-validation is the protocol of
Quinlan's and Weka's own evaluations (Witten & Frank, *Data Mining*, 2nd ed., section 5.3),
and it tests every row exactly once, which matters on the small sets (labor has 57 rows).

The learners: J48; ``gpuforest.DecisionTreeClassifier`` with its defaults (CART); and
each gpuforest variant of ``GPUFOREST_LEARNERS`` whose parameters the estimator has
(``algorithm="c45"``, ``use_surrogates=True``; ``max_surrogates=0``, the same trees with missing
values sent to the majority side, the baseline of surrogates), else reported "not available". Where the
estimator takes ``categorical_features``, it gets the mask of the nominal attributes.

``--missing 0.2`` removes 20% of the attribute values (cells of X, drawn without
replacement with ``--seed``; a drawn cell that was already missing stays missing) from the
whole data set before the folds are made, for every learner alike.

The data sets are the ARFF files that Weka ships (Debian: ``/usr/share/doc/weka/examples``).
Install Weka and Java on Debian or Ubuntu with::

    apt-get install weka        # /usr/share/java/weka.jar; pulls in a Java runtime

Run (minutes on 2 cores), which writes ``benchmarks/results/c45_vs_j48[_missing20].{json,md}``::

    python benchmarks/bench_c45.py [--missing 0.2] [--folds 10] [--seed 0] [--device cpu]
        [--datasets breast-cancer vote ...] [--arff-dir DIR] [--weka-jar PATH] [--output-name NAME]
"""

import argparse
import hashlib
import re
import subprocess
import tempfile
from pathlib import Path
from typing import NamedTuple

import bench_common
import numpy as np
import sklearn
from sklearn.model_selection import StratifiedKFold

import gpuforest

WEKA_JAR = Path("/usr/share/java/weka.jar")
ARFF_DIR = Path("/usr/share/doc/weka/examples")
J48_OPTIONS = ("-C", "0.25", "-M", "2")
# Where each of Weka's example files comes from (UCI Machine Learning Repository).
DATASETS = {
    "breast-cancer": "UCI Breast Cancer (Zwitter & Soklic, Institute of Oncology, Ljubljana)",
    "vote": "UCI Congressional Voting Records (1984)",
    "soybean": "UCI Soybean (Large) (Michalski & Chilausky, 1980)",
    "labor": "UCI Labor Relations (Canadian collective agreements, 1987-88)",
    "credit-g": "UCI Statlog German Credit (Hofmann)",
    "diabetes": "UCI Pima Indians Diabetes",
    "glass": "UCI Glass Identification (German, 1987)",
}
# gpuforest learners beyond J48: (name, DecisionTreeClassifier parameters). A learner runs
# only where the estimator has all its parameters.
GPUFOREST_LEARNERS = (
    ("gpuforest CART", {}),
    ("gpuforest C4.5", {"algorithm": "c45"}),
    ("gpuforest CART + surrogates", {"use_surrogates": True}),
    # The baseline of surrogates: the same trees, missing values at binary splits to the majority side.
    ("gpuforest CART, missing to the majority side", {"use_surrogates": True, "max_surrogates": 0}),
)
J48 = "J48"

# An ARFF field: a single- or double-quoted string (backslash escapes) or bare text, then a
# comma or the end of the line.
_FIELD = re.compile(r"""\s*('(?:\\.|[^'\\])*'|"(?:\\.|[^"\\])*"|[^,'"]*?)\s*(,|$)""")
_ATTRIBUTE = re.compile(r"""@attribute\s+('(?:\\.|[^'\\])*'|"(?:\\.|[^"\\])*"|\S+)\s+(.+)""", re.IGNORECASE)
_NUMERIC_TYPES = ("numeric", "real", "integer")


class Dataset(NamedTuple):
    """A classification data set read from ARFF; the class is the last attribute.

    Attributes
    ----------
    name : str
    X : ndarray of shape (n_samples, n_features), dtype float64
        Nominal attributes as codes ``0..k-1`` (their order of declaration), numeric ones as
        numbers; NaN where the value is missing (``?``).
    y : ndarray of shape (n_samples,), dtype int64
        Class codes.
    feature_names : list of str
    categories : list of (tuple of str or None)
        The values of each nominal attribute, None for a numeric one.
    class_name : str
    classes : tuple of str
    """

    name: str
    X: np.ndarray
    y: np.ndarray
    feature_names: list
    categories: list
    class_name: str
    classes: tuple

    @property
    def nominal_mask(self):
        """ndarray of shape (n_features,), bool: which attributes are nominal."""
        return np.array([values is not None for values in self.categories])


# --- ARFF --------------------------------------------------------------------------------


def split_fields(line):
    """The comma-separated fields of an ARFF line, quotes kept; ValueError on unbalanced quotes."""
    fields, position = [], 0
    while True:
        match = _FIELD.match(line, position)
        if match is None:
            raise ValueError(f"ARFF: cannot split {line!r} into fields (unbalanced quotes?)")
        fields.append(match.group(1))
        if not match.group(2):
            return fields
        position = match.end()


def unquote(field):
    """A field without its quotes and backslash escapes."""
    if field[:1] in "'\"" and len(field) > 1:
        return re.sub(r"\\(.)", r"\1", field[1:-1])
    return field


def quote(text):
    """``text`` as a single-quoted ARFF string."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def parse_arff(text, name):
    """A ``Dataset`` from the text of a dense ARFF file whose last attribute is the (nominal) class.

    Numeric (numeric, real, integer) and nominal attributes are supported; string, date,
    relational attributes, sparse rows and missing class values raise ValueError.
    """
    attributes, rows, in_data = [], [], False
    for number, line in enumerate(text.splitlines(), start=1):
        line = line.strip()
        if not line or line.startswith("%"):
            continue
        if in_data:
            if line.startswith("{"):
                raise ValueError(f"ARFF line {number}: sparse rows are not supported")
            fields = split_fields(line)
            if len(fields) != len(attributes):
                raise ValueError(
                    f"ARFF line {number}: {len(fields)} fields for {len(attributes)} attributes (instance "
                    "weights are not supported)"
                )
            rows.append(fields)
        elif line.lower().startswith("@attribute"):
            attributes.append(_parse_attribute(line, number))
        elif line.lower().startswith("@data"):
            in_data = True
    if not attributes or attributes[-1][1] is None:
        raise ValueError(f"ARFF {name}: the last attribute, the class, must be nominal")
    columns = [_column(values, [row[j] for row in rows], attribute) for j, (attribute, values) in enumerate(attributes)]
    y = columns.pop()
    if np.isnan(y).any():
        raise ValueError(f"ARFF {name}: missing class values are not supported")
    X = np.column_stack(columns) if columns else np.empty((len(rows), 0))
    names, categories = [name for name, _ in attributes[:-1]], [values for _, values in attributes[:-1]]
    return Dataset(name, X, y.astype(np.int64), names, categories, *attributes[-1])


def _parse_attribute(line, number):
    """(name, nominal values or None) of an ``@attribute`` line."""
    match = _ATTRIBUTE.match(line)
    if match is None:
        raise ValueError(f"ARFF line {number}: cannot read the attribute {line!r}")
    name, kind = unquote(match.group(1)), match.group(2).strip()
    if kind.startswith("{") and kind.endswith("}"):
        return name, tuple(unquote(value) for value in split_fields(kind[1:-1]))
    if kind.lower() in _NUMERIC_TYPES:
        return name, None
    raise ValueError(f"ARFF line {number}: attribute {name!r} has type {kind!r}; only numeric and nominal are supported")


def _column(values, fields, attribute):
    """One attribute's column as float64: numbers, or codes of nominal ``values``; NaN for ``?``."""
    codes = None if values is None else {value: code for code, value in enumerate(values)}
    column = np.full(len(fields), np.nan)
    for i, field in enumerate(fields):
        if field == "?":
            continue
        try:
            column[i] = float(field) if codes is None else codes[unquote(field)]
        except (KeyError, ValueError):
            raise ValueError(f"ARFF: {field!r} is not a value of attribute {attribute!r}") from None
    return column


def arff_text(dataset, rows):
    """The ARFF text of ``dataset``'s ``rows`` (indices), with its attribute declarations."""
    lines = [f"@relation {quote(dataset.name)}", ""]
    declarations = list(zip(dataset.feature_names, dataset.categories)) + [(dataset.class_name, dataset.classes)]
    for name, values in declarations:
        kind = "numeric" if values is None else "{" + ",".join(quote(value) for value in values) + "}"
        lines.append(f"@attribute {quote(name)} {kind}")
    lines += ["", "@data"]
    for i in rows:
        fields = [_field_text(value, values) for value, values in zip(dataset.X[i], dataset.categories)]
        lines.append(",".join(fields + [quote(dataset.classes[dataset.y[i]])]))
    return "\n".join(lines) + "\n"


def _field_text(value, values):
    """A value as an ARFF field: ``?`` if missing, the quoted name of a nominal code, or the number."""
    if np.isnan(value):
        return "?"
    return repr(float(value)) if values is None else quote(values[int(value)])


def remove_values(dataset, fraction, seed):
    """``dataset`` with ``round(fraction * X.size)`` cells of X, drawn without replacement, set to NaN."""
    X = dataset.X.copy()
    cells = np.random.default_rng(seed).choice(X.size, size=round(fraction * X.size), replace=False)
    X.flat[cells] = np.nan
    return dataset._replace(X=X)


# --- the learners ----------------------------------------------------------------------


def parse_j48_output(text):
    """Tree size and test error from the output of ``J48 -t TRAIN -T TEST``.

    Returns a dict: ``nodes`` ("Size of the tree"), ``leaves`` ("Number of Leaves"),
    ``errors`` and ``n_test`` (incorrectly classified and total instances of the
    "Error on test data" section). Weka exits with status 0 even after an exception, so a
    missing figure raises ValueError with the end of the output.
    """
    test_section = text.partition("=== Error on test data ===")[2]
    figures = {
        "leaves": (r"Number of Leaves\s*:\s*(\d+)", text),
        "nodes": (r"Size of the tree\s*:\s*(\d+)", text),
        "errors": (r"Incorrectly Classified Instances\s+([\d.]+)", test_section),
        "n_test": (r"Total Number of Instances\s+([\d.]+)", test_section),
    }
    result = {}
    for key, (pattern, where) in figures.items():
        match = re.search(pattern, where)
        if match is None:
            raise ValueError(f"J48 output has no {pattern!r}; its end:\n{text[-2000:]}")
        result[key] = int(match.group(1)) if key in ("leaves", "nodes") else float(match.group(1))
    return result


def run_j48(weka_jar, train_path, test_path):
    """J48 with ``J48_OPTIONS`` trained on one ARFF file and tested on another: ``parse_j48_output``'s dict."""
    # -v: no evaluation on the training data, whose figures the parser would have to skip.
    command = [
        "java", "-cp", str(weka_jar), "weka.classifiers.trees.J48", *J48_OPTIONS, "-v",
        "-t", str(train_path), "-T", str(test_path),
    ]
    return parse_j48_output(subprocess.run(command, capture_output=True, text=True, check=True).stdout)


def available_learners(device, seed):
    """The gpuforest learners whose parameters ``DecisionTreeClassifier`` has, with ``device`` and
    ``random_state`` added, and the others' reasons; and whether it takes ``categorical_features``."""
    accepted = gpuforest.DecisionTreeClassifier().get_params()
    available, unavailable = [], {}
    for name, parameters in GPUFOREST_LEARNERS:
        missing = sorted(set(parameters) - set(accepted))
        if missing:
            unavailable[name] = f"DecisionTreeClassifier has no parameter {', '.join(missing)}"
        else:
            available.append((name, {**parameters, "device": device, "random_state": seed}))
    return available, unavailable, "categorical_features" in accepted


def fit_gpuforest(parameters, dataset, train, test):
    """Tree size and test errors of a ``DecisionTreeClassifier(**parameters)`` on one fold."""
    tree = gpuforest.DecisionTreeClassifier(**parameters).fit(dataset.X[train], dataset.y[train])
    errors = np.count_nonzero(tree.predict(dataset.X[test]) != dataset.y[test])
    return {"nodes": int(tree.tree_.node_count), "leaves": int(tree.get_n_leaves()), "errors": float(errors),
            "n_test": float(len(test))}


# --- cross-validation ------------------------------------------------------------------


def cross_validate(dataset, learners, categorical, args):
    """Every learner on the same stratified folds of ``dataset``: {learner: result} (see ``_summary``).

    ``learners``: (name, DecisionTreeClassifier parameters) of the gpuforest learners; with
    ``categorical``, they also get the nominal attributes as ``categorical_features``.
    """
    folds = StratifiedKFold(n_splits=args.folds, shuffle=True, random_state=args.seed).split(dataset.X, dataset.y)
    runs = {J48: []} | {name: [] for name, _ in learners}
    failures = {}
    with tempfile.TemporaryDirectory(prefix="bench_c45_") as folder:
        train_path, test_path = Path(folder) / "train.arff", Path(folder) / "test.arff"
        for train, test in folds:
            train_path.write_text(arff_text(dataset, train))
            test_path.write_text(arff_text(dataset, test))
            runs[J48].append(run_j48(args.weka_jar, train_path, test_path))
            for name, parameters in learners:
                if name in failures:
                    continue
                if categorical:
                    parameters = {**parameters, "categorical_features": dataset.nominal_mask}
                try:
                    runs[name].append(fit_gpuforest(parameters, dataset, train, test))
                except Exception as error:  # reported in the results; the other learners go on
                    failures[name] = f"{type(error).__name__}: {error}"
    return {name: {"error": failures[name]} if name in failures else _summary(folds_run) for name, folds_run in
            runs.items()}


def _summary(folds):
    """A learner's result on one data set: test error over all rows (percent), mean nodes and leaves, per fold."""
    errors, n_test = sum(fold["errors"] for fold in folds), sum(fold["n_test"] for fold in folds)
    return {
        "error_pct": 100 * errors / n_test,
        "nodes": float(np.mean([fold["nodes"] for fold in folds])),
        "leaves": float(np.mean([fold["leaves"] for fold in folds])),
        "folds": folds,
    }


def describe(dataset, path):
    """A data set's shape, missing values and origin, for the report."""
    nominal = int(dataset.nominal_mask.sum())
    return {
        "rows": int(dataset.X.shape[0]),
        "nominal_attributes": nominal,
        "numeric_attributes": dataset.X.shape[1] - nominal,
        "classes": len(dataset.classes),
        "missing_pct": float(100 * np.isnan(dataset.X).mean()),
        "origin": f"{DATASETS[dataset.name]}; Weka's {path} (sha256 "
        f"{hashlib.sha256(path.read_bytes()).hexdigest()[:16]})",
    }


def add_averages(results, names):
    """Per learner, the means over the data sets where it ran on every set, and its ratios to J48."""
    averages = {}
    for name in names:
        rows = [result["learners"][name] for result in results.values()]
        if any("error" in row for row in rows):
            continue
        averages[name] = {key: float(np.mean([row[key] for row in rows])) for key in ("error_pct", "nodes", "leaves")}
    for table in [result["learners"] for result in results.values()] + [averages]:
        reference = table[J48]
        for row in table.values():
            if "error" not in row:
                row["error_vs_j48_pp"] = row["error_pct"] - reference["error_pct"]
                row["nodes_vs_j48"] = row["nodes"] / reference["nodes"]
                row["leaves_vs_j48"] = row["leaves"] / reference["leaves"]
    return averages


def run(args):
    """The whole comparison: the settings, the data sets, each learner's results and the averages."""
    learners, unavailable, categorical = available_learners(args.device, args.seed)
    results = {}
    for name in args.datasets:
        path = args.arff_dir / f"{name}.arff"
        dataset = parse_arff(path.read_text(), name)
        if args.missing:
            dataset = remove_values(dataset, args.missing, args.seed)
        print(f"[bench_c45] {name}: {dataset.X.shape[0]} x {dataset.X.shape[1]} ...", flush=True)
        results[name] = {**describe(dataset, path), "learners": cross_validate(dataset, learners, categorical, args)}
    names = [J48] + [name for name, _ in learners]
    return {
        "folds": args.folds,
        "seed": args.seed,
        "missing_fraction": args.missing,
        "device": args.device,
        "learners": {J48: "weka.classifiers.trees.J48 " + " ".join(J48_OPTIONS)}
        | {name: _call_text(parameters, categorical) for name, parameters in learners},
        "categorical_features_passed": categorical,
        "not_available": unavailable,
        "datasets": results,
        "averages": add_averages(results, names),
    }


def _call_text(parameters, categorical):
    """How a gpuforest learner is made, as a call."""
    arguments = [f"{key}={value!r}" for key, value in parameters.items()]
    arguments += ["categorical_features=<the nominal attributes>"] if categorical else []
    return f"gpuforest.DecisionTreeClassifier({', '.join(arguments)})"


# --- the report ------------------------------------------------------------------------


def tool_versions(weka_jar):
    """The versions of the libraries and of Weka and Java, for the report."""
    weka = subprocess.run(["java", "-cp", str(weka_jar), "weka.core.Version"], capture_output=True, text=True)
    java = subprocess.run(["java", "-version"], capture_output=True, text=True)
    return {
        "gpuforest": gpuforest.__version__,
        "sklearn": sklearn.__version__,
        "weka": weka.stdout.split("\n", 1)[0].strip(),
        "java": java.stderr.split("\n", 1)[0].strip(),
    }


def _markdown(report):
    result, machine, versions = report["results"], report["machine"], report["versions"]
    missing = result["missing_fraction"]
    lines = [
        f"# C4.5 against Weka's J48 ({report['date']})",
        "",
        f"Machine: {machine['cpu_count']} CPUs, {machine['platform']}; gpuforest {versions['gpuforest']} on "
        f"device={result['device']}, scikit-learn {versions['sklearn']}; Weka {versions['weka']} on {versions['java']}.",
        f"Stratified {result['folds']}-fold cross-validation (shuffled, seed {result['seed']}), the same folds for "
        "every learner: J48 reads each fold's rows from ARFF files, gpuforest gets them as arrays (nominal attributes "
        "as category codes, missing values as NaN). Test error: percent of the rows misclassified by the model of "
        "the fold that held them out. Nodes (J48's \"Size of the tree\", every node) and leaves: means over the folds. "
        "Averages: unweighted means over the data sets (their ratios to J48: ratios of the means).",
    ]
    if missing:
        lines.append(f"{100 * missing:g}% of the attribute values removed at random (seed {result['seed']}) "
                     "before the folds are made.")
    lines.append("Nominal attributes are " + (
        "declared to gpuforest by `categorical_features`." if result["categorical_features_passed"]
        else "given to gpuforest as ordered codes (its DecisionTreeClassifier has no `categorical_features`)."
    ))
    lines += ["", "## Data sets", "", "| data set | rows | nominal | numeric | classes | missing % | origin |",
              "|---|---:|---:|---:|---:|---:|---|"]
    for name, data in result["datasets"].items():
        lines.append(
            f"| {name} | {data['rows']} | {data['nominal_attributes']} | {data['numeric_attributes']} | "
            f"{data['classes']} | {data['missing_pct']:.1f} | {data['origin']} |"
        )
    lines += ["", "## Results", "", "| data set | learner | test error % | vs J48 (pp) | nodes | leaves | nodes / J48 "
              "| leaves / J48 |", "|---|---|---:|---:|---:|---:|---:|---:|"]
    tables = [(name, data["learners"]) for name, data in result["datasets"].items()]
    for name, table in tables + [("**average**", result["averages"])]:
        for learner, row in table.items():
            lines.append(_result_line(name, learner, row))
    lines += ["", "### Learners", ""]
    lines += [f"- **{name}**: `{call}`" for name, call in result["learners"].items()]
    lines += [f"- **{name}**: not available ({reason})" for name, reason in result["not_available"].items()]
    return "\n".join(lines)


def _result_line(dataset, learner, row):
    """A line of the results table."""
    if "error" in row:
        return f"| {dataset} | {learner} | failed: {row['error'].splitlines()[0][:100]} ||||||"
    return (
        f"| {dataset} | {learner} | {row['error_pct']:.2f} | {row['error_vs_j48_pp']:+.2f} | {row['nodes']:.1f} | "
        f"{row['leaves']:.1f} | {row['nodes_vs_j48']:.2f} | {row['leaves_vs_j48']:.2f} |"
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", choices=sorted(DATASETS), default=list(DATASETS))
    parser.add_argument("--folds", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--missing", type=float, default=0.0, help="fraction of the attribute values to remove")
    parser.add_argument("--device", choices=["cpu", "cuda", "auto"], default="cpu")
    parser.add_argument("--arff-dir", type=Path, default=ARFF_DIR)
    parser.add_argument("--weka-jar", type=Path, default=WEKA_JAR)
    parser.add_argument("--output-name", default=None, help="file stem under benchmarks/results/ (or an absolute path)")
    args = parser.parse_args()
    if not 0 <= args.missing < 1:
        parser.error(f"--missing must be in [0, 1), got {args.missing}")
    if args.folds < 2:
        parser.error(f"--folds must be at least 2, got {args.folds}")
    if not args.weka_jar.is_file():
        parser.error(f"{args.weka_jar} not found: install Weka (apt-get install weka) or pass --weka-jar")
    report = bench_common.make_report(lambda: run(args))
    report["versions"].update(tool_versions(args.weka_jar))
    stem = args.output_name or "c45_vs_j48" + (f"_missing{round(100 * args.missing)}" if args.missing else "")
    bench_common.save_report(report, stem, _markdown(report))


if __name__ == "__main__":
    main()
