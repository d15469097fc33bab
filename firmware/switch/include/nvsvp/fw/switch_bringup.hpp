// The fabric manager's side of the switch chips, through the HAL's register access only
// (docs/registers.md, "Bring-up"; docs/firmware.md): discovery from the identity registers, route
// tables programmed from the cabling, the reduction-context pool enabled, multicast groups with
// slot accounting, and error interrupts read, logged and cleared. Plain C++: the register map is
// nvsvp/hw/switch_registers.hpp, shared with the model.
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "nvsvp/fw/hal.hpp"
#include "nvsvp/hw/bit_mask.hpp"

namespace nvsvp::fw {

// A switch chip that does not look or behave as the register map says (wrong identity, refused
// programming), or a topology that does not fit the chips found. The message names the chip,
// the register and the value.
class FabricError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Every multicast slot is taken: the fabric cannot hold one more group. A plan that needs more
// groups than the fabric has slots is a configuration the hardware cannot run.
class MulticastSlotsExhausted : public FabricError {
 public:
  using FabricError::FabricError;
};

// One cable: a GPU link plugged into port `port` of switch chip `chip`.
struct SwitchCable {
  uint32_t gpu = 0;
  uint32_t chip = 0;
  uint16_t port = 0;
  uint32_t gpu_link = 0;  // the GPU's link index at the cable's other end
};

// What the fabric manager knows from the cabling (the platform hands it over as plain data).
struct FabricTopology {
  uint32_t gpus = 0;
  uint32_t switch_chips = 0;
  std::vector<SwitchCable> cables;
};

// What discovery read from one chip's identity registers.
struct SwitchChipInfo {
  uint32_t chip = 0;
  uint32_t ports = 0;
  uint32_t multicast_slots = 0;
  uint32_t reduction_contexts_per_port = 0;  // REDUCTION_CONTEXTS: what each port has
  uint32_t route_entries = 0;
  uint32_t reduction_contexts_enabled = 0;   // per port, as bring-up programmed CONTEXTS_ENABLED
};

// bring_up's default for the reduction contexts a port may hold: every one the chip has.
constexpr uint32_t kAllReductionContexts = 0;

struct FabricBringUpReport {
  std::vector<SwitchChipInfo> chips;
  uint64_t route_entries_programmed = 0;  // over all chips (one per chip and GPU)
  uint64_t reduction_context_pool = 0;    // enabled contexts over all chips and ports
  uint32_t multicast_slots = 0;           // groups the fabric can hold (the smallest table)
  double duration_ns = 0.0;               // simulated time the bring-up took
};

// One serviced error: the chip, the ERROR_STATUS bits it had, and when firmware read them.
struct SwitchErrorRecord {
  uint32_t chip = 0;
  uint32_t bits = 0;
  double time_ns = 0.0;
  std::string describe() const;  // e.g. "switch chip 1: bad_register_access at 20 ns"
};

// What one port's link-error counters read (hw::switch_regs::kPortErrorTable), as the chip
// keeps them: 32 bits, wrapping.
struct LinkErrorCounts {
  uint32_t rx_crc_errors = 0;
  uint32_t tx_replays = 0;
  uint32_t rx_credit_resyncs = 0;
  uint32_t tx_credit_resyncs = 0;
};

// What changed on one port's counters since firmware last read them (a link-error service after
// error_link_crc or error_credit_resync). Only ports whose counters moved get a record.
struct LinkErrorRecord {
  uint32_t chip = 0;
  uint32_t port = 0;
  uint32_t rx_crc_errors = 0;      // deltas since the previous read
  uint32_t tx_replays = 0;
  uint32_t rx_credit_resyncs = 0;
  uint32_t tx_credit_resyncs = 0;
  double time_ns = 0.0;            // when firmware read them
  // e.g. "switch chip 0 port 3: +2 rx CRC errors, +0 tx replays, +0 rx credit resyncs, +1 tx credit resyncs at 40 ns"
  std::string describe() const;
};

// The deltas of every record of one port, added up (64 bits: they do not wrap).
struct LinkErrorTotals {
  uint64_t rx_crc_errors = 0;
  uint64_t tx_replays = 0;
  uint64_t rx_credit_resyncs = 0;
  uint64_t tx_credit_resyncs = 0;
};

// One event of the link-down recovery (docs/firmware.md#link-down-recovery).
enum class RecoveryKind { link_down, link_up, chip_down, chip_retired };
const char* recovery_kind_name(RecoveryKind kind);  // "link_down", ...

// What firmware saw and did, one record per event, in the order decided. A link event names its
// cable (chip, port, GPU, GPU link); chip_down names the chip; chip_retired names the chip and
// the GPU it could no longer reach. detected_ns is when the service began, recovered_ns when its
// links and routes were done. The lost operations a service had re-issued (over every GPU) are
// counted once, on its first chip event; every other record has 0.
struct RecoveryRecord {
  RecoveryKind kind = RecoveryKind::link_down;
  uint32_t chip = 0;
  uint32_t port = 0;
  uint32_t gpu = 0;
  uint32_t gpu_link = 0;
  double detected_ns = 0.0;
  double recovered_ns = 0.0;
  uint64_t operations_reissued = 0;
  std::string describe() const;
};

// The records added up, for a run's report.
struct RecoveryCounts {
  uint64_t links_down = 0;
  uint64_t links_up = 0;
  uint64_t chips_down = 0;
  uint64_t chips_retired = 0;
  uint64_t operations_reissued = 0;
};

// The names of the ERROR_STATUS bits in `bits`, e.g. "no_route, bad_register_access".
std::string describe_switch_errors(uint32_t bits);

class SwitchFabric {
 public:
  explicit SwitchFabric(Hal& hal) : hal_(hal) {}

  // Discovers the chips, checks `topology` against them, clears stale errors (logged), enables
  // every error interrupt, programs each chip's route entries 0 .. gpus-1 from the cables and
  // sets CONTEXTS_ENABLED to `reduction_contexts_per_port` (kAllReductionContexts: each chip's
  // REDUCTION_CONTEXTS), read back. Throws FabricError when a chip or the topology does not fit,
  // when a chip has fewer contexts per port than asked for, or when a chip refuses a value.
  const FabricBringUpReport& bring_up(const FabricTopology& topology,
                                      uint32_t reduction_contexts_per_port = kAllReductionContexts);
  const FabricBringUpReport& report() const { return report_; }

  // Reads every chip's ERROR_STATUS; a chip with bits set is logged and cleared (written back:
  // write 1 to clear). A chip with error_link_crc or error_credit_resync then has every port's
  // four link-error counters read (4 register reads per port, each the chip's register access
  // time: what the link-error service costs firmware) and a LinkErrorRecord logged per port whose
  // counters moved. After bring-up it then runs the link-down recovery
  // (docs/firmware.md#link-down-recovery): dead chips, LINK_DOWN_PORTS and the GPUs' link state
  // read, links, routes and chips taken out of (or back into) use, lost operations re-issued.
  // When a GPU has no usable link left it waits, servicing every interrupt, up to
  // kLinkReturnWaitUs of simulated time for one to come back; FabricError naming the GPU and its
  // links when none does. Returns how many chips had errors.
  size_t service_interrupts();
  // How long recovery waits for a link of a GPU that has none left (assumed: NVLink's own link
  // retraining is not public; a returning link is back within microseconds in the scenarios).
  static constexpr double kLinkReturnWaitUs = 100.0;
  // Waits up to `timeout_ns` (simulated) for an interrupt line and services the chips; returns
  // whether an interrupt came.
  bool wait_and_service(double timeout_ns);
  const std::vector<SwitchErrorRecord>& error_log() const { return error_log_; }
  // The link-error service's records, in the order firmware read them.
  const std::vector<LinkErrorRecord>& link_error_log() const { return link_error_log_; }
  // A port's deltas added up over every service (zero for a port never seen moving).
  LinkErrorTotals link_error_totals(uint32_t chip, uint32_t port) const;
  // What a port's counters read at the last link-error service of its chip (zero before one).
  LinkErrorCounts link_error_counters(uint32_t chip, uint32_t port) const;

  // A 64-bit counter (offset of its LO register): LO then HI, which the chip keeps coherent.
  uint64_t read_counter(uint32_t chip, uint32_t counter_offset);

  // The link-down recovery's records, in the order firmware decided them, and their sums.
  const std::vector<RecoveryRecord>& recovery_log() const { return recovery_log_; }
  RecoveryCounts recovery_counts() const;
  // Whether firmware no longer uses the chip: dead (all-ones reads) or retired (flushed, its
  // cables out of use) for the rest of the layer.
  bool chip_out_of_use(uint32_t chip) const;
  bool chip_dead(uint32_t chip) const;
  // Valid multicast slots firmware created (every live chip holds them): recovery reads back
  // their CONTROL.valid on every chip still in use.
  void set_multicast_slots_in_use(std::vector<uint32_t> slots) { multicast_slots_in_use_ = std::move(slots); }

 private:
  SwitchChipInfo discover(uint32_t chip);
  void program_routes(uint32_t chip, const FabricTopology& topology);
  void enable_reduction_contexts(const SwitchChipInfo& info);
  void read_link_errors(uint32_t chip);
  // The chip's PORT_COUNT (read when not discovered yet); FabricError, naming `registers` that
  // cannot be read, for a chip wider than the register map.
  uint32_t port_count(uint32_t chip, const char* registers);
  // link_recovery.cpp: steps 2-9 of the recovery, after every chip's ERROR_STATUS was read.
  enum class ChipUse : uint8_t { in_use, retired, dead };
  bool service_dead_chip(uint32_t chip, uint32_t status);
  // Reads and clears every chip's ERROR_STATUS (service_interrupts' first step), recording what
  // it finds as detected at `detected_ns`.
  size_t service_error_status(double detected_ns);
  // Returns gpu_without_usable_link's text (empty: every GPU has a link).
  std::string recover_links(double detected_ns);
  std::vector<bool> usable_cables() const;
  // Per GPU: whether none of its cables is usable.
  std::vector<bool> isolated_gpus(const std::vector<bool>& usable) const;
  void retire_unreachable_chips(std::vector<bool>& usable, double detected_ns);
  void apply_cable_changes(const std::vector<bool>& usable, double detected_ns);
  void rewrite_routes(const std::vector<bool>& usable);
  // "link-down recovery impossible: GPU g has no usable link left (...)", or empty.
  std::string gpu_without_usable_link(const std::vector<bool>& usable) const;
  void check_multicast_groups() const;
  void start_recovery_state();
  void record(RecoveryKind kind, uint32_t chip, uint32_t port, uint32_t gpu, uint32_t gpu_link, double detected_ns);

  Hal& hal_;
  FabricTopology topology_;                   // kept from bring-up for recovery
  bool recovery_ready_ = false;               // bring-up done: the cabling and routes are known
  std::vector<ChipUse> chip_use_;             // [chip]
  std::vector<hw::PortMask> chip_ports_down_; // [chip], LINK_DOWN_PORTS as last read
  std::vector<uint64_t> gpu_links_down_;      // [gpu], as last read
  std::vector<bool> cable_in_use_;            // [cable], as firmware last decided
  std::vector<std::vector<hw::PortMask>> routes_;  // [chip][gpu], the port masks last written
  std::vector<uint32_t> multicast_slots_in_use_;
  bool chip_lost_this_service_ = false;
  std::vector<uint32_t> chips_to_flush_;      // retired in this service, flushed once their cables are out of use       // a chip died or was flushed: its operations are lost
  size_t first_record_this_service_ = 0;
  std::vector<RecoveryRecord> recovery_log_;
  FabricBringUpReport report_;
  std::vector<SwitchErrorRecord> error_log_;
  std::vector<LinkErrorRecord> link_error_log_;
  std::vector<std::vector<LinkErrorCounts>> link_errors_seen_;  // [chip][port], the last read
  std::map<std::pair<uint32_t, uint32_t>, LinkErrorTotals> link_error_totals_;  // by (chip, port)
};

// A multicast group as firmware created it; `slot` is the same on every chip.
struct MulticastGroupHandle {
  uint32_t slot = 0;
  uint64_t base = 0;
  uint64_t size = 0;
  uint64_t local_base = 0;
  hw::GpuMask members;
};

// Slot accounting for multicast groups. Every group is programmed into every chip in the same
// slot, so a slot number names a group fabric-wide and the fabric holds as many groups as its
// smallest table.
class MulticastAllocator {
 public:
  // `chips` as bring-up discovered them.
  MulticastAllocator(Hal& hal, std::vector<SwitchChipInfo> chips);

  // Programs the group into the lowest free slot of every chip (CONTROL cleared, the fields,
  // CONTROL.valid set last) and reads back that each chip accepted it. Throws std::invalid_argument for a group the hardware would refuse (base or size not a
  // multiple of 2 MiB, empty, wrapping, no members, a member the tables cannot name, overlap with
  // a group of this allocator), MulticastSlotsExhausted when every slot is taken, FabricError when
  // a chip refuses the group (then no chip keeps it).
  MulticastGroupHandle create_group(uint64_t base, uint64_t size, uint64_t local_base, const hw::GpuMask& members);
  // Invalidates the group on every chip and frees its slot.
  void destroy_group(const MulticastGroupHandle& group);

  uint32_t capacity() const { return static_cast<uint32_t>(slot_used_.size()); }
  uint32_t groups_in_use() const { return groups_in_use_; }

 private:
  void program_slot(uint32_t chip, const MulticastGroupHandle& group);

  Hal& hal_;
  std::vector<SwitchChipInfo> chips_;
  std::vector<MulticastGroupHandle> groups_;  // [slot]
  std::vector<bool> slot_used_;
  uint32_t groups_in_use_ = 0;
  uint32_t member_words_ = 2;  // MEMBERS words written per group: mask_words_for(the widest chip's ports)
};

}  // namespace nvsvp::fw
