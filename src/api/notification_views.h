// JSON views of notification channels and outbox rows, shared by the API
// (/api/v1/notifications, /api/v1/deliveries) and the dashboard's notifications page.
#pragma once

#include <string_view>

#include <boost/json.hpp>

#include "alerting/dispatcher.h"
#include "storage/store.h"

namespace trainwatch::api {

// "failing" (its last attempt failed), "ok" (it has delivered since start) or "unknown".
std::string_view health_word(const alerting::ChannelHealth& health);
boost::json::object channel_json(const alerting::ChannelHealth& health);
boost::json::object delivery_json(const Delivery& delivery);

}  // namespace trainwatch::api
