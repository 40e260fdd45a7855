// The evidence as one self-contained page: HTML (well-formed XML, so it can be checked with any
// XML parser), no external file. Charts are Vega-Lite specifications (the data inside), each in
// a <div class="chart" data-kind=".." data-title=".."> holding a
// <script type="application/json" class="vega-lite-spec">; Vega and Vega-Lite
// (third_party/vega), inlined in CDATA, draw them as SVG when the page is opened.
//
//   - a table per engine (mean / p95 / max of max effective EFI, dark fiber, reroutes);
//   - time series (SAR paper Fig. 7 style, kind "series"): max effective EFI, dark fiber, ...
//     per event, rows {t: days, v, s: series} drawn as steps; engines equal at every event are
//     one series named "a = b" (and a <p class="coincide"> says so), as one line hides another;
//   - a leaf-to-upper-switch link-load heat map (SAR Fig. 2 style, kind "heatmap") before and
//     after one reroute: a layer of cells {l: leaf, u: upper switch, v, up, down} per pair that a
//     cable joins, v the larger effective EFI of the two directions (parallel cables summed),
//     coloured on a 0..max scale with a legend, and a grey layer {l, u} where no cable does;
//   - optional extra tables (name, header, rows) from other analyses.
// `sar-route compare --html` uses the same pieces: its table and one heat map per engine.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "sar/model/fabric.h"
#include "sar/study/replay.h"
#include "sar/study/study.h"

namespace sar {

struct ReportTable {
  std::string caption;
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
};

struct ReplayReportInput {
  std::string title;
  const Fabric* fabric = nullptr;
  const ReplayResult* result = nullptr;
  /// The heat map (omitted when before/after are null): effective EFI per PortId.
  std::string heatmap_engine;
  int heatmap_event = -1;
  const std::vector<uint64_t>* before = nullptr;
  const std::vector<uint64_t>* after = nullptr;
  std::vector<ReportTable> tables;
};

/// (leaf, upper switch) pairs joined by a cable, in fabric order: the heat map's cells. A leaf
/// is a switch with a cabled HCA; an upper switch is a switch without one.
struct LeafUpperPair {
  NodeId leaf, upper;
};
std::vector<LeafUpperPair> LeafUpperPairs(const Fabric& fabric);

std::string ReplayReportHtml(const ReplayReportInput& in);

// The pieces, for other reports (sar-route compare --html).
/// A whole page around `body` (already HTML), with the report's style; with the chart libraries
/// and their renderer if `body` has a chart.
std::string ReportPageHtml(const std::string& title, const std::string& body);
std::string ReportTableHtml(const ReportTable& table);
/// The heat map described above for one load vector (per PortId), colours scaled to `max`.
std::string LinkLoadHeatmapHtml(const Fabric& fabric, const std::vector<uint64_t>& load,
                                uint64_t max, const std::string& title);

/// One series of a scatter chart, with an optional fitted line y = intercept + slope * x.
struct ChartSeries {
  std::string name;
  std::vector<std::pair<double, double>> points;
  bool has_line = false;
  double intercept = 0, slope = 0;
};
/// A scatter chart (kind "scatter"): a layer of points {x, y, s: series} and one of fitted
/// lines (two rows per series with has_line, over the x range of its points). Series equal in
/// points and fit are one, named "a = b". Colours per series as in the other charts; the y
/// axis spans the data (not from 0), so small degradations show.
std::string ScatterChartHtml(const std::string& title, const std::string& xlabel,
                             const std::string& ylabel, const std::vector<ChartSeries>& series);

/// `text` with &, <, >, " escaped.
std::string HtmlEscape(const std::string& text);

/// The fail-in-place study's page: the regression table (Table V style) and the curves with
/// their fitted lines (router/src/report/study_report.cc).
std::string StudyReportHtml(const std::string& title, const StudyResult& result);

}  // namespace sar
