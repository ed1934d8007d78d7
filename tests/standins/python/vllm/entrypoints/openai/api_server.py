"""`python3 -m vllm.entrypoints.openai.api_server` stand-in: `vllm serve`'s
arguments with the model as --model (see tests/standins/README.md)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))))
from standin.vllm import serve  # noqa: E402

if __name__ == "__main__":
    sys.exit(serve(sys.argv[1:], prog="api_server.py", argv0=["python3", "-m", "vllm.entrypoints.openai.api_server"]))
