// The parser of conditions (condition.h for the syntax): a hand-written recursive
// descent, so every error says what was found, what was expected and at which character.
#pragma once

#include <string>
#include <string_view>

#include "config/condition_spec.h"
#include "core/result.h"

namespace trainwatch::condition {

struct ParsedCondition {
  std::string text;  // as written, trimmed
  ConditionSpec spec;
};

// Parses one condition; the error (code config.condition) names the character, e.g.
// "unknown placeholder [BOD] at character 1; expected [STATUS], [RESPONSE_TIME] or [BODY]".
Result<ParsedCondition> parse_condition(std::string_view text);

}  // namespace trainwatch::condition
