#include "sar/io/layers_file.h"

#include <gtest/gtest.h>

#include <string>

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
  VirtualLayers back;
  const Status st = ParseVirtualLayers(FormatVirtualLayers(v), "w", &back);
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
