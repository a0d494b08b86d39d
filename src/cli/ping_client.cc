#include "cli/ping_client.h"

#include <curl/curl.h>

#include <memory>
#include <mutex>
#include <thread>

namespace trainwatch::cli {
namespace {

size_t discard(char*, size_t size, size_t count, void*) { return size * count; }

struct Attempt {
  CURLcode code = CURLE_OK;
  long status = 0;
  std::string error;
};

Attempt attempt(const std::string& url, const std::string* body, const PingClientOptions& options) {
  Attempt out;
  std::unique_ptr<CURL, decltype(&curl_easy_cleanup)> curl(curl_easy_init(), curl_easy_cleanup);
  if (!curl) {
    out.code = CURLE_FAILED_INIT;
    out.error = "cannot start libcurl";
    return out;
  }
  char error[CURL_ERROR_SIZE] = {};
  CURL* c = curl.get();
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(options.connect_timeout.count()));
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, static_cast<long>(options.total_timeout.count()));
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);  // timeouts without SIGALRM: safe beside a child process
  curl_easy_setopt(c, CURLOPT_USERAGENT, "trainwatch/" TRAINWATCH_VERSION);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, error);
  curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
  curl_easy_setopt(c, CURLOPT_MAXREDIRS, 3L);
  if (body != nullptr) {
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body->data());
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body->size()));
  }
  out.code = curl_easy_perform(c);
  if (out.code != CURLE_OK) {
    out.error = error[0] != '\0' ? error : curl_easy_strerror(out.code);
    return out;
  }
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &out.status);
  return out;
}

}  // namespace

std::string ping_url(std::string_view base, PingKind kind, int exit_code) {
  std::string suffix;
  switch (kind) {
    case PingKind::kSuccess: break;
    case PingKind::kStart: suffix = "/start"; break;
    case PingKind::kFail: suffix = "/fail"; break;
    case PingKind::kLog: suffix = "/log"; break;
    case PingKind::kExitCode: suffix = "/" + std::to_string(exit_code); break;
  }
  const size_t query = base.find_first_of("?#");
  std::string path(base.substr(0, query));
  while (!path.empty() && path.back() == '/') path.pop_back();
  return path + suffix + std::string(query == std::string_view::npos ? "" : base.substr(query));
}

Result<int> send_ping(const std::string& url, const std::string* body, const PingClientOptions& options) {
  static std::once_flag init;
  std::call_once(init, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  std::string cut;
  if (body != nullptr && body->size() > kMaxPingBodyBytes) {
    cut = body->substr(0, kMaxPingBodyBytes);
    body = &cut;
  }
  Millis backoff = options.first_backoff;
  std::string last_error;
  for (int i = 0; i < options.attempts; ++i) {
    if (i > 0) {
      std::this_thread::sleep_for(backoff);
      backoff *= 2;
    }
    Attempt a = attempt(url, body, options);
    if (a.code != CURLE_OK) {
      last_error = a.error;
      continue;
    }
    if (a.status >= 200 && a.status < 300) return static_cast<int>(a.status);
    last_error = "HTTP " + std::to_string(a.status);
    // Busy or briefly unavailable servers get another try; a wrong URL never gets better.
    if (a.status != 429 && a.status < 500) {
      return make_error("ping.rejected", url + ": the server answered " + last_error +
                                             (a.status == 404 ? " (unknown token)" : ""));
    }
  }
  return make_error("ping.unreachable", url + ": " + last_error + " after " +
                                            std::to_string(options.attempts) +
                                            (options.attempts == 1 ? " attempt" : " attempts"));
}

}  // namespace trainwatch::cli
