#include "util/string_hash.hpp"

#include <xxhash.h>

namespace nvfresh {

std::size_t StringHash::operator()(std::string_view text) const
{
  return static_cast<std::size_t>(XXH3_64bits(text.data(), text.size()));
}

}  // namespace nvfresh
