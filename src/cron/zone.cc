#include "cron/zone.h"

#include <algorithm>

namespace trainwatch::cron {
namespace {

// tz database names are path-like ("America/Argentina/Buenos_Aires", "Etc/GMT+5"); they
// are looked up as files, so nothing that could leave the database's folder is tried.
bool plausible_zone_name(std::string_view name) {
  constexpr size_t kMaxZoneName = 100;
  auto allowed = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '/' ||
           c == '_' || c == '-' || c == '+';
  };
  return !name.empty() && name.size() <= kMaxZoneName && name.front() != '/' && name.back() != '/' &&
         name.find("//") == std::string_view::npos && name.find("..") == std::string_view::npos &&
         std::all_of(name.begin(), name.end(), allowed);
}

}  // namespace

Result<cctz::time_zone> load_zone(std::string_view name) {
  cctz::time_zone zone;
  if (!plausible_zone_name(name) || !cctz::load_time_zone(std::string(name), &zone)) {
    return make_error("cron.unknown_zone", "'" + std::string(name) + "' is not in the tz database");
  }
  return zone;
}

std::string format_local(SystemTime t, const cctz::time_zone& zone) {
  return cctz::format("%Y-%m-%d %H:%M %Z", std::chrono::floor<std::chrono::seconds>(t), zone);
}

}  // namespace trainwatch::cron
