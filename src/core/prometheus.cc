#include "core/prometheus.h"

#include <charconv>
#include <cmath>

namespace trainwatch {
namespace {

void append_number(std::string& out, double value) {
  if (std::isnan(value)) {
    out += "NaN";
  } else if (std::isinf(value)) {
    out += value > 0 ? "+Inf" : "-Inf";
  } else if (value == std::floor(value) && std::fabs(value) < 1e15) {
    out += std::to_string(static_cast<long long>(value));
  } else {
    // Shortest text that reads back as the same double: "%.9g" rounded a Unix time in
    // seconds with milliseconds (1795944621.333) to ten seconds.
    char buffer[32];
    auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
    out.append(buffer, ec == std::errc() ? end : buffer);
  }
}

void append_labels(std::string& out, const Labels& labels) {
  if (labels.empty()) return;
  out += '{';
  bool first = true;
  for (const auto& [name, value] : labels) {
    if (!first) out += ',';
    first = false;
    out.append(name);
    out += "=\"";
    out += escape_label_value(value);
    out += '"';
  }
  out += '}';
}

}  // namespace

std::string escape_label_value(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '"')
      out += "\\\"";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

void PrometheusWriter::family(std::string_view name, std::string_view type, std::string_view help) {
  out_ += "# HELP ";
  out_.append(name);
  out_ += ' ';
  for (char c : help) out_ += (c == '\n') ? ' ' : c;
  out_ += "\n# TYPE ";
  out_.append(name);
  out_ += ' ';
  out_.append(type);
  out_ += '\n';
}

void PrometheusWriter::sample(std::string_view name, const Labels& labels, double value) {
  out_.append(name);
  append_labels(out_, labels);
  out_ += ' ';
  append_number(out_, value);
  out_ += '\n';
}

void PrometheusWriter::histogram(std::string_view name, const Labels& labels,
                                 const std::vector<double>& bounds,
                                 const std::vector<uint64_t>& cumulative_counts, double sum, uint64_t count) {
  std::string bucket_name = std::string(name) + "_bucket";
  for (size_t i = 0; i <= bounds.size(); ++i) {
    std::string le;
    if (i == bounds.size()) {
      le = "+Inf";
    } else {
      append_number(le, bounds[i]);
    }
    Labels with_le = labels;
    with_le.emplace_back("le", le);
    sample(bucket_name, with_le, static_cast<double>(i == bounds.size() ? count : cumulative_counts[i]));
  }
  sample(std::string(name) + "_sum", labels, sum);
  sample(std::string(name) + "_count", labels, static_cast<double>(count));
}

}  // namespace trainwatch
