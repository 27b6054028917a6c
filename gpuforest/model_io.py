"""Model files: ``save_model`` and ``load_model``, a versioned zip of a JSON document and ``.npy`` arrays.

A model file is a zip archive (``docs/model-format.md``) holding

- ``model.json``: ``{"format": "gpuforest-model", "format_version", "library_version", "estimator": <value>}``,
  the estimator as a tree of JSON values (below);
- ``arrays/<i>.npy``: every numeric array, in numpy's ``.npy`` format (read with ``allow_pickle=False``);
- ``checksum.sha256``: the SHA-256 of ``model.json`` and then of each array member, in name order.

Values are JSON's own (null, booleans, integers, strings, lists, finite floats) or one-key objects
tagged by a ``$`` name: ``$float`` (``"nan"``, ``"inf"``, ``"-inf"``), ``$tuple``, ``$dict`` (a list
of key-value pairs), ``$bunch`` (scikit-learn's ``Bunch``), ``$scalar`` (a numpy scalar and its dtype),
``$array`` (the member holding an array), ``$objects`` (an object-dtype array: its shape and
elements), ``$object`` (an instance of a gpuforest class, or of ``ALLOWED_FOREIGN``, with its
``__getstate__``; an estimator's state is split into its ``params`` and its fitted ``attributes``) and
``$ref`` (an object already written: members that share a tree, a bin mapper or an estimator share it
again after loading). Loading creates only those classes, by name, from modules already imported, and
never unpickles, so a file cannot run code.
"""

import hashlib
import inspect
import io
import json
import sys
import zipfile

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.preprocessing import LabelEncoder
from sklearn.utils import Bunch

from .backend import get_backend

FORMAT = "gpuforest-model"
# 2: thresholds split float64 values of X (version 1's models split X cast to float32; they load and split its
# float64 values, the same routes for every float32 value).
FORMAT_VERSION = 2
MODEL_MEMBER = "model.json"
CHECKSUM_MEMBER = "checksum.sha256"
# Classes outside gpuforest that fitted gpuforest estimators hold (``VotingClassifier.le_``).
ALLOWED_FOREIGN = {f"{cls.__module__}.{cls.__qualname__}": cls for cls in (LabelEncoder,)}


class ModelFileMixin:
    """``save_model(path)``: the estimator as a gpuforest model file."""

    def save_model(self, path):
        """Write this estimator to ``path`` as a model file (read it back with ``gpuforest.load_model``).

        Parameters
        ----------
        path : str or path-like

        Raises
        ------
        TypeError
            If the estimator holds something a model file cannot store (a member that is not a
            gpuforest estimator, a callable such as a custom objective or scorer).
        """
        save_model(self, path)


def save_model(estimator, path):
    """Write ``estimator`` to ``path`` as a model file (see the module docstring)."""
    import gpuforest

    encoder = _Encoder()
    document = {
        "format": FORMAT, "format_version": FORMAT_VERSION, "library_version": gpuforest.__version__,
        "estimator": encoder.encode(estimator, "estimator"),
    }
    model = json.dumps(document, allow_nan=False, indent=1).encode()
    members = {name: _npy_bytes(array) for name, array in encoder.arrays.items()}
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(MODEL_MEMBER, model)
        for name, data in members.items():
            archive.writestr(name, data)
        archive.writestr(CHECKSUM_MEMBER, _checksum(model, members))


def load_model(path, device="auto"):
    """Read an estimator from a model file written by ``save_model``.

    Parameters
    ----------
    path : str or path-like
    device : {"auto", "cpu", "cuda"}, default="auto"
        Where the loaded estimator predicts (its ``device_`` and its members'), whatever device
        trained it: ``"auto"`` is a usable GPU, else the CPU.

    Returns
    -------
    estimator
        The fitted (or unfitted) estimator that was saved, its predictions those of the saved one.

    Raises
    ------
    ValueError
        If the file is not a gpuforest model file, is truncated or damaged, was edited (its checksum
        does not match), or has a newer format version than this library reads.
    """
    device_name = get_backend(device).name
    with open(path, "rb") as stream:
        data = stream.read()
    if not data.startswith(b"PK\x03\x04"):
        raise ValueError(f"{path} is not a gpuforest model file (not a zip archive).")
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            names = set(archive.namelist())
            if MODEL_MEMBER not in names:
                raise ValueError(f"{path} is not a gpuforest model file (it has no {MODEL_MEMBER}).")
            members = {name: archive.read(name) for name in sorted(names)}
    except (zipfile.BadZipFile, EOFError, zipfile.LargeZipFile) as error:
        raise ValueError(f"{path} is truncated or damaged: not a readable zip archive ({error}).") from error
    model = members.pop(MODEL_MEMBER)
    try:
        document = json.loads(model)
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"{path} is not a gpuforest model file: {MODEL_MEMBER} is not JSON ({error}).") from error
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise ValueError(f"{path} is not a gpuforest model file (its format is not {FORMAT!r}).")
    version = document.get("format_version")
    if not isinstance(version, int) or version > FORMAT_VERSION:
        raise ValueError(
            f"{path} has model format version {version!r}, newer than version {FORMAT_VERSION} that gpuforest "
            f"{_library_version()} reads (written by gpuforest {document.get('library_version')}): upgrade gpuforest."
        )
    checksum = members.pop(CHECKSUM_MEMBER, b"").decode(errors="replace").strip()
    if checksum != _checksum(model, members).decode():
        raise ValueError(f"{path} was edited or damaged: its checksum does not match its contents.")
    try:
        estimator = _Decoder(members, path).decode(document.get("estimator"))
    except (KeyError, TypeError, AttributeError, IndexError) as error:
        raise ValueError(f"{path} is not a valid gpuforest model file: a value is malformed ({error!r}).") from error
    _set_device(estimator, device_name, set())
    return estimator


def _library_version():
    import gpuforest

    return gpuforest.__version__


def _npy_bytes(array):
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=False)
    return buffer.getvalue()


def _checksum(model, members):
    """SHA-256 of ``model.json`` then of each array member in name order, as hex text."""
    digest = hashlib.sha256(model)
    for name in sorted(members):
        digest.update(name.encode())
        digest.update(members[name])
    return digest.hexdigest().encode()


def _set_device(value, device_name, seen):
    """Set ``device_`` on every fitted gpuforest object reachable from ``value``."""
    if id(value) in seen:
        return
    seen.add(id(value))
    if isinstance(value, (list, tuple)):
        for item in value:
            _set_device(item, device_name, seen)
    elif isinstance(value, dict):
        for item in value.values():
            _set_device(item, device_name, seen)
    elif type(value).__module__.startswith("gpuforest.") and hasattr(value, "__dict__"):
        if hasattr(value, "device_"):
            value.device_ = device_name
        for item in vars(value).values():
            _set_device(item, device_name, seen)


def _class_name(cls):
    return f"{cls.__module__}.{cls.__qualname__}"


class _Encoder:
    """Python values to JSON values; arrays collected in ``arrays`` (member name -> ndarray)."""

    def __init__(self):
        self.arrays = {}
        self._objects = {}  # id -> reference number
        self._alive = []  # keeps encoded objects alive so that their ids stay unique

    def encode(self, value, where):
        if value is None or isinstance(value, (bool, str)):
            return value
        if isinstance(value, int) and not isinstance(value, np.integer):
            return value
        if isinstance(value, float) and not isinstance(value, np.floating):
            return value if np.isfinite(value) else {"$float": repr(value)}
        if isinstance(value, np.generic):
            return {"$scalar": value.dtype.str, "value": self.encode(value.item(), where)}
        if isinstance(value, list):
            return [self.encode(item, f"{where}[{index}]") for index, item in enumerate(value)]
        if isinstance(value, tuple) and type(value) is tuple:
            return {"$tuple": [self.encode(item, f"{where}[{index}]") for index, item in enumerate(value)]}
        if isinstance(value, dict) and type(value) in (dict, Bunch):
            items = [[self.encode(key, where), self.encode(item, f"{where}[{key!r}]")] for key, item in value.items()]
            return {"$bunch" if isinstance(value, Bunch) else "$dict": items}
        if hasattr(value, "__cuda_array_interface__") and hasattr(value, "get"):
            value = value.get()  # a CuPy array
        if isinstance(value, np.ndarray):
            return self._encode_array(value, where)
        return self._encode_object(value, where)

    def _encode_array(self, array, where):
        if array.dtype.hasobject:
            return {"$objects": [self.encode(item, where) for item in array.ravel().tolist()],
                    "shape": list(array.shape)}
        if array.dtype.fields is not None or array.dtype.kind == "V":
            raise TypeError(f"Cannot save {where}: structured arrays are not part of the model format.")
        name = f"arrays/{len(self.arrays)}.npy"
        self.arrays[name] = np.asarray(array)
        return {"$array": name}

    def _encode_object(self, value, where):
        cls = type(value)
        name = _class_name(cls)
        if not (cls.__module__.startswith("gpuforest.") or name in ALLOWED_FOREIGN):
            raise TypeError(
                f"Cannot save {where}: a {name} is not part of the gpuforest model format (it stores gpuforest "
                "estimators and their members; use pickle or joblib for other objects)."
            )
        if id(value) in self._objects:
            return {"$ref": self._objects[id(value)]}
        reference = self._objects[id(value)] = len(self._objects)
        self._alive.append(value)
        state = value.__getstate__() or {}  # None: no attributes
        if not isinstance(state, dict):
            raise TypeError(f"Cannot save {where}: {name}'s state is not a dict of attributes.")
        encoded = {"$object": name, "id": reference}
        if isinstance(value, BaseEstimator):
            param_names = set(cls._get_param_names())
            encoded["params"] = {key: self.encode(item, f"{where}.{key}")
                                 for key, item in state.items() if key in param_names}
            state = {key: item for key, item in state.items() if key not in param_names}
        encoded["attributes"] = {key: self.encode(item, f"{where}.{key}") for key, item in state.items()}
        return encoded


class _Decoder:
    """JSON values back to Python values (the inverse of ``_Encoder``)."""

    def __init__(self, members, path):
        self._members = members
        self._path = path
        self._objects = {}

    def _refuse(self, problem):
        raise ValueError(f"{self._path} is not a valid gpuforest model file: {problem}.")

    def decode(self, value):
        if value is None or isinstance(value, (bool, str, int, float)):
            return value
        if isinstance(value, list):
            return [self.decode(item) for item in value]
        if not isinstance(value, dict) or not value:
            self._refuse(f"unexpected value {value!r}")
        tag = next(iter(value))
        if tag == "$float":
            return float(value["$float"])
        if tag == "$scalar":
            return np.dtype(value["$scalar"]).type(self.decode(value["value"]))
        if tag == "$tuple":
            return tuple(self.decode(item) for item in value["$tuple"])
        if tag in ("$dict", "$bunch"):
            items = {self._hashable(self.decode(key)): self.decode(item) for key, item in value[tag]}
            return Bunch(**items) if tag == "$bunch" else items
        if tag == "$array":
            return self._array(value["$array"])
        if tag == "$objects":
            array = np.empty(len(value["$objects"]), dtype=object)
            array[:] = [self.decode(item) for item in value["$objects"]]
            return array.reshape(value["shape"])
        if tag == "$ref":
            if value["$ref"] not in self._objects:
                self._refuse(f"reference {value['$ref']!r} to an object not read yet")
            return self._objects[value["$ref"]]
        if tag == "$object":
            return self._object(value)
        self._refuse(f"unknown tag {tag!r}")

    @staticmethod
    def _hashable(key):
        return tuple(key) if isinstance(key, list) else key

    def _array(self, name):
        if name not in self._members:
            self._refuse(f"the array member {name!r} is missing")
        try:
            return np.load(io.BytesIO(self._members[name]), allow_pickle=False)
        except ValueError as error:
            self._refuse(f"the array member {name!r} cannot be read ({error})")

    def _object(self, value):
        cls = self._class(value["$object"])
        obj = cls.__new__(cls)
        self._objects[value["id"]] = obj  # before the attributes: they may refer back to it
        # A parameter added after the file was written takes its default: the model it names is unchanged.
        state = {name: parameter.default for name, parameter in inspect.signature(cls).parameters.items()
                 if "params" in value and parameter.default is not inspect.Parameter.empty}
        state.update((key, self.decode(item)) for key, item in value.get("params", {}).items())
        state.update((key, self.decode(item)) for key, item in value["attributes"].items())
        if hasattr(obj, "__setstate__"):
            obj.__setstate__(state)
        else:
            vars(obj).update(state)
        return obj

    def _class(self, name):
        """The class called ``name``: a gpuforest class of an imported module, or one of ``ALLOWED_FOREIGN``."""
        if name in ALLOWED_FOREIGN:
            return ALLOWED_FOREIGN[name]
        module_name, _, class_name = name.rpartition(".")
        module = sys.modules.get(module_name) if module_name.startswith("gpuforest.") else None
        cls = getattr(module, class_name, None)
        if not isinstance(cls, type) or cls.__module__ != module_name:
            self._refuse(f"{name!r} is not a gpuforest class")
        return cls
