#include "core/ping.h"

namespace trainwatch {

std::string_view to_string(PingKind kind) {
  switch (kind) {
    case PingKind::kSuccess: return "success";
    case PingKind::kStart: return "start";
    case PingKind::kFail: return "fail";
    case PingKind::kLog: return "log";
    case PingKind::kExitCode: return "exit_code";
  }
  return "success";
}

std::optional<PingKind> ping_kind_from_string(std::string_view text) {
  for (auto kind :
       {PingKind::kSuccess, PingKind::kStart, PingKind::kFail, PingKind::kLog, PingKind::kExitCode}) {
    if (to_string(kind) == text) return kind;
  }
  return std::nullopt;
}

}  // namespace trainwatch
