// A writer for the Prometheus text exposition format (version 0.0.4): HELP and TYPE
// once per family, then its samples, label values escaped. No I/O.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace trainwatch {

using Labels = std::vector<std::pair<std::string_view, std::string_view>>;

class PrometheusWriter {
 public:
  // Starts a family; `type` is counter, gauge, histogram or untyped.
  void family(std::string_view name, std::string_view type, std::string_view help);
  void sample(std::string_view name, const Labels& labels, double value);

  // A histogram family's samples from cumulative bucket counts (upper bounds ascending,
  // +Inf added), sum and count.
  void histogram(std::string_view name, const Labels& labels, const std::vector<double>& bounds,
                 const std::vector<uint64_t>& cumulative_counts, double sum, uint64_t count);

  const std::string& text() const { return out_; }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

std::string escape_label_value(std::string_view value);

}  // namespace trainwatch
