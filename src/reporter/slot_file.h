// Opening the job's slot file (TRAINWATCH_DIR/<job>.slots): created atomically by the first
// rank (written in full under a temporary name, then linked into place), validated by every
// later opener, mapped shared. Readers (the agent) map it read-only.
#pragma once

#include <string>
#include <string_view>

#include "core/result.h"
#include "reporter/slot_layout.h"

namespace trainwatch::reporter {

// A job name is 1..63 of [A-Za-z0-9._-]: it becomes a file name.
bool valid_job_name(std::string_view job);

std::string slot_file_path(const std::string& dir, const std::string& job);

class SlotFile {
 public:
  // Error codes: "io" (cannot create/open/map), "version" (another layout), "job" (bad name).
  static Result<SlotFile> open_for_writing(const std::string& dir, const std::string& job);
  static Result<SlotFile> open_for_reading(const std::string& path);

  SlotFile(SlotFile&& other) noexcept;
  SlotFile& operator=(SlotFile&& other) noexcept;
  SlotFile(const SlotFile&) = delete;
  SlotFile& operator=(const SlotFile&) = delete;
  ~SlotFile();

  Slot* slot(uint32_t index) { return slot_at(base_, index); }
  const Slot* slot(uint32_t index) const { return slot_at(base_, index); }
  const FileHeader* header() const { return static_cast<const FileHeader*>(base_); }
  const std::string& path() const { return path_; }

 private:
  SlotFile(void* base, std::string path) : base_(base), path_(std::move(path)) {}
  void* base_ = nullptr;
  std::string path_;
};

// Checks a mapped header; the error names the file and both versions.
Status validate_header(const FileHeader& header, const std::string& path);

}  // namespace trainwatch::reporter
