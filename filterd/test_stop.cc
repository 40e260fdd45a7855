#include "test_stop.h"

#include <signal.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

namespace sar::filterd {

void TestStopPoint(const char* stage) {
  const char* path = std::getenv("SAR_FILTERD_TEST_STOP_FILE");
  if (path == nullptr || *path == '\0') return;
  std::ifstream in(path);
  std::string armed;
  if (!(in >> armed) || armed != stage || unlink(path) != 0) return;
  spdlog::info("test stop point '{}': SIGSTOP", stage);
  spdlog::default_logger()->flush();
  raise(SIGSTOP);
}

}  // namespace sar::filterd
