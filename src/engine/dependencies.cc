#include "engine/dependencies.h"

namespace trainwatch::engine {

std::string explaining_parent(const std::vector<std::string>& depends_on,
                              const std::function<bool(const std::string&)>& is_down) {
  for (const auto& parent : depends_on) {
    if (is_down(parent)) return parent;
  }
  return "";
}

}  // namespace trainwatch::engine
