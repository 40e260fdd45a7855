#include "sar/report/report_html.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <utility>

namespace sar {

// third_party/vega's two libraries, inlined at build time (cmake/embed_text.cmake).
extern const char kVegaJs[];
extern const char kVegaLiteJs[];

namespace {

// Colours that stay apart for the few engines a report shows (Vega's category10, reordered).
const char* const kColours[] = {"#d62728", "#1f77b4", "#2ca02c", "#9467bd",
                                "#ff7f0e", "#8c564b", "#e377c2", "#17becf"};

// Dash patterns per series: lines that meet at some points stay apart where they do.
const char* const kDashes[] = {"[1,0]", "[6,3]", "[2,2]",  "[8,3,2,3]",
                               "[4,4]", "[1,3]", "[10,2]", "[3,6]"};

std::string Num(double v, int decimals = 2) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

// A JSON number: shortest form that round-trips closely enough for a chart (NaN/inf: null).
std::string JsonNum(double v) {
  if (!std::isfinite(v)) return "null";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

// A JSON string that is also safe inside an HTML/XML <script>: <, >, & as \u escapes.
std::string JsonStr(const std::string& text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '<':
        out += "\\u003c";
        break;
      case '>':
        out += "\\u003e";
        break;
      case '&':
        out += "\\u0026";
        break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

std::string JsonStrList(const std::vector<std::string>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) out += (i ? "," : "") + JsonStr(items[i]);
  return out + "]";
}

bool IsLeaf(const Fabric& f, NodeId sw) {
  for (int p = 1; p <= f.num_ports(sw); ++p) {
    const PortRef peer = f.peer({sw, p});
    if (peer.valid() && !f.is_switch(peer.node)) return true;
  }
  return false;
}

// Series that are equal everywhere would be drawn on top of each other, so that only the last
// shows: one series per group of equal ones, named "a = b = c" (the legend says they coincide).
// `same(i, j)`: series i and j are equal. Returns per group the member indices, in order.
template <class Same>
std::vector<std::vector<size_t>> CoincidingGroups(size_t n, Same same) {
  std::vector<std::vector<size_t>> groups;
  for (size_t i = 0; i < n; ++i) {
    bool placed = false;
    for (auto& g : groups) {
      if (same(g[0], i)) {
        g.push_back(i);
        placed = true;
        break;
      }
    }
    if (!placed) groups.push_back({i});
  }
  return groups;
}

std::string GroupName(const std::vector<size_t>& group, const std::vector<std::string>& names) {
  std::string s;
  for (size_t k = 0; k < group.size(); ++k) s += (k ? " = " : "") + names[group[k]];
  return s;
}

// Vega-Lite's colour encoding for the groups: each group keeps its first member's colour, the
// legend titled `title`.
std::string ColourEncoding(const std::vector<std::vector<size_t>>& groups,
                           const std::vector<std::string>& names, const std::string& title) {
  std::vector<std::string> domain, range;
  for (const auto& g : groups) {
    domain.push_back(GroupName(g, names));
    range.push_back(kColours[g[0] % 8]);
  }
  return "{\"field\":\"s\",\"type\":\"nominal\",\"title\":" + JsonStr(title) +
         ",\"scale\":{\"domain\":" + JsonStrList(domain) + ",\"range\":" + JsonStrList(range) +
         "},\"legend\":{\"labelLimit\":400,\"orient\":\"right\"}}";
}

// The matching dash encoding (one legend with the colours: same field and title).
std::string DashEncoding(const std::vector<std::vector<size_t>>& groups,
                         const std::vector<std::string>& names, const std::string& title) {
  std::vector<std::string> domain;
  std::string range = "[";
  for (size_t g = 0; g < groups.size(); ++g) {
    domain.push_back(GroupName(groups[g], names));
    range += (g ? "," : "") + std::string(kDashes[g % 8]);
  }
  return "{\"field\":\"s\",\"type\":\"nominal\",\"title\":" + JsonStr(title) +
         ",\"scale\":{\"domain\":" + JsonStrList(domain) + ",\"range\":" + range + "]}}";
}

// The note under a chart naming the series drawn as one.
std::string CoincideNote(const std::vector<std::vector<size_t>>& groups,
                         const std::vector<std::string>& names, const std::string& what) {
  std::string s;
  for (const auto& g : groups) {
    if (g.size() > 1) s += (s.empty() ? "" : "; ") + GroupName(g, names);
  }
  if (s.empty()) return "";
  return "<p class=\"coincide\">One line for several engines: " + HtmlEscape(s) + " (" +
         HtmlEscape(what) + ").</p>\n";
}

// One chart: the Vega-Lite specification in a JSON <script> that the page's renderer
// (ReportPageHtml) draws as SVG into the <div> around it. `title` is also the div's
// data-title, so that tests and readers without JavaScript find the chart.
std::string ChartDiv(const std::string& kind, const std::string& title, const std::string& spec) {
  return "<div class=\"chart\" data-kind=\"" + kind + "\" data-title=\"" + HtmlEscape(title) +
         "\"><script type=\"application/json\" class=\"vega-lite-spec\">" + spec +
         "</script></div>\n";
}

std::string SpecHead(const std::string& title, const std::string& subtitle) {
  std::string s =
      "{\"$schema\":\"https://vega.github.io/schema/vega-lite/v6.json\",\"title\":{\"text\":" +
      JsonStr(title) + ",\"anchor\":\"start\"";
  if (!subtitle.empty()) s += ",\"subtitle\":" + JsonStr(subtitle);
  return s + "},\"config\":{\"font\":\"sans-serif\",\"axis\":{\"labelFontSize\":11," +
         "\"titleFontSize\":12},\"legend\":{\"labelFontSize\":12,\"titleFontSize\":12}},";
}

// A quantitative axis: integer data gets integer ticks only (no "0.0 0.5 1.0" for job counts).
std::string AxisJson(const std::string& title, bool integers, const std::string& format) {
  std::string s = "{\"title\":" + JsonStr(title) + ",\"labelOverlap\":true";
  if (!format.empty()) {
    s += ",\"format\":" + JsonStr(format);
  } else if (integers) {
    s += ",\"tickMinStep\":1,\"format\":\"d\"";
  }
  return s + "}";
}

// The y axis of a time series: its title, and how its labels read.
struct YAxis {
  std::string title;
  bool integers = false;
  std::string format;  // d3-format, e.g. ".0%"; empty: Vega's choice
};

// One line chart: x = event time in days, y = value(engine, event); steps, as the value holds
// until the next event. Engines whose values are equal at every event are one line.
template <class F>
std::string Chart(const ReplayResult& r, const std::string& title, const YAxis& y, F value) {
  const double tmin = r.events.empty() ? 0 : r.events[0].time_s / 86400.0;
  double tmax = tmin;
  for (const ReplayEvent& e : r.events) tmax = std::max(tmax, e.time_s / 86400.0);
  if (tmax <= tmin) tmax = tmin + 1;
  const double tend = tmax + (tmax - tmin) * 0.01;
  const auto groups = CoincidingGroups(r.engines.size(), [&](size_t a, size_t b) {
    for (size_t k = 0; k < r.events.size(); ++k) {
      if (value(a, k) != value(b, k)) return false;
    }
    return true;
  });
  std::string values;
  for (const auto& g : groups) {
    const std::string name = JsonStr(GroupName(g, r.engines));
    for (size_t k = 0; k < r.events.size(); ++k) {
      const double t = r.events[k].time_s / 86400.0;
      values += (values.empty() ? "" : ",") + std::string("{\"t\":") + JsonNum(t) +
                ",\"v\":" + JsonNum(value(g[0], k)) + ",\"s\":" + name + "}";
      // The last value holds to the end of the axis.
      if (k + 1 == r.events.size()) {
        values += ",{\"t\":" + JsonNum(tend) + ",\"v\":" + JsonNum(value(g[0], k)) +
                  ",\"s\":" + name + "}";
      }
    }
  }
  std::string subtitle;
  for (const auto& g : groups) {
    if (g.size() > 1) subtitle += (subtitle.empty() ? "" : "; ") + GroupName(g, r.engines);
  }
  if (!subtitle.empty()) subtitle += ": equal at every event, drawn as one line";
  const std::string spec =
      SpecHead(title, subtitle) + "\"width\":640,\"height\":200,\"data\":{\"values\":[" + values +
      "]},\"mark\":{\"type\":\"line\",\"interpolate\":\"step-after\",\"strokeWidth\":1.5},"
      "\"encoding\":{\"x\":{\"field\":\"t\",\"type\":\"quantitative\",\"scale\":{\"domain\":[" +
      JsonNum(tmin) + "," + JsonNum(tend) +
      "],\"nice\":false},\"axis\":" + AxisJson("time (days since the first event)", false, "") +
      "},\"y\":{\"field\":\"v\",\"type\":\"quantitative\",\"axis\":" +
      AxisJson(y.title, y.integers, y.format) +
      "},\"color\":" + ColourEncoding(groups, r.engines, "engine") +
      ",\"strokeDash\":" + DashEncoding(groups, r.engines, "engine") + "}}";
  return ChartDiv("series", title, spec) + CoincideNote(groups, r.engines, "equal at every event");
}

std::string Heatmap(const Fabric& f, const std::vector<LeafUpperPair>& pairs,
                    const std::vector<uint64_t>& load, uint64_t max, const std::string& title) {
  if (pairs.empty()) return "<p>(no leaf-to-upper-switch cables to draw)</p>\n";
  std::map<NodeId, int> row, col;
  for (const LeafUpperPair& p : pairs) {
    row.emplace(p.leaf, 0);
    col.emplace(p.upper, 0);
  }
  std::vector<std::string> leaves, uppers;
  for (auto& [n, idx] : row) {
    idx = static_cast<int>(leaves.size());
    leaves.push_back(f.name(n));
  }
  for (auto& [n, idx] : col) {
    idx = static_cast<int>(uppers.size());
    uppers.push_back(f.name(n));
  }
  const double cell = std::clamp(600.0 / std::max<size_t>(col.size(), 1), 4.0, 24.0);
  // load of a (leaf, upper) pair: per direction summed over parallel cables, then the larger.
  std::map<std::pair<NodeId, NodeId>, std::pair<uint64_t, uint64_t>> sum;
  for (PortId c = 0; c < f.num_port_slots(); ++c) {
    if (!f.is_inter_switch(c)) continue;
    const NodeId a = f.port_node(c), b = f.port_node(f.peer_id(c));
    const uint64_t v = c < static_cast<PortId>(load.size()) ? load[c] : 0;
    if (row.count(a) && col.count(b)) sum[{a, b}].first += v;
    if (col.count(a) && row.count(b)) sum[{b, a}].second += v;
  }
  // Cells by row and column index (the names are in `leaves` and `uppers`): "l", "u"; the load
  // "v" with its two directions, or "n" (no cable: grey, so that a missing link does not read
  // as a dark one).
  std::set<std::pair<NodeId, NodeId>> cabled;
  for (const LeafUpperPair& p : pairs) cabled.insert({p.leaf, p.upper});
  std::string cells, nocable;
  for (const LeafUpperPair& p : pairs) {
    const auto& [up, down] = sum[{p.leaf, p.upper}];
    cells += (cells.empty() ? "" : ",") + std::string("{\"l\":") + JsonStr(f.name(p.leaf)) +
             ",\"u\":" + JsonStr(f.name(p.upper)) + ",\"v\":" + std::to_string(std::max(up, down)) +
             ",\"up\":" + std::to_string(up) + ",\"down\":" + std::to_string(down) + "}";
  }
  for (const auto& [leaf, r] : row) {
    for (const auto& [upper, c] : col) {
      if (cabled.count({leaf, upper})) continue;
      nocable += (nocable.empty() ? "" : ",") + std::string("{\"l\":") + JsonStr(f.name(leaf)) +
                 ",\"u\":" + JsonStr(f.name(upper)) + "}";
    }
  }
  const std::string x =
      "\"x\":{\"field\":\"u\",\"type\":\"ordinal\",\"sort\":" + JsonStrList(uppers) +
      ",\"axis\":{\"title\":\"upper switch\",\"labelOverlap\":\"greedy\","
      "\"labelAngle\":-90,\"labelFontSize\":" +
      Num(std::min(cell, 11.0), 0) + "}}";
  const std::string y =
      "\"y\":{\"field\":\"l\",\"type\":\"ordinal\",\"sort\":" + JsonStrList(leaves) +
      ",\"axis\":{\"title\":\"leaf switch\",\"labelOverlap\":\"greedy\","
      "\"labelFontSize\":" +
      Num(std::min(cell, 11.0), 0) + "}}";
  // White (dark) to deep red, interpolated in Lab: Vega's default HCL takes white's undefined
  // chroma from the red end, so that 0 would read pale orange, not white.
  std::string layers =
      "{\"data\":{\"values\":[" + cells +
      "]},\"mark\":{\"type\":\"rect\",\"stroke\":\"#cccccc\",\"strokeWidth\":0.3},"
      "\"encoding\":{" +
      x + "," + y +
      ",\"color\":{\"field\":\"v\",\"type\":\"quantitative\",\"title\":[\"effective EFI\","
      "\"(routes, larger\",\"direction)\"],\"scale\":{\"domain\":[0," +
      std::to_string(max) +
      "],\"range\":[\"#ffffff\",\"#a50f15\"],\"interpolate\":\"lab\"},\"legend\":{\"format\":\"d\","
      "\"tickMinStep\":1,"
      "\"gradientLength\":160}},\"tooltip\":[{\"field\":\"l\",\"title\":\"leaf\"},{\"field\":"
      "\"u\",\"title\":\"upper\"},{\"field\":\"up\"},{\"field\":\"down\"}]}}";
  if (!nocable.empty()) {
    layers += ",{\"data\":{\"values\":[" + nocable +
              "]},\"mark\":{\"type\":\"rect\",\"color\":\"#bbbbbb\",\"tooltip\":{\"content\":"
              "\"data\"}},\"encoding\":{" +
              x + "," + y + "}}";
  }
  const std::string spec = SpecHead(title, nocable.empty() ? "" : "grey: no cable") +
                           "\"width\":{\"step\":" + Num(cell, 1) +
                           "},\"height\":{\"step\":" + Num(cell, 1) + "},\"layer\":[" + layers +
                           "]}";
  return ChartDiv("heatmap", title, spec);
}

// In a box that scrolls sideways: a wide table (the study's, with many engines) stays whole.
std::string Table(const ReportTable& t) {
  std::string s =
      "<div class=\"table\"><table>\n<caption>" + HtmlEscape(t.caption) + "</caption>\n<tr>";
  for (const std::string& h : t.header) s += "<th>" + HtmlEscape(h) + "</th>";
  s += "</tr>\n";
  for (const auto& row : t.rows) {
    s += "<tr>";
    for (const std::string& c : row) s += "<td>" + HtmlEscape(c) + "</td>";
    s += "</tr>\n";
  }
  return s + "</table></div>\n";
}

}  // namespace

std::string HtmlEscape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::vector<LeafUpperPair> LeafUpperPairs(const Fabric& f) {
  std::vector<LeafUpperPair> pairs;
  for (NodeId sw : f.switches()) {
    if (!IsLeaf(f, sw)) continue;
    std::vector<NodeId> seen;
    for (int p = 1; p <= f.num_ports(sw); ++p) {
      const PortRef peer = f.peer({sw, p});
      if (!peer.valid() || !f.is_switch(peer.node) || IsLeaf(f, peer.node)) continue;
      if (std::find(seen.begin(), seen.end(), peer.node) != seen.end()) continue;
      seen.push_back(peer.node);
      pairs.push_back({sw, peer.node});
    }
  }
  return pairs;
}

std::string ReportPageHtml(const std::string& title, const std::string& body) {
  std::string page =
      "<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\">\n<head>\n<meta "
      "charset=\"utf-8\"/>\n<title>" +
      HtmlEscape(title) +
      "</title>\n<style>body{font-family:sans-serif;margin:2em}p{max-width:60em}"
      "div.table{overflow-x:auto;max-width:100%}table{border-collapse:collapse;margin:1em 0}"
      "table{font-size:13px}td,th{border:1px solid #999;padding:2px 6px;text-align:right}"
      "caption{text-align:left;font-weight:bold}div.chart{margin:1em 0}"
      "p.coincide{font-style:italic}</style>\n</head>\n<body>\n<h1>" +
      HtmlEscape(title) + "</h1>\n" + body;
  if (body.find("class=\"vega-lite-spec\"") != std::string::npos) {
    // Vega and Vega-Lite inline (CDATA: the page stays well-formed XML), then each chart's
    // specification drawn as SVG into its <div>.
    page += "<script>//<![CDATA[\n";
    page += kVegaJs;
    page += "\n//]]></script>\n<script>//<![CDATA[\n";
    page += kVegaLiteJs;
    page +=
        "\n//]]></script>\n<script>//<![CDATA[\n"
        "document.querySelectorAll('script.vega-lite-spec').forEach(function (el) {\n"
        "  var spec = vegaLite.compile(JSON.parse(el.textContent)).spec;\n"
        "  var div = document.createElement('div');\n"
        "  el.parentNode.appendChild(div);\n"
        "  new vega.View(vega.parse(spec), {renderer: 'svg', container: div, hover: true})"
        ".runAsync();\n"
        "});\n//]]></script>\n";
  }
  return page + "</body>\n</html>\n";
}

std::string ReportTableHtml(const ReportTable& table) { return Table(table); }

std::string ScatterChartHtml(const std::string& title, const std::string& xlabel,
                             const std::string& ylabel, const std::vector<ChartSeries>& series) {
  std::vector<std::string> names;
  for (const ChartSeries& c : series) names.push_back(c.name);
  const auto groups = CoincidingGroups(series.size(), [&](size_t a, size_t b) {
    const ChartSeries &x = series[a], &y = series[b];
    return x.points == y.points && x.has_line == y.has_line &&
           (!x.has_line || (x.intercept == y.intercept && x.slope == y.slope));
  });
  bool integer_x = true;
  std::string points, lines;
  for (const auto& g : groups) {
    const ChartSeries& c = series[g[0]];
    const std::string name = JsonStr(GroupName(g, names));
    double lo = 0, hi = 0;
    for (size_t k = 0; k < c.points.size(); ++k) {
      const auto& [px, py] = c.points[k];
      integer_x = integer_x && px == std::floor(px);
      lo = k == 0 ? px : std::min(lo, px);
      hi = k == 0 ? px : std::max(hi, px);
      points += (points.empty() ? "" : ",") + std::string("{\"x\":") + JsonNum(px) +
                ",\"y\":" + JsonNum(py) + ",\"s\":" + name + "}";
    }
    if (c.has_line && !c.points.empty()) {
      for (double px : {lo, hi}) {
        lines += (lines.empty() ? "" : ",") + std::string("{\"x\":") + JsonNum(px) +
                 ",\"y\":" + JsonNum(c.intercept + c.slope * px) + ",\"s\":" + name + "}";
      }
    }
  }
  std::string subtitle;
  for (const auto& g : groups) {
    if (g.size() > 1) subtitle += (subtitle.empty() ? "" : "; ") + GroupName(g, names);
  }
  if (!subtitle.empty()) subtitle += ": equal at every point, drawn as one";
  // The y range is the data's (not from 0): degradation of a few percent must be visible.
  const std::string enc = "\"x\":{\"field\":\"x\",\"type\":\"quantitative\",\"axis\":" +
                          AxisJson(xlabel, integer_x, "") +
                          "},\"y\":{\"field\":\"y\",\"type\":\"quantitative\",\"scale\":{"
                          "\"zero\":false},\"axis\":" +
                          AxisJson(ylabel, false, "") +
                          "},\"color\":" + ColourEncoding(groups, names, "engine");
  std::string layers = "{\"data\":{\"values\":[" + points +
                       "]},\"mark\":{\"type\":\"point\",\"filled\":true,\"size\":40,"
                       "\"opacity\":1,\"tooltip\":true},\"encoding\":{" +
                       enc + "}}";
  if (!lines.empty()) {
    layers += ",{\"data\":{\"values\":[" + lines +
              "]},\"mark\":{\"type\":\"line\",\"strokeWidth\":1.5},\"encoding\":{" + enc +
              ",\"strokeDash\":" + DashEncoding(groups, names, "engine") + "}}";
  }
  const std::string spec =
      SpecHead(title, subtitle) + "\"width\":620,\"height\":240,\"layer\":[" + layers + "]}";
  return ChartDiv("scatter", title, spec) +
         CoincideNote(groups, names, "equal at every point and fit");
}

std::string LinkLoadHeatmapHtml(const Fabric& fabric, const std::vector<uint64_t>& load,
                                uint64_t max, const std::string& title) {
  return Heatmap(fabric, LeafUpperPairs(fabric), load, max, title);
}
std::string ReplayReportHtml(const ReplayReportInput& in) {
  const ReplayResult& r = *in.result;
  std::string s;
  s += "<p>" + std::to_string(r.history_jobs) + " jobs in the history, " +
       std::to_string(r.placed) + " placed (" + std::to_string(r.not_placed) + " not placed, " +
       std::to_string(r.unknown_hosts) + " unknown hosts), sizes scaled by " + Num(r.scale, 3) +
       " to " + std::to_string(r.fabric_hosts) + " hosts; " + std::to_string(r.jobs.size()) +
       " jobs span two or more leaf switches; " + std::to_string(r.events.size()) +
       " events (changes of that job set).</p>\n";
  ReportTable summary;
  summary.caption = "Per engine, over the events";
  summary.header = {"engine",
                    "max eff. EFI mean",
                    "p95",
                    "max",
                    "mean without the reroutes",
                    "dark fiber mean",
                    "dark fiber p95",
                    "worst job EFI mean",
                    "all-pairs EFI max",
                    "reroutes",
                    "reroute ms mean",
                    "LFT entries changed mean"};
  for (size_t e = 0; e < r.engines.size(); ++e) {
    const ReplaySummary x = SummarizeReplay(r, e);
    summary.rows.push_back(
        {r.engines[e], Num(x.eff_efi_mean), Num(x.eff_efi_p95, 0), std::to_string(x.eff_efi_max),
         Num(x.stale_eff_efi_mean), Num(100 * x.dark_mean, 1) + "%", Num(100 * x.dark_p95, 1) + "%",
         Num(x.worst_job_efi_mean), std::to_string(x.efi_max), std::to_string(x.reroutes),
         Num(x.reroute_ms_mean, 1), Num(x.lft_changed_mean, 0)});
  }
  s += Table(summary);
  if (!r.flow_baseline.empty()) {
    ReportTable jobs;
    jobs.caption =
        "What jobs feel: each job's slowest flow with every job sending at once (max-min fair), "
        "against " +
        r.flow_baseline + " at the same event";
    jobs.header = {
        "engine",      "median job's time, mean", "slowest job's time, max",  "jobs faster",
        "jobs slower", "slower by more than 2%",  "events with a slower job", "median speedup"};
    for (size_t e = 0; e < r.engines.size(); ++e) {
      const ReplaySummary x = SummarizeReplay(r, e);
      jobs.rows.push_back({r.engines[e], Num(x.job_time_median_mean, 1), Num(x.job_time_max, 1),
                           std::to_string(x.jobs_faster), std::to_string(x.jobs_slower),
                           std::to_string(x.jobs_slower_2pct), std::to_string(x.events_with_slower),
                           Num(x.speedup_median, 2) + "x"});
    }
    s += Table(jobs);
    s += "<p>A job's time is that of an all-to-all exchange of equal messages, in units of one "
         "message at line rate: it ends when the job's slowest flow does. Max effective EFI "
         "counts routes on the busiest channel; the per-job time is what a job waits for.</p>\n";
  }
  s += "<h2>Over time</h2>\n";
  s += Chart(
      r, "Max effective EFI per event", {"max effective EFI (routes on a channel)", true, ""},
      [&](size_t e, size_t k) { return static_cast<double>(r.samples[e][k].effective_efi_max); });
  if (!r.flow_baseline.empty()) {
    const YAxis time{"exchange time (messages at line rate)", false, ""};
    s += Chart(r, "Slowest job's exchange time per event", time,
               [&](size_t e, size_t k) { return r.samples[e][k].job_time_max; });
    s += Chart(r, "Median job's exchange time per event", time,
               [&](size_t e, size_t k) { return r.samples[e][k].job_time_median; });
    s +=
        Chart(r, "Jobs slower than under " + r.flow_baseline + " per event", {"jobs", true, ""},
              [&](size_t e, size_t k) { return static_cast<double>(r.samples[e][k].jobs_slower); });
  }
  s += Chart(r, "Dark fiber per event", {"dark fiber (share of channels)", false, ".0%"},
             [&](size_t e, size_t k) { return r.samples[e][k].dark_fiber; });
  s += Chart(r, "Multi-leaf jobs running", {"jobs", true, ""},
             [&](size_t, size_t k) { return static_cast<double>(r.events[k].jobs.size()); });
  if (in.before && in.after && in.fabric) {
    const std::vector<LeafUpperPair> pairs = LeafUpperPairs(*in.fabric);
    uint64_t max = 1;
    for (uint64_t v : *in.before) max = std::max(max, v);
    for (uint64_t v : *in.after) max = std::max(max, v);
    const ReplayEvent& ev = r.events[in.heatmap_event];
    s += "<h2>Leaf-to-upper-switch load at event " + std::to_string(in.heatmap_event) + " (day " +
         Num(ev.time_s / 86400.0, 2) + ", " + std::to_string(ev.jobs.size()) +
         " multi-leaf jobs), " + HtmlEscape(in.heatmap_engine) +
         "</h2>\n<p>Effective EFI of each leaf's links to each upper switch (the larger "
         "direction, parallel cables summed; white = dark, grey = no cable, the colour scale "
         "up to " +
         std::to_string(max) +
         "). Before: the previous event's tables carrying the new job set; after: the "
         "reroute's tables.</p>\n";
    s += Heatmap(*in.fabric, pairs, *in.before, max, "before the reroute");
    s += Heatmap(*in.fabric, pairs, *in.after, max, "after the reroute");
  }
  for (const ReportTable& t : in.tables) s += Table(t);
  return ReportPageHtml(in.title, s);
}

}  // namespace sar
