#include "storage/pg_server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <pqxx/pqxx>

namespace trainwatch::testing {
namespace {

namespace fs = std::filesystem;

constexpr const char* kBin = "/usr/lib/postgresql/15/bin";

uint16_t free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  uint16_t port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  ::close(fd);
  return port;
}

Status run(const std::string& command, const std::string& what, const std::string& log) {
  if (std::system(command.c_str()) != 0) {
    return make_error("test.pg", what + " failed: " + command + " (see " + log + ")");
  }
  return Ok{};
}

class PgEnvironment : public ::testing::Environment {
 public:
  void TearDown() override { PgServer::instance().shut_down(); }
};

[[maybe_unused]] const auto* const kEnvironment = ::testing::AddGlobalTestEnvironment(new PgEnvironment);

}  // namespace

PgServer& PgServer::instance() {
  static PgServer server;
  return server;
}

Status PgServer::ensure_started() {
  if (running_) return Ok{};
  if (!initialized_) {
    if (!fs::exists(fs::path(kBin) / "initdb") || !fs::exists(fs::path(kBin) / "pg_ctl")) {
      return make_error("test.pg", std::string("PostgreSQL 15 is not installed (no ") + kBin +
                                       "/initdb); run scripts/setup.sh");
    }
    std::string tmpl = (fs::temp_directory_path() / "tw-pg-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) return make_error("test.pg", "cannot make a temp dir");
    dir_ = tmpl;
    port_ = free_port();
    const std::string log = dir_ + "/initdb.log";
    if (auto ok = run("chown postgres " + dir_ + " && runuser -u postgres -- " + kBin + "/initdb -D " + dir_ +
                          "/data -A trust -U postgres --no-sync >" + log + " 2>&1",
                      "initdb", log);
        !ok) {
      return ok;
    }
    initialized_ = true;
  }
  return start();
}

Status PgServer::start() {
  const std::string log = dir_ + "/server.log";
  // fsync off: these tests check what a store does, not what the disk keeps after a crash.
  auto started = run("runuser -u postgres -- " + std::string(kBin) + "/pg_ctl -D " + dir_ + "/data -l " +
                         log + " -w -o \"-p " + std::to_string(port_) +
                         " -c listen_addresses=127.0.0.1 -c unix_socket_directories=" + dir_ +
                         " -c fsync=off\" start >/dev/null",
                     "pg_ctl start", log);
  running_ = started.ok();
  return started;
}

Status PgServer::stop() {
  running_ = false;
  return run("runuser -u postgres -- " + std::string(kBin) + "/pg_ctl -D " + dir_ +
                 "/data -m fast -w stop >/dev/null",
             "pg_ctl stop", dir_ + "/server.log");
}

void PgServer::shut_down() {
  if (running_) (void)stop();
  if (!dir_.empty()) {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
}

Result<std::string> PgServer::create_database() {
  if (Status started = ensure_started(); !started) return started.error();
  const std::string base = "postgresql://postgres@127.0.0.1:" + std::to_string(port_) + "/";
  const std::string name = "tw_" + std::to_string(::getpid()) + "_" + std::to_string(++next_database_);
  try {
    pqxx::connection admin(base + "postgres");
    pqxx::nontransaction tx(admin);
    tx.exec("CREATE DATABASE " + name);
  } catch (const std::exception& e) {
    return make_error("test.pg", std::string("cannot create a database: ") + e.what());
  }
  return base + name;
}

}  // namespace trainwatch::testing
