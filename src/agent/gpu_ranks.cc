#include "agent/gpu_ranks.h"

#include <algorithm>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>

namespace trainwatch::agent {
namespace {

// /proc/<pid>/environ is NUL-separated NAME=VALUE; a rank's is a few KB. Read at most this.
constexpr size_t kMaxEnvironBytes = 256 * 1024;

std::optional<std::string> environment_variable(const std::string& proc_root, int32_t pid,
                                                const std::string& name) {
  std::ifstream in(proc_root + "/" + std::to_string(pid) + "/environ", std::ios::binary);
  if (!in) return std::nullopt;
  std::string data(kMaxEnvironBytes, '\0');
  in.read(data.data(), static_cast<std::streamsize>(data.size()));
  data.resize(static_cast<size_t>(in.gcount()));
  const std::string key = name + "=";
  size_t at = 0;
  while (at < data.size()) {
    size_t end = data.find('\0', at);
    if (end == std::string::npos) end = data.size();
    if (data.compare(at, key.size(), key) == 0) return data.substr(at + key.size(), end - at - key.size());
    at = end + 1;
  }
  return std::nullopt;
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \t") + 1);
    out.push_back(item);
  }
  return out;
}

// One entry of CUDA_VISIBLE_DEVICES as a GPU NVML lists.
std::optional<unsigned> device_of(const std::string& entry, const std::vector<GpuInfo>& gpus) {
  if (entry.empty()) return std::nullopt;
  if (std::all_of(entry.begin(), entry.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    if (entry.size() > 4) return std::nullopt;
    const unsigned index = static_cast<unsigned>(std::stoul(entry));
    for (const auto& g : gpus) {
      if (g.index == index) return index;
    }
    return std::nullopt;
  }
  if (entry.rfind("GPU-", 0) != 0) return std::nullopt;  // MIG-… and anything else: no whole GPU
  for (const auto& g : gpus) {
    if (!g.uuid.empty() && g.uuid.rfind(entry, 0) == 0) return g.index;
  }
  return std::nullopt;
}

struct ProcessGpu {
  unsigned index = 0;
  int64_t used_bytes = -1;
};

// pid -> the GPU where NVML says it holds the most memory.
std::map<uint32_t, ProcessGpu> processes_by_pid(const std::vector<GpuInfo>& gpus) {
  std::map<uint32_t, ProcessGpu> out;
  for (const auto& g : gpus) {
    if (!g.processes) continue;
    for (const auto& p : *g.processes) {
      auto [it, added] = out.try_emplace(p.pid, ProcessGpu{g.index, p.used_bytes});
      if (!added && p.used_bytes > it->second.used_bytes) it->second = {g.index, p.used_bytes};
    }
  }
  return out;
}

}  // namespace

std::optional<unsigned> gpu_from_environment(int local_rank,
                                             const std::optional<std::string>& cuda_visible_devices,
                                             const std::vector<GpuInfo>& gpus) {
  if (local_rank < 0) return std::nullopt;
  const auto ordinal = static_cast<size_t>(local_rank);
  if (!cuda_visible_devices) {
    for (const auto& g : gpus) {
      if (g.index == ordinal) return g.index;
    }
    return std::nullopt;
  }
  const std::vector<std::string> visible = split_list(*cuda_visible_devices);
  if (visible.empty()) return std::nullopt;
  // One device per rank (Slurm's --gpus-per-task, a Kubernetes pod): the rank's cuda:0.
  if (visible.size() == 1) return device_of(visible[0], gpus);
  if (ordinal >= visible.size()) return std::nullopt;
  return device_of(visible[ordinal], gpus);
}

std::optional<RankGpu> GpuRanks::from_environment(const RankView& r, const std::vector<GpuInfo>& gpus) {
  auto [it, added] = visible_devices_.try_emplace(r.slot.owner);
  if (added && r.alive) it->second = environment_variable(proc_root_, r.slot.pid, "CUDA_VISIBLE_DEVICES");
  auto index = gpu_from_environment(r.slot.local_rank, it->second, gpus);
  if (!index) return std::nullopt;
  return RankGpu{*index, -1, it->second ? "cuda_visible_devices" : "local_rank"};
}

void GpuRanks::assign(NodeSnapshot& node) {
  const std::vector<GpuInfo> none;
  const std::vector<GpuInfo>& gpus = node.nvml.value ? node.nvml.value->gpus : none;
  const auto by_pid = processes_by_pid(gpus);
  std::set<uint64_t> seen;
  for (auto& r : node.ranks) {
    const uint64_t owner = r.slot.owner;
    seen.insert(owner);
    auto kept = kept_.find(owner);
    if (r.alive && !gpus.empty()) {
      if (auto p = by_pid.find(static_cast<uint32_t>(r.slot.pid)); p != by_pid.end()) {
        kept_[owner] = RankGpu{p->second.index, p->second.used_bytes, "nvml"};
      } else if (kept == kept_.end() || kept->second.source != "nvml") {
        // Not (or no longer) in NVML's list: the environment's answer, until NVML finds it.
        if (auto guess = from_environment(r, gpus)) kept_[owner] = *guess;
      } else {
        // Its GPU is known; it holds nothing there now, or the GPU's list could not be read.
        const auto g = std::find_if(gpus.begin(), gpus.end(),
                                    [&](const GpuInfo& x) { return x.index == kept->second.index; });
        kept->second.memory_used = g != gpus.end() && g->processes ? 0 : -1;
      }
    }
    if (auto it = kept_.find(owner); it != kept_.end()) r.gpu = it->second;
  }
  std::erase_if(kept_, [&](const auto& e) { return !seen.contains(e.first); });
  std::erase_if(visible_devices_, [&](const auto& e) { return !seen.contains(e.first); });
}

}  // namespace trainwatch::agent
