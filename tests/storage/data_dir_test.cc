#include "storage/data_dir.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "storage/sqlite/sqlite_store.h"

namespace trainwatch {
namespace {

namespace fs = std::filesystem;

mode_t mode_of(const fs::path& p) {
  struct stat st {};
  EXPECT_EQ(::stat(p.c_str(), &st), 0) << p;
  return st.st_mode & 0777;
}

class DataDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("trainwatch-datadir-" + std::to_string(::getpid()) + "-" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    old_umask_ = ::umask(0);  // the loosest umask: nothing is stripped from what is asked
  }
  void TearDown() override {
    ::umask(old_umask_);
    fs::remove_all(root_);
  }

  fs::path root_;
  mode_t old_umask_ = 0;
};

TEST_F(DataDirTest, CreatesTheDirectoryOwnerOnlyWhateverTheUmask) {
  const fs::path dir = root_ / "parent" / "data";
  ASSERT_TRUE(prepare_data_dir(dir.string()).ok());
  EXPECT_EQ(mode_of(dir), 0700u);
  EXPECT_TRUE(prepare_data_dir(dir.string()).ok()) << "an existing directory is fine";
}

TEST_F(DataDirTest, DatabaseAndItsWalAndShmAreOwnerOnly) {
  ASSERT_TRUE(prepare_data_dir(root_.string()).ok());
  const fs::path db = root_ / "trainwatch.db";
  {
    auto store = sqlite::SqliteStore::open(db.string());
    ASSERT_TRUE(store.ok()) << store.error().message;
    bool committed = false;
    ASSERT_TRUE((*store)->write(SaveToken{"m", "t"}, [&](const Status& s) { committed = s.ok(); }));
    (*store)->flush();
    ASSERT_TRUE(committed);
    for (const char* suffix : {"", "-wal", "-shm"}) {
      EXPECT_EQ(mode_of(db.string() + suffix), 0600u) << suffix;
    }
  }
}

TEST_F(DataDirTest, LeftoverFilesReadableByOthersAreMadePrivate) {
  fs::create_directories(root_);
  const fs::path db = root_ / "trainwatch.db";
  for (const char* suffix : {"", "-wal"}) {
    std::ofstream(db.string() + suffix).close();
    ::chmod((db.string() + suffix).c_str(), 0644);
  }
  ASSERT_TRUE(restrict_database_files(db.string()).ok());
  EXPECT_EQ(mode_of(db), 0600u);
  EXPECT_EQ(mode_of(db.string() + "-wal"), 0600u);
}

}  // namespace
}  // namespace trainwatch
