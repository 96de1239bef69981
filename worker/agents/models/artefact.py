"""Artefact storage shared by the trained models: a JSON manifest plus one .npy file per array.

An artefact directory holds ``<manifest name>`` (format, version, the model's own record, the hashes) and
``<array>.npy`` files read with ``allow_pickle=False``. ``weights_sha256`` covers what determines the
outputs; ``model_id`` covers that plus the metadata. Both are recomputed on load, so edited weights or
edited metrics cannot pass for the model that was evaluated.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from worker.agents.jsonhash import canonical_json
from worker.agents.models.textmodel import ModelIntegrityError, _array_digest, _write_atomic, jsonable


def weights_sha256(record: Mapping[str, Any], arrays: Mapping[str, np.ndarray]) -> str:
    return hashlib.sha256(canonical_json({**jsonable(dict(record)),
                                          "arrays": {k: _array_digest(v) for k, v in sorted(arrays.items())}})).hexdigest()


def model_id_of(weights: str, metadata: Mapping[str, Any]) -> str:
    return hashlib.sha256(canonical_json({"weights_sha256": weights, "metadata": jsonable(dict(metadata))})).hexdigest()


def save(directory: str | os.PathLike[str], *, manifest_name: str, record: Mapping[str, Any],
         arrays: Mapping[str, np.ndarray], metadata: Mapping[str, Any]) -> Path:
    """Write the arrays, then the manifest (a directory with a manifest is complete)."""
    path = Path(directory)
    path.mkdir(parents=True, exist_ok=True)
    for name, array in arrays.items():
        _write_atomic(path / f"{name}.npy", array=np.ascontiguousarray(array))
    weights = weights_sha256(record, arrays)
    manifest = {**jsonable(dict(record)), "weights_sha256": weights, "metadata": jsonable(dict(metadata)),
                "model_id": model_id_of(weights, metadata)}
    _write_atomic(path / manifest_name, json.dumps(manifest, ensure_ascii=False, indent=1).encode())
    return path


def load(directory: str | os.PathLike[str], *, manifest_name: str, format: str, format_version: int,
         array_names: tuple[str, ...], expected_id: str | None = None) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """The manifest and arrays of an artefact written by :func:`save`, after checking both hashes."""
    path = Path(directory)
    try:
        manifest = json.loads((path / manifest_name).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ModelIntegrityError(f"{path / manifest_name}: {exc}") from exc
    if not isinstance(manifest, dict) or manifest.get("format") != format:
        raise ModelIntegrityError(f"{path}: not a {format} artefact")
    if manifest.get("format_version") != format_version:
        raise ModelIntegrityError(f"{path}: format version {manifest.get('format_version')!r} unsupported")
    arrays = {}
    for name in array_names:
        try:
            arrays[name] = np.load(path / f"{name}.npy", allow_pickle=False)
        except (OSError, ValueError) as exc:
            raise ModelIntegrityError(f"{path / name}.npy: {exc}") from exc
    record = {k: v for k, v in manifest.items() if k not in ("weights_sha256", "metadata", "model_id")}
    weights = weights_sha256(record, arrays)
    if weights != manifest.get("weights_sha256") or model_id_of(weights, manifest.get("metadata") or {}) != manifest.get("model_id"):
        raise ModelIntegrityError(f"{path}: content does not match its hashes (modified artefact)")
    if expected_id is not None and manifest["model_id"] != expected_id:
        raise ModelIntegrityError(f"{path}: model_id {manifest['model_id']} is not the expected {expected_id}")
    return manifest, arrays
