// The planner's streams: which steps may run beside which.  Step j depends
// on an earlier step i when i writes memory j reads or writes, or reads
// memory j writes (the byte ranges of their nodes).  With two streams, a
// step that does not depend on the last step of the caller's stream but
// forks from earlier work (a MoE layer's router and experts beside its
// dense MLP) runs on the second stream; a step that depends on work of the
// other stream waits for an event recorded after that work.
#include <algorithm>

#include "plan.hpp"

namespace seatrt::cuda {
namespace {

struct Access {
  std::vector<sdk::ByteRange> reads, writes;
};

Access access_of(const PlanGraph& g, const Step& s) {
  Access a;
  for (int32_t n : s.nodes) {
    a.reads.insert(a.reads.end(), g.nodes[n].reads.begin(), g.nodes[n].reads.end());
    a.writes.insert(a.writes.end(), g.nodes[n].writes.begin(), g.nodes[n].writes.end());
  }
  return a;
}

bool hits(const std::vector<sdk::ByteRange>& x, const std::vector<sdk::ByteRange>& y) {
  for (const sdk::ByteRange& a : x)
    for (const sdk::ByteRange& b : y)
      if (a.overlaps(b)) return true;
  return false;
}

bool depends(const Access& later, const Access& earlier) {
  return hits(earlier.writes, later.reads) || hits(earlier.writes, later.writes) || hits(earlier.reads, later.writes);
}

}  // namespace

int32_t assign_streams(const PlanGraph& g, std::vector<Step>& steps, int32_t streams) {
  const int32_t n = static_cast<int32_t>(steps.size());
  std::vector<Access> access;
  access.reserve(steps.size());
  for (const Step& s : steps) access.push_back(access_of(g, s));
  int32_t tail[2] = {-1, -1};    // the last step on each stream
  int32_t waited[2] = {-1, -1};  // the other stream's step each stream last waited for
  int32_t events = 0;
  for (int32_t j = 0; j < n; ++j) {
    // The latest step of each stream that j depends on.
    int32_t dep[2] = {-1, -1};
    for (int32_t i = j - 1; i >= 0 && (dep[0] < 0 || dep[1] < 0); --i) {
      const int32_t si = steps[i].stream;
      if (dep[si] < 0 && depends(access[j], access[i])) dep[si] = i;
    }
    // Not after the caller stream's latest work: beside it.
    const int32_t s = streams > 1 && tail[0] >= 0 && dep[0] != tail[0] ? 1 : 0;
    const int32_t other = 1 - s;
    Step& step = steps[j];
    step.stream = s;
    if (dep[other] > waited[s]) {
      step.wait_for = dep[other];
      waited[s] = dep[other];
      if (steps[dep[other]].event < 0) steps[dep[other]].event = events++;
    }
    tail[s] = j;
  }
  return events;
}

}  // namespace seatrt::cuda
