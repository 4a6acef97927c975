// Answer-stream target: whatever a child prints on its standard output, as
// the harness's decoder reads it (harness/answer_stream.hpp). Byte 0 picks the
// spec, byte 1 the batch's size (1-8) and byte 2 where the output is cut into
// reads; the rest is the output. The decoder must:
//   - never give a batch more answers than it has workloads, nor tell of one it did not give;
//   - decode the same answers, and end on the same misbehaviour, however the
//     bytes are cut into reads (a pipe gives them in any pieces): what comes
//     after the batch's last answer is left for the next batch to report.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "chunkmeta/harness/answer_stream.hpp"
#include "chunkmeta/harness/json.hpp"
#include "chunkmeta/harness/spec.hpp"

namespace {

using namespace chunkmeta::harness;

constexpr std::uint64_t kBase = 1000;  // the batch's first id

[[noreturn]] void fail(const char* why, std::string_view output) {
  std::fprintf(stderr, "answer_stream: %s\noutput (%zu bytes):", why, output.size());
  for (unsigned char byte : output) std::fprintf(stderr, " %02x", byte);
  std::fprintf(stderr, "\n");
  std::abort();
}

struct Decoded {
  std::vector<Answer> answers;
  std::optional<Misbehaviour> stop;
};

// The output read in pieces: each cut after `step` more bytes (the whole at once for step 0).
Decoded decode(const Spec& spec, std::string_view output, std::size_t batch, std::size_t step) {
  AnswerDecoder decoder(spec);
  decoder.begin_batch(kBase);
  Decoded decoded;
  std::size_t told = 0;
  const auto answered = [&](std::size_t index) {
    if (index != told++ && index + 1 != decoded.answers.size()) fail("told of an answer out of order", output);
    if (index >= decoded.answers.size()) fail("told of an answer it did not give", output);
  };
  std::size_t at = 0;
  while (at < output.size() && !decoded.stop && decoded.answers.size() < batch) {
    const std::size_t piece = step == 0 ? output.size() - at : std::min(step, output.size() - at);
    decoded.stop = decoder.take(output.substr(at, piece), batch, batch, decoded.answers, answered);
    if (decoded.answers.size() > batch) fail("gave a batch more answers than it has workloads", output);
    at += piece;
  }
  // As the door does once the batch is answered: what is already written is
  // read without decoding, and anything but blank lines is a misbehaviour.
  if (!decoded.stop) decoder.hold(output.substr(at));
  if (!decoded.stop && decoded.answers.size() == batch && decoder.holds_unasked_output())
    decoded.stop = Misbehaviour{FindingKind::malformed_output, "printed output after its last answer", ""};
  return decoded;
}

bool same(const Answer& a, const Answer& b) {
  if (a.index() != b.index()) return false;
  if (const auto* outcome = std::get_if<Outcome>(&a)) {
    const auto& other = std::get<Outcome>(b);
    if (outcome->ok() != other.ok()) return false;
    return outcome->ok() ? outcome->value() == other.value() : outcome->error().code == other.error().code;
  }
  const auto& m = std::get<Misbehaviour>(a);
  const auto& n = std::get<Misbehaviour>(b);
  return m.kind == n.kind && m.summary == n.summary;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 3) return 0;  // no spec, batch or cut byte
  const Spec& spec = *all_specs()[data[0] % all_specs().size()];
  const std::size_t batch = 1 + data[1] % 8;
  const std::size_t step = 1 + data[2] % 64;
  const std::string_view output(reinterpret_cast<const char*>(data + 3), size - 3);
  const Decoded whole = decode(spec, output, batch, 0);
  const Decoded pieces = decode(spec, output, batch, step);
  const std::size_t common = std::min(whole.answers.size(), pieces.answers.size());
  for (std::size_t i = 0; i < common; ++i) {
    if (!same(whole.answers[i], pieces.answers[i])) fail("decoded other answers when read in pieces", output);
  }
  if (whole.answers.size() != pieces.answers.size()) fail("decoded another number of answers when read in pieces", output);
  if (whole.stop.has_value() != pieces.stop.has_value() ||
      (whole.stop && (whole.stop->kind != pieces.stop->kind || whole.stop->summary != pieces.stop->summary)))
    fail("ended on another misbehaviour when read in pieces", output);
  return 0;
}
