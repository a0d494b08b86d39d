// Where a value came from in the YAML file, for messages: 1-based line and column.
#pragma once

#include <string>

namespace trainwatch {

struct SourceLocation {
  std::string file;
  int line = 0;
  int column = 0;
};

}  // namespace trainwatch
