#include "web/assets.h"

namespace trainwatch::web {

std::optional<std::string_view> find_asset(std::string_view name) {
  for (const EmbeddedFile& f : embedded_files()) {
    if (f.name == name) return f.data;
  }
  return std::nullopt;
}

std::string_view content_type_for(std::string_view name) {
  if (name.ends_with(".css")) return "text/css; charset=utf-8";
  if (name.ends_with(".js")) return "text/javascript; charset=utf-8";
  if (name.ends_with(".svg")) return "image/svg+xml";
  return "application/octet-stream";
}

}  // namespace trainwatch::web
