"""Networks loaded in this worker process, keyed by the ``Network`` row's checksum.

Loading happens lazily inside the worker process (never in a parent that
forks: CUDA does not survive fork). A small LRU keeps the most recently used
networks resident; it is thread-safe for the threads pool, and each network
is wrapped in a ``SharedBatcher`` so jobs running side by side share passes.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from django.conf import settings

from analysis.evaluator import MaterialEvaluator
from webapp.networks.models import Network
from workers.batching import SharedBatcher

CAPACITY = 3


class ModelCache:
    def __init__(self, capacity: int = CAPACITY):
        self.capacity = capacity
        self._items: OrderedDict[str, object] = OrderedDict()
        self._lock = threading.Lock()
        self.loads = 0

    def get(self, network: Network):
        with self._lock:
            if network.checksum in self._items:
                self._items.move_to_end(network.checksum)
                return self._items[network.checksum]
            evaluator = SharedBatcher(self._load(network))
            self.loads += 1
            self._items[network.checksum] = evaluator
            while len(self._items) > self.capacity:
                self._items.popitem(last=False)
            return evaluator

    def __contains__(self, checksum: str) -> bool:
        return checksum in self._items

    @staticmethod
    def _load(network: Network):
        if network.kind == Network.Kind.MATERIAL:
            return MaterialEvaluator()
        from analysis.checkpoint import load_evaluator

        _configure_torch()
        device = None if settings.SIGHTLINE_DEVICE == "auto" else settings.SIGHTLINE_DEVICE
        return load_evaluator(network.path, device, name=network.name)


def _configure_torch() -> None:
    """CPU threads per worker process for torch (``SIGHTLINE_TORCH_THREADS``, default 1).

    Idle OpenMP threads spin while the cores are busy with other jobs, and workers run
    several jobs side by side, so one thread each is the safe default; a dedicated CPU
    worker with a solo pool can raise it.
    """
    import torch

    threads = settings.SIGHTLINE_TORCH_THREADS
    if threads > 0 and torch.get_num_threads() != threads:
        torch.set_num_threads(threads)


models = ModelCache()
