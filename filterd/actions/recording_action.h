// A test action: records every request it is given and fails on demand, so the daemon's tests
// can check what would reach the router without a subnet manager. Tests only.
#pragma once

#include <vector>

#include "actions/action.h"

namespace sar::filterd {

class RecordingAction : public Action {
 public:
  /// `mapping_file` empty: writes no mapping.
  explicit RecordingAction(std::string mapping_file = "", bool dry_run = false)
      : Action(std::move(mapping_file), dry_run) {}
  const char* name() const override { return "recording"; }

  std::vector<std::vector<MultiSwitchJob>> applied;  // the sets, in order
  std::vector<JobMapping> mappings;
  Status fail_with = Status::OK();  // returned by the next DoApply calls while set

 protected:
  Status DoApply(const ActionRequest& request) override {
    applied.push_back(request.jobs);
    mappings.push_back(request.mapping);
    return fail_with;
  }
};

}  // namespace sar::filterd
