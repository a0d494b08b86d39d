// Slot files that no other user, no umask and no full or shrunk file can turn against
// training: modes set whatever the umask, ownership and symlinks checked, and a file
// truncated under a writer or a reader costs reports, never the process.
#include <fcntl.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "reporter/slot_file.h"
#include "reporter/slot_reader.h"
#include "reporter/temp_dir.h"
#include "trainwatch/trainwatch.h"
#include "trainwatch/trainwatch.hpp"

namespace trainwatch::reporter {
namespace {

using trainwatch::testing::TempDir;

tw_options options_for(const std::string& dir, int rank = 0) {
  tw_options o{};
  o.struct_size = sizeof o;
  o.job = "job";
  o.dir = dir.c_str();
  o.rank = o.local_rank = rank;
  o.rank_set = o.local_rank_set = 1;
  o.world_size = 8;
  o.world_size_set = 1;
  return o;
}

mode_t mode_of(const std::string& path) {
  struct stat st {};
  EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path;
  return st.st_mode & 07777;
}

// The documented layout (docs/training.md): the agent relies on it, so the test spells it out.
std::string own_dir(const std::string& top) { return top + "/" + std::to_string(::geteuid()); }

// What tw_open printed, and whether it gave a working handle.
struct Opened {
  bool enabled = false;
  std::string err;
};
Opened open_and_close(const std::string& top) {
  auto o = options_for(top);
  ::testing::internal::CaptureStderr();
  tw_handle* h = nullptr;
  tw_open(&o, &h);
  Opened out{tw_is_enabled(h) != 0, ::testing::internal::GetCapturedStderr()};
  tw_close(h);
  return out;
}

class UmaskScope {
 public:
  explicit UmaskScope(mode_t mask) : old_(::umask(mask)) {}
  ~UmaskScope() { ::umask(old_); }

 private:
  mode_t old_;
};

TEST(SlotDir, ModesAreTheIntendedOnesWhateverTheUmask) {
  for (mode_t mask : {mode_t{022}, mode_t{077}, mode_t{0}}) {
    TempDir tmp;
    std::string top = tmp.path() + "/trainwatch";
    {
      UmaskScope scope(mask);
      Opened o = open_and_close(top);
      ASSERT_TRUE(o.enabled) << o.err;
    }
    EXPECT_EQ(mode_of(top), 01777u) << "umask " << mask;
    EXPECT_EQ(mode_of(own_dir(top)), 0700u) << "umask " << mask;
    EXPECT_EQ(mode_of(slot_file_path(top, "job")), 0600u) << "umask " << mask;
  }
}

// The mode earlier versions left behind (1777 under a umask of 022) is repaired by its owner.
TEST(SlotDir, SharedTopLeftAt1755IsOpenedUpAgain) {
  TempDir tmp;
  std::string top = tmp.path() + "/trainwatch";
  ASSERT_EQ(::mkdir(top.c_str(), 0700), 0);
  ASSERT_EQ(::chmod(top.c_str(), 01755), 0);
  ASSERT_TRUE(open_and_close(top).enabled);
  EXPECT_EQ(mode_of(top), 01777u);
}

TEST(SlotDir, GroupReadsButNeverWrites) {
  struct group* g = ::getgrnam("nogroup");
  if (g == nullptr) GTEST_SKIP() << "no group 'nogroup' on this host";
  if (::geteuid() != 0) GTEST_SKIP() << "giving a file to another group needs membership or root";
  TempDir tmp;
  ::setenv("TRAINWATCH_GROUP", "nogroup", 1);
  Opened o = open_and_close(tmp.path());
  ::unsetenv("TRAINWATCH_GROUP");
  ASSERT_TRUE(o.enabled) << o.err;
  struct stat st {};
  ASSERT_EQ(::stat(slot_file_path(tmp.path(), "job").c_str(), &st), 0);
  EXPECT_EQ(st.st_gid, g->gr_gid);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  EXPECT_EQ(mode_of(own_dir(tmp.path())), 0750u);
}

TEST(SlotDir, UnknownGroupIsOneLineAndNoReporting) {
  TempDir tmp;
  ::setenv("TRAINWATCH_GROUP", "no-such-group-here", 1);
  Opened o = open_and_close(tmp.path());
  ::unsetenv("TRAINWATCH_GROUP");
  EXPECT_FALSE(o.enabled);
  EXPECT_NE(o.err.find("TRAINWATCH_GROUP='no-such-group-here' is not a group"), std::string::npos) << o.err;
}

TEST(SlotDir, SymlinkedUserDirectoryIsRefused) {
  TempDir tmp, elsewhere;
  ASSERT_EQ(::symlink(elsewhere.path().c_str(), own_dir(tmp.path()).c_str()), 0);
  Opened o = open_and_close(tmp.path());
  EXPECT_FALSE(o.enabled);
  EXPECT_NE(o.err.find(own_dir(tmp.path()) + " is a symlink"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("training continues"), std::string::npos) << o.err;
  EXPECT_TRUE(std::filesystem::is_empty(elsewhere.path())) << "nothing may be written through the link";
}

TEST(SlotDir, SymlinkedSlotFileIsRefused) {
  TempDir tmp, elsewhere;
  ASSERT_TRUE(open_and_close(tmp.path()).enabled);
  std::string file = slot_file_path(tmp.path(), "job");
  ASSERT_EQ(::unlink(file.c_str()), 0);
  std::string target = elsewhere.path() + "/victim";
  ASSERT_EQ(::symlink(target.c_str(), file.c_str()), 0);
  Opened o = open_and_close(tmp.path());
  EXPECT_FALSE(o.enabled);
  EXPECT_NE(o.err.find("is a symlink"), std::string::npos) << o.err;
  EXPECT_FALSE(std::filesystem::exists(target));
}

TEST(SlotDir, UserDirectoryOwnedBySomeoneElseIsRefused) {
  if (::geteuid() != 0) GTEST_SKIP() << "making a directory another user's needs root";
  TempDir tmp;
  std::string dir = own_dir(tmp.path());
  ASSERT_EQ(::mkdir(dir.c_str(), 0700), 0);
  ASSERT_EQ(::chown(dir.c_str(), 65534, 65534), 0);
  Opened o = open_and_close(tmp.path());
  EXPECT_FALSE(o.enabled);
  EXPECT_NE(o.err.find("is owned by uid 65534, not uid 0"), std::string::npos) << o.err;
}

TEST(SlotDir, UserDirectoryOthersMayWriteIsRefused) {
  TempDir tmp;
  std::string dir = own_dir(tmp.path());
  ASSERT_EQ(::mkdir(dir.c_str(), 0700), 0);
  ASSERT_EQ(::chmod(dir.c_str(), 0777), 0);
  Opened o = open_and_close(tmp.path());
  EXPECT_FALSE(o.enabled);
  EXPECT_NE(o.err.find("is writable by group or others (mode 0777)"), std::string::npos) << o.err;
}

TEST(SlotDir, SharedTopWithoutTheStickyBitIsRefused) {
  TempDir tmp;
  std::string top = tmp.path() + "/open";
  ASSERT_EQ(::mkdir(top.c_str(), 0700), 0);
  ASSERT_EQ(::chmod(top.c_str(), 0777), 0);
  Opened o = open_and_close(top);
  EXPECT_FALSE(o.enabled);
  EXPECT_NE(o.err.find("without the sticky bit"), std::string::npos) << o.err;
}

// The rank goes on stepping after its slot file is cut to nothing, says so once, and the
// next rank to open starts a whole new file.
TEST(SlotTruncation, WriterKeepsSteppingAndSaysSoOnce) {
  TempDir tmp;
  EXPECT_EXIT(
      {
        auto o = options_for(tmp.path());
        Reporter r(o);
        if (!r.enabled()) std::_Exit(2);
        r.step(1, 1.0);
        if (::truncate(slot_file_path(tmp.path(), "job").c_str(), 0) != 0) std::_Exit(3);
        for (int i = 2; i < 100; ++i) r.step(i, 1.0);
        r.status(TW_STATUS_FINISHED);
        std::_Exit(r.enabled() ? 0 : 4);
      },
      ::testing::ExitedWithCode(0), "was shrunk by another process; .*training continues");
  Reporter again(options_for(tmp.path(), 1));
  ASSERT_TRUE(again.enabled());
  again.step(9, 0.5);
  auto file = SlotFile::open_for_reading(slot_file_path(tmp.path(), "job"));
  ASSERT_TRUE(file.ok()) << file.error().message;
  SlotSnapshot snap;
  ASSERT_EQ(read_slot(*file->slot(1), &snap), ReadResult::kOk);
  EXPECT_EQ(snap.step, 9);
}

TEST(SlotTruncation, ReaderSurvivesAFileShrunkAfterItWasMapped) {
  TempDir tmp;
  Reporter r(options_for(tmp.path()));
  ASSERT_TRUE(r.enabled());
  r.step(4, 1.0);
  EXPECT_EXIT(
      {
        auto file = SlotFile::open_for_reading(slot_file_path(tmp.path(), "job"));
        if (!file.ok()) std::_Exit(2);
        if (::truncate(slot_file_path(tmp.path(), "job").c_str(), 100) != 0) std::_Exit(3);
        SlotSnapshot snap;
        for (uint32_t i = 0; i < kSlotCount; ++i) read_slot(*file->slot(i), &snap);
        std::_Exit(validate_header(*file->header(), file->path()).ok() ? 4 : 0);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST(SlotTruncation, ReaderCanTellItsCopyIsNoLongerTheFile) {
  TempDir tmp;
  Reporter r(options_for(tmp.path()));
  ASSERT_TRUE(r.enabled());
  auto file = SlotFile::open_for_reading(slot_file_path(tmp.path(), "job"));
  ASSERT_TRUE(file.ok()) << file.error().message;
  EXPECT_TRUE(file->intact());
  EXPECT_FALSE(file->lost());
  ASSERT_EQ(::truncate(slot_file_path(tmp.path(), "job").c_str(), 0), 0);
  EXPECT_FALSE(file->intact());  // fstat sees the shrink before any page is touched
  SlotSnapshot snap;
  EXPECT_EQ(read_slot(*file->slot(0), &snap), ReadResult::kEmpty);  // zeros, not a fault
  EXPECT_TRUE(file->lost());
}

TEST(SlotTruncation, ShortFileIsNeverMappedByAReader) {
  TempDir tmp;
  ASSERT_TRUE(open_and_close(tmp.path()).enabled);
  std::string path = slot_file_path(tmp.path(), "job");
  ASSERT_EQ(::truncate(path.c_str(), 4096), 0);
  auto file = SlotFile::open_for_reading(path);
  ASSERT_FALSE(file.ok());
  EXPECT_NE(file.error().message.find("is 4096 bytes"), std::string::npos) << file.error().message;
}

// A fault that is not in a slot file still kills the process as it would have.
// How a bus error outside the slots ends the process: the default action kills it with
// SIGBUS. Under AddressSanitizer the handler before ours is ASan's own, which reports the
// fault and exits 1; under ThreadSanitizer it is TSan's, which exits with its exitcode
// (66, its default, which scripts/tsan.sh keeps).
bool died_of_bus_error(int status) {
  if (WIFSIGNALED(status)) return WTERMSIG(status) == SIGBUS;
#if defined(__SANITIZE_ADDRESS__)
  return WIFEXITED(status) && WEXITSTATUS(status) == 1;
#elif defined(__SANITIZE_THREAD__)
  return WIFEXITED(status) && WEXITSTATUS(status) == 66;
#else
  return false;
#endif
}

TEST(SlotTruncation, OtherBusErrorsStillKill) {
  TempDir tmp;
  Reporter r(options_for(tmp.path()));  // installs the handler
  ASSERT_TRUE(r.enabled());
  EXPECT_EXIT(
      {
        std::string other = tmp.path() + "/other";
        int fd = ::open(other.c_str(), O_RDWR | O_CREAT, 0600);
        if (fd < 0 || ::ftruncate(fd, 4096) != 0) std::_Exit(2);
        auto* p =
            static_cast<volatile char*>(::mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
        if (::ftruncate(fd, 0) != 0) std::_Exit(3);
        p[0] = 1;
        std::_Exit(0);
      },
      died_of_bus_error, "");
}

}  // namespace
}  // namespace trainwatch::reporter
