#include "agent/fabric.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <system_error>

namespace trainwatch::agent {
namespace {

namespace fs = std::filesystem;

// Samples kept per counter: a window at the default probe interval needs 121.
constexpr size_t kMaxSamples = 4096;

// A sysfs attribute is one short line; a missing or unreadable one reads "".
std::string attribute(const fs::path& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return "";
  while (!line.empty() && (line.back() == '\n' || line.back() == ' ')) line.pop_back();
  return line;
}

int64_t counter(const fs::path& path) {
  const std::string text = attribute(path);
  if (text.empty()) return -1;
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  return end != text.c_str() && v >= 0 ? v : -1;
}

// "4: ACTIVE" -> "ACTIVE"; "5: LinkUp" -> "LinkUp".
std::string after_colon(const std::string& text) {
  const size_t colon = text.find(':');
  if (colon == std::string::npos) return text;
  const size_t start = text.find_first_not_of(' ', colon + 1);
  return start == std::string::npos ? "" : text.substr(start);
}

double rate_gbps(const std::string& text) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  return end != text.c_str() && v >= 0 ? v : -1;
}

IbPortInfo read_port(const std::string& device, const fs::path& dir) {
  IbPortInfo p;
  p.device = device;
  p.port = static_cast<unsigned>(std::strtoul(dir.filename().c_str(), nullptr, 10));
  p.state = after_colon(attribute(dir / "state"));
  p.phys_state = after_colon(attribute(dir / "phys_state"));
  p.link_layer = attribute(dir / "link_layer");
  p.rate_gbps = rate_gbps(attribute(dir / "rate"));
  const fs::path counters = dir / "counters";
  p.link_downed = counter(counters / "link_downed");
  p.symbol_errors = counter(counters / "symbol_error");
  p.link_error_recovery = counter(counters / "link_error_recovery");
  p.rcv_errors = counter(counters / "port_rcv_errors");
  return p;
}

std::vector<fs::path> children(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) out.push_back(it->path());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

std::vector<IbPortInfo> read_ib_ports(const std::string& sysfs_root) {
  std::vector<IbPortInfo> ports;
  for (const fs::path& device : children(fs::path(sysfs_root) / "class" / "infiniband")) {
    for (const fs::path& port : children(device / "ports")) {
      if (ports.size() >= kMaxIbPorts) return ports;
      ports.push_back(read_port(device.filename().string(), port));
    }
  }
  std::sort(ports.begin(), ports.end(), [](const IbPortInfo& a, const IbPortInfo& b) {
    return a.device != b.device ? a.device < b.device : a.port < b.port;
  });
  return ports;
}

int64_t FabricWatch::rise(std::deque<Sample>& history, MonoTime now, int64_t value) const {
  if (value < 0) return 0;
  history.push_back({now, value});
  // Keep the newest sample at or before the window's start: the value the window rises from.
  while (history.size() >= 2 && history[1].at <= now - window_) history.pop_front();
  if (history.size() > kMaxSamples) history.pop_front();       // probes far more often than usual
  return std::max<int64_t>(0, value - history.front().value);  // a counter reset is no rise
}

FabricInfo FabricWatch::probe() {
  FabricInfo info;
  info.ports = read_ib_ports(root_);
  const MonoTime now = clock_.monotonic_time();
  for (auto& p : info.ports) {
    const std::string name = p.name();
    if (p.active()) seen_active_.insert(name);
    p.was_active = seen_active_.contains(name);
    p.link_downed_rise = rise(link_downed_[name], now, p.link_downed);
    p.symbol_error_rise = rise(symbol_errors_[name], now, p.symbol_errors);
  }
  return info;
}

}  // namespace trainwatch::agent
