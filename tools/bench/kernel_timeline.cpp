#include "kernel_timeline.hpp"

#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <memory>
#include <numeric>
#include <stdexcept>

namespace seatrt::bench {

namespace {

constexpr double kNsPerUs = 1000.0;

// The union of the intervals' lengths (sorted by start).
uint64_t busy_ns(const std::vector<const KernelRecord*>& sorted) {
  uint64_t busy = 0, open_start = 0, open_end = 0;
  bool open = false;
  for (const KernelRecord* r : sorted) {
    if (open && r->start_ns <= open_end) {
      open_end = std::max(open_end, r->end_ns);
      continue;
    }
    if (open) busy += open_end - open_start;
    open = true;
    open_start = r->start_ns;
    open_end = r->end_ns;
  }
  if (open) busy += open_end - open_start;
  return busy;
}

struct NameTotals {
  int64_t calls = 0, gaps = 0;
  double duration_ns = 0, adds_ns = 0, gap_ns = 0;
};

}  // namespace

TimelineReport analyze_timeline(std::vector<KernelRecord> records, const std::vector<StepWindow>& windows) {
  for (size_t i = 0; i < windows.size(); ++i) {
    if (windows[i].end_ns < windows[i].begin_ns) throw std::invalid_argument("step window ends before it begins");
    if (i > 0 && windows[i].begin_ns < windows[i - 1].end_ns)
      throw std::invalid_argument("step windows overlap or are not in time order");
  }
  for (const auto& r : records)
    if (r.end_ns < r.start_ns) throw std::invalid_argument("kernel record '" + r.name + "' ends before it starts");

  // Each record to the window its start falls in.
  std::vector<std::vector<const KernelRecord*>> per_step(windows.size());
  for (const auto& r : records) {
    const auto it = std::upper_bound(windows.begin(), windows.end(), r.start_ns,
                                     [](uint64_t t, const StepWindow& w) { return t < w.begin_ns; });
    if (it == windows.begin()) continue;
    const auto& w = *(it - 1);
    if (r.start_ns > w.end_ns) continue;
    per_step[static_cast<size_t>(it - 1 - windows.begin())].push_back(&r);
  }

  TimelineReport report;
  std::map<std::string, NameTotals> totals;
  std::vector<std::vector<const KernelRecord*>> kept;
  for (auto& step : per_step) {
    if (step.empty()) continue;
    std::stable_sort(step.begin(), step.end(),
                     [](const KernelRecord* a, const KernelRecord* b) { return a->start_ns < b->start_ns; });
    StepStats s;
    s.kernels = static_cast<int32_t>(step.size());
    uint64_t last_end = 0;
    for (const KernelRecord* r : step) last_end = std::max(last_end, r->end_ns);
    s.span_us = static_cast<double>(last_end - step.front()->start_ns) / kNsPerUs;
    s.busy_us = static_cast<double>(busy_ns(step)) / kNsPerUs;
    s.idle_us = s.span_us - s.busy_us;
    // Per stream, in start order: what each kernel adds to the stream's end.
    std::map<uint32_t, uint64_t> stream_end;  // running end per stream
    for (const KernelRecord* r : step) {
      NameTotals& t = totals[r->name];
      t.calls += 1;
      t.duration_ns += static_cast<double>(r->end_ns - r->start_ns);
      s.duration_sum_us += static_cast<double>(r->end_ns - r->start_ns) / kNsPerUs;
      const auto it = stream_end.find(r->stream);
      if (it == stream_end.end()) {
        t.adds_ns += static_cast<double>(r->end_ns - r->start_ns);
        stream_end.emplace(r->stream, r->end_ns);
        continue;
      }
      t.gap_ns += static_cast<double>(static_cast<int64_t>(r->start_ns) - static_cast<int64_t>(it->second));
      t.gaps += 1;
      if (r->end_ns > it->second) {
        t.adds_ns += static_cast<double>(r->end_ns - it->second);
        it->second = r->end_ns;
      }
    }
    s.streams = static_cast<int32_t>(stream_end.size());
    report.steps.push_back(s);
    kept.push_back(std::move(step));
  }
  if (report.steps.empty()) return report;

  const double n = static_cast<double>(report.steps.size());
  for (const auto& [name, t] : totals) {
    KernelNameStats k;
    k.name = name;
    k.calls_per_step = static_cast<double>(t.calls) / n;
    k.mean_duration_us = t.duration_ns / static_cast<double>(t.calls) / kNsPerUs;
    k.adds_us_per_step = t.adds_ns / n / kNsPerUs;
    k.mean_gap_us = t.gaps > 0 ? t.gap_ns / static_cast<double>(t.gaps) / kNsPerUs : 0.0;
    report.by_name.push_back(k);
  }
  std::stable_sort(report.by_name.begin(), report.by_name.end(),
                   [](const KernelNameStats& a, const KernelNameStats& b) { return a.adds_us_per_step > b.adds_us_per_step; });

  std::vector<size_t> order(report.steps.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return report.steps[a].span_us < report.steps[b].span_us; });
  const size_t mid = order[order.size() / 2];
  report.median_step = static_cast<int32_t>(mid);
  const uint64_t first = kept[mid].front()->start_ns;
  for (const KernelRecord* r : kept[mid])
    report.median_kernels.push_back({r->name, r->stream, r->start_ns - first, r->end_ns - first});
  return report;
}

std::string short_kernel_name(const std::string& mangled) {
  std::string name = mangled;
  if (mangled.rfind("_Z", 0) == 0) {
    int status = 0;
    std::unique_ptr<char, void (*)(void*)> d(abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status),
                                             std::free);
    if (status == 0 && d) name = d.get();
  }
  // Drop a trailing parameter list: the balanced "(...)" at the end.
  if (!name.empty() && name.back() == ')') {
    int depth = 0;
    for (size_t i = name.size(); i-- > 0;) {
      if (name[i] == ')') ++depth;
      else if (name[i] == '(' && --depth == 0) {
        if (i > 0) name.resize(i);
        break;
      }
    }
  }
  // Keep the last component of the qualified name: after the last "::" or
  // space (the return type) outside <> and ().
  size_t from = 0;
  int angle = 0, paren = 0;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    if (c == '<') ++angle;
    else if (c == '>') angle = std::max(0, angle - 1);
    else if (c == '(') ++paren;
    else if (c == ')') paren = std::max(0, paren - 1);
    else if (angle == 0 && paren == 0) {
      if (c == ' ') from = i + 1;
      else if (c == ':' && i + 1 < name.size() && name[i + 1] == ':') from = i + 2;
    }
  }
  return name.substr(from);
}

}  // namespace seatrt::bench
