// A shared library without the hook's entry points: `rewind run` must refuse it.
extern "C" int rewind_insitu_abi_version(void) { return 1; }
extern "C" int some_other_function(int x) { return x + 1; }
