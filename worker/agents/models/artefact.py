"""The stored form every trained model of the core shares: :class:`Artefact`.

An artefact is a directory: a JSON manifest (format, format version, the model's own record, the digest of
each array, the two hashes, the metadata) and one ``<array>.npy`` per array, read with
``allow_pickle=False``; a composite (the term model) keeps its parts in subdirectories and names them in
its record by their ids. Two hashes identify an artefact:

  weights_sha256  what determines the outputs: the record and the arrays' digests;
  model_id        that plus the metadata (training-data and tokenizer fingerprints, metrics, creation time).

Both are recomputed from the loaded model and compared with the manifest, so edited weights or edited
metrics cannot pass for the model that was evaluated. A model class declares its ``FORMAT``, ``MANIFEST``,
the ``FORMAT_VERSIONS`` it reads, its ``ARRAYS`` (or ``_array_names`` when they depend on the manifest) and
``PARTS``, and implements ``_record()`` and ``_from_stored()``; identity, saving and loading are written
here once.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar, Self

import numpy as np

from worker.agents.jsonhash import canonical_json


class ModelIntegrityError(ValueError):
    """An artefact whose content does not match its recorded hashes, or is malformed."""


def jsonable(obj: Any) -> Any:
    """Plain JSON types from numpy scalars/arrays, tuples and Paths (metadata is stored as JSON)."""
    if isinstance(obj, Mapping):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return jsonable(obj.tolist())
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, Path):
        return str(obj)
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


def sha256_json(value: Any) -> str:
    return hashlib.sha256(canonical_json(value)).hexdigest()


def array_digest(a: np.ndarray) -> str:
    a = np.ascontiguousarray(a)
    h = hashlib.sha256()
    h.update(f"{a.dtype.str};{list(a.shape)}\n".encode())
    h.update(a.tobytes())
    return h.hexdigest()


# mkstemp creates 0600 files; artefacts are written by a training job and read
# by the web and worker processes, which may run as other users.
_FILE_MODE = 0o644


def write_atomic(path: Path, data: bytes | None = None, array: np.ndarray | None = None) -> None:
    """Write bytes or one .npy array to a temporary file, then rename it into place."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as fh:
            if array is not None:
                np.save(fh, array, allow_pickle=False)
            else:
                fh.write(data or b"")
        os.chmod(tmp, _FILE_MODE)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class Artefact:
    """A trained model that is saved and loaded as an artefact directory (see the module's docstring)."""

    FORMAT: ClassVar[str] = ""
    FORMAT_VERSIONS: ClassVar[tuple[int, ...]] = (1,)  # the versions load reads
    MANIFEST: ClassVar[str] = "model.json"
    ARRAYS: ClassVar[tuple[str, ...]] = ()
    PARTS: ClassVar[dict[str, type[Artefact]]] = {}  # composite: part name → class, saved in a subdirectory
    OPTIONAL_PARTS: ClassVar[frozenset[str]] = frozenset()  # parts a model may lack (then not saved, not read)
    metadata: dict[str, Any]

    # -- what a model class declares ---------------------------------------------------
    def _record(self) -> dict[str, Any]:
        """What determines the outputs besides the arrays, with "format" and "format_version"."""
        raise NotImplementedError

    def _arrays(self) -> dict[str, np.ndarray]:
        return {name: getattr(self, name) for name in self.ARRAYS}

    def _parts(self) -> dict[str, Artefact]:
        return {name: getattr(self, name) for name in self.PARTS if getattr(self, name) is not None}

    @classmethod
    def _array_names(cls, manifest: dict[str, Any]) -> tuple[str, ...]:
        """The arrays an artefact with this manifest holds (raise ModelIntegrityError for one it cannot read)."""
        return cls.ARRAYS

    @classmethod
    def _from_stored(cls, manifest: dict[str, Any], arrays: dict[str, np.ndarray], parts: dict[str, Artefact]) -> Self:
        """The model from its manifest, arrays and parts (KeyError, TypeError, ValueError: malformed)."""
        raise NotImplementedError

    # -- identity ------------------------------------------------------------------------
    @property
    def weights_sha256(self) -> str | None:
        """Hash of everything that determines the outputs (not the metadata)."""
        return sha256_json({**jsonable(self._record()), "arrays": self._digests()})

    @property
    def model_id(self) -> str:
        """Hash of the whole artefact: weights plus metadata."""
        return sha256_json({"weights_sha256": self.weights_sha256, "metadata": jsonable(self.metadata)})

    def _digests(self) -> dict[str, str]:
        return {name: array_digest(array) for name, array in self._arrays().items()}

    def manifest(self) -> dict[str, Any]:
        manifest = jsonable(self._record())
        if self._arrays():
            manifest["arrays"] = self._digests()
        if self.weights_sha256 is not None:
            manifest["weights_sha256"] = self.weights_sha256
        return {**manifest, "metadata": jsonable(self.metadata), "model_id": self.model_id}

    # -- storage ---------------------------------------------------------------------------
    def save(self, directory: str | os.PathLike[str]) -> Path:
        """Write the artefact into ``directory`` (created; existing files replaced): the parts, the arrays, then
        the manifest (a directory with a manifest is complete)."""
        path = Path(directory)
        path.mkdir(parents=True, exist_ok=True)
        for name, part in self._parts().items():
            part.save(path / name)
        for name, array in self._arrays().items():
            write_atomic(path / f"{name}.npy", array=np.ascontiguousarray(array))
        write_atomic(path / self.MANIFEST, json.dumps(self.manifest(), ensure_ascii=False, indent=1).encode())
        return path

    @classmethod
    def load(cls, directory: str | os.PathLike[str], *, expected_id: str | None = None) -> Self:
        """Read an artefact written by :meth:`save`; verify its hashes (and ``expected_id`` if given)."""
        path = Path(directory)
        try:
            manifest = json.loads((path / cls.MANIFEST).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ModelIntegrityError(f"{path / cls.MANIFEST}: {exc}") from exc
        if not isinstance(manifest, dict) or manifest.get("format") != cls.FORMAT:
            raise ModelIntegrityError(f"{path}: not a {cls.FORMAT} artefact")
        if manifest.get("format_version") not in cls.FORMAT_VERSIONS:
            raise ModelIntegrityError(f"{path}: format version {manifest.get('format_version')!r} unsupported")
        try:
            names = cls._array_names(manifest)
        except ModelIntegrityError as exc:
            raise ModelIntegrityError(f"{path}: {exc}") from exc
        arrays = {}
        for name in names:
            try:
                arrays[name] = np.load(path / f"{name}.npy", allow_pickle=False)
            except (OSError, ValueError) as exc:
                raise ModelIntegrityError(f"{path / name}.npy: {exc}") from exc
        recorded = manifest.get("parts") or {}
        parts = {name: part.load(path / name, expected_id=recorded.get(name)) for name, part in cls.PARTS.items()
                 if name in recorded or name not in cls.OPTIONAL_PARTS}
        try:
            model = cls._from_stored(manifest, arrays, parts)
        except ModelIntegrityError:
            raise
        except (KeyError, TypeError, ValueError) as exc:
            raise ModelIntegrityError(f"{path}: malformed artefact: {exc}") from exc
        if model.weights_sha256 != manifest.get("weights_sha256"):
            raise ModelIntegrityError(f"{path}: weights do not match weights_sha256 (modified artefact)")
        if model.model_id != manifest.get("model_id"):
            raise ModelIntegrityError(f"{path}: content does not match model_id (modified artefact)")
        if expected_id is not None and model.model_id != expected_id:
            raise ModelIntegrityError(f"{path}: model_id {model.model_id} is not the expected {expected_id}")
        return model
