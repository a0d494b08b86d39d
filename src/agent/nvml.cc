#include "agent/nvml.h"

#include <dlfcn.h>

#include "agent/nvml_api.h"
#include "agent/nvml_device.h"

namespace trainwatch::agent {

using nvml::kSuccess;
using nvml::nvmlDevice_t;

// Events drained per probe: a storm of XIDs cannot hold the probe past its deadline.
constexpr int kMaxEventsPerProbe = 256;

NvmlProbe::~NvmlProbe() {
  if (api_ && api_->event_set_free && event_set_)
    api_->event_set_free(static_cast<nvml::nvmlEventSet_t>(event_set_));
  if (api_ && api_->shutdown && loaded_) api_->shutdown();
  delete api_;
  if (lib_) ::dlclose(lib_);
}

bool NvmlProbe::load(std::string* error) {
  lib_ = ::dlopen(path_.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib_) {
    const char* why = ::dlerror();
    *error = why ? why : ("cannot load " + path_);
    return false;
  }
  api_ = new nvml::Api{};
  if (!nvml::resolve(lib_, *api_, error)) {
    *error = path_ + ": " + *error;
    return false;
  }
  const NvmlCaller call(in_call_);
  if (int rc = call("nvmlInit_v2", api_->init); rc != kSuccess) {
    *error = "nvmlInit failed with NVML error " + std::to_string(rc);
    return false;
  }
  unsigned n = 0;
  if (call("nvmlDeviceGetCount_v2", api_->count, &n) == kSuccess) register_xid_events(n);
  return true;
}

// XIDs arrive as events; a GPU that cannot register (not supported) just has none.
void NvmlProbe::register_xid_events(unsigned count) {
  const NvmlCaller call(in_call_);
  nvml::nvmlEventSet_t set = nullptr;
  if (!api_->event_wait || call("nvmlEventSetCreate", api_->event_set_create, &set) != kSuccess) return;
  event_set_ = set;
  for (unsigned i = 0; i < count; ++i) {
    nvmlDevice_t dev = nullptr;
    if (call("nvmlDeviceGetHandleByIndex_v2", api_->handle, i, &dev) == kSuccess)
      call("nvmlDeviceRegisterEvents", api_->register_events, dev, nvml::kEventXidCritical, set);
  }
}

// The XID events that arrived since the last probe, each kept against its GPU.
void NvmlProbe::drain_events(const std::vector<void*>& devices) {
  if (!event_set_) return;
  const NvmlCaller call(in_call_);
  const int64_t now_ms = to_unix_ms(clock_.system_time());
  for (int i = 0; i < kMaxEventsPerProbe; ++i) {
    nvml::nvmlEventData_t ev{};
    if (call("nvmlEventSetWait_v2", api_->event_wait, static_cast<nvml::nvmlEventSet_t>(event_set_), &ev,
             0u) != kSuccess)
      break;
    if (ev.eventType != nvml::kEventXidCritical) continue;
    for (unsigned k = 0; k < devices.size(); ++k) {
      if (devices[k] != ev.device) continue;
      XidHistory& h = xids_[k];
      ++h.count;
      h.recent.push_back({static_cast<unsigned>(ev.eventData), now_ms});
      if (h.recent.size() > kMaxRecentXids) h.recent.pop_front();
    }
  }
}

// Marks each link this agent has seen active; one down now that was up before is news.
void NvmlProbe::remember_links(GpuInfo& g) {
  std::set<unsigned>& seen = links_seen_[g.index];
  for (auto& l : g.nvlinks) {
    if (l.active) seen.insert(l.link);
    l.was_active = seen.contains(l.link);
  }
}

NvmlInfo NvmlProbe::probe() {
  NvmlInfo info;
  if (!loaded_ && load_error_.empty()) loaded_ = load(&load_error_);
  info.library_loaded = loaded_;
  info.library_error = load_error_;
  if (!loaded_) return info;

  const NvmlCaller call(in_call_);
  unsigned n = 0;
  if (call("nvmlDeviceGetCount_v2", api_->count, &n) != kSuccess) return info;
  std::vector<void*> devices(n, nullptr);
  for (unsigned i = 0; i < n; ++i) {
    GpuInfo g;
    g.index = i;
    nvmlDevice_t d = nullptr;
    if (int rc = call("nvmlDeviceGetHandleByIndex_v2", api_->handle, i, &d); rc != kSuccess) {
      g.lost = rc == nvml::kGpuIsLost;
      info.gpus.push_back(g);
      continue;
    }
    devices[i] = d;
    read_device(*api_, call, d, g);
    remember_links(g);
    info.gpus.push_back(std::move(g));
  }
  drain_events(devices);
  for (auto& g : info.gpus) {
    auto it = xids_.find(g.index);
    if (it == xids_.end()) continue;
    g.xid_count = it->second.count;
    g.recent_xids.assign(it->second.recent.begin(), it->second.recent.end());
    if (!g.recent_xids.empty()) g.last_xid = g.recent_xids.back().code;
  }
  return info;
}

}  // namespace trainwatch::agent
