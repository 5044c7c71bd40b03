"""``python -m gapless ARGS`` runs the ``gapless`` binary with ARGS."""

from __future__ import annotations

import os
import subprocess
import sys

from ._binary import binary_path


def main() -> int:
    try:
        binary = binary_path()
    except FileNotFoundError as e:
        print(f"gapless: {e}", file=sys.stderr)
        return 2
    args = [binary, *sys.argv[1:]]
    if sys.platform == "win32":  # no exec there: run it and pass its exit code on
        return subprocess.run(args, check=False).returncode
    os.execv(binary, args)
    return 0  # not reached


if __name__ == "__main__":
    sys.exit(main())
