// `chunkmeta compute`: the JSON Lines protocol's server side. One JSON line
// out per line in, each answered by the implementation --impl names for the
// line's spec; the process a cmd: implementation under test is, and the child
// an isolated plugin runs in.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <string>
#include <variant>

#include "chunkmeta/harness/json.hpp"
#include "cli.hpp"

namespace chunkmeta::cli {
namespace {

// The protocol's own stream: a duplicate of the descriptor standard output
// was, written with write(2). Descriptor 1 itself then goes to stderr, so what
// an implementation prints (a plugin's printf, a library's log line) never
// lands between two answers (the adapter does the same for Python functions).
class ProtocolOut : public std::streambuf {
 public:
  explicit ProtocolOut(int fd) : fd_(fd) { setp(buffer_, buffer_ + sizeof buffer_); }

 protected:
  int_type overflow(int_type ch) override {
    if (sync() != 0) return traits_type::eof();
    if (!traits_type::eq_int_type(ch, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(ch);
      pbump(1);
    }
    return traits_type::not_eof(ch);
  }
  int sync() override {
    for (const char* at = pbase(); at < pptr();) {
      const ssize_t wrote = ::write(fd_, at, static_cast<std::size_t>(pptr() - at));
      if (wrote < 0 && errno == EINTR) continue;
      if (wrote <= 0) return -1;
      at += wrote;
    }
    setp(buffer_, buffer_ + sizeof buffer_);
    return 0;
  }

 private:
  int fd_;
  char buffer_[1 << 16];
};

// Sends std::cout to a duplicate of descriptor 1 and descriptor 1 to stderr;
// false (nothing changed) when the descriptors cannot be duplicated.
bool protocol_on_its_own_descriptor() {
  const int protocol = ::fcntl(1, F_DUPFD_CLOEXEC, 3);
  if (protocol < 0) return false;
  if (::dup2(2, 1) < 0) {
    ::close(protocol);
    return false;
  }
  static ProtocolOut out(protocol);  // for the life of the process, as std::cout's own buffer was
  std::cout.rdbuf(&out);
  return true;
}

// Flushes standard output; false, having said why on stderr, once it cannot
// be written (a full disk, a closed pipe): answers are never dropped quietly.
bool flushed() {
  errno = 0;
  if (std::cout.flush()) return true;
  std::cerr << "chunkmeta: cannot write the answers to standard output"
            << (errno != 0 ? std::string(": ") + std::strerror(errno) : std::string()) << "; stopping\n";
  return false;
}

// One JSON line out per line in, echoing each line's "id"; flushes whenever no
// more input is buffered, so a process driving it line by line never waits on
// our buffer. Each line's spec (the registry's default without "spec") picks the
// implementation --impl names for that spec.
int compute(const std::string& impl_text, const harness::ResolveOptions& options, std::int64_t max_chunks) {
  // Own buffers for cin/cout (nothing here uses C stdio), so in_avail() sees
  // buffered input and a stream of lines is not flushed one line at a time.
  std::ios::sync_with_stdio(false);
  protocol_on_its_own_descriptor();  // if it cannot be, the answers still go to stdout
  std::map<const Spec*, std::variant<Implementation, std::string>> resolved;
  const auto implementation_for = [&](const Spec& spec) -> const std::variant<Implementation, std::string>& {
    auto it = resolved.find(&spec);
    if (it != resolved.end()) return it->second;
    auto found = harness::resolve_implementations(spec, impl_text, options);
    std::variant<Implementation, std::string> one = std::string();
    if (auto* why = std::get_if<std::string>(&found)) {
      one = *why;
    } else if (auto& all = std::get<std::vector<Implementation>>(found); all.size() != 1) {
      one = impl_text + " has " + std::to_string(all.size()) + " implementations of " + std::string(spec.name()) +
            " (name one with plugin:PATH#NAME)";
    } else {
      one = std::move(all.front());
    }
    return resolved.emplace(&spec, std::move(one)).first->second;
  };
  bool all_ok = true;
  std::string line;
  const Limits limits{max_chunks};
  const bool lowered_cap = max_chunks < Limits::kDefaultMaxChunks;
  // Results as int32 bytes when the harness that started us offers it (harness/json.hpp).
  const char* encoding = std::getenv(harness::kAnswerEncodingVariable);
  const bool int32le = encoding != nullptr && std::string_view(encoding) == harness::kInt32le;
  while (std::getline(std::cin, line)) {
    auto request = harness::parse_request_line(line);
    harness::Json body;
    if (auto* bad = std::get_if<harness::InputError>(&request.workload)) {
      body = harness::error_json(*bad);
    } else if (const auto* why = std::get_if<std::string>(&implementation_for(*request.spec))) {
      body = harness::error_json(harness::InputError{"unsupported_spec", "spec", Error::kNoIndex, *why});
    } else {
      const Spec& spec = *request.spec;
      const auto& impl = std::get<Implementation>(implementation_for(spec));
      const auto& workload = std::get<Workload>(request.workload);
      // A lowered cap is a resource limit of this process, applied before the
      // implementation; every other rule is the implementation's to apply, so
      // that an implementation under test sees invalid input as it is.
      const auto refused = lowered_cap ? spec.validate(workload, limits) : std::nullopt;
      if (refused && refused->code == ErrorCode::output_too_large) {
        body = harness::error_json(*refused);
      } else {
        const auto answer = impl.compute(workload);
        const auto* outcome = std::get_if<harness::Outcome>(&answer);
        if (outcome != nullptr && outcome->ok()) {
          // The common answer, written without a DOM.
          if (int32le) {
            std::cout << harness::int32le_answer(request.id, outcome->value());
          } else {
            std::cout << harness::result_line(request.id, spec, outcome->value()) << '\n';
          }
          if (std::cin.rdbuf()->in_avail() <= 0 && !flushed()) return kExitFailure;
          continue;
        }
        body = outcome != nullptr ? harness::to_json(spec, *outcome)
                                  : harness::failure_json(std::get<harness::Misbehaviour>(answer));
      }
    }
    all_ok = all_ok && !body.contains("error") && !body.contains("failure");
    std::cout << harness::dump_line(harness::answer_json(request.id, body)) << '\n';
    if (std::cin.rdbuf()->in_avail() <= 0 && !flushed()) return kExitFailure;
  }
  if (!flushed()) return kExitFailure;
  return all_ok ? kExitOk : kExitFailure;
}

struct ComputeOptions {
  std::string impl = "fast";
  std::string spec;
  std::int64_t max_chunks = Limits::kDefaultMaxChunks;
};

}  // namespace

Command add_compute_command(CLI::App& app, const harness::ResolveOptions& resolve) {
  auto chosen = std::make_shared<ComputeOptions>();
  auto* cmd = app.add_subcommand(
      "compute", "Read workloads as JSON Lines on stdin, write one JSON line per input line on stdout, echoing "
                 "each line's \"id\"; a line's \"spec\" (" + std::string(harness::default_spec().name()) +
                     " when it has none) picks the computation. Exit 0 if every line succeeded, 1 if some line was "
                     "an error, 2 on a usage error.");
  cmd->add_option("--impl", chosen->impl, implementation_help())->capture_default_str();
  cmd->add_option("--spec", chosen->spec, "Accepted for symmetry with check; each line names its own spec");
  // Only lowers the cap: the implementations themselves run with the library's default limits.
  cmd->add_option("--max-chunks", chosen->max_chunks, "Refuse workloads needing more chunks (output_too_large); at most the default")
      ->capture_default_str()
      ->check(CLI::Range(std::int64_t{0}, Limits::kDefaultMaxChunks));
  return {cmd, [chosen, resolve] {
            if (!chosen->spec.empty() && spec_named(chosen->spec) == nullptr) return kExitUsage;
            // Inside `compute` a plugin runs in this process: this process is the isolation.
            harness::ResolveOptions here = resolve;
            here.plugins_in_process = true;
            // A name that resolves for no spec at all is a usage error now, not an error line per request.
            bool resolvable = false;
            std::string why;
            for (const Spec* spec : harness::all_specs()) {
              auto found = harness::resolve_implementations(*spec, chosen->impl, here);
              if (auto* not_found = std::get_if<std::string>(&found)) {
                if (why.empty()) why = *not_found;
              } else {
                resolvable = true;
              }
            }
            if (!resolvable) {
              std::cerr << "chunkmeta: " << why << "\n";
              return kExitUsage;
            }
            return compute(chosen->impl, here, chosen->max_chunks);
          }};
}

}  // namespace chunkmeta::cli
