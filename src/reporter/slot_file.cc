#include "reporter/slot_file.h"

#include "core/names.h"
#include "reporter/bus_guard.h"
#include "reporter/slot_dir.h"

#include <atomic>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace trainwatch::reporter {
namespace {

std::string errno_message() { return std::strerror(errno); }

void init_header(void* base, const std::string& job) {
  auto* header = static_cast<FileHeader*>(base);
  header->layout_version.store(kLayoutVersion, std::memory_order_relaxed);
  header->header_size.store(kHeaderSize, std::memory_order_relaxed);
  header->slot_size.store(kSlotSize, std::memory_order_relaxed);
  header->slot_count.store(kSlotCount, std::memory_order_relaxed);
  header->job.store(job);
  header->magic.store(kMagic, std::memory_order_release);
}

// Maps a slot file after checking its size with fstat: a short file is never mapped, so no
// page beyond its end is ever touched here. The guard covers a shrink after the check.
Result<void*> map_fd(int fd, bool writable, const std::string& path, const char* lost_line) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) return make_error("io", "cannot stat " + path + ": " + errno_message());
  if (static_cast<size_t>(st.st_size) != kFileSize) {
    return make_error("version", path + " is " + std::to_string(st.st_size) +
                                     " bytes, a trainwatch slot file is " + std::to_string(kFileSize) +
                                     " (truncated, or not a slot file)");
  }
  int prot = writable ? PROT_READ | PROT_WRITE : PROT_READ;
  void* base = ::mmap(nullptr, kFileSize, prot, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) return make_error("io", "cannot map " + path + ": " + errno_message());
  if (!guard_mapping(base, kFileSize, fd, prot, lost_line)) {
    ::munmap(base, kFileSize);
    return make_error("io", "cannot open " + path + ": this process already maps " +
                                std::to_string(kMaxGuardedMappings) + " slot files");
  }
  auto ok = validate_header(*static_cast<const FileHeader*>(base), path);
  if (!ok || mapping_lost(base)) {
    unguard_mapping(base);
    ::munmap(base, kFileSize);
    if (ok) return make_error("version", path + " shrank while it was opened");
    return ok.error();
  }
  return base;
}

// Builds a complete slot file under a private name in dir, then links it into place: other
// ranks either see no file or a complete one, never a half-written header. Space is
// reserved with posix_fallocate first: a sparse file on a full tmpfs would raise SIGBUS on
// the first store into a page that cannot be allocated.
// The private name is unique among live writers (pid, then a per-process counter for
// threads that open at once); one that exists anyway was left by a dead process that had
// our pid, so it is removed and the create tried once more.
Status create_file(int dir, const std::string& dir_path, const std::string& name, const std::string& job,
                   std::optional<gid_t> group) {
  static std::atomic<unsigned> attempt{0};
  std::string tmp = name + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(attempt.fetch_add(1));
  std::string tmp_path = dir_path + "/" + tmp;
  constexpr int kCreate = O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
  int tfd = ::openat(dir, tmp.c_str(), kCreate, kSlotFileMode);
  if (tfd < 0 && errno == EEXIST) {
    ::unlinkat(dir, tmp.c_str(), 0);
    tfd = ::openat(dir, tmp.c_str(), kCreate, kSlotFileMode);
  }
  if (tfd < 0) return make_error("io", "cannot create " + tmp_path + ": " + errno_message());
  std::string failure;
  mode_t mode = group ? kSlotFileGroupMode : kSlotFileMode;
  if (group && ::fchown(tfd, static_cast<uid_t>(-1), *group) != 0) {
    failure = "cannot give " + tmp_path + " to group " + std::to_string(*group) + ": " + errno_message();
  } else if (::fchmod(tfd, mode) != 0) {  // the umask may have removed bits from the open mode
    failure = "cannot set the mode of " + tmp_path + ": " + errno_message();
  } else if (int err = ::posix_fallocate(tfd, 0, static_cast<off_t>(kFileSize)); err != 0) {
    failure = "no room for the slot file in " + dir_path + " (reserving " + std::to_string(kFileSize) +
              " bytes: " + std::strerror(err) + ")";
  } else {
    void* base = ::mmap(nullptr, kFileSize, PROT_READ | PROT_WRITE, MAP_SHARED, tfd, 0);
    if (base == MAP_FAILED) {
      failure = "cannot map " + tmp_path + ": " + errno_message();
    } else {
      init_header(base, job);
      ::munmap(base, kFileSize);
      if (::linkat(dir, tmp.c_str(), dir, name.c_str(), 0) != 0 && errno != EEXIST) {
        failure = "cannot create " + dir_path + "/" + name + ": " + errno_message();
      }
    }
  }
  ::unlinkat(dir, tmp.c_str(), 0);
  ::close(tfd);
  if (!failure.empty()) return make_error("io", failure);
  return Ok{};
}

}  // namespace

std::string slot_file_path(const std::string& top, const std::string& job) {
  return user_slot_dir(top, ::geteuid()) + "/" + job + ".slots";
}

Status validate_header(const FileHeader& header, const std::string& path) {
  if (header.magic.load(std::memory_order_acquire) != kMagic) {
    return make_error("version", path + " is not a trainwatch slot file (bad magic)");
  }
  uint32_t version = header.layout_version.load(std::memory_order_relaxed);
  if (version != kLayoutVersion || header.header_size.load(std::memory_order_relaxed) != kHeaderSize ||
      header.slot_size.load(std::memory_order_relaxed) != kSlotSize ||
      header.slot_count.load(std::memory_order_relaxed) != kSlotCount) {
    return make_error("version", path + " has slot layout version " + std::to_string(version) +
                                     ", this build uses version " + std::to_string(kLayoutVersion) +
                                     " (remove the file once no job of the other version uses it)");
  }
  return Ok{};
}

Result<SlotFile> SlotFile::open_for_writing(const std::string& top, const std::string& job,
                                            std::optional<gid_t> group) {
  // The name becomes a file name: checked here too, whoever the caller.
  if (std::string problem = name_problem(job); !problem.empty()) {
    return make_error("job", "job name '" + job + "': " + problem);
  }
  auto dir = open_own_slot_dir(top, group);
  if (!dir) return dir.error();
  std::string dir_path = user_slot_dir(top, ::geteuid());
  std::string name = job + ".slots";
  std::string path = dir_path + "/" + name;
  constexpr int kOpen = O_RDWR | O_NOFOLLOW | O_CLOEXEC;
  int fd = ::openat(dir->get(), name.c_str(), kOpen);
  // At most two rounds: the second follows the removal of a damaged file.
  for (int round = 0; round < 2; ++round) {
    if (fd < 0 && errno == ENOENT) {
      if (auto made = create_file(dir->get(), dir_path, name, job, group); !made) return made.error();
      fd = ::openat(dir->get(), name.c_str(), kOpen);  // ours, or the one another rank won with
    }
    if (fd < 0) {
      if (errno == ELOOP)
        return make_error("unsafe", path + " is a symlink; trainwatch does not use it (remove it)");
      return make_error("io", "cannot open " + path + ": " + errno_message());
    }
    if (auto ok = check_entry(fd, path, ::geteuid(), false); !ok) {
      ::close(fd);
      return ok.error();
    }
    struct stat st {};
    if (round == 0 && ::fstat(fd, &st) == 0 && static_cast<size_t>(st.st_size) != kFileSize) {
      // Complete files are linked into place, so a file of another size in our own private
      // directory was cut short after it was made (`truncate`). Ranks that still map it
      // write into their guarded copies; later ones start over with a new file.
      ::close(fd);
      ::unlinkat(dir->get(), name.c_str(), 0);
      fd = -1;
      errno = ENOENT;
      continue;
    }
    break;
  }
  // Reserve again on every open: a file shrunk and grown back (ftruncate) has holes, and a
  // store into a hole on a full tmpfs is a SIGBUS. Free when the blocks are already there.
  if (int err = ::posix_fallocate(fd, 0, static_cast<off_t>(kFileSize)); err != 0) {
    ::close(fd);
    return make_error("io", "no room for the slot file " + path + " (reserving " + std::to_string(kFileSize) +
                                " bytes: " + std::strerror(err) + ")");
  }
  std::string lost_line = "trainwatch: " + path +
                          " was shrunk by another process; this rank's reports no longer reach the agent; "
                          "training continues\n";
  auto base = map_fd(fd, true, path, lost_line.c_str());
  if (!base) {
    ::close(fd);
    return base.error();
  }
  return SlotFile(*base, fd, path);
}

Result<SlotFile> SlotFile::open_for_reading(const std::string& path, std::optional<uid_t> owner) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ELOOP) return make_error("unsafe", path + " is a symlink; trainwatch does not read it");
    return make_error("io", "cannot open " + path + ": " + errno_message());
  }
  if (auto ok = check_entry(fd, path, owner.value_or(::geteuid()), false); !ok) {
    ::close(fd);
    return ok.error();
  }
  auto base = map_fd(fd, false, path, nullptr);
  if (!base) {
    ::close(fd);
    return base.error();
  }
  return SlotFile(*base, fd, path);
}

bool SlotFile::lost() const { return base_ != nullptr && mapping_lost(base_); }

bool SlotFile::intact() const {
  struct stat st {};
  return base_ != nullptr && !lost() && ::fstat(fd_, &st) == 0 &&
         static_cast<size_t>(st.st_size) == kFileSize;
}

void SlotFile::release() {
  if (base_ != nullptr) {
    unguard_mapping(base_);
    ::munmap(base_, kFileSize);
    base_ = nullptr;
  }
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

SlotFile::SlotFile(SlotFile&& other) noexcept
    : base_(other.base_), fd_(other.fd_), path_(std::move(other.path_)) {
  other.base_ = nullptr;
  other.fd_ = -1;
}

SlotFile& SlotFile::operator=(SlotFile&& other) noexcept {
  if (this != &other) {
    release();
    base_ = other.base_;
    fd_ = other.fd_;
    path_ = std::move(other.path_);
    other.base_ = nullptr;
    other.fd_ = -1;
  }
  return *this;
}

SlotFile::~SlotFile() { release(); }

}  // namespace trainwatch::reporter
