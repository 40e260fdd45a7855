#include "sar/routing_pass.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "engines/engine_test_util.h"
#include "invalid_tables_test_util.h"
#include "sar/io/job_file.h"
#include "test_fabrics.h"

namespace sar {
namespace {

std::string TempFile(const std::string& name, const std::string& text) {
  static const std::string dir = [] {
    std::string t = "/tmp/routing_pass_test.XXXXXX";
    EXPECT_NE(::mkdtemp(t.data()), nullptr);
    return t;
  }();
  const std::string path = dir + "/" + name;
  std::ofstream(path) << text;
  return path;
}

Status Validate(const Fabric& f, const invalidtables::Case& c, int max_layers = 0) {
  ValidationOptions o;
  o.num_vls = c.num_vls;
  o.max_layers = max_layers;
  o.threads = 1;
  ValidationReport r;
  return ValidateRouting(f, c.lfts, c.layers.size() > 0 ? &c.layers : nullptr, c.num_layers, o, &r);
}

TEST(ValidateRouting, ValidTablesPass) {
  const Fabric f = invalidtables::Triangle();
  ValidationOptions o;
  ValidationReport r;
  const Status s = ValidateRouting(f, invalidtables::Valid(f), nullptr, 1, o, &r);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(r.trace.pairs, 6u);
  EXPECT_EQ(r.trace.delivered, 6u);
  EXPECT_TRUE(r.deadlock_checked);
}

TEST(ValidateRouting, EachInvalidKindFailsWithItsMessage) {
  const Fabric f = invalidtables::Triangle();
  for (const invalidtables::Case& c : invalidtables::InvalidCases(f)) {
    const Status s = Validate(f, c);
    EXPECT_EQ(s.code(), Status::Code::kFailed) << c.name;
    EXPECT_EQ(s.message(), c.message) << c.name;
  }
}

TEST(ValidateRouting, MaxLayersBelowTheVirtualLanes) {
  const Fabric f = invalidtables::Triangle();
  invalidtables::Case c = invalidtables::TooManyLayers(f, 8);
  EXPECT_TRUE(Validate(f, c).ok());
  const Status s = Validate(f, c, /*max_layers=*/1);
  EXPECT_EQ(s.message(), "invalid routing: the routes need 3 virtual layers, 1 usable");
}

TEST(ValidateRouting, TablesOfAnotherFabricAreRefused) {
  const Fabric f = invalidtables::Triangle();
  ValidationReport r;
  const Status s = ValidateRouting(f, LftSet(2, f.max_lid()), nullptr, 1, {}, &r);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
}

TEST(ValidateRouting, UnknownLayersSkipTheDependencyCheckOnly) {
  const Fabric f = invalidtables::Triangle();
  const invalidtables::Case cyclic = invalidtables::InvalidCases(f)[2];
  ValidationOptions o;
  o.layers_known = false;
  ValidationReport r;
  EXPECT_TRUE(ValidateRouting(f, cyclic.lfts, nullptr, 1, o, &r).ok());
  EXPECT_FALSE(r.deadlock_checked);
  const invalidtables::Case hole = invalidtables::InvalidCases(f)[0];
  EXPECT_FALSE(ValidateRouting(f, hole.lfts, nullptr, 1, o, &r).ok());
}

TEST(ValidateRouting, AllowDisconnectedToleratesHolesNotLoops) {
  const Fabric f = invalidtables::Triangle();
  const auto cases = invalidtables::InvalidCases(f);
  ValidationOptions o;
  o.allow_disconnected = true;
  ValidationReport r;
  EXPECT_TRUE(ValidateRouting(f, cases[0].lfts, nullptr, 1, o, &r).ok());
  EXPECT_EQ(r.trace.unreachable, 1u);
  EXPECT_FALSE(ValidateRouting(f, cases[1].lfts, nullptr, 1, o, &r).ok());
}

// --- LoadRoutingInputs ----------------------------------------------------------------------

TEST(LoadRoutingInputs, EmptyOrMissingMappingRoutesPlainDfsssp) {
  const Fabric f = testfab::FatTree2(3, 2, 2);
  RoutingOptions o;
  RoutingInputs in;
  ASSERT_TRUE(LoadRoutingInputs(f, o, &in).ok());
  EXPECT_EQ(in.engine, "dfsssp");
  ASSERT_EQ(in.notes.size(), 1u);
  EXPECT_EQ(in.notes[0], "job mapping (none given): routing with plain dfsssp");

  o.mapping_path = TempFile("empty.map", "# nothing\n");
  ASSERT_TRUE(LoadRoutingInputs(f, o, &in).ok());
  EXPECT_EQ(in.engine, "dfsssp");
  EXPECT_EQ(in.notes[0],
            "job mapping " + o.mapping_path + " lists no jobs: routing with plain dfsssp");

  o.mapping_path = "/nonexistent/routing_pass/jobs";
  EXPECT_EQ(LoadRoutingInputs(f, o, &in).code(), Status::Code::kIOError);
  o.mapping_optional = true;
  ASSERT_TRUE(LoadRoutingInputs(f, o, &in).ok());
  EXPECT_EQ(in.engine, "dfsssp");
  EXPECT_NE(in.notes[0].find("does not exist: routing with plain dfsssp"), std::string::npos);

  // Another engine is never replaced.
  o.engine = "minhop";
  ASSERT_TRUE(LoadRoutingInputs(f, o, &in).ok());
  EXPECT_EQ(in.engine, "minhop");
  EXPECT_TRUE(in.notes.empty());
}

TEST(LoadRoutingInputs, JobsPatternsUnknownHostsAndRoots) {
  const Fabric f = testfab::FatTree2(3, 2, 2);
  RoutingOptions o;
  o.mapping_path =
      TempFile("jobs.map", "h0000 7 alltoall\nh0002 7 alltoall\nh0001 8\nh0005 8\nghost 8\n");
  o.root_names = {"spine01"};
  RoutingInputs in;
  ASSERT_TRUE(LoadRoutingInputs(f, o, &in).ok());
  EXPECT_EQ(in.engine, "sar");
  ASSERT_EQ(in.jobs.size(), 2u);
  EXPECT_EQ(in.jobs[0].pattern, JobPattern::kAllToAll);
  EXPECT_EQ(in.jobs[1].endpoints.size(), 2u);
  ASSERT_EQ(in.roots.size(), 1u);
  EXPECT_EQ(f.name(in.roots[0]), "spine01");
  ASSERT_EQ(in.notes.size(), 1u);
  EXPECT_EQ(in.notes[0], "host 'ghost' of job mapping " + o.mapping_path + " is not in the fabric");
  const RoutingInput ein = in.EngineInput();
  EXPECT_EQ(ein.jobs, &in.jobs);
  EXPECT_EQ(ein.classes, nullptr);

  o.root_names = {"h0000"};
  EXPECT_EQ(LoadRoutingInputs(f, o, &in).code(), Status::Code::kInvalidArgument);
  o.root_names.clear();
  o.engine = "ftree";
  EXPECT_EQ(LoadRoutingInputs(f, o, &in).code(), Status::Code::kInvalidArgument);
}

TEST(LoadRoutingInputs, BrokenFilesNameFileAndLine) {
  const Fabric f = testfab::FatTree2(3, 2, 2);
  RoutingOptions o;
  o.mapping_path = TempFile("bad.map", "h0000 1\nh0001 1 2 3\n");
  RoutingInputs in;
  Status s = LoadRoutingInputs(f, o, &in);
  EXPECT_NE(s.message().find(o.mapping_path + ":2"), std::string::npos) << s.ToString();
  o.mapping_path.clear();
  o.io_guids_path = TempFile("io.guids", "0x1\nnot-a-guid\n");
  s = LoadRoutingInputs(f, o, &in);
  EXPECT_NE(s.message().find(o.io_guids_path + ":2"), std::string::npos) << s.ToString();
}

TEST(LoadRoutingInputs, InMemoryMappingEqualsTheFile) {
  const Fabric f = testfab::FatTree2(3, 2, 2);
  const std::string text = "h0000 1\nh0003 1\nh0004 1\n";
  RoutingOptions o;
  o.mapping_path = TempFile("mem.map", text);
  RoutingInputs from_file, from_memory;
  ASSERT_TRUE(LoadRoutingInputs(f, o, &from_file).ok());
  JobMapping m;
  ASSERT_TRUE(ParseJobMapping(text, "mem", &m).ok());
  ASSERT_TRUE(LoadRoutingInputs(f, o, m, &from_memory).ok());
  RoutingOutput a, b;
  ValidationReport ra, rb;
  ASSERT_TRUE(RunRoutingPass(from_file, &a, &ra).ok());
  ASSERT_TRUE(RunRoutingPass(from_memory, &b, &rb).ok());
  EXPECT_TRUE(a.lfts == b.lfts);
  EXPECT_EQ(ra.trace.pairs, 30u);
}

// --- RunRoutingPass ---------------------------------------------------------------------------

// A fabric where SAR needs more than one virtual layer: the pass passes it with the fabric's
// lanes and refuses it when the consumer carries one layer (sar-filterd's file mode).
TEST(RunRoutingPass, LayeredRoutesAreRefusedWhereOnlyOneLayerIsCarried) {
  const Fabric f = testfab::Ring(6, 2);
  RoutingOptions o;
  o.engine = "dfsssp";
  o.threads = 1;
  RoutingInputs in;
  ASSERT_TRUE(LoadRoutingInputs(f, o, &in).ok());
  RoutingOutput out;
  ValidationReport r;
  ASSERT_TRUE(RunRoutingPass(in, &out, &r).ok());
  EXPECT_GE(r.layers, 2);
  // One lane carried: the engine gets one and cannot make its routes deadlock-free.
  in.options.max_layers = 1;
  EXPECT_EQ(in.EngineInput().num_vls, 1);
  const Status s = RunRoutingPass(in, &out, &r);
  EXPECT_EQ(s.code(), Status::Code::kFailed);
  EXPECT_NE(s.message().find("needs more than 1 virtual layers"), std::string::npos) << s.message();
  // A fabric whose routes need one layer: the engine does not spread them over unused lanes.
  const Fabric tree = testfab::FatTree2(4, 2, 2);
  RoutingInputs tin;
  ASSERT_TRUE(LoadRoutingInputs(tree, o, &tin).ok());
  tin.options.max_layers = 1;
  ASSERT_TRUE(RunRoutingPass(tin, &out, &r).ok());
  EXPECT_EQ(out.num_layers, 1);
  // ... and its tables are those it makes with every lane (only the layers differ).
  RoutingOutput all_lanes;
  tin.options.max_layers = 0;
  ASSERT_TRUE(RunRoutingPass(tin, &all_lanes, &r).ok());
  EXPECT_TRUE(out.lfts == all_lanes.lfts);
}

}  // namespace
}  // namespace sar
