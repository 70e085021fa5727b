"""Build hook: the wheel carries pwa/ and the demo data in examples/ as package data."""

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

PWA_SOURCE = Path(__file__).resolve().parent / "pwa"
EXAMPLES_SOURCE = Path(__file__).resolve().parent / "examples"
# The manifests `credence demo` and the README's `credence seed` read, wherever it is installed.
PACKAGED_EXAMPLES = ("demo.json", "reflection.json")


class BuildWithPWA(build_py):
    """build_py that also copies the review app and the demo data, so both work from any install."""

    def run(self) -> None:
        """Build the Python package, then copy pwa/ and the example manifests into it."""
        super().run()
        if not self.editable_mode:
            package = Path(self.build_lib) / "credence"
            self.copy_tree(str(PWA_SOURCE), str(package / "pwa"))
            self.mkpath(str(package / "examples"))
            for name in PACKAGED_EXAMPLES:
                self.copy_file(str(EXAMPLES_SOURCE / name), str(package / "examples" / name))


setup(cmdclass={"build_py": BuildWithPWA})
