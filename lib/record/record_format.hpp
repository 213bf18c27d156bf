// Record file format, version 7, read by record_parse.cpp and written by record_write.cpp (the history is at the end of this comment).
//
// A UTF-8/byte text file of lines separated by '\n'. Every line is fields separated by '\t';
// the first field is the key. Inside a field, '\\' is written "\\\\", TAB "\\t", LF "\\n" and
// CR "\\r"; nothing else is escaped. Grammar (one line per row; * = zero or more, ? = optional):
//
//   record    := header body checksum
//   header    := "nvfresh-record" TAB version                       version = "7" (1 to 7 read)
//   body      := object source cwd compiler launcher* arg* env* signature version_text
//                inputs_from input* (probes | missing)* probe_dir* output component* cache_entry? depfile? dep*
//                times pass_time* trusted mtime_dependent? console terminals? history*
//   object    := "object" TAB path                                   absolute path of the output
//   source    := "source" TAB path
//   cwd       := "cwd" TAB path
//   compiler  := "compiler" TAB path
//   launcher  := "launcher" TAB word                                 a launcher before nvcc
//   arg       := "arg" TAB word                                      a normalized argument
//   env       := "env" TAB name TAB value
//   signature := "signature" TAB hex32                               XXH3-128, lower-case hex
//   version_text := "nvcc_version" TAB text
//   inputs_from := "inputs_from" TAB ("trace" | "depfile")
//   input     := "input" TAB role TAB hex32 TAB size TAB mtime_ns TAB ctime_ns TAB inode TAB
//                passes TAB path                 role = source|header|options_file|tool|data
//                                                (data: read by a program that is no C/C++
//                                                front end, such as the assembler's .incbin);
//                                                passes = "-" or comma-separated pass names
//   probes    := "probes" TAB dir TAB absent_under TAB name (TAB name)*
//                                                lookups that found nothing, dir + "/" + name
//                                                (dir "": each name a whole path); absent_under:
//                                                "" or an ancestor whose stamp proves dir absent
//   missing   := "missing" TAB path              one such lookup (read, never written: the
//                                                records before probes lines; grouped on reading)
//   probe_dir := "probe_dir" TAB inode TAB device TAB mtime_ns TAB ctime_ns TAB path
//                                                a directory whose unchanged stat proves that the
//                                                probes in it still find nothing
//   output    := "output" TAB hex32 TAB size TAB mtime_ns TAB ctime_ns TAB inode TAB path
//   component := "component" TAB name TAB hex32   a normalized digest of one part of the output
//   cache_entry := "cache_entry" TAB hex32          the object cache's entry holding the output's
//                                                bytes (stored from it, or served as it)
//   depfile   := "depfile" TAB ("0"|"1") TAB path TAB target         "1": phony rules (-MP)
//   dep       := "dep" TAB path                     a prerequisite as written to the depfile
//   times     := "times" TAB start_ns TAB end_ns
//   pass_time := "pass_time" TAB kind TAB pass TAB start_ns TAB end_ns TAB ("0"|"1")
//                                                one program of the compile (pass_times.hpp): ns
//                                                after nvcc started; "1": served by the step cache
//   trusted   := "trusted" TAB ("1"|"0") TAB reason
//   mtime_dependent := "mtime_dependent" TAB reason  why the output depends on the inputs' mtimes
//                                                ("/src/k.cu uses __TIMESTAMP__"): a touched input
//                                                makes the object stale (absent: it does not)
//   console   := "console" TAB ("none"|"combined"|"separate") TAB stdout TAB stderr
//                                                what the compile printed (bytes, escaped)
//   terminals := "console_terminals" TAB ("stdout"|"stderr"|"stdout,stderr")
//                                                the streams that were terminals (absent: none)
//                terminal_env*
//   terminal_env := "console_terminal_env" TAB name TAB value
//                                                TERM, COLUMNS, GCC_COLORS, ... as they were then
//   history   := "history" TAB time_ns TAB event TAB reason          oldest first, at most 16
//   checksum  := "checksum" TAB hex32 LF                             XXH3-128 of every byte
//                                                                    before this line
//
// A record file holds this text as zstd: one frame, or for a big text (128 KB and more) up to four,
// cut at line ends, that a reader decompresses on as many threads (`zstd -dc` gives the text whole
// either way). They come after a head (a zstd skippable frame, stored as it is;
// record_container.hpp) that names the object again, so that a record torn after its first
// bytes still says which object it described:
//
//   head      := "nvfresh-record-head" TAB "1" LF "object" TAB path LF "source" TAB path LF
//                "checksum" TAB hex32 LF              XXH3-128 of every byte before this line
//
// Readers check the header, the version and the checksum first: a record that fails any of them
// is "unreadable", which every caller treats as "stale", never as an error. Lines after the
// checksum line are not allowed (a torn or appended file is unreadable).
//
// The text frames are followed by the record's image (record_image.hpp: the same record in binary,
// in a skippable frame), which readers use in place of the text while it is intact and made with
// these frames.
//
// A note (a skippable frame after the compressed text and the image; record_container.hpp) holds what later
// skips changed, and applies only to the text whose checksum it names:
//
//   note      := "nvfresh-record-note" TAB "1" LF "base" TAB hex32 LF output history*
//                "checksum" TAB hex32 LF              XXH3-128 of every byte before this line
//
// Version history. A reader accepts every version from 1 to its own: what later versions added is
// optional. A reader meets a newer version as "format version N, expected 1 to M": unreadable, so
// the object is stale and compiles once; it never misreads a newer record.
//   version  change                                      what a reader of the version before did
//   1        first format                                -
//   2        probe_dir lines                             (still wrote 1) unknown line: stale
//   3        probes lines in place of missing lines      (still wrote 1) unknown line: stale
//   4        a big text in up to four zstd frames        (still wrote 1) read the first frame
//                                                        only: no checksum line, stale
//   5        the binary image after the text frames      (still wrote 1) skipped it as zstd does,
//            (record_image.hpp); the version is raised   found no note: the object read as
//            from here on with each such change          modified, stale
//   6        pass_time lines (when each program ran)     version 6 unknown: stale
//   7        the mtime_dependent line; the data role     version 7 unknown: stale
// The head, the note and the image carry versions of their own.
//
// (Shared by the writer and the parser only; the rest of nvfresh goes through record.hpp.)
#pragma once

#include "record/input_role.hpp"

#include <string_view>

namespace nvfresh::record_format {

inline constexpr std::string_view k_magic = "nvfresh-record";
inline constexpr std::string_view k_head_magic = "nvfresh-record-head";
inline constexpr std::string_view k_note_magic = "nvfresh-record-note";

struct InputRoleName {
  InputRole role;
  std::string_view name;
};

inline constexpr InputRoleName k_role_names[] = {
  {InputRole::source, "source"},
  {InputRole::header, "header"},
  {InputRole::options_file, "options_file"},
  {InputRole::tool, "tool"},
  {InputRole::data, "data"},
};

}  // namespace nvfresh::record_format
