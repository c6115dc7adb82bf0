// The amdxdna and DRM UAPI this project uses, defined here (no kernel headers needed), with every
// size and offset asserted against the tables of shared/spec/npu-direct.md §2-§4.
#pragma once

#include <cstddef>
#include <cstdint>

namespace taconite::npu::uapi {

// --- §3.1 CREATE_HWCTX ---------------------------------------------------------------------
struct QosInfo {
  std::uint32_t gops, fps, dma_bandwidth, latency, frame_exec_time, priority;
};
struct CreateHwctx {
  std::uint64_t ext, ext_flags, qos_p;
  std::uint32_t umq_bo, log_buf_bo, max_opc, num_tiles, mem_size, umq_doorbell, handle, syncobj_handle;
};
// §3.2: destroy_hwctx, gem_close and syncobj_destroy share the {u32 handle, u32 pad} shape.
struct HandlePad {
  std::uint32_t handle, pad;
};
using DestroyHwctx = HandlePad;
using GemClose = HandlePad;
using SyncobjDestroy = HandlePad;

// --- §3.3 CONFIG_HWCTX and the one-CU config blob -------------------------------------------
struct ConfigHwctx {
  std::uint32_t handle, param_type;
  std::uint64_t param_val;
  std::uint32_t param_val_size, pad;
};
struct CuConfigBlob {  // amdxdna_hwctx_param_config_cu with one amdxdna_cu_config
  std::uint16_t num_cus, pad[3];
  std::uint32_t cu_bo;
  std::uint8_t cu_func, cu_pad[3];
};
inline constexpr std::uint32_t kConfigCu = 0;

// --- §3.4 CREATE_BO --------------------------------------------------------------------------
struct CreateBo {
  std::uint64_t flags, vaddr, size;
  std::uint32_t type, handle;
};
enum BoType : std::uint32_t { kBoInvalid = 0, kBoShare = 1, kBoDevHeap = 2, kBoDev = 3, kBoCmd = 4 };

// --- §3.5 GET_BO_INFO ------------------------------------------------------------------------
struct GetBoInfo {
  std::uint64_t ext, ext_flags;
  std::uint32_t handle, pad;
  std::uint64_t map_offset, vaddr, xdna_addr;
};
inline constexpr std::uint64_t kInvalidAddr = ~std::uint64_t{0};

// --- §3.6 SYNC_BO ----------------------------------------------------------------------------
struct SyncBo {
  std::uint32_t handle, direction;
  std::uint64_t offset, size;
};
inline constexpr std::uint32_t kSyncToDevice = 0;

// --- §3.7 EXEC_CMD ---------------------------------------------------------------------------
struct ExecCmd {
  std::uint64_t ext, ext_flags;
  std::uint32_t hwctx, type;
  std::uint64_t cmd_handles, args;
  std::uint32_t cmd_count, arg_count;
  std::uint64_t seq;
};
inline constexpr std::uint32_t kCmdSubmitExecBuf = 0;
inline constexpr std::uint32_t kMaxArgCount = 4095;

// --- §3.8 DRM SYNCOBJ_TIMELINE_WAIT -------------------------------------------------------------
struct SyncobjTimelineWait {
  std::uint64_t handles, points;
  std::int64_t timeout_nsec;  // ABSOLUTE CLOCK_MONOTONIC time
  std::uint32_t count_handles, flags, first_signaled, pad;
  std::uint64_t deadline_nsec;
};

// --- §3.9 / §3.10 GET_INFO, SET_STATE, GET_ARRAY ----------------------------------------------------
struct GetInfo {
  std::uint32_t param, buffer_size;
  std::uint64_t buffer;
};
using SetState = GetInfo;
struct GetArray {
  std::uint32_t param, element_size, num_element, pad;
  std::uint64_t buffer;
};

// --- §3.11 query payloads --------------------------------------------------------------------
struct TileMetadata {
  std::uint16_t row_count, row_start, dma_channel_count, lock_count, event_reg_count, pad[3];
};
struct AieMetadata {
  std::uint32_t col_size;
  std::uint16_t cols, rows;
  std::uint32_t version_major, version_minor;
  TileMetadata core, mem, shim;
};
struct AieVersion {
  std::uint32_t major, minor;
};
struct FirmwareVersion {
  std::uint32_t major, minor, patch, build;
};
struct HwctxEntry {  // GET_ARRAY(HW_CONTEXT_ALL) record
  std::uint32_t context_id, start_col, num_col, hwctx_id;
  std::int64_t pid;
  std::uint64_t command_submissions, command_completions, migrations, preemptions, errors, priority, heap_usage,
      suspensions;
  std::uint32_t state, pasid, gops, fps, dma_bandwidth, latency, frame_exec_time, txn_op_idx, ctx_pc,
      fatal_error_type, fatal_error_exception_type, fatal_error_exception_pc, fatal_error_app_module, pad;
};
inline constexpr std::uint32_t kQueryAieMetadata = 1;
inline constexpr std::uint32_t kQueryAieVersion = 2;
inline constexpr std::uint32_t kQueryFirmwareVersion = 8;
inline constexpr std::uint32_t kGetPowerMode = 9;
inline constexpr std::uint32_t kArrayHwContextAll = 0;

// --- §2 request numbers ----------------------------------------------------------------------
inline constexpr unsigned long drm_ioc(unsigned long dir, unsigned long nr, unsigned long size) {
  return (dir << 30) | (size << 16) | (0x64UL << 8) | nr;
}
inline constexpr unsigned long kIocWrite = 1, kIocReadWrite = 3;
inline constexpr unsigned long kDrmCommandBase = 0x40;
template <typename T>
inline constexpr unsigned long amdxdna_iowr(unsigned long id) {
  return drm_ioc(kIocReadWrite, kDrmCommandBase + id, sizeof(T));
}

inline constexpr unsigned long kIoctlCreateHwctx = amdxdna_iowr<CreateHwctx>(0x0);
inline constexpr unsigned long kIoctlDestroyHwctx = amdxdna_iowr<DestroyHwctx>(0x1);
inline constexpr unsigned long kIoctlConfigHwctx = amdxdna_iowr<ConfigHwctx>(0x2);
inline constexpr unsigned long kIoctlCreateBo = amdxdna_iowr<CreateBo>(0x3);
inline constexpr unsigned long kIoctlGetBoInfo = amdxdna_iowr<GetBoInfo>(0x4);
inline constexpr unsigned long kIoctlSyncBo = amdxdna_iowr<SyncBo>(0x5);
inline constexpr unsigned long kIoctlExecCmd = amdxdna_iowr<ExecCmd>(0x6);
inline constexpr unsigned long kIoctlGetInfo = amdxdna_iowr<GetInfo>(0x7);
inline constexpr unsigned long kIoctlSetState = amdxdna_iowr<SetState>(0x8);
inline constexpr unsigned long kIoctlGetArray = amdxdna_iowr<GetArray>(0xA);
inline constexpr unsigned long kIoctlGemClose = drm_ioc(kIocWrite, 0x09, sizeof(GemClose));
inline constexpr unsigned long kIoctlSyncobjDestroy = drm_ioc(kIocReadWrite, 0xC0, sizeof(SyncobjDestroy));
inline constexpr unsigned long kIoctlSyncobjTimelineWait = drm_ioc(kIocReadWrite, 0xCA, sizeof(SyncobjTimelineWait));

// --- §4 constants ----------------------------------------------------------------------------
inline constexpr std::uint64_t kHeapSize = std::uint64_t{64} << 20;
inline constexpr std::uint64_t kHeapAlignment = std::uint64_t{64} << 20;
inline constexpr std::uint64_t kDevmBase = 0x04000000;
inline constexpr std::size_t kCmdBoSize = 4096;
inline constexpr std::uint32_t kMaxCommandsInFlight = 4;
inline constexpr std::uint32_t kErtStateNew = 1, kErtStateCompleted = 4, kErtStateError = 5, kErtStateAbort = 6,
                               kErtStateTimeout = 8;

// --- static layout checks (spec tables) ----------------------------------------------------------
#define TACONITE_UAPI_AT(type, field, off) static_assert(offsetof(type, field) == (off), #type "." #field)
static_assert(sizeof(QosInfo) == 24);
static_assert(sizeof(CreateHwctx) == 56);
TACONITE_UAPI_AT(CreateHwctx, ext, 0);
TACONITE_UAPI_AT(CreateHwctx, ext_flags, 8);
TACONITE_UAPI_AT(CreateHwctx, qos_p, 16);
TACONITE_UAPI_AT(CreateHwctx, umq_bo, 24);
TACONITE_UAPI_AT(CreateHwctx, log_buf_bo, 28);
TACONITE_UAPI_AT(CreateHwctx, max_opc, 32);
TACONITE_UAPI_AT(CreateHwctx, num_tiles, 36);
TACONITE_UAPI_AT(CreateHwctx, mem_size, 40);
TACONITE_UAPI_AT(CreateHwctx, umq_doorbell, 44);
TACONITE_UAPI_AT(CreateHwctx, handle, 48);
TACONITE_UAPI_AT(CreateHwctx, syncobj_handle, 52);
static_assert(sizeof(HandlePad) == 8);
TACONITE_UAPI_AT(HandlePad, pad, 4);
static_assert(sizeof(ConfigHwctx) == 24);
TACONITE_UAPI_AT(ConfigHwctx, param_type, 4);
TACONITE_UAPI_AT(ConfigHwctx, param_val, 8);
TACONITE_UAPI_AT(ConfigHwctx, param_val_size, 16);
TACONITE_UAPI_AT(ConfigHwctx, pad, 20);
static_assert(sizeof(CuConfigBlob) == 16);
TACONITE_UAPI_AT(CuConfigBlob, pad, 2);
TACONITE_UAPI_AT(CuConfigBlob, cu_bo, 8);
TACONITE_UAPI_AT(CuConfigBlob, cu_func, 12);
TACONITE_UAPI_AT(CuConfigBlob, cu_pad, 13);
static_assert(sizeof(CreateBo) == 32);
TACONITE_UAPI_AT(CreateBo, vaddr, 8);
TACONITE_UAPI_AT(CreateBo, size, 16);
TACONITE_UAPI_AT(CreateBo, type, 24);
TACONITE_UAPI_AT(CreateBo, handle, 28);
static_assert(sizeof(GetBoInfo) == 48);
TACONITE_UAPI_AT(GetBoInfo, handle, 16);
TACONITE_UAPI_AT(GetBoInfo, pad, 20);
TACONITE_UAPI_AT(GetBoInfo, map_offset, 24);
TACONITE_UAPI_AT(GetBoInfo, vaddr, 32);
TACONITE_UAPI_AT(GetBoInfo, xdna_addr, 40);
static_assert(sizeof(SyncBo) == 24);
TACONITE_UAPI_AT(SyncBo, direction, 4);
TACONITE_UAPI_AT(SyncBo, offset, 8);
TACONITE_UAPI_AT(SyncBo, size, 16);
static_assert(sizeof(ExecCmd) == 56);
TACONITE_UAPI_AT(ExecCmd, hwctx, 16);
TACONITE_UAPI_AT(ExecCmd, type, 20);
TACONITE_UAPI_AT(ExecCmd, cmd_handles, 24);
TACONITE_UAPI_AT(ExecCmd, args, 32);
TACONITE_UAPI_AT(ExecCmd, cmd_count, 40);
TACONITE_UAPI_AT(ExecCmd, arg_count, 44);
TACONITE_UAPI_AT(ExecCmd, seq, 48);
static_assert(sizeof(SyncobjTimelineWait) == 48);
TACONITE_UAPI_AT(SyncobjTimelineWait, points, 8);
TACONITE_UAPI_AT(SyncobjTimelineWait, timeout_nsec, 16);
TACONITE_UAPI_AT(SyncobjTimelineWait, count_handles, 24);
TACONITE_UAPI_AT(SyncobjTimelineWait, flags, 28);
TACONITE_UAPI_AT(SyncobjTimelineWait, first_signaled, 32);
TACONITE_UAPI_AT(SyncobjTimelineWait, pad, 36);
TACONITE_UAPI_AT(SyncobjTimelineWait, deadline_nsec, 40);
static_assert(sizeof(GetInfo) == 16);
TACONITE_UAPI_AT(GetInfo, buffer_size, 4);
TACONITE_UAPI_AT(GetInfo, buffer, 8);
static_assert(sizeof(GetArray) == 24);
TACONITE_UAPI_AT(GetArray, element_size, 4);
TACONITE_UAPI_AT(GetArray, num_element, 8);
TACONITE_UAPI_AT(GetArray, pad, 12);
TACONITE_UAPI_AT(GetArray, buffer, 16);
static_assert(sizeof(TileMetadata) == 16);
static_assert(sizeof(AieMetadata) == 64);
TACONITE_UAPI_AT(AieMetadata, cols, 4);
TACONITE_UAPI_AT(AieMetadata, rows, 6);
TACONITE_UAPI_AT(AieMetadata, version_major, 8);
TACONITE_UAPI_AT(AieMetadata, version_minor, 12);
TACONITE_UAPI_AT(AieMetadata, core, 16);
TACONITE_UAPI_AT(AieMetadata, mem, 32);
TACONITE_UAPI_AT(AieMetadata, shim, 48);
static_assert(sizeof(AieVersion) == 8);
static_assert(sizeof(FirmwareVersion) == 16);
static_assert(sizeof(HwctxEntry) == 144);
TACONITE_UAPI_AT(HwctxEntry, pid, 16);
TACONITE_UAPI_AT(HwctxEntry, command_submissions, 24);
TACONITE_UAPI_AT(HwctxEntry, errors, 56);
TACONITE_UAPI_AT(HwctxEntry, suspensions, 80);
TACONITE_UAPI_AT(HwctxEntry, state, 88);
TACONITE_UAPI_AT(HwctxEntry, txn_op_idx, 116);
TACONITE_UAPI_AT(HwctxEntry, pad, 140);
#undef TACONITE_UAPI_AT

// Request numbers from the spec's §2 table.
static_assert(kIoctlCreateHwctx == 0xC0386440);
static_assert(kIoctlDestroyHwctx == 0xC0086441);
static_assert(kIoctlConfigHwctx == 0xC0186442);
static_assert(kIoctlCreateBo == 0xC0206443);
static_assert(kIoctlGetBoInfo == 0xC0306444);
static_assert(kIoctlSyncBo == 0xC0186445);
static_assert(kIoctlExecCmd == 0xC0386446);
static_assert(kIoctlGetInfo == 0xC0106447);
static_assert(kIoctlSetState == 0xC0106448);
static_assert(kIoctlGetArray == 0xC018644A);
static_assert(kIoctlGemClose == 0x40086409);
static_assert(kIoctlSyncobjDestroy == 0xC00864C0);
static_assert(kIoctlSyncobjTimelineWait == 0xC03064CA);

}  // namespace taconite::npu::uapi
