// WriteQueue on its own, with a fake applier: what the queue does around a batch.
#include "storage/write_queue.h"

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace trainwatch {
namespace {

// Commits every operation.
class CommitAll final : public BatchApplier {
 public:
  std::vector<WriteOutcome> apply(const std::vector<QueuedWrite>& batch) override {
    return std::vector<WriteOutcome>(batch.size(), WriteOutcome{Ok{}, nullptr});
  }
};

// Sends spdlog's default logger into a string for the test's life.
class CapturedLog {
 public:
  CapturedLog() : previous_(spdlog::default_logger()) {
    spdlog::set_default_logger(std::make_shared<spdlog::logger>(
        "captured", std::make_shared<spdlog::sinks::ostream_sink_mt>(text_)));
  }
  ~CapturedLog() { spdlog::set_default_logger(previous_); }
  CapturedLog(const CapturedLog&) = delete;
  CapturedLog& operator=(const CapturedLog&) = delete;
  std::string text() const { return text_.str(); }

 private:
  std::shared_ptr<spdlog::logger> previous_;
  std::ostringstream text_;
};

SaveState a_state_save() { return SaveState{"api", MonitorState{}}; }
RecordPing a_ping() { return RecordPing{PingRecord{0, "hb", Ping{}, std::nullopt}}; }

TEST(WriteQueueTest, ADoneThatThrowsIsCountedAndLoggedAndTheQueueGoesOn) {
  CapturedLog log;
  CommitAll applier;
  WriteQueue queue(applier, WriteQueueOptions{});
  int later_done = 0;
  ASSERT_TRUE(
      queue.write(a_state_save(), [](const Status&) { throw std::runtime_error("the caller's bug"); }));
  ASSERT_TRUE(queue.write(a_state_save(), [](const Status&) { throw 42; }));  // not a std::exception
  ASSERT_TRUE(queue.write(a_state_save(), [&](const Status& s) { later_done += s.ok() ? 1 : 100; }));
  queue.flush();

  EXPECT_EQ(queue.health().done_exceptions, 2u);
  EXPECT_EQ(later_done, 1);  // the done after the throwing ones ran, in the same batch
  EXPECT_NE(log.text().find("the caller's bug"), std::string::npos) << log.text();
  // A throwing done is the caller's bug, not the store's: nothing is refused.
  EXPECT_FALSE(queue.health().refusing);
  EXPECT_TRUE(queue.health().failures_by_reason.empty());

  // The writer still serves later batches.
  ASSERT_TRUE(queue.write(a_state_save(), [&](const Status& s) { later_done += s.ok() ? 1 : 100; }));
  queue.flush();
  EXPECT_EQ(later_done, 2);
  EXPECT_EQ(queue.health().done_exceptions, 2u);
}

// Commits every operation; once armed, tells the first time the writer finds the queue
// empty (BatchApplier::idle, every idle_tick of an empty queue).
class CommitAllAndTellIdle final : public BatchApplier {
 public:
  std::vector<WriteOutcome> apply(const std::vector<QueuedWrite>& batch) override {
    return std::vector<WriteOutcome>(batch.size(), WriteOutcome{Ok{}, nullptr});
  }
  void idle() override {
    if (armed_ && !told_.exchange(true)) idle_.set_value();
  }
  std::future<void> arm() {
    armed_ = true;
    return idle_.get_future();
  }

 private:
  std::atomic<bool> armed_{false};
  std::atomic<bool> told_{false};
  std::promise<void> idle_;
};

// Under steady load a prompt batch's callers ask again together: once as many prompt
// writes are queued as the last prompt batch held, the batch goes without waiting out
// prompt_linger (an hour here, which only that rule can cut short).
TEST(WriteQueueTest, APromptBatchStopsLingeringOnceAsManyAreQueuedAsTheLastOneHeld) {
  std::promise<void> second_committed;
  int second_done = 0;
  CommitAllAndTellIdle applier;
  WriteQueueOptions options;
  options.prompt_linger = std::chrono::hours(1);
  options.idle_tick = std::chrono::milliseconds(1);
  WriteQueue queue(applier, options);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(queue.write(a_ping(), nullptr));
  queue.flush();  // the first batch: three pings, let go by the flush
  // The writer waits on an empty queue, so the next batch starts from idle and lingers.
  ASSERT_EQ(applier.arm().wait_for(std::chrono::seconds(60)), std::future_status::ready);

  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(queue.write(a_ping(), [&](const Status&) {
      if (++second_done == 3) second_committed.set_value();
    }));
  }
  EXPECT_EQ(second_committed.get_future().wait_for(std::chrono::seconds(60)), std::future_status::ready);
}

}  // namespace
}  // namespace trainwatch
