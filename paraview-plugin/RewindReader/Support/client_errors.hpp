// One readable line for a failed connect or request to a Rewind collector, as the live
// source and the steering panel show it (cannot reach, refused token, another protocol
// version, no answer in time, not a collector, or the server's own refusal). Pure.
#pragma once
#include <exception>
#include <string>

namespace rwd::paraview {

/// `where` is "HOST:PORT"; `timeout_s` the deadline that was used.
std::string describe_client_error(const std::exception& e, const std::string& where, double timeout_s);

}  // namespace rwd::paraview
