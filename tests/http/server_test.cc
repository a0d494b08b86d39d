// The HTTP server against a real client on loopback (port 0).
#include "http/server.h"

#include <gtest/gtest.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <thread>

namespace trainwatch::http {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
using tcp = asio::ip::tcp;

class ServerTest : public ::testing::Test {
 protected:
  void start(ServerOptions options = {}) {
    auto router = std::make_shared<Router>();
    router->add("GET", "/hello/{name}", [](const Request& req, Responder respond) {
      respond(Response::text(200, "hello " + req.params.at("name") + " " + req.query.at("x")));
    });
    router->add({"GET", "HEAD", "POST"}, "/echo", [](const Request& req, Responder respond) {
      respond(Response::text(200, req.method + ":" + req.body));
    });
    router->add("GET", "/files/{rest...}", [](const Request& req, Responder respond) {
      respond(Response::text(200, req.params.at("rest")));
    });
    router->add("GET", "/later", [this](const Request&, Responder respond) {
      // Answered from another thread, as a handler waiting for a commit would.
      waiter_ = std::thread([respond] { respond(Response::text(202, "done")); });
    });
    router->add("GET", "/throws", [](const Request&, Responder) -> void { throw std::runtime_error("boom"); });
    auto server = Server::start(io_, options, router);
    ASSERT_TRUE(server.ok()) << server.error().message;
    server_ = *server;
    thread_ = std::thread([this] { io_.run(); });
  }

  void TearDown() override {
    if (waiter_.joinable()) waiter_.join();
    if (server_) server_->stop();
    io_.stop();
    if (thread_.joinable()) thread_.join();
  }

  bhttp::response<bhttp::string_body> send(bhttp::verb verb, const std::string& target, std::string body = {}) {
    asio::io_context client_io;
    beast::tcp_stream stream(client_io);
    stream.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), server_->port()));
    bhttp::request<bhttp::string_body> req(verb, target, 11);
    req.set(bhttp::field::host, "localhost");
    req.body() = std::move(body);
    req.prepare_payload();
    bhttp::write(stream, req);
    beast::flat_buffer buffer;
    bhttp::response_parser<bhttp::string_body> parser;
    parser.skip(verb == bhttp::verb::head);
    bhttp::read(stream, buffer, parser);
    return parser.release();
  }

  asio::io_context io_;
  std::shared_ptr<Server> server_;
  std::thread thread_;
  std::thread waiter_;
};

TEST_F(ServerTest, RoutesWithCapturesAndQuery) {
  start();
  auto res = send(bhttp::verb::get, "/hello/rank%200?x=1");
  EXPECT_EQ(res.result_int(), 200);
  EXPECT_EQ(res.body(), "hello rank 0 1");
  EXPECT_EQ(send(bhttp::verb::get, "/files/a/b/c").body(), "a/b/c");
}

TEST_F(ServerTest, UnknownPathIs404ProblemAndWrongMethodIs405) {
  start();
  auto missing = send(bhttp::verb::get, "/nope");
  EXPECT_EQ(missing.result_int(), 404);
  EXPECT_EQ(missing[bhttp::field::content_type], "application/problem+json");
  EXPECT_NE(missing.body().find("\"detail\":\"no resource at /nope\""), std::string::npos);
  EXPECT_EQ(send(bhttp::verb::delete_, "/echo").result_int(), 405);
}

TEST_F(ServerTest, HeadHasLengthButNoBody) {
  start();
  auto res = send(bhttp::verb::head, "/echo");
  EXPECT_EQ(res.result_int(), 200);
  EXPECT_EQ(res[bhttp::field::content_length], "5");  // "HEAD:"
  EXPECT_TRUE(res.body().empty());
}

TEST_F(ServerTest, ResponderMayAnswerFromAnotherThread) {
  start();
  auto res = send(bhttp::verb::get, "/later");
  EXPECT_EQ(res.result_int(), 202);
  EXPECT_EQ(res.body(), "done");
}

TEST_F(ServerTest, HandlerExceptionIs500NotACrash) {
  start();
  EXPECT_EQ(send(bhttp::verb::get, "/throws").result_int(), 500);
  EXPECT_EQ(send(bhttp::verb::post, "/echo", "still up").body(), "POST:still up");
}

TEST_F(ServerTest, BodyOverTheLimitIs413) {
  ServerOptions options;
  options.max_body_bytes = 10;
  start(options);
  EXPECT_EQ(send(bhttp::verb::post, "/echo", std::string(11, 'x')).result_int(), 413);
  EXPECT_EQ(send(bhttp::verb::post, "/echo", std::string(10, 'x')).result_int(), 200);
}

TEST_F(ServerTest, BindingATakenPortFailsWithTheAddress) {
  start();
  asio::io_context other;
  auto second = Server::start(other, ServerOptions{.host = "127.0.0.1", .port = server_->port()},
                              std::make_shared<Router>());
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.error().message.find("127.0.0.1:" + std::to_string(server_->port())), std::string::npos);
}

TEST_F(ServerTest, IdleConnectionIsClosedAfterTheTimeout) {
  ServerOptions options;
  options.idle_timeout = Millis(200);
  start(options);
  asio::io_context client_io;
  tcp::socket socket(client_io);
  socket.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), server_->port()));
  char byte;
  beast::error_code ec;
  // The read returns when the server closes the silent connection; without the timeout
  // it would block forever (the test's own timeout would then fail it).
  socket.read_some(asio::buffer(&byte, 1), ec);
  EXPECT_EQ(ec, asio::error::eof);
}

}  // namespace
}  // namespace trainwatch::http
