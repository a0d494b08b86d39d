#include "http/fresh_cache.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "fakes/manual_clock.h"

namespace trainwatch::http {
namespace {

using Cache = FreshCache<std::string>;
constexpr Millis kMaxAge{500};

// What the cache builds from: a text and its generation, as an engine's state would be.
struct Source {
  std::mutex mu;
  std::string text = "up";
  std::atomic<uint64_t> generation{1};
  std::atomic<int> builds{0};
  // While set, a build waits for it: a build still running when requests come.
  std::shared_future<void> hold;

  void change(std::string to) {
    std::lock_guard lock(mu);
    text = std::move(to);
    ++generation;
  }
  Cache::Build build() {
    return [this](Audience) -> Result<std::string> {
      std::shared_future<void> wait_for;
      {
        std::lock_guard lock(mu);
        wait_for = hold;
      }
      // Reads the text before it may be held: what a build shows is what it read first.
      std::string read;
      {
        std::lock_guard lock(mu);
        read = text;
      }
      ++builds;
      if (wait_for.valid()) wait_for.wait();
      if (read == "fail") return make_error("store.read", "the store cannot be read");
      return read;
    };
  }
};

// A request's answer, once it comes (from the cache's thread, or at once).
struct Answer {
  std::shared_ptr<std::promise<Result<Cache::Value>>> promise =
      std::make_shared<std::promise<Result<Cache::Value>>>();
  std::future<Result<Cache::Value>> future = promise->get_future();

  Cache::Deliver deliver() {
    return [p = promise](Result<Cache::Value> v) { p->set_value(std::move(v)); };
  }
  bool came() { return future.wait_for(std::chrono::seconds(0)) == std::future_status::ready; }
  std::string text() {
    EXPECT_EQ(future.wait_for(std::chrono::seconds(10)), std::future_status::ready)
        << "no answer within 10 s";
    auto v = future.get();
    return v ? **v : "error: " + v.error().code;
  }
};

class FreshCacheTest : public ::testing::Test {
 protected:
  std::string get(const std::string& key = "k") {
    Answer answer;
    cache.get(Audience::kPublic, key, source.build(), answer.deliver());
    return answer.text();
  }

  testing::ManualClock clock;
  Source source;
  Cache cache{clock, kMaxAge, [this] { return source.generation.load(); }};
};

TEST_F(FreshCacheTest, ServesTheValueHeldWhileNothingChangedAndItIsYoungerThanItsAge) {
  EXPECT_EQ(get(), "up");
  clock.advance(kMaxAge - Millis(1));
  EXPECT_EQ(get(), "up");
  EXPECT_EQ(source.builds, 1);
}

TEST_F(FreshCacheTest, TheFirstRequestAfterAChangeGetsTheChange) {
  EXPECT_EQ(get(), "up");
  source.change("down");
  EXPECT_EQ(get(), "down");  // no time passed: the change alone makes it rebuild
  EXPECT_EQ(source.builds, 2);
}

TEST_F(FreshCacheTest, AValueAsOldAsItsAgeIsRebuiltBeforeItIsServed) {
  EXPECT_EQ(get(), "up");
  {
    std::lock_guard lock(source.mu);
    source.text = "up, checked later";  // a detail that moves no generation
  }
  clock.advance(kMaxAge);
  EXPECT_EQ(get(), "up, checked later");
  EXPECT_EQ(source.builds, 2);
}

TEST_F(FreshCacheTest, RequestsThatCameDuringABuildShareIt) {
  std::promise<void> release;
  source.hold = release.get_future().share();
  std::vector<Answer> answers(5);
  for (auto& a : answers) cache.get(Audience::kPublic, "k", source.build(), a.deliver());
  release.set_value();
  for (auto& a : answers) EXPECT_EQ(a.text(), "up");
  EXPECT_EQ(source.builds, 1);
}

TEST_F(FreshCacheTest, ARequestAfterAChangeNeverGetsABuildThatStartedBeforeIt) {
  std::promise<void> release;
  source.hold = release.get_future().share();
  Answer before;
  cache.get(Audience::kPublic, "k", source.build(), before.deliver());
  // The build has started (it read "up") when the change comes and a second request.
  while (source.builds.load() == 0) std::this_thread::yield();
  source.change("down");
  Answer after;
  cache.get(Audience::kPublic, "k", source.build(), after.deliver());
  release.set_value();
  EXPECT_EQ(before.text(), "up");
  EXPECT_EQ(after.text(), "down");
  EXPECT_EQ(source.builds, 2);
}

TEST_F(FreshCacheTest, AFailedBuildAnswersItsErrorAndTheNextRequestBuildsAgain) {
  EXPECT_EQ(get(), "up");
  source.change("fail");
  EXPECT_EQ(get(), "error: store.read");  // never the "up" held from before the change
  source.change("down");
  EXPECT_EQ(get(), "down");
}

TEST_F(FreshCacheTest, PastTheBoundOfWaitingRequestsOneMoreIsAnsweredBusyAtOnce) {
  std::promise<void> release;
  source.hold = release.get_future().share();
  std::vector<Answer> waiting(Cache::kMaxWaiting);
  for (auto& a : waiting) cache.get(Audience::kPublic, "k", source.build(), a.deliver());
  Answer one_more;
  cache.get(Audience::kPublic, "k", source.build(), one_more.deliver());
  ASSERT_TRUE(one_more.came());
  EXPECT_EQ(one_more.text(), "error: cache.busy");
  release.set_value();
  for (auto& a : waiting) EXPECT_EQ(a.text(), "up");
}

TEST_F(FreshCacheTest, PastTheBoundOfKeysTheKeyBuiltLongestAgoIsForgotten) {
  EXPECT_EQ(get("first"), "up");
  for (size_t i = 1; i < Cache::kMaxKeys; ++i) {
    clock.advance(Millis(1));
    EXPECT_EQ(get("key " + std::to_string(i)), "up");
  }
  EXPECT_EQ(source.builds, static_cast<int>(Cache::kMaxKeys));
  clock.advance(Millis(1));
  EXPECT_EQ(get("one more"), "up");  // forgets "first"
  EXPECT_EQ(get("first"), "up");     // built again, though young and unchanged
  EXPECT_EQ(source.builds, static_cast<int>(Cache::kMaxKeys) + 2);
}

TEST_F(FreshCacheTest, EachAudienceIsServedOnlyWhatWasBuiltForIt) {
  // What each audience's build shows: its own word. A copy built for one audience and
  // served to another would show the other's.
  auto by_audience = [this](Audience audience) -> Result<std::string> {
    ++source.builds;
    return std::string(audience_name(audience));
  };
  auto read = [&](Audience audience) {
    Answer answer;
    cache.get(audience, "k", by_audience, answer.deliver());
    return answer.text();
  };
  const Audience all[] = {Audience::kPublic, Audience::kViewer, Audience::kEditor, Audience::kAdmin};
  for (Audience first : all) {
    for (Audience then : all) {
      source.change("moved");  // every read builds again, as after a change of state
      EXPECT_EQ(read(first), audience_name(first));
      EXPECT_EQ(read(then), audience_name(then)) << "right after " << audience_name(first) << " built it";
    }
  }
}

}  // namespace
}  // namespace trainwatch::http
