// JSON views of notification channels and outbox rows, shared by the API
// (/api/v1/notifications, /api/v1/deliveries) and the dashboard's notifications page.
//
// For the public (core/redaction.h) a channel says its name, type and health but not
// where it sends (target: null; that names recipients, topics, chat ids and hosts), and
// errors are null: a receiver's answer can quote the address it refused.
#pragma once

#include <string_view>

#include <boost/json.hpp>

#include "alerting/dispatcher.h"
#include "core/redaction.h"
#include "storage/store.h"

namespace trainwatch::views {

// "failing" (its last attempt failed), "ok" (it has delivered since start) or "unknown".
std::string_view health_word(const alerting::ChannelHealth& health);
boost::json::object channel_json(const alerting::ChannelHealth& health, Audience audience);
boost::json::object delivery_json(const Delivery& delivery, Audience audience);

}  // namespace trainwatch::views
