#include "control_socket.h"

#include <grp.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <thread>

#include "test_util.h"

namespace sar::filterd {
namespace {

std::string Ask(const std::string& path, const std::string& line) {
  const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) return "connect failed";
  (void)!write(fd, line.data(), line.size());
  std::string reply;
  char buf[128];
  for (ssize_t n; (n = read(fd, buf, sizeof(buf))) > 0;) reply.append(buf, n);
  close(fd);
  return reply;
}

TEST(ControlSocket, OwnerOnlyAndCommands) {
  TempDir dir;
  ControlSocket sock;
  ASSERT_TRUE(sock.Open(dir.Join("ctl")).ok());
  struct stat st {};
  ASSERT_EQ(stat(dir.Join("ctl").c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0600u);

  const struct {
    const char* line;
    const char* reply;
    bool poll;
  } cases[] = {{"job-start 42\n", "ok\n", true},
               {"poll\n", "ok\n", true},
               {"status\n", "counters\n", false},
               {"reboot\n", "error: unknown command\n", false}};
  for (const auto& c : cases) {
    std::string reply;
    std::thread client([&] { reply = Ask(dir.Join("ctl"), c.line); });
    bool poll_now = false;
    // The listening socket is non-blocking: wait until the client's connection is queued.
    for (int i = 0; i < 200 && !poll_now && reply.empty(); ++i) {
      fd_set fds;
      FD_ZERO(&fds);
      FD_SET(sock.fd(), &fds);
      timeval tv{0, 20000};
      if (select(sock.fd() + 1, &fds, nullptr, nullptr, &tv) == 1) {
        sock.ServeOne("counters", &poll_now);
        break;
      }
    }
    client.join();
    EXPECT_EQ(reply, c.reply) << c.line;
    EXPECT_EQ(poll_now, c.poll) << c.line;
  }
}

TEST(ControlSocket, AGroupGetsReadWrite) {
  TempDir dir;
  // A group this process may chown to without privileges: its own primary group.
  const struct group* g = getgrgid(getgid());
  ASSERT_NE(g, nullptr);
  ControlSocket sock;
  ASSERT_TRUE(sock.Open(dir.Join("ctl"), g->gr_name).ok());
  struct stat st {};
  ASSERT_EQ(stat(dir.Join("ctl").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0660u);
  EXPECT_EQ(st.st_gid, getgid());

  ControlSocket bad;
  Status s = bad.Open(dir.Join("ctl2"), "no-such-group-sar");
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("no-such-group-sar"), std::string::npos) << s.message();
  EXPECT_EQ(bad.fd(), -1);
}

}  // namespace
}  // namespace sar::filterd
