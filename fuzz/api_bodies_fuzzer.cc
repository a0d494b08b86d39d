// The JSON bodies of the API's writes: a monitor (POST /api/v1/monitors, PUT
// /api/v1/monitors/{name}) and a maintenance window (POST /api/v1/maintenance). Both go
// through the config loader's readers; errors must name the key, never crash.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "catalog/maintenance_catalog.h"
#include "catalog/monitor_catalog.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string body(reinterpret_cast<const char*>(data), size);
  // A config file's notifications, for the monitor's `notify`.
  static const std::vector<trainwatch::ChannelConfig> channels = {
      trainwatch::ChannelConfig{.name = "ops", .type = "webhook"},
      trainwatch::ChannelConfig{.name = "oncall", .type = "slack", .is_default = true},
  };
  auto monitor = trainwatch::catalog::parse_api_monitor(body, channels);
  if (!monitor) (void)monitor.error().message.size();
  auto window =
      trainwatch::catalog::parse_api_window(body, [](const std::string& name) { return name == "trainer"; });
  if (!window) (void)window.error().message.size();
  return 0;
}
