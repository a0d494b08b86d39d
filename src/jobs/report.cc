#include "jobs/report.h"
#include "core/enum_names.h"
#include "core/json_text.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include <boost/json.hpp>

namespace trainwatch::jobs {
namespace {

namespace json = boost::json;

// Reads fields of one JSON object, remembering the first problem with its path. Every
// getter returns a usable default after a problem, so the walk goes on; the caller checks
// failed() once at the end.
class Fields {
 public:
  Fields(const json::object& obj, std::string path, std::string* error)
      : obj_(obj), path_(std::move(path)), error_(error) {}

  std::string at(std::string_view key) const {
    return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
  }

  void fail(const std::string& where, const std::string& what) const {
    if (error_->empty()) *error_ = where + ": " + what;
  }

  const json::value* find(std::string_view key, bool required) const {
    auto it = obj_.find(key);
    if (it == obj_.end() || it->value().is_null()) {
      if (required) fail(at(key), "missing");
      return nullptr;
    }
    return &it->value();
  }

  std::optional<int64_t> integer(std::string_view key, bool required = false, int64_t min = 0,
                                 int64_t max = std::numeric_limits<int64_t>::max()) const {
    const json::value* v = find(key, required);
    if (!v) return std::nullopt;
    std::optional<int64_t> n;
    if (v->is_int64()) n = v->as_int64();
    if (v->is_uint64() && v->as_uint64() <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      n = static_cast<int64_t>(v->as_uint64());
    }
    if (v->is_double() && std::nearbyint(v->as_double()) == v->as_double() &&
        std::abs(v->as_double()) < 9e18) {
      n = static_cast<int64_t>(v->as_double());
    }
    if (!n || *n < min || *n > max) {
      fail(at(key), "expected an integer from " + std::to_string(min) + " to " + std::to_string(max) +
                        ", found " + describe(*v));
      return std::nullopt;
    }
    return n;
  }

  // An integer clamped into [min, max] instead of refused: ages and steps come from
  // agents we do not control, and a huge one must neither fail the report nor overflow
  // the server's time arithmetic later.
  std::optional<int64_t> clamped(std::string_view key, int64_t min, int64_t max) const {
    const json::value* v = find(key, false);
    if (!v) return std::nullopt;
    if (v->is_int64()) return std::clamp(v->as_int64(), min, max);
    if (v->is_uint64()) return max;  // only values above INT64_MAX parse as uint64
    if (v->is_double() && std::isfinite(v->as_double()) && std::nearbyint(v->as_double()) == v->as_double()) {
      const double d = v->as_double();
      return d <= static_cast<double>(min)   ? min
             : d >= static_cast<double>(max) ? max
                                             : static_cast<int64_t>(d);
    }
    fail(at(key), "expected an integer, found " + describe(*v));
    return std::nullopt;
  }
  std::optional<int64_t> age(std::string_view key) const { return clamped(key, 0, kMaxAgeMs); }

  Fields child(const json::object& obj, std::string path) const {
    return Fields(obj, std::move(path), error_);
  }

  uint64_t counter(std::string_view key) const { return static_cast<uint64_t>(integer(key).value_or(0)); }

  // A number, or one of the strings "NaN", "Infinity", "-Infinity" (JSON has no spelling
  // for them, and a NaN loss is exactly what must get through).
  std::optional<double> number(std::string_view key) const {
    const json::value* v = find(key, false);
    if (!v) return std::nullopt;
    if (v->is_double()) return v->as_double();
    if (v->is_int64()) return static_cast<double>(v->as_int64());
    if (v->is_uint64()) return static_cast<double>(v->as_uint64());
    if (v->is_string()) {
      const auto& s = v->as_string();
      if (s == "NaN") return std::numeric_limits<double>::quiet_NaN();
      if (s == "Infinity") return std::numeric_limits<double>::infinity();
      if (s == "-Infinity") return -std::numeric_limits<double>::infinity();
    }
    fail(at(key), "expected a number, \"NaN\", \"Infinity\" or \"-Infinity\", found " + describe(*v));
    return std::nullopt;
  }

  std::string text(std::string_view key, bool required = false) const {
    const json::value* v = find(key, required);
    if (!v) return {};
    if (!v->is_string()) {
      fail(at(key), "expected a string, found " + describe(*v));
      return {};
    }
    std::string s(v->as_string());
    if (s.size() > kMaxTextBytes) s.resize(kMaxTextBytes);
    return s;
  }

  bool flag(std::string_view key, bool fallback) const {
    const json::value* v = find(key, false);
    if (!v) return fallback;
    if (!v->is_bool()) {
      fail(at(key), "expected true or false, found " + describe(*v));
      return fallback;
    }
    return v->as_bool();
  }

  const json::object* object(std::string_view key) const {
    const json::value* v = find(key, false);
    if (!v) return nullptr;
    if (!v->is_object()) {
      fail(at(key), "expected an object, found " + describe(*v));
      return nullptr;
    }
    return &v->as_object();
  }

  const json::array* array(std::string_view key, size_t max) const {
    const json::value* v = find(key, false);
    if (!v) return nullptr;
    if (!v->is_array()) {
      fail(at(key), "expected a list, found " + describe(*v));
      return nullptr;
    }
    if (v->as_array().size() > max) {
      fail(at(key), "has " + std::to_string(v->as_array().size()) + " entries; at most " +
                        std::to_string(max) + " are accepted");
      return nullptr;
    }
    return &v->as_array();
  }

  static std::string describe(const json::value& v) {
    switch (v.kind()) {
      case json::kind::string: return "a string";
      case json::kind::bool_: return "a boolean";
      case json::kind::array: return "a list";
      case json::kind::object: return "an object";
      case json::kind::null: return "null";
      default: return json_text(v);
    }
  }

 private:
  const json::object& obj_;
  std::string path_;
  std::string* error_;
};

// Calls read(Fields) for each element of `list`; a non-object element is an error.
template <typename Read>
void each_object(const Fields& parent, std::string_view key, const json::array* list, Read read) {
  if (!list) return;
  for (size_t i = 0; i < list->size(); ++i) {
    std::string path = parent.at(key) + "[" + std::to_string(i) + "]";
    if (!(*list)[i].is_object()) {
      parent.fail(path, "expected an object, found " + Fields::describe((*list)[i]));
      return;
    }
    read(parent.child((*list)[i].as_object(), path));
  }
}

std::optional<RankStatus> rank_status_from(std::string_view s) {
  return value_of(reporter::kRankStatusNames, s);
}

// "initializing, training, ... or failed", from the table.
std::string rank_status_words() {
  std::string words;
  const auto& names = reporter::kRankStatusNames;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) words += i + 1 == names.size() ? " or " : ", ";
    words += names[i].second;
  }
  return words;
}

std::optional<CheckpointState> checkpoint_state_from(std::string_view s) {
  return value_of(reporter::kCheckpointStateNames, s);
}

constexpr int64_t kMaxRank = 1'000'000;

void read_checkpoint(const Fields& f, CheckpointReport& c) {
  std::string state = f.text("state");
  if (auto st = checkpoint_state_from(state)) {
    c.state = *st;
  } else if (!state.empty()) {
    f.fail(f.at("state"), "found '" + state + "'; expected none, in_progress, ok or failed");
  }
  c.step = f.clamped("step", -1, kMaxStep).value_or(-1);
  c.begin_age_ms = f.age("begin_age_ms");
  c.duration_ms = f.age("duration_ms");
  c.last_ok_step = f.clamped("last_ok_step", -1, kMaxStep).value_or(-1);
  c.last_ok_age_ms = f.age("last_ok_age_ms");
}

// {"threads": [...], "truncated"}: a rank's Python stack or one of its children's.
void read_python_stack(const Fields& f, PyStack& out) {
  out.truncated = f.flag("truncated", false);
  each_object(f, "threads", f.array("threads", kMaxStackThreads), [&](const Fields& tf) {
    PyThreadStack& thread = out.threads.emplace_back();
    thread.current = tf.flag("current", false);
    each_object(tf, "frames", tf.array("frames", kMaxStackFrames), [&](const Fields& ff) {
      PyFrame& frame = thread.frames.emplace_back();
      frame.file = ff.text("file").substr(0, kMaxFrameText);
      frame.line = static_cast<int>(ff.integer("line", false, 0, INT32_MAX).value_or(0));
      frame.function = ff.text("function").substr(0, kMaxFrameText);
    });
  });
}

void read_stack(const Fields& f, RankStack& out) {
  out.age_ms = f.age("age_ms").value_or(0);
  out.note = f.text("note");
  read_python_stack(f, out.stack);
  out.native_note = f.text("native_note").substr(0, kMaxFrameText);
  if (const json::object* native = f.object("native")) {
    Fields nf = f.child(*native, f.at("native"));
    out.native.truncated = nf.flag("truncated", false);
    each_object(nf, "threads", nf.array("threads", kMaxStackThreads), [&](const Fields& tf) {
      NativeThread& thread = out.native.threads.emplace_back();
      thread.tid = static_cast<int32_t>(tf.integer("tid", false, 0, INT32_MAX).value_or(0));
      each_object(tf, "frames", tf.array("frames", kMaxNativeFrames), [&](const Fields& ff) {
        NativeFrame& frame = thread.frames.emplace_back();
        frame.function = ff.text("function").substr(0, kMaxFrameText);
        frame.module = ff.text("module").substr(0, kMaxFrameText);
      });
    });
  }
  each_object(f, "children", f.array("children", kMaxChildStacks), [&](const Fields& cf) {
    ChildPyStack& child = out.children.emplace_back();
    child.pid = static_cast<int32_t>(cf.integer("pid", true, 1, INT32_MAX).value_or(0));
    PyStack whole;
    read_python_stack(cf, whole);
    child.stack = child_stack_of(whole);  // the bounds the agent keeps, whoever sent it
  });
}

void read_rank_gpu(const Fields& f, RankGpuReport& g) {
  g.index = static_cast<int>(f.integer("index", true, 0, 1023).value_or(0));
  if (auto used = f.integer("memory_used_bytes")) g.memory_used = static_cast<uint64_t>(*used);
  g.source = f.text("source").substr(0, 32);
}

void read_rank(const Fields& f, RankReport& r) {
  r.rank = static_cast<int>(f.integer("rank", true, 0, kMaxRank - 1).value_or(0));
  r.local_rank = static_cast<int>(f.integer("local_rank", false, -1, kMaxRank).value_or(-1));
  r.world_size = static_cast<int>(f.integer("world_size", false, 0, kMaxRank).value_or(0));
  r.pid = f.integer("pid", false, 0, INT32_MAX).value_or(0);
  r.alive = f.flag("alive", true);
  std::string state = f.text("state");
  r.state = state.size() == 1 ? state[0] : '?';
  std::string status = f.text("status", true);
  if (auto st = rank_status_from(status)) {
    r.status = *st;
  } else if (!status.empty()) {
    f.fail(f.at("status"), "found '" + status + "'; expected " + rank_status_words());
  }
  r.step = f.clamped("step", -1, kMaxStep).value_or(-1);
  r.step_reports = f.counter("step_reports");
  r.last_step_age_ms = f.age("last_step_age_ms");
  r.max_step_gap_ms = f.age("max_step_gap_ms").value_or(0);
  r.gone_age_ms = f.age("gone_age_ms");
  r.cpu_s = f.number("cpu_s");
  r.loss = f.number("loss");
  r.loss_scale = f.number("loss_scale");
  r.grad_norm = f.number("grad_norm");
  r.overflow_total = f.counter("overflow_total");
  r.overflow_consecutive = f.counter("overflow_consecutive");
  r.samples = f.counter("samples");
  r.tokens = f.counter("tokens");
  if (const json::object* ck = f.object("checkpoint"))
    read_checkpoint(f.child(*ck, f.at("checkpoint")), r.checkpoint);
  if (const json::object* e = f.object("error")) {
    Fields ef = f.child(*e, f.at("error"));
    r.error = ef.text("message", true);
    r.error_age_ms = ef.age("age_ms");
  }
  if (auto attempt = f.integer("attempt", false, 0, INT32_MAX)) r.attempt = static_cast<int>(*attempt);
  r.run_id = f.text("run_id");
  if (auto node_rank = f.integer("node_rank", false, 0, kMaxRank)) r.node_rank = static_cast<int>(*node_rank);
  if (auto total = f.integer("nonfinite_total")) r.nonfinite_total = static_cast<uint64_t>(*total);
  if (auto first = f.clamped("nonfinite_first_step", -1, kMaxStep); first && *first >= 0) {
    r.nonfinite_first_step = first;
    r.nonfinite_first_age_ms = f.age("nonfinite_first_age_ms");
  }
  if (auto run = f.integer("nonfinite_run")) r.nonfinite_run = static_cast<uint64_t>(*run);
  r.phase = declared_phase(f.text("phase"));
  if (const json::object* c = f.object("collectives")) {
    Fields cf = f.child(*c, f.at("collectives"));
    CollectiveReport cr;
    cr.count = cf.counter("count");
    cr.kind = cf.text("kind");
    if (cr.kind.size() > 32) cr.kind.resize(32);
    cr.inside = cf.flag("inside", false);
    cr.wait_ms = cf.age("wait_ms").value_or(0);
    cr.sampled_ms = cf.age("sampled_ms").value_or(0);
    r.collective = std::move(cr);
  }
  if (auto rss = f.integer("rss_bytes")) r.rss_bytes = static_cast<uint64_t>(*rss);
  r.syscall = f.text("syscall");
  r.wchan = f.text("wchan");
  if (const json::object* st = f.object("stack")) read_stack(f.child(*st, f.at("stack")), r.stack.emplace());
  if (const json::object* e = f.object("exit")) {
    Fields ef = f.child(*e, f.at("exit"));
    ProcessExit& x = r.exit.emplace();
    x.signal = static_cast<int>(ef.integer("signal", false, 1, 64).value_or(0));
    x.code = x.signal ? -1 : static_cast<int>(ef.integer("code", true, 0, 255).value_or(0));
    x.core_dumped = ef.flag("core_dumped", false);
    x.oom_killed = ef.flag("oom_killed", false);
  }
  if (const json::object* g = f.object("gpu")) read_rank_gpu(f.child(*g, f.at("gpu")), r.gpu.emplace());
}

std::optional<int> small_int(const Fields& f, std::string_view key) {
  if (auto v = f.integer(key, false, 0, 100'000)) return static_cast<int>(*v);
  return std::nullopt;
}

void read_gpu_health(const Fields& f, GpuReport& g) {
  if (const json::object* o = f.object("row_remap")) {
    Fields rf = f.child(*o, f.at("row_remap"));
    g.row_remap = RowRemapReport{rf.counter("correctable"), rf.counter("uncorrectable"),
                                 rf.flag("pending", false), rf.flag("failure", false)};
  }
  if (const json::object* o = f.object("retired_pages")) {
    Fields pf = f.child(*o, f.at("retired_pages"));
    g.retired_pages =
        RetiredPagesReport{pf.counter("single_bit"), pf.counter("double_bit"), pf.flag("pending", false)};
  }
  if (const json::object* o = f.object("pcie")) {
    Fields pf = f.child(*o, f.at("pcie"));
    if (auto v = pf.integer("replays")) g.pcie.replays = static_cast<uint64_t>(*v);
    g.pcie.gen = small_int(pf, "gen");
    g.pcie.max_gen = small_int(pf, "max_gen");
    g.pcie.width = small_int(pf, "width");
    g.pcie.max_width = small_int(pf, "max_width");
  }
  g.recovery_action = f.text("recovery_action");
  if (const json::object* o = f.object("nvlinks")) {
    Fields nf = f.child(*o, f.at("nvlinks"));
    NvlinkSummary& n = g.nvlinks.emplace();
    n.count = small_int(nf, "count").value_or(0);
    n.active = small_int(nf, "active").value_or(0);
    n.errors = nf.counter("errors");
    if (const json::array* down = nf.array("down", kMaxLinksDown)) {
      for (const auto& v : *down) {
        if (v.is_int64() && v.as_int64() >= 0 && v.as_int64() < 1024)
          n.down.push_back(static_cast<int>(v.as_int64()));
      }
    }
  }
}

void read_gpu(const Fields& f, GpuReport& g) {
  g.index = static_cast<int>(f.integer("index", true, 0, 1023).value_or(0));
  g.name = f.text("name");
  g.uuid = f.text("uuid");
  g.pci_bus_id = f.text("pci_bus_id");
  g.lost = f.flag("lost", false);
  g.memory_used = f.counter("memory_used_bytes");
  g.memory_total = f.counter("memory_total_bytes");
  g.ecc_uncorrected = f.integer("ecc_uncorrected", false, -1).value_or(-1);
  g.last_xid = static_cast<int>(f.integer("last_xid", false, 0, INT32_MAX).value_or(0));
  g.last_xid_critical = f.flag("last_xid_critical", g.last_xid != 0);
  g.xid_count = f.counter("xid_count");
  each_object(f, "xids", f.array("xids", kMaxXidsPerGpu), [&](const Fields& xf) {
    g.xids.push_back(
        {static_cast<int>(xf.integer("code", true, 0, INT32_MAX).value_or(0)), xf.age("age_ms").value_or(0)});
  });
  g.temperature_c = small_int(f, "temperature_c");
  g.slowdown_temperature_c = small_int(f, "slowdown_temperature_c");
  if (const json::array* reasons = f.array("clock_event_reasons", kMaxClockReasons)) {
    auto& words = g.clock_event_reasons.emplace();
    for (const auto& v : *reasons) {
      if (v.is_string() && v.as_string().size() <= 64) words.emplace_back(v.as_string());
    }
  }
  read_gpu_health(f, g);
}

void read_ib_port(const Fields& f, IbPortReport& p) {
  p.device = f.text("device", true).substr(0, 64);
  p.port = static_cast<int>(f.integer("port", false, 0, 255).value_or(1));
  p.state = f.text("state").substr(0, 32);
  p.phys_state = f.text("phys_state").substr(0, 32);
  p.link_layer = f.text("link_layer").substr(0, 32);
  p.rate_gbps = f.number("rate_gbps");
  p.was_active = f.flag("was_active", false);
  p.link_downed = f.integer("link_downed", false, -1).value_or(-1);
  p.symbol_errors = f.integer("symbol_errors", false, -1).value_or(-1);
  p.link_downed_rise = f.integer("link_downed_rise").value_or(0);
  p.symbol_error_rise = f.integer("symbol_error_rise").value_or(0);
}

void read_disk(const Fields& f, DiskReport& d) {
  d.name = f.text("name", true);
  d.path = f.text("path");
  d.ok = f.flag("ok", true);
  d.error = f.text("error");
  d.free_bytes = f.counter("free_bytes");
  d.total_bytes = f.counter("total_bytes");
}

}  // namespace

Result<NodeReport> parse_node_report(std::string_view body) {
  // The document lives only while its fields are copied out, so it is built in one arena
  // (a 6 KB report fits the first block) and freed at once, not value by value.
  std::array<unsigned char, 32 * 1024> first_block;
  json::monotonic_resource arena(first_block.data(), first_block.size());
  boost::system::error_code ec;
  json::value doc = json::parse(body, ec, &arena);
  if (ec) return make_error("report.json", "the body is not valid JSON: " + ec.message());
  if (!doc.is_object())
    return make_error("report.json", "the body must be a JSON object, found " + Fields::describe(doc));
  std::string error;
  Fields f(doc.as_object(), "", &error);
  NodeReport report;
  auto schema = f.integer("schema", true, 0, INT32_MAX);
  if (!schema) return make_error("report.schema", error);
  if (*schema != kReportSchemaVersion) {
    return make_error("report.schema", "schema: unknown version " + std::to_string(*schema) +
                                           "; this server reads version " +
                                           std::to_string(kReportSchemaVersion));
  }
  report.schema = static_cast<int>(*schema);
  report.job = f.text("job");
  report.node = f.text("node", true);
  if (error.empty() && report.node.empty()) f.fail("node", "expected a non-empty node name");
  report.seq = f.counter("seq");
  report.final = f.flag("final", false);
  report.agent_pid = f.integer("agent_pid", false, 0, INT32_MAX).value_or(0);
  report.report_every = Millis(f.integer("report_every_ms", false, 100, 3'600'000).value_or(5'000));
  each_object(f, "ranks", f.array("ranks", kMaxRanksPerReport),
              [&](const Fields& rf) { read_rank(rf, report.ranks.emplace_back()); });
  each_object(f, "gpus", f.array("gpus", kMaxGpusPerReport),
              [&](const Fields& gf) { read_gpu(gf, report.gpus.emplace_back()); });
  each_object(f, "ib_ports", f.array("ib_ports", kMaxIbPortsPerReport),
              [&](const Fields& pf) { read_ib_port(pf, report.ib_ports.emplace_back()); });
  each_object(f, "disks", f.array("disks", kMaxDisksPerReport),
              [&](const Fields& df) { read_disk(df, report.disks.emplace_back()); });
  if (const json::object* m = f.object("memory")) {
    Fields mf = f.child(*m, "memory");
    report.memory_available_bytes = mf.counter("available_bytes");
    report.memory_total_bytes = mf.counter("total_bytes");
  }
  if (const json::object* rv = f.object("rendezvous")) {
    Fields rf = f.child(*rv, "rendezvous");
    RendezvousReport r;
    r.host = rf.text("host");
    r.port = static_cast<int>(rf.integer("port", true, 0, 65535).value_or(0));
    r.listening = rf.flag("listening", false);
    r.error = rf.text("error");
    report.rendezvous = std::move(r);
  }
  each_object(f, "notes", f.array("notes", kMaxNotesPerReport), [&](const Fields& nf) {
    if (nf.text("code") != "slot_removed" || report.slots_removed.size() >= kMaxRanksPerReport) return;
    RemovedSlotNote& note = report.slots_removed.emplace_back();
    note.rank = static_cast<int>(nf.integer("rank", true, 0, kMaxRank - 1).value_or(0));
    note.pid = nf.integer("pid", true, 1, INT32_MAX).value_or(0);
    note.path = nf.text("path");
  });
  if (!error.empty()) return make_error("report.invalid", error);
  return report;
}

DeclaredPhase declared_phase(std::string_view word) {
  if (word == "eval") return DeclaredPhase::kEval;
  if (word == "warmup") return DeclaredPhase::kWarmup;
  return DeclaredPhase::kTrain;
}

std::string_view to_string(DeclaredPhase phase) {
  switch (phase) {
    case DeclaredPhase::kEval: return "eval";
    case DeclaredPhase::kWarmup: return "warmup";
    case DeclaredPhase::kTrain: break;
  }
  return "train";
}

bool evaluating(const RankReport& r) {
  return r.status == RankStatus::kEvaluating || r.phase == DeclaredPhase::kEval;
}

bool off_pace(const RankReport& r) { return evaluating(r) || r.phase == DeclaredPhase::kWarmup; }

}  // namespace trainwatch::jobs
