// What an input of a compile is to it (record.hpp's RecordedInput), apart from the record so that
// the record's grammar (record_format.hpp) names the roles without including the record back.
#pragma once

namespace nvfresh {

enum class InputRole {
  source,        // the translation unit
  header,        // anything a pass read: headers, forced includes, libdevice, nvcc.profile, ...
  options_file,  // --options-file contents
  tool,          // an executable the compile ran: nvcc, cicc, ptxas, cudafe++, gcc, cc1plus, ...
  data,  // a file a program other than a C/C++ front end read (the assembler's .incbin): bytes
};

}  // namespace nvfresh
