// VTK XML (ASCII, so values are exact and the files are diffable) and JSON output of
// one window reply.
#include "window_output.hpp"

#include "commands.hpp"

#include <fmt/core.h>
#include <fmt/os.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace rwd::cli {

namespace {

namespace fs = std::filesystem;
using collector::PieceMessage;
using collector::WindowReply;

std::ofstream open_out(const fs::path& p) {
  std::ofstream out(p);
  if (!out) throw std::runtime_error(p.string() + ": cannot open for writing");
  out.precision(17);
  return out;
}

/// One piece as a .vti image: cells = the piece's cells, offset = its first value.
void write_vti(const fs::path& p, const WindowReply& w, const PieceMessage& piece, std::uint64_t offset) {
  auto out = open_out(p);
  const auto& c = piece.count;
  out << "<?xml version=\"1.0\"?>\n<VTKFile type=\"ImageData\" version=\"1.0\" byte_order=\"LittleEndian\">\n";
  out << fmt::format("<ImageData WholeExtent=\"0 {} 0 {} 0 {}\" Origin=\"{} {} {}\" Spacing=\"{} {} {}\">\n", c[0], c[1], c[2],
                     piece.origin[0], piece.origin[1], piece.origin[2], piece.spacing[0], piece.spacing[1], piece.spacing[2]);
  out << fmt::format("<Piece Extent=\"0 {} 0 {} 0 {}\">\n<CellData>\n", c[0], c[1], c[2]);
  const std::uint64_t n = piece.cells();
  for (std::size_t v = 0; v < w.variables.size(); ++v) {
    out << "<DataArray type=\"Float64\" Name=\"" << w.variables[v] << "\" format=\"ascii\">\n";
    for (std::uint64_t i = 0; i < n; ++i) out << w.values[v][offset + i] << (i % 8 == 7 ? '\n' : ' ');
    out << "\n</DataArray>\n";
  }
  if (!w.cell_type.empty()) {
    out << "<DataArray type=\"UInt8\" Name=\"cell_type\" format=\"ascii\">\n";
    for (std::uint64_t i = 0; i < n; ++i) out << int{w.cell_type[offset + i]} << (i % 32 == 31 ? '\n' : ' ');
    out << "\n</DataArray>\n";
  }
  out << "</CellData>\n</Piece>\n</ImageData>\n</VTKFile>\n";
  if (!out) throw std::runtime_error(p.string() + ": write failed");
}

void write_vtm(const fs::path& p, const WindowReply& w) {
  const fs::path dir = p.parent_path() / (p.stem().string() + "_pieces");
  fs::create_directories(dir);
  auto out = open_out(p);
  out << "<?xml version=\"1.0\"?>\n<VTKFile type=\"vtkMultiBlockDataSet\" version=\"1.0\" byte_order=\"LittleEndian\">\n"
         "<vtkMultiBlockDataSet>\n";
  std::uint64_t offset = 0;
  for (std::size_t i = 0; i < w.pieces.size(); ++i) {
    const auto& piece = w.pieces[i];
    const auto name = fmt::format("piece_{:06}.vti", i);
    write_vti(dir / name, w, piece, offset);
    offset += piece.cells();
    out << fmt::format("<DataSet index=\"{}\" name=\"level{}_uid{}\" file=\"{}/{}\"/>\n", i, piece.level, piece.uid,
                       dir.filename().string(), name);
  }
  out << "</vtkMultiBlockDataSet>\n</VTKFile>\n";
  if (!out) throw std::runtime_error(p.string() + ": write failed");
}

void write_json(const fs::path& p, const WindowReply& w) {
  nlohmann::json j = {{"step", w.step},     {"time", w.time},           {"file", w.file},
                      {"level", w.level},   {"stride", w.stride},       {"lo", w.lo},
                      {"hi", w.hi},         {"cells", w.cells},         {"variables", w.variables},
                      {"values", w.values}, {"cell_type", w.cell_type}, {"lod", w.lod}};
  if (!w.ranges.empty()) {  // the colour ranges the reply carries (protocol 1.11; a live state's since 1.13)
    j["ranges"] = nlohmann::json::object();
    for (std::size_t v = 0; v < w.ranges.size() && v < w.variables.size(); ++v)
      j["ranges"][w.variables[v]] = w.ranges[v];  // NaN (no non-solid cell) is written null
  }
  j["pieces"] = nlohmann::json::array();
  for (const auto& q : w.pieces)
    j["pieces"].push_back({{"row", q.row}, {"uid", q.uid}, {"level", q.level}, {"first", q.first}, {"count", q.count},
                           {"stride", q.stride}, {"origin", q.origin}, {"spacing", q.spacing}});
  auto out = open_out(p);
  out << j.dump() << '\n';  // nlohmann writes doubles that read back bit for bit
  if (!out) throw std::runtime_error(p.string() + ": write failed");
}

}  // namespace

void write_window(const std::string& path, const WindowReply& w) {
  const fs::path p(path);
  const auto ext = p.extension().string();
  if (ext == ".vtm") return write_vtm(p, w);
  if (ext == ".json") return write_json(p, w);
  if (ext == ".vti") {
    if (w.pieces.size() != 1)
      throw std::invalid_argument(path + ": a .vti holds one image, this window has " + std::to_string(w.pieces.size()) +
                                  " pieces; use .vtm");
    return write_vti(p, w, w.pieces.front(), 0);
  }
  throw UsageError(path + ": unknown output type (use .vtm, .vti or .json)");
}

std::optional<std::pair<std::string, std::uint16_t>> parse_host_port(const std::string& s) {
  const auto colon = s.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == s.size() || colon + 6 < s.size()) return std::nullopt;
  std::string host = s.substr(0, colon);
  if (host.front() == '[') {
    if (host.back() != ']' || host.size() < 3) return std::nullopt;
    host = host.substr(1, host.size() - 2);
  } else if (host.find(':') != std::string::npos) {
    return std::nullopt;  // a bare IPv6 address needs brackets
  }
  unsigned port = 0;
  for (std::size_t i = colon + 1; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return std::nullopt;
    port = port * 10 + static_cast<unsigned>(s[i] - '0');
  }
  if (port > 65535) return std::nullopt;
  return std::make_pair(host, static_cast<std::uint16_t>(port));
}

}  // namespace rwd::cli
