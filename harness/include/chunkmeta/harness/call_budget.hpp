// How long one call to an implementation may take before it is cut short as
// a hang: one policy for every door that can cut a call short (a subprocess,
// a Python function under check()). Within the whole timeout, a call gets:
// - the whole timeout while nothing is measured yet (a first answer pays a
//   start-up or a lazy set-up, which is not a hang);
// - while shrinking (which sends many workloads that hang), and once a call
//   was cut short, 10x the slowest answer so far, at least half a second: a
//   step of the shrink costs well under a second;
// - otherwise 20x what the slowest answer so far per unit of work (1 + rows +
//   chunks) says this workload's size costs, at least 2 s: a runaway on a
//   small workload is cut in seconds, a large workload keeps the time its size
//   needs.
// A limit that expired is re-confirmed before it counts as a finding (a busy
// machine stalls correct code too): the run loop first asks it again with the
// ordinary limit (a stall is over by then), and a timeout that holds, once
// shrunk, is asked once more with confirmation_limit(): twice the limit that
// expired and at least what a fresh call of its size gets (so at least 2 s),
// within the whole timeout; confirming() gives that call exactly that limit.
#pragma once

#include <string_view>

#include "chunkmeta/harness/workload.hpp"

namespace chunkmeta::harness {

class Spec;

class CallBudget {
 public:
  explicit CallBudget(double timeout_seconds = 0) : timeout_(timeout_seconds) {}

  // The units of work of a workload: 1 + rows + chunks (what its answer's size and time scale with).
  static double units_of(const Spec& spec, const Workload& workload);

  // Seconds a call on a workload of `units` may take (0: no limit at all).
  double limit(double units) const;
  // Why the limit is below the whole timeout ("" when it is not), for a finding's summary.
  std::string_view why_adapted(double units) const;

  // An answer that came in `seconds` (not cut short) on a workload of `units`.
  void measured(double units, double seconds);
  void cut_short() { cut_before_ = true; }
  void set_shrinking(bool shrinking) { shrinking_ = shrinking; }
  bool shrinking() const { return shrinking_; }
  // Shrinking a hang: most candidates the shrink sends hang too.
  bool shrinking_a_hang() const { return shrinking_ && cut_before_; }

  // The limit for asking again a workload of `units` whose limit of `expired` seconds ran out.
  double confirmation_limit(double expired, double units) const;
  // Runs `ask` (one call of a workload of `units` whose limit of `expired`
  // seconds ran out) with confirmation_limit(expired, units), then returns to the policy.
  template <typename Ask>
  auto confirming(double expired, double units, Ask&& ask) {
    forced_ = confirmation_limit(expired, units);
    auto answer = ask();
    forced_ = 0;
    return answer;
  }

  double timeout_seconds() const { return timeout_; }
  // Whether the call now running is a confirmation (inside confirming()).
  bool confirmation_running() const { return forced_ > 0; }

 private:
  enum class Rule { whole, after_hang, by_size };
  Rule rule() const;
  double by_size(double units) const;  // 20x the measured cost of the size, at least 2 s

  double timeout_ = 0;
  double forced_ = 0;
  bool shrinking_ = false;
  bool cut_before_ = false;
  double slowest_ = 0;       // seconds, of any measured answer
  double unit_seconds_ = 0;  // the largest seconds per unit of work of those answers
};

}  // namespace chunkmeta::harness
