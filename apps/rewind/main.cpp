// The `rewind` command: see `rewind --help`.
#include "commands.hpp"

int main(int argc, char** argv) { return rwd::cli::run_cli(argc, argv); }
