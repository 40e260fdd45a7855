#include "sar/io/layers_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

#include "io/test_util.h"

namespace sar {
namespace {

TEST(LayersFileTest, Parses) {
  VirtualLayers v;
  const Status s = ParseVirtualLayers(
      "# layers\n\ndefault 2\n0x0001 0x0005 3\n0x0005 0x0001 0 # back\n17 0x2 15\n", "l", &v);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(v.default_layer, 2);
  EXPECT_EQ(v.size(), 3u);
  EXPECT_EQ(v.get(1, 5), 3);
  EXPECT_EQ(v.get(5, 1), 0);
  EXPECT_EQ(v.get(17, 2), 15);
  EXPECT_EQ(v.get(2, 17), 2);  // unlisted: default
}

TEST(LayersFileTest, RoundTrip) {
  VirtualLayers v;
  v.default_layer = 1;
  for (Lid s = 1; s < 40; s += 3) {
    for (Lid d = 1; d < 40; d += 7) v.set(s, d, static_cast<int>((s * d) % 16));
  }
  v.set(0xbfff, 1, 7);
  std::string text;
  ASSERT_TRUE(FormatVirtualLayers(v, &text).ok());
  EXPECT_EQ(text.size(), VirtualLayersTextSize(v));
  VirtualLayers back;
  const Status st = ParseVirtualLayers(text, "w", &back);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(back.default_layer, v.default_layer);
  ASSERT_EQ(back.size(), v.size());
  const auto a = v.Entries(), b = back.Entries();
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].src, b[i].src);
    EXPECT_EQ(a[i].dst, b[i].dst);
    EXPECT_EQ(a[i].layer, b[i].layer);
  }
}

TEST(LayersFileTest, TooLargeIsRefusedWithItsSizeAndNothingIsWritten) {
  // Issue 19 defect 22: an LMC 7 fabric lists ~2.4 billion routes (~34 GB of text). The same
  // check on a small limit: refused before the text is made, with the size, file untouched.
  VirtualLayers v;
  v.default_layer = 3;
  for (Lid s = 1; s <= 100; ++s) {
    for (Lid d = 1; d <= 100; ++d) v.set(s, d, (s + d) % 16);
  }
  const size_t size = VirtualLayersTextSize(v);
  std::string text = "stale";
  ASSERT_TRUE(FormatVirtualLayers(v, &text, size).ok());
  EXPECT_EQ(text.size(), size);
  Status s = FormatVirtualLayers(v, &text, size - 1);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(s.message().find("10000 routes would be " + std::to_string(size) + " bytes"),
            std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("limit of " + std::to_string(size - 1) + " bytes"), std::string::npos)
      << s.message();
  EXPECT_TRUE(text.empty());
  const std::string path = io::testing::MakeTempDir() + "/sl";
  s = WriteVirtualLayers(path, v, size - 1);
  EXPECT_EQ(s.code(), Status::Code::kIOError);
  EXPECT_NE(s.message().find(path), std::string::npos) << s.message();
  EXPECT_NE(::access(path.c_str(), F_OK), 0);  // nothing written
  ASSERT_TRUE(WriteVirtualLayers(path, v, size).ok());
  VirtualLayers back;
  ASSERT_TRUE(ReadVirtualLayers(path, &back).ok());
  EXPECT_EQ(back.size(), v.size());
  // The default limit: the routes of an LMC 7 fabric (128 LIDs a port) are far beyond it.
  EXPECT_LT(kMaxLayersFileBytes, size_t{49151} * 49151 * 16);
}

TEST(LayersFileTest, MalformedInputNamesFileAndLine) {
  struct Case {
    std::string what, text;
    int line;
  } cases[] = {
      {"layer 16", "0x1 0x2 3\n0x1 0x3 16\n", 2},
      {"default 16", "default 16\n", 1},
      {"two defaults", "default 1\n\ndefault 2\n", 3},
      {"LID zero", "0x0 0x2 1\n", 1},
      {"LID multicast", "0x1 0xc000 1\n", 1},
      {"two words", "0x1 0x2\n", 1},
      {"four words", "0x1 0x2 3 4\n", 1},
      {"route twice", "0x1 0x2 3\n0x1 0x2 3\n", 2},
      {"garbage", "# ok\nlayers: 3\n", 2},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    VirtualLayers v;
    const Status s = ParseVirtualLayers(c.text, "x.layers", &v);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.code(), Status::Code::kCorruption);
    EXPECT_NE(s.message().find("x.layers:" + std::to_string(c.line) + ":"), std::string::npos)
        << s.message();
  }
}

}  // namespace
}  // namespace sar
