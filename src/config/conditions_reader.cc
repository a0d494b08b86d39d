#include "config/conditions_reader.h"

#include <algorithm>

namespace trainwatch::config_detail {

void read_conditions(Section& s, std::string_view type, std::initializer_list<std::string_view> placeholders,
                     bool json_paths, std::vector<Condition>& out) {
  auto conditions = s.string_list("conditions");
  if (!conditions) return;
  YAML::Node list = s.raw("conditions");
  for (size_t i = 0; i < conditions->size(); ++i) {
    const std::string key = s.key_path("conditions") + "[" + std::to_string(i) + "]";
    auto condition = Condition::parse((*conditions)[i]);
    if (!condition) {
      s.diag().error(list[i].Mark(), key, condition.error().message);
      continue;
    }
    std::string_view placeholder = condition->placeholder();
    if (json_paths && placeholder.starts_with("[BODY]")) placeholder = "[BODY]";
    if (std::find(placeholders.begin(), placeholders.end(), placeholder) == placeholders.end()) {
      std::string expected;
      size_t index = 0;
      for (std::string_view p : placeholders) {
        if (index > 0) expected += index + 1 == placeholders.size() ? " or " : ", ";
        expected += p;
        ++index;
      }
      s.diag().error(list[i].Mark(), key,
                     "found " + condition->placeholder() + ", which " + std::string(type) +
                         " monitors do not have; expected " + expected);
      continue;
    }
    out.push_back(std::move(*condition));
  }
}

}  // namespace trainwatch::config_detail
