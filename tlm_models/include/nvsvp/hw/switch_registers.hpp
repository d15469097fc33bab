// The register map of a switch chip's register block (CSR): the one definition firmware and the
// model share (docs/registers.md). 32-bit registers at byte offsets; 64-bit values are a LO/HI
// pair (LO at the lower offset); a mask of GPUs or ports is kMaskWords consecutive words, word w
// holding bits 32w .. 32w+31 (word 0 at the lowest offset). SystemC-free.
#pragma once

#include <algorithm>
#include <cstdint>

#include "nvsvp/hw/bit_mask.hpp"

namespace nvsvp::hw::switch_regs {

constexpr uint32_t kIdValue = 0x4E565357;  // "NVSW"
// 2: masks of 128 GPUs or ports (route entries 16 bytes apart, four member and link-down words).
constexpr uint32_t kVersionValue = 2;

// The words of a GPU or port mask, and how many of them firmware accesses for n GPUs or ports:
// two at least, so that a fabric of up to 64 makes the register accesses of 64-bit masks.
constexpr uint32_t kMaskWords = PortMask::kWords32;
static_assert(GpuMask::kWords32 == kMaskWords, "GPU and port masks take the same words");
constexpr uint32_t mask_words_for(uint32_t n) { return std::max<uint32_t>(2, (n + 31) / 32); }

// What every register of a dead chip reads (its management access is aborted); writes are lost.
constexpr uint32_t kDeadChipRead = 0xFFFF'FFFFu;

// Chip control (write-only, reads 0). FLUSH (bit 0): the datapath discards every message and
// reduction context it holds; each is reported to the GPU that issued it as lost, which
// re-issues it when firmware says so (Hal::reissue_lost_operations). What firmware does to a
// chip it takes out of use while it still holds traffic (docs/firmware.md#link-down-recovery).
constexpr uint32_t kChipControl = 0x030;
constexpr uint32_t kChipControlFlush = 1u << 0;

// Identity (read-only).
constexpr uint32_t kId = 0x000;
constexpr uint32_t kVersion = 0x004;
constexpr uint32_t kChipIndex = 0x008;
constexpr uint32_t kPortCount = 0x00C;
constexpr uint32_t kMulticastSlots = 0x010;     // multicast group table entries (128 by default)
constexpr uint32_t kReductionContexts = 0x014;  // reduction contexts per port
constexpr uint32_t kRouteEntries = 0x018;       // route table entries (GPUs addressable, kMaxGpus)
// Dynamic multimem (RW): target expert e lives on GPU e / DYN_EXPERTS_PER_GPU; 0 (reset) means
// dynamic multimem is not configured and every dynamic request is refused.
constexpr uint32_t kDynamicExpertsPerGpu = 0x020;
constexpr uint32_t kMaxDynamicExpertsPerGpu = 0xFFFF;  // expert IDs are 16 bits

// Error status and interrupt. ERROR_STATUS bits are sticky; writing 1 clears a bit (W1C).
// INT_PENDING = ERROR_STATUS & INT_ENABLE; the chip's interrupt line is INT_PENDING != 0.
constexpr uint32_t kErrorStatus = 0x040;
constexpr uint32_t kIntEnable = 0x044;
constexpr uint32_t kIntPending = 0x048;
enum ErrorBit : uint32_t {
  error_group_not_configured = 1u << 0,  // multimem operation on an address no valid group covers
  error_not_a_member = 1u << 1,          // multimem operation from a GPU that is not a member
  error_no_route = 1u << 2,              // a message for a GPU with no route
  error_reduction = 1u << 3,             // a reduction unit raised a sticky error
  error_context_pool_exhausted = 1u << 4,
  error_bad_register_access = 1u << 5,   // unknown offset, unaligned, write to read-only
  error_bad_target = 1u << 6,            // a dynamic multimem target list the chip cannot serve
  // Link errors the hardware corrects by itself (issue 23); the port's counters below say where.
  error_link_crc = 1u << 7,       // a packet failed its CRC on one of the chip's links and was replayed
  error_credit_resync = 1u << 8,  // a link's credits were resynchronised after some were lost
  // A request refused because it crosses partitions (issue 23): a store or load to a GPU of another
  // partition, a multimem or dynamic operation reaching one, or from or to an isolated port.
  error_partition = 1u << 9,
  // A port's link went down or came back up; LINK_DOWN_PORTS says which are down now.
  error_link_state = 1u << 10,
};
constexpr uint32_t kErrorBitsDefined = (1u << 11) - 1;  // INT_ENABLE's writable bits

// Counters (read-only, 64-bit LO/HI).
constexpr uint32_t kCounterForwardedRequests = 0x100;
constexpr uint32_t kCounterForwardedResponses = 0x108;
constexpr uint32_t kCounterReplications = 0x110;   // copies made by multicast
constexpr uint32_t kCounterReductions = 0x118;     // results returned by ld_reduce
constexpr uint32_t kCounterEvictions = 0x120;      // partial results evicted from reduction buffers
constexpr uint32_t kCounterAccessErrors = 0x128;   // multimem operations refused (partitions aside)
constexpr uint32_t kCounterPartitionErrors = 0x130;  // requests refused for crossing partitions

// Link state (read-only, a port mask of kMaskWords words): bit p is set while port p's link is
// down, in either direction (issue 23, link_down). A change raises error_link_state.
constexpr uint32_t kLinkDownPorts = 0x280;
constexpr uint32_t link_down_ports_word(uint32_t word) { return kLinkDownPorts + 4 * word; }

// Reduction-context pool. IN_USE and PEAK are read-only; CONTEXTS_ENABLED (RW) is how many of a
// port's REDUCTION_CONTEXTS the datapath may hold at once: 1 .. REDUCTION_CONTEXTS, reset all.
constexpr uint32_t kContextsInUse = 0x200;
constexpr uint32_t kContextsPeak = 0x204;
constexpr uint32_t kContextsEnabled = 0x208;

// Link errors per port (issue 23): port p's four 32-bit counters (read-only, wrapping at 2^32) at
// kPortErrorTable + kPortErrorStride * p. "RX" is the port's input (the link from its GPU), "TX"
// its output (the link to its GPU).
constexpr uint32_t kPortErrorTable = 0x3000;
constexpr uint32_t kPortErrorStride = 16;
constexpr uint32_t kPortRxCrcErrors = 0x0;      // packets received with a bad CRC (the GPU replayed them)
constexpr uint32_t kPortTxReplays = 0x4;        // packets the output sent again (the GPU saw a bad CRC)
constexpr uint32_t kPortRxCreditResyncs = 0x8;  // resynchronisations of the GPU's credits for this input
constexpr uint32_t kPortTxCreditResyncs = 0xC;  // resynchronisations of this output's credits
constexpr uint32_t port_error_register(uint32_t port, uint32_t field) {
  return kPortErrorTable + kPortErrorStride * port + field;
}

// Partitions (issue 23): port p's partition id (RW, reset 0) at kPortPartitionTable +
// kPortPartitionStride * p. A request is served only when the partition id of the port it arrives
// on equals that of every GPU it reaches, a GPU's being the id its route's ports share here (no
// route, or ports that disagree: isolated). kPartitionIsolated marks a port whose GPU is in no
// partition: every request from or to it is refused. All ports 0 (reset): one partition.
constexpr uint32_t kPortPartitionTable = 0x2000;
constexpr uint32_t kPortPartitionStride = 4;
constexpr uint32_t kPartitionIsolated = 0xFFFF'FFFFu;
constexpr uint32_t port_partition_register(uint32_t port) { return kPortPartitionTable + kPortPartitionStride * port; }

// Route table: entry g (destination GPU g, g < kMaxGpus) is a mask of the ports towards it,
// kMaskWords words.
constexpr uint32_t kRouteTable = 0x1000;
constexpr uint32_t kRouteStride = 4 * kMaskWords;
constexpr uint32_t route_word(uint32_t gpu, uint32_t word) { return kRouteTable + kRouteStride * gpu + 4 * word; }
constexpr uint32_t kRouteTableEnd = kRouteTable + kRouteStride * kMaxGpus;

// Multicast group table: slot s, 64 bytes. A valid group maps multimem addresses
// [BASE, BASE + SIZE) to LOCAL + (address - BASE) in every member GPU (a GPU mask of kMaskWords
// words at MEMBERS). Offsets 0x04 and 0x30-0x3C of a slot hold no register.
// BASE and SIZE are multiples of kMulticastGranule.
constexpr uint64_t kMulticastGranule = 2ull << 20;  // 2 MiB
constexpr uint32_t kGroupTable = 0x4000;
constexpr uint32_t kGroupStride = 64;
constexpr uint32_t kGroupControl = 0x00;  // bit 0: valid
constexpr uint32_t kGroupBaseLo = 0x08;
constexpr uint32_t kGroupBaseHi = 0x0C;
constexpr uint32_t kGroupSizeLo = 0x10;
constexpr uint32_t kGroupSizeHi = 0x14;
constexpr uint32_t kGroupLocalLo = 0x18;
constexpr uint32_t kGroupLocalHi = 0x1C;
constexpr uint32_t kGroupMembers = 0x20;
constexpr uint32_t group_members_word(uint32_t word) { return kGroupMembers + 4 * word; }
constexpr uint32_t group_register(uint32_t slot, uint32_t field) {
  return kGroupTable + kGroupStride * slot + field;
}

// The tables of the widest chip end where the next one starts.
static_assert(kLinkDownPorts + 4 * kMaskWords <= 0x290, "LINK_DOWN_PORTS fits its block");
static_assert(kRouteTableEnd <= kPortPartitionTable, "the route table of kMaxGpus entries");
static_assert(port_partition_register(kMaxPortsPerChip) <= kPortErrorTable, "partition ids of kMaxPortsPerChip");
static_assert(port_error_register(kMaxPortsPerChip, 0) <= kGroupTable, "error counters of kMaxPortsPerChip");
static_assert(group_members_word(kMaskWords) <= kGroupStride, "the member words fit a slot");

}  // namespace nvsvp::hw::switch_regs
