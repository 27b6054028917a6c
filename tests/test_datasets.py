"""load_weather against Quinlan's tables, typed here from the sources in their own formats."""

import sys

import numpy as np
import pytest

from gpuforest.datasets import load_weather

# Quinlan (1986), Table 1: No., Outlook, Temperature, Humidity, Windy, Class (P: play, N: don't).
QUINLAN_1986_TABLE_1 = """
1 sunny hot high false N
2 sunny hot high true N
3 overcast hot high false P
4 rain mild high false P
5 rain cool normal false P
6 rain cool normal true N
7 overcast cool normal true P
8 sunny mild high false N
9 sunny cool normal false P
10 rain mild normal false P
11 sunny mild normal true P
12 overcast mild high true P
13 overcast hot normal false P
14 rain mild high true N
"""

# Quinlan (1993), ch. 1, in the format of C4.5 release 8's golf.data.
C45_GOLF_DATA = """
sunny, 85, 85, false, Don't Play
sunny, 80, 90, true, Don't Play
overcast, 83, 78, false, Play
rain, 70, 96, false, Play
rain, 68, 80, false, Play
rain, 65, 70, true, Don't Play
overcast, 64, 65, true, Play
sunny, 72, 95, false, Don't Play
sunny, 69, 70, false, Play
rain, 75, 80, false, Play
sunny, 75, 70, true, Play
overcast, 72, 90, true, Play
overcast, 81, 75, false, Play
rain, 71, 80, true, Don't Play
"""


def decoded(weather):
    """Each row as names (nominal features) or numbers (numeric ones)."""
    return [
        tuple(names[int(value)] if names is not None else value for value, names in zip(row, weather.categories))
        for row in weather.data
    ]


def test_nominal_weather_is_quinlans_table_1():
    weather = load_weather()
    table = [line.split() for line in QUINLAN_1986_TABLE_1.strip().splitlines()]
    assert decoded(weather) == [tuple(row[1:5]) for row in table]
    assert [weather.target_names[code] for code in weather.target] == [
        {"P": "yes", "N": "no"}[row[5]] for row in table
    ]
    assert weather.data.dtype == np.float64 and weather.data.shape == (14, 4)
    assert weather.categorical_features.tolist() == [True, True, True, True]
    assert weather.feature_names == ["outlook", "temperature", "humidity", "windy"]
    assert weather.frame is None and "Quinlan" in weather.DESCR


def test_numeric_weather_is_c45s_golf_data():
    weather = load_weather(numeric=True)
    table = [[field.strip() for field in line.split(",")] for line in C45_GOLF_DATA.strip().splitlines()]
    assert decoded(weather) == [(row[0], float(row[1]), float(row[2]), row[3]) for row in table]
    assert weather.target.tolist() == [int(row[4] == "Play") for row in table]
    assert weather.categorical_features.tolist() == [True, False, False, True]
    assert weather.categories[1] is None and weather.categories[2] is None


def test_numeric_temperatures_order_as_the_nominal_ones():
    """The two variants describe the same days: every hot day is warmer than every mild day, and so on."""
    temperature_names = load_weather().categories[1]
    nominal = np.array(temperature_names)[load_weather().data[:, 1].astype(int)]
    degrees = load_weather(numeric=True).data[:, 1]
    assert degrees[nominal == "cool"].max() < degrees[nominal == "mild"].min()
    assert degrees[nominal == "mild"].max() < degrees[nominal == "hot"].min()


@pytest.mark.parametrize("numeric", [False, True])
def test_as_frame_has_category_columns(numeric):
    pytest.importorskip("pandas")
    weather = load_weather(numeric=numeric, as_frame=True)
    arrays = load_weather(numeric=numeric)
    for name, names, column in zip(weather.feature_names, arrays.categories, arrays.data.T):
        if names is None:
            assert weather.data[name].dtype == np.float64
            np.testing.assert_array_equal(weather.data[name].to_numpy(), column)
        else:
            assert weather.data[name].dtype == "category"
            assert weather.data[name].cat.categories.tolist() == names
            np.testing.assert_array_equal(weather.data[name].cat.codes.to_numpy(), column)
    np.testing.assert_array_equal(weather.target.cat.codes.to_numpy(), arrays.target)
    assert weather.frame.columns.tolist() == weather.feature_names + ["play"]


def test_return_X_y():
    X, y = load_weather(return_X_y=True)
    assert X.shape == (14, 4) and np.bincount(y).tolist() == [5, 9]


def test_as_frame_without_pandas_is_a_clear_import_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match="needs pandas"):
        load_weather(as_frame=True)
