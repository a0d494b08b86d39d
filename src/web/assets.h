// The templates and static files embedded at build time (cmake/EmbedAssets.cmake turns
// the sources under src/web/ and uPlot from npm into embedded_assets.cc).
#pragma once

#include <optional>
#include <span>
#include <string_view>

namespace trainwatch::web {

struct EmbeddedFile {
  std::string_view name;  // "templates/status_page.mustache", "static/style.css"
  std::string_view data;
};

std::span<const EmbeddedFile> embedded_files();

// The file's bytes; nullopt for an unknown name.
std::optional<std::string_view> find_asset(std::string_view name);
// "text/css; charset=utf-8" and so on, by extension.
std::string_view content_type_for(std::string_view name);

}  // namespace trainwatch::web
