// Files written by `rewind window --out`: what stock ParaView 5.11 opens (a VTK XML
// multiblock .vtm of one .vti image per piece, or one .vti for a one-piece window),
// and a JSON dump (every piece and value, exact to the last bit) for scripts and tests.
// Also the HOST:PORT syntax shared by `rewind serve --listen` and `rewind window`.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "rewind/collector/messages.hpp"

namespace rwd::cli {

/// Writes `w` to `path` by its extension: .vtm (plus a directory <stem>_pieces/ of .vti
/// files), .vti (only for exactly one piece) or .json. Throws std::runtime_error naming
/// the file on I/O errors, std::invalid_argument for another extension.
void write_window(const std::string& path, const collector::WindowReply& w);

/// "HOST:PORT" or "[IPv6]:PORT" -> {host, port}; nullopt if it is not of that form or
/// the port is not 0..65535. Pure.
std::optional<std::pair<std::string, std::uint16_t>> parse_host_port(const std::string& s);

}  // namespace rwd::cli
