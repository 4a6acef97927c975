#include "chunkmeta/harness/printable.hpp"

#include <cstdint>
#include <cstdio>

namespace chunkmeta::harness {

namespace {

// Length of the valid UTF-8 sequence at the start of `text` (0: not one),
// and its code point.
std::size_t utf8_sequence(std::string_view text, std::uint32_t& code_point) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(0);
  std::size_t length = 0;
  std::uint32_t min = 0;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2, code_point = lead & 0x1Fu, min = 0x80;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3, code_point = lead & 0x0Fu, min = 0x800;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4, code_point = lead & 0x07u, min = 0x10000;
  } else {
    return 0;
  }
  if (text.size() < length) return 0;
  for (std::size_t i = 1; i < length; ++i) {
    if ((byte(i) & 0xC0u) != 0x80u) return 0;
    code_point = (code_point << 6) | (byte(i) & 0x3Fu);
  }
  if (code_point < min || code_point > 0x10FFFF || (code_point >= 0xD800 && code_point <= 0xDFFF)) return 0;
  return length;
}

std::string escaped(std::string_view text, bool keep_lines) {
  std::string out;
  out.reserve(text.size());
  char buf[12];
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7F) {
      out += static_cast<char>(c);
      ++i;
      continue;
    }
    if (c == '\n' || c == '\t') {
      if (keep_lines) {
        out += static_cast<char>(c);
      } else {
        out += c == '\n' ? "\\n" : "\\t";
      }
      ++i;
      continue;
    }
    if (c < 0x80) {  // the other C0 controls and DEL
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
      ++i;
      continue;
    }
    std::uint32_t code_point = 0;
    const std::size_t length = utf8_sequence(text.substr(i), code_point);
    if (length == 0) {
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
      ++i;
    } else if (code_point < 0xA0) {  // C1 controls (0x9B is a CSI of its own on some terminals)
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(code_point));
      out += buf;
      i += length;
    } else {
      out.append(text.substr(i, length));
      i += length;
    }
  }
  return out;
}

}  // namespace

std::string printable_line(std::string_view text) { return escaped(text, false); }

std::string printable_lines(std::string_view text) { return escaped(text, true); }

bool is_printable_line(std::string_view text) { return printable_line(text) == text; }

}  // namespace chunkmeta::harness
