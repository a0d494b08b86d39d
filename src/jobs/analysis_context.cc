#include "jobs/analysis_context.h"

#include <cmath>
#include <cstdio>

#include "core/duration.h"

namespace trainwatch::jobs::rules {

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string ago(MonoTime now, MonoTime then) {
  return format_duration(std::chrono::duration_cast<Millis>(now - then));
}

std::string number_text(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return fmt("%g", v);
}

}  // namespace trainwatch::jobs::rules
