// The answers of a program that speaks the protocol (`chunkmeta compute`'s
// JSON Lines, or int32le frames), decoded from its standard output as the
// bytes arrive. Pure: no process, no clock, no file, so a fuzz target feeds it
// whatever a child may print (fuzz/answer_stream.cpp). The subprocess door
// (subprocess.hpp) owns one per process and adds the process's evidence.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "chunkmeta/harness/implementation.hpp"

namespace chunkmeta::harness {

// Where the first answer in `buffer` ends: its line, and the payload after it
// if the line is an int32le header (json.hpp). The search for the newline
// starts at `from` (bytes before it hold none, or are the header itself).
struct Frame {
  std::size_t newline = std::string_view::npos;  // npos: no whole line yet
  std::size_t end = 0;                           // just past the answer; 0: not whole yet
  bool binary = false;
};
Frame first_frame(std::string_view buffer, std::size_t from = 0);

// `line`, cut to `limit` bytes with its whole length said.
std::string shortened_line(std::string_view line, std::size_t limit = 400);

class AnswerDecoder {
 public:
  explicit AnswerDecoder(const Spec& spec) : spec_(&spec) {}

  // A new process: nothing buffered, whether it echoes ids not yet known.
  void reset();
  // The next batch: its workloads carry ids from `base` on.
  void begin_batch(std::uint64_t base) { base_ = base; }

  // Bytes of its standard output. The whole answers buffered are appended to
  // `answers` (the batch's, in order; a workload whose answer was skipped gets
  // missing_output), each told to `answered` with its index, never more than
  // `sent` (the workloads sent so far) of a batch of `batch_size`; bytes after
  // the batch's last answer stay pending. Returns the misbehaviour that ends
  // the stream, if any: nothing after it is trusted.
  std::optional<Misbehaviour> take(std::string_view bytes, std::size_t sent, std::size_t batch_size,
                                   std::vector<Answer>& answers,
                                   const std::function<void(std::size_t)>& answered = nullptr);

  // Bytes kept without decoding (output read when no answer is due).
  void hold(std::string_view bytes) { inbuf_.append(bytes); }
  // The bytes buffered that end no answer yet.
  const std::string& pending() const { return inbuf_; }
  void clear_pending() {
    inbuf_.clear();
    scanned_ = 0;
  }
  // Whether anything but blank lines is buffered.
  bool holds_unasked_output() const;
  // Known not to echo ids (its answers are then read in order).
  bool ids_absent() const { return ids_ == Ids::absent; }

 private:
  std::optional<Misbehaviour> take_answer(std::string_view line, std::optional<std::string_view> payload,
                                          std::size_t sent, std::vector<Answer>& answers);

  const Spec* spec_;
  std::string inbuf_;         // bytes not yet split into answers
  std::size_t scanned_ = 0;   // of inbuf_, bytes known to end no answer yet
  std::uint64_t base_ = 0;
  enum class Ids { unknown, echoed, absent } ids_ = Ids::unknown;
};

}  // namespace chunkmeta::harness
