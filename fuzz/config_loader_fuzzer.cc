// The YAML config loader over any text: it must report errors, never crash, whatever
// `trainwatch check` or a SIGHUP reload is given. Also the API's maintenance window
// reader, which takes the same entries one at a time.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "config/loader.h"

namespace {

// `${NAME}` references: a few are set, the rest unset (an error the loader reports).
std::optional<std::string> fuzz_env(const std::string& name) {
  if (name == "TOKEN") return std::string("0123456789abcdef0123");
  if (name == "EMPTY") return std::string();
  return std::nullopt;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  trainwatch::LoadedConfig loaded = trainwatch::load_config_text(text, "fuzz.yaml", fuzz_env);
  for (const auto& error : loaded.errors) (void)error.to_string();
  trainwatch::LoadedWindow window = trainwatch::load_window_text(text, "fuzz.json", fuzz_env);
  for (const auto& error : window.errors) (void)error.to_string();
  return 0;
}
