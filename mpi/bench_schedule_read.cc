// What reading a FORS schedule costs each MPI process under libsarfors: its C reader
// (sarfors_schedule_read, one host's part) against libsar's reader (ReadForsSchedule, every
// row; what `sar-route fors-schedule` uses), on ring-shift schedules of n hosts (n - 1 phases,
// n (n - 1) rows) written to a temporary file. Prints medians of 5 reads and the ratio.
//   build/mpi/bench_schedule_read [n ...]      (default 256 1024 2048)
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "../bench/bench_util.h"
#include "sar/fors/fors_job.h"
#include "sarfors_schedule.h"

int main(int argc, char** argv) {
  std::vector<int> sizes;
  for (int i = 1; i < argc; ++i) sizes.push_back(std::atoi(argv[i]));
  if (sizes.empty()) sizes = {256, 1024, 2048};
  char dir[] = "/tmp/bench_schedule_read.XXXXXX";
  if (mkdtemp(dir) == nullptr) return 1;
  const std::string path = std::string(dir) + "/schedule";
  std::printf("%6s %10s %9s %14s %14s %6s\n", "hosts", "rows", "MB", "libsarfors ms", "libsar ms",
              "ratio");
  for (int n : sizes) {
    std::string text =
        "# sar-fors-schedule 1\n# job 1 epoch 1 generation 0123456789abcdef phases " +
        std::to_string(n - 1) + " lower_bound " + std::to_string(n - 1) + " hosts " +
        std::to_string(n) + "\nphase,src,dst,dlid\n";
    char row[96];
    for (int p = 1; p < n; ++p) {
      for (int i = 0; i < n; ++i) {
        std::snprintf(row, sizeof row, "%d,h%05d,h%05d,%d\n", p - 1, i, (i + p) % n,
                      (i + p) % n + 1);
        text += row;
      }
    }
    FILE* f = std::fopen(path.c_str(), "w");
    if (f == nullptr) return 1;
    std::fwrite(text.data(), 1, text.size(), f);
    std::fclose(f);
    chmod(path.c_str(), 0640);
    std::vector<double> c_ms, cxx_ms;
    for (int rep = 0; rep < 5; ++rep) {
      auto t0 = std::chrono::steady_clock::now();
      sarfors_schedule_t s{};
      char err[256];
      if (sarfors_schedule_read(path.c_str(), "h00000", size_t{1} << 30, &s, err, sizeof err) !=
          0) {
        std::fprintf(stderr, "%s\n", err);
        return 1;
      }
      c_ms.push_back(sar::bench::Ms(t0));
      sarfors_schedule_free(&s);
      t0 = std::chrono::steady_clock::now();
      sar::ForsScheduleFile file;
      const sar::Status st = sar::ReadForsSchedule(path, &file);
      if (!st.ok()) {
        std::fprintf(stderr, "%s\n", st.ToString().c_str());
        return 1;
      }
      cxx_ms.push_back(sar::bench::Ms(t0));
    }
    const double c = sar::bench::Median(c_ms), cxx = sar::bench::Median(cxx_ms);
    std::printf("%6d %10lld %9.1f %14.1f %14.1f %6.2f\n", n, static_cast<long long>(n) * (n - 1),
                text.size() / 1048576.0, c, cxx, c / cxx);
  }
  unlink(path.c_str());
  rmdir(dir);
  return 0;
}
