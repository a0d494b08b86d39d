// Node reports (SaveNodeReport, node_reports_after), the same on every store (conformance.h).
#include "storage/conformance.h"

#include <set>

namespace trainwatch::testing {
namespace {

template <typename F>
class StoreNodeReports : public StoreTest<F> {};
TYPED_TEST_SUITE(StoreNodeReports, StoreFactories, FactoryName);

SaveNodeReport report(const std::string& job, const std::string& node, int64_t at_ms,
                      const std::string& writer) {
  return SaveNodeReport{job, node, R"({"node":")" + node + R"(","at":)" + std::to_string(at_ms) + "}",
                        from_unix_ms(at_ms), writer};
}

// Every report a reader following from `cursor` sees, as "job/node@ms", and the cursor it ends at.
std::multiset<std::string> read_all(Store& store, int64_t& cursor) {
  std::multiset<std::string> seen;
  for (int page = 0; page < 10; ++page) {
    auto feed = store.node_reports_after(cursor);
    EXPECT_TRUE(feed.ok()) << feed.error().message;
    if (!feed.ok()) break;
    for (const auto& r : feed->reports)
      seen.insert(r.job + "/" + r.node + "@" + std::to_string(to_unix_ms(r.received)));
    const bool moved = feed->next != cursor;
    cursor = feed->next;
    if (feed->reports.empty() || !moved) break;
  }
  return seen;
}

TYPED_TEST(StoreNodeReports, EachNodeKeepsItsNewestReportWithEveryField) {
  Store& store = this->store();
  ASSERT_TRUE(write_and_wait(store, report("llama", "node-a", kT0, "replica-1")).ok());
  ASSERT_TRUE(write_and_wait(store, report("llama", "node-b", kT0 + 10, "replica-2")).ok());
  ASSERT_TRUE(write_and_wait(store, report("llama", "node-a", kT0 + 5000, "replica-2")).ok());
  this->reopen();
  auto feed = this->store().node_reports_after(0);
  ASSERT_TRUE(feed.ok()) << feed.error().message;
  ASSERT_EQ(feed->reports.size(), 2u) << "one row per node";
  const StoredNodeReport& newest = feed->reports.back();
  EXPECT_EQ(newest.job, "llama");
  EXPECT_EQ(newest.node, "node-a") << "the node saved last comes last";
  EXPECT_EQ(to_unix_ms(newest.received), kT0 + 5000);
  EXPECT_EQ(newest.writer, "replica-2");
  EXPECT_EQ(newest.body, R"({"node":"node-a","at":)" + std::to_string(kT0 + 5000) + "}");
}

TYPED_TEST(StoreNodeReports, AReaderFollowingTheCursorSeesEachNewReportOnce) {
  Store& store = this->store();
  int64_t cursor = 0;
  EXPECT_TRUE(read_all(store, cursor).empty());
  ASSERT_TRUE(write_and_wait(store, report("llama", "node-a", kT0, "")).ok());
  ASSERT_TRUE(write_and_wait(store, report("llama", "node-b", kT0 + 1, "")).ok());
  EXPECT_EQ(read_all(store, cursor), (std::multiset<std::string>{"llama/node-a@" + std::to_string(kT0),
                                                                 "llama/node-b@" + std::to_string(kT0 + 1)}));
  EXPECT_TRUE(read_all(store, cursor).empty()) << "nothing new, nothing read";
  ASSERT_TRUE(write_and_wait(store, report("llama", "node-a", kT0 + 5000, "")).ok());
  EXPECT_EQ(read_all(store, cursor),
            std::multiset<std::string>{"llama/node-a@" + std::to_string(kT0 + 5000)});
}

TYPED_TEST(StoreNodeReports, PruningDropsReportsOlderThanTheCutoff) {
  Store& store = this->store();
  ASSERT_TRUE(write_and_wait(store, report("old-job", "node-a", kT0, "")).ok());
  ASSERT_TRUE(write_and_wait(store, report("llama", "node-a", kT0 + 100'000, "")).ok());
  ASSERT_TRUE(write_and_wait(store, PruneResults{from_unix_ms(kT0 + 50'000), 100}).ok());
  auto feed = store.node_reports_after(0);
  ASSERT_TRUE(feed.ok());
  ASSERT_EQ(feed->reports.size(), 1u);
  EXPECT_EQ(feed->reports.front().job, "llama");
}

TYPED_TEST(StoreNodeReports, AJobKeepsItsNewestMemoAcrossARestart) {
  Store& store = this->store();
  ASSERT_TRUE(write_and_wait(store, SaveJobMemo{"llama", R"({"v":1})", from_unix_ms(kT0)}).ok());
  ASSERT_TRUE(write_and_wait(store, SaveJobMemo{"bert", R"({"v":1,"b":1})", from_unix_ms(kT0 + 1)}).ok());
  ASSERT_TRUE(write_and_wait(store, SaveJobMemo{"llama", R"({"v":1,"a":2})", from_unix_ms(kT0 + 2)}).ok());
  this->reopen();
  auto memos = this->store().job_memos();
  ASSERT_TRUE(memos.ok()) << memos.error().message;
  ASSERT_EQ(memos->size(), 2u);
  EXPECT_EQ(memos->front().job, "llama") << "newest first";
  EXPECT_EQ(memos->front().body, R"({"v":1,"a":2})");
  EXPECT_EQ(to_unix_ms(memos->front().saved), kT0 + 2);
  ASSERT_TRUE(write_and_wait(this->store(), PruneResults{from_unix_ms(kT0 + 2), 100}).ok());
  memos = this->store().job_memos();
  ASSERT_EQ(memos->size(), 1u) << "bert's memo is older than the cutoff";
}

}  // namespace
}  // namespace trainwatch::testing
