#pragma once
// The report's sections, one builder per question (memory, training and serving simulation,
// training and serving plans) plus validation and provenance. Each reads a result through a
// ResultView and appends Section(s) to the document; report.cpp decides which apply.
#include <string>
#include <vector>

#include "report/document.hpp"
#include "report/report.hpp"
#include "report/result_view.hpp"

namespace infraplan::report {

/// Memory: a stacked bar per pipeline stage (or the one ledger) against the GPU's capacity, the
/// verdict, and the ledger's lines. `ledger` points at a ledger object ({"scope", "lines",
/// "total_bytes", "capacity_bytes", "fits", "verdict"}); `stages` at an array of them (may be
/// absent).
Section memory_section(const ResultView& r, const std::string& ledger, const std::string& stages);

/// Training simulation: key figures (iteration time and its range, tokens/s, MFU/HFU), time
/// breakdown per stage, the critical path of one iteration as a timeline, communication volume.
Section training_section(const ResultView& r);

/// Serving simulation: latency CDFs against the SLOs, percentiles, goodput vs throughput, KV use
/// and queues over time, per-instance load, PD transfers, prefix-cache hits, preemptions.
Section serving_section(const ResultView& r);

/// Training plan: ranked table, Pareto chart, rejections with counts, explanation.
Section plan_train_section(const ResultView& r, const ReportInputs& in);

/// Serving plan: ranked table, Pareto chart, rejections with counts, explanation.
Section plan_serve_section(const ResultView& r, const ReportInputs& in);

/// Predicted vs measured for every value of `in.measured` (see report.hpp).
Section validation_section(const std::vector<ResultView>& results, const ReportInputs& in);

/// Scenario as given, profile, version and commit, dates, command lines.
Section provenance_section(const std::vector<ResultView>& results, const ReportInputs& in);

/// Bins (x, y) into at most `bins` points over x: per bin the mean x, mean, min and max y.
/// Inputs shorter than `bins` come back unchanged (min = max = y).
struct Binned {
  std::vector<double> x, mean, min, max;
};
Binned bin_series(const std::vector<double>& x, const std::vector<double>& y, std::size_t bins);

}  // namespace infraplan::report
