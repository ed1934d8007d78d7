"""`python3 -m sglang.launch_server` stand-in (see tests/standins/README.md)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from standin.sglang import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
