"""`llama-server` stand-in. Contract (ggml-org/llama.cpp tools/server/README.md,
common/arg.cpp):
  - unknown arguments refused ("error: invalid argument: X"), a missing
    value refused; every option also reads its LLAMA_ARG_* variable;
  - --host 127.0.0.1 and --port 8080 by default (comma-separated hosts
    allowed; a `.sock` host is not emulated);
  - -m FILE must be a readable regular file starting with the GGUF magic,
    else the model fails to load and the server exits 1 (without -m or -hf
    it loads models/7B/ggml-model-f16.gguf, which is not there);
  - -hf REPO is accepted without downloading anything;
  - /health, /v1/models (the --alias, else the model path), /props.
"""

import os
import sys

from . import core

# Options taking a value (names as the README lists them).
VALUE = """
-t --threads -tb --threads-batch -C --cpu-mask -Cr --cpu-range --cpu-strict --prio --poll -Cb
--cpu-mask-batch -Crb --cpu-range-batch --cpu-strict-batch --prio-batch --poll-batch -c --ctx-size
-n --predict --n-predict -b --batch-size -ub --ubatch-size --keep -fa --flash-attn --rope-scaling
--rope-scale --rope-freq-base --rope-freq-scale --yarn-orig-ctx --yarn-ext-factor --yarn-attn-factor
--yarn-beta-slow --yarn-beta-fast -ctk --cache-type-k -ctv --cache-type-v -dt --defrag-thold --rpc
-lm --load-mode -lzm --lazy-mode --numa -dev --device -ot --override-tensor -ncmoe --n-cpu-moe
--moe-cache-mib -ncffn --n-cpu-ffn -ngl --gpu-layers --n-gpu-layers -sm --split-mode -ts
--tensor-split -mg --main-gpu -fit --fit -fitt --fit-target -fitc --fit-ctx --override-kv --lora
--lora-scaled --control-vector --control-vector-scaled -m --model -mu --model-url -dr --docker-repo
-hf -hfr --hf-repo -hff --hf-file -hft --hf-token --log-file --log-colors -lv --verbosity
--log-verbosity --spec-draft-type-k -ctkd --cache-type-k-draft --spec-draft-type-v -ctvd
--cache-type-v-draft --samplers -s --seed --sampler-seq --sampling-seq --temp --temperature --top-k
--top-p --min-p --top-nsigma --top-n-sigma --xtc-probability --xtc-threshold --typical --typical-p
--repeat-last-n --repeat-penalty --presence-penalty --frequency-penalty --dry-multiplier --dry-base
--dry-allowed-length --dry-penalty-last-n --dry-sequence-breaker --adaptive-target --adaptive-decay
--dynatemp-range --dynatemp-exp --mirostat --mirostat-lr --mirostat-ent -l --logit-bias --grammar
--grammar-file -j --json-schema -jf --json-schema-file -lcs --lookup-cache-static -lcd
--lookup-cache-dynamic --kv-unified-per-slot -ctxcp --ctx-checkpoints --swa-checkpoints -cms
--checkpoint-min-step -cram --cache-ram -r --reverse-prompt --pooling -np --parallel -mm --mmproj
-mmu --mmproj-url -mmdev --mmproj-device --image-min-tokens --image-max-tokens
--mtmd-batch-max-tokens --video-fps --video-timestamp-interval --video-ffmpeg-dir -a --alias --tags
--embd-normalize --host --port --path --cors-origins --cors-methods --cors-headers --api-prefix
--ui-config --webui-config --ui-config-file --webui-config-file --tools --tools-runtime
--mcp-servers-config --mcp-servers-json --api-key --api-key-file --ssl-key-file --ssl-cert-file
--chat-template-kwargs -to --timeout --sse-ping-interval --threads-http --cache-reuse
--slot-save-path --media-path --models-dir --models-preset --models-max --reasoning-format -rea
--reasoning --reasoning-effort --reasoning-budget --reasoning-budget-message --chat-template
--chat-template-file --slot-prompt-similarity -sps --lora-init-without-apply -md --model-draft
-ngld --gpu-layers-draft --n-gpu-layers-draft -devd --device-draft --draft-max --draft-min
--draft-p-min -cd --ctx-size-draft -otd --override-tensor-draft -hfd -hfrd --hf-repo-draft
-hffv --hf-file-v -hfv -hfrv --hf-repo-v --model-vocoder -mv --tts-use-guide-tokens
--control-vector-layer-range
""".split()

# Options without a value.
FLAGS = """
--swa-full --perf --no-perf --escape --no-escape -kvo --kv-offload -nkvo --no-kv-offload --repack
-nr --no-repack --no-host --list-devices -cmoe --cpu-moe --check-tensors --op-offload
--no-op-offload --log-disable --log-jsonl --no-log-jsonl -v --verbose --log-verbose --offline
--log-prefix --no-log-prefix --log-timestamps --no-log-timestamps --ignore-eos -bs
--backend-sampling -kvu --kv-unified -no-kvu --no-kv-unified --cache-idle-slots
--no-cache-idle-slots --context-shift --no-context-shift -sp --special --warmup --no-warmup
--spm-infill -cb --cont-batching -nocb --no-cont-batching --mmproj-auto --no-mmproj
--no-mmproj-auto --mmproj-offload --no-mmproj-offload --reuse-port --cors-credentials
--no-cors-credentials --ui-mcp-proxy --webui-mcp-proxy --no-ui-mcp-proxy --no-webui-mcp-proxy -ag
--agent -no-ag --no-agent --ui --webui --no-ui --no-webui --embedding --embeddings --rerank
--reranking --cache-prompt --no-cache-prompt --metrics --props --slots --no-slots
--models-autoload --no-models-autoload --jinja --no-jinja --reasoning-preserve
--no-reasoning-preserve --mlock --no-mmap --mmap --flash-attn-auto --no-webui-mcp --completion-bash
--version --help -h --usage -cl --cache-list -e
""".split()

CANON = {"-m": "--model", "-hf": "--hf-repo", "-hfr": "--hf-repo", "-a": "--alias", "-ngl": "--n-gpu-layers",
         "--gpu-layers": "--n-gpu-layers"}
ENV = {"--host": "LLAMA_ARG_HOST", "--port": "LLAMA_ARG_PORT", "--model": "LLAMA_ARG_MODEL",
       "--hf-repo": "LLAMA_ARG_HF_REPO", "--alias": "LLAMA_ARG_ALIAS", "--n-gpu-layers": "LLAMA_ARG_N_GPU_LAYERS"}
DEFAULT_MODEL = "models/7B/ggml-model-f16.gguf"


def main(argv, prog="llama-server"):
    record = core.Record("llama.cpp", [prog] + list(argv))
    values = {}
    i = 0
    value, flags = set(VALUE), set(FLAGS)
    while i < len(argv):
        a = argv[i]
        name, eq, val = a.partition("=") if a.startswith("--") else (a, "", "")
        if name in flags and not eq:
            if name in ("--version",):
                print("version: 0 (llmgw stand-in)")
                return 0
            if name in ("-h", "--help", "--usage"):
                print("usage: llama-server [options] (llmgw stand-in)")
                return 0
            values[name] = True
        elif name in value:
            if not eq:
                i += 1
                if i >= len(argv):
                    core.fail(record, prog, f"error: expected value for argument: {name}")
                val = argv[i]
            values[CANON.get(name, name)] = val
        else:
            core.fail(record, prog, f"error: invalid argument: {a}")
        i += 1
    for opt, var in ENV.items():
        if opt not in values and os.environ.get(var):
            values[opt] = os.environ[var]
    host = values.get("--host", "127.0.0.1")
    try:
        port = int(values.get("--port", "8080"))
    except ValueError:
        core.fail(record, prog, f"error: invalid value for --port: {values.get('--port')}")
    model = values.get("--model")
    repo = values.get("--hf-repo")
    if model is None and repo is None:
        model = DEFAULT_MODEL
    alias = values.get("--alias")
    names = alias.split(",") if alias else [model if model is not None else repo]
    record.set(model=model, hf_repo=repo, served_model_name=names, n_gpu_layers=values.get("--n-gpu-layers"))
    if host.endswith(".sock"):
        core.fail(record, prog, "stand-in: UNIX socket hosts are not emulated")

    def load():
        if model is not None:
            check_gguf(model)
        return core.Net()

    net = core.run_refusing(record, prog, load)
    core.pdeathsig()
    app = core.App(record, lambda: names, "llamacpp")
    app.routes[("GET", "/health")] = lambda _: (200, {"status": "ok"})
    app.routes[("GET", "/props")] = lambda _: (200, {"model_path": model or repo, "total_slots": 1})
    app.routes[("POST", "/completion")] = lambda body: (200, {"content": "standin", "stop": True})
    hosts = [h for h in host.split(",") if h]
    if len(hosts) > 1:
        # Several listen addresses: serve each (a bind failure refuses).
        import threading

        for extra in hosts[1:]:
            socks = core.run_refusing(record, prog, lambda h=extra: net.listen(h, port))
            for s in socks:
                threading.Thread(target=core.Server(s, app).serve_forever, daemon=True).start()
    return core.serve_http(record, prog, net, hosts[0], port, app, f"llama-server stand-in: serving {names[0]}")


def check_gguf(path):
    """llama_model_load as llama.cpp does it: open, read the magic."""
    where = f"(node {core.node_name()})"
    try:
        with open(path, "rb") as f:
            magic = f.read(4)
    except IsADirectoryError:
        raise core.Refused(
            f"llama_model_load: error loading model: failed to open GGUF file '{path}' (Is a directory) {where}\n"
            "main: exiting due to model loading error"
        )
    except OSError as e:
        raise core.Refused(
            f"gguf_init_from_file: failed to open GGUF file '{path}' ({e.strerror}) {where}\n"
            f"llama_model_load: error loading model: llama_model_loader: failed to load model from {path}\n"
            "main: exiting due to model loading error"
        )
    if magic != b"GGUF":
        raise core.Refused(
            f"gguf_init_from_file_impl: invalid magic characters: {magic!r}, expected 'GGUF' ({path}) {where}\n"
            "main: exiting due to model loading error"
        )
