#include "server/metrics_http.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "daemon_metrics.h"
#include "test_util.h"

namespace sar::filterd {
namespace {

// Gives up after 5 s (connect, each read), so that a starved client ends the test.
std::string Get(int port, const std::string& request) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  const timeval limit{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof(limit));
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof(limit));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) return "connect failed";
  (void)!write(fd, request.data(), request.size());
  std::string reply;
  char buf[4096];
  for (ssize_t n; (n = read(fd, buf, sizeof(buf))) > 0;) reply.append(buf, n);
  close(fd);
  return reply;
}

std::string Serve(MetricsHttpServer* server, const std::string& request, const std::string& body) {
  std::string reply;
  std::atomic<bool> done{false};
  std::thread client([&] {
    reply = Get(server->port(), request);
    done = true;
  });
  for (int i = 0; i < 500 && !done; ++i) {
    std::vector<pollfd> fds;
    server->AddPollFds(&fds);
    poll(fds.data(), fds.size(), 10);
    server->Handle(fds, [&body] { return body; });
  }
  client.join();
  return reply;
}

TEST(MetricsHttp, ServesTheExpositionAtSlashMetrics) {
  MetricsHttpServer server;
  ASSERT_TRUE(server.Open("127.0.0.1:0").ok());
  ASSERT_GT(server.port(), 0);
  DaemonMetrics m;
  m.reroutes = 3;
  m.multi_switch_jobs = 17;
  const std::string body = FormatPrometheus(m);
  const std::string reply = Serve(&server, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", body);
  ASSERT_EQ(reply.rfind("HTTP/1.0 200 OK\r\n", 0), 0u) << reply;
  const size_t head = reply.find("\r\n\r\n");
  EXPECT_EQ(reply.substr(head + 4), body);
  EXPECT_NE(reply.find("Content-Length: " + std::to_string(body.size())), std::string::npos);
  // The figures a scraper reads, as Prometheus' text format spells them.
  EXPECT_NE(body.find("\nsar_filterd_reroutes_total 3\n"), std::string::npos) << body;
  EXPECT_NE(body.find("\nsar_filterd_multi_switch_jobs 17\n"), std::string::npos) << body;
  EXPECT_NE(body.find("# TYPE sar_filterd_reroutes_total counter\n"), std::string::npos);

  EXPECT_EQ(Serve(&server, "GET / HTTP/1.1\r\n\r\n", body).rfind("HTTP/1.0 404", 0), 0u);
}

// Issue 34 defect 10: 200 clients on 127.0.0.1 sending a byte a second (and connecting again
// when dropped) held all 16 slots and the backlog, and a scrape waited for many seconds. It must
// be answered promptly, again and again, while they keep at it.
TEST(MetricsHttp, DribblingClientsDoNotStarveAScrape) {
  MetricsHttpServer server;
  ASSERT_TRUE(server.Open("127.0.0.1:0").ok());
  const int port = server.port();
  Dribblers dribblers(200, [port] {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 &&
        errno != EINPROGRESS) {
      close(fd);
      return -1;
    }
    return fd;
  });
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  auto since = [](Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
  };
  // Scrapes start at 1 s (every slot taken) and at 2.5 s (past the first deadlines: the
  // dribblers come back); each gets at most 5 s, so the test ends even when they starve.
  std::vector<double> waited;
  std::vector<std::string> replies;
  std::vector<std::thread> scrapers;
  for (double start : {1.0, 2.5}) {
    scrapers.emplace_back([&, start] {
      std::this_thread::sleep_until(t0 + std::chrono::duration<double>(start));
      const auto asked = Clock::now();
      std::string reply = Get(port, "GET /metrics HTTP/1.1\r\n\r\n");
      static std::mutex m;
      std::lock_guard<std::mutex> lock(m);
      waited.push_back(since(asked));
      replies.push_back(std::move(reply));
    });
  }
  while (since(t0) < 8.0 && (since(t0) < 3.0 || replies.size() < 2)) {
    std::vector<pollfd> fds;
    server.AddPollFds(&fds);
    poll(fds.data(), fds.size(), 10);
    server.Handle(fds, [] { return std::string("sar_filterd_up 1\n"); });
  }
  for (std::thread& t : scrapers) t.join();
  ASSERT_EQ(replies.size(), 2u);
  for (size_t i = 0; i < replies.size(); ++i) {
    EXPECT_EQ(replies[i].rfind("HTTP/1.0 200 OK\r\n", 0), 0u) << replies[i];
    EXPECT_LT(waited[i], 1.0) << "a scrape waited behind dribbling clients";
  }
  EXPECT_GE(dribblers.connects(), 200);
  EXPECT_LE(server.connections().open_connections(), 16u);
  EXPECT_GT(server.connections().evicted(), 0u);  // the cap was reached: the eviction was at work
}

TEST(MetricsHttp, LoopbackOnly) {
  MetricsHttpServer server;
  Status s = server.Open("0.0.0.0:9733");
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("loopback"), std::string::npos) << s.message();
  EXPECT_FALSE(server.Open("localhost").ok());
}

// Issue 19 defect 16: "19192x" was read as port 19192.
TEST(MetricsHttp, RejectsAnythingAfterThePort) {
  for (const char* bad : {"127.0.0.1:19192x", "127.0.0.1:19192 ", "127.0.0.1:", "127.0.0.1:+80",
                          "127.0.0.1:65536", "127.0.0.1:-1", " 127.0.0.1:80", "127.0.0.1:80:80"}) {
    sockaddr_in addr{};
    Status s = ParseMetricsListen(bad, &addr);
    EXPECT_FALSE(s.ok()) << bad;
    EXPECT_NE(s.message().find(bad), std::string::npos) << s.message();
    MetricsHttpServer server;
    EXPECT_FALSE(server.Open(bad).ok()) << bad;
    EXPECT_LT(server.fd(), 0) << bad;
  }
  sockaddr_in addr{};
  ASSERT_TRUE(ParseMetricsListen("127.0.0.2:19192", &addr).ok());
  EXPECT_EQ(ntohs(addr.sin_port), 19192);
  EXPECT_EQ(ntohl(addr.sin_addr.s_addr), 0x7f000002u);
}

}  // namespace
}  // namespace sar::filterd
