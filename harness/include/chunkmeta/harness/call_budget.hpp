// How long one call to an implementation may take before it is cut short as
// a hang: one policy for every door that can cut a call short (a subprocess,
// a Python function under check()). A call gets:
// - the whole timeout while nothing is measured yet (a first answer pays a
//   start-up or a lazy set-up, which is not a hang);
// - while shrinking (which sends many workloads that hang), and once a call
//   was cut short, 10x the slowest answer so far, at least half a second: a
//   step of the shrink costs well under a second;
// - otherwise 20x what the slowest answer so far per unit of work (1 + rows +
//   chunks) says this workload's size costs, at least 2 s: a runaway on a
//   small workload is cut in seconds;
// - all three within the timeout, except a call that its size predicts to be
//   long: 10x its predicted time, up to 10x the timeout. The prediction is the
//   workload's units times the highest cost per unit among the largest calls
//   answered (within 16x of the largest): those show the cost of the work
//   itself, where a small call's cost is mostly the call's own overhead. A
//   correct function whose cost grows in proportion to its work is not cut short
//   by the machine's speed (the prediction is measured on the same machine,
//   in the same run), and a hang on a large workload still ends within 10x
//   what its size should take.
// A limit that expired is re-confirmed before it counts as a finding (a busy
// machine stalls correct code too): the run loop first asks it again with the
// ordinary limit (a stall is over by then), and a timeout that holds, once
// shrunk, is asked once more with confirmation_limit(): twice the limit that
// expired and at least what a fresh call of its size gets (so at least 2 s),
// within the timeout, or 10x the timeout for a call its size predicts to be
// long; confirming() gives that call exactly that limit.
// A correct function is never cut short for its speed alone: its cost per
// unit was measured on its own answers. What is cut short is a hang, or a
// function whose cost grows faster than its work: that is a finding of its
// own (superlinear_cost, with the figures), named when the cost per unit of
// its answers rises with their size (explain_cut) or when a confirmation
// answers far slower than its size predicts (cost_growth).
#pragma once

#include <array>
#include <string>
#include <utility>
#include <vector>

#include "chunkmeta/harness/implementation.hpp"
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
  // Why the limit is not the whole timeout ("" when it is), for a finding's summary.
  std::string why_adapted(double units) const;

  // An answer that came in `seconds` (not cut short) on a workload of `units`;
  // inside confirming(), kept for cost_growth() only (a confirmation teaches the policy nothing).
  void measured(double units, double seconds);
  void cut_short() { cut_before_ = true; }
  // A limit past the timeout, given by the call's size (not a confirmation's): a cut there is confirmed.
  bool past_the_timeout(double units) const { return timeout_ > 0 && forced_ <= 0 && limit(units) > timeout_; }
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
    confirmation_ = {units, expired, 0};
    auto answer = ask();
    forced_ = 0;
    return answer;
  }
  // After confirming() answered: when that answer came after more than the
  // limit that expired before, and its time is at least 4x what its size
  // predicts from the largest calls answered (a workload at least twice
  // theirs), the figures that say its cost grows faster than its work
  // ("on 70,001 units of work it answered in 41.0 s ..."); else "".
  std::string cost_growth() const;
  // A call of `units` cut short at cut.limit_seconds: a superlinear_cost
  // finding, with the figures, when that limit was a long call's (above the
  // timeout), it is larger than every answered call, and the rise of its
  // answers' cost per unit with their size (units^1.5 or more, each size seen
  // at least 3 times) predicts at least that limit for it; else unchanged (a hang).
  void explain_cut(Misbehaviour& cut, double units) const;

  double timeout_seconds() const { return timeout_; }
  // Whether the call now running is a confirmation (inside confirming()).
  bool confirmation_running() const { return forced_ > 0; }

 private:
  enum class Rule { whole, after_hang, by_size };
  Rule rule() const;
  double rule_limit(Rule rule, double units) const;  // within the timeout
  double by_size(double units) const;  // 20x the measured cost of the size, at least 2 s
  // What a call of `units` should take at the cost per unit of the largest calls answered (0: none yet).
  double predicted(double units) const;
  // 10x predicted(), up to ceiling(): what a call its size predicts to be long may take.
  double long_call(double units) const;
  double ceiling() const { return kCeilingTimes * timeout_; }

  static constexpr double kLongCallTimes = 10;  // of a long call's predicted time
  static constexpr double kCeilingTimes = 10;   // of the timeout: the most any call may take
  static constexpr double kGrowthTimes = 4;     // of its predicted time, for cost_growth()
  static constexpr int kSizeClasses = 64;       // of units, by powers of two
  static constexpr int kLargestClasses = 4;     // the largest calls: size classes within 16x of the largest
  static int size_class(double units);

  double timeout_ = 0;
  double forced_ = 0;
  bool shrinking_ = false;
  bool cut_before_ = false;
  double slowest_ = 0;       // seconds, of any measured answer
  double unit_seconds_ = 0;  // the largest seconds per unit of work of those answers
  // Per size class: the largest seconds per unit of its answers (and that answer's
  // units), and the first answers' (seconds per unit, units), for their median
  // (which neither a stall nor an odd workload moves).
  struct Measured {
    double unit_seconds = 0;
    double units = 0;
    std::vector<std::pair<double, double>> first;
  };
  static constexpr std::size_t kKeptPerClass = 15;
  std::array<Measured, kSizeClasses> by_class_{};
  int largest_class_ = -1;
  double largest_units_ = 0;
  // How the median cost per unit rises from a size class to one at least 8x larger, both seen 3 times.
  struct Growth {
    double power = 1;  // time ~ units^power
    std::pair<double, double> small{};  // (seconds per unit, units): the median answer of each class
    std::pair<double, double> large{};
  };
  Growth growth() const;
  static constexpr double kGrowingPower = 1.5;  // a cost per unit rising as fast as sqrt(units) or faster
  static constexpr double kTimedSeconds = 1e-3;  // a call quicker than this is mostly the clock's noise
  struct Confirmation {
    double units = 0;
    double expired = 0;
    double seconds = 0;  // its answer's time (0: none came)
  };
  Confirmation confirmation_;
};

}  // namespace chunkmeta::harness
