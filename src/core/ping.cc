#include "core/ping.h"

#include "core/enum_names.h"

namespace trainwatch {
namespace {

constexpr EnumNames<PingKind, 5> kPingKindNames{{{PingKind::kSuccess, "success"},
                                                 {PingKind::kStart, "start"},
                                                 {PingKind::kFail, "fail"},
                                                 {PingKind::kLog, "log"},
                                                 {PingKind::kExitCode, "exit_code"}}};

}  // namespace

std::string_view to_string(PingKind kind) { return name_of(kPingKindNames, kind); }

std::optional<PingKind> ping_kind_from_string(std::string_view text) {
  return value_of(kPingKindNames, text);
}

}  // namespace trainwatch
