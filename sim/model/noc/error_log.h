// The NOC model's bus-error record: every failure any stage detects, stamped with the network's
// cycle, kept in order and passed to an optional hook (Network::errors / on_error).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "noc/grid.h"
#include "noc/network.h"

namespace sim::noc {

class ErrorLog {
  public:
    // `cycle` is the network's clock; each error is stamped with its value when recorded.
    ErrorLog(const Grid& grid, const uint64_t& cycle) : grid_(grid), cycle_(cycle) {}

    // An error of a request sent by physical node `src_node` to physical coordinate `dst`.
    void record(uint32_t noc, uint32_t src_node, Coord dst, uint64_t addr, NocErrorKind kind,
                std::string detail);
    // The same with `dst` in NOC coordinates: reported physical when inside the grid, as
    // programmed otherwise.
    void record_noc(uint32_t noc, uint32_t src_node, Coord dst, uint64_t addr, NocErrorKind kind,
                    std::string detail);

    const std::vector<NocError>& all() const { return errors_; }
    void clear() { errors_.clear(); }
    void on_error(std::function<void(const NocError&)> hook) { hook_ = std::move(hook); }

  private:
    const Grid& grid_;
    const uint64_t& cycle_;
    std::vector<NocError> errors_;
    std::function<void(const NocError&)> hook_;
};

}  // namespace sim::noc
