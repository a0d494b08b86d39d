// `trainwatch ping URL [--start | --fail | --exit-code N] [--body TEXT | --body-file F]`:
// one heartbeat ping for scripts and cron jobs. Exit 0 when the server accepted it, 1
// otherwise (with the reason on stderr); never waits longer than the client's bounds.
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <optional>

#include "cli/commands.h"
#include "cli/ping_client.h"

namespace trainwatch::cli {
namespace {

struct PingArgs {
  std::string url;
  bool start = false;
  bool fail = false;
  std::optional<int> exit_code;
  std::optional<std::string> body;
  std::string body_file;
};

int run_ping(const PingArgs& args) {
  PingKind kind = PingKind::kSuccess;
  if (args.start) kind = PingKind::kStart;
  if (args.fail) kind = PingKind::kFail;
  if (args.exit_code) kind = PingKind::kExitCode;
  std::optional<std::string> body = args.body;
  if (!args.body_file.empty()) {
    std::ifstream in(args.body_file, std::ios::binary);
    if (!in) {
      std::cerr << "trainwatch ping: cannot read " << args.body_file << "\n";
      return 1;
    }
    std::string text(kMaxPingBodyBytes, '\0');
    in.read(text.data(), static_cast<std::streamsize>(text.size()));
    text.resize(static_cast<size_t>(in.gcount()));
    body = std::move(text);
  }
  auto sent = send_ping(ping_url(args.url, kind, args.exit_code.value_or(0)), body ? &*body : nullptr,
                        PingClientOptions{});
  if (!sent) {
    std::cerr << "trainwatch ping: " << sent.error().message << "\n";
    return 1;
  }
  return 0;
}

}  // namespace

Command add_ping_command(CLI::App& app) {
  CLI::App* sub = app.add_subcommand("ping", "Send one heartbeat ping (exit 0 when accepted)");
  auto args = std::make_shared<PingArgs>();
  sub->add_option("url", args->url, "The monitor's ping URL, e.g. http://host:8080/ping/TOKEN")->required();
  auto* start = sub->add_flag("--start", args->start, "A run started (its finish must come within grace)");
  auto* fail = sub->add_flag("--fail", args->fail, "The job failed");
  auto* code = sub->add_option("--exit-code", args->exit_code, "The job's exit code (0 is a success)")
                   ->check(CLI::Range(0, 255));
  start->excludes(fail, code);
  fail->excludes(code);
  auto* body =
      sub->add_option("--body", args->body, "Text sent with the ping (the server keeps the first 10 KB)");
  sub->add_option("--body-file", args->body_file, "Send this file's content as the body")->excludes(body);
  return Command{sub, [args] { return run_ping(*args); }};
}

}  // namespace trainwatch::cli
