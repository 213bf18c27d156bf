#include "record/record_image.hpp"

#include "util/string_hash.hpp"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

namespace nvfresh {

namespace {

static_assert(std::endian::native == std::endian::little, "images are written little-endian");

constexpr std::string_view k_image_magic = "nvfresh-record-image";
constexpr std::uint64_t k_image_version = 4;
// An image of version 3 (an nvfresh before mtime_dependent) is read too, as a record without it:
// the skip of a record written then reads its image, not its text.
constexpr std::uint64_t k_image_version_without_mtime_dependent = 3;

class ImageWriter {
public:
  void number(std::uint64_t value)
  {
    while (value >= 0x80) {
      m_bytes += static_cast<char>((value & 0x7F) | 0x80);
      value >>= 7;
    }
    m_bytes += static_cast<char>(value);
  }

  void flag(bool value) { number(value ? 1 : 0); }

  // A time as its difference from `previous`, zigzagged: files installed together share theirs.
  void time_after(std::int64_t value, std::int64_t previous)
  {
    const auto delta = static_cast<std::uint64_t>(value) - static_cast<std::uint64_t>(previous);
    number((delta << 1) ^ (0 - (delta >> 63)));
  }

  template <typename T>
  void fixed(T value)
  {
    static_assert(sizeof(T) == 8);
    m_bytes.append(reinterpret_cast<const char*>(&value), sizeof value);
  }

  void string(std::string_view text)
  {
    number(text.size());
    m_bytes += text;
  }

  // `text` after the prefix it shares with `previous`.
  void front_coded(std::string_view text, std::string_view previous)
  {
    const auto shared = static_cast<std::size_t>(
      std::mismatch(text.begin(), text.end(), previous.begin(), previous.end()).first -
      text.begin());
    number(shared);
    string(text.substr(shared));
  }

  void digest(const Digest& digest)
  {
    m_bytes.append(reinterpret_cast<const char*>(digest.bytes.data()), digest.bytes.size());
  }

  void strings(const std::vector<std::string>& list)
  {
    number(list.size());
    for (const auto& text : list) {
      string(text);
    }
  }

  void string_map(const std::map<std::string, std::string>& map)
  {
    number(map.size());
    for (const auto& [name, value] : map) {
      string(name);
      string(value);
    }
  }

  void fingerprint(const FileFingerprint& file)
  {
    digest(file.hash);
    fixed(file.size);
    fixed(file.mtime_ns);
    fixed(file.ctime_ns);
    fixed(file.inode);
    string(file.path);
  }

  std::string finish() { return std::move(m_bytes); }

private:
  std::string m_bytes;
};

// Thrown by ImageReader when the bytes end early or a value is out of range: not an image.
struct NotAnImage {};

class ImageReader {
public:
  explicit ImageReader(std::string_view bytes) : m_rest(bytes) {}

  std::uint64_t number()
  {
    std::uint64_t value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (m_rest.empty()) {
        throw NotAnImage{};
      }
      const auto byte = static_cast<std::uint8_t>(m_rest.front());
      m_rest.remove_prefix(1);
      value |= static_cast<std::uint64_t>(byte & 0x7F) << shift;
      if ((byte & 0x80) == 0) {
        return value;
      }
    }
    throw NotAnImage{};
  }

  std::int64_t time_after(std::int64_t previous)
  {
    const std::uint64_t zigzag = number();
    const std::uint64_t delta = (zigzag >> 1) ^ (0 - (zigzag & 1));
    return static_cast<std::int64_t>(static_cast<std::uint64_t>(previous) + delta);
  }

  bool flag()
  {
    const std::uint64_t value = number();
    if (value > 1) {
      throw NotAnImage{};
    }
    return value == 1;
  }

  // A count of items that take at least one byte each: never more than the bytes left, so that a
  // damaged count allocates nothing.
  std::size_t count()
  {
    const std::uint64_t value = number();
    if (value > m_rest.size()) {
      throw NotAnImage{};
    }
    return static_cast<std::size_t>(value);
  }

  template <typename T>
  T fixed()
  {
    static_assert(sizeof(T) == 8);
    T value;
    std::memcpy(&value, take(sizeof value).data(), sizeof value);
    return value;
  }

  std::string_view view() { return take(count()); }
  std::string string() { return std::string(view()); }

  std::string front_coded(const std::string& previous)
  {
    const std::uint64_t shared = number();  // bytes of `previous`, not of the image
    if (shared > previous.size()) {
      throw NotAnImage{};
    }
    const std::string_view rest = view();
    std::string text;
    text.reserve(shared + rest.size());
    text.append(previous, 0, shared);
    text.append(rest);
    return text;
  }

  Digest digest()
  {
    Digest digest;
    std::memcpy(digest.bytes.data(), take(digest.bytes.size()).data(), digest.bytes.size());
    return digest;
  }

  std::vector<std::string> strings()
  {
    std::vector<std::string> list(count());
    for (auto& text : list) {
      text = string();
    }
    return list;
  }

  std::map<std::string, std::string> string_map()
  {
    std::map<std::string, std::string> map;
    for (std::size_t n = count(); n > 0; --n) {
      std::string name = string();
      map[std::move(name)] = string();
    }
    return map;
  }

  FileFingerprint fingerprint()
  {
    FileFingerprint file;
    file.hash = digest();
    file.size = fixed<std::uint64_t>();
    file.mtime_ns = fixed<std::int64_t>();
    file.ctime_ns = fixed<std::int64_t>();
    file.inode = fixed<std::uint64_t>();
    file.path = string();
    return file;
  }

  bool at_end() const { return m_rest.empty(); }

private:
  std::string_view take(std::size_t size)
  {
    if (size > m_rest.size()) {
      throw NotAnImage{};
    }
    std::string_view taken = m_rest.substr(0, size);
    m_rest.remove_prefix(size);
    return taken;
  }

  std::string_view m_rest;
};

constexpr InputRole k_roles[] = {InputRole::source, InputRole::header, InputRole::options_file,
                                 InputRole::tool, InputRole::data};

std::uint64_t role_number(InputRole role)
{
  return static_cast<std::uint64_t>(std::find(std::begin(k_roles), std::end(k_roles), role) -
                                    std::begin(k_roles));
}

InputRole role_of_number(std::uint64_t number)
{
  if (number >= std::size(k_roles)) {
    throw NotAnImage{};
  }
  return k_roles[number];
}

// What the text drops, dropped here too: the image reads back as the text does.
bool reads_back_as_itself(const Record& record)
{
  return std::none_of(record.probes.begin(), record.probes.end(),
                      [](const ProbeGroup& group) { return group.names.empty(); });
}

void write_inputs(ImageWriter& out, const std::vector<RecordedInput>& inputs)
{
  std::map<std::vector<std::string>, std::size_t> pass_lists;
  std::vector<const std::vector<std::string>*> pass_list_order;
  std::vector<std::size_t> input_pass_list;
  input_pass_list.reserve(inputs.size());
  for (const auto& input : inputs) {
    auto [at, added] = pass_lists.try_emplace(input.passes, pass_lists.size());
    if (added) {
      pass_list_order.push_back(&at->first);
    }
    input_pass_list.push_back(at->second);
  }
  out.number(pass_list_order.size());
  for (const auto* list : pass_list_order) {
    out.strings(*list);
  }
  out.number(inputs.size());
  static const FileFingerprint k_none;
  const FileFingerprint* previous = &k_none;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const FileFingerprint& file = inputs[i].file;
    out.number(role_number(inputs[i].role));
    out.number(input_pass_list[i]);
    out.digest(file.hash);
    out.number(file.size);
    out.time_after(file.mtime_ns, previous->mtime_ns);
    out.time_after(file.ctime_ns, previous->ctime_ns);
    out.number(file.inode);
    out.front_coded(file.path, previous->path);
    previous = &file;
  }
}

std::vector<RecordedInput> read_inputs(ImageReader& in)
{
  std::vector<std::vector<std::string>> pass_lists(in.count());
  for (auto& list : pass_lists) {
    list = in.strings();
  }
  std::vector<RecordedInput> inputs(in.count());
  static const FileFingerprint k_none;
  const FileFingerprint* previous = &k_none;
  for (auto& input : inputs) {
    input.role = role_of_number(in.number());
    const std::uint64_t list = in.number();
    if (list >= pass_lists.size()) {
      throw NotAnImage{};
    }
    input.passes = pass_lists[list];
    FileFingerprint& file = input.file;
    file.hash = in.digest();
    file.size = in.number();
    file.mtime_ns = in.time_after(previous->mtime_ns);
    file.ctime_ns = in.time_after(previous->ctime_ns);
    file.inode = in.number();
    file.path = in.front_coded(previous->path);
    previous = &file;
  }
  return inputs;
}

// A name is probed in every -I directory before the one it is found in: a CUTLASS TU's 3874 probes
// have 827 names. Each is written once, in a table; groups name them by number.
void write_probes(ImageWriter& out, const Record& record)
{
  StringViewMap<std::size_t> name_numbers;
  std::vector<std::string_view> names;
  for (const auto& group : record.probes) {
    for (const auto& name : group.names) {
      if (name_numbers.try_emplace(name, names.size()).second) {
        names.push_back(name);
      }
    }
  }
  out.number(names.size());
  for (std::string_view name : names) {
    out.string(name);
  }
  out.number(record.probes.size());
  std::string_view previous_dir;
  for (const auto& group : record.probes) {
    out.front_coded(group.dir, previous_dir);
    previous_dir = group.dir;
    out.string(group.absent_under);
    out.number(group.names.size());
    for (const auto& name : group.names) {
      out.number(name_numbers.find(name)->second);
    }
  }
  out.number(record.probe_dirs.size());
  std::string_view previous;
  for (const auto& dir : record.probe_dirs) {
    out.fixed(dir.inode);
    out.fixed(dir.device);
    out.fixed(dir.mtime_ns);
    out.fixed(dir.ctime_ns);
    out.front_coded(dir.path, previous);
    previous = dir.path;
  }
}

void read_probes(ImageReader& in, Record& record)
{
  std::vector<std::string_view> names(in.count());
  for (auto& name : names) {
    name = in.view();
  }
  record.probes.resize(in.count());
  const std::string empty;
  const std::string* previous_dir = &empty;
  for (auto& group : record.probes) {
    group.dir = in.front_coded(*previous_dir);
    previous_dir = &group.dir;
    group.absent_under = in.string();
    group.names.resize(in.count());
    if (group.names.empty()) {
      throw NotAnImage{};
    }
    for (auto& name : group.names) {
      const std::uint64_t number = in.number();
      if (number >= names.size()) {
        throw NotAnImage{};
      }
      name = names[number];
    }
  }
  record.probe_dirs.resize(in.count());
  const std::string* previous = &empty;
  for (auto& dir : record.probe_dirs) {
    dir.inode = in.fixed<std::uint64_t>();
    dir.device = in.fixed<std::uint64_t>();
    dir.mtime_ns = in.fixed<std::int64_t>();
    dir.ctime_ns = in.fixed<std::int64_t>();
    dir.path = in.front_coded(*previous);
    previous = &dir.path;
  }
}

// A depfile's prerequisites are mostly the inputs' paths again: those are written as the input's
// number.
void write_deps(ImageWriter& out, const Record& record)
{
  StringViewMap<std::size_t> input_numbers;
  input_numbers.reserve(record.inputs.size());
  for (std::size_t i = 0; i < record.inputs.size(); ++i) {
    input_numbers.try_emplace(record.inputs[i].file.path, i);
  }
  out.number(record.depfile_prerequisites.size());
  std::string_view previous;
  for (const auto& dep : record.depfile_prerequisites) {
    if (auto input = input_numbers.find(dep); input != input_numbers.end()) {
      out.number(1);
      out.number(input->second);
    } else {
      out.number(0);
      out.front_coded(dep, previous);
      previous = dep;
    }
  }
}

void read_deps(ImageReader& in, Record& record)
{
  record.depfile_prerequisites.resize(in.count());
  std::string previous;
  for (auto& dep : record.depfile_prerequisites) {
    if (in.flag()) {
      const std::uint64_t input = in.number();
      if (input >= record.inputs.size()) {
        throw NotAnImage{};
      }
      dep = record.inputs[input].file.path;
    } else {
      dep = in.front_coded(previous);
      previous = dep;
    }
  }
}

}  // namespace

std::string serialize_record_image(const Record& record, std::string_view text_checksum)
{
  if (!reads_back_as_itself(record)) {
    return {};
  }
  ImageWriter out;
  out.string(k_image_magic);
  out.number(k_image_version);
  out.string(text_checksum);
  out.string(record.object);
  out.string(record.source);
  out.string(record.working_dir);
  out.string(record.compiler);
  out.strings(record.launcher_prefix);
  out.strings(record.signature_args);
  out.string_map(record.env);
  out.digest(record.signature);
  out.string(record.nvcc_version);
  out.flag(record.inputs_from_trace);
  ImageWriter probes;
  write_probes(probes, record);
  out.string(probes.finish());  // its length first: a reader may decode it on a thread of its own
  write_inputs(out, record.inputs);
  out.fingerprint(record.output);
  out.number(record.components.size());
  for (const auto& [name, digest] : record.components) {
    out.string(name);
    out.digest(digest);
  }
  out.flag(record.cache_entry.has_value());
  if (record.cache_entry) {
    out.digest(*record.cache_entry);
  }
  const bool has_depfile = !record.depfile_path.empty();  // the text has no depfile line then
  out.flag(has_depfile && record.depfile_phony);
  out.string(record.depfile_path);
  out.string(has_depfile ? std::string_view(record.depfile_target) : std::string_view());
  write_deps(out, record);
  out.fixed(record.start_ns);
  out.fixed(record.end_ns);
  out.flag(record.trusted);
  out.string(record.untrusted_reason);
  out.number(record.history.size());
  for (const auto& entry : record.history) {
    out.fixed(entry.time_ns);
    out.string(entry.event);
    out.string(entry.reason);
  }
  out.string(record.console_mode);
  out.string(record.console_out);
  out.string(record.console_err);
  out.string(record.console_terminals);
  out.string_map(record.console_terminal_env);
  out.number(record.pass_times.size());
  for (const auto& time : record.pass_times) {
    out.string(time.kind);
    out.string(time.pass);
    out.fixed(time.start_ns);
    out.fixed(time.end_ns);
    out.flag(time.served);
  }
  out.string(record.mtime_dependent);
  return out.finish();
}

namespace {

// The probe section on its own reader: false when it is not one, whole.
bool read_probe_section(std::string_view section, Record& record)
{
  try {
    ImageReader in(section);
    read_probes(in, record);
    return in.at_end();
  } catch (const NotAnImage&) {
    return false;
  }
}

// Below this many bytes of probes a thread costs more than it saves.
constexpr std::size_t k_probe_section_for_a_thread = 4096;

}  // namespace

std::optional<RecordImage> parse_record_image(std::string_view bytes, std::size_t threads)
{
  try {
    ImageReader in(bytes);
    if (in.view() != k_image_magic) {
      return std::nullopt;
    }
    const std::uint64_t version = in.number();
    if (version != k_image_version && version != k_image_version_without_mtime_dependent) {
      return std::nullopt;
    }
    RecordImage image;
    image.text_checksum = in.string();
    Record& record = image.record;
    record.object = in.string();
    record.source = in.string();
    record.working_dir = in.string();
    record.compiler = in.string();
    record.launcher_prefix = in.strings();
    record.signature_args = in.strings();
    record.env = in.string_map();
    record.signature = in.digest();
    record.nvcc_version = in.string();
    record.inputs_from_trace = in.flag();
    const std::string_view probe_section = in.view();
    // The probes (a CUTLASS TU's: 449 directories, 3874 names) decoded beside the rest, on a
    // second thread when asked for: they were 40% of the image's parse, on the skip's critical path.
    bool probes_read = false;
    // A jthread: joined on every way out, before `record` (whose probes it fills) goes away.
    std::optional<std::jthread> probe_thread;
    if (threads > 1 && probe_section.size() >= k_probe_section_for_a_thread) {
      try {
        probe_thread.emplace([&] { probes_read = read_probe_section(probe_section, record); });
      } catch (const std::system_error&) {
        // no thread to be had: read below, on this one
      }
    }
    if (!probe_thread) {
      probes_read = read_probe_section(probe_section, record);
    }
    record.inputs = read_inputs(in);
    record.output = in.fingerprint();
    for (std::size_t n = in.count(); n > 0; --n) {
      std::string name = in.string();
      record.components[std::move(name)] = in.digest();
    }
    if (in.flag()) {
      record.cache_entry = in.digest();
    }
    record.depfile_phony = in.flag();
    record.depfile_path = in.string();
    record.depfile_target = in.string();
    read_deps(in, record);
    record.start_ns = in.fixed<std::int64_t>();
    record.end_ns = in.fixed<std::int64_t>();
    record.trusted = in.flag();
    record.untrusted_reason = in.string();
    record.history.resize(in.count());
    for (auto& entry : record.history) {
      entry.time_ns = in.fixed<std::int64_t>();
      entry.event = in.string();
      entry.reason = in.string();
    }
    record.console_mode = in.string();
    record.console_out = in.string();
    record.console_err = in.string();
    record.console_terminals = in.string();
    record.console_terminal_env = in.string_map();
    record.pass_times.resize(in.count());
    for (auto& time : record.pass_times) {
      time.kind = in.string();
      time.pass = in.string();
      time.start_ns = in.fixed<std::int64_t>();
      time.end_ns = in.fixed<std::int64_t>();
      time.served = in.flag();
    }
    if (version >= k_image_version) {
      record.mtime_dependent = in.string();
    }
    probe_thread.reset();  // joined: probes_read is its answer
    if (!in.at_end() || !probes_read) {
      return std::nullopt;
    }
    return image;
  } catch (const NotAnImage&) {
    return std::nullopt;
  }
}

}  // namespace nvfresh
