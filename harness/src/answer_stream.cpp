#include "chunkmeta/harness/answer_stream.hpp"

#include "chunkmeta/harness/json.hpp"

namespace chunkmeta::harness {
namespace {

// {"failure": {"kind", "summary", "detail"}}: the implementation could not
// answer (a Python exception, a plugin that broke the ABI behind a relay), or
// changed its input.
Misbehaviour failure_answer(const Json& failure) {
  const auto text = [&](const char* key) {
    return failure.is_object() && failure.contains(key) && failure[key].is_string() ? failure[key].get<std::string>()
                                                                                    : std::string();
  };
  // Any misbehaviour by its name (a program says which input it changed: changed_input); anything else, raised.
  const auto named = parse_finding_kind(text("kind"));
  Misbehaviour m{named && is_misbehaviour(*named) ? *named : FindingKind::raised, text("summary"), text("detail")};
  if (m.summary.empty()) m.summary = "could not answer: " + shortened_line(dump_line(failure));
  return m;
}

Misbehaviour malformed(std::string summary, std::string_view line) {
  return Misbehaviour{FindingKind::malformed_output, std::move(summary), "the line: " + shortened_line(line)};
}

}  // namespace

Frame first_frame(std::string_view buffer, std::size_t from) {
  Frame frame;
  frame.newline = buffer.find('\n', from);
  if (frame.newline == std::string_view::npos) return frame;
  std::size_t end = frame.newline + 1;
  if (const auto payload = int32le_payload_bytes(buffer.substr(0, frame.newline))) {
    if (buffer.size() - end < *payload) return frame;
    end += *payload;
    frame.binary = true;
  }
  frame.end = end;
  return frame;
}

std::string shortened_line(std::string_view line, std::size_t limit) {
  if (line.size() <= limit) return std::string(line);
  return std::string(line.substr(0, limit)) + "... (" + std::to_string(line.size()) + " bytes in all)";
}

void AnswerDecoder::reset() {
  clear_pending();
  ids_ = Ids::unknown;
}

bool AnswerDecoder::holds_unasked_output() const { return inbuf_.find_first_not_of(" \r\n") != std::string::npos; }

std::optional<Misbehaviour> AnswerDecoder::take(std::string_view bytes, std::size_t sent, std::size_t batch_size,
                                                std::vector<Answer>& answers,
                                                const std::function<void(std::size_t)>& answered) {
  inbuf_.append(bytes);
  std::size_t line_start = 0;
  std::optional<Misbehaviour> stop;
  // Up to the batch's last answer only: what follows it stays pending, for the
  // next batch to find (output_before in the door), however the reads cut it.
  while (!stop && answers.size() < batch_size) {
    const std::string_view rest = std::string_view(inbuf_).substr(line_start);
    const Frame frame = first_frame(rest, scanned_);
    if (frame.end == 0) {
      // Next time, search on from here: past bytes without a newline, or at a header awaiting its payload.
      scanned_ = frame.newline == std::string_view::npos ? rest.size() : frame.newline;
      break;
    }
    scanned_ = 0;
    const std::string_view line = rest.substr(0, frame.newline);
    std::optional<std::string_view> payload;
    if (frame.binary) payload = rest.substr(frame.newline + 1, frame.end - frame.newline - 1);
    line_start += frame.end;
    if (!frame.binary && (line.empty() || line == "\r")) continue;
    if (answers.size() >= sent) {
      stop = malformed("printed a line before it was sent a workload to answer", line);
      break;
    }
    stop = take_answer(line, payload, sent, answers);
    if (!stop && answered) answered(answers.size() - 1);
  }
  inbuf_.erase(0, line_start);
  return stop;
}

std::optional<Misbehaviour> AnswerDecoder::take_answer(std::string_view line, std::optional<std::string_view> payload,
                                                       std::size_t sent, std::vector<Answer>& answers) {
  bool has_id = false;
  std::optional<std::uint64_t> id;
  std::optional<Answer> answer;
  // The common answers, without a DOM.
  if (auto result = payload ? parse_int32le_answer(*spec_, line, *payload) : parse_result_line(*spec_, line)) {
    has_id = result->id.has_value();
    id = result->id;
    answer = Outcome(std::move(result->arrays));
  } else {
    auto parsed = parse_json_bounded(line);
    if (const auto* why = std::get_if<std::string>(&parsed)) return malformed("printed a line that is " + *why, line);
    const Json& value = std::get<Json>(parsed);
    if (!value.is_object()) return malformed("printed a line that is not a JSON object", line);
    has_id = value.contains("id");
    if (has_id && value["id"].is_number_unsigned()) id = value["id"].get<std::uint64_t>();
    if (value.contains("failure")) {
      answer = failure_answer(value["failure"]);
    } else if (auto outcome = parse_outcome(*spec_, value)) {
      answer = std::move(*outcome);
    } else {
      answer = malformed("printed an answer that is neither a result nor an error of the protocol", line);
    }
  }
  // Ids: echoed answers are matched exactly; a program that does not echo is read in order.
  const std::size_t expected = answers.size();
  if (ids_ == Ids::unknown) ids_ = has_id ? Ids::echoed : Ids::absent;
  if (ids_ == Ids::echoed) {
    if (!id) return malformed("printed an answer without the id of its workload", line);
    if (*id < base_ + expected || *id >= base_ + sent) {
      return malformed("printed an answer for id " + std::to_string(*id) + " while the answer for id " +
                           std::to_string(base_ + expected) + " was due (an extra or repeated line)",
                       line);
    }
    const auto index = static_cast<std::size_t>(*id - base_);
    for (std::size_t skipped = expected; skipped < index; ++skipped) {
      answers.push_back(Misbehaviour{FindingKind::missing_output,
                                     "gave no answer for this workload: the answer to the next one (id " +
                                         std::to_string(*id) + ") came instead of id " + std::to_string(base_ + skipped),
                                     ""});
    }
  }
  answers.push_back(std::move(*answer));
  return std::nullopt;
}

}  // namespace chunkmeta::harness
