// Test helper of libsarfors's test (test_sarfors.py): routes a fabric and a job mapping through
// libsar's routing pass (engine sar, as the OpenSM plugin does) and publishes each alltoall job's
// FORS schedule beside the mapping with libsar's own writer (WriteForsSchedule, the function
// behind sar_result_publish_fors_schedules), so the test runs MPI on real schedules.
//   fors_schedule_gen TOPOLOGY MAPPING EPOCH
// Prints "<job> <path> <phases>" per schedule written; exit 1 on any error.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "sar/fors/fors_job.h"
#include "sar/io/topology.h"
#include "sar/model/lids.h"
#include "sar/pass/routing_pass.h"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: fors_schedule_gen TOPOLOGY MAPPING EPOCH\n");
    return 2;
  }
  sar::Fabric fabric;
  std::vector<std::string> warnings;
  sar::Status s = sar::ReadTopology(argv[1], &fabric, &warnings);
  if (s.ok() && fabric.max_lid() == 0) s = sar::AssignLids(sar::LidOptions(), &fabric);
  sar::RoutingRequest request;
  request.fabric = &fabric;
  request.options.engine = "sar";
  request.options.mapping_path = argv[2];
  sar::RoutingResult result;
  if (s.ok()) s = sar::RunRoutingPass(request, &result);
  const std::vector<sar::ForsJobPlan>& plans = result.fors;
  for (const sar::ForsJobPlan& plan : plans) {
    if (!s.ok()) break;
    const std::string path = sar::ForsSchedulePath(argv[2], plan.job_id);
    bool written = false;
    s = sar::WriteForsSchedule(path, plan, sar::FormatForsScheduleRows(fabric, plan),
                               std::strtoull(argv[3], nullptr, 10), &written);
    std::printf("%s %s %lld\n", plan.job_id.c_str(), path.c_str(),
                static_cast<long long>(plan.stats.phases));
  }
  if (!s.ok()) {
    std::fprintf(stderr, "fors_schedule_gen: %s\n", s.ToString().c_str());
    return 1;
  }
  return 0;
}
