// Asking a rank for its Python stack: which way the stack file's header says (FIFO or
// signal), and the FIFO way end to end against a stand-in sampler that reads the request
// and appends a dump, as the module's native thread does.
#include "agent/stack_capture.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

namespace trainwatch::agent {
namespace {

using Way = StackRequest::Way;

TEST(StackRequestFromHeader, TheFifoHeaderAsksThroughTheFifo) {
  EXPECT_EQ(stack_request_from_header("trainwatch-stack 2 request=fifo\n").way, Way::kFifo);
  EXPECT_EQ(stack_request_from_header("trainwatch-stack 2 request=fifo\nThread 0x1 (most").way, Way::kFifo);
  EXPECT_EQ(stack_request_from_header("trainwatch-stack 2 request=fifo").way, Way::kFifo);
  EXPECT_EQ(stack_request_from_header("trainwatch-stack 2 request=fifo\n").signal, 0);
}

TEST(StackRequestFromHeader, TheSignalHeaderNamesItsSignal) {
  const StackRequest r = stack_request_from_header("trainwatch-stack 1 signal=12\n");
  EXPECT_EQ(r.way, Way::kSignal);
  EXPECT_EQ(r.signal, 12);
  EXPECT_EQ(stack_request_from_header("trainwatch-stack 1 signal=64").signal, 64);
}

TEST(StackRequestFromHeader, AnythingElseAsksNothing) {
  for (const char* text : {"", "\n", "Thread 0x1 (most recent call first):\n", "trainwatch-stack 1 signal=\n",
                           "trainwatch-stack 1 signal=0\n", "trainwatch-stack 1 signal=65\n",
                           "trainwatch-stack 1 signal=x\n", "trainwatch-stack 2 request=fifos\n",
                           "trainwatch-stack 2 request=signal\n", "trainwatch-stack 3 request=fifo\n"}) {
    EXPECT_EQ(stack_request_from_header(text).way, Way::kNone) << text;
  }
}

TEST(StackRequestPath, BesideTheStackFile) {
  EXPECT_EQ(stack_request_path("/dev/shm/trainwatch/0/j.41.stack"), "/dev/shm/trainwatch/0/j.41.stackreq");
}

TEST(CatchesSignal, ReadsTheSigCgtMask) {
  const std::string status = "Name:\tpython3\nSigCgt:\t0000000180000800\n";
  EXPECT_TRUE(catches_signal(status, 12));
  EXPECT_FALSE(catches_signal(status, 10));
  EXPECT_FALSE(catches_signal("Name:\tpython3\n", 12));
}

// A stack file with the FIFO header and its FIFO in a fresh directory, as the module makes them.
struct FifoRank {
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("stack_capture_test." + std::to_string(::getpid()));
  StackTarget target{::getpid(), ::geteuid(), (dir / "j.1.stack").string()};
  FifoRank() {
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    std::ofstream(target.path) << "trainwatch-stack 2 request=fifo\n";
    EXPECT_EQ(::mkfifo(stack_request_path(target.path).c_str(), 0600), 0);
  }
  ~FifoRank() { std::filesystem::remove_all(dir); }
};

TEST(CaptureStacks, TheFifoWayWritesARequestAndReadsTheDumpUpToItsEndLine) {
  FifoRank rank;
  const int fifo = ::open(stack_request_path(rank.target.path).c_str(), O_RDWR | O_CLOEXEC);
  ASSERT_GE(fifo, 0);
  std::thread sampler([&] {
    char request = 0;
    ASSERT_EQ(::read(fifo, &request, 1), 1);
    std::ofstream dump(rank.target.path, std::ios::app);
    dump << "Thread 0x00007f0000000002 (most recent call first):\n"
            "  File \"/work/loader.py\", line 7 in prefetch\n\n"
         << std::flush;
    // A writer descheduled mid-dump, for ten of the agent's polls: the end line, not a
    // quiet file, says the dump is whole.
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    dump << "Thread 0x00007f0000000001 (most recent call first):\n"
            "  File \"/work/train.py\", line 12 in <module>\n"
         << kStackDumpEnd << std::flush;
  });
  const auto out = capture_stacks({rank.target}, "/proc");
  sampler.join();
  ::close(fifo);
  ASSERT_EQ(out.size(), 1u);
  ASSERT_TRUE(out[0].stack) << out[0].note;
  ASSERT_EQ(out[0].stack->threads.size(), 2u);
  EXPECT_EQ(out[0].stack->threads[0].frames.at(0).line, 12);  // the main thread first
  EXPECT_EQ(out[0].stack->threads[1].frames.at(0).function, "prefetch");
}

TEST(CaptureStacks, AFifoNobodyReadsIsNotAskedAndSaysSo) {
  FifoRank rank;
  const auto out = capture_stacks({rank.target}, "/proc");
  ASSERT_EQ(out.size(), 1u);
  EXPECT_FALSE(out[0].stack);
  EXPECT_NE(out[0].note.find("nobody listens"), std::string::npos) << out[0].note;
}

TEST(CaptureStacks, NoFifoBesideAFifoHeaderIsNotAsked) {
  FifoRank rank;
  std::filesystem::remove(stack_request_path(rank.target.path));
  std::ofstream(stack_request_path(rank.target.path)) << "a regular file\n";
  const auto out = capture_stacks({rank.target}, "/proc");
  ASSERT_EQ(out.size(), 1u);
  EXPECT_FALSE(out[0].stack);
  EXPECT_NE(out[0].note.find("no request FIFO"), std::string::npos) << out[0].note;
}

}  // namespace
}  // namespace trainwatch::agent
