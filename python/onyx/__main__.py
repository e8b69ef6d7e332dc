"""python -m onyx run|test|perf|info|optimize|ops ...: the onyx command line,
the same code as the `onyx` executable (linked into the extension)."""
import sys

from . import _onyx


def main(argv=None):
    args = sys.argv[1:] if argv is None else list(argv)
    sys.stdout.flush()
    sys.stderr.flush()
    return _onyx.cli_main(["onyx"] + args)


if __name__ == "__main__":
    sys.exit(main())
