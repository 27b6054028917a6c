"""The user guides stay true: every parameter table row names a real parameter of the estimators it
documents, with its default, every parameter of those estimators has a row, and every python example runs."""

import ast
import inspect
import re
from pathlib import Path

import numba
import pytest
from test_readme import python_blocks

import gpuforest

DOCS = Path(__file__).resolve().parents[1] / "docs"
GUIDES = sorted(DOCS.glob("guide-*.md"))
TABLE_HEADER = "| Parameter | Default | Meaning |"
# The default cell of a parameter without a default (scikit-learn's ``estimators`` of the voting estimators).
REQUIRED = "required"


def estimator_names(heading):
    """The gpuforest estimator classes named in backticks in a markdown heading."""
    names = re.findall(r"`(\w+)`", heading)
    return [name for name in names if inspect.isclass(getattr(gpuforest, name, None))]


def parameter_tables(text):
    """The parameter tables of a guide.

    Parameters
    ----------
    text : str
        The markdown.

    Returns
    -------
    tables : list of (list of str, list of (str, str))
        For each table: the estimators its heading names, and its rows as (parameter, default cell).
    """
    tables, heading, rows = [], None, None
    for line in text.splitlines():
        if line.startswith("#"):
            heading = line
        elif line.strip() == TABLE_HEADER:
            rows = []
            tables.append((estimator_names(heading), rows))
        elif rows is not None and line.startswith("|"):
            cells = [cell.strip() for cell in line.strip("|").split("|")]
            if not set(cells[0]) <= {"-"}:
                rows.append((re.fullmatch(r"`(\w+)`", cells[0]).group(1), cells[1]))
        else:
            rows = None
    return tables


def stated_defaults(cell, estimators):
    """The default each estimator has by a table's default cell.

    A cell is ``required``, one Python literal in backticks for every estimator, or
    ``\\`v1\\` for \\`A\\`, \\`B\\`; \\`v2\\` for \\`C\\``` for defaults that differ between them.

    Returns
    -------
    defaults : dict
        Estimator name -> the stated default (``inspect.Parameter.empty`` for ``required``).
    """
    if cell == REQUIRED:
        return dict.fromkeys(estimators, inspect.Parameter.empty)
    parts = cell.split(";")
    if len(parts) == 1 and " for " not in cell:
        return dict.fromkeys(estimators, ast.literal_eval(re.fullmatch(r"`(.+)`", cell).group(1)))
    defaults = {}
    for part in parts:
        value, _, names = part.partition(" for ")
        for name in re.findall(r"`(\w+)`", names):
            defaults[name] = ast.literal_eval(value.strip().strip("`"))
    return defaults


def constructor_defaults(estimator_class):
    """Each parameter's default in the signature of ``estimator_class.__init__`` (scikit-learn's ``get_params``)."""
    return {
        name: parameter.default
        for name, parameter in inspect.signature(estimator_class.__init__).parameters.items()
        if name != "self"
    }


TABLES = [(guide.name, estimators, rows) for guide in GUIDES for estimators, rows in parameter_tables(guide.read_text())]


def test_every_estimator_family_has_a_guide_with_tables():
    expected = {"guide-trees.md", "guide-forests.md", "guide-boosting.md", "guide-adaboost.md", "guide-voting.md",
                "guide-information.md"}
    assert expected <= {guide.name for guide in GUIDES}
    documented = {name for _, estimators, _ in TABLES for name in estimators}
    public = {name for name in gpuforest.__all__ if inspect.isclass(getattr(gpuforest, name))
              and hasattr(getattr(gpuforest, name), "get_params")}
    assert documented == public


@pytest.mark.parametrize("guide, estimators, rows", TABLES, ids=[f"{t[0]}:{','.join(t[1])}" for t in TABLES])
def test_parameter_table_matches_the_estimators(guide, estimators, rows):
    assert estimators, f"a parameter table of {guide} follows a heading that names no estimator"
    documented = [name for name, _ in rows]
    assert len(documented) == len(set(documented)), f"a parameter appears twice in {guide}"
    for name in estimators:
        estimator_class = getattr(gpuforest, name)
        actual = constructor_defaults(estimator_class)
        if REQUIRED not in {cell for _, cell in rows}:
            # get_params of a fresh estimator: the defaults scikit-learn's clone and repr see.
            assert estimator_class().get_params(deep=False) == actual
        missing = set(actual) - set(documented)
        assert not missing, f"{guide} documents no row for {name}'s parameters {sorted(missing)}"
    for parameter, cell in rows:
        stated = stated_defaults(cell, estimators)
        assert set(stated) <= set(estimators), f"{parameter}: {cell} names an estimator not in the heading"
        having = [name for name in estimators if parameter in constructor_defaults(getattr(gpuforest, name))]
        assert having, f"{guide}: no estimator of {estimators} has a parameter {parameter!r}"
        for name in having:
            actual = constructor_defaults(getattr(gpuforest, name))[parameter]
            assert name in stated, f"{guide}: {parameter}'s default for {name} is not stated"
            # Type and value: 1 and 1.0 mean different things to max_features.
            assert (type(stated[name]), stated[name]) == (type(actual), actual), f"{name}.{parameter}"


def test_stated_defaults_reads_every_form():
    assert stated_defaults('`"gini"`', ["A", "B"]) == {"A": "gini", "B": "gini"}
    assert stated_defaults('`"sqrt"` for `A`; `1.0` for `B`, `C`', ["A", "B", "C"]) == {"A": "sqrt", "B": 1.0, "C": 1.0}
    assert stated_defaults("required", ["A"]) == {"A": inspect.Parameter.empty}


EXAMPLES = [(guide, line, code) for guide in GUIDES for line, code in python_blocks(guide.read_text())]


@pytest.fixture(autouse=True)
def one_numba_thread():
    # Tiny examples: more numba threads than one only wait on each other beside pytest-xdist's workers.
    threads = numba.get_num_threads()
    numba.set_num_threads(1)
    yield
    numba.set_num_threads(threads)


def test_every_guide_has_an_example():
    assert {guide for guide, _, _ in EXAMPLES} == set(GUIDES)


@pytest.mark.parametrize("guide, line, code", EXAMPLES, ids=[f"{g.name}:line{line}" for g, line, _ in EXAMPLES])
def test_guide_example_runs(guide, line, code, capsys):
    exec(compile(code, str(guide), "exec"), {"__name__": "__guide__"})
    assert capsys.readouterr().out


def test_readme_links_every_document_and_the_links_resolve():
    root = DOCS.parent
    readme = (root / "README.md").read_text()
    for document in [*DOCS.glob("*.md"), root / "CHANGELOG.md", root / "docker" / "README.md"]:
        assert f"]({document.relative_to(root).as_posix()})" in readme, f"README links no {document.name}"
    for page in [root / "README.md", root / "CHANGELOG.md", *GUIDES]:
        for target in re.findall(r"\]\(([^)#:]+)\)", page.read_text()):
            assert (page.parent / target).exists(), f"{page.name} links {target}, which does not exist"
