#include "chunkmeta/harness/report.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>

#include "chunkmeta/harness/printable.hpp"

namespace chunkmeta::harness {
namespace {

Json divergence_json(const Divergence& d) {
  Json j = Json::object();
  j["array"] = d.array;
  j["index"] = d.index;
  j["expected"] = d.expected ? Json(*d.expected) : Json(nullptr);
  j["actual"] = d.actual ? Json(*d.actual) : Json(nullptr);
  return j;
}

Json invariant_json(const InvariantViolation& v) {
  Json j = Json::object();
  j["number"] = v.number;
  j["name"] = v.name;
  j["row"] = v.row >= 0 ? Json(v.row) : Json(nullptr);
  j["chunk"] = v.chunk >= 0 ? Json(v.chunk) : Json(nullptr);
  j["detail"] = v.detail;
  return j;
}

// The kernels' view of the actual output: its first fault, or that every state holds.
Json kernels_view_json(const std::optional<kernel_view::Fault>& fault) {
  Json j = Json::object();
  j["holds"] = !fault.has_value();
  if (fault) {
    j["rule"] = fault->rule;
    j["row"] = fault->row >= 0 ? Json(fault->row) : Json(nullptr);
    j["chunk"] = fault->chunk >= 0 ? Json(fault->chunk) : Json(nullptr);
    j["detail"] = fault->what;
  }
  return j;
}

// Implementation names can be whole commands: keep file names short.
// `text` as a file name part: letters, digits, '-' and '_'. Anything else
// replaced, or a long text cut, is followed by a hash of the whole text, so
// two names never share a part ("cmd:sh w.sh" and "cmd:sh w_sh" did).
std::string safe_file_part(const std::string& text) {
  std::string part = text.size() > 48 ? text.substr(0, 32) : text;
  for (char& c : part) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') c = '_';
  }
  if (part == text) return part;
  return part + "-" + content_name(std::span(reinterpret_cast<const std::uint8_t*>(text.data()), text.size())).substr(0, 8);
}

// Six hex digits drawn once per process: reports of runs side by side never share a name.
const std::string& run_token() {
  static const std::string token = [] {
    std::ostringstream os;
    os << std::hex << (std::random_device{}() & 0xffffffu);
    return os.str();
  }();
  return token;
}

// `text` after `label`, each of its lines behind "| " and made printable.
std::string quoted(const std::string& label, const std::string& text) {
  std::string out;
  const std::string pad(label.size(), ' ');
  const std::string lines = printable_lines(text);
  std::size_t start = 0;
  for (bool first = true; start < lines.size() || first; first = false) {
    std::size_t end = lines.find('\n', start);
    if (end == std::string::npos) end = lines.size();
    out += (first ? label : pad) + "| " + lines.substr(start, end - start) + "\n";
    start = end + 1;
  }
  return out;
}

// Outputs larger than this are summarised in reports: a workload near 2^31
// tokens can have tens of millions of chunks (gigabytes of JSON), which no
// one reads; the first divergence names the place, and replaying the
// workload prints everything.
constexpr std::size_t kShownEntries = 100000;
constexpr std::size_t kKeptEntries = 1000000;  // in a corpus entry's "expected"

std::size_t entries(const Spec& spec, const Outcome& outcome) { return outcome.ok() ? spec.entries(outcome.value()) : 0; }

std::string omitted(const Spec& spec, const Outcome& outcome) {
  std::ostringstream text;
  text << "(";
  const auto outputs = spec.outputs();
  for (std::size_t a = 0; a < outputs.size() && a < outcome.value().size(); ++a)
    text << (a ? ", " : "") << outputs[a].name << ": " << outcome.value()[a].size() / outputs[a].columns
         << (outputs[a].columns > 1 ? " rows" : " entries");
  text << ": too large to show; replay the workload to print it)";
  return text.str();
}


// Terminal text for long arrays: a 32,769-row workload is one screenful, not
// 200. Runs of an equal value print as "v (N times)", arithmetic progressions
// as "a, b, ..., z"; arrays up to kWholeArray entries print as plain JSON, and
// the report file always has the full JSON.
constexpr std::size_t kWholeArray = 64;
constexpr std::size_t kShortestRun = 4;

void append_shortened(std::string& out, const Json& array) {
  const std::size_t n = array.size();
  std::size_t i = 0;
  while (i < n) {
    if (i > 0) out += ", ";
    std::size_t same = 1;
    while (i + same < n && array[i + same] == array[i]) ++same;
    if (same >= kShortestRun) {
      out += array[i].dump() + " (" + std::to_string(same) + " times)";
      i += same;
      continue;
    }
    std::size_t steps = 1;  // terms of the progression starting at i
    if (i + 1 < n && array[i].is_number_integer() && array[i + 1].is_number_integer()) {
      const auto step = array[i + 1].get<std::int64_t>() - array[i].get<std::int64_t>();
      steps = 2;
      while (i + steps < n && array[i + steps].get<std::int64_t>() - array[i + steps - 1].get<std::int64_t>() == step) ++steps;
    }
    if (steps >= kShortestRun) {
      out += array[i].dump() + ", " + array[i + 1].dump() + ", ..., " + array[i + steps - 1].dump();
      i += steps;
    } else {
      out += array[i].dump();
      ++i;
    }
  }
}

// Like Json::dump(), with long arrays shortened; `shortened` is set if one was.
void append_text(std::string& out, const Json& j, bool& shortened) {
  if (j.is_object()) {
    out += '{';
    bool first = true;
    for (const auto& [key, value] : j.items()) {
      if (!first) out += ',';
      first = false;
      out += Json(key).dump() + ':';
      append_text(out, value, shortened);
    }
    out += '}';
  } else if (j.is_array() && j.size() > kWholeArray) {
    shortened = true;
    out += '[';
    append_shortened(out, j);
    out += ']';
  } else {
    out += j.dump();
  }
}

std::string text_of(const Json& j, bool& shortened) {
  std::string out;
  append_text(out, j, shortened);
  return out;
}

std::string outcome_text(const Spec& spec, const Outcome& outcome, bool& shortened) {
  return entries(spec, outcome) <= kShownEntries ? text_of(to_json(spec, outcome), shortened) : omitted(spec, outcome);
}

}  // namespace

std::string shell_quote(const std::string& text) {
  const bool plain = !text.empty() && text.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:#") == std::string::npos;
  if (plain) return text;
  std::string quoted = "'";
  for (char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::string content_name(std::span<const std::uint8_t> bytes) {
  std::uint64_t hash = 14695981039346656037ULL;
  for (unsigned char byte : bytes) {
    hash ^= byte;
    hash *= 1099511628211ULL;
  }
  std::ostringstream os;
  os << std::hex;
  os.width(16);
  os.fill('0');
  os << hash;
  return os.str();
}

std::string content_name(const Spec& spec, const Workload& workload) {
  const std::string text = to_json(spec, workload).dump();
  return content_name(std::span(reinterpret_cast<const std::uint8_t*>(text.data()), text.size()));
}

Json corpus_entry(const Spec& spec, const Workload& workload, const std::string& origin) {
  Json j = Json::object();
  j["format"] = "chunkmeta-corpus/1";
  j["origin"] = origin;
  j["workload"] = to_json(spec, workload);
  const Outcome expected = spec.reference(workload);
  // A reference output of millions of entries would be hundreds of megabytes
  // of JSON; such an entry still replays (against today's reference).
  if (entries(spec, expected) <= kKeptEntries) {
    j["expected"] = to_json(spec, expected);
  } else {
    j["expected_omitted"] = omitted(spec, expected);
  }
  return j;
}

namespace {
std::string& program_path() {
  static std::string path = "chunkmeta";
  return path;
}
}  // namespace

void set_program(std::string path) { program_path() = std::move(path); }
const std::string& program() { return program_path(); }

std::string replay_command(const Spec& spec, const std::string& implementation, const std::filesystem::path& file) {
  // A Python function has no name the CLI resolves: its replay is chunkmeta.replay(), which check() prints.
  if (implementation.rfind("python:", 0) == 0) return "";
  const std::string named = &spec == &default_spec() ? "" : " --spec " + std::string(spec.name());
  return shell_quote(program()) + " replay" + named + " --impl " + shell_quote(implementation) + " " +
         shell_quote(file.string());
}

Json outcome_for_report(const Spec& spec, const Outcome& outcome) {
  if (entries(spec, outcome) <= kShownEntries) return to_json(spec, outcome);
  return Json{{"omitted", omitted(spec, outcome)}};
}

Json to_json(const Counterexample& cx, const std::optional<WrittenFiles>& files) {
  const Spec& spec = *cx.spec;
  Json j = Json::object();
  j["format"] = "chunkmeta-report/1";
  j["spec"] = spec.name();
  j["implementation"] = cx.implementation;
  j["property"] = cx.property;
  j["finding"] = to_string(cx.finding.kind);
  j["summary"] = cx.finding.summary;
  j["workload"] = to_json(spec, cx.workload);
  j["rows"] = cx.workload.rows();
  if (!cx.status.empty()) j["status"] = cx.status;
  if (!cx.duplicate_of.empty()) j["duplicate_of"] = cx.duplicate_of;
  if (cx.finding.expected) j["expected"] = outcome_for_report(spec, *cx.finding.expected);
  if (cx.finding.actual) j["actual"] = outcome_for_report(spec, *cx.finding.actual);
  j["first_divergence"] = cx.finding.divergence ? divergence_json(*cx.finding.divergence) : Json(nullptr);
  j["invariant"] = cx.finding.invariant ? invariant_json(*cx.finding.invariant) : Json(nullptr);
  if (cx.finding.states_judged) j["kernels_view"] = kernels_view_json(cx.finding.state_fault);
  if (!cx.finding.detail.empty()) j["detail"] = cx.finding.detail;
  if (!cx.related.empty()) {
    Json related = Json::array();
    for (const auto& r : cx.related) {
      const Spec& of = r.spec != nullptr ? *r.spec : spec;
      Json item = Json::object();
      item["role"] = r.role;
      item["workload"] = to_json(of, r.workload);
      if (r.actual) item["actual"] = outcome_for_report(of, *r.actual);
      related.push_back(std::move(item));
    }
    j["related"] = std::move(related);
  }
  Json run = Json::object();
  run["seed"] = cx.seed ? Json(*cx.seed) : Json(nullptr);
  run["reproduce"] = cx.reproduce;
  run["cases_before_failure"] = cx.cases_before_failure;
  run["rerun"] = cx.rerun_command;
  j["run"] = std::move(run);
  if (files) {
    j["corpus_entry"] = files->corpus_entry.string();
    if (auto replay = replay_command(spec, cx.implementation, files->corpus_entry); !replay.empty()) j["replay"] = replay;
  }
  return j;
}

std::string render(const Counterexample& cx, const std::optional<WrittenFiles>& files) {
  const Spec& spec = *cx.spec;
  bool shortened = false;
  std::ostringstream os;
  os << "COUNTEREXAMPLE  implementation " << printable_line(cx.implementation) << ", property " << cx.property;
  if (&spec != &default_spec()) os << ", spec " << spec.name();
  os << "\n"
     << "  finding:   " << to_string(cx.finding.kind) << ": " << cx.finding.summary << "\n"
     << "  workload:  " << text_of(to_json(spec, cx.workload), shortened) << "\n";
  if (!cx.status.empty()) os << "  status:    " << cx.status << " (" << spec.units(cx.workload) << ")\n";
  if (!cx.duplicate_of.empty()) os << "  the same bug as property " << cx.duplicate_of << " reports\n";
  for (const auto& r : cx.related) {
    const Spec& of = r.spec != nullptr ? *r.spec : spec;
    os << "  " << r.role << ": " << text_of(to_json(of, r.workload), shortened) << "\n";
    if (r.actual) os << "    its output: " << outcome_text(of, *r.actual, shortened) << "\n";
  }
  if (cx.finding.expected) os << "  expected:  " << outcome_text(spec, *cx.finding.expected, shortened) << "\n";
  if (cx.finding.actual) {
    os << "  actual:    " << outcome_text(spec, *cx.finding.actual, shortened) << "\n";
  } else if (cx.finding.kind == FindingKind::changed_input) {
    os << "  actual:    (not judged: it changed its input during the call)\n";
  } else if (is_misbehaviour(cx.finding.kind)) {
    os << "  actual:    (no answer)\n";
  }
  if (shortened) {
    os << "  (arrays over " << kWholeArray << " entries shortened above: \"v (N times)\" is a run of v, "
       << "\"a, b, ..., z\" counts from a to z in steps of b-a; the report file has them whole)\n";
  }
  if (cx.finding.divergence) os << "  first divergence: " << *cx.finding.divergence << "\n";
  if (cx.finding.invariant) os << "  " << *cx.finding.invariant << "\n";
  if (cx.finding.state_fault) {
    os << "  kernels' view: " << kernel_view::to_string(*cx.finding.state_fault) << "\n";
  } else if (cx.finding.states_judged) {
    os << "  kernels' view: every state a kernel or the cache computes from the actual output is the one it claims\n";
  }
  // The implementation's own evidence, quoted line by line: none of it can pass for a line of the harness's.
  if (!cx.finding.detail.empty()) os << quoted("  detail:    ", cx.finding.detail);
  if (cx.finding.kind == FindingKind::accepted_invalid) {
    // The contract of an engine function: its callers validate; say how to check it so.
    os << "  note:      an engine function whose callers validate its input is checked with valid workloads\n"
       << "             only: --valid-only (chunkmeta check), valid_only=True (chunkmeta.check); a plugin\n"
       << "             says it by leaving out CHUNKMETA_REJECTS_INVALID_INPUT\n";
  }
  if (cx.seed) os << "  seed:      " << *cx.seed << " (after " << cx.cases_before_failure << " passing cases)\n";
  if (!cx.reproduce.empty()) os << "  reproduce: " << cx.reproduce << "\n";
  if (!cx.rerun_command.empty()) os << "  rerun:     " << cx.rerun_command << "\n";
  if (files) {
    os << "  report:    " << files->report.string() << "\n"
       << "  corpus:    " << files->corpus_entry.string() << "  (copy into corpus/regressions/ to keep it)\n";
    if (auto replay = replay_command(spec, cx.implementation, files->corpus_entry); !replay.empty())
      os << "  replay:    " << replay << "\n";
  }
  return os.str();
}

void abort_on_failure(const std::vector<Counterexample>& failures, std::span<const std::uint8_t> input,
                      std::string_view target) {
  if (failures.empty()) return;
  for (const auto& cx : failures) std::fprintf(stderr, "%s", render(cx).c_str());
  std::fprintf(stderr, "input (%zu bytes):", input.size());
  for (auto byte : input) std::fprintf(stderr, " %02x", byte);
  const char* plugin = std::getenv("CHUNKMETA_FUZZ_PLUGIN");
  const std::string impl = plugin != nullptr && *plugin != '\0' ? " --impl " + shell_quote(std::string("plugin:") + plugin) : "";
  std::fprintf(stderr, "\nShrink it to a report: chunkmeta fuzz-shrink --target %.*s%s <crash file>\n",
               static_cast<int>(target.size()), target.data(), impl.c_str());
  std::abort();
}

bool write_file_atomically(const std::filesystem::path& path, std::string_view content, std::string* error) {
  const auto fail = [&](const std::string& what, int fd, const std::string& temporary) {
    const std::string why = std::strerror(errno);
    if (fd >= 0) close(fd);
    if (!temporary.empty()) unlink(temporary.c_str());
    if (error) *error = "cannot write " + path.string() + ": " + what + ": " + why;
    return false;
  };
  std::string temporary = path.string() + ".tmp-XXXXXX";
  const int fd = mkostemp(temporary.data(), O_CLOEXEC);  // a new file: never another's, never through a link
  if (fd < 0) return fail("cannot create a temporary file beside it", -1, "");
  for (std::size_t written = 0; written < content.size();) {
    const ssize_t wrote = ::write(fd, content.data() + written, content.size() - written);
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote <= 0) return fail("writing", fd, temporary);
    written += static_cast<std::size_t>(wrote);
  }
  if (fchmod(fd, 0644) != 0) return fail("setting its mode", fd, temporary);
  if (close(fd) != 0) return fail("closing", -1, temporary);
  // rename replaces whatever is at `path` (a planted symlink included) without following it.
  if (rename(temporary.c_str(), path.c_str()) != 0) return fail("renaming the temporary file", -1, temporary);
  return true;
}

std::filesystem::path default_report_dir() {
  if (const char* dir = std::getenv("CHUNKMETA_REPORT_DIR"); dir != nullptr && *dir != '\0') return dir;
  return std::filesystem::current_path() / "chunkmeta-reports";
}

std::optional<WrittenFiles> write_counterexample(const Counterexample& cx, const std::filesystem::path& dir,
                                                 std::string* error, bool with_corpus_entry) {
  const std::string name = content_name(*cx.spec, cx.workload);
  WrittenFiles files{dir / (safe_file_part(cx.implementation) + "-" + safe_file_part(cx.property) + "-" + name + "-" +
                            run_token() + ".report.json"),
                     dir / "corpus" / (name + ".json")};
  std::error_code ec;
  std::filesystem::create_directories(files.corpus_entry.parent_path(), ec);
  if (ec) {
    if (error) *error = "cannot create " + files.corpus_entry.parent_path().string() + ": " + ec.message();
    return std::nullopt;
  }
  const auto write = [&](const std::filesystem::path& path, const Json& content) {
    return write_file_atomically(path, content.dump(2, ' ', false, Json::error_handler_t::replace) + "\n", error);
  };
  const std::string origin = "property " + cx.property + " failed on implementation " + cx.implementation +
                             (cx.seed ? " (seed " + std::to_string(*cx.seed) + ")" : std::string());
  if (!with_corpus_entry) {
    files.corpus_entry.clear();
    return write(files.report, to_json(cx)) ? std::optional(files) : std::nullopt;
  }
  if (!write(files.corpus_entry, corpus_entry(*cx.spec, cx.workload, origin))) return std::nullopt;
  if (!write(files.report, to_json(cx, files))) return std::nullopt;
  return files;
}

std::optional<WrittenFiles> ReportSlot::write(const Counterexample& counterexample, std::string* error, bool final) {
  const std::optional<WrittenFiles> previous = files_;
  files_ = write_counterexample(counterexample, dir_, error, final);
  if (files_ && previous && previous->report != files_->report) {
    std::error_code ignored;
    std::filesystem::remove(previous->report, ignored);
  }
  return files_;
}

void ReportSlot::withdraw() {
  if (!files_) return;
  std::error_code ignored;
  std::filesystem::remove(files_->report, ignored);  // only the final write adds a corpus entry
  files_.reset();
}

}  // namespace chunkmeta::harness
