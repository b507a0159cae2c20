"""Cubed's backend on the workers of a running Dask cluster (``ruda.scale(..., executor="dask")``).

Workers import Cubed, and so read its backend module, from their own environment: a cluster
started before ``ruda.scale``, or on other machines, would compute every chunk with NumPy. A
worker plugin sets the variable on every worker, those up now and those that join later, before
Cubed is imported there. This module imports ``distributed``: only ``ruda.scale`` imports it, and
only for the Dask executor.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from distributed import Client, Worker, WorkerPlugin


class CubedBackend(WorkerPlugin):  # type: ignore[misc]  # distributed is read as Any (see pyproject)
    """Makes ``module`` Cubed's backend on each worker it is registered with."""

    name = "ruda-cubed-backend"

    def __init__(self, variable: str, module: str) -> None:
        self.variable = variable
        self.module = module

    def setup(self, worker: Worker) -> None:
        loaded = sys.modules.get("cubed.backend_array_api")
        if loaded is not None and loaded.namespace.__name__ != self.module:
            raise RuntimeError(
                f"Dask worker {worker.address} imported Cubed with {loaded.namespace.__name__!r} as "
                f"its backend already: restart the cluster's workers (client.restart()) or start "
                f"them with {self.variable}={self.module}"
            )
        os.environ[self.variable] = self.module


def set_worker_backend(compute_kwargs: dict[str, Any], variable: str, module: str) -> None:
    """Register :class:`CubedBackend` with the cluster ``compute_kwargs`` names (its ``address``
    or ``scheduler_file``, as Cubed's Dask executor connects); an error on a worker is raised here."""
    with Client(**compute_kwargs, set_as_default=False) as client:
        client.register_plugin(CubedBackend(variable, module))
