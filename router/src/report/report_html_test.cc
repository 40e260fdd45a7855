#include "sar/report/report_html.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace sar {
namespace {

// The text of the first chart's Vega-Lite specification in `html`.
std::string FirstSpec(const std::string& html) {
  const std::string open = "class=\"vega-lite-spec\">";
  const size_t from = html.find(open);
  if (from == std::string::npos) return "";
  const size_t start = from + open.size();
  return html.substr(start, html.find("</script>", start) - start);
}

TEST(ReportHtmlTest, EqualSeriesAreOneNamedAfterAll) {
  ChartSeries a{"sar", {{0, 10}, {1, 9}}, true, 10, -1};
  ChartSeries b = a;
  b.name = "minhop";
  ChartSeries c{"dfsssp", {{0, 10}, {1, 8}}, true, 10, -2};
  const std::string html = ScatterChartHtml("t", "x", "y", {a, c, b});
  const std::string spec = FirstSpec(html);
  EXPECT_NE(spec.find("\"domain\":[\"sar = minhop\",\"dfsssp\"]"), std::string::npos) << spec;
  EXPECT_NE(spec.find("\"subtitle\":\"sar = minhop: equal"), std::string::npos) << spec;
  EXPECT_NE(html.find("class=\"coincide\""), std::string::npos);
  // Only the series that differ anywhere stay apart.
  c.points[1].second = 9;
  const std::string apart = FirstSpec(ScatterChartHtml("t", "x", "y", {a, c}));
  EXPECT_NE(apart.find("\"domain\":[\"sar\",\"dfsssp\"]"), std::string::npos) << apart;
}

TEST(ReportHtmlTest, HostileNamesStayInsideTheirScriptAndTheirText) {
  const std::string evil = "</script><script>alert(1)</script>&\"";
  ChartSeries s{evil, {{0, 1}, {1, 2}}, false, 0, 0};
  const std::string html = ReportPageHtml(evil, ScatterChartHtml(evil, evil, evil, {s}));
  const std::string spec = FirstSpec(html);
  EXPECT_EQ(spec.find('<'), std::string::npos) << spec;
  EXPECT_EQ(spec.find('&'), std::string::npos) << spec;
  EXPECT_NE(spec.find("\\u003c/script\\u003e"), std::string::npos) << spec;
  EXPECT_EQ(html.find("<script>alert"), std::string::npos);
  EXPECT_NE(html.find("<title>&lt;/script&gt;"), std::string::npos);
}

TEST(ReportHtmlTest, LibrariesOnlyWithCharts) {
  const std::string plain = ReportPageHtml("t", "<p>x</p>");
  EXPECT_EQ(plain.find("<script"), std::string::npos);
  const std::string charted =
      ReportPageHtml("t", ScatterChartHtml("c", "x", "y", {{"a", {{0, 1}}, false, 0, 0}}));
  EXPECT_NE(charted.find("<script>//<![CDATA["), std::string::npos);
  EXPECT_NE(charted.find("vegaLite.compile"), std::string::npos);
  // One CDATA end per inlined script (three): the libraries' own "]]>" were split.
  size_t ends = 0;
  for (size_t at = charted.find("]]>"); at != std::string::npos; at = charted.find("]]>", at + 1)) {
    ++ends;
  }
  EXPECT_EQ(ends, 3u);
}

}  // namespace
}  // namespace sar
