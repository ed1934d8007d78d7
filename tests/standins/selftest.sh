#!/usr/bin/env bash
# Self-test of the stand-in engines: each refusal happens, each server
# serves where it should and not elsewhere. No Slurm needed: "nodes" are
# STANDIN_NODE values mapped to 127.0.0.11-13 by a hosts file of its own.
#
#   bash tests/standins/selftest.sh        # prints one line per check
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
export PATH="$here/bin:$PATH" PYTHONPATH="$here/python"
export STANDIN_HOSTS="$tmp/hosts" STANDIN_STATE="$tmp/state" STANDIN_LOG="$tmp/log" STANDIN_TIMEOUT=30
unset RAY_ADDRESS CUDA_VISIBLE_DEVICES NVIDIA_VISIBLE_DEVICES OLLAMA_HOST SLURMD_NODENAME
printf '127.0.0.11 n1\n127.0.0.12 n2\n127.0.0.13 n3\n' >"$tmp/hosts"

pids=()
cleanup() {
    local p
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
    wait 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT

passed=0
failed=0
ok() {
    echo "ok   $1"
    passed=$((passed + 1))
}
bad() {
    echo "FAIL $1"
    [ -n "${2:-}" ] && sed 's/^/     | /' <<<"$2" | tail -n 8
    failed=$((failed + 1))
}

# Free ports, one per name; B: the first of 16 free consecutive ports.
read -r P1 P2 P3 P4 P5 P6 P7 P8 P9 P10 P11 P12 P13 P14 P15 B < <(python3 -c '
import random, socket
s = [socket.socket() for _ in range(15)]
for x in s: x.bind(("127.0.0.1", 0))
ports = [x.getsockname()[1] for x in s]
while True:
    base = random.randrange(20000, 30000)
    if any(base <= p < base + 16 for p in ports):
        continue
    try:
        block = []
        for p in range(base, base + 16):
            b = socket.socket(); block.append(b); b.bind(("0.0.0.0", p))
        break
    except OSError:
        pass
    finally:
        for b in block: b.close()
print(*ports, base)')

# start NAME NODE CMD... : runs CMD on "node" NODE in the background.
start() {
    local name=$1 node=$2
    shift 2
    STANDIN_NODE=$node "$@" >"$tmp/$name.out" 2>&1 &
    pids+=($!)
    eval "pid_$name=$!"
}

# http URL: the status code (000 when nothing answers).
http() { curl -s -m 2 -o /dev/null -w '%{http_code}' "$1"; }

# wait_http URL CODE SECONDS
wait_http() {
    local i
    for ((i = 0; i < $3 * 10; i++)); do
        [ "$(http "$1")" = "$2" ] && return 0
        sleep 0.1
    done
    return 1
}

# refuses NAME CODE PATTERN NODE CMD... : CMD exits CODE, saying PATTERN.
refuses() {
    local name=$1 code=$2 pattern=$3 node=$4 out rc
    shift 4
    out=$(STANDIN_NODE=$node timeout 60 "$@" 2>&1)
    rc=$?
    if [ "$rc" = "$code" ] && grep -q -- "$pattern" <<<"$out"; then
        ok "$name (exit $rc)"
    else
        bad "$name: exit $rc, wanted $code and /$pattern/" "$out"
    fi
}

# --- vLLM -----------------------------------------------------------------
refuses "vllm: an unknown flag" 2 "unrecognized arguments: --frobnicate" n1 vllm serve m --frobnicate
refuses "vllm: a flag vLLM 0.29.0 no longer has" 2 "unrecognized arguments: --swap-space" n1 vllm serve m --swap-space 4
refuses "vllm: an empty --node-rank (a rank variable nobody set)" 2 "argument --node-rank/-r: invalid int value: ''" n2 \
    vllm serve m -tp 4 -pp 2 --nnodes 2 --node-rank "" --master-addr n1 --headless
refuses "vllm: a --node-rank that is no integer" 2 "argument --node-rank/-r: invalid int value: 'one'" n2 \
    vllm serve m -tp 4 -pp 2 --nnodes 2 --node-rank one --master-addr n1 --headless
refuses "vllm: TP 4 on 2 visible GPUs" 1 "World size (4) is larger than the number of available GPUs (2)" n1 \
    env CUDA_VISIBLE_DEVICES=0,1 vllm serve m --tensor-parallel-size 4
refuses "vllm: PP 2 without --distributed-executor-backend ray" 1 "set '--distributed-executor-backend ray'" n1 \
    env CUDA_VISIBLE_DEVICES=0,1,2,3 vllm serve m --tensor-parallel-size 4 --pipeline-parallel-size 2
refuses "vllm: a model path that is not there" 1 "Repo id must be in the form" n1 vllm serve /models/missing
refuses "vllm: --host another node's address" 1 "Cannot assign requested address" n1 vllm serve m --host n2 --port "$P1"

# --- Ray: a worker before its head, then vLLM PP=2 ------------------------------
refuses "ray: a worker before its head fails at once" 1 "Unable to connect to GCS at n1:$P2" n2 \
    env CUDA_VISIBLE_DEVICES=0,1,2,3 ray start --address="n1:$P2" --block
# The worker retries, as a serving script must; the head comes 2 s later
# (STANDIN_LEADER_DELAY).
start worker n2 env CUDA_VISIBLE_DEVICES=0,1,2,3 bash -c \
    "until ray start --address=n1:$P2 --block; do sleep 1; done"
(
    STANDIN_NODE=n1 STANDIN_LEADER_DELAY=2 CUDA_VISIBLE_DEVICES=0,1,2,3 ray start --head --port="$P2" >"$tmp/head.out" 2>&1
    sleep 600
) &
pids+=($!)
alive=0
for _ in $(seq 100); do
    alive=$(STANDIN_NODE=n1 RAY_ADDRESS="n1:$P2" python3 -c 'import ray; ray.init(); print(sum(n["Alive"] for n in ray.nodes()))' 2>/dev/null || echo 0)
    [ "$alive" = 2 ] && break
    sleep 0.2
done
if [ "$alive" = 2 ]; then ok "ray: the retrying worker joined once the head was up (2 alive nodes)"; else bad "ray: 2 alive nodes, saw $alive" "$(cat "$tmp/worker.out" "$tmp/head.out" 2>/dev/null)"; fi

refuses "vllm: PP 2 x TP 8 on a 2-node Ray cluster of 8 GPUs" 1 "exceeds the total number of available GPUs in the placement group" n1 \
    env CUDA_VISIBLE_DEVICES=0,1,2,3 RAY_ADDRESS="n1:$P2" vllm serve m -tp 8 -pp 2 --distributed-executor-backend ray
refuses "vllm: a Ray driver on a node outside the cluster" 1 "Ray expects this IP address" n3 \
    env CUDA_VISIBLE_DEVICES=0,1,2,3 RAY_ADDRESS="n1:$P2" vllm serve m -tp 4 -pp 2 --distributed-executor-backend ray
start vllm n1 env CUDA_VISIBLE_DEVICES=0,1,2,3 RAY_ADDRESS="n1:$P2" vllm serve m -tp 4 -pp 2 \
    --distributed-executor-backend ray --port "$P3" --served-model-name big
if wait_http "http://127.0.0.11:$P3/health" 200 10; then ok "vllm: PP 2 over 2 Ray nodes serves /health on n1's address"; else bad "vllm over Ray did not serve" "$(cat "$tmp/vllm.out")"; fi
models=$(curl -s "http://127.0.0.11:$P3/v1/models")
if grep -q '"id": "big"' <<<"$models"; then ok "vllm: /v1/models names --served-model-name"; else bad "vllm /v1/models: $models"; fi
refuses "vllm: a second engine on the same Ray cluster finds its GPUs taken" 1 "Total number of devices: 0" n1 \
    env CUDA_VISIBLE_DEVICES=0,1,2,3 RAY_ADDRESS="n1:$P2" vllm serve m -tp 4 --distributed-executor-backend ray --port "$P4"
# A second head on n1: now a script without RAY_ADDRESS cannot tell them apart.
(
    STANDIN_NODE=n1 CUDA_VISIBLE_DEVICES=4,5,6,7 ray start --head --port="$P5" >"$tmp/head2.out" 2>&1
    sleep 600
) &
pids+=($!)
sleep 1.5
refuses "ray: ray.init() without RAY_ADDRESS and two heads on the node" 1 "Found multiple active Ray instances" n1 \
    python3 -c 'import ray; ray.init()'
kill "$pid_worker" 2>/dev/null
for _ in $(seq 50); do kill -0 "$pid_vllm" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$pid_vllm" 2>/dev/null; then bad "vllm kept serving after its Ray worker died"; else ok "vllm: exits when a Ray node it uses dies"; fi

# The head daemon lives as long as the process that ran `ray start`.
bash -c "STANDIN_NODE=n3 ray start --head --port=$P6 >/dev/null 2>&1; sleep 1"
sleep 1.5
refuses "ray: a head is gone once the shell that started it exits" 1 "Unable to connect to GCS" n2 ray start --address="n3:$P6"
refuses "ray: --ray-client-server-port without grpcio (ray[client])" 1 "Ray Client requires pip package" n3 \
    ray start --head --port="$P6" --ray-client-server-port="$P10"
out=$(STANDIN_NODE=n3 STANDIN_RAY_CLIENT=1 bash -c "ray start --head --port=$P6 --ray-client-server-port=$P10 && ray status --address=n3:$P6" 2>&1)
if grep -q "Active:" <<<"$out"; then ok "ray: --ray-client-server-port with STANDIN_RAY_CLIENT=1 (grpcio installed) starts the head"; else bad "ray client port with grpcio" "$out"; fi

# --- vLLM on several nodes without Ray (--nnodes, vLLM >= 0.11.1) ----------------
refuses "vllm mp: --headless on node rank 0" 1 "--headless on --node-rank 0" n1 \
    env CUDA_VISIBLE_DEVICES=0,1,2,3 vllm serve m -tp 4 -pp 2 --nnodes 2 --node-rank 0 --master-addr n1 --headless
refuses "vllm mp: node rank 1 without --headless" 1 "collective_rpc should not be called on follower node" n2 \
    env CUDA_VISIBLE_DEVICES=0,1,2,3 vllm serve m -tp 4 -pp 2 --nnodes 2 --node-rank 1 --master-addr n1
refuses "vllm mp: --node-rank 2 of --nnodes 2" 1 "node_rank=2 must be less than nnodes=2" n2 \
    env CUDA_VISIBLE_DEVICES=0,1,2,3 vllm serve m -tp 4 -pp 2 -n 2 -r 2 --master-addr n1 --headless
refuses "vllm mp: TP x PP not a multiple of --nnodes" 1 "world_size=3 must be divisible by nnodes=2" n2 \
    env CUDA_VISIBLE_DEVICES=0,1,2,3 vllm serve m -tp 3 --nnodes 2 --node-rank 1 --master-addr n1 --headless
refuses "vllm mp: 4 workers a node on 2 visible GPUs" 1 "local_world_size (4) must be less than or equal to the number of visible devices (2)" n2 \
    env CUDA_VISIBLE_DEVICES=0,1 vllm serve m -tp 4 -pp 2 --nnodes 2 --node-rank 1 --master-addr n1 --headless
refuses "vllm mp: --nnodes 2 with the Ray executor" 1 "nnodes > 1 can only be set when distributed executor backend is mp" n1 \
    env CUDA_VISIBLE_DEVICES=0,1,2,3 vllm serve m -tp 4 -pp 2 --nnodes 2 --node-rank 0 --master-addr n1 --distributed-executor-backend ray
refuses "vllm mp: a lone headless rank gives up at STANDIN_TIMEOUT" 1 "timed out after 2s" n2 \
    env STANDIN_TIMEOUT=2 CUDA_VISIBLE_DEVICES=0,1,2,3 vllm serve m -tp 4 -pp 2 --nnodes 2 --node-rank 1 --master-addr n1 --master-port "$P11" --headless
refuses "vllm mp: node rank 0 whose --master-addr is another node" 1 "does not reach node rank 0's own store" n1 \
    env STANDIN_TIMEOUT=2 CUDA_VISIBLE_DEVICES=0,1,2,3 vllm serve m -tp 4 -pp 2 --nnodes 2 --node-rank 0 --master-addr n2 --master-port "$P11" --port "$P12"
# Node rank 0 binds its API port before anything else: a port in use fails
# it at once. Alone, it refuses connections until every rank is in, and with
# nobody coming it gives up at STANDIN_TIMEOUT.
start busy n3 vllm serve m --port "$P12"
wait_http "http://127.0.0.13:$P12/health" 200 10
refuses "vllm mp: node rank 0 on an API port in use fails at once" 1 "Address already in use" n3 \
    env CUDA_VISIBLE_DEVICES=0,1,2,3 vllm serve m -tp 4 -pp 2 --nnodes 2 --node-rank 0 --master-addr n3 --master-port "$P11" --port "$P12"
kill "$pid_busy"
wait "$pid_busy" 2>/dev/null
start mplone n3 env STANDIN_TIMEOUT=4 CUDA_VISIBLE_DEVICES=0,1,2,3 vllm serve m -tp 4 -pp 2 --nnodes 2 --node-rank 0 \
    --master-addr n3 --master-port "$P11" --port "$P12"
sleep 1.5
if kill -0 "$pid_mplone" 2>/dev/null && [ "$(http "http://127.0.0.13:$P12/health")" = 000 ]; then
    ok "vllm mp: node rank 0 serves nothing before the other ranks are in"
else bad "vllm mp: rank 0 alone" "$(cat "$tmp/mplone.out")"; fi
for _ in $(seq 100); do kill -0 "$pid_mplone" 2>/dev/null || break; sleep 0.1; done
kill "$pid_mplone" 2>/dev/null && rc=running || { wait "$pid_mplone"; rc=$?; }
if [ "$rc" = 1 ] && grep -q "Timed out after 4 seconds (STANDIN_TIMEOUT) waiting for clients. 1/2" "$tmp/mplone.out"; then
    ok "vllm mp: a lone node rank 0 gives up at STANDIN_TIMEOUT (exit 1)"
else bad "vllm mp: a lone rank 0: exit $rc" "$(cat "$tmp/mplone.out")"; fi
# The worker first (short flags), its leader 2 s late.
start mpw n2 env CUDA_VISIBLE_DEVICES=0,1,2,3 vllm serve m -tp 4 -pp 2 -n 2 -r 1 --master-addr n1 --master-port "$P11" --headless
start mpl n1 env CUDA_VISIBLE_DEVICES=0,1,2,3 STANDIN_LEADER_DELAY=2 vllm serve m -tp 4 -pp 2 -n 2 -r 0 --master-addr n1 \
    --master-port "$P11" --port "$P12" --served-model-name big
if wait_http "http://127.0.0.11:$P12/v1/models" 200 15 && grep -q '"id": "big"' <<<"$(curl -s "http://127.0.0.11:$P12/v1/models")" &&
    [ "$(http "http://127.0.0.12:$P12/health")" = 000 ] && kill -0 "$pid_mpw" 2>/dev/null; then
    ok "vllm mp: a worker started before its leader joins; node rank 0 serves, the headless rank serves no HTTP"
else bad "vllm mp: 2 nodes" "$(cat "$tmp/mpw.out" "$tmp/mpl.out")"; fi
kill "$pid_mpl"
for _ in $(seq 50); do kill -0 "$pid_mpw" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$pid_mpw" 2>/dev/null; then bad "vllm mp: the headless rank outlived node rank 0"; else ok "vllm mp: the headless rank exits when node rank 0 goes"; fi
# The leader first; then the worker dies: /health still 200 (vLLM notices
# at its next step), the next completion fails and node rank 0 exits.
start mpl2 n1 env CUDA_VISIBLE_DEVICES=0,1,2,3 vllm serve m -tp 4 -pp 2 --nnodes 2 --node-rank 0 --master-addr n1 \
    --master-port "$P13" --port "$P14"
start mpw2 n2 env CUDA_VISIBLE_DEVICES=0,1,2,3 vllm serve m -tp 4 -pp 2 --nnodes 2 --node-rank 1 --master-addr n1 \
    --master-port "$P13" --headless
if wait_http "http://127.0.0.11:$P14/health" 200 15; then ok "vllm mp: the leader first, then its worker: serving"; else bad "vllm mp: leader first" "$(cat "$tmp/mpl2.out" "$tmp/mpw2.out")"; fi
kill "$pid_mpw2"
sleep 0.5
health=$(http "http://127.0.0.11:$P14/health")
code=$(curl -s -m 5 -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' -d '{"model": "m", "prompt": "x"}' "http://127.0.0.11:$P14/v1/completions")
for _ in $(seq 30); do kill -0 "$pid_mpl2" 2>/dev/null || break; sleep 0.1; done
if [ "$health" = 200 ] && [ "$code" = 500 ] && ! kill -0 "$pid_mpl2" 2>/dev/null; then
    ok "vllm mp: a worker gone, /health still 200, the next completion fails (500) and node rank 0 exits"
else bad "vllm mp: worker gone: /health $health, completion $code" "$(cat "$tmp/mpl2.out")"; fi

# --- SGLang ----------------------------------------------------------------------
refuses "sglang: an empty --node-rank" 2 "argument --node-rank: invalid int value: ''" n2 \
    python3 -m sglang.launch_server --model-path m --tp 8 --nnodes 2 --node-rank "" --dist-init-addr n1:"$P7"
refuses "sglang: a --node-rank that is no integer" 2 "argument --node-rank: invalid int value: 'one'" n2 \
    python3 -m sglang.launch_server --model-path m --tp 8 --nnodes 2 --node-rank one --dist-init-addr n1:"$P7"
refuses "sglang: a flag SGLang 0.5.20 does not have" 2 "unrecognized arguments: --enable-nan-detection" n2 \
    python3 -m sglang.launch_server --model-path m --enable-nan-detection
refuses "sglang: --tp not divisible by --nnodes" 1 "tp_size must be divisible by number of nodes" n2 \
    python3 -m sglang.launch_server --model-path m --tp 7 --nnodes 2 --node-rank 1 --dist-init-addr n1:"$P7"
refuses "sglang: --model-path is required" 2 "the following arguments are required: --model-path" n2 \
    python3 -m sglang.launch_server --tp 1
refuses "sglang: 4 schedulers on 2 visible GPUs" 1 "invalid device ordinal" n2 \
    env CUDA_VISIBLE_DEVICES=0,1 python3 -m sglang.launch_server --model-path m --tp 4
start rank1 n2 env CUDA_VISIBLE_DEVICES=0,1,2,3 python3 -m sglang.launch_server --model-path m --tp 8 --nnodes 2 \
    --node-rank 1 --dist-init-addr "n1:$P7" --host 0.0.0.0 --port "$P8"
sleep 2
if [ "$(http "http://127.0.0.12:$P8/health")" = 000 ] && kill -0 "$pid_rank1" 2>/dev/null; then
    ok "sglang: rank 1 waits for rank 0, serving nothing"
else bad "sglang: rank 1 before rank 0" "$(cat "$tmp/rank1.out")"; fi
start rank0 n1 env CUDA_VISIBLE_DEVICES=0,1,2,3 python3 -m sglang.launch_server --model-path m --tp 8 --nnodes 2 \
    --node-rank 0 --dist-init-addr "n1:$P7" --host 0.0.0.0 --port "$P8"
if wait_http "http://127.0.0.11:$P8/v1/models" 200 10 && wait_http "http://127.0.0.12:$P8/health" 200 5 &&
    [ "$(http "http://127.0.0.12:$P8/v1/models")" = 404 ]; then
    ok "sglang: once rank 0 is up, rank 0 serves the model, rank 1 only /health"
else bad "sglang 2 nodes" "$(cat "$tmp/rank0.out" "$tmp/rank1.out")"; fi
kill "$pid_rank0"
for _ in $(seq 50); do kill -0 "$pid_rank1" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$pid_rank1" 2>/dev/null; then bad "sglang rank 1 outlived rank 0"; else ok "sglang: rank 1 exits when rank 0 dies"; fi
refuses "sglang: a lone rank 1 gives up at STANDIN_TIMEOUT" 1 "timed out after 2 s" n2 \
    env STANDIN_TIMEOUT=2 python3 -m sglang.launch_server --model-path m --tp 2 --nnodes 2 --node-rank 1 --dist-init-addr "n1:$P9"
start sgdefault n1 python3 -m sglang.launch_server --model-path m --port "$P9"
sleep 1.5
if [ "$(http "http://127.0.0.11:$P9/health")" = 000 ]; then ok "sglang: the default --host 127.0.0.1 is not reachable at the node's address"; else bad "sglang default host reachable"; fi
kill "$pid_sgdefault"

# Leaders on one node (n3): the TCPStore takes D on all interfaces; with
# --enable-dp-attention the ZMQ sockets take D+1..D+6 on the --dist-init-addr
# host; without it they are ipc:// sockets. B..B+15 are free.
sgl=(python3 -m sglang.launch_server --model-path m --tp 2 --nnodes 2 --node-rank 0)
start sgA n3 "${sgl[@]}" --dist-init-addr "n3:$((B + 4))" --port "$P13"
sleep 1
if kill -0 "$pid_sgA" 2>/dev/null; then ok "sglang: leader A (no DP attention) waits at D=B+4"; else bad "sglang leader A" "$(cat "$tmp/sgA.out")"; fi
refuses "sglang: a DP-attention leader at B+1, whose D+1..D+6 cover A's D" 1 "ZMQError: Address already in use (addr='tcp://n3:$((B + 4))')" n3 \
    "${sgl[@]}" --dist-init-addr "n3:$((B + 1))" --enable-dp-attention --dp 2 --port "$P14"
start sgB n3 "${sgl[@]}" --dist-init-addr "n3:$((B + 7))" --port "$P14"
sleep 1
if kill -0 "$pid_sgB" 2>/dev/null; then ok "sglang: without DP attention, a leader at A's D+3 starts beside A (A holds only D)"; else bad "sglang leader B at D+3" "$(cat "$tmp/sgB.out")"; fi
kill "$pid_sgA" "$pid_sgB"
start sgC n3 "${sgl[@]}" --dist-init-addr "n3:$((B + 8))" --enable-dp-attention --dp 2 --port "$P13"
sleep 1
if kill -0 "$pid_sgC" 2>/dev/null; then ok "sglang: a DP-attention leader C binds D..D+6 (D=B+8)"; else bad "sglang leader C" "$(cat "$tmp/sgC.out")"; fi
refuses "sglang: a leader whose D is C's D+2" 1 "port: $((B + 10)), useIpv6: false, code: -98, name: EADDRINUSE" n3 \
    "${sgl[@]}" --dist-init-addr "n3:$((B + 10))" --port "$P14"
kill "$pid_sgC"

# --- llama.cpp ---------------------------------------------------------------
printf 'GGUF\3\0\0\0' >"$tmp/model.gguf"
printf 'not a model' >"$tmp/model.bin"
refuses "llama-server: -m FILE that is not there" 1 "failed to load model" n1 llama-server -m "$tmp/none.gguf"
refuses "llama-server: -m a directory" 1 "Is a directory" n1 llama-server -m "$tmp"
refuses "llama-server: -m a file without the GGUF magic" 1 "invalid magic characters" n1 llama-server -m "$tmp/model.bin"
refuses "llama-server: an unknown argument" 1 "invalid argument: --tensor-parallel-size" n1 \
    llama-server -m "$tmp/model.gguf" --tensor-parallel-size 2
start llamadefault n1 llama-server -m "$tmp/model.gguf" --port "$P1"
start llamaall n2 llama-server -hf org/model-GGUF --host 0.0.0.0 --port "$P1" -ngl 999
if wait_http "http://127.0.0.12:$P1/health" 200 10; then ok "llama-server: --host 0.0.0.0 serves at the node's address (-hf, no download)"; else bad "llama -hf" "$(cat "$tmp/llamaall.out")"; fi
if [ "$(http "http://127.0.0.11:$P1/health")" = 000 ] && kill -0 "$pid_llamadefault" 2>/dev/null; then
    ok "llama-server: the default 127.0.0.1 is not reachable at the node's address"
else bad "llama-server default host" "$(cat "$tmp/llamadefault.out")"; fi
inside=$(STANDIN_NODE=n1 python3 -c "
from standin import core
import urllib.request
print(urllib.request.urlopen('http://%s:$P1/health' % core.Net().connect_addr('localhost')).status)" 2>&1)
if [ "$inside" = 200 ]; then ok "llama-server: ... but is from the node itself (localhost)"; else bad "llama-server from localhost: $inside"; fi

# --- TGI -----------------------------------------------------------------------
refuses "tgi: an unknown argument" 2 "unexpected argument '--tp' found" n1 text-generation-launcher --model-id m --tp 2
refuses "tgi: 4 shards on 2 visible GPUs" 1 "ShardCannotStart" n1 \
    env CUDA_VISIBLE_DEVICES=0,1 text-generation-launcher --model-id m --num-shard 4
start tgi1 n3 env CUDA_VISIBLE_DEVICES=0,1 text-generation-launcher --model-id m --num-shard 2 --port "$P2"
wait_http "http://127.0.0.13:$P2/health" 200 10 && ok "tgi: serves on 0.0.0.0:PORT by default host" || bad "tgi" "$(cat "$tmp/tgi1.out")"
refuses "tgi: a second sharded launcher on the node, same master port" 1 "EADDRINUSE" n3 \
    env CUDA_VISIBLE_DEVICES=2,3 text-generation-launcher --model-id m2 --num-shard 2 --port "$P3"

# SGLang's /health generates a token and looks at 1 s steps: never under a
# second. A probe that gives it one second fails; five answer.
start sgslow n3 python3 -m sglang.launch_server --model-path m --host 0.0.0.0 --port "$P10"
if wait_http "http://127.0.0.13:$P10/v1/models" 200 10 &&
    [ "$(curl -s -m 1 -o /dev/null -w '%{http_code}' "http://127.0.0.13:$P10/health")" = 000 ] &&
    [ "$(curl -s -m 5 -o /dev/null -w '%{http_code}' "http://127.0.0.13:$P10/health")" = 200 ]; then
    ok "sglang: /health takes over a second (a 1 s probe fails, a 5 s one answers)"
else bad "sglang slow /health" "$(cat "$tmp/sgslow.out")"; fi
kill "$pid_sgslow"

# --- TRT-LLM -------------------------------------------------------------------
refuses "trtllm-serve: MODEL is required" 2 "Missing argument 'MODEL'" n1 trtllm-serve --tp_size 2
refuses "trtllm-serve: an unknown option" 2 "No such option: --tensor-parallel-size" n1 trtllm-serve m --tensor-parallel-size 2
refuses "trtllm-serve: TP 4 on 2 GPUs" 1 "exceeds the 2 GPUs" n1 env CUDA_VISIBLE_DEVICES=0,1 trtllm-serve m --tp_size 4
# trtllm-llmapi-launch: rank 0 runs the server, the other ranks wait as its
# MPI workers; a rank that is no number fails the launcher's own test.
refuses "trtllm-llmapi-launch: a rank that is no number" 2 "integer expression expected" n1 \
    env SLURM_PROCID=x trtllm-llmapi-launch trtllm-serve m
start trtw n2 env SLURM_PROCID=1 trtllm-llmapi-launch trtllm-serve m --host 0.0.0.0 --port "$P6"
start trt0 n1 env SLURM_PROCID=0 CUDA_VISIBLE_DEVICES=0,1 trtllm-llmapi-launch trtllm-serve m --host 0.0.0.0 --port "$P6" --tp_size 2
if wait_http "http://127.0.0.11:$P6/health" 200 10 && [ "$(http "http://127.0.0.12:$P6/health")" = 000 ] &&
    kill -0 "$pid_trtw" 2>/dev/null; then
    ok "trtllm-llmapi-launch: rank 0 serves, rank 1 waits and serves nothing"
else bad "trtllm-llmapi-launch" "$(cat "$tmp/trt0.out" "$tmp/trtw.out")"; fi
kill "$pid_trt0" "$pid_trtw"
start trt n1 env CUDA_VISIBLE_DEVICES=0 trtllm-serve m --port "$P4"
sleep 1.5
if [ "$(http "http://127.0.0.11:$P4/health")" = 000 ] && kill -0 "$pid_trt" 2>/dev/null; then
    ok "trtllm-serve: the default --host localhost is not reachable at the node's address"
else bad "trtllm default host" "$(cat "$tmp/trt.out")"; fi

# --- Ollama --------------------------------------------------------------------
refuses "ollama: pull without a server" 1 "could not connect to ollama server" n2 env OLLAMA_HOST=0.0.0.0:"$P5" ollama pull llama3
start ollama n2 env OLLAMA_HOST=0.0.0.0:"$P5" ollama serve
if wait_http "http://127.0.0.12:$P5/" 200 10 && [ "$(http "http://127.0.0.12:$P5/health")" = 404 ]; then
    ok "ollama: / answers, /health is 404 as in real Ollama"
else bad "ollama /, /health" "$(cat "$tmp/ollama.out")"; fi
if STANDIN_NODE=n2 OLLAMA_HOST=0.0.0.0:"$P5" ollama pull llama3 >/dev/null 2>&1 &&
    grep -q 'llama3:latest' <<<"$(curl -s "http://127.0.0.12:$P5/v1/models")"; then
    ok "ollama: pull through OLLAMA_HOST=0.0.0.0:PORT, then /v1/models lists it"
else bad "ollama pull"; fi

# A pull takes STANDIN_PULL_SECONDS: until it has ended the model is not listed
# and `ollama show` fails.
start ollama2 n3 env OLLAMA_HOST=0.0.0.0:"$P15" STANDIN_PULL_SECONDS=3 ollama serve
wait_http "http://127.0.0.13:$P15/" 200 10
(STANDIN_NODE=n3 OLLAMA_HOST=n3:"$P15" ollama pull qwen3 >"$tmp/pull.out" 2>&1) &
pull=$!
sleep 0.7
tags=$(curl -s "http://127.0.0.13:$P15/api/tags")
list=$(STANDIN_NODE=n3 OLLAMA_HOST=n3:"$P15" ollama list 2>&1)
if [ "$tags" = '{"models": []}' ] && ! grep -q qwen3 <<<"$list"; then
    ok "ollama: while the pull runs, /api/tags and \`ollama list\` show no model"
else bad "ollama during pull: tags $tags" "$list"; fi
refuses "ollama: \`ollama show\` before the pull has ended" 1 "Error: model 'qwen3:latest' not found" n3 \
    env OLLAMA_HOST=n3:"$P15" ollama show qwen3
wait "$pull"
if grep -q qwen3:latest <<<"$(curl -s "http://127.0.0.13:$P15/api/tags")" &&
    STANDIN_NODE=n3 OLLAMA_HOST=n3:"$P15" ollama show qwen3 >/dev/null 2>&1 &&
    grep -q qwen3:latest <<<"$(STANDIN_NODE=n3 OLLAMA_HOST=n3:"$P15" ollama list)"; then
    ok "ollama: once the pull has ended, /api/tags, \`ollama list\` and \`ollama show\` have the model"
else bad "ollama after pull" "$(cat "$tmp/pull.out")"; fi

# --- the records ---------------------------------------------------------------
if python3 - "$STANDIN_LOG" <<'EOF'; then ok "STANDIN_LOG: one JSON line per start, serving and refused"; else bad "STANDIN_LOG records"; fi
import json, os, sys
d = sys.argv[1]
events = {}
for name in os.listdir(d):
    for line in open(os.path.join(d, name)):
        r = json.loads(line)
        events.setdefault(r["engine"], set()).add(r["event"])
assert {"serving", "refused"} <= events["vllm"], events
assert "serving" in events["sglang"] and "refused" in events["llama.cpp"], events
EOF

echo "selftest: $passed passed, $failed failed"
[ "$failed" = 0 ]
