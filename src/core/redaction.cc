#include "core/redaction.h"

#include <algorithm>

#include "core/enum_names.h"

namespace trainwatch {

namespace {
constexpr EnumNames<Audience, 4> kAudienceNames{{{Audience::kPublic, "public"},
                                                 {Audience::kViewer, "viewer"},
                                                 {Audience::kEditor, "editor"},
                                                 {Audience::kAdmin, "admin"}}};
}  // namespace

std::string_view audience_name(Audience audience) { return name_of(kAudienceNames, audience); }

std::string mark_body_value(std::string_view value) {
  std::string out;
  out.reserve(value.size() + 2);
  out += kBodyValueOpen;
  for (char c : value) {
    if (c != kBodyValueOpen && c != kBodyValueClose) out += c;
  }
  out += kBodyValueClose;
  return out;
}

std::string cause_for(std::string_view cause, Audience audience) {
  std::string out;
  out.reserve(cause.size());
  bool inside = false;
  for (char c : cause) {
    if (c == kBodyValueOpen) {
      // A stray open inside a value (never written by mark_body_value) keeps redacting.
      if (!inside && audience == Audience::kPublic) out += kRedactedValue;
      inside = true;
    } else if (c == kBodyValueClose) {
      inside = false;
    } else if (!inside || audience != Audience::kPublic) {
      out += c;
    }
  }
  return out;
}

std::string redact_url(std::string_view url) {
  std::string out;
  const size_t scheme_end = url.find("://");
  size_t path_start = 0;
  if (scheme_end != std::string_view::npos) {
    const size_t authority_start = scheme_end + 3;
    const size_t authority_end = std::min(url.find_first_of("/?#", authority_start), url.size());
    const std::string_view authority = url.substr(authority_start, authority_end - authority_start);
    out.append(url.substr(0, authority_start));
    // The last '@' ends the userinfo: a password may itself contain an (unencoded) '@'.
    const size_t at = authority.rfind('@');
    if (at != std::string_view::npos) {
      out.append("***@").append(authority.substr(at + 1));
    } else {
      out.append(authority);
    }
    path_start = authority_end;
  }
  const size_t query = url.find_first_of("?#", path_start);
  out.append(
      url.substr(path_start, query == std::string_view::npos ? std::string_view::npos : query - path_start));
  if (query != std::string_view::npos) out.append(url[query] == '?' ? "?***" : "#***");
  return out;
}

std::string url_for(std::string_view url, Audience audience) {
  return sees_monitor_secrets(audience) ? std::string(url) : redact_url(url);
}

}  // namespace trainwatch
