"""`sglang` console script stand-in (sglang.cli.main:main)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from standin.sglang import cli_main  # noqa: E402


def main():
    return cli_main(sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
