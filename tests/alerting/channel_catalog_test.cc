// The channel catalog on a real SQLite store: the file's channels and the stored ones,
// read-only file channels, name clashes, removal of a channel monitors notify, the bound,
// restarts, and another replica's writes followed from the store.
#include "alerting/channel_catalog.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <future>

#include "alerting/channels.h"
#include "storage/sqlite/sqlite_store.h"

namespace trainwatch::alerting {
namespace {

namespace fs = std::filesystem;

constexpr const char* kHook =
    R"({"name": "hook", "type": "webhook", "url": "http://127.0.0.1:9/hook/T0k3n"})";

ChannelConfig file_channel(const std::string& name) {
  ChannelConfig c;
  c.name = name;
  c.type = "ntfy";
  c.fields["topic"].text = "alerts";
  return c;
}

std::vector<std::string> names(const std::vector<ChannelConfig>& channels) {
  std::vector<std::string> out;
  for (const auto& c : channels) out.push_back(c.name);
  return out;
}

class ChannelCatalogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("trainwatch-channels-" + std::to_string(::getpid()) + "-" +
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
    store_ = open_store();
    catalog_ = make_catalog(*store_, applied_);
  }
  std::unique_ptr<sqlite::SqliteStore> open_store() {
    auto store = sqlite::SqliteStore::open((dir_ / "trainwatch.db").string());
    EXPECT_TRUE(store.ok()) << store.error().message;
    return std::move(store).value();
  }
  std::unique_ptr<ChannelCatalog> make_catalog(Store& store, std::vector<ChannelConfig>& applied) {
    auto catalog = std::make_unique<ChannelCatalog>(
        store, "trainwatch.yaml", [&applied](const std::vector<ChannelConfig>& merged) { applied = merged; });
    catalog->set_notifying([this](const std::string& channel) {
      return channel == notified_ ? std::vector<std::string>{"rank0-health", "chat-server"}
                                  : std::vector<std::string>{};
    });
    auto skipped = catalog->load();
    EXPECT_TRUE(skipped.ok());
    catalog->set_file({file_channel("oncall")});
    return catalog;
  }

  static ChannelWrite wait(const std::function<void(const ChannelCatalog::Done&)>& call) {
    std::promise<ChannelWrite> done;
    call([&done](const ChannelWrite& w) { done.set_value(w); });
    return done.get_future().get();
  }
  ChannelWrite put(const std::string& name, const std::string& body, bool create) {
    return wait([&](const ChannelCatalog::Done& d) { catalog_->put(name, body, create, d); });
  }
  ChannelWrite remove(const std::string& name) {
    return wait([&](const ChannelCatalog::Done& d) { catalog_->remove(name, d); });
  }
  static std::string code(const ChannelWrite& w) { return w.name ? "ok" : w.name.error().code; }

  fs::path dir_;
  std::unique_ptr<sqlite::SqliteStore> store_;
  std::unique_ptr<ChannelCatalog> catalog_;
  std::vector<ChannelConfig> applied_;
  std::string notified_;
};

TEST_F(ChannelCatalogTest, StoredChannelsJoinTheFilesAndEveryChangeIsApplied) {
  EXPECT_EQ(names(applied_), std::vector<std::string>{"oncall"});
  ChannelWrite created = put("", kHook, true);
  ASSERT_TRUE(created.name) << created.name.error().message;
  EXPECT_EQ(*created.name, "hook");
  EXPECT_EQ(names(applied_), (std::vector<std::string>{"oncall", "hook"}));
  auto listed = catalog_->find("hook");
  ASSERT_TRUE(listed);
  EXPECT_FALSE(listed->from_file);
  EXPECT_TRUE(catalog_->find("oncall")->from_file);

  // An edit without the URL keeps it.
  ChannelWrite edited = put("hook", R"({"type": "webhook", "timeout": "3s"})", false);
  ASSERT_TRUE(edited.name) << edited.name.error().message;
  EXPECT_EQ(catalog_->find("hook")->config.fields.at("url").text, "http://127.0.0.1:9/hook/T0k3n");
  EXPECT_EQ(catalog_->find("hook")->config.fields.at("timeout").text, "3s");

  ChannelWrite removed = remove("hook");
  ASSERT_TRUE(removed.name);
  EXPECT_EQ(names(applied_), std::vector<std::string>{"oncall"});
}

TEST_F(ChannelCatalogTest, TheFilesChannelsAreReadOnlyAndTheirNamesTaken) {
  ChannelWrite edit = put("oncall", R"({"type": "ntfy", "topic": "x"})", false);
  EXPECT_EQ(code(edit), "channel.read_only");
  EXPECT_EQ(edit.name.error().message,
            "'oncall' comes from trainwatch.yaml and is read-only here; edit it there");
  EXPECT_EQ(code(remove("oncall")), "channel.read_only");
  ChannelWrite clash = put("", R"({"name": "oncall", "type": "ntfy", "topic": "x"})", true);
  EXPECT_EQ(code(clash), "channel.exists");
  EXPECT_EQ(clash.field, "name");
  EXPECT_EQ(clash.name.error().message,
            "name: 'oncall' is a channel of trainwatch.yaml; expected a name of its own");
  EXPECT_EQ(code(remove("nope")), "channel.not_found");
  EXPECT_EQ(code(put("nope", R"({"type": "webhook"})", false)), "channel.not_found");
  ASSERT_TRUE(put("", kHook, true).name);
  EXPECT_EQ(code(put("", kHook, true)), "channel.exists");
  // The path names the channel; a body naming another is refused.
  ChannelWrite other = put("hook", R"({"name": "other", "type": "webhook"})", false);
  EXPECT_EQ(code(other), "channel.invalid");
  EXPECT_EQ(other.field, "name");
  ChannelWrite invalid = put("hook", R"({"type": "webhook", "timeout": "soon"})", false);
  EXPECT_EQ(code(invalid), "channel.invalid");
  EXPECT_EQ(invalid.field, "timeout");
}

TEST_F(ChannelCatalogTest, AChannelMonitorsNotifyIsNotRemoved) {
  ASSERT_TRUE(put("", kHook, true).name);
  notified_ = "hook";
  ChannelWrite refused = remove("hook");
  EXPECT_EQ(code(refused), "channel.in_use");
  EXPECT_EQ(refused.name.error().message,
            "'hook' is in the notify list of rank0-health, chat-server; take it out of theirs first");
  EXPECT_TRUE(catalog_->find("hook"));
  notified_ = "";
  EXPECT_EQ(code(remove("hook")), "ok");
}

TEST_F(ChannelCatalogTest, ChannelsSurviveARestartAndAFileThatTakesTheNameHidesTheStoredOne) {
  ASSERT_TRUE(put("", kHook, true).name);
  open();
  EXPECT_EQ(names(applied_), (std::vector<std::string>{"oncall", "hook"}));
  catalog_->set_file({file_channel("oncall"), file_channel("hook")});
  EXPECT_EQ(names(applied_), (std::vector<std::string>{"oncall", "hook"}));
  EXPECT_TRUE(catalog_->find("hook")->from_file);
  catalog_->set_file({file_channel("oncall")});
  EXPECT_FALSE(catalog_->find("hook")->from_file);
}

TEST_F(ChannelCatalogTest, AtTheBoundOneMoreIsRefusedUntilOneIsRemoved) {
  std::vector<ChannelConfig> file;
  for (size_t i = 0; i + 1 < kMaxChannels; ++i) file.push_back(file_channel("f" + std::to_string(i)));
  catalog_->set_file(file);
  ASSERT_TRUE(put("", kHook, true).name);
  ChannelWrite full = put("", R"({"name": "more", "type": "ntfy", "topic": "t"})", true);
  EXPECT_EQ(code(full), "channel.full");
  ASSERT_TRUE(remove("hook").name);
  EXPECT_EQ(code(put("", R"({"name": "more", "type": "ntfy", "topic": "t"})", true)), "ok");
}

TEST_F(ChannelCatalogTest, AnotherReplicasWritesAreFollowedFromTheStore) {
  std::vector<ChannelConfig> other_applied;
  auto other_store = open_store();
  auto other = make_catalog(*other_store, other_applied);
  ASSERT_TRUE(put("", kHook, true).name);
  auto followed = other->follow_store();
  ASSERT_TRUE(followed.ok());
  EXPECT_TRUE(*followed);
  EXPECT_EQ(names(other_applied), (std::vector<std::string>{"oncall", "hook"}));
  EXPECT_FALSE(*other->follow_store());  // nothing new

  ASSERT_TRUE(put("hook", R"({"type": "webhook", "timeout": "4s"})", false).name);
  EXPECT_TRUE(*other->follow_store());
  EXPECT_EQ(other->find("hook")->config.fields.at("timeout").text, "4s");
  ASSERT_TRUE(remove("hook").name);
  EXPECT_TRUE(*other->follow_store());
  EXPECT_EQ(names(other_applied), std::vector<std::string>{"oncall"});
  other.reset();
}

}  // namespace
}  // namespace trainwatch::alerting
