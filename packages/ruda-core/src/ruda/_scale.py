"""``ruda.scale``: a ruda backend under Cubed, for arrays larger than a device or a machine.

Cubed runs Array API code chunk by chunk with a bound on each task's memory, on threads, processes
or a cluster (Dask, Ray, ...), and computes each chunk with the Array API module it is given. ruda
grows no scheduler of its own: :func:`scale` hands Cubed a ruda namespace and an executor, and
returns Cubed's own namespace.

Cubed reads its backend module once, from ``CUBED_BACKEND_ARRAY_API_MODULE``, when ``cubed`` is
first imported; worker processes read the same variable when they import it. So :func:`scale`
sets the variable, then imports Cubed, and refuses with a clear error if Cubed was imported
already with another backend: it cannot be changed in a running interpreter.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import sys
from types import ModuleType
from typing import Any

from ruda._registry import installed, namespace, plugin

#: the variable Cubed reads its backend module from
BACKEND_VARIABLE = "CUBED_BACKEND_ARRAY_API_MODULE"

#: Cubed's executors by name, with the module each needs beyond Cubed and what installs it
EXECUTORS: dict[str, tuple[str, str] | None] = {
    "single-threaded": None,
    "threads": None,
    "processes": None,
    "dask": ("distributed", "pip install 'dask[distributed]'"),
    "ray": ("ray", "pip install 'ray[default]'"),
    "lithops": ("lithops", "pip install lithops"),
    "modal": ("modal", "pip install modal"),
    "beam": ("apache_beam", "pip install apache-beam"),
    "coiled": ("coiled", "pip install coiled"),
    "spark": ("pyspark", "pip install pyspark"),
}


def scale(
    backend: str | ModuleType = "host",
    *,
    executor: str = "threads",
    allowed_mem: int | str | None = None,
    reserved_mem: int | str | None = None,
    work_dir: str | None = None,
    **executor_options: Any,
) -> ModuleType:
    """Cubed's Array API namespace, computing every chunk on the ruda ``backend`` and running the
    chunks on ``executor``.

    Arrays made with the returned namespace (``xp.asarray(host, chunks=...)``, ``xp.ones(...)``,
    ``cubed.random.random(...)``) carry these settings as their ``spec``, and ``compute()`` runs
    on that executor; every task holds at most ``allowed_mem`` bytes, and a plan that would need
    more is refused before it starts.

    Parameters
    ----------
    backend
        A ruda backend's name (``"host"``, ``"cuda"``, ``"torch"``, ``"wgpu"``; see
        ``ruda.backends()``) or its namespace module (``ruda.cuda``). A backend whose arrays Cubed
        cannot take as they are names its own Cubed namespace (``ruda_torch.cubed``); it is used.
    executor
        One of Cubed's executors: ``"single-threaded"``, ``"threads"``, ``"processes"`` (this
        machine), ``"dask"`` (a Dask ``distributed`` cluster: pass
        ``compute_kwargs={"address": ...}``; its workers, those up now and those that join later,
        get the backend too), ``"ray"``, ``"lithops"``, ``"modal"``, ``"beam"``, ``"coiled"``,
        ``"spark"``. Every worker needs ruda and the backend's package installed.
    allowed_mem, reserved_mem
        The memory each task may hold, and the part of it reserved for the runtime (bytes, or
        strings such as ``"2GB"``); None keeps Cubed's configured values (2GB and 100MB).
    work_dir
        Where Cubed stores intermediate chunks (a local path or an fsspec URL that every worker
        can reach); None: a temporary directory.
    executor_options
        Passed to the executor: ``max_workers`` (threads, processes), ``compute_kwargs`` (dask),
        ... Plain values only (Cubed keeps them in its configuration).

    Examples
    --------
    >>> import ruda
    >>> xp = ruda.scale("host", executor="processes", allowed_mem="500MB", max_workers=4)
    >>> a = xp.ones((20_000, 20_000), chunks=(2_000, 2_000))  # 3.2 GB, never whole in memory
    >>> float(xp.sum(a))  # doctest: +SKIP
    400000000.0

    Raises
    ------
    ImportError
        Cubed, or the executor's own library, is not installed (the message says what to install).
    RuntimeError
        Cubed was imported before with another backend module.
    """
    module = _cubed_module(backend)
    _check_executor(executor)
    options = _plain(executor_options)
    _choose_backend(module)
    try:
        # imported here, not at the top: Cubed reads its backend module when it is imported, so
        # the variable must be set first (and ``import ruda`` must not import Cubed)
        cubed = importlib.import_module("cubed")
        xp = importlib.import_module("cubed.array_api")
    except ImportError as err:
        if err.name is not None and err.name.partition(".")[0] == "cubed":
            raise ImportError(
                "ruda.scale runs on Cubed, which is not installed: pip install 'ruda[cubed]'"
            ) from err
        raise
    settings: dict[str, Any] = {"spec.executor_name": executor, "spec.executor_options": options}
    if allowed_mem is not None:
        settings["spec.allowed_mem"] = allowed_mem
    if reserved_mem is not None:
        settings["spec.reserved_mem"] = reserved_mem
    if work_dir is not None:
        settings["spec.work_dir"] = work_dir
    cubed.config.set(settings)  # the defaults of every array made from now on
    cluster = options.get("compute_kwargs") or {}
    if executor == "dask" and ("address" in cluster or "scheduler_file" in cluster):
        # a running cluster's workers have their own environment (without a cluster, Cubed starts
        # a local one per computation, whose workers inherit this process's variable)
        importlib.import_module("ruda._dask").set_worker_backend(cluster, BACKEND_VARIABLE, module)
    return xp


def _cubed_module(backend: str | ModuleType) -> str:
    """The import path of the module Cubed takes for ``backend`` (available here, or an error)."""
    if isinstance(backend, ModuleType):
        names = [name for name in installed() if plugin(name).module == backend.__name__]
        if not names:
            return backend.__name__  # a namespace ruda does not register: Cubed takes it as it is
        backend = names[0]
    if not isinstance(backend, str):
        raise TypeError(
            f"backend must be a ruda backend's name or namespace module, not {type(backend).__name__}"
        )
    namespace(backend)  # raises, naming the fix, where the backend is missing or cannot run here
    entry = plugin(backend)
    return entry.cubed_module or entry.module


def _check_executor(executor: str) -> None:
    """Refuse an executor Cubed does not have, or whose library is not installed here."""
    if executor not in EXECUTORS:
        raise ValueError(f"Cubed has no executor {executor!r}: choose one of {', '.join(EXECUTORS)}")
    needs = EXECUTORS[executor]
    if needs is not None and importlib.util.find_spec(needs[0]) is None:
        raise ImportError(
            f"Cubed's {executor!r} executor needs {needs[0]}, which is not installed: {needs[1]}"
        )


def _plain(options: dict[str, Any]) -> dict[str, Any]:
    try:
        json.dumps(options)
    except TypeError as err:
        raise TypeError(
            f"executor options must be plain values (numbers, strings, lists, dicts), because Cubed "
            f"keeps them in its configuration: {err}"
        ) from None
    return options


def _choose_backend(module: str) -> None:
    """Make ``module`` Cubed's backend here and in every process started from here."""
    loaded = sys.modules.get("cubed.backend_array_api")
    if loaded is not None and loaded.namespace.__name__ != module:
        raise RuntimeError(
            f"Cubed was already imported with {loaded.namespace.__name__!r} as its backend, and "
            f"reads its backend only when it is first imported: call ruda.scale before anything "
            f"imports cubed, or start Python with {BACKEND_VARIABLE}={module}"
        )
    os.environ[BACKEND_VARIABLE] = module
