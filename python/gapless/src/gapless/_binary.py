"""Where the ``gapless`` command this package installed is."""

from __future__ import annotations

import os
import shutil
import sys
import sysconfig


def binary_path() -> str:
    """The path of the ``gapless`` binary: the one the wheel put among
    this environment's scripts (``bin/`` of a venv, the user's scripts
    directory for ``pip install --user``), else the first on ``PATH``.

    >>> import subprocess, gapless
    >>> subprocess.run([gapless.binary_path(), "--version"], check=True)  # doctest: +SKIP
    gapless 0.1.0

    Raises :class:`FileNotFoundError` when there is none (a source checkout
    without the wheel: build it with ``cargo build -p gapless-cli``).
    """
    exe = "gapless" + (sysconfig.get_config_var("EXE") or "")
    candidates = [sysconfig.get_path("scripts")]
    user = _user_scripts()
    if user:
        candidates.append(user)
    candidates.append(os.path.join(os.path.dirname(sys.executable)))
    for directory in candidates:
        path = os.path.join(directory, exe)
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    found = shutil.which(exe)
    if found:
        return found
    raise FileNotFoundError(
        "no gapless binary beside this Python (install the gapless wheel) or on PATH"
    )


def _user_scripts() -> str | None:
    scheme = f"{os.name}_user"
    if scheme not in sysconfig.get_scheme_names():
        return None
    return sysconfig.get_path("scripts", scheme=scheme)
