"""Build hook: the wheel carries the top-level pwa/ as credence/pwa/ package data."""

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

PWA_SOURCE = Path(__file__).resolve().parent / "pwa"


class BuildWithPWA(build_py):
    """build_py that also copies the review app, so `/` works from any install."""

    def run(self) -> None:
        """Build the Python package, then copy pwa/ into it."""
        super().run()
        if not self.editable_mode:
            self.copy_tree(str(PWA_SOURCE), str(Path(self.build_lib) / "credence" / "pwa"))


setup(cmdclass={"build_py": BuildWithPWA})
