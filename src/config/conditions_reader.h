// Reads a monitor's `conditions:` list, refusing placeholders its type does not have
// ("[DNS_RCODE]" on an http monitor would compare against nothing and always fail).
#pragma once

#include <initializer_list>
#include <string_view>
#include <vector>

#include "config/condition.h"
#include "config/yaml_reader.h"

namespace trainwatch::config_detail {

// `placeholders` are those the type may use, e.g. {"[DNS_RCODE]", "[BODY]",
// "[RESPONSE_TIME]"}; with `json_paths`, "[BODY].a.b" counts as "[BODY]". Every refused
// condition is reported at its own line and column.
void read_conditions(Section& s, std::string_view type, std::initializer_list<std::string_view> placeholders,
                     bool json_paths, std::vector<Condition>& out);

}  // namespace trainwatch::config_detail
