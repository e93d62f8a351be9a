#include "client_errors.hpp"

#include <sstream>
#include <stdexcept>

#include "rewind/collector/messages.hpp"

namespace rwd::paraview {

namespace col = rwd::collector;

std::string describe_client_error(const std::exception& e, const std::string& where, double timeout_s) {
  const auto* c = dynamic_cast<const col::CodedError*>(&e);
  if (dynamic_cast<const std::invalid_argument*>(&e)) return e.what();  // e.g. a token file refused before connecting
  if (!c) return "cannot reach the Rewind collector at " + where + " (" + e.what() + ")";
  std::ostringstream s;
  switch (c->code()) {
    case col::ErrorCode::unauthorized:
      s << "the Rewind collector at " << where << " refused the token (set Token or TokenFile to the run's token)";
      break;
    case col::ErrorCode::bad_version:
      s << "the Rewind collector at " << where << " speaks another protocol version (this plugin speaks version "
        << col::kProtocolVersion << "): " << e.what();
      break;
    case col::ErrorCode::timeout:
      s << "no answer from " << where << " within " << timeout_s << " s (is it a Rewind collector, and is the run alive?)";
      break;
    case col::ErrorCode::malformed:
      s << where << " does not answer like a Rewind collector: " << e.what();
      break;
    default:
      s << "the Rewind collector at " << where << " answered " << col::to_string(c->code()) << ": " << e.what();
  }
  return s.str();
}

}  // namespace rwd::paraview
