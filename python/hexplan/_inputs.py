"""Models and clusters given from Python, as specs the CLI reads: a zoo name or a path stays as it
is; ONNX bytes and a cluster built in Python are written into the call's temporary directory."""

import json
import os
from typing import Any, Mapping, Optional, Union

Model = Union[str, "os.PathLike[str]", bytes, bytearray, memoryview]
Cluster = Union[str, "os.PathLike[str]", Mapping[str, Any]]


def model_spec(model: Model, workdir: str) -> str:
    """A zoo name or a model file (.onnx, .json, workload files), or ONNX bytes (what
    ``torch.onnx.export`` writes into a ``BytesIO``; give ``buffer.getvalue()``)."""
    if isinstance(model, (bytes, bytearray, memoryview)):
        path = os.path.join(workdir, "model.onnx")
        with open(path, "wb") as f:
            f.write(bytes(model))
        return path
    if hasattr(model, "getvalue"):  # a BytesIO
        return model_spec(model.getvalue(), workdir)
    return os.fspath(model)


def cluster_spec(cluster: Optional[Cluster], workdir: str) -> Optional[str]:
    """A preset name or a cluster file (YAML/JSON), or a mapping in the cluster file's format
    (docs/formats.md, "Cluster files"), written as JSON (named by its ``name``, default
    ``cluster``)."""
    if cluster is None:
        return None
    if isinstance(cluster, Mapping):
        name = str(cluster.get("name", "cluster"))
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in name) or "cluster"
        path = os.path.join(workdir, safe + ".json")
        with open(path, "w") as f:
            json.dump(dict(cluster), f, indent=1)
        return path
    return os.fspath(cluster)
