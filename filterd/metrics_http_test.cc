#include "metrics_http.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <thread>
#include <vector>

#include "daemon_metrics.h"

namespace sar::filterd {
namespace {

std::string Get(int port, const std::string& request) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
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
