// The C ABI against real slot files in a temporary directory, real child processes for
// ownership, and a real writer thread for the seqlock.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <new>
#include <stdexcept>
#include <thread>

#include "reporter/open_failure.h"
#include "reporter/process_info.h"
#include "reporter/slot_file.h"
#include "reporter/slot_reader.h"
#include "reporter/temp_dir.h"
#include "trainwatch/trainwatch.h"
#include "trainwatch/trainwatch.hpp"

namespace trainwatch::reporter {
namespace {

using trainwatch::testing::TempDir;

tw_options options_for(const std::string& dir, int rank, int world, const char* job = "job") {
  tw_options o{};
  o.struct_size = sizeof o;
  o.job = job;
  o.dir = dir.c_str();
  o.rank = rank;
  o.rank_set = 1;
  o.local_rank = rank;
  o.local_rank_set = 1;
  o.world_size = world;
  o.world_size_set = 1;
  return o;
}

SlotSnapshot read_back(const std::string& dir, int local_rank, const char* job = "job") {
  auto file = SlotFile::open_for_reading(slot_file_path(dir, job));
  EXPECT_TRUE(file.ok()) << file.error().message;
  SlotSnapshot snap;
  EXPECT_EQ(read_slot(*file->slot(static_cast<uint32_t>(local_rank)), &snap), ReadResult::kOk);
  return snap;
}

int count_lines(const std::string& text) {
  int n = 0;
  for (char c : text) n += c == '\n';
  return n;
}

TEST(Slot, StepAndEveryFieldReadBack) {
  TempDir tmp;
  auto o = options_for(tmp.path(), 2, 4);
  o.master_addr = "10.1.2.3";
  o.master_port = 29500;
  tw_handle* h = nullptr;
  ASSERT_EQ(tw_open(&o, &h), TW_OK) << tw_last_error();
  EXPECT_EQ(tw_is_enabled(h), 1);
  EXPECT_EQ(tw_set_status(h, TW_STATUS_TRAINING), TW_OK);
  tw_step_info info{};
  info.struct_size = sizeof info;
  info.fields = TW_FIELD_LOSS | TW_FIELD_LOSS_SCALE | TW_FIELD_OVERFLOW | TW_FIELD_TOKENS;
  info.step = 10;
  info.loss = 2.5;
  info.loss_scale = 65536;
  info.overflow = 1;
  info.tokens = 100;
  ASSERT_EQ(tw_step_ex(h, &info), TW_OK);
  info.step = 11;
  ASSERT_EQ(tw_step_ex(h, &info), TW_OK);
  EXPECT_EQ(tw_gauge(h, "lr", 3e-4), TW_OK);
  EXPECT_EQ(tw_error(h, "CUDA out of memory"), TW_OK);

  SlotSnapshot s = read_back(tmp.path(), 2);
  EXPECT_EQ(s.pid, ::getpid());
  EXPECT_EQ(s.start_ticks, self_start_ticks());
  EXPECT_EQ(status_name(s.status), "training");
  EXPECT_EQ(s.rank, 2);
  EXPECT_EQ(s.world_size, 4);
  EXPECT_EQ(s.master_addr, "10.1.2.3");
  EXPECT_EQ(s.master_port, 29500);
  EXPECT_EQ(s.job, "job");
  EXPECT_EQ(s.step, 11);
  EXPECT_EQ(s.step_reports, 2u);
  EXPECT_EQ(s.loss, 2.5);
  EXPECT_EQ(s.loss_scale, 65536);
  EXPECT_EQ(s.overflow_total, 2u);
  EXPECT_EQ(s.overflow_consecutive, 2u);
  EXPECT_EQ(s.tokens, 200u);
  EXPECT_EQ(s.present & TW_FIELD_GRAD_NORM, 0u) << "never reported stays unknown";
  ASSERT_EQ(s.gauges.size(), 1u);
  EXPECT_EQ(s.gauges[0].name, "lr");
  EXPECT_EQ(s.error, "CUDA out of memory");

  info.overflow = 0;
  ASSERT_EQ(tw_step_ex(h, &info), TW_OK);
  s = read_back(tmp.path(), 2);
  EXPECT_EQ(s.overflow_total, 2u);
  EXPECT_EQ(s.overflow_consecutive, 0u) << "a clean step ends the streak";
  tw_close(h);
}

TEST(Slot, CheckpointRestoresStatusAndRecordsOutcome) {
  TempDir tmp;
  auto o = options_for(tmp.path(), 0, 1);
  Reporter r(o);
  ASSERT_TRUE(r.enabled());
  r.status(TW_STATUS_EVALUATING);
  r.checkpoint_begin(100, "/ckpt/step100");
  EXPECT_EQ(status_name(read_back(tmp.path(), 0).status), "checkpointing");
  r.checkpoint_end(true, 4096);
  SlotSnapshot s = read_back(tmp.path(), 0);
  EXPECT_EQ(status_name(s.status), "evaluating");
  EXPECT_EQ(s.checkpoint_state, CheckpointState::kOk);
  EXPECT_EQ(s.last_ok_checkpoint_step, 100);
  EXPECT_EQ(s.checkpoint_bytes, 4096u);
  EXPECT_EQ(s.checkpoint_path, "/ckpt/step100");
  r.checkpoint_begin(200);
  r.checkpoint_end(false);
  s = read_back(tmp.path(), 0);
  EXPECT_EQ(s.checkpoint_state, CheckpointState::kFailed);
  EXPECT_EQ(s.last_ok_checkpoint_step, 100) << "a failed checkpoint is not the last good one";
}

TEST(Slot, LongTextIsTruncatedAndGaugePlacesAreBounded) {
  TempDir tmp;
  Reporter r(options_for(tmp.path(), 0, 1));
  r.error(std::string(1000, 'x'));
  EXPECT_EQ(read_back(tmp.path(), 0).error.size(), 231u);
  for (int i = 0; i < TW_MAX_GAUGES; ++i) EXPECT_EQ(r.gauge("g" + std::to_string(i), i), TW_OK);
  EXPECT_EQ(r.gauge("one-too-many", 1), TW_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(r.gauge("g3", 33), TW_OK) << "an existing name is updated in place";
  EXPECT_EQ(read_back(tmp.path(), 0).gauges[3].value, 33);
}

TEST(Slot, LaunchIdentityReadsBack) {
  TempDir tmp;
  const std::string uuid = "5f0c3b1e-8a4d-4c2f-9e7a-1b2c3d4e5f60";  // torchrun --standalone's run id
  ::setenv("TORCHELASTIC_RUN_ID", uuid.c_str(), 1);
  ::setenv("TORCHELASTIC_RESTART_COUNT", "2", 1);
  ::setenv("GROUP_RANK", "1", 1);
  tw_handle* h = nullptr;
  auto o = options_for(tmp.path(), 1, 2);
  tw_status opened = tw_open(&o, &h);
  ::unsetenv("TORCHELASTIC_RUN_ID");
  ::unsetenv("TORCHELASTIC_RESTART_COUNT");
  ::unsetenv("GROUP_RANK");
  ASSERT_EQ(opened, TW_OK) << tw_last_error();
  SlotSnapshot s = read_back(tmp.path(), 1);
  EXPECT_TRUE(s.has_identity);
  EXPECT_EQ(s.attempt, 2);
  EXPECT_EQ(s.node_rank, 1);
  EXPECT_EQ(s.run_id, uuid);
  tw_close(h);
}

// A library from before the launch identity reclaims a slot this one wrote: it sets the
// owner and its own fields and never touches the identity. What the previous owner left
// there must not be read as the new owner's.
TEST(Slot, AnOlderWritersSlotHasNoIdentity) {
  TempDir tmp;
  ::setenv("TRAINWATCH_ATTEMPT", "3", 1);
  {
    Reporter r(options_for(tmp.path(), 0, 1));
    ::unsetenv("TRAINWATCH_ATTEMPT");
    ASSERT_TRUE(r.enabled()) << tw_last_error();
    EXPECT_EQ(read_back(tmp.path(), 0).attempt, 3);
  }
  auto file = SlotFile::open_for_writing(tmp.path(), "job", std::nullopt);
  ASSERT_TRUE(file.ok()) << file.error().message;
  Slot* slot = file->slot(0);
  slot->owner.store(pack_owner(::getpid(), self_start_ticks() + 1));  // the older writer's claim
  SlotSnapshot s = read_back(tmp.path(), 0);
  EXPECT_FALSE(s.has_identity);
  EXPECT_EQ(s.attempt, 0);
  EXPECT_EQ(s.node_rank, -1);
  EXPECT_EQ(s.run_id, "");
}

// Non-finite losses: every one is counted, and the first step of the latest run of them
// stays until the next run begins, so one NaN that recovers still shows.
TEST(Slot, NonFiniteLossesAreCountedAndEachRunKeepsItsFirstStep) {
  TempDir tmp;
  Reporter r(options_for(tmp.path(), 0, 1));
  ASSERT_TRUE(r.enabled()) << tw_last_error();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  r.step(1, 2.5);
  SlotSnapshot s = read_back(tmp.path(), 0);
  EXPECT_TRUE(s.has_nonfinite);
  EXPECT_EQ(s.nonfinite_total, 0u);
  EXPECT_EQ(s.nonfinite_first_step, -1) << "no bad step yet";

  r.step(2, nan);
  r.step(3, inf);
  r.step(4, -inf);
  s = read_back(tmp.path(), 0);
  EXPECT_EQ(s.nonfinite_total, 3u);
  EXPECT_EQ(s.nonfinite_first_step, 2) << "the run's first bad step, not its latest";
  EXPECT_EQ(s.nonfinite_first_report, 2u);

  // A step that reports no loss neither counts nor ends the run.
  tw_step_info info{};
  info.struct_size = sizeof info;
  info.fields = TW_FIELD_TOKENS;
  info.step = 5;
  info.tokens = 10;
  ASSERT_EQ(r.step(info), TW_OK);
  info.fields = TW_FIELD_LOSS;
  info.step = 6;
  info.loss = nan;
  ASSERT_EQ(r.step(info), TW_OK);
  s = read_back(tmp.path(), 0);
  EXPECT_EQ(s.nonfinite_total, 4u);
  EXPECT_EQ(s.nonfinite_first_step, 2);

  r.step(7, 1.5);  // recovered: the record stays
  s = read_back(tmp.path(), 0);
  EXPECT_EQ(s.nonfinite_total, 4u);
  EXPECT_EQ(s.nonfinite_first_step, 2);

  r.step(7, nan);  // a new run, even at a step number seen before
  s = read_back(tmp.path(), 0);
  EXPECT_EQ(s.nonfinite_total, 5u);
  EXPECT_EQ(s.nonfinite_first_step, 7);
  EXPECT_EQ(s.nonfinite_first_report, 8u) << "the ordinal tells this run from the last";
}

// A library from before the non-finite record reclaims a slot this one wrote: it writes
// its checkpoint path across the record's words (layout 1 gave them to the path) and
// never writes the record. Nothing there may be read as the new owner's.
TEST(Slot, AnOlderWritersSlotHasNoNonfiniteRecord) {
  TempDir tmp;
  {
    Reporter r(options_for(tmp.path(), 0, 1));
    ASSERT_TRUE(r.enabled()) << tw_last_error();
    r.step(1, std::numeric_limits<double>::quiet_NaN());
    EXPECT_EQ(read_back(tmp.path(), 0).nonfinite_total, 1u);
  }
  auto file = SlotFile::open_for_writing(tmp.path(), "job", std::nullopt);
  ASSERT_TRUE(file.ok()) << file.error().message;
  Slot* slot = file->slot(0);
  slot->owner.store(pack_owner(::getpid(), self_start_ticks() + 1));  // the older writer's claim
  SlotSnapshot s = read_back(tmp.path(), 0);
  EXPECT_FALSE(s.has_nonfinite);
  EXPECT_EQ(s.nonfinite_total, 0u);
  EXPECT_EQ(s.nonfinite_first_step, -1);

  // Its long path fills all 16 of layout 1's words.
  auto* path16 = reinterpret_cast<AtomicText<16>*>(&slot->checkpoint_path);
  path16->store(std::string(200, 'p'));
  s = read_back(tmp.path(), 0);
  EXPECT_FALSE(s.has_nonfinite);
  EXPECT_EQ(s.nonfinite_total, 0u);
}

// This library's path leaves the record alone, and an older agent, reading the path's 16
// words of layout 1 as text, sees the path and nothing of the record.
TEST(Slot, CheckpointPathAndNonfiniteRecordShareLayout1sPathWords) {
  TempDir tmp;
  Reporter r(options_for(tmp.path(), 0, 1));
  ASSERT_TRUE(r.enabled()) << tw_last_error();
  r.step(9, std::numeric_limits<double>::infinity());
  const std::string long_path = "/ckpt/" + std::string(200, 'x');
  r.checkpoint_begin(9, long_path);
  SlotSnapshot s = read_back(tmp.path(), 0);
  EXPECT_EQ(s.checkpoint_path, long_path.substr(0, 95)) << "cut, as long paths always were";
  EXPECT_EQ(s.nonfinite_total, 1u);
  EXPECT_EQ(s.nonfinite_first_step, 9);

  auto file = SlotFile::open_for_reading(slot_file_path(tmp.path(), "job"));
  ASSERT_TRUE(file.ok()) << file.error().message;
  const auto* as_layout1 = reinterpret_cast<const AtomicText<16>*>(&file->slot(0)->checkpoint_path);
  EXPECT_EQ(as_layout1->load(), long_path.substr(0, 95));
}

// Collectives and phases: a count of collectives entered, and one word that says which one
// the rank is in (or was in last), whether it is in it now, and the phase it declared.
TEST(Slot, CollectivesAndThePhaseAreOneWordEach) {
  TempDir tmp;
  Reporter r(options_for(tmp.path(), 0, 1));
  ASSERT_TRUE(r.enabled()) << tw_last_error();
  SlotSnapshot s = read_back(tmp.path(), 0);
  EXPECT_TRUE(s.has_activity);
  EXPECT_EQ(s.collectives, 0u);
  EXPECT_EQ(s.activity, 0u);
  r.collective_begin(TW_COLLECTIVE_ALL_REDUCE);
  s = read_back(tmp.path(), 0);
  EXPECT_EQ(s.collectives, 1u);
  EXPECT_EQ(s.activity & kActivityKindMask, uint64_t{TW_COLLECTIVE_ALL_REDUCE});
  EXPECT_NE(s.activity & kActivityInside, 0u);
  r.collective_end();
  r.phase(TW_PHASE_EVAL);
  r.collective_begin(TW_COLLECTIVE_BARRIER);
  s = read_back(tmp.path(), 0);
  EXPECT_EQ(s.collectives, 2u);
  EXPECT_EQ(s.activity & kActivityKindMask, uint64_t{TW_COLLECTIVE_BARRIER});
  EXPECT_EQ((s.activity >> kActivityPhaseShift) & kActivityPhaseMask, uint64_t{TW_PHASE_EVAL});
  r.collective_end();
  s = read_back(tmp.path(), 0);
  EXPECT_EQ(s.activity & kActivityInside, 0u);
  EXPECT_EQ(s.activity & kActivityKindMask, uint64_t{TW_COLLECTIVE_BARRIER}) << "the last one stays";
  EXPECT_EQ(r.phase(static_cast<tw_phase>(9)), TW_ERR_INVALID_ARGUMENT);
  // The error text keeps its own words: a long one leaves the record alone, and an older
  // agent, reading layout 1's 32 words as text, sees the text and nothing after it.
  r.error(std::string(1000, 'e'));
  s = read_back(tmp.path(), 0);
  EXPECT_EQ(s.collectives, 2u);
  auto file = SlotFile::open_for_reading(slot_file_path(tmp.path(), "job"));
  ASSERT_TRUE(file.ok()) << file.error().message;
  const auto* as_layout1 = reinterpret_cast<const AtomicText<32>*>(&file->slot(0)->error);
  EXPECT_EQ(as_layout1->load(), std::string(231, 'e'));
}

// A library from before the activity record writes its error across the record's words:
// none of it is read as collectives.
TEST(Slot, AnOlderWritersSlotHasNoActivityRecord) {
  TempDir tmp;
  Reporter r(options_for(tmp.path(), 0, 1));
  ASSERT_TRUE(r.enabled()) << tw_last_error();
  r.collective_begin(TW_COLLECTIVE_BROADCAST);
  auto file = SlotFile::open_for_writing(tmp.path(), "job", std::nullopt);
  ASSERT_TRUE(file.ok()) << file.error().message;
  Slot* slot = file->slot(0);
  slot->owner.store(pack_owner(::getpid(), self_start_ticks() + 1));  // the older writer's claim
  auto* error32 = reinterpret_cast<AtomicText<32>*>(&slot->error);
  error32->store(std::string(255, 'e'));
  SlotSnapshot s = read_back(tmp.path(), 0);
  EXPECT_FALSE(s.has_activity);
  EXPECT_EQ(s.collectives, 0u);
  EXPECT_EQ(s.activity, 0u);
}

// A writer thread hammers one slot with steps whose fields all carry the same number; a
// reader must never see a mix of two steps.
TEST(Seqlock, ReaderNeverSeesATornStep) {
  TempDir tmp;
  Reporter writer(options_for(tmp.path(), 0, 1));
  ASSERT_TRUE(writer.enabled());
  auto file = SlotFile::open_for_reading(slot_file_path(tmp.path(), "job"));
  ASSERT_TRUE(file.ok());
  std::atomic<bool> stop{false};
  std::thread hammer([&] {
    tw_step_info info{};
    info.struct_size = sizeof info;
    info.fields = TW_FIELD_LOSS | TW_FIELD_LOSS_SCALE | TW_FIELD_GRAD_NORM;
    for (int64_t k = 1; !stop.load(std::memory_order_relaxed); ++k) {
      info.step = k;
      info.loss = static_cast<double>(k);
      info.loss_scale = static_cast<double>(k);
      info.grad_norm = static_cast<double>(k);
      writer.step(info);
    }
  });
  int consistent = 0, busy = 0;
  int64_t last_step = 0, advances = 0;
  // Stops after enough consistent reads that saw the step move; the deadline only bounds
  // a broken writer. A busy slot yields: on a loaded machine the writer may be preempted
  // mid-write on this very core, and spinning would starve it.
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while ((consistent < 2'000 || advances < 50) && std::chrono::steady_clock::now() < give_up) {
    SlotSnapshot s;
    ReadResult r = read_slot(*file->slot(0), &s, 8);
    if (r == ReadResult::kBusy) {
      ++busy;
      std::this_thread::yield();
      continue;
    }
    ASSERT_EQ(r, ReadResult::kOk);
    if (s.step <= 0) continue;
    ASSERT_EQ(static_cast<double>(s.step), s.loss) << "torn read at step " << s.step;
    ASSERT_EQ(s.loss, s.loss_scale);
    ASSERT_EQ(s.loss, s.grad_norm);
    ASSERT_EQ(s.step_reports, static_cast<uint64_t>(s.step));
    ASSERT_GE(s.step, last_step) << "steps never go backwards";
    advances += s.step > last_step;
    last_step = s.step;
    ++consistent;
  }
  stop = true;
  hammer.join();
  EXPECT_GE(consistent, 2000);
  EXPECT_GE(advances, 50) << "the reader raced a live writer (busy retries: " << busy << ")";
}

TEST(Seqlock, WriterDeadInsideAWriteLeavesTheSlotBusyUntilReclaimed) {
  TempDir tmp;
  auto o = options_for(tmp.path(), 0, 1);
  {
    Reporter r(o);
    auto rw = SlotFile::open_for_writing(tmp.path(), "job");
    ASSERT_TRUE(rw.ok());
    rw->slot(0)->seq.fetch_add(1);  // as if the writer died between the two seq stores
    SlotSnapshot s;
    EXPECT_EQ(read_slot(*rw->slot(0), &s), ReadResult::kBusy);
  }
  Reporter again(o);  // same process reopens: its own claim, reset to an even seq
  ASSERT_TRUE(again.enabled());
  EXPECT_EQ(read_back(tmp.path(), 0).step, -1);
}

TEST(Slot, VersionMismatchIsOneStderrLineAndANoOpHandle) {
  TempDir tmp;
  {
    Reporter r(options_for(tmp.path(), 0, 1));  // creates a valid file
  }
  {
    auto rw = SlotFile::open_for_writing(tmp.path(), "job");
    ASSERT_TRUE(rw.ok());
    const_cast<FileHeader*>(rw->header())->layout_version.store(2);
  }
  auto o = options_for(tmp.path(), 0, 1);
  ::testing::internal::CaptureStderr();
  tw_handle* h = nullptr;
  EXPECT_EQ(tw_open(&o, &h), TW_ERR_VERSION);
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(count_lines(err), 1) << err;
  EXPECT_NE(err.find("layout version 2"), std::string::npos) << err;
  ASSERT_NE(h, nullptr);
  EXPECT_EQ(tw_is_enabled(h), 0);
  EXPECT_EQ(tw_step(h, 1, 1.0), TW_ERR_DISABLED);
  EXPECT_EQ(tw_close(h), TW_OK);
  EXPECT_FALSE(SlotFile::open_for_reading(slot_file_path(tmp.path(), "job")).ok());
}

TEST(Slot, UnwritableDirectoryIsOneStderrLineAndANoOpHandle) {
  TempDir tmp;
  std::string file = tmp.path() + "/plain-file";
  std::ofstream(file) << "x";
  std::string dir = file + "/trainwatch";  // a directory under a regular file: ENOTDIR, even for root
  auto o = options_for(dir, 0, 1);
  ::testing::internal::CaptureStderr();
  tw_handle* h = nullptr;
  EXPECT_EQ(tw_open(&o, &h), TW_ERR_IO);
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(count_lines(err), 1) << err;
  EXPECT_NE(err.find("cannot create directory"), std::string::npos) << err;
  EXPECT_NE(err.find("training continues"), std::string::npos) << err;
  EXPECT_EQ(std::string(tw_last_error()) + "\n", err);
  EXPECT_EQ(tw_checkpoint_begin(h, 1, "x"), TW_ERR_DISABLED);
  EXPECT_EQ(tw_close(h), TW_OK);
}

// tw_open's catch names what was thrown: only std::bad_alloc reads as out of memory.
TEST(Slot, OpenFailureNamesWhatWasThrown) {
  auto reason_for = [](auto thrown) {
    try {
      throw thrown;
    } catch (...) {
      return open_failure_reason();
    }
  };
  EXPECT_EQ(reason_for(std::bad_alloc()), "out of memory while opening the slot");
  EXPECT_EQ(reason_for(std::runtime_error("mmap: No such device")),
            "cannot open the slot: mmap: No such device");
  EXPECT_EQ(reason_for(42), "cannot open the slot: an unknown exception was thrown");
}

TEST(Slot, BadEnvironmentIsOneStderrLineAndANoOpHandle) {
  ::setenv("WORLD_SIZE", "eight", 1);
  ::testing::internal::CaptureStderr();
  tw_handle* h = nullptr;
  EXPECT_EQ(tw_open(nullptr, &h), TW_ERR_ENVIRONMENT);
  std::string err = ::testing::internal::GetCapturedStderr();
  ::unsetenv("WORLD_SIZE");
  EXPECT_EQ(count_lines(err), 1);
  EXPECT_NE(err.find("WORLD_SIZE='eight' is not a number"), std::string::npos) << err;
  EXPECT_EQ(tw_step(h, 1, 0.5), TW_ERR_DISABLED);
  tw_close(h);

  ::setenv("RANK", "8", 1);
  ::setenv("WORLD_SIZE", "8", 1);
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(tw_open(nullptr, &h), TW_ERR_ENVIRONMENT);
  err = ::testing::internal::GetCapturedStderr();
  ::unsetenv("RANK");
  ::unsetenv("WORLD_SIZE");
  EXPECT_NE(err.find("RANK 8 is not below WORLD_SIZE 8"), std::string::npos) << err;
  EXPECT_EQ(tw_step(nullptr, 1, 0.5), TW_ERR_INVALID_ARGUMENT);
}

// A child claims local rank 0 and exits without closing: the next opener reuses the slot.
TEST(SlotOwnership, DeadOwnerSlotIsReused) {
  TempDir tmp;
  auto o = options_for(tmp.path(), 0, 1);
  pid_t child = ::fork();
  if (child == 0) {
    tw_handle* h = nullptr;
    if (tw_open(&o, &h) != TW_OK) ::_exit(1);
    tw_step(h, 42, 1.0);
    ::_exit(0);  // no tw_close: as if killed
  }
  int wstatus = 0;
  ASSERT_EQ(::waitpid(child, &wstatus, 0), child);
  ASSERT_EQ(WEXITSTATUS(wstatus), 0);
  EXPECT_EQ(read_back(tmp.path(), 0).pid, child);
  EXPECT_EQ(read_back(tmp.path(), 0).step, 42);

  Reporter r(o);
  ASSERT_TRUE(r.enabled()) << tw_last_error();
  SlotSnapshot s = read_back(tmp.path(), 0);
  EXPECT_EQ(s.pid, ::getpid());
  EXPECT_EQ(s.step, -1) << "a reused slot starts clean";
}

TEST(SlotOwnership, ZombieOwnerCountsAsDead) {
  TempDir tmp;
  auto o = options_for(tmp.path(), 0, 1);
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  pid_t child = ::fork();
  if (child == 0) {
    tw_handle* h = nullptr;
    char ok = tw_open(&o, &h) == TW_OK ? '1' : '0';
    (void)!::write(ready[1], &ok, 1);
    ::_exit(0);
  }
  char ok = 0;
  ASSERT_EQ(::read(ready[0], &ok, 1), 1);
  ASSERT_EQ(ok, '1');
  // Not reaped yet: once it has exited it is a zombie, which must not hold the slot.
  for (int i = 0; i < 10'000; ++i) {
    auto info = read_process(child);
    if (info && info->state == 'Z') break;
    ::usleep(1000);
  }
  Reporter r(o);
  EXPECT_TRUE(r.enabled()) << tw_last_error();
  ::waitpid(child, nullptr, 0);
  ::close(ready[0]);
  ::close(ready[1]);
}

TEST(SlotOwnership, ReusedPidWithAnotherStartTimeCountsAsDead) {
  TempDir tmp;
  {
    auto rw = SlotFile::open_for_writing(tmp.path(), "job");
    ASSERT_TRUE(rw.ok());
    // pid 1 exists, but not with this start time: the old owner is gone, its pid reused.
    rw->slot(0)->owner.store(pack_owner(1, read_process(1)->start_ticks + 12345));
  }
  Reporter r(options_for(tmp.path(), 0, 1));
  EXPECT_TRUE(r.enabled()) << tw_last_error();
}

TEST(SlotOwnership, TwoLiveProcessesClaimingOneRank) {
  TempDir tmp;
  auto o = options_for(tmp.path(), 0, 1);
  int ready[2], done[2];
  ASSERT_EQ(::pipe(ready), 0);
  ASSERT_EQ(::pipe(done), 0);
  pid_t child = ::fork();
  if (child == 0) {
    tw_handle* h = nullptr;
    char ok = tw_open(&o, &h) == TW_OK ? '1' : '0';
    (void)!::write(ready[1], &ok, 1);
    char c;
    (void)!::read(done[0], &c, 1);  // hold the slot until the parent is done
    ::_exit(0);
  }
  char ok = 0;
  ASSERT_EQ(::read(ready[0], &ok, 1), 1);
  ASSERT_EQ(ok, '1');
  ::testing::internal::CaptureStderr();
  tw_handle* h = nullptr;
  EXPECT_EQ(tw_open(&o, &h), TW_ERR_CLAIMED);
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("already reported by live pid " + std::to_string(child)), std::string::npos) << err;
  EXPECT_EQ(tw_is_enabled(h), 0);
  EXPECT_EQ(read_back(tmp.path(), 0).pid, child) << "the loser must not disturb the owner's slot";
  (void)!::write(done[1], "x", 1);
  ::waitpid(child, nullptr, 0);
  for (int fd : {ready[0], ready[1], done[0], done[1]}) ::close(fd);
}

TEST(SlotFile, ConcurrentCreatorsAgreeOnOneFile) {
  TempDir tmp;
  std::vector<std::thread> threads;
  std::atomic<int> opened{0};
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&] {
      auto f = SlotFile::open_for_writing(tmp.path(), "race");
      if (f.ok()) opened++;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(opened.load(), 8);
}

}  // namespace
}  // namespace trainwatch::reporter
