// Overloaded: a visitor made of lambdas, for std::visit over a protocol's message
// variants (the neighbourhood server's and the collector's codecs and handlers).
//
//   std::visit(Overloaded{[](const InfoRequest& r) { ... }, [](const auto&) { ... }}, body);
#pragma once

namespace rwd::wire {

template <class... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};
template <class... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;

}  // namespace rwd::wire
