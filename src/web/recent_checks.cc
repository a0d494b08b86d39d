#include "web/recent_checks.h"

#include <algorithm>
#include <cstdio>
#include <set>

namespace trainwatch::web {
namespace {

const char* class_of(BeatKind k) {
  switch (k) {
    case BeatKind::kOk: return "b-ok";
    case BeatKind::kFailed: return "b-bad";
    case BeatKind::kStart: return "b-start";
  }
  return "b-none";
}

}  // namespace

std::string latency_text(double ms) {
  char buffer[32];
  if (ms < 1) {
    std::snprintf(buffer, sizeof buffer, "%.1f ms", ms);
  } else if (ms >= 10'000) {
    std::snprintf(buffer, sizeof buffer, "%.0f s", ms / 1000);
  } else if (ms >= 1'000) {
    std::snprintf(buffer, sizeof buffer, "%.1f s", ms / 1000);
  } else {
    std::snprintf(buffer, sizeof buffer, "%.0f ms", ms);
  }
  return buffer;
}

std::vector<Beat> beats_from_results(std::span<const CheckResult> newest_first, size_t n) {
  std::vector<Beat> out;
  for (size_t i = std::min(n, newest_first.size()); i-- > 0;) {
    const CheckResult& r = newest_first[i];
    out.push_back(Beat{to_unix_ms(r.at), r.ok ? BeatKind::kOk : BeatKind::kFailed, r.latency_ms});
  }
  return out;
}

std::vector<Beat> beats_from_pings(std::span<const PingRecord> pings_newest_first,
                                   std::span<const CheckResult> results_newest_first, size_t n) {
  std::vector<Beat> all;
  std::set<int64_t> ping_times;
  for (const PingRecord& p : pings_newest_first) {
    if (p.ping.kind == PingKind::kLog) continue;
    const int64_t at = to_unix_ms(p.ping.at);
    ping_times.insert(at);
    const BeatKind kind = p.ping.kind == PingKind::kStart ? BeatKind::kStart
                          : is_failure(p.ping)            ? BeatKind::kFailed
                                                          : BeatKind::kOk;
    all.push_back(Beat{at, kind, 0});
  }
  // A failed result at a ping's time is that ping's verdict; any other is a deadline missed.
  for (const CheckResult& r : results_newest_first) {
    const int64_t at = to_unix_ms(r.at);
    if (!r.ok && ping_times.count(at) == 0) all.push_back(Beat{at, BeatKind::kFailed, 0});
  }
  std::stable_sort(all.begin(), all.end(), [](const Beat& a, const Beat& b) { return a.at_ms < b.at_ms; });
  if (all.size() > n) all.erase(all.begin(), all.end() - static_cast<std::ptrdiff_t>(n));
  return all;
}

std::string beats_html(std::span<const Beat> beats, size_t slots) {
  size_t ok = 0, failed = 0;
  for (const Beat& b : beats) {
    if (b.kind == BeatKind::kOk) ++ok;
    if (b.kind == BeatKind::kFailed) ++failed;
  }
  std::string label = beats.empty() ? std::string("no checks yet")
                                    : "last " + std::to_string(beats.size()) + ": " + std::to_string(ok) +
                                          " ok, " + std::to_string(failed) + " failed";
  std::string out =
      "<span class=\"beats\" role=\"img\" title=\"" + label + "\" aria-label=\"" + label + "\">";
  out.reserve(out.size() + slots * 22);
  for (size_t i = beats.size(); i < slots; ++i) out += "<i class=\"b-none\"></i>";
  const size_t skip = beats.size() > slots ? beats.size() - slots : 0;
  for (size_t i = skip; i < beats.size(); ++i) {
    out += "<i class=\"";
    out += class_of(beats[i].kind);
    out += "\"></i>";
  }
  out += "</span>";
  return out;
}

Sparkline sparkline(std::span<const Beat> beats) {
  std::vector<double> ms;
  for (const Beat& b : beats) {
    if (b.kind == BeatKind::kOk && b.latency_ms > 0) ms.push_back(b.latency_ms);
  }
  if (ms.empty()) return {"", "no latency yet"};
  const auto [lo, hi] = std::minmax_element(ms.begin(), ms.end());
  const double top = std::max(*hi, 1e-9);
  std::string path;
  char point[48];
  auto y_of = [&](double v) { return 22.0 - 20.0 * v / top; };
  if (ms.size() == 1) {
    std::snprintf(point, sizeof point, "M 50 %.1f L 70 %.1f", y_of(ms[0]), y_of(ms[0]));
    path = point;
  } else {
    for (size_t i = 0; i < ms.size(); ++i) {
      const double x = 120.0 * static_cast<double>(i) / static_cast<double>(ms.size() - 1);
      std::snprintf(point, sizeof point, "%s%.1f %.1f", i == 0 ? "M " : " L ", x, y_of(ms[i]));
      path += point;
    }
  }
  std::string label = "latency of the last " + std::to_string(ms.size()) +
                      (ms.size() == 1 ? " check: " : " checks: ") + latency_text(*lo);
  if (ms.size() > 1) label += " to " + latency_text(*hi) + ", last " + latency_text(ms.back());
  return {path, label};
}

}  // namespace trainwatch::web
