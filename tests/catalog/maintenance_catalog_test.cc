#include "catalog/maintenance_catalog.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <future>

#include "core/time_format.h"
#include "fakes/manual_clock.h"
#include "storage/sqlite/sqlite_store.h"

namespace trainwatch::catalog {
namespace {

namespace fs = std::filesystem;

bool known(const std::string& name) { return name == "rank0-health" || name == "chat-server"; }

std::string error_of(const Result<MaintenanceWindow>& r) {
  return r ? std::string("(valid)") : r.error().message;
}

TEST(ParseApiWindow, ReadsTheSameKeysAsTheFile) {
  auto w = parse_api_window(
      R"({"monitors": ["rank0-health"], "start": "2026-05-01T02:00:00Z", "end": "2026-05-01T04:00:00Z"})",
      known);
  ASSERT_TRUE(w) << error_of(w);
  EXPECT_EQ(w->monitors, std::vector<std::string>{"rank0-health"});
  EXPECT_EQ(format_rfc3339(*w->end), "2026-05-01T04:00:00.000Z");

  auto weekly = parse_api_window(R"({"tags": ["inference"], "weekly": "sun 02:00-04:00"})", known);
  ASSERT_TRUE(weekly) << error_of(weekly);
  EXPECT_TRUE(weekly->recurring);
  EXPECT_EQ(weekly->weekday, 0);
}

TEST(ParseApiWindow, ErrorsNameTheKey) {
  EXPECT_EQ(
      error_of(parse_api_window(
          R"({"monitors": ["rank0-health"], "start": "tomorrow", "end": "2026-05-01T04:00:00Z"})", known)),
      "start: found 'tomorrow'; expected an RFC 3339 time such as 2026-05-01T02:00:00Z");
  EXPECT_EQ(error_of(parse_api_window(R"({"monitors": ["rank0-health"], "daily": "25:00-26:00"})", known)),
            "daily: found '25:00-26:00'; expected HH:MM-HH:MM in UTC such as 02:00-03:30");
  EXPECT_NE(error_of(parse_api_window(
                         R"({"monitors": ["rank0-health"], "daily": "01:00-02:00", "colour": "red"})", known))
                .find("colour"),
            std::string::npos);
  EXPECT_EQ(
      error_of(parse_api_window(R"({"monitors": ["rank0-health", "typo"], "daily": "01:00-02:00"})", known)),
      "monitors[1]: found 'typo'; expected the name of a monitor");
  EXPECT_EQ(error_of(parse_api_window(R"({"daily": "01:00-02:00"})", known)),
            "monitors: missing; expected `monitors: [names]` or `tags: [tags]`");
  EXPECT_EQ(error_of(parse_api_window("[1, 2]", known)),
            "the body must be one JSON object describing a maintenance window");
  EXPECT_EQ(error_of(parse_api_window("{not json", known)),
            "the body must be one JSON object describing a maintenance window");
  // The server's environment is not the client's to read.
  EXPECT_NE(error_of(parse_api_window(R"({"tags": ["${HOME}"], "daily": "01:00-02:00"})", known)), "(valid)");
}

class MaintenanceCatalogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("trainwatch-maintenance-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    open();
  }
  void TearDown() override {
    catalog_.reset();
    store_.reset();
    fs::remove_all(dir_);
  }

  // (Re)opens the store and a catalog on it, as a restart does.
  void open() {
    catalog_.reset();
    store_.reset();
    auto store = sqlite::SqliteStore::open((dir_ / "trainwatch.db").string());
    ASSERT_TRUE(store.ok()) << store.error().message;
    store_ = std::move(store).value();
    catalog_ = std::make_unique<MaintenanceCatalog>(*store_, clock_, known,
                                                    [this](const std::vector<MaintenanceWindow>& w) {
                                                      applied_ = w;
                                                      ++applies_;
                                                    });
    auto skipped = catalog_->load();
    ASSERT_TRUE(skipped.ok());
    EXPECT_TRUE(skipped->empty());
  }

  Result<std::string> create(const std::string& body) {
    std::promise<Result<std::string>> done;
    catalog_->create(body, [&done](Result<std::string> r) { done.set_value(std::move(r)); });
    return done.get_future().get();
  }
  Result<std::string> remove(const std::string& id) {
    std::promise<Result<std::string>> done;
    catalog_->remove(id, [&done](Result<std::string> r) { done.set_value(std::move(r)); });
    return done.get_future().get();
  }

  static std::vector<MaintenanceWindow> yaml_windows() {
    MaintenanceWindow w;
    w.tags = {"inference"};
    w.recurring = true;
    w.start_minute = 23 * 60 + 30;
    w.length = Millis(3'600'000);
    return {w};
  }

  fs::path dir_;
  testing::ManualClock clock_{from_unix_ms(1'777'600'800'000)};  // 2026-05-01T02:00:00Z
  std::unique_ptr<sqlite::SqliteStore> store_;
  std::unique_ptr<MaintenanceCatalog> catalog_;
  std::vector<MaintenanceWindow> applied_;
  int applies_ = 0;
};

constexpr const char* kNow =
    R"({"monitors": ["rank0-health"], "start": "2026-05-01T01:00:00Z", "end": "2026-05-01T03:00:00Z"})";

TEST_F(MaintenanceCatalogTest, APIWindowsJoinTheFilesAndEveryChangeIsApplied) {
  catalog_->set_yaml(yaml_windows());
  EXPECT_EQ(applies_, 1);
  EXPECT_EQ(applied_.size(), 1u);

  auto id = create(kNow);
  ASSERT_TRUE(id) << id.error().message;
  EXPECT_EQ(*id, "api-1");
  EXPECT_EQ(applies_, 2);
  ASSERT_EQ(applied_.size(), 2u);
  EXPECT_EQ(applied_[1].monitors, std::vector<std::string>{"rank0-health"});

  auto listed = catalog_->list();
  ASSERT_EQ(listed.size(), 2u);
  EXPECT_EQ(listed[0].id, "yaml-0");
  EXPECT_FALSE(listed[0].from_api);
  EXPECT_EQ(listed[1].id, "api-1");
  EXPECT_TRUE(listed[1].from_api);
  ASSERT_TRUE(listed[1].created.has_value());
  EXPECT_EQ(*listed[1].created, clock_.system_time());

  // A reload keeps the API's windows.
  catalog_->set_yaml({});
  EXPECT_EQ(applied_.size(), 1u);
  catalog_->set_yaml(yaml_windows());
  EXPECT_EQ(applied_.size(), 2u);
}

TEST_F(MaintenanceCatalogTest, TheFilesWindowsAreReadOnlyAndUnknownIdsAreNotFound) {
  catalog_->set_yaml(yaml_windows());
  auto yaml = remove("yaml-0");
  ASSERT_FALSE(yaml);
  EXPECT_EQ(yaml.error().code, "maintenance.read_only");
  for (const char* id : {"yaml-1", "api-1", "api-x", "7", ""}) {
    auto r = remove(id);
    ASSERT_FALSE(r) << id;
    EXPECT_EQ(r.error().code, "maintenance.not_found") << id;
  }
  auto invalid = create(R"({"monitors": ["typo"], "daily": "01:00-02:00"})");
  ASSERT_FALSE(invalid);
  EXPECT_EQ(invalid.error().code, "maintenance.invalid");
  EXPECT_EQ(applies_, 1);  // nothing changed, nothing applied
}

TEST_F(MaintenanceCatalogTest, WindowsSurviveARestartAndIdsAreNeverReused) {
  ASSERT_TRUE(create(kNow));
  ASSERT_TRUE(create(R"({"tags": ["inference"], "weekly": "sun 02:00-04:00"})"));
  ASSERT_TRUE(remove("api-2"));
  EXPECT_EQ(catalog_->list().size(), 1u);

  open();
  catalog_->set_yaml({});
  auto listed = catalog_->list();
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].id, "api-1");
  EXPECT_EQ(applied_.size(), 1u);
  // api-2 was deleted before the restart: the next window is api-3, not api-2 again.
  auto next = create(kNow);
  ASSERT_TRUE(next);
  EXPECT_EQ(*next, "api-3");
}

TEST_F(MaintenanceCatalogTest, AtTheBoundOneMoreIsRefusedUntilOneIsDeleted) {
  std::atomic<int> created{0};
  for (size_t i = 0; i < MaintenanceCatalog::kMaxApiWindows; ++i) {
    catalog_->create(kNow, [&created](Result<std::string> r) { created += r ? 1 : 0; });
  }
  // Refused at once: windows still being written count against the bound.
  auto full = create(kNow);
  ASSERT_FALSE(full);
  EXPECT_EQ(full.error().code, "maintenance.full");
  store_->flush();
  EXPECT_EQ(created.load(), static_cast<int>(MaintenanceCatalog::kMaxApiWindows));
  ASSERT_TRUE(remove("api-1"));
  EXPECT_TRUE(create(kNow));
}

TEST_F(MaintenanceCatalogTest, AtTheBoundANewWindowReplacesTheOneThatEndedFirst) {
  constexpr const char* kLater =
      R"({"monitors": ["rank0-health"], "start": "2026-05-01T01:00:00Z", "end": "2026-05-01T05:00:00Z"})";
  ASSERT_TRUE(create(kLater));  // api-1 ends last
  for (size_t i = 1; i < MaintenanceCatalog::kMaxApiWindows; ++i)
    catalog_->create(kNow, [](Result<std::string>) {});
  store_->flush();
  EXPECT_FALSE(create(kNow)) << "every window is still in force";
  clock_.advance(Millis(2 * 3'600'000));  // 04:00: all but api-1 have ended
  auto next = create(kNow);
  ASSERT_TRUE(next) << next.error().message;
  auto listed = catalog_->list();
  EXPECT_EQ(listed.size(), MaintenanceCatalog::kMaxApiWindows);
  EXPECT_EQ(listed.front().id, "api-1");
  EXPECT_EQ(listed[1].id, "api-3") << "api-2, the first to end, made room";
  open();  // and so did its row
  EXPECT_EQ(catalog_->list().size(), MaintenanceCatalog::kMaxApiWindows);
}

// Replicas on one database: each holds its own catalog, and each follows the others'.
TEST_F(MaintenanceCatalogTest, AnotherReplicasCreationsAndDeletionsAreFollowedAndIdsDoNotCollide) {
  std::vector<MaintenanceWindow> other_applied;
  MaintenanceCatalog other(*store_, clock_, known,
                           [&other_applied](const std::vector<MaintenanceWindow>& w) { other_applied = w; });
  ASSERT_TRUE(other.load());
  other.set_yaml({});

  ASSERT_TRUE(create(kNow));
  auto followed = other.follow_store();
  ASSERT_TRUE(followed);
  EXPECT_TRUE(*followed);
  ASSERT_EQ(other.list().size(), 1u);
  EXPECT_EQ(other.list()[0].id, "api-1");
  ASSERT_EQ(other_applied.size(), 1u);
  EXPECT_EQ(other_applied[0].monitors, std::vector<std::string>{"rank0-health"});
  EXPECT_FALSE(*other.follow_store());  // nothing new

  // The other replica's next window takes the next id, not the one this replica used.
  std::promise<Result<std::string>> done;
  other.create(R"({"tags": ["inference"], "weekly": "sun 02:00-04:00"})",
               [&done](Result<std::string> r) { done.set_value(std::move(r)); });
  auto second = done.get_future().get();
  ASSERT_TRUE(second) << second.error().message;
  EXPECT_EQ(*second, "api-2");

  ASSERT_TRUE(remove("api-1"));
  EXPECT_TRUE(*catalog_->follow_store());
  auto listed = catalog_->list();
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0].id, "api-2");
  EXPECT_TRUE(*other.follow_store());
  ASSERT_EQ(other.list().size(), 1u);
  EXPECT_EQ(other.list()[0].id, "api-2");
  EXPECT_EQ(other_applied.size(), 1u);
  EXPECT_EQ(other_applied[0].tags, std::vector<std::string>{"inference"});
}

}  // namespace
}  // namespace trainwatch::catalog
