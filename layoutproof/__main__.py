"""`python -m layoutproof ...`: the same as the `layoutproof` command."""
import sys

from solver.cli.main import main

if __name__ == "__main__":
    sys.exit(main())
