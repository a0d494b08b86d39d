// Opening the job's slot file (TRAINWATCH_DIR/<uid>/<job>.slots, see slot_dir.h): created
// atomically by the first rank of the user (space reserved, written in full under a temporary
// name, then linked into place), validated by every later opener, mapped shared. Readers (the
// agent) map it read-only. Every mapping is guarded (bus_guard.h): a file shrunk under it
// becomes zero pages in this process instead of a SIGBUS.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>

#include "core/result.h"
#include "reporter/slot_layout.h"

namespace trainwatch::reporter {

// The calling user's slot file of job under TOP: TOP/<euid>/<job>.slots.
std::string slot_file_path(const std::string& top, const std::string& job);

class SlotFile {
 public:
  // Error codes: "io" (cannot create/open/map, or no space: posix_fallocate failed),
  // "unsafe" (see slot_dir.h), "version" (another layout, or a file of the wrong size),
  // "job" (bad name). group: TRAINWATCH_GROUP, resolved.
  static Result<SlotFile> open_for_writing(const std::string& top, const std::string& job,
                                           std::optional<gid_t> group = std::nullopt);
  // owner: the uid the file must belong to (default: this process's effective uid).
  static Result<SlotFile> open_for_reading(const std::string& path,
                                           std::optional<uid_t> owner = std::nullopt);

  SlotFile(SlotFile&& other) noexcept;
  SlotFile& operator=(SlotFile&& other) noexcept;
  SlotFile(const SlotFile&) = delete;
  SlotFile& operator=(const SlotFile&) = delete;
  ~SlotFile();

  Slot* slot(uint32_t index) { return slot_at(base_, index); }
  const Slot* slot(uint32_t index) const { return slot_at(base_, index); }
  const FileHeader* header() const { return static_cast<const FileHeader*>(base_); }
  const std::string& path() const { return path_; }

  // True once the file shrank under this mapping (its pages are now private zeros). Readers
  // check it after copying slots: what they copied since the shrink is not the file.
  bool lost() const;
  // Readers: whether the file still has its full size now (fstat). A shrunk file is
  // malformed; a reader drops it instead of touching a page.
  bool intact() const;

 private:
  SlotFile(void* base, int fd, std::string path) : base_(base), fd_(fd), path_(std::move(path)) {}
  void release();
  void* base_ = nullptr;
  int fd_ = -1;  // kept open: the guard's handler fstats it (bus_guard.h)
  std::string path_;
};

// Checks a mapped header; the error names the file and both versions.
Status validate_header(const FileHeader& header, const std::string& path);

}  // namespace trainwatch::reporter
