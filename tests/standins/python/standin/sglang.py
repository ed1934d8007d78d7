"""SGLang stand-in: `python3 -m sglang.launch_server` and `sglang serve`.
Contract (sgl-project/sglang python/sglang/srt/server_args.py,
docs/advanced_features/server_arguments.md):
  - argparse (abbreviations allowed, so `--tp` is `--tp-size`), unknown
    flags refused, --model-path required, --host 127.0.0.1, --port 30000;
  - `(tp x pp) % nnodes == 0` ("tp_size must be divisible by number of
    nodes"), --node-rank an integer in [0, nnodes); each node runs
    tp x pp / nnodes schedulers on GPUs base-gpu-id + i x gpu-id-step, which
    CUDA_VISIBLE_DEVICES (when set) must have;
  - several nodes: rank 0 is the torch TCPStore server on the
    --dist-init-addr port (all interfaces) and, with --enable-dp-attention,
    binds the six ZMQ ports after it on the --dist-init-addr host (see
    dp_attention_ports); a taken port fails at once; it waits for the other
    ranks;
    ranks > 0 connect to --dist-init-addr, retrying (a TCPStore client)
    until STANDIN_TIMEOUT; only when all ranks are in does rank 0 serve
    HTTP; ranks > 0 then serve only the dummy health server (/health,
    /health_generate, /ping) of newer SGLang on --host/--port; any rank
    exits when another goes away (an NCCL failure);
  - a model given as a path must exist.
"""

import json
import os
import sys
import threading
import time

from . import core

PROG = "launch_server.py"
HELD = []

VALUE = {
    "--model-path": str, "--tokenizer-path": str, "--tokenizer-mode": str, "--load-format": str,
    "--model-loader-extra-config": str, "--context-length": int, "--revision": str, "--model-impl": str,
    "--host": str, "--port": int, "--nccl-port": int, "--dtype": str, "--quantization": str,
    "--quantization-param-path": str, "--kv-cache-dtype": str, "--mem-fraction-static": float,
    "--max-running-requests": int, "--max-queued-requests": int, "--max-total-tokens": int,
    "--chunked-prefill-size": int, "--max-prefill-tokens": int, "--schedule-policy": str,
    "--schedule-conservativeness": float, "--page-size": int, "--device": str,
    "--tensor-parallel-size": int, "--pipeline-parallel-size": int, "--pp-max-micro-batch-size": int,
    "--pp-async-batch-depth": int, "--stream-interval": int, "--random-seed": int,
    "--watchdog-timeout": float, "--dist-timeout": int, "--download-dir": str, "--base-gpu-id": int,
    "--gpu-id-step": int, "--log-level": str, "--log-level-http": str, "--api-key": str,
    "--served-model-name": str, "--weight-version": str, "--chat-template": str,
    "--hf-chat-template-name": str, "--completion-template": str, "--file-storage-path": str,
    "--reasoning-parser": str, "--tool-call-parser": str, "--data-parallel-size": int,
    "--load-balance-method": str, "--dist-init-addr": str, "--nnodes": int, "--node-rank": int,
    "--json-model-override-args": str, "--attention-backend": str, "--sampling-backend": str,
    "--grammar-backend": str, "--speculative-algorithm": str,
    "--speculative-draft-model-path": str, "--speculative-num-steps": int,
    "--speculative-eagle-topk": int, "--speculative-num-draft-tokens": int,
    "--expert-parallel-size": int, "--ep-num-redundant-experts": int, "--moe-a2a-backend": str,
    "--decode-log-interval": int, "--max-loras-per-batch": int, "--max-lora-rank": int,
    "--tokenizer-worker-num": int, "--cpu-offload-gb": int, "--config": str, "--prefill-attention-backend": str,
    "--decode-attention-backend": str, "--moe-runner-backend": str,
}
ALIASES = {
    "--model-path": ["--model"],
    "--tensor-parallel-size": ["--tp-size"],
    "--pipeline-parallel-size": ["--pp-size"],
    "--data-parallel-size": ["--dp-size"],
    "--dist-init-addr": ["--nccl-init-addr"],
    "--expert-parallel-size": ["--ep-size"],
}
FLAGS = """
--trust-remote-code --skip-tokenizer-init --is-embedding --enable-multimodal --skip-server-warmup
--log-requests --enable-metrics --show-time-cost --enable-cache-report --disable-radix-cache
--disable-cuda-graph --disable-cuda-graph-padding --enable-torch-compile --enable-dp-attention
--enable-p2p-check --disable-overlap-schedule --enable-mixed-chunk --disable-custom-all-reduce
--enable-lora --enable-deterministic-inference --enable-two-batch-overlap --enable-eplb
--disable-shared-experts-fusion --enable-priority-scheduling --grpc-mode --enable-fp32-lm-head
--enable-trace --enable-hierarchical-cache --disable-chunked-prefix-cache
""".split()


def parser(record):
    p = core.ArgParser(prog=PROG)
    for flag, typ in VALUE.items():
        dest = flag[2:].replace("-", "_")
        p.add_argument(flag, *ALIASES.get(flag, []), type=typ, dest=dest, required=(flag == "--model-path"))
    p.add_argument("--lora-paths", nargs="*")
    for flag in FLAGS:
        p.add_argument(flag, action="store_true")
    p.record = record
    return p


def main(argv, argv0=("python3", "-m", "sglang.launch_server")):
    record = core.Record("sglang", list(argv0) + list(argv))
    a = parser(record).parse_args(argv)
    tp = a.tensor_parallel_size or 1
    pp = a.pipeline_parallel_size or 1
    dp = a.data_parallel_size or 1
    nnodes = a.nnodes or 1
    rank = 0 if a.node_rank is None else a.node_rank
    host = a.host or "127.0.0.1"
    port = 30000 if a.port is None else a.port
    served = a.served_model_name or a.model_path
    record.set(model=a.model_path, served_model_name=[served], tp=tp, pp=pp, dp=dp, nnodes=nnodes, node_rank=rank,
               dist_init_addr=a.dist_init_addr)

    def check():
        core.check_model_path(
            a.model_path, f"OSError: {a.model_path} is not a local folder and is not a valid model identifier (node {core.node_name()})"
        )
        if (tp * pp) % nnodes != 0:
            raise core.Refused("AssertionError: tp_size must be divisible by number of nodes")
        if dp > 1 and nnodes != 1 and not a.enable_dp_attention:
            raise core.Refused("AssertionError: multi-node data parallel is not supported unless dp attention!")
        if not 0 <= rank < nnodes:
            raise core.Refused(f"AssertionError: node_rank {rank} must be in [0, nnodes={nnodes})")
        per_node = tp * pp * (dp if nnodes == 1 else 1) // nnodes
        need = (a.base_gpu_id or 0) + (per_node - 1) * (a.gpu_id_step or 1) + 1
        gpus = core.visible_gpus()
        if gpus is not None and gpus < need:
            raise core.Refused(
                f"RuntimeError: CUDA error: invalid device ordinal (this node runs {per_node} schedulers on GPU ids "
                f"up to {need - 1}; CUDA_VISIBLE_DEVICES gives {gpus})"
            )
        return core.Net()

    net = core.run_refusing(record, PROG, check)
    core.pdeathsig()
    if nnodes > 1:
        dist = a.dist_init_addr or f"127.0.0.1:{a.nccl_port or port + 233}"
        try:
            dhost, dport = core.split_hostport(dist)
        except ValueError as e:
            core.fail(record, PROG, f"ValueError: --dist-init-addr {dist!r}: {e}")
        if rank == 0:
            core.leader_delay()
            block = dp_attention_ports(dhost, dport) if a.enable_dp_attention else None
            core.run_refusing(record, PROG, lambda: rendezvous_server(record, net, dport, nnodes, tp, pp, block))
        else:
            conn = core.run_refusing(record, PROG, lambda: rendezvous_client(record, net, dhost, dport, rank, nnodes, tp, pp))
            app = core.App(record, lambda: [], "sglang")
            app.routes = {
                ("GET", "/health"): lambda _: (200, ""),
                ("GET", "/health_generate"): lambda _: (200, ""),
                ("GET", "/ping"): lambda _: (200, ""),
                ("GET", "/standin"): lambda _: (200, record.data),
            }
            watch(conn, record, "rank 0")
            return core.serve_http(record, PROG, net, host, port, app,
                                   f"sglang stand-in: rank {rank}/{nnodes} joined {dist}; dummy health server")
    app = core.App(record, lambda: [served], "sglang")
    # /health and /health_generate are one handler that generates a token
    # and checks, at 1 s steps, whether the scheduler answered: never
    # sooner than a second (python/sglang/srt/entrypoints/http_server.py,
    # `health_generate`; SGLANG_ENABLE_HEALTH_ENDPOINT_GENERATION is on by
    # default). A probe that waits one second fails.
    app.routes[("GET", "/health")] = health_generate
    app.routes[("GET", "/health_generate")] = health_generate
    app.routes[("GET", "/get_model_info")] = lambda _: (200, {"model_path": a.model_path, "is_generation": True})
    app.routes[("GET", "/get_server_info")] = lambda _: (200, {"tp_size": tp, "nnodes": nnodes, "node_rank": rank})
    return core.serve_http(record, PROG, net, host, port, app, f"sglang stand-in: serving {served}")


def health_generate(_):
    time.sleep(HEALTH_SECONDS)
    return 200, ""


# How long the leader's /health takes: its first check, 1 s after sending
# the generation, plus the time to generate one token.
HEALTH_SECONDS = float(os.environ.get("STANDIN_SGLANG_HEALTH_SECONDS", "1.2"))


def hello(rank, nnodes, tp, pp):
    return {"rank": rank, "nnodes": nnodes, "tp": tp, "pp": pp, "node": core.node_name()}


def dp_attention_ports(dhost, dport):
    """The TCP ports node 0 binds besides the TCPStore when DP attention is
    on: python/sglang/srt/server_args.py PortArgs.init_new (stored copy at
    commit 001067ff, research-23 section 3):

        if not cfg.enable_dp_attention:
            # Normal case, use IPC within a single node
            return PortArgs(tokenizer_ipc_name=f"ipc://...", ...)
        ...
        na = NetworkAddress.parse(server_args.dist_init_addr)
        NUM_DERIVED_PORTS = 6 if not is_rust_server else 6 + cfg.dp_size
        elif dist_init_port + NUM_DERIVED_PORTS > 65535:
            port_base = dist_init_port - NUM_DERIVED_PORTS - 1
        else:
            port_base = dist_init_port + 1
        detokenizer_port = port_base + 1; rpc_port = port_base + 2
        metrics_port = port_base + 3; load_collector_port = port_base + 5
        scheduler_input_port = port_base + 4   # dp_rank None
        # tokenizer_ipc_name = tcp://{dist_init_host}:{port_base}

    so D+1..D+6 (tokenizer, detokenizer, rpc, metrics, scheduler input,
    load collector) as tcp://HOST:PORT ZMQ sockets on the --dist-init-addr
    host. Without DP attention they are ipc:// sockets and no TCP port but
    D is taken. Not emulated: the Rust server's dp_size extra ports, the
    data-parallel controller's worker ports, single-node DP attention's
    --port + 233 block. --nccl-port is not bound when --dist-init-addr is
    given (python/sglang/srt/distributed/bootstrap.py uses the
    dist_init_addr TCPStore then)."""
    n = 6
    base = dport - n - 1 if dport + n > 65535 else dport + 1
    names = ["tokenizer", "detokenizer", "rpc", "metrics", "scheduler_input", "load_collector"]
    return [(dhost, base + i, names[i]) for i in range(n)]


def rendezvous_server(record, net, dport, nnodes, tp, pp, block=None):
    """Rank 0: the TCPStore server (and the DP-attention ZMQ ports, when
    `block` lists them); returns when every other rank is in."""
    try:
        socks = net.listen("0.0.0.0", dport)
    except OSError as e:
        raise core.Refused(
            "torch.distributed.DistNetworkError: The server socket has failed to listen on any local network "
            f"address. port: {dport}, useIpv6: false, code: -98, name: EADDRINUSE, message: {e.strerror}"
        )
    zmq = []
    for zhost, zport, _ in block or []:
        try:
            zmq += net.listen(zhost, zport)
        except OSError as e:
            # pyzmq's message for a failed bind of tcp://HOST:PORT
            raise core.Refused(f"zmq.error.ZMQError: {os.strerror(e.errno) if e.errno else e} (addr='tcp://{zhost}:{zport}')")
    HELD.extend(zmq)  # bound for as long as this process lives
    record.set(dist_bound=[f"{s.getsockname()[0]}:{dport}" for s in socks],
               zmq_bound=[f"{s.getsockname()[0]}:{s.getsockname()[1]}" for s in zmq])
    record.log("waiting", waiting_for=f"{nnodes - 1} ranks on port {dport}")
    sys.stderr.write(f"sglang stand-in: rank 0 waits for {nnodes - 1} ranks on port {dport}\n")
    sys.stderr.flush()
    joined = {}
    lock = threading.Lock()
    done = threading.Event()
    errors = []

    def accept(s):
        while not done.is_set():
            try:
                conn, _ = s.accept()
            except OSError:
                return
            try:
                conn.settimeout(10)
                h = json.loads(conn.makefile("r").readline() or "{}")
                conn.settimeout(None)
            except (OSError, ValueError):
                conn.close()
                continue
            with lock:
                problem = None
                if (h.get("nnodes"), h.get("tp"), h.get("pp")) != (nnodes, tp, pp):
                    problem = f"rank {h.get('rank')} on {h.get('node')} has nnodes={h.get('nnodes')} tp={h.get('tp')} pp={h.get('pp')}, rank 0 has nnodes={nnodes} tp={tp} pp={pp}"
                elif h.get("rank") in joined or h.get("rank") == 0:
                    problem = f"rank {h.get('rank')} joined twice (second from {h.get('node')})"
                if problem:
                    errors.append(problem)
                    conn.sendall((json.dumps({"error": problem}) + "\n").encode())
                    conn.close()
                    done.set()
                    return
                joined[h["rank"]] = (conn, h)
                if len(joined) == nnodes - 1:
                    done.set()

    for s in socks:
        threading.Thread(target=accept, args=(s,), daemon=True).start()
    deadline = time.time() + core.timeout()
    while not done.wait(0.2):
        core.wait_until(deadline, f"{nnodes - 1 - len(joined)} of {nnodes - 1} ranks at port {dport} (joined: {sorted(joined)})")
    if errors:
        raise core.Refused(f"RuntimeError: distributed init failed: {errors[0]}")
    for conn, _ in joined.values():
        conn.sendall(b'{"go": true}\n')
        watch(conn, record, "a rank > 0")
    record.set(ranks=sorted([0] + list(joined)), rank_nodes={str(r): h["node"] for r, (_, h) in joined.items()})


def rendezvous_client(record, net, dhost, dport, rank, nnodes, tp, pp):
    """Rank > 0: connects to rank 0's TCPStore, retrying until the deadline."""
    deadline = time.time() + core.timeout()
    record.log("waiting", waiting_for=f"rank 0 at {dhost}:{dport}")
    last = None
    while True:
        try:
            conn = net.connect(dhost, dport, wait=5)
            break
        except OSError as e:
            last = e
        if time.time() > deadline:
            raise core.Refused(
                f"torch.distributed.DistStoreError: timed out after {core.timeout():.0f} s (STANDIN_TIMEOUT) "
                f"connecting to rank 0 at {dhost}:{dport}: {last}"
            )
        time.sleep(1)
    conn.sendall((json.dumps(hello(rank, nnodes, tp, pp)) + "\n").encode())
    conn.settimeout(max(1.0, deadline - time.time()))
    try:
        line = conn.makefile("r").readline()
    except OSError:
        line = ""
    reply = json.loads(line) if line else {}
    if not reply.get("go"):
        raise core.Refused(f"RuntimeError: distributed init failed: {reply.get('error', 'rank 0 closed the connection')}")
    conn.settimeout(None)
    return conn


def watch(conn, record, who):
    def loop():
        try:
            while conn.recv(1024):
                pass
        except OSError:
            pass
        sys.stderr.write(f"sglang stand-in: {who} went away (NCCL error); exiting\n")
        record.log("exited", error=f"{who} went away")
        os._exit(1)

    threading.Thread(target=loop, daemon=True).start()


def cli_main(argv):
    """`sglang serve ...` (newer SGLang's console script) and `sglang version`."""
    if not argv or argv[0] in ("-h", "--help"):
        sys.stdout.write("usage: sglang {serve,generate,version} ...\n(llmgw stand-in)\n")
        return 0 if argv else 2
    if argv[0] == "version":
        print("sglang 0.5.5 (llmgw stand-in)")
        return 0
    if argv[0] != "serve":
        sys.stderr.write(f"sglang: error: argument subcommand: invalid choice: '{argv[0]}' (choose from 'serve', 'generate', 'version')\n")
        return 2
    return main(argv[1:], argv0=("sglang", "serve"))
