"""Run a Credence server whose push leases are short, so a test can SIGKILL it and restart.

Usage: python -m tests.notify.pushserver DATA_DIR PORT LEASE_SECONDS
"""

from __future__ import annotations

import sys
from pathlib import Path

import uvicorn

from credence.app import create_app
from credence.components import context_component, push_component
from credence.settings import Settings

# The loopback fake push service's host, for CREDENCE_PUSH_ALLOWED_HOSTS.
ALLOWED = ("127.0.0.1",)


def components(lease_seconds: float) -> list:
    """The app's push-relevant components, with a short lease so a crash recovers quickly."""
    return [context_component(), push_component(lease_seconds=lease_seconds)]


def main() -> None:
    """Serve until killed."""
    data_dir, port, lease = Path(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
    settings = Settings(data_dir=data_dir, port=port, scheduler=False, push_allowed_hosts=ALLOWED)
    app = create_app(settings, components=components(lease))
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on")


if __name__ == "__main__":
    main()
