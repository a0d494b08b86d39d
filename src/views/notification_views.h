// JSON views of notification channels and outbox rows, shared by the API
// (/api/v1/notifications, /api/v1/deliveries) and the dashboard's notifications page.
//
// For the public (core/redaction.h) a channel says its name, type and health but not
// where it sends (target: null; that names recipients, topics, chat ids and hosts), and
// errors are null: a receiver's answer can quote the address it refused.
//
// A listed channel (catalog_channel_json) also says where it comes from: "file" (the
// config file: read-only here) or "api" (the API or the dashboard); and, for an admin,
// its settings without secrets and its secret keys as "set" or "not set", never a value:
//   "settings": {"timeout": "5s"}, "secrets": {"url": "set", "secret": "not set", ...}
#pragma once

#include <string_view>

#include <boost/json.hpp>

#include "alerting/channel_catalog.h"
#include "alerting/dispatcher.h"
#include "core/redaction.h"
#include "storage/store.h"

namespace trainwatch::views {

// "failing" (its last attempt failed), "ok" (it has delivered since start) or "unknown".
std::string_view health_word(const alerting::ChannelHealth& health);
boost::json::object channel_json(const alerting::ChannelHealth& health, Audience audience);
boost::json::object delivery_json(const Delivery& delivery, Audience audience);

// A channel of the catalog with its health (nullptr: the dispatcher has not taken it up
// yet); `file_name` names the config file in the read-only reason.
boost::json::object catalog_channel_json(const alerting::CatalogChannel& channel,
                                         const alerting::ChannelHealth* health, Audience audience,
                                         const std::string& file_name);
// The channel's fields an admin may read (channel_spec.h: shows_value), as JSON values.
boost::json::object settings_json(const ChannelConfig& channel);
// Each secret key of the channel's type: "set" or "not set".
boost::json::object secrets_json(const ChannelConfig& channel);

}  // namespace trainwatch::views
