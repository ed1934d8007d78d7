"""`text-generation-launcher` stand-in. Contract
(huggingface/text-generation-inference launcher/src/main.rs, router/src/server.rs):
  - clap: unknown arguments refused ("error: unexpected argument"), every
    option also read from its env var (MODEL_ID, HOSTNAME, PORT,
    NUM_SHARD, MASTER_PORT, ...); --model-id default bigscience/bloom-560m,
    --hostname 0.0.0.0, --port 3000;
  - shards: --num-shard, else the CUDA_VISIBLE_DEVICES /
    NVIDIA_VISIBLE_DEVICES count, else 1; more shards than visible GPUs
    fail (a shard cannot start on a missing device);
  - with more than one shard, shard 0 is torch's TCPStore server on
    --master-addr/--master-port (localhost:29500, all interfaces): a second
    sharded launcher on the same node with the same master port fails;
  - a model id given as a path must exist;
  - /health, /info, /v1/models (the model id), /generate.
"""

import sys

from . import cli, core

PROG = "text-generation-launcher"

OPTIONS = {
    "model-id": ("str", "bigscience/bloom-560m", None),
    "revision": ("str", None, None),
    "validation-workers": ("int", 2, None),
    "sharded": ("str", None, None),
    "num-shard": ("int", None, None),
    "quantize": ("str", None, None),
    "speculate": ("int", None, None),
    "dtype": ("str", None, None),
    "kv-cache-dtype": ("str", None, None),
    "trust-remote-code": ("flag", False, None),
    "max-concurrent-requests": ("int", 128, None),
    "max-best-of": ("int", 2, None),
    "max-stop-sequences": ("int", 4, None),
    "max-top-n-tokens": ("int", 5, None),
    "max-input-tokens": ("int", None, None),
    "max-input-length": ("int", None, None),
    "max-total-tokens": ("int", None, None),
    "waiting-served-ratio": ("float", 0.3, None),
    "max-batch-prefill-tokens": ("int", None, None),
    "max-batch-total-tokens": ("int", None, None),
    "max-waiting-tokens": ("int", 20, None),
    "max-batch-size": ("int", None, None),
    "cuda-graphs": ("str", None, None),
    "hostname": ("str", "0.0.0.0", None),
    "port": ("int", 3000, "p"),
    "prometheus-port": ("int", 9000, None),
    "shard-uds-path": ("str", "/tmp/text-generation-server", None),
    "master-addr": ("str", "localhost", None),
    "master-port": ("int", 29500, None),
    "huggingface-hub-cache": ("str", None, None),
    "weights-cache-override": ("str", None, None),
    "disable-custom-kernels": ("flag", False, None),
    "cuda-memory-fraction": ("float", 1.0, None),
    "rope-scaling": ("str", None, None),
    "rope-factor": ("float", None, None),
    "json-output": ("flag", False, None),
    "otlp-endpoint": ("str", None, None),
    "otlp-service-name": ("str", "text-generation-inference.router", None),
    "cors-allow-origin": ("str", None, None),
    "api-key": ("str", None, None),
    "watermark-gamma": ("float", None, None),
    "watermark-delta": ("float", None, None),
    "ngrok": ("flag", False, None),
    "ngrok-authtoken": ("str", None, None),
    "ngrok-edge": ("str", None, None),
    "tokenizer-config-path": ("str", None, None),
    "disable-grammar-support": ("flag", False, None),
    "env": ("flag", False, "e"),
    "max-client-batch-size": ("int", 4, None),
    "lora-adapters": ("str", None, None),
    "usage-stats": ("str", "on", None),
    "payload-limit": ("int", 2000000, None),
    "enable-prefill-logprobs": ("flag", False, None),
    "graceful-termination-timeout": ("int", 90, None),
}


def main(argv):
    record = core.Record("tgi", [PROG] + list(argv))
    if argv and argv[0] in ("-h", "--help", "-V", "--version"):
        print("text-generation-launcher 3.3.6 (llmgw stand-in)")
        return 0
    try:
        o = cli.clap_parse(argv, OPTIONS, PROG)
    except cli.UsageError as e:
        core.fail(record, PROG, f"error: {e}", 2)
    model = o["model_id"]
    record.set(model=model, served_model_name=[model], num_shard=o["num_shard"], master_port=o["master_port"])

    def check():
        core.check_model_path(model, f"Error: DownloadError (the model path {model} does not exist on node {core.node_name()})")
        gpus = core.visible_gpus()
        shards = o["num_shard"]
        sharded = (o["sharded"] or "").lower()
        if shards is None and sharded == "true":
            if gpus is None:
                raise core.Refused("--num-shard and CUDA_VISIBLE_DEVICES/NVIDIA_VISIBLE_DEVICES are not set")
            if gpus <= 1:
                raise core.Refused(f"Error: NotEnoughCUDADevices(\"`sharded` is true but only found {gpus} CUDA devices\")")
            shards = gpus
        elif shards is None:
            shards = 1 if sharded == "false" or gpus is None else max(gpus, 1)
        if shards < 1:
            raise core.Refused("Error: ArgumentValidation(\"`num_shard` cannot be < 1\")")
        if gpus is not None and shards > gpus:
            raise core.Refused(
                f"Error: ShardCannotStart (shard {gpus} of {shards}: CUDA error: invalid device ordinal; "
                f"CUDA_VISIBLE_DEVICES gives {gpus} GPUs)"
            )
        net = core.Net()
        held = []
        if shards > 1:
            try:
                held = net.listen("0.0.0.0", o["master_port"])
            except OSError as e:
                raise core.Refused(
                    "Error: ShardCannotStart (shard 0: torch.distributed.DistNetworkError: The server socket has "
                    f"failed to listen on any local network address. port: {o['master_port']}, code: -98, name: "
                    f"EADDRINUSE, message: {e.strerror})"
                )
        record.set(num_shard=shards)
        return net, held

    net, held = core.run_refusing(record, PROG, check)
    core.pdeathsig()
    app = core.App(record, lambda: [model], "tgi")
    app.routes[("GET", "/info")] = lambda _: (200, {"model_id": model, "version": "3.3.6", "sha": "standin"})
    app.routes[("GET", "/")] = lambda _: (200, "")
    app.routes[("GET", "/ping")] = lambda _: (200, "")
    app.routes[("POST", "/generate")] = lambda body: (200, {"generated_text": "standin"})
    app.held = held
    return core.serve_http(record, PROG, net, o["hostname"], o["port"], app, f"tgi stand-in: serving {model}")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
