// The node report parser over any body an agent (or anyone reaching the port when no
// jobs.token is set) may POST.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "jobs/report.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // The route answers 413 before parsing anything larger.
  if (size > trainwatch::jobs::kMaxReportBytes) return -1;
  auto report =
      trainwatch::jobs::parse_node_report(std::string_view(reinterpret_cast<const char*>(data), size));
  if (report) {
    for (const auto& gpu : report->gpus) (void)gpu.memory_pct();
  }
  return 0;
}
