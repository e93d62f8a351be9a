# Spack recipe for Rewind (packaging/spack/README.md: how to use it, what was tested).
import os

try:  # Spack >= 1.0: the build systems live in the builtin repository
    from spack_repo.builtin.build_systems.cmake import CMakePackage
except ImportError:  # Spack 0.x: spack.package exports them
    pass

from spack.package import *

try:  # Spack 0.22 and the 0.23 development versions know only cxx and fortran as languages
    from spack.directives import SUPPORTED_LANGUAGES as _LANGUAGES
except ImportError:  # Spack >= 1.0: c, cxx and fortran are virtual packages
    _LANGUAGES = ("c", "cxx", "fortran")


class Rewind(CMakePackage):
    """Parallel output, restart and time travel for space-tree CFD: an MPI + parallel
    HDF5 I/O kernel any MPI code can adopt (one shared file, exact restart, branches),
    the `rewind` command, a TCP collector with steering, and a ParaView plugin."""

    # No public release or repository address yet (so no homepage, url or git): build a
    # checkout with `spack dev-build rewind@main` from it, or `spack develop` in an
    # environment (README.md).
    version("main")

    variant("shared", default=True, description="Shared libraries (static ones are PIC)")
    variant(
        "kernel_only",
        default=False,
        description="Only the I/O kernel, the C API (output and restart; its live calls "
        "refuse) and the in-situ hook: no rewind command, collector, Boost, CLI11, toml++ or zstd",
    )
    variant("paraview", default=False, description="The ParaView plugin and the Catalyst in-situ hook")
    variant("fortran", default=False, description="The Fortran module `rewind` over the C API (REWIND_BUILD_FORTRAN)")
    variant("python", default=False, description="The Python package `rewind` (python/, installed with pip)")
    # No compression variant: the kernel's zfp (lossy visualisation output, built against
    # zfp's headers, libzfp loaded at run time) and the collector's zstd are not optional
    # in Rewind 0.1, and Rewind uses no lz4.

    conflicts("+paraview", when="+kernel_only", msg="the ParaView plugin needs the whole of Rewind")
    conflicts("%gcc@:9", msg="Rewind is C++20 (built and tested with GCC 12)")

    if "c" in _LANGUAGES:
        depends_on("c", type="build")
    depends_on("cxx", type="build")
    depends_on("fortran", type="build", when="+fortran")
    depends_on("cmake@3.25:", type="build")
    depends_on("pkgconfig", type="build")

    # The kernel: what find_package(Rewind COMPONENTS kernel) and rewind.pc need.
    depends_on("mpi")
    depends_on("hdf5@1.10:+mpi")
    depends_on("fmt@9:")
    depends_on("nlohmann-json@3.10:")
    depends_on("xxhash")
    depends_on("zfp@1:")
    with when("~kernel_only"):
        depends_on("boost@1.74:")  # header-only: Asio, Beast
        depends_on("cli11@2.1:")
        depends_on("tomlplusplus")
        depends_on("zstd")
    with when("+paraview"):
        depends_on("paraview@5.11:+mpi+python")
        depends_on("python@3.8:", type=("build", "link", "run"))
    with when("+python"):
        extends("python")
        depends_on("python@3.9:", type=("build", "run"))
        depends_on("py-pip", type="build")
        depends_on("py-setuptools@61:", type="build")
        depends_on("py-numpy", type=("build", "run"))
        depends_on("py-h5py", type=("build", "run"))

    depends_on("catch2@2.13:2", type="test")
    depends_on("python@3.8:", type="test")
    depends_on("py-h5py", type="test")  # tests/package/check_one_step.py
    depends_on("py-numpy", type="test")

    def cmake_args(self):
        return [
            self.define_from_variant("BUILD_SHARED_LIBS", "shared"),
            self.define_from_variant("REWIND_KERNEL_ONLY", "kernel_only"),
            self.define_from_variant("REWIND_BUILD_PARAVIEW_PLUGIN", "paraview"),
            self.define_from_variant("REWIND_BUILD_CATALYST_ADAPTOR", "paraview"),
            self.define_from_variant("REWIND_BUILD_FORTRAN", "fortran"),
            self.define("REWIND_BUILD_TESTS", self.run_tests),
            self.define("REWIND_BUILD_BENCH", False),
            # The OpenMPI wrappers of the mpi dependency, for HDF5's and MPI's checks.
            self.define("MPI_C_COMPILER", self.spec["mpi"].mpicc),
            self.define("MPI_CXX_COMPILER", self.spec["mpi"].mpicxx),
        ]

    def setup_run_environment(self, env):
        # `rewind` loads the HDF5 zfp filter for stock HDF5 tools; ParaView the plugin.
        env.prepend_path("HDF5_PLUGIN_PATH", self.prefix.lib.join("hdf5-plugins"))
        if self.spec.satisfies("+paraview"):
            env.prepend_path("PV_PLUGIN_PATH", self.prefix.lib.join("rewind-paraview-plugins"))

    def check(self):
        """The quick unit tests at build time (the MPI and integration ones take long)."""
        with working_dir(self.builder.build_directory):
            ctest("-L", "unit", "--output-on-failure")

    @run_after("install")
    def install_python_package(self):
        """+python: python/ (pyproject.toml) into the prefix, with the spec's pip."""
        if self.spec.satisfies("+python"):
            python = Executable(self.spec["python"].command.path)
            python("-m", "pip", "install", "--no-deps", "--no-build-isolation", f"--prefix={self.prefix}",
                   join_path(self.stage.source_path, "python"))

    @run_after("install")
    def check_variants_installed(self):
        """+fortran and +python must install something: a variant the CMake build did
        not act on is an error, not a silent no-op."""
        if self.spec.satisfies("+fortran") and not find(self.prefix, "*.mod"):
            raise InstallError("+fortran: no Fortran module (*.mod) was installed")
        packages = [p for p in find(self.prefix, "__init__.py") if os.path.basename(os.path.dirname(p)) == "rewind"]
        if self.spec.satisfies("+python") and not packages:
            raise InstallError("+python: no Python package 'rewind' was installed")

    @run_after("install")
    @on_package_attributes(run_tests=True)
    def check_installation(self):
        """tests/package/check_install.sh on the installed prefix: find_package and
        pkg-config consumers that write and read back a step under mpiexec (h5py checks
        the file), the headers at C++17, a C hook, and the rewind command and the plugin
        when they are installed."""
        os.environ["REWIND_EXPECT_PLUGIN"] = "yes" if self.spec.satisfies("+paraview") else "no"
        if "python" in self.spec:  # a test dependency: with h5py and numpy
            os.environ["REWIND_PYTHON"] = self.spec["python"].command.path
        bash = which("bash", required=True)
        script = join_path(self.stage.source_path, "tests", "package", "check_install.sh")
        bash(script, self.prefix, self.stage.source_path, join_path(self.spec["mpi"].prefix.bin, "mpiexec"))
