// What readers see of a notification channel: where it comes from, and for an admin its
// settings and which secrets are set, never a secret's value; the public sees neither.
#include "views/notification_views.h"

#include <gtest/gtest.h>

#include "core/json_text.h"

namespace trainwatch::views {
namespace {

alerting::CatalogChannel stored_hook() {
  auto [spec, error] = alerting::parse_channel_spec(
      R"({"name": "hook", "type": "webhook", "url": "http://127.0.0.1:9/hook/T0k3n", "timeout": "5s",
          "headers": {"Authorization": "Bearer s3cr3t"}})",
      nullptr);
  EXPECT_TRUE(spec);
  return alerting::CatalogChannel{spec->config, false};
}

TEST(CatalogChannelJson, AnAdminSeesSettingsAndWhichSecretsAreSetNeverTheirValues) {
  const std::string text =
      json_text(catalog_channel_json(stored_hook(), nullptr, Audience::kAdmin, "trainwatch.yaml"));
  EXPECT_EQ(text.find("T0k3n"), std::string::npos) << text;
  EXPECT_EQ(text.find("s3cr3t"), std::string::npos) << text;
  boost::json::object o = catalog_channel_json(stored_hook(), nullptr, Audience::kAdmin, "trainwatch.yaml");
  EXPECT_EQ(json_text(o["settings"]), R"({"timeout":"5s"})");
  EXPECT_EQ(json_text(o["secrets"]), R"({"url":"set","secret":"not set","headers":"set"})");
  EXPECT_EQ(o["source"], "api");
  EXPECT_EQ(o["read_only"], false);
}

TEST(CatalogChannelJson, TheFilesChannelsSayTheyAreReadOnlyAndThePublicSeesNoSettings) {
  alerting::CatalogChannel file = stored_hook();
  file.from_file = true;
  boost::json::object o = catalog_channel_json(file, nullptr, Audience::kPublic, "trainwatch.yaml");
  EXPECT_EQ(o["source"], "file");
  EXPECT_EQ(o["read_only"], true);
  EXPECT_EQ(o["read_only_reason"], "from trainwatch.yaml, read-only");
  EXPECT_FALSE(o.contains("settings"));
  EXPECT_FALSE(o.contains("secrets"));
  EXPECT_TRUE(o["target"].is_null());
}

}  // namespace
}  // namespace trainwatch::views
