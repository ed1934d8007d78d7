"""`trtllm-serve` stand-in. Contract (NVIDIA/TensorRT-LLM
tensorrt_llm/commands/serve.py):
  - click: `trtllm-serve [serve] MODEL [OPTIONS]`; unknown options refused
    ("Error: No such option"), MODEL required; --host localhost,
    --port 8000, --tp_size/--tensor_parallel_size, --pp_size, --cp_size;
  - with --gpus_per_node unset and no visible GPU: "No GPU devices found
    on the node"; TP x PP x CP above the visible GPUs is refused (one node:
    multi-node TRT-LLM runs under mpirun/srun with trtllm-llmapi-launch,
    which is not emulated);
  - the host:port is bound before the model loads, a bind failure refused
    ("Failed to bind socket to H:P");
  - a model given as a path must exist.
"""

import sys

from . import cli, core

OPTIONS = {
    "--tokenizer": ("tokenizer", "str"),
    "--custom_tokenizer": ("custom_tokenizer", "str"),
    "--host": ("host", "str"),
    "--port": ("port", "int"),
    "--backend": ("backend", "str"),
    "--custom_module_dirs": ("custom_module_dirs", "str"),
    "--log_level": ("log_level", "str"),
    "--max_beam_width": ("max_beam_width", "int"),
    "--max_batch_size": ("max_batch_size", "int"),
    "--max_num_tokens": ("max_num_tokens", "int"),
    "--max_seq_len": ("max_seq_len", "int"),
    "--tensor_parallel_size": ("tp", "int"),
    "--tp_size": ("tp", "int"),
    "--pipeline_parallel_size": ("pp", "int"),
    "--pp_size": ("pp", "int"),
    "--context_parallel_size": ("cp", "int"),
    "--cp_size": ("cp", "int"),
    "--moe_expert_parallel_size": ("ep", "int"),
    "--ep_size": ("ep", "int"),
    "--moe_cluster_parallel_size": ("cluster", "int"),
    "--cluster_size": ("cluster", "int"),
    "--gpus_per_node": ("gpus_per_node", "int"),
    "--free_gpu_memory_fraction": ("free_gpu_memory_fraction", "float"),
    "--kv_cache_free_gpu_memory_fraction": ("free_gpu_memory_fraction", "float"),
    "--num_postprocess_workers": ("num_postprocess_workers", "int"),
    "--trust_remote_code": ("trust_remote_code", "flag"),
    "--revision": ("revision", "str"),
    "--config": ("extra_llm_api_options", "str"),
    "--extra_llm_api_options": ("extra_llm_api_options", "str"),
    "--reasoning_parser": ("reasoning_parser", "str"),
    "--tool_parser": ("tool_parser", "str"),
    "--metadata_server_config_file": ("metadata_server_config_file", "str"),
    "--server_role": ("server_role", "str"),
    "--fail_fast_on_attention_window_too_large": ("fail_fast", "flag"),
    "--otlp_traces_endpoint": ("otlp_traces_endpoint", "str"),
    "--disagg_cluster_uri": ("disagg_cluster_uri", "str"),
    "--enable_chunked_prefill": ("enable_chunked_prefill", "flag"),
    "--media_io_kwargs": ("media_io_kwargs", "str"),
    "--chat_template": ("chat_template", "str"),
}

SUBCOMMANDS = ("serve", "grpc", "disaggregated", "disaggregated_mpi_worker", "mm_embedding_serve")


def main(argv):
    prog = "trtllm-serve serve"
    if argv and argv[0] in SUBCOMMANDS:
        if argv[0] != "serve":
            sys.stderr.write(f"trtllm-serve stand-in: `{argv[0]}` is not emulated\n")
            return 2
        argv = argv[1:]
    record = core.Record("trtllm", ["trtllm-serve"] + list(argv))
    if argv and argv[0] in ("-h", "--help"):
        print("Usage: trtllm-serve serve [OPTIONS] MODEL (llmgw stand-in)")
        return 0
    try:
        o = cli.click_parse(argv, OPTIONS, positionals=("MODEL",))
    except cli.UsageError as e:
        record.log("refused", error=str(e), code=2)
        cli.click_fail(prog, "[OPTIONS] MODEL", str(e))
    model = o["MODEL"]
    host = o.get("host", "localhost")
    port = o.get("port", 8000)
    tp, pp, cp = o.get("tp", 1), o.get("pp", 1), o.get("cp", 1)
    backend = o.get("backend", "pytorch")
    record.set(model=model, served_model_name=[model], tp=tp, pp=pp, cp=cp, backend=backend)

    def check():
        if backend not in ("pytorch", "tensorrt", "trt", "_autodeploy"):
            raise core.Refused(f"Error: Invalid value for '--backend': '{backend}' is not one of 'pytorch', 'tensorrt', '_autodeploy'.", 2)
        core.check_model_path(model, f"ValueError: the model path {model} does not exist on node {core.node_name()}")
        gpus = o.get("gpus_per_node")
        if gpus is None:
            gpus = core.visible_gpus()
            if gpus == 0:
                raise core.Refused("ValueError: No GPU devices found on the node")
        world = tp * pp * cp
        if gpus is not None and world > gpus:
            raise core.Refused(
                f"RuntimeError: world size {world} (tp {tp} x pp {pp} x cp {cp}) exceeds the {gpus} GPUs of this "
                "node; several nodes need mpirun/srun with trtllm-llmapi-launch (not emulated)"
            )
        net = core.Net()
        try:
            net.bind_addrs(host)
        except OSError as e:
            raise core.Refused(f"RuntimeError: Failed to bind socket to {host}:{port}: {e}")
        return net

    net = core.run_refusing(record, prog, check)
    core.pdeathsig()
    app = core.App(record, lambda: [model], "trtllm")
    app.routes[("GET", "/version")] = lambda _: (200, {"version": "1.2.0"})
    app.routes[("GET", "/metrics")] = lambda _: (200, [])
    return core.serve_http(record, prog, net, host, port, app, f"trtllm-serve stand-in: serving {model}")
