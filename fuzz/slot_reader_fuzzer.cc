// The agent's side of a slot file over arbitrary bytes: any local user who can write the
// file can put anything in it, and the agent must neither crash nor read out of bounds.
// Each input becomes the whole file (open_for_reading validates the header and the size
// before the agent reads a slot), and its bytes are also read as the first slot directly,
// so the slot reader is fuzzed even when the header is wrong. Every slot read whole then
// goes through the invariants (reporter/slot_check.h) as the agent's would: a slot they pass
// must be one the agent can show (its rank inside its world, its text UTF-8 once repaired).
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "core/utf8.h"
#include "reporter/slot_check.h"
#include "reporter/slot_file.h"
#include "reporter/slot_reader.h"

namespace {

using trainwatch::reporter::kFileSize;
using trainwatch::reporter::kSlotCount;
using trainwatch::reporter::Slot;

// One file per fuzzing process, rewritten by every input and removed at exit.
struct ScratchFile {
  std::string path;
  ScratchFile() {
    const char* tmp = std::getenv("TMPDIR");
    path =
        std::string(tmp && *tmp ? tmp : "/tmp") + "/trainwatch-fuzz-" + std::to_string(::getpid()) + ".slots";
  }
  ~ScratchFile() { ::unlink(path.c_str()); }
};

const std::string& slot_path() {
  static const ScratchFile file;
  return file.path;
}

// The agent's judgement of one slot read whole; aborts when a slot that passes could not be shown.
void check(trainwatch::reporter::SlotSnapshot& snapshot, uint32_t index) {
  (void)trainwatch::reporter::status_name(snapshot.status);
  if (!trainwatch::reporter::slot_problem(snapshot, index).empty()) return;
  trainwatch::reporter::repair_slot_text(snapshot);
  if (snapshot.pid <= 0 || snapshot.rank < 0 || snapshot.rank >= snapshot.world_size) std::abort();
  for (const std::string* text :
       {&snapshot.job, &snapshot.master_addr, &snapshot.run_id, &snapshot.error, &snapshot.checkpoint_path}) {
    if (!trainwatch::is_valid_utf8(*text)) std::abort();
  }
}

void read_every_slot(const trainwatch::reporter::SlotFile& file) {
  trainwatch::reporter::SlotSnapshot snapshot;
  for (uint32_t i = 0; i < kSlotCount; ++i) {
    if (trainwatch::reporter::read_slot(*file.slot(i), &snapshot, 4) ==
        trainwatch::reporter::ReadResult::kOk) {
      check(snapshot, i);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Bigger than a slot file: only the first kFileSize bytes could ever be mapped.
  if (size > kFileSize + 4096) return -1;

  // The slot as a seqlocked reader sees it: the input's first bytes, zero-padded.
  auto slot_bytes = std::make_unique<Slot>();
  std::memset(static_cast<void*>(slot_bytes.get()), 0, sizeof(Slot));
  std::memcpy(static_cast<void*>(slot_bytes.get()), data, std::min(size, sizeof(Slot)));
  trainwatch::reporter::SlotSnapshot snapshot;
  if (trainwatch::reporter::read_slot(*slot_bytes, &snapshot, 4) == trainwatch::reporter::ReadResult::kOk) {
    check(snapshot, 0);
  }

  // The whole file, as the agent opens it.
  const std::string& path = slot_path();
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) std::abort();
  for (size_t done = 0; done < size;) {
    ssize_t n = ::write(fd, data + done, size - done);
    if (n <= 0) std::abort();
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  auto file = trainwatch::reporter::SlotFile::open_for_reading(path);
  // As the agent does: read every slot, then ask whether the file shrank meanwhile.
  if (file) {
    read_every_slot(*file);
    (void)file->intact();
  }
  return 0;
}
