#include <boost/beast/http/status.hpp>
#include <boost/json.hpp>

#include "core/json_text.h"
#include "http/server.h"

namespace trainwatch::http {

std::string_view Request::header(std::string_view name) const {
  auto it = headers.find(std::string(name));
  return it == headers.end() ? std::string_view() : std::string_view(it->second);
}

Response Response::text(int status, std::string body) {
  Response r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

Response Response::json(int status, std::string body) {
  Response r;
  r.status = status;
  r.content_type = "application/json";
  r.body = std::move(body);
  return r;
}

Response Response::no_content() {
  Response r;
  r.status = 204;
  return r;
}

Response Response::problem(int status, std::string_view detail) {
  auto reason = boost::beast::http::obsolete_reason(static_cast<boost::beast::http::status>(status));
  boost::json::object doc{{"type", "about:blank"},
                          {"title", std::string_view(reason.data(), reason.size())},
                          {"status", status},
                          {"detail", detail}};
  Response r;
  r.status = status;
  r.content_type = "application/problem+json";
  r.body = json_text(doc);
  return r;
}

struct Responder::State {
  std::atomic<bool> sent{false};
  SendFn send;
};

Responder::Responder(SendFn send) : state_(std::make_shared<State>()) { state_->send = std::move(send); }

void Responder::operator()(Response response) const {
  // exchange() makes the first call win even when two threads race.
  if (state_->sent.exchange(true)) return;
  state_->send(std::move(response));
  state_->send = nullptr;  // drop what the send function holds (the connection) at once
}

}  // namespace trainwatch::http
