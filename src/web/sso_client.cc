#include "web/sso_client.h"

#include <curl/curl.h>

#include <memory>

#include <boost/json/parse.hpp>

#include "net/curl_multi.h"

namespace trainwatch::web {
namespace {

namespace json = boost::json;

struct HttpAnswer {
  long status = 0;
  std::string body;
};

size_t collect(char* data, size_t size, size_t count, void* user) {
  auto* body = static_cast<std::string*>(user);
  if (body->size() + size * count > SsoClient::kMaxResponseBytes) return 0;  // aborts the transfer
  body->append(data, size * count);
  return size * count;
}

// One blocking exchange within `timeout`: GET, or POST of `form` (x-www-form-urlencoded).
Result<HttpAnswer> http_call(const std::string& url, const std::string* form, Millis timeout) {
  net::init_curl_once();
  std::unique_ptr<CURL, decltype(&curl_easy_cleanup)> easy(curl_easy_init(), curl_easy_cleanup);
  if (!easy) return Error{"oidc.http", "cannot start an HTTP request"};
  HttpAnswer answer;
  curl_easy_setopt(easy.get(), CURLOPT_URL, url.c_str());
  curl_easy_setopt(easy.get(), CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(easy.get(), CURLOPT_TIMEOUT_MS, static_cast<long>(timeout.count()));
  curl_easy_setopt(easy.get(), CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(easy.get(), CURLOPT_WRITEFUNCTION, collect);
  curl_easy_setopt(easy.get(), CURLOPT_WRITEDATA, &answer.body);
  std::unique_ptr<curl_slist, decltype(&curl_slist_free_all)> headers(
      curl_slist_append(nullptr, "Accept: application/json"), curl_slist_free_all);
  curl_easy_setopt(easy.get(), CURLOPT_HTTPHEADER, headers.get());
  if (form != nullptr) {
    curl_easy_setopt(easy.get(), CURLOPT_POSTFIELDS, form->c_str());
    curl_easy_setopt(easy.get(), CURLOPT_POSTFIELDSIZE, static_cast<long>(form->size()));
  }
  if (CURLcode rc = curl_easy_perform(easy.get()); rc != CURLE_OK)
    return Error{"oidc.http", url + ": " + curl_easy_strerror(rc)};
  curl_easy_getinfo(easy.get(), CURLINFO_RESPONSE_CODE, &answer.status);
  return answer;
}

Result<json::object> json_call(const std::string& url, const std::string* form,
                               Millis timeout = SsoClient::kHttpTimeout) {
  auto answer = http_call(url, form, timeout);
  if (!answer) return answer.error();
  boost::system::error_code ec;
  json::value v = json::parse(answer->body, ec);
  if (answer->status != 200) {
    std::string detail;
    if (!ec && v.is_object() && v.as_object().contains("error") && v.at("error").is_string())
      detail = ": " + std::string(v.at("error").as_string());
    return Error{"oidc.http", url + " answered " + std::to_string(answer->status) + detail};
  }
  if (ec || !v.is_object()) return Error{"oidc.http", url + " did not answer a JSON object"};
  return std::move(v.as_object());
}

std::string string_field(const json::object& o, std::string_view key) {
  const json::value* v = o.if_contains(key);
  return v != nullptr && v->is_string() ? std::string(v->as_string()) : std::string();
}

// The provider's endpoints from its discovery document, within `timeout`.
Result<ProviderEndpoints> read_discovery(const OidcConfig& config, Millis timeout) {
  std::string issuer = config.issuer;
  while (!issuer.empty() && issuer.back() == '/') issuer.pop_back();
  auto doc = json_call(issuer + "/.well-known/openid-configuration", nullptr, timeout);
  if (!doc)
    return Error{"oidc.discovery", "cannot read the provider's discovery document: " + doc.error().message};
  ProviderEndpoints e{string_field(*doc, "authorization_endpoint"), string_field(*doc, "token_endpoint"),
                      string_field(*doc, "jwks_uri"), string_field(*doc, "end_session_endpoint")};
  if (string_field(*doc, "issuer") != config.issuer)
    return Error{"oidc.discovery", "the provider's discovery document names issuer '" +
                                       string_field(*doc, "issuer") + "', not auth.oidc.issuer '" +
                                       config.issuer + "'"};
  if (e.authorization_endpoint.empty() || e.token_endpoint.empty() || e.jwks_uri.empty())
    return Error{"oidc.discovery", "the provider's discovery document lacks an endpoint"};
  return e;
}

// The provider's keys: discovery, then its JWKS, each within half of `timeout`.
Result<auth::KeySet> read_keys(const OidcConfig& config, Millis timeout) {
  auto endpoints = read_discovery(config, timeout / 2);
  if (!endpoints) return endpoints.error();
  auto answer = http_call(endpoints->jwks_uri, nullptr, timeout / 2);
  if (!answer) return Error{"oidc.jwks", "cannot read the provider's keys: " + answer.error().message};
  if (answer->status != 200)
    return Error{"oidc.jwks", endpoints->jwks_uri + " answered " + std::to_string(answer->status)};
  return auth::parse_jwks(answer->body);
}

std::string form_escape(const std::string& text) {
  char* escaped = curl_easy_escape(nullptr, text.c_str(), static_cast<int>(text.size()));
  std::string out = escaped != nullptr ? escaped : "";
  curl_free(escaped);
  return out;
}

}  // namespace

SsoClient::SsoClient(OidcConfig config, const Clock& clock)
    : config_(std::move(config)),
      clock_(clock),
      keys_([this](Millis timeout) { return read_keys(config_, timeout); }, clock),
      worker_([this] { run(); }) {}

SsoClient::~SsoClient() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  worker_.join();
}

bool SsoClient::post(std::function<void()> job) {
  {
    std::lock_guard lock(mu_);
    if (stopping_ || jobs_.size() >= kMaxQueued) return false;
    jobs_.push_back(std::move(job));
  }
  wake_.notify_one();
  return true;
}

void SsoClient::run() {
  for (;;) {
    std::function<void()> job;
    {
      std::unique_lock lock(mu_);
      wake_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
      if (stopping_) return;
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    job();
  }
}

Result<ProviderEndpoints> SsoClient::discovery() {
  if (endpoints_) return *endpoints_;
  auto read = read_discovery(config_, kHttpTimeout);
  if (read) endpoints_ = *read;
  return read;
}

Result<std::string> SsoClient::exchange_code(const std::string& code, const std::string& code_verifier) {
  auto endpoints = discovery();
  if (!endpoints) return endpoints.error();
  const std::string form =
      "grant_type=authorization_code&code=" + form_escape(code) +
      "&redirect_uri=" + form_escape(config_.redirect_url) + "&code_verifier=" + form_escape(code_verifier) +
      "&client_id=" + form_escape(config_.client_id) + "&client_secret=" + form_escape(config_.client_secret);
  auto answer = json_call(endpoints->token_endpoint, &form);
  if (!answer) {
    endpoints_.reset();  // a moved endpoint is found again at the next login
    return Error{"oidc.token", "the provider refused the login's code: " + answer.error().message};
  }
  std::string id_token = string_field(*answer, "id_token");
  if (id_token.empty()) return Error{"oidc.token", "the provider's token answer has no id_token"};
  return id_token;
}

Result<json::object> SsoClient::verify(const std::string& id_token, const std::string& nonce) {
  const auth::IdTokenExpectations expect{config_.issuer, config_.client_id, nonce, config_.trusted_audiences};
  auto keys = keys_.keys_for(auth::key_id_of(id_token));
  if (!keys) return keys.error();
  return auth::verify_id_token(id_token, *keys, expect, clock_.system_time());
}

}  // namespace trainwatch::web
