#include "sar/report_html.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <utility>

namespace sar {
namespace {

// Colours that stay apart for the few engines a report shows.
const char* const kColours[] = {"#d62728", "#1f77b4", "#2ca02c", "#9467bd",
                                "#ff7f0e", "#8c564b", "#e377c2", "#17becf"};

std::string Num(double v, int decimals = 2) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

bool IsLeaf(const Fabric& f, NodeId sw) {
  for (int p = 1; p <= f.num_ports(sw); ++p) {
    const PortRef peer = f.peer({sw, p});
    if (peer.valid() && !f.is_switch(peer.node)) return true;
  }
  return false;
}

// An SVG chart's opening: the element, its title and the two axes of the plot area inside the
// margins (the time series and the study's curves share it).
std::string ChartFrame(double w, double h, double left, double right, double top, double bottom,
                       const std::string& title) {
  std::string s = "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" width=\"" + Num(w, 0) +
                  "\" height=\"" + Num(h, 0) + "\">\n";
  s += "<text x=\"" + Num(left, 0) + "\" y=\"18\" font-weight=\"bold\">" + HtmlEscape(title) +
       "</text>\n";
  s += "<line x1=\"" + Num(left) + "\" y1=\"" + Num(h - bottom) + "\" x2=\"" + Num(w - right) +
       "\" y2=\"" + Num(h - bottom) + "\" stroke=\"black\"/>\n";
  s += "<line x1=\"" + Num(left) + "\" y1=\"" + Num(top) + "\" x2=\"" + Num(left) + "\" y2=\"" +
       Num(h - bottom) + "\" stroke=\"black\"/>\n";
  return s;
}

// One line chart: x = event time in days, y = value(engine, event); steps, as the value holds
// until the next event.
template <class F>
std::string Chart(const ReplayResult& r, const std::string& title, const std::string& unit,
                  F value) {
  const double w = 760, h = 260, left = 60, right = 140, top = 30, bottom = 40;
  double tmax = 0, vmax = 0;
  for (const ReplayEvent& e : r.events) tmax = std::max(tmax, e.time_s / 86400.0);
  const double tmin = r.events.empty() ? 0 : r.events[0].time_s / 86400.0;
  for (size_t e = 0; e < r.engines.size(); ++e) {
    for (size_t k = 0; k < r.events.size(); ++k) vmax = std::max(vmax, value(e, k));
  }
  if (vmax <= 0) vmax = 1;
  if (tmax <= tmin) tmax = tmin + 1;
  const double tend = tmax + (tmax - tmin) * 0.01;
  auto x = [&](double t) { return left + (t - tmin) / (tend - tmin) * (w - left - right); };
  auto y = [&](double v) { return top + (1 - v / vmax) * (h - top - bottom); };
  std::string s = ChartFrame(w, h, left, right, top, bottom, title);
  for (int i = 0; i <= 4; ++i) {
    const double v = vmax * i / 4;
    s += "<text x=\"" + Num(left - 5) + "\" y=\"" + Num(y(v) + 4) +
         "\" text-anchor=\"end\" font-size=\"11\">" + Num(v, vmax >= 10 ? 0 : 2) + "</text>\n";
    const double t = tmin + (tmax - tmin) * i / 4;
    s += "<text x=\"" + Num(x(t)) + "\" y=\"" + Num(h - bottom + 15) +
         "\" text-anchor=\"middle\" font-size=\"11\">" + Num(t, 1) + "</text>\n";
  }
  s += "<text x=\"" + Num((left + w - right) / 2) + "\" y=\"" + Num(h - 5) +
       "\" text-anchor=\"middle\" font-size=\"12\">days</text>\n";
  s += "<text x=\"12\" y=\"" + Num(top + (h - top - bottom) / 2) +
       "\" font-size=\"12\" transform=\"rotate(-90 12 " + Num(top + (h - top - bottom) / 2) +
       ")\" text-anchor=\"middle\">" + HtmlEscape(unit) + "</text>\n";
  for (size_t e = 0; e < r.engines.size(); ++e) {
    std::string pts;
    for (size_t k = 0; k < r.events.size(); ++k) {
      const double t0 = r.events[k].time_s / 86400.0;
      const double t1 = k + 1 < r.events.size() ? r.events[k + 1].time_s / 86400.0 : tend;
      const double v = value(e, k);
      pts += Num(x(t0)) + "," + Num(y(v)) + " " + Num(x(t1)) + "," + Num(y(v)) + " ";
    }
    const char* colour = kColours[e % 8];
    s += "<polyline class=\"series\" data-engine=\"" + HtmlEscape(r.engines[e]) +
         "\" fill=\"none\" stroke-width=\"1.2\" stroke=\"" + colour + "\" points=\"" + pts +
         "\"/>\n";
    s += "<text x=\"" + Num(w - right + 10) + "\" y=\"" + Num(top + 16 * (e + 1)) + "\" fill=\"" +
         colour + "\" font-size=\"12\">" + HtmlEscape(r.engines[e]) + "</text>\n";
  }
  return s + "</svg>\n";
}

// White (0) to dark red (max).
std::string Heat(uint64_t v, uint64_t max) {
  const double a = max ? static_cast<double>(v) / static_cast<double>(max) : 0;
  const int g = static_cast<int>(255 * (1 - a));
  char buf[16];
  std::snprintf(buf, sizeof buf, "#ff%02x%02x", g, g);
  return v == 0 ? "#ffffff" : buf;
}

std::string Heatmap(const Fabric& f, const std::vector<LeafUpperPair>& pairs,
                    const std::vector<uint64_t>& load, uint64_t max, const std::string& title) {
  if (pairs.empty()) return "<p>(no leaf-to-upper-switch cables to draw)</p>\n";
  std::map<NodeId, int> row, col;
  for (const LeafUpperPair& p : pairs) {
    row.emplace(p.leaf, 0);
    col.emplace(p.upper, 0);
  }
  int i = 0;
  for (auto& [n, idx] : row) idx = i++;
  i = 0;
  for (auto& [n, idx] : col) idx = i++;
  const double cell = std::clamp(600.0 / std::max<size_t>(col.size(), 1), 4.0, 24.0);
  const double left = 70, top = 40;
  const double w = left + cell * col.size() + 20, h = top + cell * row.size() + 20;
  // load of a (leaf, upper) pair: per direction summed over parallel cables, then the larger.
  std::map<std::pair<NodeId, NodeId>, std::pair<uint64_t, uint64_t>> sum;
  for (PortId c = 0; c < f.num_port_slots(); ++c) {
    if (!f.is_inter_switch(c)) continue;
    const NodeId a = f.port_node(c), b = f.port_node(f.peer_id(c));
    const uint64_t v = c < static_cast<PortId>(load.size()) ? load[c] : 0;
    if (row.count(a) && col.count(b)) sum[{a, b}].first += v;
    if (col.count(a) && row.count(b)) sum[{b, a}].second += v;
  }
  std::string s = "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"heatmap\" width=\"" +
                  Num(w, 0) + "\" height=\"" + Num(h, 0) + "\">\n";
  s += "<text x=\"0\" y=\"16\" font-weight=\"bold\">" + HtmlEscape(title) + "</text>\n";
  s += "<text x=\"" + Num(left) + "\" y=\"32\" font-size=\"11\">upper switches &#8594;</text>\n";
  for (const auto& [n, r] : row) {
    if (row.size() <= 40 || r % 5 == 0) {
      s += "<text x=\"" + Num(left - 4) + "\" y=\"" + Num(top + cell * (r + 0.75)) +
           "\" text-anchor=\"end\" font-size=\"" + Num(std::min(cell, 11.0), 0) + "\">" +
           HtmlEscape(f.name(n)) + "</text>\n";
    }
  }
  // Grey where no cable joins a leaf and an upper switch (a failed or absent link), so a
  // missing link does not read as a dark one.
  std::set<std::pair<NodeId, NodeId>> cabled;
  for (const LeafUpperPair& p : pairs) cabled.insert({p.leaf, p.upper});
  for (const auto& [leaf, r] : row) {
    for (const auto& [upper, c] : col) {
      if (cabled.count({leaf, upper})) continue;
      s += "<rect class=\"nocable\" x=\"" + Num(left + cell * c) + "\" y=\"" + Num(top + cell * r) +
           "\" width=\"" + Num(cell) + "\" height=\"" + Num(cell) + "\" fill=\"#bbbbbb\"><title>" +
           HtmlEscape(f.name(leaf)) + " - " + HtmlEscape(f.name(upper)) +
           ": no cable</title></rect>\n";
    }
  }
  for (const LeafUpperPair& p : pairs) {
    const auto& [up, down] = sum[{p.leaf, p.upper}];
    const uint64_t v = std::max(up, down);
    s += "<rect class=\"cell\" x=\"" + Num(left + cell * col[p.upper]) + "\" y=\"" +
         Num(top + cell * row[p.leaf]) + "\" width=\"" + Num(cell) + "\" height=\"" + Num(cell) +
         "\" fill=\"" + Heat(v, max) + "\" stroke=\"#ccc\" stroke-width=\"0.3\"><title>" +
         HtmlEscape(f.name(p.leaf)) + " - " + HtmlEscape(f.name(p.upper)) + ": up " +
         std::to_string(up) + ", down " + std::to_string(down) + "</title></rect>\n";
  }
  return s + "</svg>\n";
}

std::string Table(const ReportTable& t) {
  std::string s = "<table>\n<caption>" + HtmlEscape(t.caption) + "</caption>\n<tr>";
  for (const std::string& h : t.header) s += "<th>" + HtmlEscape(h) + "</th>";
  s += "</tr>\n";
  for (const auto& row : t.rows) {
    s += "<tr>";
    for (const std::string& c : row) s += "<td>" + HtmlEscape(c) + "</td>";
    s += "</tr>\n";
  }
  return s + "</table>\n";
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
  return "<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\">\n<head>\n<meta "
         "charset=\"utf-8\"/>\n<title>" +
         HtmlEscape(title) +
         "</title>\n<style>body{font-family:sans-serif;margin:2em;max-width:1100px}"
         "table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #999;padding:2px "
         "8px;text-align:right}caption{text-align:left;font-weight:bold}</style>\n</head>\n"
         "<body>\n<h1>" +
         HtmlEscape(title) + "</h1>\n" + body + "</body>\n</html>\n";
}

std::string ReportTableHtml(const ReportTable& table) { return Table(table); }

std::string ScatterChartSvg(const std::string& title, const std::string& xlabel,
                            const std::string& ylabel, const std::vector<ChartSeries>& series) {
  const double w = 760, h = 300, left = 70, right = 140, top = 30, bottom = 40;
  double xmin = 0, xmax = 0, ymin = 0, ymax = 0;
  bool first = true;
  for (const ChartSeries& c : series) {
    for (const auto& [px, py] : c.points) {
      xmin = first ? px : std::min(xmin, px);
      xmax = first ? px : std::max(xmax, px);
      ymin = first ? py : std::min(ymin, py);
      ymax = first ? py : std::max(ymax, py);
      first = false;
    }
  }
  // The y range is the data's (not from 0): degradation of a few percent must be visible.
  const double pad = ymax > ymin ? (ymax - ymin) * 0.08 : std::max(1.0, std::abs(ymax) * 0.05);
  ymin = std::max(0.0, ymin - pad);
  ymax += pad;
  if (xmax <= xmin) xmax = xmin + 1;
  auto x = [&](double v) { return left + (v - xmin) / (xmax - xmin) * (w - left - right); };
  auto y = [&](double v) { return top + (1 - (v - ymin) / (ymax - ymin)) * (h - top - bottom); };
  std::string s = ChartFrame(w, h, left, right, top, bottom, title);
  for (int i = 0; i <= 4; ++i) {
    const double v = ymin + (ymax - ymin) * i / 4, t = xmin + (xmax - xmin) * i / 4;
    s += "<text x=\"" + Num(left - 5) + "\" y=\"" + Num(y(v) + 4) +
         "\" text-anchor=\"end\" font-size=\"11\">" + Num(v, ymax - ymin >= 10 ? 0 : 2) +
         "</text>\n";
    s += "<text x=\"" + Num(x(t)) + "\" y=\"" + Num(h - bottom + 15) +
         "\" text-anchor=\"middle\" font-size=\"11\">" + Num(t, xmax - xmin >= 8 ? 0 : 1) +
         "</text>\n";
  }
  s += "<text x=\"" + Num((left + w - right) / 2) + "\" y=\"" + Num(h - 5) +
       "\" text-anchor=\"middle\" font-size=\"12\">" + HtmlEscape(xlabel) + "</text>\n";
  s += "<text x=\"12\" y=\"" + Num(top + (h - top - bottom) / 2) +
       "\" font-size=\"12\" transform=\"rotate(-90 12 " + Num(top + (h - top - bottom) / 2) +
       ")\" text-anchor=\"middle\">" + HtmlEscape(ylabel) + "</text>\n";
  for (size_t e = 0; e < series.size(); ++e) {
    const ChartSeries& c = series[e];
    const char* colour = kColours[e % 8];
    // Engines at the same point would hide each other: a small horizontal offset per series.
    const double dx = (static_cast<double>(e) - (series.size() - 1) / 2.0) * 3;
    s +=
        "<g class=\"points\" data-series=\"" + HtmlEscape(c.name) + "\" fill=\"" + colour + "\">\n";
    double lo = 0, hi = 0;
    for (size_t k = 0; k < c.points.size(); ++k) {
      const auto& [px, py] = c.points[k];
      lo = k == 0 ? px : std::min(lo, px);
      hi = k == 0 ? px : std::max(hi, px);
      s += "<circle class=\"point\" cx=\"" + Num(x(px) + dx) + "\" cy=\"" + Num(y(py)) +
           "\" r=\"2.5\"/>\n";
    }
    s += "</g>\n";
    if (c.has_line && !c.points.empty()) {
      s += "<line class=\"fit\" data-series=\"" + HtmlEscape(c.name) + "\" x1=\"" + Num(x(lo)) +
           "\" y1=\"" + Num(y(c.intercept + c.slope * lo)) + "\" x2=\"" + Num(x(hi)) + "\" y2=\"" +
           Num(y(c.intercept + c.slope * hi)) + "\" stroke=\"" + colour +
           "\" stroke-width=\"1.2\"/>\n";
    }
    s += "<text x=\"" + Num(w - right + 10) + "\" y=\"" + Num(top + 16 * (e + 1)) + "\" fill=\"" +
         colour + "\" font-size=\"12\">" + HtmlEscape(c.name) + "</text>\n";
  }
  return s + "</svg>\n";
}

std::string LinkLoadHeatmapSvg(const Fabric& fabric, const std::vector<uint64_t>& load,
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
  s += Chart(r, "Max effective EFI per event", "max effective EFI", [&](size_t e, size_t k) {
    return static_cast<double>(r.samples[e][k].effective_efi_max);
  });
  if (!r.flow_baseline.empty()) {
    s += Chart(r, "Slowest job's exchange time per event", "time (message / line rate)",
               [&](size_t e, size_t k) { return r.samples[e][k].job_time_max; });
    s += Chart(r, "Median job's exchange time per event", "time (message / line rate)",
               [&](size_t e, size_t k) { return r.samples[e][k].job_time_median; });
    s +=
        Chart(r, "Jobs slower than under " + r.flow_baseline + " per event", "jobs",
              [&](size_t e, size_t k) { return static_cast<double>(r.samples[e][k].jobs_slower); });
  }
  s += Chart(r, "Dark fiber per event", "dark fiber (share of channels)",
             [&](size_t e, size_t k) { return r.samples[e][k].dark_fiber; });
  s += Chart(r, "Multi-leaf jobs running", "jobs",
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
         "direction, parallel cables summed; white = dark, grey = no cable, darkest = " +
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
