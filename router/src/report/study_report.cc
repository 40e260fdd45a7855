// The fail-in-place study's HTML page (sar-route study --html): the regression table and a chart
// per traffic pattern. In the reports library so that libsar carries no chart code.
#include <cstdio>
#include <string>

#include "sar/report/report_html.h"
#include "sar/study/study.h"

namespace sar {
namespace {

std::string Fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

}  // namespace

std::string StudyReportHtml(const std::string& title, const StudyResult& r) {
  std::string s;
  s += "<p>" + std::to_string(r.endpoints) + " endpoints, " + std::to_string(r.pairs) +
       " ordered pairs; " + std::to_string(r.points.size()) +
       " failure draws. Throughput: max-min fair fluid model (every flow on its single route, "
       "every channel of capacity 1, HCA links included), the sum of the rates in link "
       "bandwidths; all-to-all can reach at most " +
       std::to_string(r.endpoints) +
       ". Exchange: all-to-all as equal messages, flows over the busiest channel's flow count "
       "(the pattern's completion-time bound; fail-in-place paper Eq. 7). Clustered: random "
       "groups, all-to-all within each (Yuan et al. Sec. 5). "
       "Disconnected before rerouting: pairs whose route in the intact fabric's tables crosses "
       "a failed cable or switch.</p>\n";
  ReportTable fit;
  fit.caption =
      "Linear regression of throughput over failed components (cables + switches), "
      "per engine (fail-in-place paper, Table V)";
  fit.header = {"engine", "routed draws", "all-to-all intercept",
                "slope",  "R^2",          "exchange intercept",
                "slope",  "R^2"};
  for (int size : r.cluster_sizes) {
    const std::string k = "clusters of " + std::to_string(size);
    fit.header.insert(fit.header.end(), {k + " intercept", "slope", "R^2"});
  }
  for (size_t e = 0; e < r.engines.size(); ++e) {
    int routed = 0, drawn = 0;
    for (const StudyPoint& pt : r.points) {
      drawn += pt.drawn;
      routed += pt.drawn && pt.cells[e].routed;
    }
    std::vector<std::string> row = {r.engines[e],
                                    std::to_string(routed) + "/" + std::to_string(drawn)};
    auto add = [&](const LinearFit& f) {
      if (f.n == 0) {
        row.insert(row.end(), {"-", "-", "-"});
      } else {
        row.insert(row.end(), {Fixed(f.intercept, 2), Fixed(f.slope, 3), Fixed(f.r2, 2)});
      }
    };
    add(r.fit_alltoall[e]);
    add(r.fit_exchange[e]);
    for (const LinearFit& f : r.fit_clustered[e]) add(f);
    fit.rows.push_back(std::move(row));
  }
  s += ReportTableHtml(fit);
  // Per step, means over the draws.
  ReportTable steps;
  steps.caption = "Per step (means over the draws; routed = draws the engine routed)";
  steps.header = {"failed cables", "failed switches", "draws"};
  for (const std::string& e : r.engines) {
    steps.header.insert(steps.header.end(), {e + " routed", e + " disconnected before",
                                             e + " all-to-all", e + " exchange"});
  }
  for (size_t i = 0; i < r.points.size();) {
    size_t j = i;
    while (j < r.points.size() && r.points[j].links == r.points[i].links &&
           r.points[j].switches == r.points[i].switches) {
      ++j;
    }
    std::vector<std::string> row = {std::to_string(r.points[i].links),
                                    std::to_string(r.points[i].switches), std::to_string(j - i)};
    for (size_t e = 0; e < r.engines.size(); ++e) {
      int routed = 0, drawn = 0;
      double disc = 0, thr = 0, exch = 0;
      for (size_t k = i; k < j; ++k) {
        if (!r.points[k].drawn) continue;
        ++drawn;
        disc += static_cast<double>(r.points[k].cells[e].disconnected_before);
        if (r.points[k].cells[e].routed) {
          ++routed;
          thr += r.points[k].cells[e].alltoall;
          exch += r.points[k].cells[e].exchange;
        }
      }
      row.push_back(std::to_string(routed) + "/" + std::to_string(drawn));
      row.push_back(!r.intact_error[e].empty() || drawn == 0 ? "-" : Fixed(disc / drawn, 0));
      row.push_back(routed ? Fixed(thr / routed, 2) : "-");
      row.push_back(routed ? Fixed(exch / routed, 2) : "-");
    }
    steps.rows.push_back(std::move(row));
    i = j;
  }
  s += ReportTableHtml(steps);
  auto chart = [&](const std::string& what, int cluster) {
    std::vector<ChartSeries> series;
    for (size_t e = 0; e < r.engines.size(); ++e) {
      ChartSeries c;
      c.name = r.engines[e];
      for (const StudyPoint& pt : r.points) {
        if (!pt.drawn || !pt.cells[e].routed) continue;
        const double y = cluster == -1   ? pt.cells[e].alltoall
                         : cluster == -2 ? pt.cells[e].exchange
                                         : pt.cells[e].clustered[cluster];
        c.points.push_back({static_cast<double>(pt.links + pt.switches), y});
      }
      const LinearFit& f = cluster == -1   ? r.fit_alltoall[e]
                           : cluster == -2 ? r.fit_exchange[e]
                                           : r.fit_clustered[e][cluster];
      c.has_line = f.n > 0;
      c.intercept = f.intercept;
      c.slope = f.slope;
      series.push_back(std::move(c));
    }
    return ScatterChartHtml(what, "failed cables + switches", "throughput (link bandwidths)",
                            series);
  };
  s += "<h2>Degradation</h2>\n";
  s += chart("All-to-all throughput (max-min fair sum)", -1);
  s += chart("All-to-all as an exchange (flows / busiest channel)", -2);
  for (size_t c = 0; c < r.cluster_sizes.size(); ++c) {
    s += chart("Clustered traffic, groups of " + std::to_string(r.cluster_sizes[c]),
               static_cast<int>(c));
  }
  std::string notes;
  for (size_t e = 0; e < r.engines.size(); ++e) {
    if (!r.intact_error[e].empty()) {
      notes += "<li>" + HtmlEscape(r.engines[e]) +
               " does not route the intact fabric: " + HtmlEscape(r.intact_error[e]) + "</li>\n";
    }
    for (const StudyPoint& pt : r.points) {
      if (pt.drawn && !pt.cells[e].routed && r.intact_error[e].empty()) {
        notes += "<li>" + HtmlEscape(r.engines[e]) + " at " + std::to_string(pt.links) +
                 " cables / " + std::to_string(pt.switches) + " switches (seed " +
                 std::to_string(pt.seed) + "): " + HtmlEscape(pt.cells[e].error) + "</li>\n";
        break;  // the first failure per engine is enough to say why
      }
    }
  }
  for (const StudyPoint& pt : r.points) {
    if (!pt.drawn) {
      notes += "<li>no failure set of " + std::to_string(pt.links) + " cables / " +
               std::to_string(pt.switches) + " switches for seed " + std::to_string(pt.seed) +
               ": " + HtmlEscape(pt.draw_error) + "</li>\n";
    }
  }
  if (!notes.empty()) s += "<h2>Notes</h2>\n<ul>\n" + notes + "</ul>\n";
  return ReportPageHtml(title, s);
}

}  // namespace sar
