// The alerting part of the API:
//   GET  /api/v1/notifications              channels and their health (targets and
//                                           errors for admins only)
//   GET  /api/v1/deliveries                 recent outbox rows: ?channel= &monitor= &status= &limit= &before=
//   POST /api/v1/notifications/{name}/test  sends a test message now; 200 when delivered, 502 when not
// and the trainwatch_notifications_* metric families.
#pragma once

#include "alerting/dispatcher.h"
#include "auth/admin_auth.h"
#include "core/prometheus.h"
#include "http/server.h"
#include "storage/store.h"

namespace trainwatch::api {

struct NotificationContext {
  alerting::Dispatcher& dispatcher;
  Store& store;
  auth::AdminAuth& auth;  // who may read targets and errors (api/audience.h)
};

void add_notification_routes(http::Router& router, const NotificationContext& context);
void write_notification_metrics(const alerting::Dispatcher& dispatcher, PrometheusWriter& w);

}  // namespace trainwatch::api
