# Only for Spack versions whose builtin repository has no toml++ (0.x): a name the
# Debian external in ../../packages.yaml can stand for. Spack >= 1.0 has its own.
from spack.package import *


class Tomlplusplus(CMakePackage):
    """toml++, a TOML parser for C++17 (test shim: external only)."""

    version("3.3.0")
