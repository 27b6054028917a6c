"""Small data sets from the decision-tree literature, stored in this module.

``load_weather`` returns Quinlan's 14-row weather ("play tennis") data in the
shape of scikit-learn's ``load_iris``: a ``Bunch`` with ``data``, ``target``,
their names and ``DESCR``, plus which features are categorical and the names
of their category codes.
"""

import numpy as np
from sklearn.utils import Bunch

# The rows in the order of Quinlan (1986), Table 1. The numeric Temperature (degrees F) and
# Humidity (%) of each row are those of Quinlan (1993), ch. 1 (C4.5 release 8's golf.data), whose
# rows are the same days: Outlook, Windy and Play agree row by row.
_OUTLOOK = ["sunny", "overcast", "rain"]
_TEMPERATURE = ["hot", "mild", "cool"]
_HUMIDITY = ["high", "normal"]
_WINDY = ["false", "true"]
_PLAY = ["no", "yes"]

_ROWS = [
    # outlook, temperature, humidity, windy, play, temperature (F), humidity (%)
    ("sunny", "hot", "high", "false", "no", 85, 85),
    ("sunny", "hot", "high", "true", "no", 80, 90),
    ("overcast", "hot", "high", "false", "yes", 83, 78),
    ("rain", "mild", "high", "false", "yes", 70, 96),
    ("rain", "cool", "normal", "false", "yes", 68, 80),
    ("rain", "cool", "normal", "true", "no", 65, 70),
    ("overcast", "cool", "normal", "true", "yes", 64, 65),
    ("sunny", "mild", "high", "false", "no", 72, 95),
    ("sunny", "cool", "normal", "false", "yes", 69, 70),
    ("rain", "mild", "normal", "false", "yes", 75, 80),
    ("sunny", "mild", "normal", "true", "yes", 75, 70),
    ("overcast", "mild", "high", "true", "yes", 72, 90),
    ("overcast", "hot", "normal", "false", "yes", 81, 75),
    ("rain", "mild", "high", "true", "no", 71, 80),
]

_FEATURE_NAMES = ["outlook", "temperature", "humidity", "windy"]
_CATEGORIES = [_OUTLOOK, _TEMPERATURE, _HUMIDITY, _WINDY]
# Where a row holds the number of each feature that ``numeric=True`` gives as a number.
_NUMERIC_COLUMNS = {"temperature": 5, "humidity": 6}

_WEATHER_DESCR = """\
.. _weather_dataset:

Weather ("play tennis") data set
--------------------------------

**Data Set Characteristics:**

:Number of Instances: 14 (9 yes, 5 no)
:Number of Attributes: 4
:Attribute Information:
    - outlook: sunny, overcast, rain
    - temperature: hot, mild, cool (``numeric=True``: degrees Fahrenheit)
    - humidity: high, normal (``numeric=True``: percent)
    - windy: false, true
    - class (play): no, yes

Saturday mornings described by the weather, and whether they suit an unnamed
activity. The nominal table is Table 1 of Quinlan (1986), the training set of
the ID3 worked example: information gains Outlook 0.246, Temperature 0.029,
Humidity 0.151 and Windy 0.048 bits (section 4), gain ratio of Outlook 0.156.
The numeric variant, with Temperature and Humidity as numbers, is the training
set of Quinlan (1993), ch. 1 (``golf.data`` of C4.5 release 8), row for row the
same days. Witten & Frank's ``weather.numeric.arff`` (Weka) differs from it in
two humidities: 86 for 78 (row 3) and 91 for 80 (row 14).

Categorical columns of ``data`` hold integer category codes (as float64);
``categories`` names each feature's codes (None for a numeric feature) and
``categorical_features`` is their mask.

.. topic:: References

   - Quinlan, J. R. (1986). Induction of decision trees. Machine Learning, 1(1), 81-106.
   - Quinlan, J. R. (1993). C4.5: Programs for Machine Learning. Morgan Kaufmann.
   - Witten, I. H., & Frank, E. (2005). Data Mining: Practical Machine Learning Tools and
     Techniques, 2nd ed., section 1.2. Morgan Kaufmann.
"""


def load_weather(*, numeric=False, as_frame=False, return_X_y=False):
    """Load Quinlan's weather ("play tennis") data set (classification, 14 rows).

    =================   ======================================
    Classes             2
    Samples per class   9 yes, 5 no
    Samples total       14
    Features            4: nominal, or 2 nominal and 2 numeric
    =================   ======================================

    Parameters
    ----------
    numeric : bool, default=False
        Temperature and Humidity as numbers (Quinlan 1993) instead of the
        categories of Quinlan (1986).
    as_frame : bool, default=False
        ``data`` as a pandas DataFrame (nominal columns of ``category`` dtype),
        ``target`` as a categorical Series and ``frame`` as both together.
        Needs pandas.
    return_X_y : bool, default=False
        Return ``(data, target)`` instead of a Bunch.

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        data : ndarray of shape (14, 4), float64, or DataFrame
            Category codes ``0 .. k-1`` for nominal features, values for numeric ones.
        target : ndarray of shape (14,), int64, or Series
            Class codes: 0 = no, 1 = yes.
        frame : DataFrame of shape (14, 5), or None without ``as_frame``.
        feature_names : list of str
        target_names : ndarray of shape (2,), str
        categories : list of length 4
            For each feature the names of its codes (a list of str), or None when numeric.
        categorical_features : ndarray of shape (4,), bool
        DESCR : str
    (data, target) : tuple if ``return_X_y`` is True

    Examples
    --------
    >>> from gpuforest.datasets import load_weather
    >>> weather = load_weather()
    >>> weather.data.shape, weather.categories[0]
    ((14, 4), ['sunny', 'overcast', 'rain'])
    """
    categories = [None if numeric and name in _NUMERIC_COLUMNS else values
                  for name, values in zip(_FEATURE_NAMES, _CATEGORIES)]
    columns = []
    for feature, (name, values) in enumerate(zip(_FEATURE_NAMES, categories)):
        if values is None:
            columns.append([row[_NUMERIC_COLUMNS[name]] for row in _ROWS])
        else:
            columns.append([values.index(row[feature]) for row in _ROWS])
    data = np.array(columns, dtype=np.float64).T
    target = np.array([_PLAY.index(row[4]) for row in _ROWS], dtype=np.int64)
    categorical_features = np.array([values is not None for values in categories])
    frame = None
    if as_frame:
        data, target, frame = _as_frame(data, target, categories)
    if return_X_y:
        return data, target
    return Bunch(
        data=data, target=target, frame=frame, feature_names=list(_FEATURE_NAMES),
        target_names=np.array(_PLAY), categories=[None if c is None else list(c) for c in categories],
        categorical_features=categorical_features, DESCR=_WEATHER_DESCR,
    )


def _as_frame(data, target, categories):
    """``data`` as a DataFrame with categorical columns, ``target`` as a Series, and the two joined."""
    try:
        import pandas as pd
    except ImportError as error:
        raise ImportError("load_weather(as_frame=True) needs pandas; install it with `pip install pandas`.") from error
    columns = {}
    for name, column, names in zip(_FEATURE_NAMES, data.T, categories):
        if names is None:
            columns[name] = column
        else:
            columns[name] = pd.Categorical.from_codes(column.astype(np.int64), categories=names)
    data_frame = pd.DataFrame(columns)
    target_series = pd.Series(pd.Categorical.from_codes(target, categories=_PLAY), name="play")
    return data_frame, target_series, pd.concat([data_frame, target_series], axis=1)
