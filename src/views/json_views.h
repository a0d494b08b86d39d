// The JSON shapes of the API, in one place so every endpoint spells a monitor, a result
// and an incident the same way. Times are RFC 3339 UTC strings; absent values are null.
//
// Each view takes its reader's Audience (core/redaction.h; views/audience.h tells it from a
// request). The public form keeps the shape and leaves out what may be secret: values a
// target returned in a cause are "(redacted)", a monitor URL loses userinfo and query, a
// ping's body, source address and user agent are null.
#pragma once

#include <boost/json.hpp>

#include "core/model.h"
#include "core/redaction.h"
#include "engine/engine.h"

namespace trainwatch::views {

boost::json::object monitor_summary(const engine::MonitorView& view, Audience audience);
// Whether an admin's monitor_summary differs from the public one (a URL with secrets, a
// cause quoting a body): lists keep a second copy only for those monitors.
bool summary_has_secrets(const engine::MonitorView& view);
boost::json::object check_result_json(const CheckResult& result, Audience audience);
boost::json::object incident_json(const Incident& incident, Audience audience);
boost::json::object ping_json(const PingRecord& ping, Audience audience);
// A heartbeat monitor's period or schedule, grace, last ping, lateness, open start and
// when the next ping is due.
boost::json::object heartbeat_json(const engine::MonitorView& view, Audience audience);

}  // namespace trainwatch::views
