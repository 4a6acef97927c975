// Text an implementation under test wrote (what it raised or printed, its
// name, an error code it made up) is printed only through these: control
// characters, terminal escapes and bytes that are not UTF-8 are shown as
// escapes, so no answer can clear the screen, ring the bell, or forge a line
// of the harness's own (a "VERIFIED" line inside a NOT VERIFIED run).
#pragma once

#include <string>
#include <string_view>

namespace chunkmeta::harness {

// `text` on one line: every control character (newlines too), DEL, a C1
// control and a byte that is not part of valid UTF-8 as \n, \t, \xNN or \u00NN.
std::string printable_line(std::string_view text);

// The same, keeping line breaks (and tabs): for evidence of several lines
// (a traceback, the end of stderr), printed by the report as a quoted block.
std::string printable_lines(std::string_view text);

// Whether `text` is already what printable_line gives (nothing to escape).
bool is_printable_line(std::string_view text);

}  // namespace chunkmeta::harness
