"""Install Debian's Chromium for the browser tests when it is missing (CI starts with nothing)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

CHROMIUM = "/usr/bin/chromium"


def main() -> int:
    """Make sure /usr/bin/chromium exists, installing it with apt-get when we may."""
    if os.path.exists(CHROMIUM):
        return 0
    if shutil.which("apt-get") is None or os.geteuid() != 0:
        print("chromium is missing and cannot be installed here; browser tests will skip")
        return 0
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run(["apt-get", "update", "-qq"], check=True, env=env)
    subprocess.run(
        [
            "apt-get",
            "install",
            "-y",
            "-qq",
            "--no-install-recommends",
            "chromium",
            "fonts-dejavu-core",
        ],
        check=True,
        env=env,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
