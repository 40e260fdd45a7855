// Test only (tests/integration/test_fault_matrix.py): a reroute's stages follow each other
// within microseconds, too close to SIGSTOP or SIGKILL sar-filterd between two of them from
// outside. If $SAR_FILTERD_TEST_STOP_FILE names a file holding `stage` ("poll": a poll answered,
// before filtering; "mapping": the mapping written, before the trigger; "signal": the trigger
// sent, before the state is saved), the file is removed and the daemon stops itself (SIGSTOP),
// exactly as a SIGSTOP from outside at that point would; the test then sends SIGCONT or
// SIGKILL. One-shot per arming. Unset (any production run), it costs one getenv() per stage.
#pragma once

namespace sar::filterd {

void TestStopPoint(const char* stage);

}  // namespace sar::filterd
