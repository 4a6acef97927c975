// check() and replay() in this process: a Python callable with an engine's
// signature as a harness Implementation of its spec, run by the engine.
// fn takes the spec's inputs in its order (Spec::inputs: Mamba's
// fn(chunk_size, num_prefills, num_computed_tokens, query_start_loc)) and
// returns its outputs (the one array, or a sequence of them in order).
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "arrays.hpp"
#include "door.hpp"
#include "chunkmeta/engine/check.hpp"
#include "chunkmeta/harness/call_budget.hpp"
#include "chunkmeta/harness/corpus.hpp"
#include "chunkmeta/harness/json.hpp"
#include "chunkmeta/harness/printable.hpp"
#include "chunkmeta/harness/shrink.hpp"
#include "chunkmeta/properties/generators.hpp"
#include "chunkmeta/properties/tables.hpp"
#include "module.hpp"

namespace chunkmeta::python {
namespace {

using harness::Answer;
using harness::FindingKind;
using harness::Implementation;
using harness::Misbehaviour;
using harness::Input;
using harness::Outcome;
using harness::Slot;
using harness::Spec;
using harness::Workload;

const Spec& spec_named(const std::string& name) {
  const Spec* spec = harness::find_spec(name);
  if (spec == nullptr) throw py::value_error("unknown spec '" + name + "' (the specs: " + harness::spec_names() + ")");
  return *spec;
}

// chunkmeta._ShrinkTimeout, which check()'s SIGALRM handler raises (from __init__.py).
py::object* shrink_timeout_type = nullptr;

// The longest a call is armed for, in seconds: a longer limit (a timeout of 1e10, or infinity) waits as if it
// were none, and no clock deadline past it can overflow.
constexpr double kLongestWait = 1e6;

// The name of `object`'s type, whatever the object (its type's __name__ may itself misbehave).
std::string type_name_of(py::handle object) {
  try {
    return utf8_of(py::str(py::type::handle_of(object).attr("__name__")));
  } catch (py::error_already_set&) {
    return "an exception";
  }
}

// What Python code under test gives as text (str() of what it raised):
// whatever it is, a string; if str() itself raises, that is said.
std::string text_of(py::handle value) {
  try {
    return py::str(value).cast<std::string>();
  } catch (py::error_already_set& also) {
    return "(str() of it raised " + type_name_of(also.value()) + ")";
  } catch (std::exception&) {
    return "(str() of it gave no text)";
  }
}

// The rejection an exception names (code, field and index, like
// chunkmeta.InvalidWorkload), or nullopt: any attribute missing, raising,
// unknown, or an index that is no entry's (not an int, or beyond int64).
std::optional<Error> rejection_named(const py::object& error) {
  try {
    if (!py::hasattr(error, "code") || !py::hasattr(error, "field") || !py::hasattr(error, "index")) return std::nullopt;
    const py::object code_given = error.attr("code");
    const py::object field_given = error.attr("field");
    if (!py::isinstance<py::str>(code_given) || !py::isinstance<py::str>(field_given)) return std::nullopt;
    const auto code = parse_error_code(utf8_of(code_given));
    const auto field = harness::known_field(utf8_of(field_given));
    const py::object index = error.attr("index");
    if (!code || !field) return std::nullopt;
    if (index.is_none()) return Error{*code, *field, Error::kNoIndex, 0, 0};
    if (!PyLong_Check(index.ptr()) || PyBool_Check(index.ptr())) return std::nullopt;
    int overflow = 0;
    const long long value = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
    if (overflow != 0 || (value == -1 && PyErr_Occurred())) {
      PyErr_Clear();
      return std::nullopt;
    }
    return Error{*code, *field, static_cast<std::int64_t>(value), 0, 0};
  } catch (py::error_already_set&) {
    return std::nullopt;
  }
}

// A raised exception that names a rule is a rejection; anything else is a
// finding, with its type, text and traceback, however odd the exception.
Answer answer_for_exception(py::error_already_set& raised) {
  const py::object error = raised.value();
  if (auto rejection = rejection_named(error)) return Outcome(*rejection);
  const std::string type = type_name_of(error);
  const std::string message = text_of(error);
  std::string traceback;
  try {
    const py::object trace = raised.trace() ? py::reinterpret_borrow<py::object>(raised.trace()) : py::none();
    const py::object lines = py::module_::import("traceback").attr("format_exception")(raised.type(), error, trace);
    traceback = py::str("").attr("join")(lines).cast<std::string>();
  } catch (py::error_already_set&) {
    traceback = type + ": " + message;
  } catch (std::exception&) {
    traceback = type + ": " + message;
  }
  return Misbehaviour{FindingKind::raised, "raised " + type + ": " + message, traceback};
}

// Ctrl-C and check()'s alarm: they end the call, whatever fn's code was doing when they came.
bool goes_to_the_caller(const py::error_already_set& raised) {
  return raised.matches(PyExc_KeyboardInterrupt) ||
         (shrink_timeout_type != nullptr && raised.matches(*shrink_timeout_type));
}

Misbehaviour malformed(py::handle result, std::string summary) {
  std::string shown;
  try {
    shown = short_repr(result, 400);
  } catch (py::error_already_set& raised) {
    if (goes_to_the_caller(raised)) throw;
    shown = "(repr() of it raised " + type_name_of(raised.value()) + ")";
  }
  return Misbehaviour{FindingKind::malformed_output, std::move(summary), std::move(shown)};
}

const char* count_word(std::size_t n) {
  static const char* const kWords[] = {"none", "one", "two", "three", "four", "five", "six", "seven", "eight"};
  return n < std::size(kWords) ? kWords[n] : "several";
}

// The spec's outputs from what fn returned (the one array, or a sequence of
// them in the spec's order), each of the dtype the spec gives it.
Answer answer_of(const Spec& spec, py::handle result, const Workload& w) {
  // A plain def that returns a coroutine (an async function behind a wrapper): closed, so that no
  // "never awaited" warning outlives the call, and named (check() refuses async functions up front).
  if (PyCoro_CheckExact(result.ptr()) || PyAsyncGen_CheckExact(result.ptr()) ||
      py::hasattr(result, "__await__")) {
    const std::string type = Py_TYPE(result.ptr())->tp_name;
    if (py::hasattr(result, "close")) result.attr("close")();
    return Misbehaviour{FindingKind::malformed_output,
                        "returned a " + type + " (an awaitable) instead of its answer: the engine calls it "
                        "synchronously; await it inside (asyncio.run) or pass a synchronous function", ""};
  }
  const auto outputs = spec.outputs();
  const bool one = outputs.size() == 1;
  if (!one && !PyTuple_Check(result.ptr()) && !PyList_Check(result.ptr())) {
    return malformed(result, "returned " + std::string(Py_TYPE(result.ptr())->tp_name) + " instead of " +
                                 count_word(outputs.size()) + " sequences");
  }
  if (!one && py::len(result) != outputs.size())
    return malformed(result, "returned " + std::to_string(py::len(result)) + " values instead of " +
                                 count_word(outputs.size()));
  const Input* wide = nullptr;
  for (const auto& input : spec.inputs()) {
    if (input.wide) wide = &input;
  }
  harness::Arrays arrays;
  AnswerRoom room{spec.most_answer_entries(w)};  // all outputs together
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const std::string name(outputs[i].name);
    std::string why;
    std::string dtype;
    auto values = read_output(one ? result : result[py::int_(i)], name.c_str(), &why, outputs[i].columns,
                              room, &dtype);
    if (!values) return malformed(result, "returned " + why);
    // The engine's kernels read the dtype the spec gives: another one is not what they read.
    const std::string wanted(spec.dtype_of(outputs[i], w));
    if (!dtype.empty() && dtype != wanted) {
      std::string because;
      if (wide != nullptr) {
        because = outputs[i].dtype == harness::OutputDtype::of_input ? " (" + std::string(wide->name) + "' dtype)"
                                                                       : " (whatever " + std::string(wide->name) + "' dtype)";
      }
      return malformed(result, "returned " + name + " of dtype " + dtype + "; the spec gives " + wanted + because);
    }
    arrays.push_back(std::move(*values));
  }
  return Outcome(std::move(arrays));
}


// answer_of, where reading what fn returned raised: a malformed result
// (the alarm's timeout and Ctrl-C go on to the caller).
Answer read_result(const Spec& spec, py::handle result, const Workload& w) {
  try {
    return answer_of(spec, result, w);
  } catch (py::error_already_set& raised) {
    if (goes_to_the_caller(raised)) throw;
    const Answer why = answer_for_exception(raised);
    const auto* m = std::get_if<Misbehaviour>(&why);
    return Misbehaviour{FindingKind::malformed_output,
                        "returned a result whose reading " + (m != nullptr ? m->summary : std::string("raised")),
                        m != nullptr ? m->detail : ""};
  }
}

// fn's arguments for a workload, in the engine's order, as the engine passes them.
py::tuple arguments_of(const Spec& spec, ArrayKind kind, const Workload& w) {
  const auto inputs = spec.inputs();
  py::tuple arguments(inputs.size());
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const Slot slot = inputs[i].slot;
    const std::size_t index = inputs[i].index;
    if (harness::is_flag(slot)) {
      arguments[i] = py::bool_(harness::flag_in(w, slot, index));
      continue;
    }
    if (harness::is_optional(slot)) {
      const auto value = harness::optional_in(w, slot, index);
      arguments[i] = value ? py::object(py::int_(*value)) : py::object(py::none());
      continue;
    }
    if (!is_array(slot)) {
      arguments[i] = py::int_(scalar_in(w, slot, index));
      continue;
    }
    const bool int64 = inputs[i].wide && w.dtype == harness::Dtype::int64;
    arguments[i] = make_array(inputs[i].as_list ? ArrayKind::lists : kind, array_in(w, slot, index),
                              int64 ? IntType::int64 : IntType::int32);
  }
  return arguments;
}

// The first input fn changed in place, compared after its call with what it
// was sent (the workload's own arrays: no copy is kept), or nullopt. Ints,
// None and bools cannot change; tensors, arrays and lists can. Fn's code
// may run here (a list item's __index__): its timeout and Ctrl-C go on to the caller.
std::optional<Misbehaviour> input_changed_by(const Spec& spec, const py::tuple& arguments, const Workload& w) {
  const auto inputs = spec.inputs();
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (!is_array(inputs[i].slot)) continue;
    const auto& sent = array_in(w, inputs[i].slot, inputs[i].index);
    const std::string name(inputs[i].name);
    std::optional<Misbehaviour> changed;
    try {
      const InputArray now(arguments[i], name.c_str(), true);
      changed = now.type() == IntType::int32 ? harness::input_changed(name, sent, now.int32())
                                             : harness::input_changed(name, sent, now.int64());
    } catch (py::error_already_set& raised) {
      if (goes_to_the_caller(raised)) throw;
      changed = harness::input_unreadable(name, type_name_of(raised.value()) + ": " + text_of(raised.value()));
    } catch (std::exception& refused) {  // InputArray's TypeError: another type, shape or memory now
      changed = harness::input_unreadable(name, refused.what());
    }
    if (changed) return changed;
  }
  return std::nullopt;
}

// What a Python implementation shares with the run: Ctrl-C, and the time its
// answers take. check() arms an alarm that raises chunkmeta._Timeout in fn
// (SIGALRM in the main thread, a thread of its own elsewhere); how long
// a call may take is the harness's one policy (harness/call_budget.hpp).
// The last bound on a call: a function that goes on long after the alarm
// cut it short (it catches the timeout in a retry loop, disarms SIGALRM, or
// runs in C code that never checks for signals) would hold the run, and the
// CI job around it, forever. A thread of ours that needs no GIL then says so
// on stderr, with the case, and ends the process, as pytest-timeout's thread
// method does: the run ends, and the reason is printed.
class CallWatchdog {
 public:
  CallWatchdog(std::string name, const Spec& spec) : name_(std::move(name)), spec_(spec) {}
  ~CallWatchdog() {
    {
      std::lock_guard lock(mutex_);
      ending_ = true;
    }
    woken_.notify_all();
    if (thread_.joinable()) thread_.join();
  }
  CallWatchdog(const CallWatchdog&) = delete;
  CallWatchdog& operator=(const CallWatchdog&) = delete;

  // A call of `w` begins that the alarm cuts short after `limit` seconds.
  void begin(const Workload& w, double limit, double timeout) {
    std::lock_guard lock(mutex_);
    if (!thread_.joinable()) thread_ = std::thread([this] { watch(); });
    workload_ = &w;
    limit_ = limit;
    timeout_ = timeout;
    // Past its own limit, at least as long again as the timeout setting, and 10 s, to end of its own.
    deadline_ = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(
                                   std::min(limit + std::max(timeout, 10.0), 2 * kLongestWait)));
    woken_.notify_all();
  }
  void end() {
    std::lock_guard lock(mutex_);
    workload_ = nullptr;
  }

 private:
  using Clock = std::chrono::steady_clock;
  void watch() {
    std::unique_lock lock(mutex_);
    while (!ending_) {
      if (workload_ == nullptr) {
        woken_.wait(lock);
        continue;
      }
      if (Clock::now() < deadline_) {
        woken_.wait_until(lock, deadline_);
        continue;
      }
      const double ran = std::min(limit_ + std::max(timeout_, 10.0), 2 * kLongestWait);
      const auto seconds = [](double s) {
        char text[32];
        std::snprintf(text, sizeof text, "%.3g", s);
        return std::string(text);
      };
      const std::string text =
          "\nchunkmeta.check: " + harness::printable_line(name_) + " has not returned " + seconds(ran) +
          " s after its call began, though the harness cut it short after " + seconds(limit_) +
          " s: it catches the timeout exception (an `except BaseException` retry loop?), disarms SIGALRM, or runs in "
          "code that never checks for signals. The process ends now (exit 124) so that the run ends.\n"
          "  the case: " + harness::dump_line(harness::to_json(spec_, *workload_)).substr(0, 2000) + "\n";
      [[maybe_unused]] const auto wrote = ::write(STDERR_FILENO, text.data(), text.size());
      std::_Exit(124);
    }
  }

  const std::string name_;
  const Spec& spec_;
  std::mutex mutex_;
  std::condition_variable woken_;
  std::thread thread_;
  bool ending_ = false;
  const Workload* workload_ = nullptr;
  double limit_ = 0;
  double timeout_ = 0;
  Clock::time_point deadline_{};
};

// Off the main thread no SIGALRM reaches fn: a thread of ours raises
// chunkmeta._Timeout into fn's thread instead (PyThreadState_SetAsyncExc) when
// the armed call's time is up. Like the signal's handler, it lands between two
// of fn's bytecodes: a call in C code is cut when it is back in Python, and one
// that never comes back is the CallWatchdog's to end. Arming and disarming are
// C++, run with the GIL held: no bytecode of the harness runs there for the
// exception to land in, and one sent as the call returned is withdrawn before
// any harness code runs Python again.
class ThreadAlarm {
 public:
  ThreadAlarm() : target_(PyThread_get_thread_ident()) {}
  ~ThreadAlarm() { close(); }
  ThreadAlarm(const ThreadAlarm&) = delete;
  ThreadAlarm& operator=(const ThreadAlarm&) = delete;

  // Before a call of fn (seconds > 0) and after it (0); with the GIL held, in fn's thread.
  void arm(double seconds) {
    std::lock_guard lock(mutex_);
    withdraw();
    ++armed_;
    deadline_.reset();
    if (seconds > 0) {
      deadline_ = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                     std::chrono::duration<double>(std::min(seconds, kLongestWait)));
      if (!thread_.joinable()) thread_ = std::thread([this] { watch(); });
    }
    woken_.notify_all();
  }
  // The run is over: the thread ends (waited for without the GIL, which it may be waiting for).
  void close() {
    {
      std::lock_guard lock(mutex_);
      closing_ = true;
      deadline_.reset();
      withdraw();
    }
    woken_.notify_all();
    if (thread_.joinable()) {
      py::gil_scoped_release released;
      thread_.join();
    }
  }

 private:
  using Clock = std::chrono::steady_clock;
  void withdraw() {  // with mutex_ and the GIL held
    if (fired_) PyThreadState_SetAsyncExc(target_, nullptr);
    fired_ = false;
  }
  void watch() {
    std::unique_lock lock(mutex_);
    while (!closing_) {
      if (!deadline_) {
        woken_.wait(lock);
        continue;
      }
      if (Clock::now() < *deadline_) {
        woken_.wait_until(lock, *deadline_);
        continue;
      }
      // The GIL is taken with mutex_ let go: fn's thread takes mutex_ with the GIL held.
      const long long armed = armed_;
      lock.unlock();
      const PyGILState_STATE gil = PyGILState_Ensure();
      lock.lock();
      if (!closing_ && armed_ == armed && deadline_ && shrink_timeout_type != nullptr) {
        PyThreadState_SetAsyncExc(target_, shrink_timeout_type->ptr());
        fired_ = true;
        deadline_.reset();
      }
      lock.unlock();
      PyGILState_Release(gil);
      lock.lock();
    }
  }

  const unsigned long target_;
  std::mutex mutex_;
  std::condition_variable woken_;
  std::thread thread_;
  std::optional<Clock::time_point> deadline_;
  long long armed_ = 0;  // how many times arm() was called: a deadline the watcher saw is still the one armed
  bool fired_ = false;
  bool closing_ = false;
};

struct CallState {
  bool interrupted = false;
  bool alarm = false;       // check()'s alarm is installed
  py::object arm_alarm;     // check()'s arm(seconds): 0 disarms (and gives the caller's own timer back)
  harness::CallBudget budget;
  double timeout = 0;       // the setting (0: no limit)
  long long calls = 0;
  std::vector<harness::OwnCall> own_calls;  // the warm-up's answers, judged by the run (OwnCall)
  std::unique_ptr<CallWatchdog> watchdog;    // while check() runs, with a limit

  void arm(double seconds) const { arm_alarm(seconds); }
};

// fn called with the workload's arguments; the alarm cuts it short.
Answer call(const py::object& fn, const Spec& spec, ArrayKind kind, const Workload& w, CallState& state) {
  const double units = harness::CallBudget::units_of(spec, w);
  const double budget = state.alarm ? std::min(state.budget.limit(units), kLongestWait) : 0;
  const auto start = std::chrono::steady_clock::now();
  py::tuple arguments;
  try {
    // The arguments are made before the alarm is armed: only fn itself is ever cut short.
    arguments = arguments_of(spec, kind, w);
    if (budget > 0) {
      if (state.watchdog) state.watchdog->begin(w, budget, state.timeout);
      state.arm(budget);
    }
    const py::object result = fn(*arguments);
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    // Reading the result runs fn's code too (a result's __index__, __len__, __iter__): under the same alarm.
    Answer answer = read_result(spec, result, w);
    if (std::holds_alternative<Outcome>(answer)) {
      if (auto changed = input_changed_by(spec, arguments, w)) answer = std::move(*changed);
    }
    if (budget > 0) state.arm(0);
    if (state.watchdog) state.watchdog->end();
    if (++state.calls > 1) state.budget.measured(units, took);  // the first call pays the lazy set-up
    return answer;
  } catch (py::error_already_set& raised) {
    if (state.watchdog) state.watchdog->end();
    if (budget > 0) {
      try {
        state.arm(0);
      } catch (py::error_already_set&) {  // the alarm's own exception, arriving late
      }
    }
    if (budget > 0 && shrink_timeout_type != nullptr && raised.matches(*shrink_timeout_type)) {
      char seconds[32];
      std::snprintf(seconds, sizeof seconds, "%.3f", budget);
      const std::string why(state.budget.why_adapted(units));
      state.budget.cut_short();
      Misbehaviour hang{FindingKind::timed_out, std::string("gave no answer within ") + seconds + " s" + why + "; cut short",
                        ""};
      hang.limit_seconds = budget;
      hang.cut_past_the_timeout = state.budget.past_the_timeout(units);
      state.budget.explain_cut(hang, units);  // a cost that grows faster than the work is named so, not a hang
      return hang;
    }
    if (raised.matches(PyExc_KeyboardInterrupt)) {
      state.interrupted = true;
      return spec.reference(w);
    }
    Answer answer = answer_for_exception(raised);
    // A rejection is an answer too: what fn changed before it raised is judged.
    if (std::holds_alternative<Outcome>(answer) && arguments.size() == spec.inputs().size()) {
      try {
        if (auto changed = input_changed_by(spec, arguments, w)) answer = std::move(*changed);
      } catch (py::error_already_set&) {  // Ctrl-C while comparing: as during the call
        state.interrupted = true;
        return spec.reference(w);
      }
    }
    return answer;
  }
}

struct PythonImplementation {
  Implementation implementation;
  std::shared_ptr<CallState> state = std::make_shared<CallState>();
};

// Calls fn with the GIL held (check() never releases it). After Ctrl-C the
// suite stops (stop_requested) and any workload still asked for is answered by
// the reference; check() then raises KeyboardInterrupt.
PythonImplementation python_implementation(py::object fn, std::string name, const Spec& spec, ArrayKind kind,
                                           bool valid_only, double timeout, py::object alarm) {
  PythonImplementation out;
  auto state = out.state;
  state->budget = harness::CallBudget(timeout);
  state->timeout = timeout;
  state->alarm = !alarm.is_none() && shrink_timeout_type != nullptr;
  if (state->alarm && timeout > 0) state->watchdog = std::make_unique<CallWatchdog>(name, spec);
  state->arm_alarm = std::move(alarm);
  out.implementation = harness::in_process(
      std::move(name), "a Python function, called in this process", spec,
      [fn = std::move(fn), &spec, kind, state](const Workload& w) -> Answer {
        if (state->interrupted) return spec.reference(w);
        // The engine's int32 tensors cannot hold such a workload: its conversion would fail first.
        const bool int32_arrays = !spec.reads_dtype() || w.dtype == harness::Dtype::int32;
        if (kind != ArrayKind::lists && int32_arrays && !harness::fits_int32(w)) return Outcome(*spec.validate(w));
        Answer answer = call(fn, spec, kind, w, *state);
        if (PyErr_CheckSignals() != 0) {
          PyErr_Clear();
          state->interrupted = true;
        }
        return answer;
      });
  out.implementation.rejects_invalid_input = !valid_only;
  out.implementation.take_own_calls = [state] { return std::exchange(state->own_calls, {}); };
  out.implementation.shrinking = [state](bool shrinking) { state->budget.set_shrinking(shrinking); };
  out.implementation.confirm = [state, &spec, compute = out.implementation.compute](const Workload& w,
                                                                                     double expired) {
    return state->budget.confirming(expired, harness::CallBudget::units_of(spec, w), [&] { return compute(w); });
  };
  out.implementation.cost_growth = [state] { return state->budget.cost_growth(); };
  return out;
}

py::dict counterexample_dict(const harness::Counterexample& cx, const std::optional<harness::WrittenFiles>& files) {
  const Spec& spec = cx.spec != nullptr ? *cx.spec : harness::default_spec();
  py::dict d;
  d["property"] = cx.property;
  d["workload"] = harness::dump_line(harness::to_json(spec, cx.workload));
  d["finding"] = std::string(harness::to_string(cx.finding.kind));
  d["summary"] = cx.finding.summary;
  d["status"] = cx.status;
  d["actual"] = cx.finding.actual ? py::object(py::str(harness::outcome_for_report(spec, *cx.finding.actual).dump()))
                                  : py::none();
  d["report"] = harness::render(cx, files);
  d["report_file"] = files ? py::object(py::str(files->report.string())) : py::none();
  d["corpus_file"] = files && !files->corpus_entry.empty() ? py::object(py::str(files->corpus_entry.string())) : py::none();
  return d;
}

void write_out(const std::string& text) { py::module_::import("sys").attr("stdout").attr("write")(text); }

const engine::Property* find_property(const engine::PropertyTable& table, const std::string& name) {
  for (const auto& property : table.properties) {
    if (property.name == name) return &property;
  }
  return nullptr;
}

// check()'s settings as __init__.py hands them over: one dict, every key given.
struct CheckSettings {
  int cases = 0;
  int min_cases = 0;
  std::optional<std::uint64_t> seed;
  bool valid_only = false;
  double time_budget = 0;
  std::optional<std::filesystem::path> report_dir;
  std::string arrays;
  std::vector<std::filesystem::path> corpus;
  bool fail_fast = false;
  bool keep_going = false;
  std::vector<std::string> only;  // the properties to run (empty: all)
  std::vector<std::string> exclude;
  bool generate = true;
  bool shrink = true;
  double timeout = 0;
  std::string rerun_command;
  bool verbose = false;

  explicit CheckSettings(const py::dict& given) {
    const auto read = [&given](const char* key, auto& into) {
      if (!given.contains(key)) throw py::key_error(std::string("check() settings lack '") + key + "'");
      into = given[key].cast<std::remove_reference_t<decltype(into)>>();
    };
    read("cases", cases);
    read("min_cases", min_cases);
    read("seed", seed);
    read("valid_only", valid_only);
    read("time_budget", time_budget);
    read("report_dir", report_dir);
    read("arrays", arrays);
    read("corpus", corpus);
    read("fail_fast", fail_fast);
    read("keep_going", keep_going);
    read("properties", only);
    read("exclude", exclude);
    read("generate", generate);
    read("shrink", shrink);
    read("timeout", timeout);
    read("rerun_command", rerun_command);
    read("verbose", verbose);
    if (given.size() != 17) throw py::key_error("check() settings have keys it does not read");
  }
};

py::dict run_check(py::object fn, const std::string& spec_name, const std::string& name, const py::dict& given,
                   py::object alarm) {
  CheckSettings settings(given);
  auto& [cases, min_cases, seed, valid_only, time_budget, report_dir, arrays, corpus, fail_fast, keep_going, only,
         exclude, generate, shrink, timeout, rerun_command, verbose] = settings;
  const Spec& spec = spec_named(spec_name);
  const engine::PropertyTable& table = properties::table_of(spec);
  for (const auto& property : only) {
    if (find_property(table, property) == nullptr)
      throw py::value_error("unknown property '" + property + "' of spec " + spec_name);
  }
  if (auto unknown = table.unknown_edge_class(exclude)) {
    throw py::value_error("exclude: '" + *unknown + "' is not an edge class of " + spec_name + "; its edge classes: " +
                          table.edge_class_names());
  }
  auto python =
      python_implementation(std::move(fn), name, spec, array_kind(arrays), valid_only, timeout, std::move(alarm));
  engine::CheckOptions options;
  options.corpus = std::move(corpus);
  options.suite.cases = cases;
  options.suite.seed = seed;
  options.suite.time_budget_seconds = time_budget;
  options.suite.min_cases = min_cases;
  if (report_dir) options.suite.report_dir = *report_dir;
  options.suite.only = std::move(only);
  options.suite.excluded_classes = std::move(exclude);
  options.suite.include_library = false;
  options.suite.stop_at_first_failure = fail_fast;
  options.suite.shrink = shrink;
  options.properties_after_replay_failure = keep_going;
  options.suite.distinct_bugs = keep_going;
  options.suite.rerun_command = rerun_command;
  options.suite.stop_requested = [state = python.state] { return state->interrupted; };
  if (verbose) options.progress = [](std::string_view what) { write_out(std::string(what)); };
  options.generate = generate;
  // Two calls on a one-row workload first: the first pays the function's lazy
  // set-up, the second says what a small workload costs (the time budgets' measure).
  // Their answers are judged like every other (a function wrong on its first call only is a finding).
  // A first call cut short is not repeated: its timeout already said what the second would.
  for (int i = 0; i < 2 && !python.state->interrupted; ++i) {
    python.state->own_calls.push_back(harness::OwnCall{spec.warm_up_workload(),
                                                       python.implementation.compute(spec.warm_up_workload()),
                                                       "call " + std::to_string(i + 1) +
                                                           " of the function, the harness's warm-up (before any case)"});
    const auto* cut = std::get_if<Misbehaviour>(&python.state->own_calls.back().answer);
    if (cut != nullptr && cut->kind == FindingKind::timed_out) break;
  }
  const auto result = engine::check(table, {python.implementation}, options);

  py::dict summary;
  summary["passed"] = result.passed();
  summary["text"] = result.text;
  summary["verdict"] = result.verdict();
  py::list replay_failures;
  for (const auto& cx : result.replay.failures) {
    py::dict d = counterexample_dict(cx, std::nullopt);
    replay_failures.append(d);
  }
  summary["replayed_files"] = result.replay.files;
  summary["replay_failures"] = replay_failures;
  py::list shrunk;
  for (const auto& reported : result.replay.reported)
    shrunk.append(counterexample_dict(reported.counterexample, reported.files));
  summary["replay_shrunk"] = shrunk;
  // No suite when the corpus replay already failed (its properties are then not run).
  const engine::SuiteResult none;
  const auto& suite = result.suites.empty() ? none : result.suites.front();
  py::list property_results;
  for (const auto& p : suite.properties) {
    py::dict d;
    d["name"] = p.property;
    d["passed"] = p.passed;
    d["skipped"] = p.skipped;
    d["cases"] = p.cases;
    d["seconds"] = p.seconds;
    d["calls"] = p.implementation_calls;
    d["seed"] = p.seed;
    d["message"] = p.message;
    d["duplicate_of"] = p.duplicate_of;
    d["planned"] = p.planned;
    d["complete"] = p.complete();
    d["not_run"] = p.not_run;
    d["stopped"] = p.stopped;
    d["counterexample"] = p.counterexample ? py::object(counterexample_dict(*p.counterexample, p.files)) : py::none();
    property_results.append(d);
  }
  summary["properties"] = property_results;
  summary["cases"] = suite.cases();
  summary["seconds"] = suite.seconds();
  summary["seed"] = py::int_(engine::seed_of(options.suite));
  if (python.state->interrupted) {
    // Say what was found before stopping as Python asked.
    write_out(result.text + "Interrupted: the run stopped early; any report above is the smallest case found so far.\n");
    PyErr_SetNone(PyExc_KeyboardInterrupt);
    throw py::error_already_set();
  }
  return summary;
}

py::dict run_replay(py::object fn, const std::string& spec_name, const std::string& name,
                    std::vector<std::filesystem::path> paths, const std::string& arrays, bool valid_only) {
  const Spec& spec = spec_named(spec_name);
  auto python = python_implementation(std::move(fn), name, spec, array_kind(arrays), valid_only, 0, py::none());
  const auto replayed = engine::replay_corpus({python.implementation}, paths);
  py::dict summary;
  summary["passed"] = replayed.passed();
  summary["files"] = replayed.files;
  summary["text"] = replayed.text;
  py::list failures;
  for (const auto& cx : replayed.failures) failures.append(counterexample_dict(cx, std::nullopt));
  summary["failures"] = failures;
  return summary;
}

// The spec a corpus entry or report file is of, or None when it is not one.
py::object spec_of_file(const std::filesystem::path& file) {
  auto loaded = harness::load_corpus_entry(file);
  if (std::holds_alternative<std::string>(loaded)) return py::none();
  return py::str(std::string(std::get<harness::CorpusEntry>(loaded).spec->name()));
}

// The edge classes a workload hits, given as fn's arguments (to test that
// chunkmeta.strategies draws the ones chunkmeta's own generators promise).
std::vector<std::string> edge_classes_of(const std::string& spec_name, const py::sequence& arguments) {
  const Spec& spec = spec_named(spec_name);
  const auto inputs = spec.inputs();
  if (py::len(arguments) != inputs.size())
    throw py::value_error("a " + spec_name + " workload has " + std::to_string(inputs.size()) + " arguments");
  Workload w;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const std::string name(inputs[i].name);
    const Slot slot = inputs[i].slot;
    const std::size_t index = inputs[i].index;
    if (slot == Slot::rows) continue;
    if (harness::is_flag(slot)) {
      harness::set_flag(w, slot, index, to_flag(arguments[i], name.c_str()));
      continue;
    }
    if (harness::is_optional(slot)) {
      if (!arguments[i].is_none()) harness::optional_in(w, slot, index) = to_int64(arguments[i], name.c_str());
      continue;
    }
    if (!is_array(slot)) {
      scalar_in(w, slot, index) = to_int64(arguments[i], name.c_str());
      continue;
    }
    const InputArray array(arguments[i], name.c_str(), inputs[i].wide);
    array_in(w, slot, index) = array.widened();
    if (inputs[i].wide && !array.copied() && array.type() == IntType::int64) w.dtype = harness::Dtype::int64;
  }
  spec.fill_unread_rows(w);
  // The classes are a valid workload's: the generators' names assume the domain (a row count that matches).
  if (auto error = spec.validate(w)) raise_invalid(*error);
  return properties::table_of(spec).workload_classes(w);
}

// A valid workload of `spec` drawn by chunkmeta's own generators (the value
// model a spec folder states once in C++) from a seed at a RapidCheck size,
// as fn's arguments: the rows past `max_rows` dropped, then its first
// `drop_front` and last `drop_back` rows (chunkmeta.strategies draws them so
// that Hypothesis shrinks a batch to its failing rows), each where the rows
// kept stay valid.
py::tuple drawn_workload(const std::string& spec_name, std::uint64_t seed, int size, const std::string& arrays,
                         std::size_t max_rows, std::size_t drop_front, std::size_t drop_back) {
  const Spec& spec = spec_named(spec_name);
  Workload w = properties::pick(properties::values_of(spec).valid, rc::Random(seed), std::clamp(size, 0, 100));
  const auto drop_if_valid = [&](std::size_t row, std::size_t count) {
    if (count == 0) return;
    Workload fewer = harness::apply(w, {harness::ShrinkStep::Kind::remove_rows, row, count, 0});
    if (!spec.validate(fewer)) w = std::move(fewer);
  };
  if (w.rows() > max_rows) drop_if_valid(max_rows, w.rows() - max_rows);
  drop_if_valid(0, std::min(drop_front, w.rows()));
  drop_if_valid(w.rows() - std::min(drop_back, w.rows()), std::min(drop_back, w.rows()));
  return arguments_of(spec, array_kind(arrays), w);
}

std::vector<std::string> all_edge_classes_of(const std::string& spec) {
  return properties::table_of(spec_named(spec)).classes.front().names;
}

}  // namespace

PythonFunction python_function(py::object fn, std::string name, const harness::Spec& spec, const std::string& arrays,
                               double timeout, py::object alarm) {
  auto python = python_implementation(std::move(fn), std::move(name), spec, array_kind(arrays), true, timeout,
                                      std::move(alarm));
  return {std::move(python.implementation), [state = python.state] { return state->interrupted; }};
}

void add_door(py::module_& m) {
  m.def("_edge_classes", &edge_classes_of, py::arg("spec"), py::arg("arguments"));
  m.def("_all_edge_classes", &all_edge_classes_of, py::arg("spec"));
  m.def("_drawn_workload", &drawn_workload, py::arg("spec"), py::arg("seed"), py::arg("size"), py::arg("arrays"),
        py::arg("max_rows"), py::arg("drop_front") = 0, py::arg("drop_back") = 0);
  m.def("_set_timeout_type", [](py::object type) {
    shrink_timeout_type = new py::object(std::move(type));  // kept for the life of the process
  });
  py::class_<ThreadAlarm>(m, "_ThreadAlarm")
      .def(py::init<>())
      .def("arm", &ThreadAlarm::arm, py::arg("seconds"))
      .def("close", &ThreadAlarm::close);
  m.def("_check", &run_check, py::arg("fn"), py::arg("spec"), py::arg("name"), py::arg("settings"), py::arg("alarm"));
  m.def("_replay", &run_replay, py::arg("fn"), py::arg("spec"), py::arg("name"), py::arg("paths"), py::arg("arrays"),
        py::arg("valid_only"));
  m.def("_spec_of_file", &spec_of_file, py::arg("file"));
  m.def("_default_spec", [] { return std::string(harness::default_spec().name()); });
  m.def("_descriptions", [] { return harness::dump_line(harness::descriptions_json()); });
  m.def("_specs", [] {
    std::vector<std::string> names;
    for (const Spec* spec : harness::all_specs()) names.emplace_back(spec->name());
    return names;
  });
  m.def("_kernel_formulations", [] {
    std::vector<std::string> names;
    for (const Spec* spec : harness::kernel_formulations()) names.emplace_back(spec->name());
    return names;
  });
  m.def(
      "_properties",
      [](const std::string& spec) {
        std::vector<std::string> names;
        for (const auto& p : properties::table_of(spec_named(spec)).properties) {
          if (p.scope == engine::Scope::implementation) names.push_back(p.name);
        }
        return names;
      },
      py::arg("spec"));
}

}  // namespace chunkmeta::python
