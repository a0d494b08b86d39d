#include "jobs/report_batch.h"

#include <charconv>
#include <optional>

namespace trainwatch::jobs {
namespace {

// One entry's head line, "<a> <b> ... <bytes>\n": its words before the length, and the
// bytes after the line; advances `in` past the entry. nullopt when malformed.
struct Entry {
  std::vector<std::string_view> words;
  std::string_view bytes;
};

std::optional<Entry> next_entry(std::string_view& in, size_t words) {
  const size_t eol = in.find('\n');
  if (eol == std::string_view::npos || eol > 512) return std::nullopt;
  std::string_view line = in.substr(0, eol);
  Entry e;
  for (size_t i = 0; i < words; ++i) {
    const size_t space = line.find(' ');
    if (space == std::string_view::npos || space == 0) return std::nullopt;
    e.words.push_back(line.substr(0, space));
    line.remove_prefix(space + 1);
  }
  size_t size = 0;
  const auto [end, ec] = std::from_chars(line.data(), line.data() + line.size(), size);
  if (ec != std::errc() || end != line.data() + line.size() || line.empty()) return std::nullopt;
  in.remove_prefix(eol + 1);
  if (size > in.size()) return std::nullopt;
  e.bytes = in.substr(0, size);
  in.remove_prefix(size);
  return e;
}

Error malformed(size_t index) {
  return make_error("batch.malformed", "entry " + std::to_string(index) + " of the batch is malformed");
}

}  // namespace

void append_report(std::string& batch, const BatchedReport& report) {
  batch += report.job;
  batch += ' ';
  batch += report.hop;
  batch += ' ';
  batch += std::to_string(report.body.size());
  batch += '\n';
  batch += report.body;
}

Result<std::vector<BatchedReport>> parse_report_batch(std::string_view batch) {
  std::vector<BatchedReport> out;
  while (!batch.empty()) {
    if (out.size() == kMaxBatchReports) {
      return make_error("batch.too_large", "more than " + std::to_string(kMaxBatchReports) + " reports");
    }
    auto e = next_entry(batch, 2);
    if (!e) return malformed(out.size());
    out.push_back({std::string(e->words[0]), std::string(e->words[1]), std::string(e->bytes)});
  }
  return out;
}

void append_answer(std::string& answers, const BatchedAnswer& answer) {
  answers += std::to_string(answer.status);
  answers += ' ';
  answers += std::to_string(answer.text.size());
  answers += '\n';
  answers += answer.text;
}

Result<std::vector<BatchedAnswer>> parse_answer_batch(std::string_view answers) {
  std::vector<BatchedAnswer> out;
  while (!answers.empty()) {
    if (out.size() == kMaxBatchReports) return malformed(out.size());
    auto e = next_entry(answers, 1);
    int status = 0;
    if (!e) return malformed(out.size());
    const std::string_view word = e->words[0];
    const auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), status);
    if (ec != std::errc() || end != word.data() + word.size() || status < 100 || status > 599) {
      return malformed(out.size());
    }
    out.push_back({status, std::string(e->bytes)});
  }
  return out;
}

}  // namespace trainwatch::jobs
