// `chunkmeta specs`: the specs this build knows, as people read them or (--json)
// as programs do (the Python adapter's calling convention comes from it).
#pragma once

namespace chunkmeta::cli {

int list_specs(bool as_json);

}  // namespace chunkmeta::cli
