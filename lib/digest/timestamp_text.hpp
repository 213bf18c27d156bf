// Times as the preprocessor spells them into an object: `__TIMESTAMP__` gives a file's mtime as
// "Sun Dec  6 03:13:55 2026" (asctime's form, local time). A compile is marked mtime-dependent when
// a source or header spells `__TIMESTAMP__` (compile/recording.cpp); one that builds the name by
// token pasting (`CAT(__TIME, STAMP__)`) spells nothing findable, but its object still holds the
// text: searching the object for each input's mtime in that form finds it whatever the spelling.
// Pure text work.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_set>

namespace nvfresh {

// `mtime_ns` as __TIMESTAMP__ spells it, in the local time zone: 24 characters.
std::string timestamp_text(std::int64_t mtime_ns);

// The first of `texts` (timestamp_text's) that `bytes` holds; "" when none does.
std::string_view find_timestamp_text(std::string_view bytes,
                                     const std::unordered_set<std::string>& texts);

}  // namespace nvfresh
