// Where the collector's shared secret comes from (docs/collector-protocol.md,
// "Security"). A command line is visible to every user of the machine (`ps`), so the
// token is better given in a file only its owner can read (--token-file) or in the
// environment (REWIND_TOKEN, or REWIND_TOKEN_FILE naming such a file). Used by every
// command that takes --token and by the ParaView live source. No function here puts
// the token in a message. Pure but for reading the file and the environment.
#pragma once
#include <cstddef>
#include <string>

namespace rwd::collector {

/// The token itself.
inline constexpr const char* kTokenEnv = "REWIND_TOKEN";
/// A file holding the token (as --token-file).
inline constexpr const char* kTokenFileEnv = "REWIND_TOKEN_FILE";
/// Longest token read from a file.
inline constexpr std::size_t kMaxTokenBytes = 4096;

/// The token in the file at `path`: its first line, without the line end. Throws
/// std::invalid_argument, one line naming the file (never its contents), if it cannot
/// be opened, is not a regular file, may be read or written by group or others (mode &
/// 077: "chmod 600 FILE"), or its first line is empty, only white space or longer than
/// kMaxTokenBytes.
std::string read_token_file(const std::string& path);

/// The token to use: `token` (--token) if not empty, else the token in `token_file`
/// (--token-file) if not empty, else $REWIND_TOKEN, else the token in the file
/// $REWIND_TOKEN_FILE names; "" if none is given. Throws std::invalid_argument (one
/// line) if both `token` and `token_file` are given, if neither is and both variables
/// are set, if the token found is only white space (a secret anyone can guess), and as
/// read_token_file.
std::string resolve_token(const std::string& token, const std::string& token_file);

/// Bytes of randomness in a generated token (printed as twice as many hex digits).
inline constexpr std::size_t kGeneratedTokenBytes = 24;

/// A fresh token from the system's random source (getrandom(2)): 48 hex digits, for a
/// live run started without one (`rewind run --listen`, the C API), which puts it in
/// its contact file. Throws std::runtime_error if no randomness can be had.
std::string generate_token();

}  // namespace rwd::collector
