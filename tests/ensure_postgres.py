"""Install Debian's PostgreSQL server for its tests when it is missing (CI starts bare)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.pg import find_bindir


def main() -> int:
    """Make sure initdb and pg_ctl exist, installing `postgresql` with apt-get when we may."""
    if find_bindir() is not None:
        return 0
    if shutil.which("apt-get") is None or os.geteuid() != 0:
        print("PostgreSQL is missing and cannot be installed here; its tests skip (fail if CI)")
        return 0
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run(["apt-get", "update", "-qq"], check=True, env=env)
    subprocess.run(
        ["apt-get", "install", "-y", "-qq", "--no-install-recommends", "postgresql"],
        check=True,
        env=env,
    )
    return 0 if find_bindir() is not None else 1


if __name__ == "__main__":
    sys.exit(main())
