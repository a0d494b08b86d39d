// The dashboard's /notifications page: every channel with its health (in words and an
// icon), queue and last error; a "send a test" button per channel for a logged-in admin;
// and the delivery log (the outbox's newest rows), filtered by channel and status.
#pragma once

#include "alerting/dispatcher.h"
#include "http/server.h"
#include "web/routes.h"

namespace trainwatch::web {

struct NotificationsPageContext {
  WebContext web;
  alerting::Dispatcher& dispatcher;
};

void add_notifications_routes(http::Router& router, const NotificationsPageContext& context);

}  // namespace trainwatch::web
