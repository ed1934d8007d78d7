"""`ray` command stand-in: start (head or worker, daemon or --block), stop,
status. Contract (ray-project/ray python/ray/scripts/scripts.py):
  - `ray start --head [--port=P]` starts the GCS on P (default 6379) on all
    of the node's interfaces, as a daemon that outlives the command (until
    the process that ran `ray start` exits, see raycore.watch_owner), or in
    the foreground with --block; a taken port fails;
  - `ray start --address=H:P` joins the cluster at H:P, failing at once when
    no GCS answers there (so a worker started before its head must retry);
  - `--ray-client-server-port` needs grpcio (`ray[client]` or
    `ray[default]`): without it `ray start`, head or worker, fails at once
    building its RayParams (python/ray/_private/parameter.py
    RayParams._check_usage: "Ray Client requires pip package
    `ray[client]`. ..."). The stand-in's Ray is the minimal `pip install
    ray` unless STANDIN_RAY_CLIENT=1; with it the port must be in
    1024..65535 and the head's default is 10001 (scripts.py: "no port, has
    client -> default to 10001"), recorded only: no client server listens;
  - a node's GPUs: --num-gpus, else CUDA_VISIBLE_DEVICES, else 0;
  - the node records the cluster it started or joined last (Ray's
    ray_current_cluster), which `ray.init()` without an address falls back
    to.
"""

import json
import os
import signal
import sys
import time

from . import cli, core, raycore

START_OPTIONS = {
    "--head": ("head", "flag"),
    "--block": ("block", "flag"),
    "--address": ("address", "str"),
    "--port": ("port", "int"),
    "--num-gpus": ("num_gpus", "int"),
    "--num-cpus": ("num_cpus", "int"),
    "--node-ip-address": ("node_ip_address", "str"),
    "--node-name": ("node_name", "str"),
    "--resources": ("resources", "str"),
    "--labels": ("labels", "str"),
    "--temp-dir": ("temp_dir", "str"),
    "--memory": ("memory", "int"),
    "--object-store-memory": ("object_store_memory", "int"),
    "--redis-password": ("redis_password", "str"),
    "--dashboard-host": ("dashboard_host", "str"),
    "--dashboard-port": ("dashboard_port", "int"),
    "--dashboard-agent-listen-port": ("dashboard_agent_listen_port", "int"),
    "--dashboard-agent-grpc-port": ("dashboard_agent_grpc_port", "int"),
    "--include-dashboard": ("include_dashboard", "bool"),
    "--disable-usage-stats": ("disable_usage_stats", "flag"),
    "--min-worker-port": ("min_worker_port", "int"),
    "--max-worker-port": ("max_worker_port", "int"),
    "--worker-port-list": ("worker_port_list", "str"),
    "--node-manager-port": ("node_manager_port", "int"),
    "--object-manager-port": ("object_manager_port", "int"),
    "--gcs-server-port": ("gcs_server_port", "int"),
    "--ray-client-server-port": ("ray_client_server_port", "int"),
    "--metrics-export-port": ("metrics_export_port", "int"),
    "--runtime-env-agent-port": ("runtime_env_agent_port", "int"),
    "--plasma-directory": ("plasma_directory", "str"),
    "--system-config": ("system_config", "str"),
    "--log-style": ("log_style", "str"),
    "--log-color": ("log_color", "str"),
    "--verbose": ("verbose", "flag"),
    "-v": ("verbose", "flag"),
}


def main(argv):
    if not argv or argv[0] in ("-h", "--help"):
        sys.stdout.write("Usage: ray [OPTIONS] COMMAND [ARGS]...\n\n  ray stand-in: start, stop, status\n")
        return 0 if argv else 2
    if argv[0] == "--version":
        print("ray, version 2.49.0 (llmgw stand-in)")
        return 0
    cmd, rest = argv[0], argv[1:]
    if cmd == "start":
        return start(rest)
    if cmd == "stop":
        return stop(rest)
    if cmd == "status":
        return status(rest)
    cli.click_fail("ray", "[OPTIONS] COMMAND [ARGS]...", f"No such command '{cmd}'.")


def start(argv):
    record = core.Record("ray", ["ray", "start"] + argv)
    try:
        o = cli.click_parse(argv, START_OPTIONS)
    except cli.UsageError as e:
        cli.click_fail("ray start", "[OPTIONS]", str(e))
    net = core.run_refusing(record, "ray", core.Net)
    check_client_port(record, o)
    gpus = raycore.gpus_of_node(o.get("num_gpus"))
    cpus = o.get("num_cpus") or 16
    if o.get("node_ip_address"):
        try:
            bound = net.bind_addrs(o["node_ip_address"])
        except OSError as e:
            core.fail(record, "ray", f"--node-ip-address={o['node_ip_address']}: {e.strerror}")
        if net.emulated and bound != [net.addr]:
            core.fail(record, "ray", f"--node-ip-address={o['node_ip_address']} is not this node's address")
    record.set(role="head" if o.get("head") else "worker", gpus=gpus, block=bool(o.get("block")))
    if o.get("head"):
        if o.get("address"):
            core.fail(record, "ray", "--head and --address cannot be given together")
        core.leader_delay()
        return start_head(record, net, o.get("port") or raycore.DEFAULT_PORT, gpus, cpus, o.get("block"))
    if not o.get("address"):
        core.fail(record, "ray", "ValueError: If --head is not passed in, --address must be provided.")
    return start_worker(record, net, o["address"], gpus, cpus, o.get("block"))


def check_client_port(record, o):
    """python/ray/scripts/scripts.py `ray start` builds RayParams(...,
    ray_client_server_port=...) for a head and a worker alike, and
    python/ray/_private/parameter.py RayParams._check_usage raises:

        if self.ray_client_server_port is not None:
            if not check_ray_client_dependencies_installed():   # grpcio
                raise ValueError("Ray Client requires pip package `ray[client]`. ...")
            if self.ray_client_server_port < 1024 or self.ray_client_server_port > 65535:
                raise ValueError("ray_client_server_port must be an integer between 1024 and 65535.")

    grpcio comes only with the `client` and `default` extras (python/setup.py),
    not with `pip install ray`: here it is missing unless STANDIN_RAY_CLIENT=1."""
    port = o.get("ray_client_server_port")
    installed = os.environ.get("STANDIN_RAY_CLIENT") == "1"
    if port is None:
        if installed and o.get("head"):
            record.set(ray_client_server_port=10001)  # scripts.py: no port, has client -> 10001
        return
    if not installed:
        core.fail(
            record,
            "ray",
            "ValueError: Ray Client requires pip package `ray[client]`. If you installed the minimal Ray (e.g. "
            "`pip install ray`), please reinstall by executing `pip install ray[client]`. (stand-in: grpcio is "
            "not installed; STANDIN_RAY_CLIENT=1 installs it)",
        )
    if not 1024 <= port <= 65535:
        core.fail(record, "ray", "ValueError: ray_client_server_port must be an integer between 1024 and 65535.")
    record.set(ray_client_server_port=port)


def node_addr(net):
    return net.addr if net.emulated else "127.0.0.1"


def start_head(record, net, port, gpus, cpus, block):
    def boot():
        try:
            socks = net.listen("0.0.0.0", port)
        except OSError as e:
            raise core.Refused(
                f"ConnectionError: Failed to start the GCS on port {port}: {e.strerror}. "
                "Use `ray start --head --port=<port>` to choose another port."
            )
        address = f"{node_addr(net)}:{port}"
        head = raycore.Head(socks, address, net.node, node_addr(net), gpus, cpus)
        head.serve()
        raycore.register_proc("head", address)
        raycore.write_current_cluster(address)
        record.set(address=address, bound=[f"{s.getsockname()[0]}:{port}" for s in socks])
        record.log("serving")
        return address

    banner = (
        "Ray runtime started (llmgw stand-in).\n\nTo add another node to this Ray cluster, run\n"
        "  ray start --address='{a}'\n\nTo connect to this Ray cluster:\n  import ray\n  ray.init()\n"
    )
    if block:
        core.pdeathsig()
        address = core.run_refusing(record, "ray", boot)
        sys.stderr.write(banner.format(a=address) + "--block: this process keeps the head until it is killed.\n")
        sys.stderr.flush()
        return hold_forever()
    return daemonize(record, boot, lambda a: sys.stdout.write(banner.format(a=a)))


def start_worker(record, net, address, gpus, cpus, block):
    def join():
        try:
            reply, conn, f = raycore.request(
                net,
                address,
                {"op": "join", "node": net.node, "addr": node_addr(net), "gpus": gpus, "cpus": cpus, "pid": os.getpid()},
                wait=2.0,
                keep=True,
            )
        except (OSError, ValueError, ConnectionError) as e:
            raise core.Refused(
                f"ConnectionError: Unable to connect to GCS at {address}. Check that (1) Ray GCS with matching "
                "version started successfully at the specified address, and (2) there is no firewall setting "
                f"preventing access. ({e})"
            )
        raycore.register_proc("worker", address)
        raycore.write_current_cluster(address)
        record.set(address=address, node_id=reply.get("node_id"))
        record.log("joined")

        def hold():
            while f.readline():
                pass
            sys.stderr.write(f"ray: the GCS at {address} is gone; this node leaves the cluster\n")
            os._exit(1)

        return hold

    if block:
        core.pdeathsig()
        hold = core.run_refusing(record, "ray", join)
        sys.stderr.write(f"Ray runtime started: joined {address} with {gpus} GPUs (--block).\n")
        sys.stderr.flush()
        hold()
        return 1

    def boot():
        hold = join()
        import threading

        threading.Thread(target=hold, daemon=True).start()
        return address

    return daemonize(record, boot, lambda a: sys.stdout.write(f"Ray runtime started: joined {a} with {gpus} GPUs.\n"))


def daemonize(record, boot, say):
    """Runs boot() in a daemon that outlives this command; reports its
    outcome before returning, as `ray start` does."""
    owner = os.getppid()
    owner_start = raycore._starttime(owner)
    r, w = os.pipe()
    pid = os.fork()
    if pid:
        os.close(w)
        data = b""
        while True:
            chunk = os.read(r, 65536)
            if not chunk:
                break
            data += chunk
        os.close(r)
        try:
            outcome = json.loads(data.decode() or "{}")
        except ValueError:
            outcome = {}
        if outcome.get("ok"):
            say(outcome["address"])
            sys.stdout.flush()
            return 0
        os.waitpid(pid, 0)
        sys.stderr.write(f"ray: error: {outcome.get('error', 'the Ray daemon died while starting')}\n")
        return 1
    # The daemon: no terminal output (callers capturing `ray start` must not
    # wait for it), gone with its owner.
    os.close(r)
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    try:
        address = boot()
    except core.Refused as e:
        record.log("refused", error=str(e))
        os.write(w, json.dumps({"ok": False, "error": str(e)}).encode())
        os._exit(1)
    except Exception as e:  # noqa: BLE001 - reported to the waiting parent
        os.write(w, json.dumps({"ok": False, "error": repr(e)}).encode())
        os._exit(1)
    raycore.watch_owner(owner, owner_start)
    os.write(w, json.dumps({"ok": True, "address": address}).encode())
    os.close(w)
    hold_forever()


def hold_forever():
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    while True:
        time.sleep(3600)


def stop(argv):
    try:
        cli.click_parse(argv, {"--force": ("force", "flag"), "-f": ("force", "flag"), "--grace-period": ("g", "int"), "-v": ("v", "flag"), "--verbose": ("v", "flag")})
    except cli.UsageError as e:
        cli.click_fail("ray stop", "[OPTIONS]", str(e))
    procs = raycore.procs()
    for p in procs:
        try:
            os.kill(p["pid"], signal.SIGTERM)
        except OSError:
            pass
    deadline = time.time() + 10
    for p in procs:
        while time.time() < deadline:
            try:
                os.kill(p["pid"], 0)
            except OSError:
                break
            time.sleep(0.05)
    try:
        os.unlink(os.path.join(core.state_dir(), "ray", "ray_current_cluster"))
    except OSError:
        pass
    print(f"Stopped all {len(procs)} Ray processes.")
    return 0


def status(argv):
    try:
        o = cli.click_parse(argv, {"--address": ("address", "str"), "-v": ("v", "flag"), "--verbose": ("v", "flag")})
    except cli.UsageError as e:
        cli.click_fail("ray status", "[OPTIONS]", str(e))
    try:
        net = core.Net()
        address = raycore.find_address(o.get("address"))
        if address is None:
            raise ConnectionError(raycore.NOT_FOUND)
        cluster = raycore.Cluster(net, address)
        nodes = cluster.nodes()
    except (ConnectionError, core.Refused) as e:
        sys.stderr.write(f"ConnectionError: {e}\n")
        return 1
    alive = [n for n in nodes if n["Alive"]]
    dead = [n for n in nodes if not n["Alive"]]
    total = raycore.resources(nodes)
    print(f"======== Autoscaler status: {time.strftime('%Y-%m-%d %H:%M:%S')} (llmgw stand-in, GCS {cluster.address}) ========")
    print("Node status\n" + "-" * 63 + "\nActive:")
    for n in alive:
        print(f" 1 node_{n['NodeID'][:16]} ({n['NodeManagerHostname']} {n['NodeManagerAddress']}, {n['Resources'].get('GPU', 0):.0f} GPU)")
    print("Pending:\n (no pending nodes)\nRecent failures:")
    for n in dead:
        print(f" node_{n['NodeID'][:16]} ({n['NodeManagerHostname']} {n['NodeManagerAddress']}): dead")
    if not dead:
        print(" (no failures)")
    print("\nResources\n" + "-" * 63 + "\nUsage:")
    print(f" 0.0/{total.get('CPU', 0.0)} CPU")
    print(f" 0.0/{total.get('GPU', 0.0)} GPU")
    return 0
