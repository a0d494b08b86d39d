// GET /metrics: the server's Prometheus exposition.
#pragma once

#include <string>

#include "engine/engine.h"

namespace trainwatch::api {

std::string render_metrics(const Engine& engine);

}  // namespace trainwatch::api
