"""`vllm serve` stand-in. Contract (vllm-project/vllm):
  - argparse, unknown flags refused, `--foo_bar` read as `--foo-bar`
    (FlexibleArgumentParser); model as the positional or --model;
    --host default all interfaces, --port 8000;
  - executor (vllm/config/parallel.py ParallelConfig.__post_init__): with
    no --distributed-executor-backend and TP x PP > 1, "mp" when the node
    has TP x PP GPUs, else refused ("World size (N) is larger than the
    number of available GPUs (G) in this node ... set
    '--distributed-executor-backend ray'") -- newer vLLM no longer picks
    Ray by itself (PR #25775); with PP > 1 and the GPUs unknown it is
    refused too (a pipeline across nodes needs Ray);
  - Ray (vllm/v1/executor/ray_utils.py initialize_ray_cluster): ray.init()
    with no address (RAY_ADDRESS, else this node's GCS, else its last
    cluster, else a new local instance); the driver's node must be in the
    cluster with a GPU ("Current node has no GPU available"); fewer free
    GPUs than TP x PP is refused at once ("The number of required GPUs
    exceeds the total number of available GPUs in the placement group"),
    as vLLM did before the wait of PR #11138; the GPUs stay reserved while
    it serves, and it exits when the head or a node it uses goes away;
  - several nodes without Ray (--nnodes > 1, vLLM >= 0.11.1): see
    MultiNode below;
  - a model given as a path must exist.
"""

import argparse
import json
import os
import signal
import sys
import threading
import time
import uuid

from . import core, raycore

PROG = "vllm serve"

# The flags of vLLM 0.29.0's own `vllm serve` parser (vllm/engine/arg_utils.py
# `EngineArgs.add_cli_args`, vllm/entrypoints/launchers/cli_args.py
# `make_arg_parser`) that render or the tests use: a flag vLLM 0.29.0 no
# longer has (--swap-space, --task, --disable-log-requests, ...) is refused,
# exit 2, as vLLM refuses it (tests/standins/README.md).
VALUE_FLAGS = """
--model --tokenizer --host --port --uds --uvicorn-log-level --allowed-origins --allowed-methods
--allowed-headers --api-key --chat-template --chat-template-content-format --response-role
--ssl-keyfile --ssl-certfile --ssl-ca-certs --ssl-cert-reqs --root-path --middleware
--tool-call-parser --tool-parser-plugin --reasoning-parser --log-config-file --max-log-len --runner
--convert --tokenizer-mode --dtype --seed --hf-config-path --revision --code-revision
--tokenizer-revision --max-model-len --quantization --max-logprobs --logprobs-mode --config-format
--hf-overrides --override-generation-config --generation-config --model-impl --load-format
--download-dir --model-loader-extra-config --ignore-patterns --distributed-executor-backend
--pipeline-parallel-size --tensor-parallel-size --data-parallel-size --data-parallel-rank
--data-parallel-start-rank --data-parallel-size-local --data-parallel-address
--data-parallel-rpc-port --data-parallel-backend --max-parallel-loading-workers --nnodes --node-rank
--master-addr --master-port --block-size --gpu-memory-utilization --kv-cache-memory-bytes
--kv-cache-dtype --num-gpu-blocks-override --prefix-caching-hash-algo --cpu-offload-gb
--max-num-batched-tokens --max-num-seqs --long-prefill-token-threshold --scheduling-policy
--limit-mm-per-prompt --mm-processor-kwargs --max-lora-rank --max-loras --max-cpu-loras --lora-dtype
--speculative-config --compilation-config --kv-transfer-config --kv-events-config
--additional-config --tool-server --config --otlp-traces-endpoint --collect-detailed-traces
--worker-cls --worker-extension-cls --api-server-count --structured-outputs-config
--reasoning-parser-plugin --max-num-seqs --pooler-config --distributed-timeout-seconds
--expert-placement-strategy --all2all-backend --eplb-config --decode-context-parallel-size
--mm-encoder-tp-mode --media-io-kwargs --served-model-name --lora-modules --hf-token
""".split()

BOOL_FLAGS = """
--trust-remote-code --enforce-eager --enable-prefix-caching --enable-chunked-prefill
--disable-log-stats --enable-log-requests --enable-auto-tool-choice --enable-expert-parallel
--enable-lora --disable-custom-all-reduce --disable-sliding-window --skip-tokenizer-init
--enable-prompt-tokens-details --enable-server-load-tracking --disable-fastapi-docs
--enable-request-id-headers --headless --async-scheduling --enable-sleep-mode
--enable-force-include-usage --return-tokens-as-token-ids --disable-uvicorn-access-log --enable-eplb
--enable-dbo --ray-workers-use-nsight --use-tqdm-on-load --enable-tokenizer-info-endpoint
--enable-mm-embeds --disable-cascade-attn --enable-log-outputs --fully-sharded-loras
--disable-chunked-mm-input --enforce-eager
""".split()

SHORT = {
    "-tp": "--tensor-parallel-size",
    "-pp": "--pipeline-parallel-size",
    "-dp": "--data-parallel-size",
    "-q": "--quantization",
    "-O": "--compilation-config",
    "-asc": "--api-server-count",
    # vllm/engine/arg_utils.py (PR #23691, vLLM >= 0.11.1):
    #   parallel_group.add_argument("--nnodes", "-n", **parallel_kwargs["nnodes"])
    #   parallel_group.add_argument("--node-rank", "-r", **parallel_kwargs["node_rank"])
    "-n": "--nnodes",
    "-r": "--node-rank",
}


def parser(record=None):
    p = core.ArgParser(prog=PROG, allow_abbrev=False)
    p.add_argument("model_tag", nargs="?")
    for flag in sorted(set(VALUE_FLAGS)):
        names = [flag] + [s for s, l in SHORT.items() if l == flag]
        if flag == "--served-model-name":
            p.add_argument(*names, nargs="+")
        elif flag in ("--lora-modules",):
            p.add_argument(*names, nargs="+")
        elif flag == "--hf-token":
            p.add_argument(*names, nargs="?", const=True)
        elif flag in ("--port", "--tensor-parallel-size", "--pipeline-parallel-size", "--data-parallel-size", "--nnodes", "--node-rank",
                      "--master-port"):
            p.add_argument(*names, type=int)
        else:
            p.add_argument(*names)
    for flag in sorted(set(BOOL_FLAGS)):
        p.add_argument(flag, action=argparse.BooleanOptionalAction)
    p.record = record
    return p


def normalize(argv):
    """vLLM's FlexibleArgumentParser takes --foo_bar for --foo-bar."""
    out = []
    for a in argv:
        if a.startswith("--") and "_" in a:
            name, eq, val = a.partition("=")
            a = name.replace("_", "-") + eq + val
        out.append(a)
    return out


def main(argv):
    if not argv or argv[0] in ("-h", "--help"):
        sys.stdout.write("usage: vllm [-h] [-v] {serve} ...\n(llmgw stand-in)\n")
        return 0 if argv else 2
    if argv[0] in ("-v", "--version"):
        print("0.11.1 (llmgw stand-in)")
        return 0
    if argv[0] != "serve":
        sys.stderr.write(f"usage: vllm [-h] [-v] {{serve}} ...\nvllm: error: argument subparser: invalid choice: '{argv[0]}' (choose from 'serve')\n")
        return 2
    return serve(argv[1:], prog="vllm", argv0=["vllm", "serve"])


def serve(argv, prog, argv0):
    record = core.Record("vllm", argv0 + list(argv))
    args = parser(record).parse_args(normalize(argv))
    model = args.model_tag or args.model or "Qwen/Qwen3-0.6B"
    if args.model_tag and args.model and args.model_tag != args.model:
        core.fail(record, prog, f"With `vllm serve`, you should provide the model as a positional argument or in a config file instead of via the `--model` option. ({args.model_tag} vs {args.model})")
    served = args.served_model_name or [model]
    tp = args.tensor_parallel_size or 1
    pp = args.pipeline_parallel_size or 1
    world = tp * pp
    backend = args.distributed_executor_backend
    port = 8000 if args.port is None else args.port
    host = args.host  # None: all interfaces (uvicorn host None -> "0.0.0.0"/"::")
    # vllm/config/parallel.py ParallelConfig: master_addr "127.0.0.1",
    # master_port 29501, node_rank Field(default=0, ge=0), nnodes
    # Field(default=1, ge=1).
    nnodes = 1 if args.nnodes is None else args.nnodes
    rank = 0 if args.node_rank is None else args.node_rank
    mp = MultiNode(nnodes, rank, args.master_addr or "127.0.0.1",
                   29501 if args.master_port is None else args.master_port, tp, pp, bool(args.headless))
    record.set(model=model, served_model_name=served, tp=tp, pp=pp, backend=backend, nnodes=nnodes, node_rank=rank)
    if nnodes > 1:
        record.set(master_addr=mp.addr, master_port=mp.port, headless=mp.headless)

    def start():
        core.check_model_path(
            model,
            f"huggingface_hub.errors.HFValidationError: Repo id must be in the form 'repo_name' or "
            f"'namespace/repo_name': '{model}'. (the path {model} does not exist on node {core.node_name()})",
        )
        net = core.Net()
        if backend not in (None, "mp", "ray", "uni", "external_launcher"):
            raise core.Refused(f"argument --distributed-executor-backend: invalid choice: {backend!r}", 2)
        for name, value, least in (("nnodes", nnodes, 1), ("node_rank", rank, 0)):
            if value < least:
                raise core.Refused(
                    f"pydantic_core._pydantic_core.ValidationError: 1 validation error for ParallelConfig\n{name}\n"
                    f"  Input should be greater than or equal to {least} [type=greater_than_equal, input_value={value}]"
                )
        if nnodes > 1:
            mp.check(backend, args.data_parallel_size or 1)
            return net, None
        gpus = core.visible_gpus()
        if backend == "ray":
            return net, attach_ray(net, world, record)
        if backend == "uni" and world > 1:
            raise core.Refused(f"'uni' executor runs one worker; world size is {world}")
        if backend == "external_launcher":
            raise core.Refused("stand-in: external_launcher is not emulated")
        if world > 1 and (gpus is not None and gpus < world or gpus is None and pp > 1):
            shown = "unknown: CUDA_VISIBLE_DEVICES is unset" if gpus is None else gpus
            raise core.Refused(
                f"ValueError: World size ({world}) is larger than the number of available GPUs ({shown}) in this "
                "node. If this is intentional and you are using:\n- ray, set '--distributed-executor-backend "
                "ray'.\n- multiprocessing, set '--nnodes' and '--node-rank'."
            )
        if world == 1 and gpus == 0:
            raise core.Refused("RuntimeError: No CUDA GPUs are available")
        return net, None

    net, ray = core.run_refusing(record, prog, start)
    core.pdeathsig()
    if ray is not None:
        watch_ray(net, ray, record)
    app = core.App(record, lambda: served, "vllm")
    app.routes[("GET", "/version")] = lambda _: (200, {"version": "0.11.1"})
    app.routes[("GET", "/ping")] = lambda _: (200, "")
    app.routes[("GET", "/metrics")] = lambda _: (200, "# stand-in\n", "text/plain")
    banner = f"vllm stand-in: serving {served[0]}"
    if nnodes > 1 and rank > 0:
        return mp.worker(record, prog, net)
    if nnodes > 1:
        return mp.leader(record, prog, net, host or "0.0.0.0", port, app, banner)
    return core.serve_http(record, prog, net, host or "0.0.0.0", port, app, banner)


def attach_ray(net, world, record):
    try:
        address = raycore.find_address(None)
        if address is None:
            gpus = core.visible_gpus() or 0
            local = raycore.local_head(net, gpus)
            address = local.address
            sys.stderr.write(f"INFO worker.py -- Started a local Ray instance ({gpus} GPUs).\n")
        cluster = raycore.Cluster(net, address)
        cluster.check_member()
        nodes = cluster.nodes()
    except ConnectionError as e:
        raise core.Refused(f"ConnectionError: {e}")
    mine = {net.addr, net.loopback} if net.emulated else None
    me = [n for n in nodes if n["Alive"] and (mine is None or n["NodeManagerAddress"] in mine)]
    if me and not any(n["Resources"].get("GPU", 0) >= 1 for n in me):
        raise core.Refused(
            f"ValueError: Current node has no GPU available. current_node_resource={me[0]['Resources']}. vLLM "
            "engine cannot start without GPU. Make sure you have at least 1 GPU available in a node."
        )
    reply, conn, f = raycore.request(net, cluster.address, {"op": "reserve", "gpus": world, "node": net.node}, keep=True)
    if not reply.get("ok"):
        conn.close()
        raise core.Refused(
            "ValueError: The number of required GPUs exceeds the total number of available GPUs in the placement "
            f"group. Required number of devices: {world}. Total number of devices: {reply.get('free')} "
            f"(cluster {cluster.address}: {reply.get('total'):.0f} GPUs on "
            f"{sum(1 for n in nodes if n['Alive'])} alive nodes)."
        )
    used = [n["NodeID"] for n in nodes if n["Alive"] and n["Resources"].get("GPU", 0) > 0]
    record.set(ray_address=cluster.address, ray_nodes=[n["NodeManagerHostname"] for n in nodes if n["Alive"]])
    return {"cluster": cluster, "conn": conn, "file": f, "used": used}


def watch_ray(net, ray, record):
    """Exits when the head closes the placement group's connection or a node
    it placed workers on dies (RayActorError in vLLM)."""

    def head():
        while ray["file"].readline():
            pass
        sys.stderr.write("vllm stand-in: the Ray GCS went away; exiting\n")
        record.log("exited", error="Ray GCS went away")
        os._exit(1)

    def nodes():
        while True:
            time.sleep(1)
            try:
                alive = {n["NodeID"] for n in ray["cluster"].nodes() if n["Alive"]}
            except (OSError, ValueError, ConnectionError):
                continue
            gone = [n for n in ray["used"] if n not in alive]
            if gone:
                sys.stderr.write(f"vllm stand-in: RayActorError: a Ray node of this engine died ({gone[0][:16]}); exiting\n")
                record.log("exited", error="a Ray node died")
                os._exit(1)

    threading.Thread(target=head, daemon=True).start()
    threading.Thread(target=nodes, daemon=True).start()


class MultiNode:
    """The multi-node `mp` executor of vLLM >= 0.11.1 (PR #23691, "[V1]
    Support MP Executor for multi node distributed inference"): the same
    `vllm serve` on every node with --nnodes N --node-rank R --master-addr
    ADDR [--master-port P], and --headless on every rank R > 0
    (docs/serving/parallelism_scaling.md, "Running vLLM with
    MultiProcessing").

    What the real engine does, and what this stand-in does for it:
      - vllm/engine/arg_utils.py create_engine_config, when nnodes > 1:
          assert world_size % self.nnodes == 0,
              f"world_size={world_size} must be divisible by nnodes={self.nnodes}."
          assert self.node_rank < self.nnodes,
              f"node_rank={self.node_rank} must be less than nnodes={self.nnodes}."
        (world_size there is DP x PP x TP) -- refused alike;
      - vllm/config/parallel.py ParallelConfig.__post_init__: no backend
        and nnodes > 1 on CUDA picks "mp"; "nnodes > 1 can only be set when
        distributed executor backend is mp, uni or external_launcher." --
        refused alike for --distributed-executor-backend ray;
      - vllm/entrypoints/cli/serve.py: --headless goes to run_headless(),
        which for node_rank_within_dp > 0 runs only
        `MultiprocExecutor(vllm_config, monitor_workers=False)` joined at
        master_addr:master_port -- no API server; for rank 0 it takes the
        data-parallel headless path, whose engine core waits for a front
        end that never comes and fails after 5 minutes ("Did not receive
        response from front-end process within 5 minutes",
        vllm/v1/engine/core.py startup_handshake) -- refused at once here,
        as nothing would ever serve HTTP. A rank > 0 without --headless
        starts an API server and an engine core that die with
        "AssertionError: collective_rpc should not be called on follower
        node" (vllm/v1/executor/multiproc_executor.py) -- refused at once
        here too;
      - each node runs local_world_size = world_size // nnodes workers
        (ParallelConfig.local_world_size) on its visible GPUs; fewer
        visible GPUs than that fails ("local_world_size (L) must be less
        than or equal to the number of visible devices (G).",
        vllm/v1/worker/gpu_worker.py init_device as of v0.11.1, vllm issue
        #28997; later versions fail on the missing device ordinal) --
        refused when CUDA_VISIBLE_DEVICES / NVIDIA_VISIBLE_DEVICES say so;
      - torch.distributed joins at tcp://master_addr:master_port
        (vllm/distributed/parallel_state.py init_distributed_environment
        when nnodes > 1): rank 0's TCPStore listens on the port on all
        interfaces (EADDRINUSE if taken) and its own client connects to
        master_addr:master_port, so a master_addr that is not rank 0's
        never completes; other ranks connect there, retrying until the
        timeout -- the same here, resolving ADDR through STANDIN_HOSTS;
      - rank 0 binds its API socket before the engine starts
        (vllm/entrypoints/openai/api_server.py setup_server /
        create_server_socket: SO_REUSEADDR, SO_REUSEPORT, bind; uvicorn
        listens later): a port something already listens on fails at once,
        connections are refused until the engine is ready, i.e. until every
        rank has joined; then it serves HTTP. Not emulated: SO_REUSEPORT
        (two real vLLM of one user can share a port);
      - a rank > 0 that dies is noticed by rank 0 at its next step, not at
        once: /health stays 200 (AsyncLLM.check_health only reports an
        engine already dead) and the next completion fails, after which
        the server exits (EngineDeadError) -- here the completion fails at
        once (500) instead of after the NCCL / RPC timeout, then rank 0
        exits 1;
      - ranks > 0 exit when rank 0 goes away (not confirmed from vLLM's
        source: a real headless worker may only notice at its next
        collective).
    """

    def __init__(self, nnodes, rank, addr, port, tp, pp, headless):
        self.nnodes, self.rank, self.addr, self.port = nnodes, rank, addr, port
        self.tp, self.pp, self.world, self.headless = tp, pp, tp * pp, headless

    def check(self, backend, dp):
        world, n, r = self.world * dp, self.nnodes, self.rank
        if world % n != 0:
            raise core.Refused(f"AssertionError: world_size={world} must be divisible by nnodes={n}.")
        if r >= n:
            raise core.Refused(f"AssertionError: node_rank={r} must be less than nnodes={n}.")
        if backend not in (None, "mp", "uni", "external_launcher"):
            raise core.Refused(
                "ValueError: nnodes > 1 can only be set when distributed executor backend is mp, uni or "
                "external_launcher."
            )
        if backend == "uni" and self.world > 1:
            raise core.Refused(f"'uni' executor runs one worker; world size is {self.world}")
        if backend == "external_launcher":
            raise core.Refused("stand-in: external_launcher is not emulated")
        if dp > 1:
            raise core.Refused("stand-in: data parallelism across nodes (--nnodes > 1 with --data-parallel-size > 1) is not emulated")
        if r == 0 and self.headless:
            raise core.Refused(
                f"stand-in: --headless on --node-rank 0 of {n}: rank 0 is the only node that can serve the API, "
                "and --headless starts no API server there (vllm/entrypoints/cli/serve.py run_headless: "
                "api_server_count = 0); the real engine core would wait for a front end and fail with "
                "'RuntimeError: Did not receive response from front-end process within 5 minutes'. "
                "Give --headless to ranks > 0 only."
            )
        if r > 0 and not self.headless:
            raise core.Refused(
                f"AssertionError: collective_rpc should not be called on follower node (--node-rank {r} without "
                "--headless starts an API server and an engine core; ranks > 0 must run `vllm serve ... --headless`)"
            )
        local, gpus = self.world // n, core.visible_gpus()
        if gpus is not None and gpus < local:
            raise core.Refused(
                f"AssertionError: local_world_size ({local}) must be less than or equal to the number of visible "
                f"devices ({gpus})."
            )

    def hello(self):
        return {"rank": self.rank, "nnodes": self.nnodes, "tp": self.tp, "pp": self.pp, "node": core.node_name()}

    def leader(self, record, prog, net, host, port, app, banner):
        core.leader_delay()
        lost = []

        def boot():
            http = net.listen(host, port, bind_only=True)
            try:
                store = net.listen("0.0.0.0", self.port)
            except OSError as e:
                for s in http:
                    s.close()
                raise core.Refused(
                    "torch.distributed.DistNetworkError: The server socket has failed to listen on any local "
                    f"network address. port: {self.port}, useIpv6: false, code: -98, name: EADDRINUSE, message: "
                    f"{e.strerror}"
                )
            record.set(master_bound=[f"{s.getsockname()[0]}:{self.port}" for s in store])
            return http, store

        http, store = core.run_refusing(record, prog, boot)
        joined = core.run_refusing(record, prog, lambda: self.rendezvous(record, net, store))

        def gone(r, node):
            lost.append(r)
            sys.stderr.write(
                f"vllm stand-in: node rank {r} ({node}) went away; the engine fails at its next step (request)\n"
            )
            sys.stderr.flush()
            record.log("rank_lost", lost_rank=r)

        for r, (conn, h) in joined.items():
            watch_peer(conn, lambda r=r, h=h: gone(r, h["node"]))

        complete = app.complete

        def guarded(body):
            if not lost:
                return complete(body)
            record.log("exited", error=f"node rank {lost[0]} went away (EngineDeadError)")
            threading.Timer(0.3, lambda: os._exit(1)).start()
            return 500, {
                "error": {
                    "message": "EngineCore encountered an issue. See stack trace (above) for the root cause.",
                    "type": "InternalServerError",
                    "code": 500,
                }
            }

        app.routes[("POST", "/v1/completions")] = guarded
        app.routes[("POST", "/v1/chat/completions")] = guarded
        return core.serve_http(record, prog, net, host, port, app,
                               f"{banner}; node rank 0 of {self.nnodes}, torch.distributed at {self.addr}:{self.port}",
                               socks=http)

    def rendezvous(self, record, net, store):
        """Rank 0: its own TCPStore client must reach the store at
        master_addr:master_port, and every other rank must join; returns
        {rank: (connection, hello)}."""
        nonce = uuid.uuid4().hex
        joined, errors = {}, []
        lock, done = threading.Lock(), threading.Event()
        want = self.nnodes - 1

        def handle(conn):
            try:
                conn.settimeout(10)
                h = json.loads(conn.makefile("r").readline() or "{}")
                conn.settimeout(None)
            except (OSError, ValueError):
                conn.close()
                return
            if "probe" in h:
                try:
                    conn.sendall((json.dumps({"probe": nonce}) + "\n").encode())
                finally:
                    conn.close()
                return
            with lock:
                problem = None
                if (h.get("nnodes"), h.get("tp"), h.get("pp")) != (self.nnodes, self.tp, self.pp):
                    problem = (
                        f"node rank {h.get('rank')} on {h.get('node')} has nnodes={h.get('nnodes')} tp={h.get('tp')} "
                        f"pp={h.get('pp')}, rank 0 has nnodes={self.nnodes} tp={self.tp} pp={self.pp}"
                    )
                elif h.get("rank") in joined or h.get("rank") == 0:
                    problem = f"node rank {h.get('rank')} joined twice (second from {h.get('node')})"
                if problem:
                    errors.append(problem)
                    conn.sendall((json.dumps({"error": problem}) + "\n").encode())
                    conn.close()
                    done.set()
                    return
                joined[h["rank"]] = (conn, h)
                if len(joined) == want:
                    done.set()

        def accept(s):
            while True:
                try:
                    conn, _ = s.accept()
                except OSError:
                    return
                threading.Thread(target=handle, args=(conn,), daemon=True).start()

        for s in store:
            threading.Thread(target=accept, args=(s,), daemon=True).start()
        deadline = time.time() + core.timeout()
        # torch's TCPStore: the master's own client connects to
        # master_addr:master_port like every other rank.
        while not self.probe(net, nonce):
            if time.time() > deadline:
                raise core.Refused(
                    f"torch.distributed.DistNetworkError: The client socket has timed out after {core.timeout():.0f}s "
                    f"(STANDIN_TIMEOUT) while trying to connect to ({self.addr}, {self.port}): --master-addr "
                    f"{self.addr} does not reach node rank 0's own store on {core.node_name()}"
                )
            time.sleep(1)
        record.log("waiting", waiting_for=f"{want} node ranks at {self.addr}:{self.port}")
        sys.stderr.write(f"vllm stand-in: node rank 0 waits for {want} node ranks at {self.addr}:{self.port}\n")
        sys.stderr.flush()
        while not done.wait(0.2):
            if time.time() > deadline:
                raise core.Refused(
                    f"torch.distributed.DistStoreError: Timed out after {core.timeout():.0f} seconds (STANDIN_TIMEOUT) "
                    f"waiting for clients. {len(joined) + 1}/{self.nnodes} nodes joined {self.addr}:{self.port} "
                    f"(node ranks in: {sorted([0] + list(joined))})"
                )
        if errors:
            raise core.Refused(f"RuntimeError: distributed init failed: {errors[0]}")
        for conn, _ in joined.values():
            conn.sendall(b'{"go": true}\n')
        record.set(ranks=sorted([0] + list(joined)), rank_nodes={str(r): h["node"] for r, (_, h) in joined.items()})
        return joined

    def probe(self, net, nonce):
        try:
            with net.connect(self.addr, self.port, wait=2) as c:
                c.sendall(b'{"probe": true}\n')
                c.settimeout(2)
                line = c.makefile("r").readline()
            return json.loads(line or "{}").get("probe") == nonce
        except (OSError, ValueError):
            return False

    def worker(self, record, prog, net):
        """Rank > 0 (--headless): joins rank 0 at master_addr:master_port,
        retrying as a TCPStore client does until STANDIN_TIMEOUT; no HTTP."""

        def join():
            deadline = time.time() + core.timeout()
            record.log("waiting", waiting_for=f"node rank 0 at {self.addr}:{self.port}")
            last = None
            while True:
                try:
                    conn = net.connect(self.addr, self.port, wait=5)
                    conn.sendall((json.dumps(self.hello()) + "\n").encode())
                    conn.settimeout(max(1.0, deadline - time.time()))
                    f = conn.makefile("r")
                    line = f.readline()
                    reply = json.loads(line) if line else {}
                    if reply.get("go"):
                        conn.settimeout(None)
                        return conn, f
                    if reply.get("error"):
                        raise core.Refused(f"RuntimeError: distributed init failed: {reply['error']}")
                    last = "node rank 0 closed the connection"
                    conn.close()
                except (OSError, ValueError) as e:
                    last = e
                if time.time() > deadline:
                    raise core.Refused(
                        f"torch.distributed.DistNetworkError: The client socket has timed out after "
                        f"{core.timeout():.0f}s (STANDIN_TIMEOUT) while trying to connect to ({self.addr}, "
                        f"{self.port}): {last}"
                    )
                time.sleep(1)

        conn, f = core.run_refusing(record, prog, join)
        record.log("joined")
        sys.stderr.write(
            f"vllm stand-in: headless node rank {self.rank} of {self.nnodes} joined {self.addr}:{self.port} "
            f"(node {net.node}, {self.world // self.nnodes} workers, no API server)\n"
        )
        sys.stderr.flush()
        signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
        try:
            while f.readline():
                pass
        except OSError:
            pass
        sys.stderr.write("vllm stand-in: node rank 0 went away; exiting\n")
        record.log("exited", error="node rank 0 went away")
        return 1


def watch_peer(conn, on_close):
    def loop():
        try:
            while conn.recv(1024):
                pass
        except OSError:
            pass
        on_close()

    threading.Thread(target=loop, daemon=True).start()
