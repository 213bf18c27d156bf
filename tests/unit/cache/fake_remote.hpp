// An in-memory remote (cache/remote_cache.hpp, RemoteBackend) for the cache storage's unit tests:
// it keeps what is published under the Action it came with (salt included), answers a fetch of
// the same Action, counts every call, and fails every call on request.
#pragma once

#include "cache/remote_cache.hpp"

#include <map>
#include <string>

namespace nvfresh::test {

class FakeRemote final : public RemoteBackend {
public:
  static RemoteSettings fake_settings()
  {
    RemoteSettings settings;
    settings.url = "grpc://fake";
    return settings;
  }

  // What the remote holds and how it behaves; shared with the test after the storage took it.
  struct State {
    RemoteSettings settings = fake_settings();
    std::map<std::string, Manifest> manifests;  // by the manifest Action as JSON
    std::map<std::string, CacheEntry> entries;  // by the result Action as JSON
    std::map<std::string, std::string> steps;   // by the step Action as JSON
    bool failing = false;                       // every call throws RemoteFailure
    std::string untrusted;  // not "": every call throws RemoteUntrusted with it (a reader's keys)
    // >= 0: every call throws RemoteOverBudget, the first of them newly over, with this much spent
    std::int64_t over_budget_ns = -1;
    int calls = 0;    // calls made, failed ones included
    int uploads = 0;  // publish and publish_step calls
  };

  explicit FakeRemote(State& state) : m_state(state) {}

  const RemoteSettings& settings() const override { return m_state.settings; }
  void set_budget_ledger(std::string file) override { m_state.settings.budget_ledger = file; }
  void set_helper_socket(std::string name) override { m_state.settings.helper_socket = name; }

  std::optional<Manifest> fetch_manifest(const ActionSpec& action,
                                         std::int64_t& bytes_down) override
  {
    called();
    return found(m_state.manifests, action, bytes_down);
  }
  std::optional<CacheEntry> fetch_entry(const ActionSpec& action, const std::string&,
                                        std::int64_t& bytes_down) override
  {
    called();
    return found(m_state.entries, action, bytes_down);
  }
  std::optional<std::string> fetch_step(const ActionSpec& action, std::int64_t& bytes_down) override
  {
    called();
    return found(m_state.steps, action, bytes_down);
  }
  std::int64_t publish_step(const ActionSpec& action, const std::string& entry_text,
                            const std::string& /*job_dir*/ = {}) override
  {
    called();
    ++m_state.uploads;
    m_state.steps[to_json(action).dump()] = entry_text;
    return static_cast<std::int64_t>(entry_text.size());
  }
  std::int64_t publish(const ActionSpec& result, const std::string&, const CacheEntry& entry,
                       const ActionSpec& manifest_action, const Manifest& manifest,
                       const std::string& /*job_dir*/ = {}) override
  {
    called();
    ++m_state.uploads;
    m_state.entries[to_json(result).dump()] = entry;
    m_state.manifests[to_json(manifest_action).dump()] = manifest;
    return static_cast<std::int64_t>(entry.object.size());
  }

  std::int64_t send_prepared(const std::string& /*job_dir*/) override
  {
    throw RemoteFailure("the fake remote sends every upload at once");
  }

private:
  void called()
  {
    ++m_state.calls;
    if (m_state.failing) {
      throw RemoteFailure("the fake remote is down");
    }
    if (!m_state.untrusted.empty()) {
      throw RemoteUntrusted(m_state.untrusted);
    }
    if (m_state.over_budget_ns >= 0) {
      const bool newly_over = !m_over;
      m_over = true;
      throw RemoteOverBudget("the fake remote is slow", newly_over, m_state.over_budget_ns);
    }
  }
  template <typename T>
  static std::optional<T> found(const std::map<std::string, T>& held, const ActionSpec& action,
                                std::int64_t& bytes_down)
  {
    auto it = held.find(to_json(action).dump());
    if (it == held.end()) {
      return std::nullopt;
    }
    bytes_down += 1;
    return it->second;
  }

  State& m_state;
  bool m_over = false;  // a call of this compile went over its budget
};

}  // namespace nvfresh::test
