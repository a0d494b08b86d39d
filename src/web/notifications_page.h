// The dashboard's /notifications page: every channel with its health (in words and an
// icon), queue and last error; a "send a test" button per channel for a logged-in admin;
// and the delivery log (the outbox's newest rows), filtered by channel and status.
#pragma once

#include <memory>

#include "alerting/dispatcher.h"
#include "auth/bucket_table.h"
#include "http/server.h"
#include "web/routes.h"

namespace trainwatch::web {

struct NotificationsPageContext {
  WebContext web;
  alerting::Dispatcher& dispatcher;
  // Test sends per channel, shared with the API's (api/notification_routes.h): the limit
  // is the channel's, whichever way the test is asked for.
  std::shared_ptr<auth::BucketTable> test_sends;
};

void add_notifications_page(http::Router& router, const NotificationsPageContext& context);

}  // namespace trainwatch::web
