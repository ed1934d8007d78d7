"""`import ray` stand-in (llmgw tests): init, nodes, cluster_resources,
available_resources, is_initialized, shutdown, over the stand-in cluster of
`ray start` (see standin/raycore.py).

ray.init(address) resolves as Ray does (python/ray/_private/worker.py
`init`, services.py `canonicalize_bootstrap_address`): an explicit address;
else RAY_ADDRESS; else the one GCS running on this node ("Found multiple
active Ray instances" when several); else the node's last started cluster.
address="auto" with nothing found raises ConnectionError; address=None
with nothing found starts a local one-node instance with this process's
visible GPUs. A driver needs a Ray node on its own node.
"""

import os
import sys

_here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(_here))

from standin import core, raycore  # noqa: E402

__version__ = "2.49.0"

_cluster = None
_local = None


class RayError(Exception):
    pass


def init(address=None, *, ignore_reinit_error=False, num_gpus=None, num_cpus=None, **kwargs):
    global _cluster, _local
    if _cluster is not None:
        if ignore_reinit_error:
            return _context()
        raise RuntimeError("Maybe you called ray.init twice by accident? ...")
    net = core.Net()
    found = raycore.find_address(address)
    if found is None:
        if address == "auto" or os.environ.get("RAY_ADDRESS") == "auto":
            raise ConnectionError(raycore.NOT_FOUND)
        gpus = num_gpus if num_gpus is not None else (core.visible_gpus() or 0)
        _local = raycore.local_head(net, gpus, num_cpus or 16)
        found = _local.address
        sys.stderr.write(f"Started a local Ray instance (llmgw stand-in, {gpus} GPUs).\n")
    cluster = raycore.Cluster(net, found)
    cluster.check_member()
    _cluster = cluster
    return _context()


def _context():
    return {"address": _cluster.address, "node_id": None}


def _need():
    if _cluster is None:
        init()
    return _cluster


def is_initialized():
    return _cluster is not None


def shutdown():
    global _cluster
    _cluster = None


def nodes():
    return _need().nodes()


def cluster_resources():
    return raycore.resources(_need().nodes())


def available_resources():
    st = _need().state()
    total = raycore.resources(st["nodes"])
    if "GPU" in total:
        total["GPU"] -= st.get("reserved", 0)
    return total
