// GET /metrics: the server's Prometheus exposition.
#pragma once

#include <string>

#include "engine/engine.h"

namespace trainwatch::api {

// `store`, when given, adds its write health (failures by reason, refused pings).
std::string render_metrics(const engine::Engine& engine, const Store* store = nullptr);

}  // namespace trainwatch::api
