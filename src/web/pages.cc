#include "web/pages.h"

#include <cmath>
#include <cstdio>

#include <kainjow/mustache.hpp>

#include "web/assets.h"

namespace trainwatch::web {
namespace {

namespace mustache = kainjow::mustache;

std::string template_text(std::string_view name) {
  auto text = find_asset("templates/" + std::string(name) + ".mustache");
  return text ? std::string(*text) : std::string();
}

std::string number_text(double v) {
  if (std::floor(v) == v && std::fabs(v) < 1e15) return std::to_string(static_cast<int64_t>(v));
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.2f", v);
  return buffer;
}

mustache::data to_data(const boost::json::value& v) {
  switch (v.kind()) {
    case boost::json::kind::object: {
      mustache::data out(mustache::data::type::object);
      for (const auto& [key, value] : v.as_object()) out.set(std::string(key), to_data(value));
      return out;
    }
    case boost::json::kind::array: {
      mustache::data out(mustache::data::type::list);
      for (const auto& item : v.as_array()) out.push_back(to_data(item));
      return out;
    }
    case boost::json::kind::string: return mustache::data(std::string(v.as_string()));
    case boost::json::kind::bool_: return mustache::data(v.as_bool());
    case boost::json::kind::int64: return mustache::data(std::to_string(v.as_int64()));
    case boost::json::kind::uint64: return mustache::data(std::to_string(v.as_uint64()));
    case boost::json::kind::double_: return mustache::data(number_text(v.as_double()));
    case boost::json::kind::null: return mustache::data(false);
  }
  return mustache::data(false);
}

}  // namespace

std::string render_page(std::string_view name, const boost::json::object& model) {
  mustache::mustache tmpl(template_text(name));
  if (!tmpl.is_valid()) return "template " + std::string(name) + ": " + tmpl.error_message();
  mustache::data data = to_data(model);
  // Templates named layout_* or part_* are partials every template can include
  // ({{>layout_head}}, {{>part_job_live}}). Partials share the model's namespace, hence
  // the prefixes: a partial named like a model key would hide it.
  constexpr std::string_view kPrefix = "templates/", kSuffix = ".mustache";
  for (const EmbeddedFile& file : embedded_files()) {
    if (!file.name.starts_with(kPrefix) || !file.name.ends_with(kSuffix)) continue;
    const std::string_view partial =
        file.name.substr(kPrefix.size(), file.name.size() - kPrefix.size() - kSuffix.size());
    if (!partial.starts_with("layout_") && !partial.starts_with("part_")) continue;
    const std::string_view text = file.data;
    data.set(std::string(partial), mustache::partial([text] { return std::string(text); }));
  }
  return tmpl.render(data);
}

}  // namespace trainwatch::web
