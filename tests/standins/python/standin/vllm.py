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
  - a model given as a path must exist.
"""

import argparse
import os
import sys
import threading
import time

from . import core, raycore

PROG = "vllm serve"

VALUE_FLAGS = """
--model --tokenizer --host --port --uds --uvicorn-log-level --allowed-origins --allowed-methods
--allowed-headers --api-key --chat-template --chat-template-content-format --response-role
--ssl-keyfile --ssl-certfile --ssl-ca-certs --ssl-cert-reqs --root-path --middleware
--tool-call-parser --tool-parser-plugin --reasoning-parser --log-config-file --max-log-len
--runner --convert --task --tokenizer-mode --dtype --seed --hf-config-path --revision
--code-revision --tokenizer-revision --max-model-len --quantization --max-logprobs --logprobs-mode
--config-format --hf-overrides --override-generation-config --generation-config --model-impl
--load-format --download-dir --model-loader-extra-config --ignore-patterns
--distributed-executor-backend --pipeline-parallel-size --tensor-parallel-size
--data-parallel-size --data-parallel-rank --data-parallel-start-rank --data-parallel-size-local
--data-parallel-address --data-parallel-rpc-port --data-parallel-backend
--max-parallel-loading-workers --nnodes --node-rank --master-addr --master-port --block-size
--gpu-memory-utilization --kv-cache-memory-bytes --swap-space --kv-cache-dtype
--num-gpu-blocks-override --prefix-caching-hash-algo --cpu-offload-gb --max-num-batched-tokens
--max-num-seqs --max-num-partial-prefills --max-long-partial-prefills
--long-prefill-token-threshold --scheduling-policy --limit-mm-per-prompt --mm-processor-kwargs
--max-lora-rank --max-loras --max-cpu-loras --lora-dtype --speculative-config
--compilation-config --kv-transfer-config --kv-events-config --additional-config --tool-server
--config --otlp-traces-endpoint --collect-detailed-traces --max-seq-len-to-capture --worker-cls
--worker-extension-cls --api-server-count --cuda-graph-sizes --structured-outputs-config
--guided-decoding-backend --reasoning-parser-plugin --max-num-seqs --pooler-config
--enable-log-outputs-level --distributed-timeout-seconds --expert-placement-strategy
--all2all-backend --eplb-config --decode-context-parallel-size --mm-encoder-tp-mode
--media-io-kwargs --served-model-name --lora-modules --hf-token --uvicorn-access-log-exclude-paths
""".split()

BOOL_FLAGS = """
--trust-remote-code --enforce-eager --enable-prefix-caching --enable-chunked-prefill
--disable-log-stats --disable-log-requests --enable-log-requests --enable-auto-tool-choice
--enable-expert-parallel --enable-lora --disable-custom-all-reduce --disable-sliding-window
--skip-tokenizer-init --enable-prompt-tokens-details --enable-server-load-tracking
--disable-fastapi-docs --enable-request-id-headers --disable-frontend-multiprocessing --headless
--async-scheduling --enable-sleep-mode --enable-force-include-usage --return-tokens-as-token-ids
--disable-uvicorn-access-log --enable-eplb --enable-dbo --ray-workers-use-nsight
--calculate-kv-scales --use-tqdm-on-load --enable-tokenizer-info-endpoint --enable-mm-embeds
--disable-cascade-attn --enable-log-outputs --enable-lora-bias --fully-sharded-loras
--disable-chunked-mm-input --enable-multimodal-encoder-data-parallel --enforce-eager
--enable-reasoning --multi-step-stream-outputs --enable-sequence-parallel
""".split()

SHORT = {
    "-tp": "--tensor-parallel-size",
    "-pp": "--pipeline-parallel-size",
    "-dp": "--data-parallel-size",
    "-q": "--quantization",
    "-O": "--compilation-config",
    "-asc": "--api-server-count",
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
        elif flag in ("--port", "--tensor-parallel-size", "--pipeline-parallel-size", "--data-parallel-size", "--nnodes", "--node-rank"):
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
        print("0.11.0 (llmgw stand-in)")
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
    record.set(model=model, served_model_name=served, tp=tp, pp=pp, backend=backend)

    def start():
        core.check_model_path(
            model,
            f"huggingface_hub.errors.HFValidationError: Repo id must be in the form 'repo_name' or "
            f"'namespace/repo_name': '{model}'. (the path {model} does not exist on node {core.node_name()})",
        )
        net = core.Net()
        if backend not in (None, "mp", "ray", "uni", "external_launcher"):
            raise core.Refused(f"argument --distributed-executor-backend: invalid choice: {backend!r}", 2)
        if (args.nnodes or 1) > 1:
            raise core.Refused("stand-in: the multi-node 'mp' executor (--nnodes > 1) is not emulated; use Ray")
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
    app.routes[("GET", "/version")] = lambda _: (200, {"version": "0.11.0"})
    app.routes[("GET", "/ping")] = lambda _: (200, "")
    app.routes[("GET", "/metrics")] = lambda _: (200, "# stand-in\n", "text/plain")
    return core.serve_http(record, prog, net, host or "0.0.0.0", port, app, f"vllm stand-in: serving {served[0]}")


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
