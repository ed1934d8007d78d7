"""A Ray cluster in miniature: a head (the GCS) that nodes join over TCP and
stay in while their connection lives, and the client side used by `ray
start`, `ray status`, `import ray` and vLLM.

Protocol: one JSON line request, JSON line replies.
  {"op": "ping"}                       -> {"ok": true, "address": ...}
  {"op": "nodes"}                      -> {"ok": true, "nodes": [...], "reserved": G}
  {"op": "join", node, addr, gpus, cpus, pid}
                                       -> {"ok": true, "node_id": ...}; the node is
                                          alive until the connection closes
  {"op": "reserve", gpus, node, addr}  -> {"ok": true} or {"ok": false, "error"};
                                          held until the connection closes (a
                                          vLLM placement group)
  {"op": "stop"}                       -> the head exits
Dead nodes stay listed with "Alive": false, as ray.nodes() keeps them.
"""

import json
import os
import socket
import threading
import time
import uuid

from . import core

DEFAULT_PORT = 6379


def node_entry(node, addr, gpus, cpus, head=False):
    res = {"CPU": float(cpus), "memory": 64e9, "object_store_memory": 16e9, f"node:{addr}": 1.0}
    if gpus:
        res["GPU"] = float(gpus)
    if head:
        res["node:__internal_head__"] = 1.0
    return {
        "NodeID": uuid.uuid4().hex + uuid.uuid4().hex[:24],
        "Alive": True,
        "alive": True,
        "NodeManagerAddress": addr,
        "NodeManagerHostname": node,
        "NodeName": addr,
        "Resources": res,
        "Labels": {},
    }


class Head:
    def __init__(self, socks, address, node, addr, gpus, cpus):
        self.socks = socks
        self.address = address
        self.lock = threading.Lock()
        self.nodes = [node_entry(node, addr, gpus, cpus, head=True)]
        self.reserved = {}

    def serve(self):
        for s in self.socks:
            threading.Thread(target=self._accept, args=(s,), daemon=True).start()

    def _accept(self, s):
        while True:
            try:
                conn, _ = s.accept()
            except OSError:
                return
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _alive_gpus(self):
        return sum(n["Resources"].get("GPU", 0) for n in self.nodes if n["Alive"])

    def _handle(self, conn):
        f = conn.makefile("rw")
        try:
            req = json.loads(f.readline() or "{}")
            op = req.get("op")
            if op == "ping":
                self._send(f, {"ok": True, "address": self.address})
            elif op == "nodes":
                with self.lock:
                    self._send(f, {"ok": True, "nodes": self.nodes, "reserved": sum(self.reserved.values())})
            elif op == "join":
                entry = node_entry(req["node"], req["addr"], req.get("gpus", 0), req.get("cpus", 1))
                with self.lock:
                    self.nodes.append(entry)
                self._send(f, {"ok": True, "node_id": entry["NodeID"]})
                self._hold(f)
                with self.lock:
                    entry["Alive"] = entry["alive"] = False
                    entry["Resources"] = {}
            elif op == "reserve":
                key = uuid.uuid4().hex
                with self.lock:
                    free = self._alive_gpus() - sum(self.reserved.values())
                    if req["gpus"] > free:
                        self._send(f, {"ok": False, "free": free, "total": self._alive_gpus()})
                        return
                    self.reserved[key] = req["gpus"]
                self._send(f, {"ok": True})
                self._hold(f)
                with self.lock:
                    self.reserved.pop(key, None)
            elif op == "stop":
                self._send(f, {"ok": True})
                os._exit(0)
            else:
                self._send(f, {"ok": False, "error": f"unknown op {op!r}"})
        except (OSError, ValueError, KeyError):
            pass
        finally:
            try:
                conn.close()
            except OSError:
                pass

    @staticmethod
    def _send(f, obj):
        f.write(json.dumps(obj) + "\n")
        f.flush()

    @staticmethod
    def _hold(f):
        try:
            while f.readline():
                pass
        except OSError:
            pass


def request(net, address, req, wait=5.0, keep=False):
    """Sends one request to the head at `address` (host:port); returns the
    reply (and the open connection's file when keep)."""
    host, port = core.split_hostport(address, DEFAULT_PORT)
    conn = net.connect(host, port, wait=wait)
    conn.settimeout(wait)
    f = conn.makefile("rw")
    f.write(json.dumps(req) + "\n")
    f.flush()
    line = f.readline()
    if not line:
        conn.close()
        raise ConnectionError(f"GCS at {address} closed the connection")
    reply = json.loads(line)
    if keep:
        conn.settimeout(None)
        return reply, conn, f
    conn.close()
    return reply


# Per-node records, as Ray keeps /tmp/ray/ray_current_cluster and finds
# running GCS processes on the machine.


def _ray_dir():
    d = os.path.join(core.state_dir(), "ray")
    os.makedirs(os.path.join(d, "procs"), exist_ok=True)
    return d


def write_current_cluster(address):
    with open(os.path.join(_ray_dir(), "ray_current_cluster"), "w") as f:
        f.write(address + "\n")


def read_current_cluster():
    try:
        with open(os.path.join(_ray_dir(), "ray_current_cluster")) as f:
            return f.read().strip() or None
    except OSError:
        return None


def register_proc(kind, address):
    path = os.path.join(_ray_dir(), "procs", f"{os.getpid()}.json")
    with open(path, "w") as f:
        json.dump({"kind": kind, "address": address, "pid": os.getpid(), "start": _starttime(os.getpid())}, f)
    return path


def procs():
    """Live Ray processes of this node: [{"kind": "head"|"worker", "address", "pid"}]."""
    out = []
    d = os.path.join(_ray_dir(), "procs")
    for name in os.listdir(d):
        try:
            with open(os.path.join(d, name)) as f:
                p = json.load(f)
        except (OSError, ValueError):
            continue
        if _starttime(p["pid"]) == p.get("start") and p.get("start") is not None:
            out.append(p)
        else:
            try:
                os.unlink(os.path.join(d, name))
            except OSError:
                pass
    return out


def _starttime(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return None


def find_address(address):
    """Where `ray.init(address)` / `ray status` would connect, as Ray
    resolves it: an explicit address; else RAY_ADDRESS; else the one GCS
    running on this node (several: an error); else the node's last started
    cluster. None when there is nothing to connect to."""
    if address not in (None, "", "auto"):
        return address
    env = os.environ.get("RAY_ADDRESS")
    if env and env != "auto":
        return env
    heads = sorted({p["address"] for p in procs() if p["kind"] == "head"})
    if len(heads) > 1:
        raise ConnectionError(
            f"Found multiple active Ray instances: {set(heads)}. Please specify the one to connect to by "
            "setting `--address` flag or `RAY_ADDRESS` environment variable."
        )
    if heads:
        return heads[0]
    return read_current_cluster()


NOT_FOUND = (
    "Could not find any running Ray instance. Please specify the one to connect to by setting "
    "`--address` flag or `RAY_ADDRESS` environment variable."
)


class Cluster:
    """A connection to a head, as a driver on this node."""

    def __init__(self, net, address):
        self.net = net
        self.address = address
        try:
            reply = request(net, address, {"op": "ping"})
        except (OSError, ValueError) as e:
            raise ConnectionError(f"Failed to connect to GCS at address {address} within 5 seconds. ({e})")
        self.address = reply.get("address", address)

    def nodes(self):
        return request(self.net, self.address, {"op": "nodes"})["nodes"]

    def state(self):
        return request(self.net, self.address, {"op": "nodes"})

    def check_member(self):
        """A driver needs a Ray node (raylet) on its own machine."""
        if not self.net.emulated:
            return
        mine = {self.net.addr, self.net.loopback}
        alive = [n for n in self.nodes() if n["Alive"]]
        if not any(n["NodeManagerAddress"] in mine for n in alive):
            raise ConnectionError(
                f"This node has an IP address of {self.net.addr}, and Ray expects this IP address to be either "
                f"the GCS address or one of the Raylet addresses. Connected to GCS at {self.address} and found "
                f"raylets at {', '.join(n['NodeManagerAddress'] for n in alive)} but none of these match this "
                "node's IP. (stand-in: this node did not `ray start` into that cluster)"
            )


def local_head(net, gpus, cpus=16):
    """ray.init() with no cluster to find: a local instance in this process."""
    socks = net.listen("127.0.0.1", 0)
    host, port = socks[0].getsockname()
    addr = net.addr if net.emulated else "127.0.0.1"
    head = Head(socks, f"{host}:{port}", net.node, net.loopback if net.emulated else addr, gpus, cpus)
    head.serve()
    return head


def resources(nodes):
    total = {}
    for n in nodes:
        if not n["Alive"]:
            continue
        for k, v in n["Resources"].items():
            total[k] = total.get(k, 0.0) + v
    return total


def watch_owner(owner_pid, owner_start):
    """Exits this daemon when the process that ran `ray start` is gone (the
    job script, the container's shell), as a cgroup or container ends it on
    a real cluster. STANDIN_RAY_DETACH=1 keeps it (until `ray stop`)."""
    if os.environ.get("STANDIN_RAY_DETACH") == "1":
        return

    def loop():
        while _starttime(owner_pid) == owner_start and owner_start is not None:
            time.sleep(0.5)
        os._exit(0)

    threading.Thread(target=loop, daemon=True).start()


def gpus_of_node(num_gpus):
    if num_gpus is not None:
        return int(num_gpus)
    return core.visible_gpus() or 0


def free_port_socket():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    return s
