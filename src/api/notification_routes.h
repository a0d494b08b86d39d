// The alerting part of the API:
//   GET    /api/v1/notifications              channels, where each comes from, and their health
//                                             (targets, errors, settings and which secrets are
//                                             set for admins only; never a secret's value)
//   GET    /api/v1/notifications/{name}       one of them
//   POST   /api/v1/notifications              creates a channel from a JSON object (201)
//   PUT    /api/v1/notifications/{name}       replaces one; a secret left out keeps its value
//   DELETE /api/v1/notifications/{name}       removes one (204)
//   GET    /api/v1/deliveries                 recent outbox rows: ?channel= &monitor= &status= &limit=
//   &before= POST   /api/v1/notifications/{name}/test  sends a test message now; 200 when delivered, 502 when
//   not
// and the trainwatch_notifications_* metric families.
//
// Channel writes go through the channel catalog (alerting/channel_catalog.h: the file's
// channels are read-only, 409) behind views::write_allowed (admin; test sends: editor). A refused body is
// 400 problem+json whose "field" names the key ("url") and whose detail says what was
// found and what is expected.
//
// A test send reaches real people (a PagerDuty trigger pages someone), so it needs write
// access (views/write_access.h: 401/403/429 like every write) and is limited per channel,
// whoever asks: kTestSendLimits, 3 at once and one more every 20 s. Beyond that the
// answer is 429 problem+json with Retry-After and nothing is sent.
#pragma once

#include <memory>

#include "alerting/channel_catalog.h"
#include "alerting/dispatcher.h"
#include "auth/admin_auth.h"
#include "auth/bucket_table.h"
#include "core/clock.h"
#include "core/prometheus.h"
#include "http/server.h"
#include "storage/store.h"

namespace trainwatch::api {

// Test sends per channel: 3 at once, then one every 20 s; there are at most kMaxChannels
// channels, so the key bound (1,000) is never the one that binds in practice.
inline constexpr auth::BucketLimits kTestSendLimits{3, Millis(20'000), 1'000};

struct NotificationContext {
  alerting::Dispatcher& dispatcher;
  alerting::ChannelCatalog& channels;
  Store& store;
  auth::AdminAuth& auth;
  const Clock& clock;
  // Test sends per channel (kTestSendLimits), shared with the dashboard's test button.
  std::shared_ptr<auth::BucketTable> test_sends;
};

void add_notification_routes(http::Router& router, const NotificationContext& context);
void write_notification_metrics(const alerting::Dispatcher& dispatcher, PrometheusWriter& w);

}  // namespace trainwatch::api
