import sys

from analysis.cli import main

if __name__ == "__main__":  # spawned worker processes (self-play) import this module too
    sys.exit(main())
