// The dashboard's /notifications page: every channel with where it comes from, its health
// (in words and an icon), queue and last error; a "send a test" button per channel for a
// logged-in editor; an admin also adds channels, and edits and removes those not from the
// config file (GET /notifications/{name}/edit, POST /notifications,
// /notifications/{name}/edit, /notifications/{name}/delete: web/channel_form.h, through
// the channel catalog); and the delivery log (the outbox's newest rows), filtered
// by channel and status. Secrets are never shown: an edit form's secrets start empty.
#pragma once

#include <memory>

#include "alerting/channel_catalog.h"
#include "alerting/dispatcher.h"
#include "auth/bucket_table.h"
#include "http/server.h"
#include "web/web_context.h"

namespace trainwatch::web {

struct NotificationsPageContext {
  WebContext web;
  alerting::Dispatcher& dispatcher;
  alerting::ChannelCatalog& channels;
  // Test sends per channel, shared with the API's (api/notification_routes.h): the limit
  // is the channel's, whichever way the test is asked for.
  std::shared_ptr<auth::BucketTable> test_sends;
};

void add_notifications_page(http::Router& router, const NotificationsPageContext& context);

}  // namespace trainwatch::web
