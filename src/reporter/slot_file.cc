#include "reporter/slot_file.h"

#include <atomic>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace trainwatch::reporter {
namespace {

std::string errno_text() { return std::strerror(errno); }

// mkdir -p for the slot directory. World-writable with the sticky bit, like /dev/shm
// itself, so ranks of several users on one node can share it.
bool make_dirs(const std::string& dir) {
  std::string partial;
  size_t pos = 0;
  while (pos != std::string::npos) {
    pos = dir.find('/', pos + 1);
    partial = dir.substr(0, pos);
    if (partial.empty()) continue;
    if (::mkdir(partial.c_str(), 01777) != 0 && errno != EEXIST) return false;
  }
  struct stat st{};
  return ::stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

void init_header(void* base, const std::string& job) {
  auto* header = static_cast<FileHeader*>(base);
  header->layout_version.store(kLayoutVersion, std::memory_order_relaxed);
  header->header_size.store(kHeaderSize, std::memory_order_relaxed);
  header->slot_size.store(kSlotSize, std::memory_order_relaxed);
  header->slot_count.store(kSlotCount, std::memory_order_relaxed);
  header->job.store(job);
  header->magic.store(kMagic, std::memory_order_release);
}

Result<void*> map_fd(int fd, bool writable, const std::string& path) {
  struct stat st{};
  if (::fstat(fd, &st) != 0) return make_error("io", "cannot stat " + path + ": " + errno_text());
  if (static_cast<size_t>(st.st_size) < kHeaderSize) {
    return make_error("version", path + " is too small to be a trainwatch slot file (" +
                                     std::to_string(st.st_size) + " bytes)");
  }
  // Map the header first to learn the layout before trusting the size.
  size_t size = static_cast<size_t>(st.st_size) < kFileSize ? static_cast<size_t>(st.st_size) : kFileSize;
  void* base = ::mmap(nullptr, kFileSize, writable ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) return make_error("io", "cannot map " + path + ": " + errno_text());
  auto ok = validate_header(*static_cast<const FileHeader*>(base), path);
  if (ok && size < kFileSize) ok = make_error("version", path + " is truncated");
  if (!ok) {
    ::munmap(base, kFileSize);
    return ok.error();
  }
  return base;
}

}  // namespace

bool valid_job_name(std::string_view job) {
  if (job.empty() || job.size() > 63 || job[0] == '.') return false;
  for (char c : job) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
              c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

std::string slot_file_path(const std::string& dir, const std::string& job) {
  return dir + "/" + job + ".slots";
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

Result<SlotFile> SlotFile::open_for_writing(const std::string& dir, const std::string& job) {
  if (!valid_job_name(job)) {
    return make_error("job", "job name '" + job + "' must be 1-63 characters of A-Z a-z 0-9 . _ -");
  }
  if (!make_dirs(dir)) return make_error("io", "cannot create directory " + dir + ": " + errno_text());
  std::string path = slot_file_path(dir, job);
  int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT) {
    // Build the whole file under a private name, then link it into place: other ranks
    // either see no file or a complete one, never a half-written header.
    // The private name is unique among live writers (pid, then a per-process counter for
    // threads that open at once); one that exists anyway was left by a dead process that
    // had our pid, so it is removed and the create tried once more.
    static std::atomic<unsigned> attempt{0};
    std::string tmp = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(attempt.fetch_add(1));
    int tfd = ::open(tmp.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (tfd < 0 && errno == EEXIST) {
      ::unlink(tmp.c_str());
      tfd = ::open(tmp.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    }
    if (tfd < 0) return make_error("io", "cannot create " + tmp + ": " + errno_text());
    ::fchmod(tfd, 0666);  // other users' ranks of the same job may share it
    bool built = ::ftruncate(tfd, static_cast<off_t>(kFileSize)) == 0;
    if (built) {
      void* base = ::mmap(nullptr, kFileSize, PROT_READ | PROT_WRITE, MAP_SHARED, tfd, 0);
      built = base != MAP_FAILED;
      if (built) {
        init_header(base, job);
        ::munmap(base, kFileSize);
      }
    }
    int err = errno;
    bool linked = built && ::link(tmp.c_str(), path.c_str()) == 0;
    if (built && !linked) err = errno;
    ::unlink(tmp.c_str());
    ::close(tfd);
    if (!built) return make_error("io", "cannot size " + tmp + ": " + std::strerror(err));
    if (!linked && err != EEXIST) return make_error("io", "cannot create " + path + ": " + std::strerror(err));
    fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);  // ours, or the one another rank won with
  }
  if (fd < 0) return make_error("io", "cannot open " + path + ": " + errno_text());
  auto base = map_fd(fd, true, path);
  ::close(fd);
  if (!base) return base.error();
  return SlotFile(*base, path);
}

Result<SlotFile> SlotFile::open_for_reading(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return make_error("io", "cannot open " + path + ": " + errno_text());
  auto base = map_fd(fd, false, path);
  ::close(fd);
  if (!base) return base.error();
  return SlotFile(*base, path);
}

SlotFile::SlotFile(SlotFile&& other) noexcept : base_(other.base_), path_(std::move(other.path_)) {
  other.base_ = nullptr;
}

SlotFile& SlotFile::operator=(SlotFile&& other) noexcept {
  if (this != &other) {
    if (base_) ::munmap(base_, kFileSize);
    base_ = other.base_;
    path_ = std::move(other.path_);
    other.base_ = nullptr;
  }
  return *this;
}

SlotFile::~SlotFile() {
  if (base_) ::munmap(base_, kFileSize);
}

}  // namespace trainwatch::reporter
