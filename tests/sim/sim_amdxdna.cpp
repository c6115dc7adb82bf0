#include "sim_amdxdna.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <optional>

#include "mkbundle/placeholder_kernel.hpp"
#include "npu/direct/start_cu_packet.hpp"
#include "npu/direct/uapi.hpp"
#include "sim_conv.hpp"

namespace taconite::sim {

namespace u = npu::uapi;

namespace {

constexpr int kFirstFd = 4000;               // fake fds: never real ones
constexpr std::uint64_t kDevBoAlignment = 32 * 1024;
constexpr std::uint64_t kChainBytesPerContext = 4 * kDevBoAlignment;  // 4 chain buffers, 32 KiB slots
constexpr std::uint32_t kMaxContextHandle = 255;
constexpr std::uint32_t kCmdBoMax = 32 * 1024;
constexpr std::size_t kPage = 4096;

std::int64_t now_ns() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return std::int64_t{t.tv_sec} * 1000000000 + t.tv_nsec;
}

std::size_t page_round(std::size_t n) { return (n + kPage - 1) / kPage * kPage; }

std::string hex(std::uint64_t v) {
  char s[24];
  std::snprintf(s, sizeof s, "0x%llx", static_cast<unsigned long long>(v));
  return s;
}

// Host memory standing for one BO (or the heap): a memfd the caller's mmap maps, plus our own view.
struct Storage {
  int memfd = -1;
  std::size_t bytes = 0;
  std::byte* view = nullptr;
  explicit Storage(std::size_t size) : bytes(page_round(std::max<std::size_t>(size, 1))) {
    memfd = memfd_create("sim-amdxdna-bo", MFD_CLOEXEC);
    if (memfd < 0 || ftruncate(memfd, static_cast<off_t>(bytes)) != 0) throw std::bad_alloc();
    void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    view = static_cast<std::byte*>(p);
  }
  ~Storage() {
    ::munmap(view, bytes);
    ::close(memfd);
  }
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
};

struct Bo {
  std::uint64_t id = 0;
  std::uint32_t type = 0;
  std::uint64_t size = 0;
  std::shared_ptr<Storage> storage;  // SHARE/CMD/heap; DEV BOs use the heap's
  std::uint64_t heap_offset = 0;     // DEV
  std::uint64_t map_offset() const { return type == u::kBoDev ? u::kInvalidAddr : id << 32; }
  std::byte* view() const { return storage->view + (type == u::kBoDev ? heap_offset : 0); }
};

struct Mapping {
  std::uintptr_t address;
  std::size_t length;
  std::shared_ptr<Bo> bo;
  int fd;
};

struct Job {
  std::uint64_t seq;
  std::array<std::uint32_t, npu::kPacketWords> packet;
  std::shared_ptr<Bo> cmd;
  std::vector<std::shared_ptr<Bo>> args;
  bool fail = false, hang = false;
};

struct Context {
  std::uint32_t syncobj = 0;
  std::shared_ptr<Bo> pdi;  // after CONFIG_CU
  std::uint64_t chain_offset = 0;
  std::uint64_t next_seq = 0;
  std::vector<Job> pending;
};

struct Syncobj {
  std::optional<std::uint64_t> signaled;  // highest signalled point
  std::uint64_t submitted = 0;
  bool any_submitted = false;
};

struct File {
  int fd = 0;
  std::uint32_t next_handle = 1;
  std::map<std::uint32_t, std::shared_ptr<Bo>> bos;
  std::shared_ptr<Bo> heap;
  std::optional<std::uintptr_t> heap_user_address;
  std::map<std::uint64_t, std::uint64_t> heap_used;  // offset -> size
  std::map<std::uint32_t, Context> contexts;
  std::map<std::uint32_t, Syncobj> syncobjs;
};

}  // namespace

struct SimAmdxdna::State {
  SimConfig config;
  SimFaults faults;
  SimCounters counters;
  std::vector<std::string> violations;
  mutable std::mutex mutex;
  std::map<int, File> files;
  std::vector<Mapping> mappings;
  int next_fd = kFirstFd;
  std::uint64_t next_bo_id = 1;
  int device_contexts = 0;

  int error(int e) {
    errno = e;
    return -1;
  }
  // A request the driver rejects and our code should never send.
  int misuse(int e, const std::string& what) {
    violations.push_back(what);
    return error(e);
  }

  // --- heap -------------------------------------------------------------------------------
  std::optional<std::uint64_t> heap_alloc(File& f, std::uint64_t size) {
    const std::uint64_t need = (size + kDevBoAlignment - 1) / kDevBoAlignment * kDevBoAlignment;
    std::uint64_t at = 0;
    for (const auto& [offset, used] : f.heap_used) {
      if (offset >= at + need) break;
      at = std::max(at, (offset + used + kDevBoAlignment - 1) / kDevBoAlignment * kDevBoAlignment);
    }
    if (at + need > u::kHeapSize) return std::nullopt;
    f.heap_used[at] = need;
    return at;
  }

  // --- ioctls -----------------------------------------------------------------------------
  int create_bo(File& f, u::CreateBo& r) {
    if (r.flags != 0 || r.vaddr != 0) return misuse(EINVAL, "CREATE_BO: flags/vaddr must be zero");
    if (r.size == 0) return misuse(EINVAL, "CREATE_BO: size 0");
    auto bo = std::make_shared<Bo>();
    bo->id = next_bo_id++;
    bo->type = r.type;
    bo->size = r.size;
    switch (r.type) {
      case u::kBoDevHeap:
        if (f.heap) return misuse(EBUSY, "CREATE_BO: second DEV_HEAP");
        if (r.size % u::kHeapSize != 0 || r.size > u::kHeapSize)
          return misuse(EINVAL, "CREATE_BO: DEV_HEAP size must be 64 MiB, got " + std::to_string(r.size));
        bo->storage = std::make_shared<Storage>(r.size);
        f.heap = bo;
        break;
      case u::kBoDev: {
        if (!f.heap || !f.heap_user_address)
          return misuse(EINVAL, "CREATE_BO(DEV) before the device heap was mapped (Invalid dev heap userptr)");
        if (r.size > u::kHeapSize) return misuse(EINVAL, "CREATE_BO(DEV) larger than the heap");
        const auto offset = heap_alloc(f, r.size);
        if (!offset) return error(ENOSPC);
        bo->storage = f.heap->storage;
        bo->heap_offset = *offset;
        break;
      }
      case u::kBoShare:
        bo->storage = std::make_shared<Storage>(r.size);
        break;
      case u::kBoCmd:
        if (r.size > kCmdBoMax) return misuse(EINVAL, "CREATE_BO(CMD) larger than 32 KiB");
        bo->storage = std::make_shared<Storage>(r.size);
        break;
      default:
        return misuse(EINVAL, "CREATE_BO: unknown type " + std::to_string(r.type));
    }
    r.handle = f.next_handle++;
    f.bos[r.handle] = bo;
    ++counters.bos;
    return 0;
  }

  std::optional<std::uintptr_t> user_address(const std::shared_ptr<Bo>& bo) const {
    for (const Mapping& m : mappings)
      if (m.bo == bo) return m.address;
    return std::nullopt;
  }

  int get_bo_info(File& f, u::GetBoInfo& r) {
    if (r.ext != 0 || r.ext_flags != 0 || r.pad != 0) return misuse(EINVAL, "GET_BO_INFO: MBZ field set");
    const auto found = f.bos.find(r.handle);
    if (found == f.bos.end()) return misuse(ENOENT, "GET_BO_INFO: unknown handle " + std::to_string(r.handle));
    const Bo& bo = *found->second;
    const auto user = user_address(found->second);
    r.map_offset = bo.map_offset();
    r.vaddr = user ? *user : u::kInvalidAddr;
    switch (bo.type) {
      case u::kBoDevHeap: r.xdna_addr = u::kDevmBase; break;
      case u::kBoDev: r.xdna_addr = u::kDevmBase + bo.heap_offset; break;
      case u::kBoShare: r.xdna_addr = user ? *user : u::kInvalidAddr; break;  // PASID mode: the user VA
      default: r.xdna_addr = u::kInvalidAddr;
    }
    return 0;
  }

  int gem_close(File& f, u::GemClose& r) {
    if (r.pad != 0) return misuse(EINVAL, "GEM_CLOSE: pad set");
    const auto found = f.bos.find(r.handle);
    if (found == f.bos.end()) return misuse(EINVAL, "GEM_CLOSE: unknown handle " + std::to_string(r.handle));
    const std::shared_ptr<Bo> bo = found->second;
    if (user_address(bo)) violations.push_back("GEM_CLOSE of BO " + std::to_string(r.handle) + " while still mapped");
    for (const auto& [handle, ctx] : f.contexts) {
      if (ctx.pdi == bo) violations.push_back("GEM_CLOSE of the PDI BO before DESTROY_HWCTX of its context");
      for (const Job& job : ctx.pending) {
        if (job.cmd == bo || std::find(job.args.begin(), job.args.end(), bo) != job.args.end())
          violations.push_back("GEM_CLOSE of a BO a pending command still uses");
      }
    }
    if (bo == f.heap) {
      if (f.bos.size() > 1 || !f.contexts.empty()) violations.push_back("device heap closed before its BOs/contexts");
      f.heap.reset();
      f.heap_user_address.reset();
    }
    if (bo->type == u::kBoDev) f.heap_used.erase(bo->heap_offset);
    f.bos.erase(found);
    --counters.bos;
    return 0;
  }

  int create_hwctx(File& f, u::CreateHwctx& r) {
    if (r.ext != 0 || r.ext_flags != 0) return misuse(EINVAL, "CREATE_HWCTX: ext set");
    if (r.qos_p == 0) return misuse(EFAULT, "CREATE_HWCTX: qos_p is null");
    if (!f.heap) return misuse(ENOENT, "CREATE_HWCTX before the device heap exists");
    if (!f.heap_user_address) return misuse(EINVAL, "CREATE_HWCTX before the device heap was mapped");
    if (*f.heap_user_address % u::kHeapAlignment != 0)
      return misuse(EINVAL, "CREATE_HWCTX: device heap mapped at " + hex(*f.heap_user_address) +
                                ", not 64 MiB-aligned (firmware 0x4000003)");
    if (r.num_tiles == 0 || r.num_tiles % 4 != 0 || r.num_tiles / 4 > 8)
      return misuse(EINVAL, "CREATE_HWCTX: num_tiles " + std::to_string(r.num_tiles) + " is not 4 x (1..8) columns");
    if (r.max_opc == 0) return misuse(EINVAL, "CREATE_HWCTX: max_opc 0");
    if (faults.refuse_contexts > 0) {
      --faults.refuse_contexts;
      ++counters.refused_contexts;
      return error(EINVAL);
    }
    if (device_contexts >= static_cast<int>(config.context_limit)) {  // firmware: MGMT_ERT_NOAVAIL -> EINVAL
      ++counters.refused_contexts;
      return error(EINVAL);
    }
    std::uint32_t handle = 1;
    while (f.contexts.count(handle) != 0) ++handle;
    if (handle > kMaxContextHandle) return error(EAGAIN);
    const auto chain = heap_alloc(f, kChainBytesPerContext);
    if (!chain) return error(ENOMEM);
    Context ctx;
    ctx.chain_offset = *chain;
    std::uint32_t syncobj = 1;
    while (f.syncobjs.count(syncobj) != 0) ++syncobj;
    ctx.syncobj = syncobj;
    f.syncobjs[syncobj] = Syncobj{};
    f.contexts[handle] = std::move(ctx);
    r.handle = handle;
    r.syncobj_handle = syncobj;
    r.umq_doorbell = 0;
    ++device_contexts;
    ++counters.contexts;
    ++counters.syncobjs;
    return 0;
  }

  int config_hwctx(File& f, u::ConfigHwctx& r) {
    if (r.pad != 0) return misuse(EINVAL, "CONFIG_HWCTX: pad set");
    const auto ctx = f.contexts.find(r.handle);
    if (ctx == f.contexts.end()) return misuse(EINVAL, "CONFIG_HWCTX: unknown context");
    if (r.param_type != u::kConfigCu) return misuse(EINVAL, "CONFIG_HWCTX: unsupported param");
    if (r.param_val == 0) return misuse(EFAULT, "CONFIG_HWCTX: null blob");
    if (r.param_val_size > 4096) return misuse(E2BIG, "CONFIG_HWCTX: blob > 4096");
    if (r.param_val_size < sizeof(u::CuConfigBlob)) return misuse(EINVAL, "CONFIG_HWCTX: blob too small");
    u::CuConfigBlob blob;
    std::memcpy(&blob, reinterpret_cast<const void*>(r.param_val), sizeof blob);
    if (blob.num_cus != 1 || blob.pad[0] || blob.pad[1] || blob.pad[2] || blob.cu_pad[0] || blob.cu_pad[1] || blob.cu_pad[2])
      return misuse(EINVAL, "CONFIG_HWCTX: CU blob num_cus/pad invalid");
    if (ctx->second.pdi) return misuse(EINVAL, "CONFIG_HWCTX: context configured twice");
    const auto pdi = f.bos.find(blob.cu_bo);
    if (pdi == f.bos.end() || pdi->second->type != u::kBoDev)
      return misuse(EINVAL, "CONFIG_HWCTX: PDI BO is not a live DEV BO");
    ctx->second.pdi = pdi->second;
    return 0;
  }

  void end_context(File& f, std::map<std::uint32_t, Context>::iterator ctx) {
    for (Job& job : ctx->second.pending) {  // aborted: the firmware dropped them
      std::uint32_t header;
      std::memcpy(&header, job.cmd->view(), 4);
      header = (header & ~0xFu) | u::kErtStateAbort;
      std::memcpy(job.cmd->view(), &header, 4);
      f.syncobjs[ctx->second.syncobj].signaled = job.seq;
    }
    f.heap_used.erase(ctx->second.chain_offset);
    f.contexts.erase(ctx);
    --device_contexts;
    --counters.contexts;
  }

  int destroy_hwctx(File& f, u::DestroyHwctx& r) {
    if (r.pad != 0) return misuse(EINVAL, "DESTROY_HWCTX: pad set");
    const auto ctx = f.contexts.find(r.handle);
    if (ctx == f.contexts.end()) return misuse(EINVAL, "DESTROY_HWCTX: unknown context " + std::to_string(r.handle));
    end_context(f, ctx);
    return 0;
  }

  int syncobj_destroy(File& f, u::SyncobjDestroy& r) {
    if (r.pad != 0) return misuse(EINVAL, "SYNCOBJ_DESTROY: pad set");
    if (f.syncobjs.erase(r.handle) == 0) return misuse(EINVAL, "SYNCOBJ_DESTROY: unknown syncobj");
    for (const auto& [handle, ctx] : f.contexts)
      if (ctx.syncobj == r.handle) violations.push_back("SYNCOBJ_DESTROY before DESTROY_HWCTX of its context");
    --counters.syncobjs;
    return 0;
  }

  int exec_cmd(File& f, u::ExecCmd& r) {
    if (r.ext != 0 || r.ext_flags != 0) return misuse(EINVAL, "EXEC_CMD: ext set");
    if (r.type != u::kCmdSubmitExecBuf) return misuse(EINVAL, "EXEC_CMD: type != 0");
    if (r.cmd_count != 1) return misuse(EINVAL, "EXEC_CMD: cmd_count != 1");
    if (r.arg_count > u::kMaxArgCount) return misuse(EINVAL, "EXEC_CMD: arg_count > 4095");
    const auto ctx = f.contexts.find(r.hwctx);
    if (ctx == f.contexts.end()) return misuse(EINVAL, "EXEC_CMD: unknown context");
    if (!ctx->second.pdi) return misuse(EINVAL, "EXEC_CMD on a context without CONFIG_CU");
    const auto cmd = f.bos.find(static_cast<std::uint32_t>(r.cmd_handles));
    if (r.cmd_handles > 0xFFFFFFFFu || cmd == f.bos.end() || cmd->second->type != u::kBoCmd)
      return misuse(EINVAL, "EXEC_CMD: cmd_handles is not a CMD BO handle");
    if (r.arg_count > 0 && r.args == 0) return misuse(EFAULT, "EXEC_CMD: null args");
    Job job;
    const auto* handles = reinterpret_cast<const std::uint32_t*>(r.args);
    for (std::uint32_t i = 0; i < r.arg_count; ++i) {
      const auto arg = f.bos.find(handles[i]);
      if (arg == f.bos.end()) return misuse(ENOENT, "EXEC_CMD: stale argument handle " + std::to_string(handles[i]));
      if (arg->second->type == u::kBoCmd) violations.push_back("EXEC_CMD: a CMD BO listed among the arguments");
      job.args.push_back(arg->second);
    }
    if (ctx->second.pending.size() >= u::kMaxCommandsInFlight)
      return misuse(EDEADLK, "EXEC_CMD: a 5th command with 4 in flight would block (upstream sleeps in the ioctl)");
    for (const Job& other : ctx->second.pending)
      if (other.cmd == cmd->second) violations.push_back("EXEC_CMD: CMD BO reused while its command is in flight");
    job.cmd = cmd->second;
    std::memcpy(job.packet.data(), cmd->second->view(), sizeof job.packet);  // the driver copies the payload
    std::uint32_t header = job.packet[0];
    header = (header & ~0xFu) | u::kErtStateNew;
    std::memcpy(cmd->second->view(), &header, 4);
    job.seq = ctx->second.next_seq++;
    if (faults.error_commands > 0) {
      --faults.error_commands;
      job.fail = true;
    } else if (faults.hang_commands > 0) {
      --faults.hang_commands;
      job.hang = true;
    }
    Syncobj& sync = f.syncobjs[ctx->second.syncobj];
    sync.submitted = job.seq;
    sync.any_submitted = true;
    ctx->second.pending.push_back(std::move(job));
    r.seq = ctx->second.pending.back().seq;
    ++counters.commands;
    counters.max_in_flight = std::max(counters.max_in_flight, static_cast<int>(ctx->second.pending.size()));
    return 0;
  }

  // The firmware's view of a device address: a DEV BO in the heap (instructions) or, in PASID
  // mode, a SHARE BO's user mapping. Must be one of the command's argument BOs.
  std::byte* resolve(const File& f, const Job& job, std::uint64_t address, std::uint64_t bytes, std::string& why) {
    for (const std::shared_ptr<Bo>& bo : job.args) {
      std::uint64_t base = 0;
      if (bo->type == u::kBoDev) {
        base = u::kDevmBase + bo->heap_offset;
      } else if (const auto user = user_address(bo)) {
        base = *user;
      } else {
        continue;
      }
      if (address >= base && address + bytes <= base + bo->size) return bo->view() + (address - base);
    }
    (void)f;
    why = "address " + hex(address) + " (+" + std::to_string(bytes) + " bytes) is not inside any argument BO";
    return nullptr;
  }

  // Runs one command as the firmware would; returns the final ERT state.
  std::uint32_t execute(const File& f, const Job& job) {
    const auto& p = job.packet;
    auto bad = [&](const std::string& what) {
      violations.push_back("command packet: " + what);
      return u::kErtStateError;
    };
    if (p[0] != npu::kStartCuHeader) return bad("header " + hex(p[0]) + ", expected 0x30010001");
    if (p[1] != npu::kCuMask) return bad("CU mask " + hex(p[1]));
    if (p[2] != npu::kMlirAieOpcode || p[3] != 0) return bad("opcode " + std::to_string(p[2]));
    const std::uint64_t instr = p[4] | (std::uint64_t{p[5]} << 32);
    std::shared_ptr<Bo> instr_bo;
    for (const auto& bo : job.args)
      if (bo->type == u::kBoDev && instr == u::kDevmBase + bo->heap_offset) instr_bo = bo;
    if (!instr_bo) return bad("instruction address " + hex(instr) + " is not the start of a DEV BO in the arguments");
    const std::uint64_t expected_ninstr = config.ninstr_unit == npu::NinstrUnit::Words ? instr_bo->size / 4 : instr_bo->size;
    if (p[6] != expected_ninstr)
      return bad("ninstr " + std::to_string(p[6]) + ", expected " + std::to_string(expected_ninstr));
    if (job.fail) return u::kErtStateError;
    std::vector<std::uint32_t> words(instr_bo->size / 4);
    std::memcpy(words.data(), instr_bo->view(), words.size() * 4);
    const auto descriptor = mkbundle::decode_descriptor(words);
    if (!descriptor) return bad("the instruction stream carries no placeholder descriptor");
    if (config.instant) return u::kErtStateCompleted;
    const ConvArgumentBytes bytes = conv_argument_bytes(*descriptor);
    std::string why;
    std::byte* slice = resolve(f, job, p[7] | (std::uint64_t{p[8]} << 32), bytes.slice, why);
    if (!slice) return bad("bo0 (slice): " + why);
    std::byte* weights = resolve(f, job, p[9] | (std::uint64_t{p[10]} << 32), bytes.weights, why);
    if (!weights) return bad("bo1 (weights): " + why);
    std::byte* out = resolve(f, job, p[11] | (std::uint64_t{p[12]} << 32), bytes.output, why);
    if (!out) return bad("bo2 (output): " + why);
    using numerics::bf16_t;
    compute_placeholder_conv(*descriptor, {reinterpret_cast<const bf16_t*>(slice), bytes.slice / 2},
                             {reinterpret_cast<const bf16_t*>(weights), bytes.weights / 2},
                             {reinterpret_cast<bf16_t*>(out), bytes.output / 2});
    ++counters.computed;
    return u::kErtStateCompleted;
  }

  int timeline_wait(File& f, u::SyncobjTimelineWait& r, bool with_deadline_field) {
    if (r.count_handles != 1) return misuse(EINVAL, "SYNCOBJ_TIMELINE_WAIT: count_handles != 1");
    if (r.flags != 0) return misuse(EINVAL, "SYNCOBJ_TIMELINE_WAIT: unexpected flags");
    if (r.handles == 0 || r.points == 0) return misuse(EFAULT, "SYNCOBJ_TIMELINE_WAIT: null arrays");
    if (with_deadline_field && (r.pad != 0 || r.deadline_nsec != 0)) return misuse(EINVAL, "SYNCOBJ_TIMELINE_WAIT: pad set");
    const std::uint32_t handle = *reinterpret_cast<const std::uint32_t*>(r.handles);
    const std::uint64_t point = *reinterpret_cast<const std::uint64_t*>(r.points);
    const auto sync = f.syncobjs.find(handle);
    if (sync == f.syncobjs.end()) return misuse(ENOENT, "SYNCOBJ_TIMELINE_WAIT: unknown syncobj");
    if (!sync->second.any_submitted || point > sync->second.submitted)
      return misuse(EINVAL, "SYNCOBJ_TIMELINE_WAIT: point " + std::to_string(point) + " was never submitted");
    if (sync->second.signaled && *sync->second.signaled >= point) return 0;
    auto ctx = std::find_if(f.contexts.begin(), f.contexts.end(), [&](const auto& c) { return c.second.syncobj == handle; });
    const std::int64_t now = now_ns();
    counters.last_wait_budget_ns = r.timeout_nsec - now;
    if (r.timeout_nsec <= now)
      return misuse(ETIME, "SYNCOBJ_TIMELINE_WAIT: deadline " + std::to_string(r.timeout_nsec) +
                               " ns is already past (a relative timeout instead of an absolute CLOCK_MONOTONIC time?)");
    if (ctx == f.contexts.end()) return error(ETIME);
    std::vector<Job>& pending = ctx->second.pending;
    while (!pending.empty() && pending.front().seq <= point) {
      Job& job = pending.front();
      if (job.hang) {
        if (r.timeout_nsec - now > std::int64_t{60} * 1000000000)
          return misuse(ETIME, "SYNCOBJ_TIMELINE_WAIT: hung command with a deadline over 60 s away");
        timespec until{static_cast<time_t>(r.timeout_nsec / 1000000000), static_cast<long>(r.timeout_nsec % 1000000000)};
        mutex.unlock();  // sleep like the driver would, without blocking other callers
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, nullptr) == EINTR) {
        }
        mutex.lock();
        return error(ETIME);
      }
      const std::uint32_t state = execute(f, job);
      std::uint32_t header;
      std::memcpy(&header, job.cmd->view(), 4);
      header = (header & ~0xFu) | state;
      std::memcpy(job.cmd->view(), &header, 4);
      sync->second.signaled = job.seq;
      ++counters.completed;
      pending.erase(pending.begin());
    }
    return 0;
  }

  int get_info(File&, u::GetInfo& r) {
    if (r.buffer == 0) return misuse(EFAULT, "GET_INFO: null buffer");
    void* out = reinterpret_cast<void*>(r.buffer);
    switch (r.param) {
      case u::kQueryAieMetadata: {
        if (r.buffer_size < sizeof(u::AieMetadata)) return misuse(EINVAL, "GET_INFO(AIE_METADATA): buffer too small");
        u::AieMetadata m{};
        m.col_size = 0x2000000;
        m.cols = 8;
        m.rows = 6;
        m.version_major = 2;
        m.version_minor = 1;
        m.core = {4, 2, 2, 16, 128, {}};
        m.mem = {1, 1, 6, 64, 128, {}};
        m.shim = {1, 0, 2, 16, 128, {}};
        std::memcpy(out, &m, sizeof m);
        return 0;
      }
      case u::kQueryAieVersion: {
        const u::AieVersion v{2, 1};
        if (r.buffer_size < sizeof v) return misuse(EINVAL, "GET_INFO(AIE_VERSION): buffer too small");
        std::memcpy(out, &v, sizeof v);
        return 0;
      }
      case u::kQueryFirmwareVersion: {
        const u::FirmwareVersion v{1, 1, 2, 64};
        if (r.buffer_size < sizeof v) return misuse(EINVAL, "GET_INFO(FIRMWARE_VERSION): buffer too small");
        std::memcpy(out, &v, sizeof v);
        return 0;
      }
      default:
        return error(EOPNOTSUPP);
    }
  }

  // GET_ARRAY(HW_CONTEXT_ALL): every context of the device, all clients (as upstream lists them).
  int get_array(u::GetArray& r) {
    if (r.pad != 0) return misuse(EINVAL, "GET_ARRAY: pad set");
    if (r.param != u::kArrayHwContextAll) return error(EOPNOTSUPP);
    if (r.element_size == 0 || r.num_element == 0 || r.buffer == 0) return misuse(EINVAL, "GET_ARRAY: empty buffer");
    std::vector<u::HwctxEntry> entries;
    for (const auto& [fd, file] : files)
      for (const auto& [handle, ctx] : file.contexts) {
        u::HwctxEntry e{};
        e.context_id = handle;
        e.num_col = 1;
        e.hwctx_id = handle;
        e.pid = getpid();
        e.command_submissions = ctx.next_seq;
        entries.push_back(e);
      }
    const std::size_t size = std::min<std::size_t>(r.element_size, sizeof(u::HwctxEntry));
    const std::size_t count = std::min<std::size_t>(r.num_element, entries.size());
    for (std::size_t i = 0; i < count; ++i)
      std::memcpy(reinterpret_cast<std::byte*>(r.buffer) + i * size, &entries[i], size);
    r.num_element = static_cast<std::uint32_t>(count);
    r.element_size = sizeof(u::HwctxEntry);
    return 0;
  }

  int dispatch(File& f, unsigned long request, void* arg) {
    if (((request >> 8) & 0xFF) != 0x64) return misuse(ENOTTY, "ioctl type is not DRM 'd'");
    const unsigned long nr = request & 0xFF, size = (request >> 16) & 0x3FFF;
    auto expect = [&](unsigned long wanted) { return request == wanted; };
    auto wrong_size = [&](const char* name) {
      return misuse(EINVAL, std::string(name) + ": request " + hex(request) + " has the wrong size " + std::to_string(size));
    };
    if (arg == nullptr) return misuse(EFAULT, "ioctl with a null argument");
    switch (nr) {
      case 0x40: return expect(u::kIoctlCreateHwctx) ? create_hwctx(f, *static_cast<u::CreateHwctx*>(arg)) : wrong_size("CREATE_HWCTX");
      case 0x41: return expect(u::kIoctlDestroyHwctx) ? destroy_hwctx(f, *static_cast<u::DestroyHwctx*>(arg)) : wrong_size("DESTROY_HWCTX");
      case 0x42: return expect(u::kIoctlConfigHwctx) ? config_hwctx(f, *static_cast<u::ConfigHwctx*>(arg)) : wrong_size("CONFIG_HWCTX");
      case 0x43: return expect(u::kIoctlCreateBo) ? create_bo(f, *static_cast<u::CreateBo*>(arg)) : wrong_size("CREATE_BO");
      case 0x44: return expect(u::kIoctlGetBoInfo) ? get_bo_info(f, *static_cast<u::GetBoInfo*>(arg)) : wrong_size("GET_BO_INFO");
      case 0x46: return expect(u::kIoctlExecCmd) ? exec_cmd(f, *static_cast<u::ExecCmd*>(arg)) : wrong_size("EXEC_CMD");
      case 0x47: return expect(u::kIoctlGetInfo) ? get_info(f, *static_cast<u::GetInfo*>(arg)) : wrong_size("GET_INFO");
      case 0x4A: return expect(u::kIoctlGetArray) ? get_array(*static_cast<u::GetArray*>(arg)) : wrong_size("GET_ARRAY");
      case 0x09: return (size == sizeof(u::GemClose)) ? gem_close(f, *static_cast<u::GemClose*>(arg)) : wrong_size("GEM_CLOSE");
      case 0xC0: return expect(u::kIoctlSyncobjDestroy) ? syncobj_destroy(f, *static_cast<u::SyncobjDestroy*>(arg)) : wrong_size("SYNCOBJ_DESTROY");
      case 0xCA:
        if (expect(u::kIoctlSyncobjTimelineWait)) return timeline_wait(f, *static_cast<u::SyncobjTimelineWait*>(arg), true);
        if (expect(u::drm_ioc(u::kIocReadWrite, 0xCA, 40))) return timeline_wait(f, *static_cast<u::SyncobjTimelineWait*>(arg), false);
        return wrong_size("SYNCOBJ_TIMELINE_WAIT");
      default:
        return misuse(EINVAL, "ioctl nr " + hex(nr) + " is not simulated");
    }
  }

  void close_file(File& f) {
    while (!f.contexts.empty()) end_context(f, f.contexts.begin());
    counters.syncobjs -= static_cast<int>(f.syncobjs.size());
    counters.bos -= static_cast<int>(f.bos.size());
  }
};

SimAmdxdna::SimAmdxdna(SimConfig config) : state_(std::make_unique<State>()) { state_->config = std::move(config); }

SimAmdxdna::~SimAmdxdna() {
  for (auto& [fd, file] : state_->files) state_->close_file(file);
  for (const Mapping& m : state_->mappings) ::munmap(reinterpret_cast<void*>(m.address), m.length);
}

int SimAmdxdna::open(const char* path, int flags) {
  std::lock_guard lock(state_->mutex);
  State& s = *state_;
  if (s.faults.missing_device || path == nullptr || s.config.device_path != path) return s.error(ENOENT);
  if ((flags & O_ACCMODE) != O_RDWR) return s.misuse(EINVAL, "open: the device needs O_RDWR");
  const int fd = s.next_fd++;
  s.files[fd].fd = fd;
  ++s.counters.open_files;
  return fd;
}

int SimAmdxdna::close(int fd) {
  std::lock_guard lock(state_->mutex);
  State& s = *state_;
  const auto found = s.files.find(fd);
  if (found == s.files.end()) return s.misuse(EBADF, "close: unknown fd");
  s.close_file(found->second);  // like amdxdna_flush: every context of the fd goes
  s.files.erase(found);
  --s.counters.open_files;
  return 0;
}

int SimAmdxdna::ioctl(int fd, unsigned long request, void* arg) {
  std::lock_guard lock(state_->mutex);
  State& s = *state_;
  ++s.counters.ioctls;
  const auto found = s.files.find(fd);
  if (found == s.files.end()) return s.misuse(EBADF, "ioctl on an unknown fd");
  if (s.faults.eintr > 0) {
    --s.faults.eintr;
    ++s.counters.eintr_injected;
    return s.error(EINTR);
  }
  return s.dispatch(found->second, request, arg);
}

void* SimAmdxdna::mmap(void* addr, std::size_t length, int prot, int flags, int fd, off_t offset) {
  std::lock_guard lock(state_->mutex);
  State& s = *state_;
  if (fd == -1 && (flags & MAP_ANONYMOUS) != 0) return ::mmap(addr, length, prot, flags, fd, offset);  // reservations
  const auto file = s.files.find(fd);
  if (file == s.files.end()) {
    s.misuse(EBADF, "mmap: unknown fd");
    return MAP_FAILED;
  }
  std::shared_ptr<Bo> bo;
  for (const auto& [handle, candidate] : file->second.bos)
    if (candidate->type != u::kBoDev && candidate->map_offset() == static_cast<std::uint64_t>(offset)) bo = candidate;
  if (!bo) {
    s.misuse(EINVAL, "mmap: offset " + hex(static_cast<std::uint64_t>(offset)) + " is no BO's map_offset");
    return MAP_FAILED;
  }
  if ((flags & MAP_SHARED) == 0 || length > bo->storage->bytes) {
    s.misuse(EINVAL, "mmap: BO mappings must be MAP_SHARED and within the BO");
    return MAP_FAILED;
  }
  void* mapped = ::mmap(addr, length, prot, flags, bo->storage->memfd, 0);
  if (mapped == MAP_FAILED) return MAP_FAILED;
  s.mappings.push_back({reinterpret_cast<std::uintptr_t>(mapped), length, bo, fd});
  ++s.counters.mappings;
  if (bo == file->second.heap) file->second.heap_user_address = reinterpret_cast<std::uintptr_t>(mapped);
  return mapped;
}

int SimAmdxdna::munmap(void* addr, std::size_t length) {
  std::lock_guard lock(state_->mutex);
  State& s = *state_;
  const auto a = reinterpret_cast<std::uintptr_t>(addr);
  for (auto m = s.mappings.begin(); m != s.mappings.end(); ++m) {
    const bool overlaps = a < m->address + m->length && m->address < a + length;
    if (!overlaps) continue;
    if (a != m->address || length != m->length) return s.misuse(EINVAL, "munmap of part of a BO mapping");
    ::munmap(addr, length);
    s.mappings.erase(m);
    --s.counters.mappings;
    return 0;
  }
  return ::munmap(addr, length);  // the caller's own anonymous memory (reservation head/tail)
}

void SimAmdxdna::set_faults(const SimFaults& faults) {
  std::lock_guard lock(state_->mutex);
  state_->faults = faults;
}

SimFaults SimAmdxdna::faults() const {
  std::lock_guard lock(state_->mutex);
  return state_->faults;
}

SimCounters SimAmdxdna::counters() const {
  std::lock_guard lock(state_->mutex);
  return state_->counters;
}

std::vector<std::string> SimAmdxdna::violations() const {
  std::lock_guard lock(state_->mutex);
  return state_->violations;
}

void SimAmdxdna::clear_violations() {
  std::lock_guard lock(state_->mutex);
  state_->violations.clear();
}

void SimAmdxdna::set_instant(bool instant) {
  std::lock_guard lock(state_->mutex);
  state_->config.instant = instant;
}

NpuDriverFactory driver_factory(std::shared_ptr<SimAmdxdna> sim) {
  return [sim] { return sim; };
}

}  // namespace taconite::sim
