// The JSON shapes of the API, in one place so every endpoint spells a monitor, a result
// and an incident the same way. Times are RFC 3339 UTC strings; absent values are null.
#pragma once

#include <boost/json.hpp>

#include "core/model.h"
#include "engine/engine.h"

namespace trainwatch::api {

boost::json::object monitor_summary(const MonitorView& view);
boost::json::object check_result_json(const CheckResult& result);
boost::json::object incident_json(const Incident& incident);
boost::json::object ping_json(const PingRecord& ping);
// A heartbeat monitor's period, grace, last ping, lateness and open start.
boost::json::object heartbeat_json(const MonitorView& view);

}  // namespace trainwatch::api
