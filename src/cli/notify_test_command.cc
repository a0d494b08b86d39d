// `trainwatch notify-test --config FILE CHANNEL`: sends one test message through a
// configured channel, without a server, and says whether the provider accepted it.
// Exit 0 when delivered, 1 when not (the reason on stderr), 2 for a bad config or name.
#include <iostream>
#include <memory>
#include <random>

#include <boost/asio/io_context.hpp>

#include "alerting/channels.h"
#include "alerting/message.h"
#include "alerting/retry_policy.h"
#include "alerting/transport.h"
#include "cli/checked_config.h"
#include "cli/commands.h"

namespace trainwatch::cli {
namespace {

struct NotifyTestOptions {
  std::string config_path;
  std::string channel;
};

int notify_test(const NotifyTestOptions& options) {
  LoadedConfig loaded = load_checked_config(options.config_path);
  for (const auto& error : loaded.errors) std::cerr << error.to_string() << "\n";
  if (!loaded.config) return 2;
  std::vector<ConfigError> errors;
  auto channels = alerting::build_channels(*loaded.config, errors);
  const alerting::Channel* channel = nullptr;
  std::string names;
  for (const auto& c : channels) {
    if (c.name == options.channel) channel = &c;
    names += (names.empty() ? "" : ", ") + c.name;
  }
  if (channel == nullptr) {
    std::cerr << "no channel named '" << options.channel
              << "'; the config has: " << (names.empty() ? "none" : names) << "\n";
    return 2;
  }

  SystemClock clock;
  boost::asio::io_context io;
  alerting::Transport transport(io, loaded.config->server.allow_local_channel_targets);
  alerting::AlertEvent event;
  event.kind = alerting::EventKind::kTest;
  event.monitor = channel->name;
  event.at = clock.system_time();
  const alerting::Message message = alerting::channel_message(*channel, event, event.at);
  // A template's text is shown before it is sent: what the team will read.
  if (message.templated) std::cout << channel->name << " (template): " << *message.templated << "\n";
  auto request = channel->provider->build(event, message, 0, event.at);
  request.timeout = channel->timeout;
  int exit_code = 1;
  transport.send(request, [&](const alerting::SendOutcome& o) {
    const auto verdict = alerting::judge_attempt(o.transport_ok, o.permanent, o.status);
    if (verdict == alerting::AttemptVerdict::kDelivered) {
      std::cout << channel->name << " (" << channel->type << ", " << channel->provider->target()
                << "): delivered in " << static_cast<int64_t>(o.latency_ms) << " ms\n";
      exit_code = 0;
    } else {
      std::cerr << channel->name << " (" << channel->type << ", " << channel->provider->target()
                << "): not delivered: " << o.error << "\n";
    }
  });
  io.run();
  return exit_code;
}

}  // namespace

Command add_notify_test_command(CLI::App& app) {
  CLI::App* sub = app.add_subcommand("notify-test", "Send a test message through one notification channel");
  auto options = std::make_shared<NotifyTestOptions>();
  options->config_path = kInstalledConfigPath;
  sub->add_option("-c,--config", options->config_path, "The YAML config file")->capture_default_str();
  sub->add_option("channel", options->channel, "The channel's name (notifications[].name)")->required();
  return Command{sub, [options] { return notify_test(*options); }};
}

}  // namespace trainwatch::cli
